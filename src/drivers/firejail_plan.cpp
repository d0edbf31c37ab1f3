// SPDX-License-Identifier: BSL-1.0
// firejail 0.9.72: it has no --chdir and cannot create mount points, so the work dir is the
// jail's home and cwd, and extra paths keep their host paths. It refuses to run as an
// unprivileged system user, so under a root caller the command is root without
// capabilities, with no-new-privileges, seccomp and a read-only host.
#include <sandbox/detail/driver_plans.hpp>

#include <fstream>
#include <sstream>

namespace sandbox::detail {

const std::vector<std::string>& writable_host_mounts()
{
    static const std::vector<std::string> mounts = [] {
        std::vector<std::string> out;
        std::ifstream mi("/proc/self/mountinfo");
        for (std::string line; std::getline(mi, line);) {
            std::istringstream in(line);
            std::string id, parent, dev, root, point, options;
            in >> id >> parent >> dev >> root >> point >> options;
            if (point == "/" || options.compare(0, 2, "rw") != 0) continue;
            // firejail builds its own /proc, /sys, /dev and /tmp, and owns /run/firejail.
            bool skip = false;
            for (const char* own : {"/proc", "/sys", "/dev", "/tmp", "/run/firejail"}) {
                const std::string o = own;
                if (point == o || point.compare(0, o.size() + 1, o + "/") == 0) skip = true;
            }
            if (!skip && point.find_first_of(" \\") == std::string::npos) out.push_back(point);
        }
        return out;
    }();
    return mounts;
}

std::vector<std::string> firejail_argv(const sandbox_setup& s, const execution_policy& policy,
                                       const std::vector<std::string>& argv)
{
    std::vector<std::string> a = s.limit_prefix;
    a.insert(a.end(), {s.binary,
                       "--quiet",      // else it prints its own messages on the command's stdout
                       "--noprofile",  // predictable: no default profile for root
                       });
    if (!policy.network_enabled()) a.push_back("--net=none");
    a.insert(a.end(), {"--private=" + s.work_dir.string(), "--private-cwd", "--private-dev", "--private-tmp",
                       "--caps.drop=all", "--nonewprivs", "--seccomp", "--read-only=/"});
    for (const auto& m : writable_host_mounts()) a.push_back("--read-only=" + m);
    for (const auto& m : s.mounts) {
        a.push_back((m.read_only() ? "--read-only=" : "--read-write=") + m.host);
        if (m.host.rfind("/tmp/", 0) == 0) a.push_back("--whitelist=" + m.host);  // --private-tmp hides it
    }
    if (s.rlimit_as) a.push_back("--rlimit-as=" + std::to_string(s.rlimit_as));
    // The command's own exit code, and orphans killed when it ends rather than waited for.
    a.insert(a.end(), {"--deterministic-exit-code", "--deterministic-shutdown"});
    // The environment inside is firejail's own, which the plan sets to s.env.
    a.push_back("--");
    a.insert(a.end(), argv.begin(), argv.end());
    return a;
}

}  // namespace sandbox::detail
