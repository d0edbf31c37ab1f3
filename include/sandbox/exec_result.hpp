// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_EXEC_RESULT_HPP
#define SANDBOX_EXEC_RESULT_HPP

#include <sandbox/detail/config.hpp>
#include <sandbox/detail/export.hpp>

#include <boost/json/fwd.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sandbox {

/// The exit codes the library gives a command it ended or could not start.
namespace exit_codes {
inline constexpr int timeout = 124;            ///< GNU timeout convention
inline constexpr int cannot_execute = 126;     ///< the command exists but cannot be executed
inline constexpr int command_not_found = 127;  ///< the command could not be started
inline constexpr int sandbox_failed = 125;     ///< the sandbox could not run it (docker run's convention)
}  // namespace exit_codes

/// Which clock ended a timed-out execution.
enum class timeout_reason { wall, idle };

/// "wall" or "idle" (the JSON `timeout_reason`).
SANDBOX_DECL std::string_view to_string(timeout_reason r) noexcept;

/// Resource usage of the command's whole process tree, never of the driver's launcher.
/// host: the main process and the children it waited for (wait4). bubblewrap, firejail,
/// docker, podman: the run's cgroup, so every process of the execution; max_rss_bytes is
/// then the cgroup's peak memory (page cache included).
struct resource_usage {
    std::chrono::nanoseconds user_cpu{0};    ///< CPU time in user mode
    std::chrono::nanoseconds system_cpu{0};  ///< CPU time in the kernel
    std::uint64_t max_rss_bytes = 0;         ///< peak resident memory
    /// false where the tree cannot be measured (no cgroup could be made, an engine with the
    /// systemd cgroup manager): the other fields are then 0.
    bool available = true;

    /// Equal when every member is.
    friend bool operator==(const resource_usage&, const resource_usage&) = default;
};

/// The outcome of one execution. A non-zero exit is a result, not an error.
struct SANDBOX_DECL exec_result {
    std::string out;                       ///< retained tail of stdout
    std::string err;                       ///< retained tail of stderr
    int exit_code = 0;                     ///< exit status; 128+N if killed by signal N; 124 on timeout
    std::chrono::nanoseconds duration{0};  ///< from spawn to reap
    bool timed_out = false;                ///< a timeout ended it (see `timeout`); exit_code is then 124
    bool truncated_out = false;            ///< stdout went past its cap: `out` holds its last bytes only
    bool truncated_err = false;            ///< stderr went past its cap: `err` holds its last bytes only
    std::optional<timeout_reason> timeout;  ///< wall or idle, set when timed_out
    int term_signal = 0;                    ///< signal that ended the process, 0 if it exited
    resource_usage usage;                   ///< CPU time and peak memory of the command's tree
    /// The memory limit ended the command: an OOM kill in its tree, and it ended by SIGKILL.
    /// Always false on the host driver, which enforces no memory limit.
    bool oom_killed = false;
    /// Why the command did not start (a sandbox::errc such as command_not_found, or the
    /// system's code); empty when it started. The exit code is then 127 (126 for
    /// errc::command_not_executable) and stderr starts with "Failed to start".
    boost::system::error_code start_error;
    /// The command ran in a sandbox started ahead (command_runner::prewarm) rather than one
    /// started for it.
    bool warm = false;

    /// Exit code 0 and no timeout.
    bool success() const noexcept { return exit_code == 0 && !timed_out; }
    /// out + ("\n" if both are non-empty) + err
    std::string combined_output() const;

    /// Equal when every member is.
    friend bool operator==(const exec_result&, const exec_result&) = default;
};

/// `boost::json::value_from(r)`: an object with the keys, in order: stdout, stderr, exit_code,
/// duration (seconds), timed_out, truncated_stdout, truncated_stderr, success, timeout_reason
/// (null, "wall", "idle"), term_signal, usage ({user_cpu_seconds, system_cpu_seconds,
/// max_rss_bytes}, or null when not available), oom_killed, start_error (null or {code,
/// message}: code is the errc name, or `"<category>:<value>"` for a system code), warm. stdout and
/// stderr go through make_valid_utf8().
SANDBOX_DECL void tag_invoke(const boost::json::value_from_tag&, boost::json::value& jv, const exec_result& r);
/// `boost::json::value_to<exec_result>(jv)`: accepts any subset of the keys above (missing
/// ones take defaults; "success" is derived and ignored; a null usage is one not available)
/// and throws std::invalid_argument naming a bad key.
SANDBOX_DECL exec_result tag_invoke(const boost::json::value_to_tag<exec_result>&, const boost::json::value& jv);

}  // namespace sandbox

#endif
