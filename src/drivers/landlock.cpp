// SPDX-License-Identifier: BSL-1.0
// landlock: the command runs on the host, in a private work dir, confined by the kernel
// without namespaces (but for an unprivileged caller's read-only view, below). A Landlock
// ruleset made here lets it read and execute the system's directories and the readable
// paths, and write only its work dir (with the TMPDIR inside) and the writable paths;
// sandbox-landlock-exec, started with the ruleset and a seccomp
// program as descriptors 3 and 4, joins the cgroups, drops to the command's user, enforces
// both and executes the command. Paths keep their host names; host processes stay visible
// but out of reach of signals and ptrace.
#include "drivers/driver_spec.hpp"

#include "drivers/plans.hpp"
#include "drivers/resources.hpp"
#include "drivers/runner.hpp"
#include "sys/landlock.hpp"
#include "sys/mounts.hpp"
#include "sys/seccomp_filter.hpp"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

namespace sandbox::detail {

namespace {

// /etc without what may be secret: only what every user may read, and never these.
const std::vector<std::string>& readable_etc()
{
    static const auto& entries = *new const std::vector<std::string>([] {
        static const char* const withheld[] = {"shadow", "shadow-", "gshadow", "gshadow-", "sudoers", "sudoers.d",
                                               "ssh", "munge", "krb5.keytab", "security", "ssl"};
        std::vector<std::string> out;
        auto add_readable = [&](const std::string& dir, auto skip) {
            DIR* d = ::opendir(dir.c_str());
            if (!d) return;
            while (const dirent* e = ::readdir(d)) {
                const std::string name = e->d_name;
                struct stat st {};
                if (name == "." || name == ".." || skip(name) || ::fstatat(::dirfd(d), e->d_name, &st, 0) != 0) continue;
                const mode_t all = S_ISDIR(st.st_mode) ? S_IROTH | S_IXOTH : S_IROTH;
                if ((st.st_mode & all) == all) out.push_back(dir + "/" + name);
            }
            ::closedir(d);
        };
        add_readable("/etc", [](const std::string& n) {
            for (const char* w : withheld)
                if (n == w) return true;
            return false;
        });
        add_readable("/etc/ssl", [](const std::string& n) { return n == "private"; });  // certificates, not keys
        return out;
    }());  // never destroyed: library threads use it
    return entries;
}

landlock::ruleset_request rules(const sandbox_setup& s, const std::filesystem::path& tmp)
{
    using namespace landlock;
    ruleset_request req;
    for (const char* d : {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"})
        req.paths.push_back({d, read_only, false});
    // Under a root caller the command is uid 65534 without groups, which cannot read what is
    // not world-readable: /etc whole costs one rule rather than one per entry.
    if (s.drop_to_uid) req.paths.push_back({"/etc", read_only, false});
    else
        for (const auto& e : readable_etc()) req.paths.push_back({e, read_only, false});
    req.paths.push_back({"/proc", read_file | read_dir, false});
    req.paths.push_back({"/sys/devices/system/cpu", read_file | read_dir, false});  // the CPU count
    for (const char* dev : {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"})
        req.paths.push_back({dev, read_file | write_file, false});
    for (std::size_t i = 0; i < s.mounts.size(); ++i)
        req.paths.push_back({s.mounts[i].host, s.mounts[i].read_only() ? read_only : read_write, true,
                             i < s.pins.size() ? s.pins[i].fd : -1});
    req.paths.push_back({s.work_dir.string(), read_write, true});
    if (!s.warm_stub.empty()) req.paths.push_back({s.warm_stub, read_only & file_rights, true});
    req.paths.push_back({tmp.string(), read_write, true});
    return req;
}

// What the command's uid may do to a path, by its mode bits.
bool writable_by(const struct stat& st, uid_t uid, gid_t gid)
{
    if (st.st_uid == uid) return st.st_mode & S_IWUSR;
    if (st.st_gid == gid) return st.st_mode & S_IWGRP;
    return st.st_mode & S_IWOTH;
}

std::string octal_mode(mode_t m)
{
    char b[8];
    std::snprintf(b, sizeof b, "%04o", static_cast<unsigned>(m & 07777));
    return b;
}

void prepare(const driver_context& ctx, sandbox_setup& s, run_resources& res)
{
    const int abi = landlock::abi();
    if (abi <= 0)
        fail_launch(ctx, "Landlock is not enabled in this kernel (it needs Linux 5.13 or later with \"landlock\" among "
                         "its security modules)", errc::driver_unavailable);
    if (abi < 6)
        fail_launch(ctx, "this kernel's Landlock (ABI " + std::to_string(abi) + ") cannot keep signals and abstract unix "
                         "sockets inside the sandbox (ABI 6, Linux 6.12, can)", errc::limit_not_enforced);
    if (ctx.root)
        for (const auto& m : s.mounts) {
            struct stat st {};
            if (!m.read_only() && ::stat(m.host.c_str(), &st) == 0 && !writable_by(st, s.uid, s.gid))
                fail_launch(ctx, "writable path " + m.host + " (uid " + std::to_string(st.st_uid) + ", mode " +
                                     octal_mode(st.st_mode) + ") is not writable by uid " + std::to_string(s.uid) +
                                     ", which the command runs as, and without a mount namespace it cannot be shown "
                                     "as the command's own (each run has a uid of its own): make it writable by "
                                     "others, or use bubblewrap",
                            make_error_code(boost::system::errc::permission_denied));
        }
    // The execution's TMPDIR, inside the work dir: bounded by the same disk limit, removed with it.
    const auto tmp = s.work_dir / ".tmp";
    if (::mkdir(tmp.c_str(), 0700) != 0 && errno != EEXIST)
        fail_launch(ctx, "cannot create " + tmp.string() + ": " + std::error_code(errno, std::system_category()).message());
    if (ctx.root && ::chown(tmp.c_str(), s.uid, s.gid) != 0)
        fail_launch(ctx, "cannot give " + tmp.string() + " to uid " + std::to_string(s.uid));
    s.env.emplace_back("TMPDIR", tmp.string());

    std::string why;
    auto request = rules(s, tmp);
    request.deny_tcp = !ctx.policy.network_enabled();
    request.scope = true;
    unique_fd ruleset = landlock::make_ruleset(request, why);
    if (!ruleset) {
        const int err = errno;
        fail_launch(ctx, why, err ? boost::system::error_code(err, boost::system::system_category()) : errc::driver_unavailable);
    }
    auto program = sealed_program(s.syscall_rules, why);
    if (!program) {
        const int err = errno;  // out of descriptors or memory: say which
        fail_launch(ctx, "cannot make the seccomp filter: " + why,
                    err ? boost::system::error_code(err, boost::system::system_category()) : errc::driver_unavailable);
    }
    s.pass_fds = {ruleset.get(), program.get()};
    res.fds.push_back(std::move(ruleset));
    res.fds.push_back(std::move(program));
}

// An unprivileged caller's command runs as the caller, who owns files everywhere: where the
// kernel allows it a user namespace of its own, it sees every mount read-only but its
// writable paths and work dir, so chmod, chown, utimensat and xattrs fail outside them.
void read_only_view(const driver_context& ctx, const sandbox_setup& s, confinement& c)
{
    static const bool allowed = unprivileged_user_namespaces().empty();
    if (ctx.root || !allowed) return;
    c.read_only_view = true;
    for (const auto& m : s.mounts)
        if (!m.read_only()) c.writable.push_back(bind_onto(s, m.host, m.host));
    c.writable.push_back(mount_step{.source = s.work_dir.string(), .target = s.work_dir.string()});
    // Outer paths first: an inner one is mounted onto the outer one's clone.
    std::stable_sort(c.writable.begin(), c.writable.end(),
                     [](const mount_step& a, const mount_step& b) { return a.target.size() < b.target.size(); });
}

launch_plan command_line(const driver_context& ctx, const sandbox_setup& s, const std::vector<std::string>& args)
{
    launch_plan plan;
    plan.env = env_strings(s.env);
    plan.cwd = s.work_dir / s.cwd;
    plan.pass_fds = s.pass_fds;
    if (!s.cgroup_procs.empty()) {
        // The spawn confines the command itself between fork and exec: no launcher runs.
        plan.argv = args;
        plan.runs_command_itself = true;
        // Looked up as the launcher did, on the command's own PATH, inside the ruleset.
        for (const auto& [name, value] : s.env)
            if (name == "PATH") plan.search_path = value;
        plan.limits = launch_confinement(s);
        // Dies with the runner's process, as bwrap's --die-with-parent: the rest of its tree is
        // in the run's cgroup, which the sweep of dead runs kills and removes.
        plan.limits.parent_death_signal = SIGKILL;
        plan.limits.no_new_privs = true;
        plan.limits.landlock_ruleset = s.pass_fds.at(0);
        plan.limits.seccomp_program = s.pass_fds.at(1);
        read_only_view(ctx, s, plan.limits);
        plan.pass_fds.clear();
        return plan;
    }
    // No cgroup to kill the tree by: the launcher stays as the command's reaper, and what
    // would end it first must ask it instead.
    plan.argv = {s.binary};
    if (s.rlimit_as) plan.argv.insert(plan.argv.end(), {"--rlimit-as", std::to_string(s.rlimit_as)});
    if (s.drop_to_uid) plan.argv.insert(plan.argv.end(), {"--user", std::to_string(s.uid) + ":" + std::to_string(s.gid)});
    plan.argv.insert(plan.argv.end(), {"--parent", std::to_string(::getpid()), "--reap", "--"});
    plan.argv.insert(plan.argv.end(), args.begin(), args.end());
    plan.kill_request_signal = SIGUSR1;
    read_only_view(ctx, s, plan.limits);  // the launcher's too, which is the command's parent
    return plan;
}

// The helper's own failures exit 125 with "sandbox: ..." before the command exists.
void check_result(const driver_context& ctx, const exec_result& r, const run_resources&)
{
    if (r.exit_code == 125 && r.err.rfind("sandbox: ", 0) == 0 && r.err.rfind("sandbox: cannot execute ", 0) != 0)
        fail_launch(ctx, engine_error_line(r.err).substr(9));
}

std::string start_failure(int exit_code, const std::string& line, const std::string& command)
{
    const std::string prefix = "sandbox: cannot execute " + command + ": ";
    if ((exit_code != 126 && exit_code != 127) || line.size() <= prefix.size() || line.compare(0, prefix.size(), prefix) != 0)
        return {};
    return line.substr(prefix.size());
}

capabilities caps(const driver_context& ctx)
{
    const bool usable = landlock::abi() >= 6;
    return {.level = usable ? isolation::confined : isolation::none, .network_isolated = usable,
            .memory_enforced = cgroups_usable(), .filesystem_confined = usable, .disk_enforced = ctx.root};
}

command_user user(const driver_options&, bool) { return {sandbox_uid(), sandbox_gid(), {}}; }

}  // namespace

constinit const driver_spec landlock_driver{
    .id = driver::landlock, .tool = "sandbox-landlock-exec", .binary_variable = "SANDBOX_LANDLOCK_EXEC",
    .installed_binary = SANDBOX_LANDLOCK_EXEC, .isolating = true, .host_paths = true, .runs_unprivileged = true, .dynamic_user = true,
    .host_mount_namespace = true, .caps = caps, .on_create = [](const driver_context&) { sweep_dead_runs_once(); },
    .plan = isolated_plan, .user = user, .prepare = prepare, .command_line = command_line, .check_result = check_result,
    .start_failure = start_failure};

}  // namespace sandbox::detail
