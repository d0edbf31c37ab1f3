// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_SRC_RUN_PROCESS_RUNNER_HPP
#define SANDBOX_SRC_RUN_PROCESS_RUNNER_HPP

#include "run/child.hpp"
#include "run/confinement.hpp"
#include "run/exec_machine.hpp"
#include "run/line_sieve.hpp"
#include "run/pending_handler.hpp"
#include "run/spawn.hpp"

#include <sandbox/detail/config.hpp>
#include <sandbox/exec_options.hpp>
#include <sandbox/exec_result.hpp>
#include <sandbox/output.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>

#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sandbox::detail {

/// A sandbox started ahead of its command (drivers/warm_pool.hpp) that an execution takes:
/// its tool already runs, waiting on stdin for the command.
struct started_sandbox {
    child_process child;
    unique_fd stdin_w, stdout_r, stderr_r;
    /// Written to stdin before the command's own input: which command, where, with what.
    std::string hand_off;
    /// With `sandbox-spawn --await --report`: the token of the end lines it writes on stdout
    /// and stderr when the command ends. The execution completes then, with the status and
    /// usage those lines carry, and the tool's own end (a container's teardown) and the
    /// cleanup follow in the background. Empty: the tool's exit is the command's.
    std::string end_token;
    /// Let go of when the execution completes (or is dropped): the pool that lent the sandbox
    /// starts its replacement then, so the next sandbox's start does not slow this command's.
    std::shared_ptr<void> on_end;
};

/// What a driver hands the process runner: the real command line and how to clean up.
struct launch_plan {
    std::vector<std::string> argv;  ///< argv[0] without a slash is looked up on the parent's PATH
    std::vector<std::string> env;   ///< "NAME=value", the launched program's whole environment
    std::filesystem::path cwd;      ///< empty: the parent's
    int stdin_fd = -1;              ///< exec_options::stdin_fd: the launched program's stdin as it is
    /// Descriptors the launched program gets as 3, 4, ...: owned by the driver (its cleanup
    /// closes them), open until then.
    std::vector<int> pass_fds;
    /// What the child applies to itself before it executes argv (the spawn helper does it);
    /// its descriptors are owned by the driver, as pass_fds.
    confinement limits;
    /// Launch through the library's spawn helper even without a confinement
    /// (driver_options::spawn_helper).
    bool through_helper = false;
    /// Where argv[0] without a slash is looked up: this PATH; empty: this process's PATH.
    std::string search_path;
    /// argv is the command itself, not a tool in front of it (landlock): its failing to
    /// start is the command's (a 127 or 126 result), while a confinement step failing is
    /// still the driver's (launch_error).
    bool runs_command_itself = false;
    /// Prefix of the message when the program cannot be started, e.g. "Failed to start docker".
    std::string failure_prefix = "Failed to start host process";
    /// true: a start failure completes with launch_error; false: with a 127 result whose
    /// stderr holds the message (the host driver's contract).
    bool throw_on_start_failure = false;
    /// Run after the reap, and awaited, when the execution was ended by a timeout, a
    /// cancellation or a failing callback: for engines whose client does not stop what it
    /// launched when it is killed (`docker rm -f <name>`).
    std::vector<std::string> cleanup_argv;
    /// Called once after the main process is reaped, whatever happened (also when the start
    /// failed), on a blocking-work thread rather than an io thread: removes work dirs and
    /// cgroups, which may take long. The result waits for it.
    std::function<void()> cleanup;
    /// Called with the result after the cleanup, also for a long-lived process, and never
    /// throws: puts what the driver measured of the command's tree (read by the cleanup) in
    /// place of wait4's usage, which is the launcher's.
    std::function<void(exec_result&)> measure;
    /// Called with the result after the cleanup, before the caller gets it: tells the
    /// driver's tool's own failures from the command's; may throw launch_error, which the
    /// caller then gets instead.
    std::function<void(exec_result&)> check;
    /// Stop the launcher with SIGKILL only (exec_timing::sigkill_only).
    bool sigkill_only = false;
    /// Delivers a polite signal (a timeout's or a cancellation's SIGTERM or SIGINT) to the
    /// command inside, given the launcher's pid, in place of the launcher's group: a launcher
    /// that would die of it and take its command down with SIGKILL (bwrap). SIGKILL still
    /// goes to the group. Must not block: it runs on an io thread.
    std::function<void(pid_t, int)> polite_signal;
    /// The signal that asks a launcher staying as its command's subreaper to kill all it
    /// started, in place of the group's SIGKILL (child_process::kill_through); 0: none.
    int kill_request_signal = 0;
    /// Takes the launcher's own lines out of stderr (srun's notes, the node's report) before
    /// the cap and the callback see it; the driver reads what it took in `check`.
    std::shared_ptr<line_sieve> err_sieve;
    /// How the launcher's own reports on stderr begin ("bwrap: "). Streamed stderr that
    /// begins so, before any stdout and up to 4 KiB, is held back from the callback until
    /// the end: a run that `check` turns into a start failure (or an exception) then streams
    /// only its "Failed to start" line, any other run the held bytes. Anything else
    /// releases them at once.
    std::vector<std::string_view> report_prefixes;
    /// exec_options::on_launch: called on the strand just before the spawn.
    std::function<void(const launch_preview&)> on_launch;
    /// Set: nothing is spawned; the execution takes this sandbox started ahead, and its
    /// result says warm.
    std::shared_ptr<started_sandbox> started;
};

struct run_limits {
    exec_timing timing;
    std::size_t stdout_cap = 1048576;
    std::size_t stderr_cap = 1048576;
};

/// The spawn of `plan`'s program: its argv, environment, cwd, passed descriptors and
/// confinement, the first three moved out (the environment stays when the cleanup needs it).
spawn_request take_spawn_request(launch_plan& plan);

/// Starts one execution. Completes once the main process is reaped, through the handler's
/// associated executor: with a result (also for non-zero exits and timeouts), with
/// system_error(operation_aborted) after a cancellation through the handler's cancellation
/// slot, or with the exception thrown by `on_output`.
void start_process(asio::any_io_executor ex, launch_plan plan, run_limits limits,
                   std::optional<std::string> stdin_data, output_callback on_output, run_handler handler);

/// After the child is gone: the engine's own removal (`plan.cleanup_argv`, when
/// `ended_by_us`), then `plan.cleanup` on a blocking-work thread, then `done` on `s`.
void clean_up_async(const strand_type& s, launch_plan& plan, bool ended_by_us, std::function<void()> done);

/// The same on this thread, for teardown, when no io_context may be left to run it.
void clean_up_now(launch_plan& plan, bool ended_by_us) noexcept;

}  // namespace sandbox::detail

#endif
