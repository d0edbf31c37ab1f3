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
#include <utility>
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

/// What may differ between two executions under one policy. Set the members, or chain the
/// setters, which read as designated initializers would and work on a temporary inside a
/// co_await expression too:
///
///     co_await runner->execute(argv, exec_options().with_cwd("sub").with_timeout(5s));
struct exec_options {
    // Declared, so that this is not an aggregate: g++ 12 frees an aggregate temporary twice
    // when it is made inside a co_await expression (`co_await async_execute(r, argv,
    // exec_options{}, ...)`), designated initializers included.
    exec_options() = default;

    // On a named object the setters return it; on a temporary, a new value (never a
    // reference to the temporary, which a coroutine frame may outlive).

    /// Sets stdin_data.
    exec_options& with_stdin(std::string data) & { return set(stdin_data, std::move(data)); }
    /// Sets stdin_data.
    exec_options with_stdin(std::string data) && { return std::move(with_stdin(std::move(data))); }
    /// Sets stdin_fd.
    exec_options& with_stdin_fd(int fd) & { return set(stdin_fd, fd); }
    /// Sets stdin_fd.
    exec_options with_stdin_fd(int fd) && { return std::move(with_stdin_fd(fd)); }
    /// Sets on_output.
    exec_options& with_output(output_callback f) & { return set(on_output, std::move(f)); }
    /// Sets on_output.
    exec_options with_output(output_callback f) && { return std::move(with_output(std::move(f))); }
    /// Sets cwd.
    exec_options& with_cwd(std::filesystem::path dir) & { return set(cwd, std::move(dir)); }
    /// Sets cwd.
    exec_options with_cwd(std::filesystem::path dir) && { return std::move(with_cwd(std::move(dir))); }
    /// Adds one variable to env (or replaces the one of that name added before).
    exec_options& with_env(std::string name, std::string value) &
    {
        for (auto& [n, v] : env)
            if (n == name) return set(v, std::move(value));
        env.emplace_back(std::move(name), std::move(value));
        return *this;
    }
    /// Adds one variable to env (or replaces the one of that name added before).
    exec_options with_env(std::string name, std::string value) &&
    {
        return std::move(with_env(std::move(name), std::move(value)));
    }
    /// Sets timeout.
    exec_options& with_timeout(std::chrono::milliseconds t) & { return set(timeout, t); }
    /// Sets timeout.
    exec_options with_timeout(std::chrono::milliseconds t) && { return std::move(with_timeout(t)); }
    /// Sets on_launch.
    exec_options& with_on_launch(std::function<void(const launch_preview&)> f) &
    {
        return set(on_launch, std::move(f));
    }
    /// Sets on_launch.
    exec_options with_on_launch(std::function<void(const launch_preview&)> f) &&
    {
        return std::move(with_on_launch(std::move(f)));
    }

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

private:
    template <typename Member, typename Value>
    exec_options& set(Member& m, Value&& v)
    {
        m = std::forward<Value>(v);
        return *this;
    }
};

}  // namespace sandbox

#endif
