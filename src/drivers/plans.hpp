// SPDX-License-Identifier: BSL-1.0
// The command lines of the isolating drivers, as pure functions of what was prepared for a
// run, so they can be tested without any engine.
#ifndef SANDBOX_SRC_DRIVERS_PLANS_HPP
#define SANDBOX_SRC_DRIVERS_PLANS_HPP

#include "drivers/support.hpp"
#include "run/confinement.hpp"
#include <sandbox/driver_options.hpp>
#include <sandbox/execution_policy.hpp>
#include <sandbox/mount.hpp>

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace sandbox::detail {

/// Where a sandbox started ahead sees its stub when host paths are not kept (bubblewrap, the
/// containers): bound there read-only.
inline constexpr const char* warm_stub_inside = "/.sandbox-await";

/// A path of `sandbox_setup::mounts` held open as the launch checked it (sys/mounts.hpp).
struct pinned_mount {
    int fd = -1;  ///< O_PATH, owned by run_resources::fds
    std::uint64_t dev = 0, ino = 0;
};

struct sandbox_setup;

/// A bind step onto the host path `target` of s.mounts, checked against its pin when there is one.
mount_step bind_onto(const sandbox_setup& s, std::string source, const std::string& target);

/// Everything prepared for one run of an isolating driver.
struct sandbox_setup {
    std::string binary;  ///< the tool, an absolute path
    std::string name;    ///< "sandbox-<24 hex>": the work dir's and the container's name
    std::filesystem::path work_dir;
    std::filesystem::path cwd;  ///< where the command starts, relative to the work dir ("" for it)
    std::vector<mount> mounts;  ///< mounts_for(policy, driver)
    /// One per entry of `mounts`, which every mount or rule made for it comes from, so a path
    /// whose component is swapped after the check cannot move it. Empty: by path (the
    /// command-line tests).
    std::vector<pinned_mount> pins;
    env_list env;           ///< the environment inside the sandbox
    uid_t uid = 65534;      ///< the command's user inside (docker, podman, bubblewrap)
    gid_t gid = 65534;
    bool drop_to_uid = false;               ///< launch the tool as uid:gid (the library runs as root)
    std::vector<std::string> cgroup_procs;  ///< the run's cgroups' cgroup.procs files, joined before the tool starts
    std::uint64_t rlimit_as = 0;            ///< no cgroups: per-process address-space limit
    std::vector<std::string> host_writable_mounts;  ///< firejail: made read-only one by one
    std::filesystem::path hidden_base_dir;          ///< firejail: the base dir, when /tmp does not hide it
    std::string cid_file;                           ///< docker and podman: --cidfile
    std::string record;  ///< docker and podman: the run's record, by which a sweep judges it alive
    std::string env_file;  ///< docker and podman: the environment's file (0600), for --env-file
    /// docker and podman: names whose values the env file cannot carry (a newline), given as
    /// `-e NAME` and taken from the client's environment.
    std::vector<std::string> env_from_client;
    std::string cgroup_parent;                      ///< docker and podman: where usage is read ("": not)
    std::string seccomp_profile;                    ///< podman: its default without user namespaces
    std::int64_t deadline = 0;  ///< docker and podman: when the container is overdue (epoch s; 0: never)
    std::uint64_t disk_bytes = 0;     ///< the disk limit: what /tmp (and /work) may hold; 0: none
    bool work_tmpfs = false;          ///< the tool itself makes /work a tmpfs of disk_bytes
    /// bubblewrap under a root caller whose base dir it cannot reach: the work dir is bound
    /// over the base dir in a private mount namespace first, and taken from there.
    std::filesystem::path work_alias;
    /// bubblewrap and firejail under a root caller: idmapped mounts of writable paths the
    /// command's uid does not own ({staged mount, host path}), bound over the host paths by
    /// the prelude, and what keeps it from making set-id files there: bubblewrap's seccomp
    /// program (pass_fds), firejail's helper that loads the filter in the jail.
    std::vector<std::pair<std::string, std::string>> idmapped_binds;
    std::string seccomp_exec;  ///< sandbox-seccomp-exec, an absolute path
    /// A sandbox started ahead: the stub (sandbox-spawn) on the host, shown to the sandbox at
    /// its path where host paths are kept, else bound at /.sandbox-await.
    std::string warm_stub;
    /// The rows of the syscall table (sys/syscall_rules.hpp) this run's command is refused.
    std::uint32_t syscall_rules = 0;
    /// launch_plan::pass_fds, owned by run_resources::fds: bubblewrap's seccomp program
    /// (bwrap --seccomp 3); landlock's ruleset and seccomp program.
    std::vector<int> pass_fds;
};

/// What the spawn applies before the tool starts, on every isolating driver: the run's
/// cgroups, the address-space limit when there are none, and under a root caller the
/// command's user (uid:gid, no groups, no capabilities).
confinement launch_confinement(const sandbox_setup& s);

/// bubblewrap's: launch_confinement(), and under a root caller a private mount namespace
/// where the work dir is bound over the base dir and idmapped writable paths over their host
/// paths, before bwrap starts unprivileged.
confinement bubblewrap_confinement(const sandbox_setup& s);

/// firejail's: launch_confinement() without the address-space limit (firejail's own
/// --rlimit-as applies it in the jail), and under a root caller a private mount namespace
/// where writable paths are bound onto themselves (from their idmapped mounts when the
/// account does not own them) and, with a disk limit, /tmp is a bounded tmpfs.
confinement firejail_confinement(const sandbox_setup& s);

std::vector<std::string> container_argv(const sandbox_setup& s, const execution_policy& policy,
                                        const driver_options& options, bool podman,
                                        const std::vector<std::string>& args);
/// `wait_seconds` bounds the wait for a container the engine may still be creating.
/// `grace` (seconds, as `sleep` takes them; empty: none): the container's command is sent
/// SIGTERM first and given that long, as docker's client, which is only ever SIGKILLed, no
/// longer passes the runner's SIGTERM on.
std::vector<std::string> container_cleanup_argv(const sandbox_setup& s, bool podman, int wait_seconds = 20,
                                                const std::string& grace = {});

std::vector<std::string> bubblewrap_argv(const sandbox_setup& s, const execution_policy& policy,
                                         const std::vector<std::string>& args);

std::vector<std::string> firejail_argv(const sandbox_setup& s, const execution_policy& policy,
                                       const std::vector<std::string>& args);

/// The unprivileged account firejail runs as under a root caller.
struct firejail_user {
    uid_t uid = 0;
    gid_t gid = 0;
    std::string problem;  ///< empty when the account can be used; else why not
};
firejail_user firejail_account(const std::string& name);

/// The base dir when firejail must --blacklist it (other executions' work dirs live there,
/// owned by the same account); empty when --private-tmp already hides it or when hiding it
/// would hide a path the policy mounts.
std::filesystem::path base_to_hide(const std::filesystem::path& base, const std::vector<mount>& mounts);

/// Mount points of the host that are writable (read now from /proc/self/mountinfo, escapes
/// decoded), which firejail must make read-only one by one: its --read-only=/ does not
/// cover separate mounts.
std::vector<std::string> writable_host_mounts();

/// Empty when firejail takes `path` literally; else what is wrong with it. firejail expands
/// globs and macros in path options and rejects some characters, so only a plain set of
/// characters is let through.
std::string firejail_path_problem(const std::string& path);

/// Empty when a path the policy names is visible at its place in a firejail jail; else why not.
/// firejail 0.9.72 gives every jail a fresh /var/tmp, /run/lock and /dev (--private-dev), and
/// replaces /home, /root and the account's home (`home`) with the work dir (--private): a path
/// there would silently be missing, and no option of an unprivileged firejail binds it back.
std::string firejail_hidden_place(const std::string& path, const std::string& home);

}  // namespace sandbox::detail

#endif
