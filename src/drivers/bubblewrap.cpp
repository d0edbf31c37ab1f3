// SPDX-License-Identifier: BSL-1.0
// bubblewrap: new user, pid, net, ipc, uts and cgroup namespaces; a read-only root built
// from the few host directories programs need; the work dir at /work.
#include "drivers/plans.hpp"

#include "drivers/driver_spec.hpp"
#include "drivers/resources.hpp"
#include "drivers/run_record.hpp"
#include "drivers/runner.hpp"
#include "sys/seccomp_filter.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

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
    static const auto& dirs = *new const std::vector<root_dir>([] {
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
    }());  // never destroyed: library threads use it
    return dirs;
}

}  // namespace

confinement bubblewrap_confinement(const sandbox_setup& s)
{
    auto c = launch_confinement(s);
    if (!s.work_alias.empty()) c.mounts.push_back({.source = s.work_dir.string(), .target = s.work_alias.string()});
    for (const auto& [staged, host] : s.idmapped_binds) c.mounts.push_back(bind_onto(s, staged, host));
    c.private_mounts = !c.mounts.empty();
    return c;
}

std::vector<std::string> bubblewrap_argv(const sandbox_setup& s, const execution_policy& policy,
                                         const std::vector<std::string>& args)
{
    std::vector<std::string> a{s.binary, "--unshare-all", "--unshare-user", "--disable-userns"};
    if (policy.network_enabled()) a.push_back("--share-net");
    a.insert(a.end(), {"--die-with-parent",  // bwrap killed: the whole sandbox dies with it
                       "--new-session",      // no TIOCSTI into the caller's terminal
                       "--cap-drop", "ALL"});
    if (!s.pass_fds.empty()) a.insert(a.end(), {"--seccomp", "3"});  // launch_plan::pass_fds
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
    // From their pins (pass_fds): bwrap checks that what it mounted is the pinned directory.
    for (std::size_t i = 0; i < s.mounts.size(); ++i) {
        const auto& m = s.mounts[i];
        const auto passed = i < s.pins.size() ? std::find(s.pass_fds.begin(), s.pass_fds.end(), s.pins[i].fd) : s.pass_fds.end();
        if (passed == s.pass_fds.end())
            a.insert(a.end(), {m.read_only() ? "--ro-bind" : "--bind", m.host, m.container});
        else
            a.insert(a.end(), {m.read_only() ? "--ro-bind-fd" : "--bind-fd",
                               std::to_string(3 + (passed - s.pass_fds.begin())), m.container});
    }
    if (!s.warm_stub.empty()) a.insert(a.end(), {"--ro-bind", s.warm_stub, warm_stub_inside});
    // After the binds, which create their mount points in the root tmpfs.
    a.insert(a.end(), {"--remount-ro", "/", "--chdir", s.cwd.empty() ? std::string("/work") : "/work/" + s.cwd.string(), "--"});
    a.insert(a.end(), args.begin(), args.end());
    return a;
}

namespace {

void prepare(const driver_context& ctx, sandbox_setup& s, run_resources& res)
{
    // The syscall table's rows, as a filter bwrap loads just before the command.
    std::string why;
    auto program = sealed_program(s.syscall_rules, why);
    if (!program) {
        const int err = errno;  // out of descriptors or memory: say which
        fail_launch(ctx, "cannot make the seccomp filter: " + why,
                    err ? boost::system::error_code(err, boost::system::system_category()) : errc::driver_unavailable);
    }
    // bwrap runs as s.uid under a root caller and finds a pinned path again by its name.
    if (s.drop_to_uid)
        for (const auto& m : s.mounts)
            if (auto blocked = first_unsearchable(std::filesystem::path(m.host).parent_path(), s.uid, s.gid); !blocked.empty())
                fail_launch(ctx, std::string(m.read_only() ? "readable path " : "writable path ") + m.host +
                                     " is not reachable for uid " + std::to_string(s.uid) + ", which bwrap runs as (" +
                                     blocked.string() + " is not searchable by it)",
                            make_error_code(boost::system::errc::permission_denied));
    s.pass_fds = {program.get()};  // bwrap --seccomp 3
    for (const auto& pin : s.pins) s.pass_fds.push_back(pin.fd);
    res.fds.push_back(std::move(program));
}

launch_plan command_line(const driver_context& ctx, const sandbox_setup& s, const std::vector<std::string>& args)
{
    launch_plan plan;
    plan.argv = bubblewrap_argv(s, ctx.policy, args);
    plan.limits = bubblewrap_confinement(s);
    // bwrap hands its own environment to the command: no value ever sits in its argv, which
    // every local user can read.
    plan.env = env_strings(s.env);
    plan.pass_fds = s.pass_fds;
    // bwrap dies of a SIGTERM or SIGINT and takes its sandbox down with SIGKILL: a timeout's
    // or a cancellation's polite signal goes to the command inside, whose trap then runs.
    plan.polite_signal = [](pid_t bwrap, int sig) { signal_descendants(bwrap, "bwrap", sig); };
    return plan;
}

// bwrap's own failures exit 1 with "bwrap: ..."; one it cannot execute is start_failure's.
void check_result(const driver_context& ctx, const exec_result& r, const run_resources&)
{
    if (r.exit_code == 1 && r.err.rfind("bwrap: ", 0) == 0 && r.err.rfind("bwrap: execvp ", 0) != 0)
        fail_launch(ctx, engine_error_line(r.err));
}

std::string start_failure(int exit_code, const std::string& line, const std::string& command)
{
    const std::string prefix = "bwrap: execvp " + command + ": ";
    if (exit_code != 1 || line.size() <= prefix.size() || line.compare(0, prefix.size(), prefix) != 0) return {};
    return line.substr(prefix.size());
}

capabilities caps(const driver_context&) { return {isolation::namespaces, true, cgroups_usable(), true, true}; }

command_user user(const driver_options&, bool) { return {sandbox_uid(), sandbox_gid(), {}}; }

}  // namespace

constinit const driver_spec bubblewrap_driver{
    .id = driver::bubblewrap, .tool = "bwrap", .binary_variable = "BWRAP_BIN", .isolating = true,
    .runs_unprivileged = true, .dynamic_user = true, .binds_work_dir_over_base = true, .makes_tmpfs = true, .caps = caps,
    .on_create = [](const driver_context&) { sweep_dead_runs_once(); }, .plan = isolated_plan, .user = user,
    .prepare = prepare, .command_line = command_line, .check_result = check_result, .start_failure = start_failure,
    .report_prefixes = {"bwrap: "}};

}  // namespace sandbox::detail
