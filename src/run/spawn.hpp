// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_SRC_RUN_SPAWN_HPP
#define SANDBOX_SRC_RUN_SPAWN_HPP

#include <sandbox/detail/unique_fd.hpp>

#include <sys/types.h>

#include <filesystem>
#include <memory>
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
    /// Open a pidfd for the child right away (else the caller may open one later: the child
    /// cannot be reaped by anyone else, so its pid keeps naming it).
    bool open_pidfd = true;
};

/// What a child started by spawn_child_async uses of our memory (it shares our address space
/// until its exec), and what it reports when a step before the command fails. Destroying it
/// before the child has exec'd or exited waits for that.
class launch_record;

/// A started child: its own session and process group (pgid == pid), descriptors 0-2 only.
/// The parent ends of the pipes are close-on-exec (and still blocking).
struct spawned_child {
    pid_t pid = -1;
    unique_fd pidfd;  ///< -1 when pidfd_open is unavailable (old kernel, seccomp)
    unique_fd stdin_w;
    unique_fd stdout_r;
    unique_fd stderr_r;
    /// spawn_child_async only: keep it until the child is reaped, then ask launch_failure().
    std::shared_ptr<launch_record> launch;
};

/// Starts the child with posix_spawn, never fork(): glibc runs it as
/// clone(CLONE_VM|CLONE_VFORK), so the cost does not grow with the parent's memory.
/// On failure returns the errno and says which step failed in `what`.
std::error_code spawn_child(const spawn_request& req, spawned_child& out, std::string& what);

/// Like spawn_child, but returns as soon as the child exists rather than when it has exec'd.
/// posix_spawn holds the calling thread for the child's whole exec (a few hundred
/// microseconds, most of a short command's start), so an io thread launching many commands
/// spends most of its time waiting there; here the child is a clone(CLONE_VM) of our address
/// space on a stack of its own, that prepares itself and execs while we go on. A failure in
/// the child (chdir, exec) is then known only once it has exited: it exits with 127 and
/// launch_failure() says why. Falls back to spawn_child where the raw system calls the child
/// needs are not written (architectures other than x86-64 and AArch64).
std::error_code spawn_child_async(std::shared_ptr<const spawn_request> req, spawned_child& out, std::string& what);

/// Whether the child of spawn_child_async has let go of our memory: it has exec'd or exited.
bool launch_released(const launch_record& record) noexcept;

/// After the child of spawn_child_async has exited (reaped by us or anyone else): the errno of the step that kept it
/// from running the command (and that step in `what`, empty for chdir and exec, which
/// describe_spawn_error explains), or no error when the command ran.
std::error_code launch_failure(const launch_record& record, std::string& what);

/// "argv[0]: reason" style text for a spawn failure.
std::string describe_spawn_error(const spawn_request& req, std::error_code ec, const std::string& what);

}  // namespace sandbox::detail

#endif
