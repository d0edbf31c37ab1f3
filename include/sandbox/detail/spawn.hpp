// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_DETAIL_SPAWN_HPP
#define SANDBOX_DETAIL_SPAWN_HPP

#include <sandbox/detail/unique_fd.hpp>

#include <sys/types.h>

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
    /// Open a pidfd for the child right away (else the caller may open one later: the child
    /// cannot be reaped by anyone else, so its pid keeps naming it).
    bool open_pidfd = true;
};

/// A started child: its own session and process group (pgid == pid), descriptors 0-2 only.
/// The parent ends of the pipes are close-on-exec (and still blocking).
struct spawned_child {
    pid_t pid = -1;
    unique_fd pidfd;  ///< -1 when pidfd_open is unavailable (old kernel, seccomp)
    unique_fd stdin_w;
    unique_fd stdout_r;
    unique_fd stderr_r;
};

/// Starts the child with posix_spawn, never fork(): glibc runs it as
/// clone(CLONE_VM|CLONE_VFORK), so the cost does not grow with the parent's memory.
/// On failure returns the errno and says which step failed in `what`.
std::error_code spawn_child(const spawn_request& req, spawned_child& out, std::string& what);

/// "argv[0]: reason" style text for a spawn failure.
std::string describe_spawn_error(const spawn_request& req, std::error_code ec, const std::string& what);

}  // namespace sandbox::detail

#endif
