// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_DRIVER_OPTIONS_HPP
#define SANDBOX_DRIVER_OPTIONS_HPP

#include <chrono>
#include <filesystem>
#include <sandbox/mount.hpp>

#include <string>
#include <vector>

namespace sandbox {

/// Driver settings that are not policy: which binary and image, and how executions end.
struct driver_options {
    /// Container image for docker and podman.
    std::string image = "alpine:3";
    /// The driver's binary. Empty: the DOCKER_BIN, PODMAN_BIN, FIREJAIL_BIN or BWRAP_BIN
    /// variable, then PATH. Ignored by the host driver.
    std::string binary;
    /// After SIGTERM on a timeout or cancellation, how long the command gets before SIGKILL.
    std::chrono::milliseconds kill_grace{250};
    /// After the main process ends and whatever it left behind was killed, how long to keep
    /// reading output from a process that escaped the kill (e.g. with setsid) and still holds
    /// a pipe. Output still buffered in the pipes is always read; this bounds only the wait.
    std::chrono::milliseconds drain_timeout{250};
    /// Process limit inside isolating drivers (docker and podman --pids-limit, the pids
    /// cgroup for bubblewrap and firejail).
    int pids_limit = 256;
    /// Isolating drivers: an existing directory to use as the work dir (/work) of every
    /// execution, instead of a fresh private one per execution. It is not removed
    /// afterwards; sessions use it to keep files between commands.
    std::filesystem::path work_dir;
    /// Isolating drivers: more bind mounts, at the given places inside (firejail keeps the
    /// host path), after the policy's readable and writable paths. Options "ro" or "rw".
    std::vector<mount> extra_mounts;
    /// firejail under a root caller: the unprivileged account the command runs as (firejail
    /// itself would run it as root). It needs a home directory and a login shell, as
    /// firejail requires; scripts/setup-engines.sh creates it. No such account: the launch
    /// fails with errc::engine_failed rather than running the command as root.
    std::string firejail_user = "sandbox-run";
};

}  // namespace sandbox

#endif
