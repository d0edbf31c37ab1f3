// SPDX-License-Identifier: BSL-1.0
#include "line_source.hpp"

#include "io.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

namespace sandbox::cli {

namespace {

constexpr std::size_t chunk = 64 * 1024;

bool space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

bool blank(std::string_view s)
{
    for (char c : s)
        if (!space(c)) return false;
    return true;
}

// Counts non-blank lines in a stream of chunks, and notes the number of the first one.
struct line_counter {
    std::uint64_t number = 0;  // the last line that ended
    std::uint64_t lines = 0;
    std::uint64_t first = 0;
    bool in_line = false;  // the current line has a non-blank character
    int bom = -1;          // at the start of the input: the bytes of a byte order mark seen so far
    void feed(std::string_view data)
    {
        for (char c : data) {
            if (bom >= 0) {  // a byte order mark is skipped, as take_line() does
                if (c == utf8_bom[static_cast<std::size_t>(bom)]) {
                    if (++bom == static_cast<int>(utf8_bom.size())) bom = -1;
                    continue;
                }
                if (bom > 0) in_line = true;  // the start of one, then something else: text
                bom = -1;
            }
            if (c == '\n') {
                ++number;
                if (in_line) end_line();
            } else if (!in_line && !space(c)) {
                in_line = true;
            }
        }
    }
    void end_line()
    {
        ++lines;
        if (first == 0) first = number;
        in_line = false;
    }
    void finish()
    {
        if (in_line) {
            ++number;
            end_line();
        }
    }
};

}  // namespace

line_source::line_source(asio::any_io_executor ex, int fd, bool owned, std::size_t max_line)
    : fd_(fd), owned_(owned), max_line_(max_line), gate_(ex), read_buf_(new char[chunk])
{
    struct stat st {};
    regular_ = ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode);
    if (!regular_) {
        saved_flags_ = ::fcntl(fd_, F_GETFL);
        const int copy = ::fcntl(fd_, F_DUPFD_CLOEXEC, 3);  // closing it never closes our stdin
        try {
            if (copy >= 0) desc_.emplace(ex, copy);
        } catch (const std::exception&) {  // not pollable (e.g. /dev/null): plain reads
            desc_.reset();
            ::close(copy);
        }
    }
    gate_.expires_at(asio::steady_timer::time_point::max());
}

line_source::~line_source()
{
    if (desc_) {
        boost::system::error_code ignored;
        desc_->close(ignored);
    }
    // Asio may have made the shared file description non-blocking: give the shell back its
    // terminal or pipe as it was.
    if (saved_flags_ >= 0) ::fcntl(fd_, F_SETFL, saved_flags_);
    if (owned_) ::close(fd_);
}

void line_source::cancel()
{
    cancelled_ = true;
    if (desc_) {
        boost::system::error_code ignored;
        desc_->cancel(ignored);
    }
    gate_.cancel();
}

std::optional<line_source::line> line_source::take_line()
{
    if (!bom_checked_) {  // a UTF-8 byte order mark before the first line is skipped
        const std::string_view head(buf_.data() + pos_, buf_.size() - pos_);
        if (head.size() < utf8_bom.size() && utf8_bom.starts_with(head) && !eof_) return std::nullopt;  // read on
        if (head.starts_with(utf8_bom)) {
            pos_ += utf8_bom.size();
            scan_ = std::max(scan_, pos_);
        }
        bom_checked_ = true;
    }
    for (;;) {
        if (skipping_) {
            const auto nl = buf_.find('\n', pos_);
            if (nl == std::string::npos) {
                buf_.clear();
                pos_ = scan_ = 0;
                return std::nullopt;
            }
            pos_ = scan_ = nl + 1;
            skipping_ = false;
            continue;
        }
        const auto nl = buf_.find('\n', std::max(pos_, scan_));
        if (nl == std::string::npos) {
            scan_ = buf_.size();
            if (buf_.size() - pos_ > max_line_) {  // give up on this line, drop the rest of it
                ++number_;
                skipping_ = true;
                buf_.clear();
                pos_ = scan_ = 0;
                return line{{}, number_, true};
            }
            if (eof_ && pos_ < buf_.size()) {  // a last line without a newline
                ++number_;
                std::string_view text(buf_.data() + pos_, buf_.size() - pos_);
                pos_ = scan_ = buf_.size();
                if (blank(text)) continue;
                return line{std::string(text), number_, false};
            }
            if (pos_ == buf_.size()) {
                buf_.clear();
                pos_ = scan_ = 0;
            } else if (pos_ >= chunk) {
                buf_.erase(0, pos_);
                scan_ -= pos_;
                pos_ = 0;
            }
            return std::nullopt;
        }
        ++number_;
        std::string_view text(buf_.data() + pos_, nl - pos_);
        pos_ = scan_ = nl + 1;
        if (blank(text)) continue;
        if (text.size() > max_line_) return line{{}, number_, true};
        return line{std::string(text), number_, false};
    }
}

bool line_source::read_sync()
{
    for (;;) {
        const ssize_t n = ::read(fd_, read_buf_.get(), chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;  // non-blocking, cannot poll
        if (n < 0) read_error_ = std::strerror(errno);
        if (n > 0) buf_.append(read_buf_.get(), static_cast<std::size_t>(n));
        else eof_ = true;
        return true;
    }
}

asio::awaitable<void> line_source::fill()
{
    if (!desc_) {
        read_sync();
        co_return;
    }
    // Into a buffer of its own: other coroutines may take lines from buf_ meanwhile.
    auto [ec, n] = co_await desc_->async_read_some(asio::buffer(read_buf_.get(), chunk),
                                                   asio::as_tuple(asio::use_awaitable));
    buf_.append(read_buf_.get(), n);
    if (ec == asio::error::eof) {
        eof_ = true;
    } else if (ec == asio::error::operation_aborted) {
        cancelled_ = true;
    } else if (ec) {
        read_error_ = ec.message();
        eof_ = true;
    }
}

asio::awaitable<std::optional<line_source::line>> line_source::next()
{
    for (;;) {
        if (cancelled_) co_return std::nullopt;
        if (auto l = take_line()) co_return l;
        if (eof_) co_return std::nullopt;
        if (reading_) {  // another coroutine is reading: wait for it, then look again
            co_await gate_.async_wait(asio::as_tuple(asio::use_awaitable));
            continue;
        }
        reading_ = true;
        struct done_reading {
            line_source* self;
            ~done_reading()
            {
                self->reading_ = false;
                self->gate_.cancel();  // wake everyone waiting; the timer stays at max
            }
        } guard{this};
        co_await fill();
    }
}

std::optional<std::uint64_t> line_source::count_all() const
{
    if (!regular_) return std::nullopt;
    line_counter counter;
    counter.bom = 0;
    std::string buf(chunk, '\0');
    off_t offset = 0;
    for (;;) {
        const ssize_t n = ::pread(fd_, buf.data(), buf.size(), offset);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        counter.feed({buf.data(), static_cast<std::size_t>(n)});
        offset += n;
    }
    counter.finish();
    return counter.lines;
}

line_source::rest line_source::count_rest()
{
    std::string_view pending(buf_.data() + pos_, buf_.size() - pos_);
    if (skipping_) {  // the rest of a too-long line, already reported
        const auto nl = pending.find('\n');
        pending = nl == std::string_view::npos ? std::string_view{} : pending.substr(nl + 1);
    }
    line_counter counter;
    counter.number = number_;
    if (!bom_checked_) counter.bom = 0;  // nothing was taken: `pending` is the start of the input
    counter.feed(pending);
    rest r;
    r.complete = eof_;
    if (regular_ && !eof_ && read_error_.empty()) {
        std::string buf(chunk, '\0');
        for (;;) {
            const ssize_t n = ::read(fd_, buf.data(), buf.size());
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            counter.feed({buf.data(), static_cast<std::size_t>(n)});
        }
        r.complete = true;
    }
    counter.finish();
    r.lines = counter.lines;
    r.first_line = counter.first;
    return r;
}

}  // namespace sandbox::cli
