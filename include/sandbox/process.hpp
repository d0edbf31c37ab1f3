// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_PROCESS_HPP
#define SANDBOX_PROCESS_HPP

#include <sandbox/detail/config.hpp>
#include <sandbox/exec_result.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/buffer.hpp>

#include <sys/types.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace sandbox {

namespace detail {
struct process_state;
}

/// A long-lived command started with command_runner::start(): the caller feeds its stdin
/// and reads its stdout while it runs; its stderr is kept as a bounded tail. There is no
/// timeout: its lifetime is the owner's. When the main process ends, whatever it left
/// behind is killed, as for executions.
///
/// \par Thread safety
/// One write and one read may be outstanding at a time (as with an Asio socket);
/// stderr_tail(), running(), kill() and wait() may be called from any thread.
class process {
public:
    /// How much of stderr is kept.
    static constexpr std::size_t stderr_tail_bytes = 64 * 1024;

    explicit process(std::shared_ptr<detail::process_state> state) noexcept;
    process(process&&) noexcept;
    process& operator=(process&&) noexcept;
    /// Kills whatever is still running (SIGKILL to the whole tree), reaps it and removes its
    /// work dir: nothing outlives the owner.
    ~process();

    pid_t pid() const noexcept;

    /// Writes all of `data` to stdin; `data` must stay valid until the write completes.
    /// Throws boost::system::system_error (broken_pipe once the command stopped reading).
    asio::awaitable<void> write(std::string_view data);
    /// Sends EOF: the command's next read of stdin returns 0.
    void close_stdin() noexcept;

    /// Reads what stdout has, up to the buffer's size; 0 at end of file.
    asio::awaitable<std::size_t> read_some(asio::mutable_buffer buffer);
    /// The next line of stdout without its newline; nullopt at end of file. A last line
    /// without a newline is returned as a line.
    asio::awaitable<std::optional<std::string>> read_line();

    /// The last stderr_tail_bytes of stderr so far.
    std::string stderr_tail() const;

    /// False once the main process has ended.
    bool running() const noexcept;

    /// Waits for the end; the same result for every call and every caller: exit_code
    /// (128+N and term_signal for a signal), duration, usage, and the stderr tail in `err`
    /// (stdout belongs to the reader, so `out` is empty).
    asio::awaitable<exec_result> wait();

    /// Ends the whole tree with SIGKILL. Idempotent; harmless after the end.
    void kill() noexcept;

private:
    std::shared_ptr<detail::process_state> state_;
};

}  // namespace sandbox

#endif
