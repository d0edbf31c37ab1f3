// SPDX-License-Identifier: BSL-1.0
// docker and podman: one container per execution, removed afterwards.
#include "drivers/plans.hpp"

#include "drivers/orphans.hpp"

namespace sandbox::detail {

std::vector<std::string> container_argv(const sandbox_setup& s, const execution_policy& policy,
                                        const driver_options& options, bool podman,
                                        const std::vector<std::string>& argv)
{
    const std::string mem = std::to_string(policy.memory_limit_bytes() >> 20) + "m";
    // /tmp holds at most the disk limit, else what the memory limit would anyway.
    const std::string tmp_size = s.disk_bytes ? std::to_string(s.disk_bytes) : mem;
    std::vector<std::string> a{
        s.binary, "run", "--rm",
        "-i",                     // stdin reaches the command (it gets EOF after the data)
        "--init",                 // a real PID 1: forwards SIGTERM, reaps orphans
        "--name", s.name,         // so a timeout can remove it: killing the client does not
        "--log-driver", "none",   // the output is streamed; the engine must not keep a copy
        "--pull", "never",        // a missing image is an error, never a network fetch
    };
    // Whose it is and until when: what a later sweep needs if this process is killed.
    const auto labels = container_labels(s.deadline);
    a.insert(a.end(), labels.begin(), labels.end());
    // Written once the container exists: tells an engine failure from a command's own 125.
    if (!s.cid_file.empty()) a.insert(a.end(), {"--cidfile", s.cid_file});
    if (!policy.network_enabled()) a.push_back("--network=none");
    if (!s.cgroup_parent.empty()) {
        a.insert(a.end(), {"--cgroup-parent", s.cgroup_parent});
        // conmon would land in <parent>/conmon, counted with the command; it stays with the client.
        if (podman) a.push_back("--cgroups=no-conmon");
    }
    a.insert(a.end(), {"--pids-limit=" + std::to_string(options.pids_limit), "--memory", mem,
                       "--memory-swap", mem,  // no swap beyond the limit
                       "--read-only", "--tmpfs", "/tmp:rw,nosuid,nodev,size=" + tmp_size, "--cap-drop=ALL",
                       "--security-opt", "no-new-privileges", "-u",
                       std::to_string(s.uid) + ":" + std::to_string(s.gid)});
    if (s.work_tmpfs)
        a.insert(a.end(), {"--tmpfs", "/work:rw,nosuid,nodev,mode=0700,size=" + std::to_string(s.disk_bytes) +
                                          ",uid=" + std::to_string(s.uid) + ",gid=" + std::to_string(s.gid)});
    else  // ":rw,bind" is rejected by docker ("invalid mode"): plain rw/ro.
        a.insert(a.end(), {"-v", s.work_dir.string() + ":/work:rw"});
    // podman can bind nosuid and nodev (docker's -v cannot: there the command has no
    // capabilities and no-new-privileges, and set-id files it makes carry its own uid).
    for (const auto& m : s.mounts)
        a.insert(a.end(), {"-v", m.to_volume_arg() + (podman ? ",nosuid,nodev" : "")});
    if (!s.seccomp_profile.empty()) a.insert(a.end(), {"--security-opt", "seccomp=" + s.seccomp_profile});
    if (podman) a.push_back("--unsetenv-all");  // drop podman's own container= and TERM=
    for (const auto& [k, v] : s.env) a.insert(a.end(), {"-e", k + "=" + v});
    a.insert(a.end(), {"-w", s.cwd.empty() ? std::string("/work") : "/work/" + s.cwd.string(), options.image});
    a.insert(a.end(), argv.begin(), argv.end());
    return a;
}

std::vector<std::string> container_cleanup_argv(const sandbox_setup& s, bool podman)
{
    // Kills and removes in one step ("-t 0": podman would otherwise wait 10 s). A client
    // killed while the engine was still creating the container leaves it to appear later,
    // in state Created: until the cid file says it existed, look for it a little longer.
    std::vector<std::string> a{"/bin/sh", "-c",
                               "b=$1 n=$2 c=$3; shift 3; \"$b\" rm -f \"$@\" \"$n\" >/dev/null 2>&1; "
                               "[ -s \"$c\" ] && exit 0; i=0; while [ $i -lt 10 ]; do sleep 0.1; "
                               "[ -n \"$(\"$b\" ps -a -q --filter \"name=$n\")\" ] && exec \"$b\" rm -f \"$@\" \"$n\"; "
                               "i=$((i+1)); done",
                               "sh", s.binary, s.name, s.cid_file.empty() ? std::string("/nonexistent") : s.cid_file};
    if (podman) a.insert(a.end(), {"-t", "0"});
    return a;
}

}  // namespace sandbox::detail
