// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_DRIVER_OPTIONS_HPP
#define SANDBOX_DRIVER_OPTIONS_HPP

#include <chrono>
#include <filesystem>
#include <sandbox/driver.hpp>
#include <sandbox/mount.hpp>

#include <string>
#include <vector>

namespace sandbox {

/// How the slurm driver submits an execution. Each one is a job step started with `srun`
/// (`--ntasks=1`, `--mem` from the memory limit, `--time` as a backstop, a day without a
/// timeout; `--export` of the node's policy only);
/// on the node, `sandbox-run slurm-step` applies the policy with the inner driver and
/// reports the result. Inside an allocation (SLURM_JOB_ID set, as under salloc or sbatch)
/// executions are steps of it (`--exact`); outside one, each is a job of its own.
struct slurm_options {
    /// The partition to run in; empty: the cluster's default.
    std::string partition;
    /// The isolation applied on the compute node: driver::bubblewrap or driver::host.
    driver inner = driver::bubblewrap;
    /// More arguments for srun, before the command (e.g. "--account=ml", "--gres=gpu:1").
    std::vector<std::string> extra_args;
    /// The sandbox-run the nodes start, at the same path on every node. Empty: the variable
    /// SANDBOX_RUN_BIN, else the one installed with the library, else sandbox-run on PATH.
    std::string node_program;
    /// srun's --time for an execution without a timeout, so that a job whose runner died
    /// with its spawn helper (which cancels it otherwise) cannot run forever. 0: no --time
    /// (the partition's own limit).
    std::chrono::minutes time_limit_without_timeout{24 * 60};
};

/// Driver settings that are not policy: which binary and image, and how executions end.
struct driver_options {
    /// Container image for docker and podman.
    std::string image = "alpine:3";
    /// The driver's binary. Empty: the DOCKER_BIN, PODMAN_BIN, FIREJAIL_BIN, BWRAP_BIN or
    /// SRUN_BIN variable, then PATH. Ignored by the host driver.
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
    /// The slurm driver's partition, node-side driver and srun arguments.
    slurm_options slurm;
    /// The host driver: launch through the library's spawn helper (`sandbox-spawn`, installed
    /// with the library in libexec/sandbox), a small process that forks each command and makes
    /// this process its parent, rather than with posix_spawn from this process. A spawn
    /// copies the spawning process's descriptor table, so a server holding thousands of
    /// descriptors (commands in flight) launches slower and slower by itself; the helper's
    /// rate stays flat. The command then starts with the helper's resource limits and in its
    /// cgroup, which are this process's as they were when the helper started, not as they are
    /// at the launch. Without the helper installed, posix_spawn as before. The isolating
    /// drivers always launch through the helper, which applies their confinement.
    bool spawn_helper = false;
};

}  // namespace sandbox

#endif
