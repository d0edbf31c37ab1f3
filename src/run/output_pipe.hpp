// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_SRC_RUN_OUTPUT_PIPE_HPP
#define SANDBOX_SRC_RUN_OUTPUT_PIPE_HPP

#include "run/child.hpp"
#include "run/tail_buffer.hpp"

#include <boost/asio/posix/basic_stream_descriptor.hpp>
#include <boost/system/error_code.hpp>

#include <unistd.h>

#include <cerrno>
#include <string_view>
#include <utility>

namespace sandbox::detail {

/// Our end of one of a command's output pipes, and the tail kept of it, on the execution's
/// strand. Readiness waits, and every read done here: so a pipe can also be read when we
/// know it holds data (the command exited, the other stream ended) without going back to
/// the reactor, and no read is ever in flight behind our back. Asio re-arms the descriptor
/// when it queues a wait, so no wake-up is lost.
class output_pipe {
public:
    using descriptor = asio::posix::basic_stream_descriptor<strand_type>;

    /// Why read() returned.
    enum class drained {
        empty,    ///< nothing more for now: wait() again
        closed,   ///< EOF, or a read error: the stream has ended
        more,     ///< a fast writer: read again after letting other work on the strand run
        stopped,  ///< `deliver` said to stop, or the pipe was closed meanwhile
    };

    /// Reads in one turn before yielding to other work.
    static constexpr int reads_per_turn = 16;

    output_pipe(const strand_type& s, std::size_t cap) : d_(s), tail_(cap) {}

    boost::system::error_code assign(int fd, boost::system::error_code& ec) { return d_.assign(fd, ec); }
    /// Gives the descriptor back without closing it.
    void release() { if (d_.is_open()) d_.release(); }
    bool is_open() const { return d_.is_open(); }
    void close()
    {
        boost::system::error_code ignored;
        d_.close(ignored);
    }
    tail_buffer& tail() noexcept { return tail_; }

    /// Queues one readiness wait unless one is queued or the pipe is closed; `ready()` runs
    /// on the strand once the pipe is readable and still open.
    template <typename Ready>
    void wait(Ready ready)
    {
        if (waiting_ || !d_.is_open()) return;
        waiting_ = true;
        d_.async_wait(descriptor::wait_read, [this, ready = std::move(ready)](boost::system::error_code ec) mutable {
            waiting_ = false;
            if (!ec && d_.is_open()) ready();
        });
    }

    /// Reads what the pipe holds now into the per-thread scratch buffer, handing each chunk
    /// to `deliver`, which returns false to stop (the execution has finished).
    template <typename Deliver>
    drained read(Deliver&& deliver)
    {
        const auto buf = read_scratch();
        for (int i = 0; i < reads_per_turn; ++i) {
            if (!d_.is_open()) return drained::stopped;
            const ssize_t n = ::read(d_.native_handle(), buf.data(), buf.size());
            if (n > 0) {
                if (!deliver(std::string_view(buf.data(), static_cast<std::size_t>(n)))) return drained::stopped;
                continue;
            }
            if (n < 0 && errno == EINTR) continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return drained::empty;
            return drained::closed;
        }
        return drained::more;
    }

private:
    descriptor d_;
    tail_buffer tail_;
    bool waiting_ = false;  // an async_wait is queued
};

}  // namespace sandbox::detail

#endif
