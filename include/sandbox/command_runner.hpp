// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_COMMAND_RUNNER_HPP
#define SANDBOX_COMMAND_RUNNER_HPP

#include <sandbox/capabilities.hpp>
#include <sandbox/command.hpp>
#include <sandbox/detail/config.hpp>
#include <sandbox/detail/export.hpp>
#include <sandbox/driver.hpp>
#include <sandbox/driver_options.hpp>
#include <sandbox/exec_result.hpp>
#include <sandbox/execution_policy.hpp>
#include <sandbox/output.hpp>
#include <sandbox/process.hpp>

#include <sandbox/errors.hpp>
#include <sandbox/exec_options.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_allocator.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/system_executor.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sandbox {

/// Runs commands under an execution policy.
///
/// \par Cancellation
/// An execution is cancelled through its handler's cancellation slot (use
/// asio::bind_cancellation_slot, awaitable_operators, or cancel the awaiting coroutine).
/// The type chooses the signal sent to the command's process tree, as in Boost.Process:
/// `terminal` sends SIGKILL at once; `partial` sends SIGTERM and `total` SIGINT, each
/// followed by SIGKILL after the kill grace. The tree is reaped and the work dir removed
/// before the operation completes with `asio::error::operation_aborted`. A coroutine
/// awaiting execute() passes on terminal cancellation only (Asio's default for awaitables).
///
/// \par Thread safety
/// Executions may be started concurrently, from any number of coroutines on one io_context
/// run by any number of threads. Each execution keeps its state on its own strand.
class SANDBOX_DECL command_runner {
public:
    /// The completion of async_run(): the result, or the exception that ended the execution.
    using execute_signature = void(std::exception_ptr, exec_result);
    /// Any handler of execute_signature, type-erased.
    using execute_handler = asio::any_completion_handler<execute_signature>;

    virtual ~command_runner();

    /// The policy every execution of this runner follows.
    virtual const execution_policy& policy() const = 0;
    /// What this runner really enforces of its policy on this machine.
    virtual capabilities caps() const = 0;

    /// Runs one execution of `args` (the program, then its arguments) with I/O objects on
    /// `ex`; calls `handler` once, through its associated executor (else `ex`), with the
    /// result, or with the exception that ended it: launch_error,
    /// system_error(operation_aborted) after a cancellation through the handler's slot, or
    /// what `on_output` threw. The building block of execute() and async_execute(); drivers
    /// implement it.
    virtual void async_run(asio::any_io_executor ex, std::vector<std::string> args, exec_options options,
                             execute_handler handler) = 0;

    /// Runs `args` to completion. A non-zero exit or a timeout is a result, not an error;
    /// a launch failure is thrown (launch_error).
    asio::awaitable<exec_result> execute(std::vector<std::string> args, exec_options options);
    /// Runs `spec.argv` with `spec.stdin` as its stdin (when set, it replaces
    /// `options.stdin_data`).
    asio::awaitable<exec_result> execute(command_spec spec, exec_options options);
    /// The same with stdin and an output callback only.
    asio::awaitable<exec_result> execute(std::vector<std::string> args,
                                         std::optional<std::string> stdin_data = std::nullopt,
                                         output_callback on_output = {});

    /// Starts `args` as a long-lived process under this runner's policy (environment, working
    /// dir, isolation; no timeouts), its I/O objects on `ex`; `options` may set the working
    /// directory and add environment variables. Throws launch_error when it cannot start,
    /// or when the runner has no processes (the default).
    virtual process start(asio::any_io_executor ex, std::vector<std::string> args, const exec_options& options);
    /// The same with default exec_options.
    process start(asio::any_io_executor ex, std::vector<std::string> args);

    /// The completion of async_start(): the process, or a launch failure's code with an
    /// empty process.
    using start_signature = void(boost::system::error_code, process);

    /// Starts `args` as a long-lived process, as start() does, without blocking the calling
    /// thread (the launch runs on a library thread; start() waits for it). The handler gets
    /// the process, its I/O objects on the handler's associated executor (else Asio's system
    /// executor), which counts as busy until then; or, when it cannot start, the launch_error's
    /// code (a sandbox::errc) and an empty process. Not cancellable: a process that started
    /// is handed over. The runner must outlive the operation.
    template <typename CompletionToken>
    auto async_start(std::vector<std::string> args, exec_options options, CompletionToken&& token);

    /// async_start()'s launch, for any handler: start() on a library thread, then `handler`
    /// through its associated executor (else `ex`).
    void start_in_background(asio::any_io_executor ex, std::vector<std::string> args, exec_options options,
                             asio::any_completion_handler<start_signature> handler);

    /// Starts `count` sandboxes of this runner's policy ahead of time and keeps that many
    /// ready: each execution takes one (used once, never reused) and another is started in
    /// the background, off the io threads, once that execution completes or has run 10 ms
    /// (a short command does not share the machine with the next sandbox's start; an
    /// execution that finds none ready starts what is owed at once). Completes, on the calling coroutine's executor,
    /// once `count` are ready; throws launch_error when one cannot start (as the launch of an
    /// execution would). An execution that finds none ready launches as it would without
    /// (exec_result::warm says which); one with exec_options::stdin_fd always does. The
    /// clocks of an execution start when it takes its sandbox. Sandboxes unused for `idle`
    /// go, as do all with the runner; a later prewarm() starts them again, and a smaller
    /// `count` (0: none) ends the ready ones beyond it. The host driver has nothing to start
    /// and completes at once; the slurm driver throws launch_error (a job step is placed by
    /// the scheduler when it is asked for).
    virtual asio::awaitable<void> prewarm(std::size_t count, std::chrono::seconds idle);
    /// The same with an idle time of 60 s.
    asio::awaitable<void> prewarm(std::size_t count);

    /// What execute() would start for `args`, without starting anything: a dry run. The
    /// isolating drivers prepare a run as execute() does (work dir, cgroups, the tool's
    /// checks, so a missing tool throws launch_error here too) and release it at once, so
    /// this blocks: never call it on an io thread. The work dir's name differs from run to run.
    /// A runner that cannot tell (fake_sandbox, session) throws launch_error.
    virtual launch_preview preview(std::vector<std::string> args, const exec_options& options) const;
    /// The same with default exec_options.
    launch_preview preview(std::vector<std::string> args) const;
};

/// A runner for `d`. Never throws because a driver binary is missing; execute() does.
SANDBOX_DECL std::unique_ptr<command_runner> make_runner(execution_policy policy, driver d,
                                                         driver_options options = {});

/// The same by name; throws std::invalid_argument
/// "Unsupported sandbox driver: <name>. Allowed: ..." as parse_driver() does.
SANDBOX_DECL std::unique_ptr<command_runner> make_runner(execution_policy policy, std::string_view driver_name,
                                                         driver_options options = {});

/// Runs one command to completion on a private io_context.
SANDBOX_DECL exec_result run_sync(command_runner& runner, std::vector<std::string> args,
                                  std::optional<std::string> stdin_data = std::nullopt,
                                  output_callback on_output = {});
/// The same for a command_spec.
SANDBOX_DECL exec_result run_sync(command_runner& runner, const command_spec& spec, output_callback on_output = {});
/// Runs one command to completion on a private io_context, with per-execution options (a
/// working directory, extra environment, a timeout, stdin, a callback). A launch failure is
/// thrown (launch_error), as by execute().
SANDBOX_DECL exec_result run_sync(command_runner& runner, std::vector<std::string> args, exec_options options);

namespace detail {

/// The error code an execution's exception stands for: the launch_error's or
/// system_error's own code, else errc::callback_failed (the output callback threw).
SANDBOX_DECL boost::system::error_code to_error_code(std::exception_ptr ep) noexcept;

/// Makes the result an execution ended with by `ep` say so: never a success with an empty
/// stderr. start_error gets `code` (but for a cancellation) and err the exception's message
/// when they have none, and an exit code of 0 becomes exit_codes::sandbox_failed.
SANDBOX_DECL void describe_failure(exec_result& r, std::exception_ptr ep, boost::system::error_code code) noexcept;

// Calls a void(error_code, exec_result) handler from the runner's void(exception_ptr,
// exec_result) completion; the handler's associated executor, allocator and cancellation
// slot stay visible through it.
template <typename Handler>
struct error_code_adapter {
    Handler handler;

    using cancellation_slot_type = asio::associated_cancellation_slot_t<Handler>;
    cancellation_slot_type get_cancellation_slot() const noexcept
    {
        return asio::get_associated_cancellation_slot(handler);
    }

    void operator()(std::exception_ptr ep, exec_result r)
    {
        boost::system::error_code code;
        if (ep) {
            code = to_error_code(ep);
            describe_failure(r, ep, code);
        }
        std::move(handler)(code, std::move(r));
    }
};

struct initiate_execute {
    template <typename Handler>
    void operator()(Handler&& handler, command_runner* runner, std::vector<std::string> args,
                    exec_options options) const
    {
        // I/O objects need an executor with a reactor: the handler's, or when it has none
        // (a plain callback, use_future), Asio's system executor.
        asio::any_io_executor ex = asio::get_associated_executor(handler, asio::system_executor());
        runner->async_run(std::move(ex), std::move(args), std::move(options),
                            error_code_adapter<std::decay_t<Handler>>{std::forward<Handler>(handler)});
    }
};

}  // namespace detail

/// Runs `args` on `runner` with any completion token; the handler signature is
/// void(boost::system::error_code, exec_result). The error is empty for every result (a
/// non-zero exit and a timeout are results), a launch_error's code (a sandbox::errc) when
/// the driver could not launch, asio::error::operation_aborted after a cancellation, and
/// errc::callback_failed when the output callback threw. With an error the result never
/// reads as a success: its err holds the message (for a launch failure, "Failed to start
/// <tool>: <why>") and, but for a cancellation, its start_error the code; an exit code of 0
/// becomes exit_codes::sandbox_failed. The I/O runs on the handler's
/// associated executor (bind one with asio::bind_executor), else on Asio's system
/// executor. The runner must outlive the operation.
template <typename CompletionToken>
auto async_execute(command_runner& runner, std::vector<std::string> args, exec_options options,
                   CompletionToken&& token)
{
    return asio::async_initiate<CompletionToken, void(boost::system::error_code, exec_result)>(
        detail::initiate_execute{}, token, &runner, std::move(args), std::move(options));
}

/// The same with asio::deferred: `co_await async_execute(runner, args)(asio::use_awaitable)`
/// or compose it. Overloads rather than default arguments (g++ 12 miscompiles a defaulted
/// class-type argument of an awaited template call).
inline auto async_execute(command_runner& runner, std::vector<std::string> args, exec_options options)
{
    return async_execute(runner, std::move(args), std::move(options), asio::deferred);
}
/// The same with default exec_options and asio::deferred.
inline auto async_execute(command_runner& runner, std::vector<std::string> args)
{
    return async_execute(runner, std::move(args), exec_options{}, asio::deferred);
}

/// Runs `spec.argv` with `spec.stdin` as its stdin (when set, it replaces
/// `options.stdin_data`); otherwise as above.
template <typename CompletionToken>
auto async_execute(command_runner& runner, command_spec spec, exec_options options, CompletionToken&& token)
{
    if (spec.stdin) options.stdin_data = std::move(spec.stdin);
    return async_execute(runner, std::move(spec.argv), std::move(options), std::forward<CompletionToken>(token));
}
/// The same with asio::deferred.
inline auto async_execute(command_runner& runner, command_spec spec, exec_options options)
{
    return async_execute(runner, std::move(spec), std::move(options), asio::deferred);
}
/// The same with default exec_options and asio::deferred.
inline auto async_execute(command_runner& runner, command_spec spec)
{
    return async_execute(runner, std::move(spec), exec_options{}, asio::deferred);
}

template <typename CompletionToken>
auto command_runner::async_start(std::vector<std::string> args, exec_options options, CompletionToken&& token)
{
    return asio::async_initiate<CompletionToken, start_signature>(
        [this](auto handler, std::vector<std::string> a, exec_options o) {
            asio::any_io_executor ex = asio::get_associated_executor(handler, asio::system_executor());
            start_in_background(std::move(ex), std::move(a), std::move(o), std::move(handler));
        },
        token, std::move(args), std::move(options));
}

}  // namespace sandbox

/// \cond
// The adapter passes on the handler's associated executor and allocator, with the
// candidate the operation offers, as Asio's own binders do.
template <typename Handler, typename Executor>
struct boost::asio::associated_executor<sandbox::detail::error_code_adapter<Handler>, Executor> {
    using type = boost::asio::associated_executor_t<Handler, Executor>;
    static type get(const sandbox::detail::error_code_adapter<Handler>& a, const Executor& ex = Executor()) noexcept
    {
        return boost::asio::get_associated_executor(a.handler, ex);
    }
};

template <typename Handler, typename Allocator>
struct boost::asio::associated_allocator<sandbox::detail::error_code_adapter<Handler>, Allocator> {
    using type = boost::asio::associated_allocator_t<Handler, Allocator>;
    static type get(const sandbox::detail::error_code_adapter<Handler>& a, const Allocator& al = Allocator()) noexcept
    {
        return boost::asio::get_associated_allocator(a.handler, al);
    }
};
/// \endcond

#endif
