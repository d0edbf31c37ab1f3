// SPDX-License-Identifier: BSL-1.0
// Starting a child with glibc's posix_spawn. The pipes are made first, on the caller's thread
// (an io thread registers its ends with the reactor and goes on); the spawn itself, which
// waits for the child's exec, runs on a spawner thread (see offload.hpp).
#ifndef SANDBOX_SRC_RUN_SPAWN_HPP
#define SANDBOX_SRC_RUN_SPAWN_HPP

#include "run/child.hpp"
#include "run/confinement.hpp"

#include <sandbox/detail/unique_fd.hpp>

#include <boost/system/error_code.hpp>

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace sandbox::detail {

struct spawn_request {
    std::vector<std::string> argv;  ///< argv[0] without a slash is looked up on the parent's PATH
    std::vector<std::string> env;   ///< "NAME=value", the child's whole environment
    std::filesystem::path cwd;      ///< empty: the parent's
    /// true: stdin is one end of a socketpair (read-only for the child) and stdin_w the other;
    /// a socket rather than a pipe because sending on it never raises SIGPIPE in the parent.
    /// false: stdin is /dev/null (EOF at once).
    bool stdin_socket = false;
    /// >= 0 (and no stdin_socket): the child's stdin is a copy of this descriptor.
    int stdin_fd = -1;
    /// Descriptors the child gets as 3, 4, ... (a helper's Landlock ruleset, a BPF program);
    /// every other descriptor is closed in the child. Still the caller's after the spawn.
    std::vector<int> pass_fds;
    /// Open a pidfd for the child right away (else the caller may open one later: the child
    /// cannot be reaped by anyone else, so its pid keeps naming it).
    bool open_pidfd = true;
    /// Through the spawn helper even without a confinement (then, when it is not installed, with
    /// posix_spawn here).
    bool through_helper = false;
    /// Where argv[0] without a slash is looked up; empty: this process's PATH. Only the spawn
    /// helper takes another (posix_spawnp searches the caller's).
    std::string search_path;
    /// What the child applies to itself before the exec; only the spawn helper can (see
    /// spawn_child). Its descriptors (ruleset, program) are the caller's, open until the spawn.
    confinement limits;
};

/// The three standard streams: the child's ends (given to the spawn, then closed) and ours
/// (close-on-exec, above 2, still blocking).
struct child_pipes {
    unique_fd stdin_child, stdin_w;  ///< stdin_child unset: /dev/null
    unique_fd stdout_r, stdout_child;
    unique_fd stderr_r, stderr_child;
    /// Copies of spawn_request::pass_fds above the numbers they take in the child, so no
    /// dup2 there overwrites one still to come.
    std::vector<unique_fd> passed;
};

/// Refuses what the kernel would refuse with a less clear error (an empty argv, NUL bytes),
/// then makes the pipes. On failure `what` says which step failed.
std::error_code prepare_spawn(const spawn_request& req, child_pipes& pipes, std::string& what);

/// What a spawn gave: the child, or why there is none.
struct spawn_outcome {
    std::error_code error;  ///< posix_spawn's own report: ENOENT, EACCES, a bad cwd...
    std::string what;       ///< the step that failed when it was not the exec itself
    child_process child;
    std::chrono::steady_clock::time_point started{};
    /// A step of the confinement failed (joining a cgroup, becoming the user...): the
    /// launch's own failure, never the command's.
    bool setup_failed = false;
};

/// Starts the child in a new session with an empty signal mask, every signal at its default
/// disposition (also those the parent ignores: the command's behaviour must not depend on the
/// server that started it), descriptors 0-2 (and the passed ones) only, the cwd, the
/// environment and the confinement of `req`. Through the library's spawn helper when it is
/// installed (run/helper_spawn.hpp: a small process whose fork costs the same whatever this
/// one holds), which a confinement requires; else with posix_spawn here
/// (clone(CLONE_VM|CLONE_VFORK): nothing of this process is copied, whatever its size).
/// Either way this process is the child's parent. Closes the child's ends in `pipes`. Blocks
/// until the child has exec'd: never call it on an io thread.
spawn_outcome spawn_child(const spawn_request& req, child_pipes& pipes);

/// The same with posix_spawn, in this process, never through the helper.
spawn_outcome spawn_child_here(const spawn_request& req, child_pipes& pipes);

/// "argv[0]: reason" for a failure.
std::string describe_spawn_error(const spawn_request& req, std::error_code ec, const std::string& what);

/// The kind of a failure, as a shell would see it: errc::command_not_found,
/// command_not_executable or bad_working_directory for what posix_spawn reports about the
/// command; the system's code for anything else (descriptors or memory running out).
boost::system::error_code classify_spawn_error(const spawn_request& req, std::error_code ec, const std::string& what);

}  // namespace sandbox::detail

#endif
