// SPDX-License-Identifier: BSL-1.0
// Finds the end line a sandbox started ahead writes when its command ends (see
// wire::end_line_prefix) in one output stream, passing on everything before it untouched,
// also when the line is split across reads. Tested without a process
// (test/unit/test_end_line.cpp).
#ifndef SANDBOX_SRC_RUN_END_LINE_HPP
#define SANDBOX_SRC_RUN_END_LINE_HPP

#include <string>
#include <string_view>
#include <utility>

namespace sandbox::detail {

class end_line_scanner {
public:
    explicit end_line_scanner(std::string prefix) : prefix_(std::move(prefix)) {}

    /// The part of `chunk` that is the command's output. Bytes that may begin the end line
    /// are held back until the next chunk tells; once the whole line has come, done() is
    /// true and what follows it is dropped (it is not the command's).
    std::string feed(std::string_view chunk)
    {
        if (done_) return {};
        if (in_line_) {
            take_line(chunk);
            return {};
        }
        std::string data = std::move(held_);
        held_.clear();
        data.append(chunk);
        if (const auto at = data.find(prefix_); at != std::string::npos) {
            in_line_ = true;
            take_line(std::string_view(data).substr(at + prefix_.size()));
            data.resize(at);
            return data;
        }
        // The longest end of `data` that could be the start of the line waits for more.
        for (std::size_t n = std::min(data.size(), prefix_.size() - 1); n > 0; --n)
            if (std::string_view(data).substr(data.size() - n) == std::string_view(prefix_).substr(0, n)) {
                held_ = data.substr(data.size() - n);
                data.resize(data.size() - n);
                break;
            }
        return data;
    }

    /// At the end of the stream without the line: what was held back is the command's.
    std::string finish() { return std::exchange(held_, {}); }

    bool done() const noexcept { return done_; }
    /// What followed the prefix on the line, without the newline.
    const std::string& fields() const noexcept { return line_; }

private:
    void take_line(std::string_view rest)
    {
        const auto nl = rest.find('\n');
        line_.append(rest.substr(0, nl));
        if (nl != std::string_view::npos) done_ = true;
    }

    std::string prefix_;
    std::string held_;
    std::string line_;
    bool in_line_ = false;
    bool done_ = false;
};

}  // namespace sandbox::detail

#endif
