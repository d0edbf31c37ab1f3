// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_EXEC_OPTIONS_HPP
#define SANDBOX_EXEC_OPTIONS_HPP

#include <sandbox/execution_policy.hpp>
#include <sandbox/output.hpp>

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace sandbox {

/// What a runner starts for a command: the program's real command line (for the isolating
/// drivers the tool's or the engine client's, with the command at its end), its whole
/// environment and its working directory.
struct launch_preview {
    std::vector<std::string> argv;  ///< the program started and its arguments
    std::vector<std::string> env;   ///< "NAME=value"
    std::filesystem::path cwd;      ///< the directory it starts in, on the host
};

/// What may differ between two executions under one policy.
struct exec_options {
    // Declared, so that this is not an aggregate: g++ 12 frees an aggregate temporary twice
    // when it is made inside a co_await expression (`co_await async_execute(r, argv,
    // exec_options{}, ...)`). Set the members on a named object instead of designating them.
    exec_options() = default;

    /// Written to the command's stdin, then EOF; none: stdin is at EOF at once.
    std::optional<std::string> stdin_data;
    /// Instead of stdin_data: a descriptor (a pipe, a file, a socket) that becomes the
    /// command's stdin as it is, so the command reads the data as it comes, whatever its
    /// size, and the timeouts run from the start. It is copied at the spawn and not taken
    /// over: keep it open until then, and close it when you like. To feed a command from
    /// C++ as you go, pass the read end of a pipe and write to the other end. -1: none.
    /// Executions only (not command_runner::start); setting both is an invalid argument.
    int stdin_fd = -1;
    /// Called with each chunk of output as it arrives, on the execution's strand.
    output_callback on_output;
    /// The working directory, relative to where commands start (the base dir on the host
    /// driver, /work inside the others). A path that leaves it (`..`, an absolute path, a
    /// symlink pointing out) fails with errc::outside_root; one that does not exist, with
    /// errc::bad_working_directory.
    std::filesystem::path cwd;
    /// Variables added over the policy's environment (replacing one of the same name).
    /// Blocked names (blocked_env_patterns) are still removed.
    env_list env;
    /// This execution's wall timeout instead of the policy's; sandbox::no_timeout for none.
    std::optional<std::chrono::milliseconds> timeout;
    /// Called once, just before the spawn, with what is started (for logs, `sandbox-run -v`).
    /// What it throws ends the execution before anything starts, with that exception.
    std::function<void(const launch_preview&)> on_launch;
};

}  // namespace sandbox

#endif
