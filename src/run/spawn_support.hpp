// SPDX-License-Identifier: BSL-1.0
// What both ways of starting a child share (spawn.cpp, spawn_async.cpp).
#ifndef SANDBOX_SRC_RUN_SPAWN_SUPPORT_HPP
#define SANDBOX_SRC_RUN_SPAWN_SUPPORT_HPP

#include "run/spawn.hpp"

#include <signal.h>

#include <array>
#include <string>
#include <system_error>
#include <vector>

namespace sandbox::detail {

// Signals a server commonly ignores or blocks; an ignored disposition survives exec, so the
// child gets them reset to default. Caught handlers are reset by exec anyway.
inline constexpr std::array<int, 15> reset_signals{SIGPIPE, SIGCHLD, SIGHUP,  SIGINT,  SIGQUIT,
                                                   SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGTSTP,
                                                   SIGTTIN, SIGTTOU, SIGXFSZ, SIGXCPU, SIGURG};

/// /dev/null opened once (above 2, close-on-exec), -1 when it cannot be opened.
int dev_null();

/// Refuses what the kernel would refuse with a less clear error (an empty argv, NUL bytes).
std::error_code validate(const spawn_request& req, std::string& what);

/// The pipes for stdout and stderr, and the socket pair for stdin when asked for; every
/// descriptor above 2 and close-on-exec.
struct child_fds {
    unique_fd in_r, in_w, out_r, out_w, err_r, err_w;
};
std::error_code make_child_fds(const spawn_request& req, child_fds& f, std::string& what);

/// NULL-terminated pointers to the strings, for exec.
std::vector<char*> c_strings(const std::vector<std::string>& v);

}  // namespace sandbox::detail

#endif
