// SPDX-License-Identifier: BSL-1.0
// bubblewrap: new user, pid, net, ipc, uts and cgroup namespaces; a read-only root built
// from the few host directories programs need; the work dir at /work.
#include "drivers/plans.hpp"

#include <sys/stat.h>

namespace sandbox::detail {

namespace {

// /bin, /lib, /lib64 and /sbin: symlinks into /usr on merged-/usr systems, real
// directories elsewhere. Read once.
struct root_dir {
    std::string path;
    std::string link_target;  // empty: a real directory (bound read-only)
};

const std::vector<root_dir>& host_root_dirs()
{
    static const std::vector<root_dir> dirs = [] {
        std::vector<root_dir> out;
        for (const char* d : {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}) {
            struct stat st {};
            if (::lstat(d, &st) != 0) continue;
            if (S_ISLNK(st.st_mode)) {
                char buf[4096];
                const auto n = ::readlink(d, buf, sizeof buf - 1);
                if (n > 0) out.push_back({d, std::string(buf, static_cast<std::size_t>(n))});
            } else if (S_ISDIR(st.st_mode)) {
                out.push_back({d, {}});
            }
        }
        return out;
    }();
    return dirs;
}

}  // namespace

std::vector<std::string> bubblewrap_argv(const sandbox_setup& s, const execution_policy& policy,
                                         const std::vector<std::string>& argv)
{
    std::vector<std::string> a = s.limit_prefix;
    std::vector<std::string> steps;
    if (!s.work_alias.empty()) steps = {"bind", s.work_dir.string(), s.work_alias.string()};
    for (const auto& [staged, host] : s.idmapped_binds) steps.insert(steps.end(), {"bind", staged, host});
    if (!s.setid_filter.empty()) steps.insert(steps.end(), {"seccomp", s.setid_filter});
    const auto pre = mount_prelude(s, steps);
    a.insert(a.end(), pre.begin(), pre.end());
    if (s.drop_to_uid) {
        // As root, bwrap's user namespace would map the sandbox user to host root (it could
        // write /proc/sys). Started as an unprivileged user, it maps to that user.
        a.insert(a.end(), {s.setpriv, "--reuid=" + std::to_string(s.uid), "--regid=" + std::to_string(s.gid),
                           "--clear-groups", "--"});
    }
    if (s.rlimit_as) a.insert(a.end(), {s.prlimit, "--as=" + std::to_string(s.rlimit_as), "--"});
    a.insert(a.end(), {s.binary, "--unshare-all", "--unshare-user", "--disable-userns"});
    if (policy.network_enabled()) a.push_back("--share-net");
    a.insert(a.end(), {"--die-with-parent",  // bwrap killed: the whole sandbox dies with it
                       "--new-session",      // no TIOCSTI into the caller's terminal
                       "--cap-drop", "ALL", "--clearenv"});
    if (!s.setid_filter.empty()) a.insert(a.end(), {"--seccomp", "9"});  // opened by the prelude
    for (const auto& [k, v] : s.env) a.insert(a.end(), {"--setenv", k, v});
    a.insert(a.end(), {"--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys", "--dev", "/dev"});
    if (s.disk_bytes) a.insert(a.end(), {"--size", std::to_string(s.disk_bytes)});
    a.insert(a.end(), {"--tmpfs", "/tmp", "--ro-bind", "/usr", "/usr"});
    for (const auto& d : host_root_dirs()) {
        if (d.link_target.empty()) a.insert(a.end(), {"--ro-bind", d.path, d.path});
        else a.insert(a.end(), {"--symlink", d.link_target, d.path});
    }
    // What dynamically linked programs and alternatives-managed tools need from /etc.
    for (const char* f : {"/etc/ld.so.cache", "/etc/alternatives", "/etc/passwd", "/etc/group", "/etc/localtime"})
        a.insert(a.end(), {"--ro-bind-try", f, f});
    if (policy.network_enabled())
        for (const char* f : {"/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/ssl", "/etc/ca-certificates"})
            a.insert(a.end(), {"--ro-bind-try", f, f});
    if (s.work_tmpfs) a.insert(a.end(), {"--size", std::to_string(s.disk_bytes), "--perms", "0700", "--tmpfs", "/work"});
    else a.insert(a.end(), {"--bind", (s.work_alias.empty() ? s.work_dir : s.work_alias).string(), "/work"});
    for (const auto& m : s.mounts) a.insert(a.end(), {m.read_only() ? "--ro-bind" : "--bind", m.host, m.container});
    // After the binds, which create their mount points in the root tmpfs.
    a.insert(a.end(), {"--remount-ro", "/", "--chdir", s.cwd.empty() ? std::string("/work") : "/work/" + s.cwd.string(), "--"});
    a.insert(a.end(), argv.begin(), argv.end());
    return a;
}

}  // namespace sandbox::detail
