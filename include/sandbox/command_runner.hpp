// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_COMMAND_RUNNER_HPP
#define SANDBOX_COMMAND_RUNNER_HPP

#include <sandbox/capabilities.hpp>
#include <sandbox/detail/config.hpp>
#include <sandbox/driver.hpp>
#include <sandbox/driver_options.hpp>
#include <sandbox/exec_result.hpp>
#include <sandbox/execution_policy.hpp>
#include <sandbox/output.hpp>
#include <sandbox/process.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sandbox {

/// Runs commands under an execution policy.
///
/// \par Per-operation cancellation
/// Cancelling the coroutine awaiting execute() (any cancellation type, e.g. through
/// `awaitable_operators` or `bind_cancellation_slot`) sends SIGTERM to the command's process
/// tree, SIGKILL after the kill grace, reaps it, and completes with
/// `asio::error::operation_aborted` (thrown as boost::system::system_error).
///
/// \par Thread safety
/// execute() may be called concurrently, from any number of coroutines on one io_context
/// run by any number of threads. Each execution keeps its state on its own strand.
class command_runner {
public:
    virtual ~command_runner();

    virtual const execution_policy& policy() const = 0;
    virtual capabilities caps() const = 0;

    /// Runs argv to completion. A non-zero exit or a timeout is a result, not an error.
    virtual asio::awaitable<exec_result> execute(std::vector<std::string> argv,
                                                 std::optional<std::string> stdin_data = std::nullopt,
                                                 output_callback on_output = {}) = 0;

    /// Starts argv as a long-lived process under this runner's policy (environment, working
    /// dir, isolation; no timeouts), its I/O objects on `ex`. Throws launch_error when it
    /// cannot start, or when the runner has no processes (the default).
    virtual process start(asio::any_io_executor ex, std::vector<std::string> argv);
};

/// A runner for `d`. Never throws because a driver binary is missing; execute() does.
std::unique_ptr<command_runner> make_runner(execution_policy policy, driver d, driver_options options = {});

/// The same by name; throws std::invalid_argument
/// "Unsupported sandbox driver: <name>. Allowed: host, docker, podman, firejail, bubblewrap".
std::unique_ptr<command_runner> make_runner(execution_policy policy, std::string_view driver_name,
                                            driver_options options = {});

/// Runs one command to completion on a private io_context.
exec_result run_sync(command_runner& runner, std::vector<std::string> argv,
                     std::optional<std::string> stdin_data = std::nullopt, output_callback on_output = {});

/// execute() with any completion token; the handler signature is
/// void(std::exception_ptr, exec_result). The runner must outlive the operation.
template <typename Executor, typename CompletionToken>
auto async_execute(const Executor& ex, command_runner& runner, std::vector<std::string> argv,
                   std::optional<std::string> stdin_data, output_callback on_output, CompletionToken&& token)
{
    return asio::co_spawn(ex, runner.execute(std::move(argv), std::move(stdin_data), std::move(on_output)),
                          std::forward<CompletionToken>(token));
}

}  // namespace sandbox

#endif
