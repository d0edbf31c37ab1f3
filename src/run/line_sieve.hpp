// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_SRC_RUN_LINE_SIEVE_HPP
#define SANDBOX_SRC_RUN_LINE_SIEVE_HPP

#include <cstddef>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace sandbox::detail {

/// Takes out of a stream the lines a launcher writes into the command's stderr itself (a
/// scheduler's notes, a node's report). A line is taken when it starts with one of
/// `prefixes`, or from where one of `markers` appears in it to its end (a launcher's note can
/// follow a command's unterminated line); what comes before a marker passes. Everything
/// else passes as it comes: only text that may still turn out to be taken is held back,
/// until its newline (or the end of the stream) decides.
class line_sieve {
public:
    /// At most `max_taken` lines are kept (the last ones), each cut to `max_line` bytes.
    line_sieve(std::vector<std::string> prefixes, std::vector<std::string> markers = {}, std::size_t max_taken = 32,
               std::size_t max_line = 1 << 20);

    /// The bytes of `chunk` that pass now, in order (may be empty).
    std::string feed(std::string_view chunk);

    /// At the end of the stream: what was held and passes after all.
    std::string finish();

    /// The lines taken out so far, without their newlines, oldest first.
    const std::deque<std::string>& taken() const noexcept { return taken_; }

private:
    /// Where in `text` (the held part of the current line, and what follows) something to
    /// take starts, or npos.
    std::size_t match(std::string_view text) const noexcept;
    /// Where in `text` an unfinished start of something to take may begin, or npos.
    std::size_t partial_match(std::string_view text) const noexcept;
    void take(std::string line);

    std::vector<std::string> prefixes_;
    std::vector<std::string> markers_;
    std::size_t max_taken_;
    std::size_t max_line_;
    std::deque<std::string> taken_;
    std::string held_;           // the end of the current line, held back
    bool line_passed_ = false;   // some of the current line has passed (prefixes no longer apply)
    bool matched_ = false;       // held_ is something to take, complete at its newline
};

}  // namespace sandbox::detail

#endif
