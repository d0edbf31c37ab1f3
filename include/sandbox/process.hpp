// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_PROCESS_HPP
#define SANDBOX_PROCESS_HPP

#include <sandbox/detail/config.hpp>
#include <sandbox/detail/export.hpp>
#include <sandbox/exec_result.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/system/error_code.hpp>

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
/// It is an Asio stream (AsyncReadStream on stdout, AsyncWriteStream on stdin), so
/// asio::async_read_until, asio::async_read, asio::async_write and Beast work on it with
/// any completion token; write(), read_some() and read_line() are coroutine conveniences.
///
/// \par Thread safety
/// One write and one read may be outstanding at a time (as with an Asio socket);
/// stderr_tail(), running(), the signalling calls and the waits may be called from any thread.
class SANDBOX_DECL process {
public:
    /// The type of get_executor().
    using executor_type = asio::any_io_executor;
    /// The signature of async_read_some and async_write_some.
    using io_signature = void(boost::system::error_code, std::size_t);
    /// The signature of async_wait: the result of wait(), or why there is none
    /// (operation_aborted when cancelled, bad_descriptor on an empty process).
    using wait_signature = void(boost::system::error_code, exec_result);

    /// How much of stderr is kept.
    static constexpr std::size_t stderr_tail_bytes = 64 * 1024;

    /// An empty process, holding no command (as one moved from): running() is false, pid()
    /// -1, the signalling calls do nothing, and reads, writes and wait() fail with bad_descriptor.
    process() noexcept = default;
    /// Made by command_runner::start(); the state is the library's own.
    explicit process(std::shared_ptr<detail::process_state> state) noexcept;
    /// Takes over the other's command; the other is left empty.
    process(process&&) noexcept;
    /// Kills and reaps the command this one still holds, as the destructor does, then takes
    /// over the other's.
    process& operator=(process&&) noexcept;
    /// Kills whatever is still running (SIGKILL to the whole tree), reaps it and removes its
    /// work dir: nothing outlives the owner.
    ~process();

    /// The process started on the host: the command on the host driver, the launcher (bwrap,
    /// firejail, the engine client) on the others. Unchanged after the end; -1 when empty.
    pid_t pid() const noexcept;

    /// The executor of its pipes: a strand of the executor start() was given.
    executor_type get_executor() const noexcept;

    /// Reads what stdout has into the first non-empty buffer of `buffers`; completes with
    /// asio::error::eof at the end of the output. Bytes read_line() buffered come first.
    /// Cancellation through the handler's slot (any type) aborts the read only.
    template <typename MutableBufferSequence, typename ReadToken>
    auto async_read_some(const MutableBufferSequence& buffers, ReadToken&& token)
    {
        return asio::async_initiate<ReadToken, io_signature>(
            // The state, not `this`: a deferred read stays valid when the process is moved.
            [st = state_](auto handler, asio::mutable_buffer b) {
                start_read_some(st, b, asio::any_completion_handler<io_signature>(std::move(handler)));
            },
            token, first_buffer<asio::mutable_buffer>(buffers));
    }
    /// Writes some of `buffers` (the first non-empty one) to stdin; completes with
    /// asio::error::broken_pipe once the command stopped reading or after close_stdin()
    /// (bad_descriptor once the close is done).
    template <typename ConstBufferSequence, typename WriteToken>
    auto async_write_some(const ConstBufferSequence& buffers, WriteToken&& token)
    {
        return asio::async_initiate<WriteToken, io_signature>(
            [st = state_](auto handler, asio::const_buffer b) {
                start_write_some(st, b, asio::any_completion_handler<io_signature>(std::move(handler)));
            },
            token, first_buffer<asio::const_buffer>(buffers));
    }
    // With asio::deferred (overloads rather than default arguments: g++ 12 miscompiles a
    // defaulted class-type argument of an awaited template call).
    /// async_read_some() with asio::deferred.
    template <typename MutableBufferSequence>
    auto async_read_some(const MutableBufferSequence& buffers)
    {
        return async_read_some(buffers, asio::deferred);
    }
    /// async_write_some() with asio::deferred.
    template <typename ConstBufferSequence>
    auto async_write_some(const ConstBufferSequence& buffers)
    {
        return async_write_some(buffers, asio::deferred);
    }

    /// Writes all of `data` to stdin; `data` must stay valid until the write completes.
    /// Throws boost::system::system_error (broken_pipe once the command stopped reading).
    asio::awaitable<void> write(std::string_view data);
    /// Sends EOF at once: the command's next read of stdin returns 0, and writes fail.
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

    /// wait() with any completion token (a callback, use_future, deferred for
    /// parallel_group), completing on the handler's associated executor. Cancellable through
    /// the handler's cancellation slot (terminal, partial or total): the wait ends with
    /// operation_aborted, the command runs on. The operation holds what it needs: it stays
    /// valid when this object is moved.
    template <typename WaitToken>
    auto async_wait(WaitToken&& token)
    {
        return asio::async_initiate<WaitToken, wait_signature>(
            [](auto handler, std::shared_ptr<detail::process_state> st) {
                start_wait(std::move(st), asio::any_completion_handler<wait_signature>(std::move(handler)));
            },
            token, state_);
    }
    /// async_wait() with asio::deferred.
    auto async_wait() { return async_wait(asio::deferred); }

    /// SIGINT to the whole tree, as Ctrl-C in a terminal would send.
    void interrupt() noexcept;
    /// SIGTERM to the whole tree: asks the command to exit (its TERM trap runs). Where the
    /// launcher only stops on SIGKILL (docker's client, srun), the engine or the scheduler
    /// stops the command instead: TERM, then KILL after driver_options::kill_grace.
    void request_exit() noexcept;
    /// SIGKILL to the whole tree; the same as kill().
    void terminate() noexcept;
    /// Ends the whole tree with SIGKILL. All four are idempotent, harmless after the end and
    /// on an empty process.
    void kill() noexcept;

private:
    template <typename Buffer, typename Sequence>
    static Buffer first_buffer(const Sequence& buffers)
    {
        for (auto it = asio::buffer_sequence_begin(buffers); it != asio::buffer_sequence_end(buffers); ++it) {
            Buffer b(*it);
            if (b.size() != 0) return b;
        }
        return Buffer();
    }
    static void start_read_some(const std::shared_ptr<detail::process_state>& st, asio::mutable_buffer buffer,
                                asio::any_completion_handler<io_signature> handler);
    static void start_write_some(const std::shared_ptr<detail::process_state>& st, asio::const_buffer buffer,
                                 asio::any_completion_handler<io_signature> handler);
    static void start_wait(std::shared_ptr<detail::process_state> st,
                           asio::any_completion_handler<wait_signature> handler);

    std::shared_ptr<detail::process_state> state_;
};

}  // namespace sandbox

#endif
