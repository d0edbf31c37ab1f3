// SPDX-License-Identifier: BSL-1.0
// The jobs file, one line at a time: never more than one line (bounded by --max-line) plus
// one read buffer in memory, whatever the size of the file. A UTF-8 byte order mark at its
// start is skipped.
#ifndef SANDBOX_CLI_LINE_SOURCE_HPP
#define SANDBOX_CLI_LINE_SOURCE_HPP

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace sandbox::cli {

namespace asio = boost::asio;

class line_source {
public:
    struct line {
        std::string text;
        std::uint64_t number = 0;  ///< 1-based, counting blank lines too
        bool too_long = false;     ///< longer than the limit; text is empty
    };

    /// Reads `fd` (closed at the end when `owned`). A regular file is read with plain
    /// read(2), which never waits long; a pipe, socket or terminal through the reactor, so
    /// a slow writer does not hold up the running jobs.
    line_source(asio::any_io_executor ex, int fd, bool owned, std::size_t max_line);
    ~line_source();
    line_source(const line_source&) = delete;
    line_source& operator=(const line_source&) = delete;

    /// The next non-blank line, or nullopt at the end of the input or after cancel().
    /// Several coroutines may wait at once: they are served one line each, in order.
    asio::awaitable<std::optional<line>> next();

    /// Stops reading: pending and later next() calls return nullopt.
    void cancel();

    /// Non-blank lines in the whole input, for a regular file (without moving the position).
    std::optional<std::uint64_t> count_all() const;

    struct rest {
        std::uint64_t lines = 0;       ///< non-blank lines not handed out
        std::uint64_t first_line = 0;  ///< number of the first of them (0 when none)
        bool complete = false;         ///< false: the input was not read to its end
    };
    /// What was not handed out. A regular file is read to its end for this; from a pipe,
    /// only what was already read is counted.
    rest count_rest();

    /// The error that ended reading early, empty when none.
    const std::string& read_error() const noexcept { return read_error_; }

private:
    asio::awaitable<void> fill();
    bool read_sync();
    std::optional<line> take_line();

    int fd_;
    bool owned_;
    bool regular_ = false;
    int saved_flags_ = -1;
    std::size_t max_line_;
    std::optional<asio::posix::stream_descriptor> desc_;  // when the fd can be polled
    asio::steady_timer gate_;                              // wakes the waiters of a read
    std::unique_ptr<char[]> read_buf_;  // what one read(2) brings
    std::string buf_;                    // read, not yet handed out
    std::size_t pos_ = 0;     // start of the unread part
    std::size_t scan_ = 0;    // no '\n' in [pos_, scan_)
    std::uint64_t number_ = 0;
    bool reading_ = false;
    bool skipping_ = false;   // dropping the rest of a too-long line
    bool bom_checked_ = false;  // a byte order mark at the start was looked for (and skipped)
    bool eof_ = false;
    bool cancelled_ = false;
    std::string read_error_;
};

}  // namespace sandbox::cli

#endif
