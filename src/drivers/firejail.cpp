// SPDX-License-Identifier: BSL-1.0
// firejail 0.9.72: it has no --chdir and cannot create mount points, so the work dir is the
// jail's home and cwd, and extra paths keep their host paths. The host is visible read-only,
// so the command must not be root: under a root caller firejail starts as an unprivileged
// account (root-only files and sockets stay closed to it), and unix sockets are refused so
// that world-writable host sockets are out of reach too.
#include "drivers/plans.hpp"

#include "drivers/driver_spec.hpp"
#include "drivers/resources.hpp"
#include "drivers/run_record.hpp"
#include "drivers/runner.hpp"
#include "sys/seccomp_filter.hpp"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace sandbox::detail {

std::string firejail_path_problem(const std::string& path)
{
    for (unsigned char c : path) {
        const bool plain = std::isalnum(c) || c == '/' || c == '.' || c == '_' || c == '-' || c == '+' ||
                           c == '@' || c == '=' || c == '%';
        if (!plain) {
            std::string shown = c >= 0x20 && c < 0x7f ? std::string(1, static_cast<char>(c)) : "\\x" + std::to_string(c);
            return "it holds '" + shown + "', which firejail would expand or reject";
        }
    }
    return {};
}

std::string firejail_hidden_place(const std::string& path, const std::string& home)
{
    const auto p = std::filesystem::path(path).lexically_normal().string();
    auto below = [&](const std::string& dir) {
        return !dir.empty() && dir != "/" && (p == dir || p.rfind(dir + "/", 0) == 0);
    };
    for (const char* fresh : {"/var/tmp", "/run/lock", "/dev"})
        if (below(fresh))
            return std::string("firejail mounts an empty ") + fresh + " in every jail, which hides it";
    for (const char* replaced : {"/home", "/root"})
        if (below(replaced))
            return std::string("firejail replaces ") + replaced + " with the work dir in every jail, which hides it";
    if (below(std::filesystem::path(home).lexically_normal().string()))
        return "it is in the home directory of the account firejail runs as (" + home +
               "), which the jail replaces with the work dir";
    return {};
}

firejail_user firejail_account(const std::string& name)
{
    firejail_user u;
    const std::string made_by = " (scripts/setup-engines.sh creates it: useradd --system --create-home --home-dir "
                                "/var/lib/" + name + " --shell /bin/sh " + name + ")";
    passwd pw{};
    passwd* found = nullptr;
    std::vector<char> buf(16384);
    if (name.empty() || ::getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &found) != 0 || !found) {
        u.problem = "under a root caller firejail would run the command as root, and the unprivileged account \"" +
                    name + "\" it runs as instead does not exist" + made_by;
        return u;
    }
    u.uid = pw.pw_uid;
    u.gid = pw.pw_gid;
    struct stat st {};
    const std::string shell = pw.pw_shell ? pw.pw_shell : "";
    if (u.uid == 0 || u.gid == 0)
        u.problem = "account \"" + name + "\" is root; the command must run as an unprivileged account";
    else if (!pw.pw_dir || ::stat(pw.pw_dir, &st) != 0 || !S_ISDIR(st.st_mode))
        u.problem = "account \"" + name + "\" has no home directory (" + std::string(pw.pw_dir ? pw.pw_dir : "") +
                    "), which firejail needs" + made_by;
    else if (shell.empty() || shell.find("nologin") != std::string::npos || shell == "/bin/false" ||
             shell == "/usr/bin/false")
        u.problem = "account \"" + name + "\" has the shell " + shell +
                    ", which refuses to run anything; firejail starts the command through it" + made_by;
    return u;
}


std::filesystem::path base_to_hide(const std::filesystem::path& base, const std::vector<mount>& mounts)
{
    std::error_code ec;
    auto b = std::filesystem::absolute(base, ec).lexically_normal();
    if (!b.has_filename() && b.has_parent_path() && b != "/") b = b.parent_path();  // "/srv/base/"
    if (ec || b == "/" || b == "/tmp" || b.string().rfind("/tmp/", 0) == 0) return {};  // --private-tmp hides it
    const std::string prefix = b.string() + "/";
    for (const auto& m : mounts)
        if (m.host == b.string() || m.host.rfind(prefix, 0) == 0) return {};  // would hide a path asked for
    return b;
}

std::vector<std::string> writable_host_mounts()
{
    std::vector<std::string> out;
    for (const auto& m : host_mounts()) {
        if (m.point == "/" || !m.writable) continue;
        // firejail builds its own /proc, /sys, /dev and /tmp, and owns /run/firejail.
        bool skip = false;
        for (const char* own : {"/proc", "/sys", "/dev", "/tmp", "/run/firejail"}) {
            const std::string o = own;
            if (m.point == o || m.point.compare(0, o.size() + 1, o + "/") == 0) skip = true;
        }
        if (!skip) out.push_back(m.point);
    }
    return out;
}

confinement firejail_confinement(const sandbox_setup& s)
{
    auto c = launch_confinement(s);
    c.rlimit_as = 0;  // firejail's own --rlimit-as: in the jail, not on firejail
    c.setuid_program = true;
    if (!s.drop_to_uid) return c;
    // Always a private mount namespace: firejail checks each remount against the last line of
    // mountinfo, and a mount another program makes on the host meanwhile (a container
    // starting) would propagate in and fail the launch.
    c.private_mounts = true;
    // The disk limit: /tmp becomes a bounded tmpfs there too (instead of --private-tmp, which
    // has no size), keeping the work dir and the policy's paths below /tmp.
    if (s.disk_bytes) {
        mount_step tmp{.what = mount_step::kind::tmp, .size = s.disk_bytes};
        auto below_tmp = [](const std::string& p) { return p.rfind("/tmp/", 0) == 0; };
        if (below_tmp(s.work_dir.string())) tmp.keep.push_back(s.work_dir.string());
        for (const auto& m : s.mounts)
            if (below_tmp(m.host)) tmp.keep.push_back(m.host);
        if (below_tmp(s.seccomp_exec)) tmp.keep.push_back(s.seccomp_exec);
        c.mounts.push_back(std::move(tmp));
    }
    // firejail lets an unprivileged user --read-write only what that user owns: writable
    // paths are bound onto themselves, nosuid and nodev (separate mounts stay writable under
    // --read-only=/), or from their idmapped mount when the account does not own them.
    for (const auto& m : s.mounts) {
        if (m.read_only()) continue;
        std::string from = m.host;
        for (const auto& [staged, host] : s.idmapped_binds)
            if (host == m.host) from = staged;
        c.mounts.push_back(bind_onto(s, from, m.host));
    }
    return c;
}

std::vector<std::string> firejail_argv(const sandbox_setup& s, const execution_policy& policy,
                                       const std::vector<std::string>& args)
{
    const bool bounded_tmp = s.drop_to_uid && s.disk_bytes;
    std::vector<std::string> a{s.binary,
                               "--quiet",      // else it prints its own messages on the command's stdout
                               "--noprofile"};  // predictable: no default profile for root
    if (!policy.network_enabled()) a.push_back("--net=none");
    a.insert(a.end(), {"--private=" + s.work_dir.string(), "--private-cwd", "--private-dev"});
    if (!bounded_tmp) a.push_back("--private-tmp");
    a.insert(a.end(), {"--caps.drop=all", "--nonewprivs", "--seccomp",
                       "--restrict-namespaces",              // no unshare -U inside
                       "--protocol=inet,inet6,netlink",      // no AF_UNIX: host sockets stay closed
                       "--read-only=/"});
    // Other executions' work dirs: their mode keeps them apart only from other users.
    if (!s.hidden_base_dir.empty()) a.push_back("--blacklist=" + s.hidden_base_dir.string());
    for (const auto& m : s.host_writable_mounts) a.push_back("--read-only=" + m);
    for (const auto& m : s.mounts) {
        if (m.read_only()) a.push_back("--read-only=" + m.host);
        else a.push_back("--read-write=" + m.host);
        if (!bounded_tmp && m.host.rfind("/tmp/", 0) == 0) a.push_back("--whitelist=" + m.host);  // --private-tmp hides it
    }
    if (!s.seccomp_exec.empty() && !bounded_tmp && s.seccomp_exec.rfind("/tmp/", 0) == 0)
        a.push_back("--whitelist=" + s.seccomp_exec);
    if (s.rlimit_as) a.push_back("--rlimit-as=" + std::to_string(s.rlimit_as));
    // The command's own exit code, and orphans killed when it ends rather than waited for.
    a.insert(a.end(), {"--deterministic-exit-code", "--deterministic-shutdown"});
    // The environment inside is firejail's own, which the plan sets to s.env.
    a.push_back("--");
    // The syscall table, loaded in the jail: firejail is set-uid, so nothing can be loaded before it.
    if (!s.seccomp_exec.empty()) a.insert(a.end(), {s.seccomp_exec, "--refuse", rules_to_names(s.syscall_rules), "--"});
    // firejail has no --chdir: coreutils' env moves from the jail's home, the work dir.
    if (!s.cwd.empty()) a.insert(a.end(), {"env", "-C", s.cwd.string(), "--"});
    a.insert(a.end(), args.begin(), args.end());
    return a;
}

namespace {

// The helper that loads the syscall table's filter in the jail: $SANDBOX_SECCOMP_EXEC, else
// where the library installed it (never a build tree, which others may write to). Empty if missing.
std::string seccomp_exec_path()
{
    const char* env = std::getenv("SANDBOX_SECCOMP_EXEC");
    std::string p = env && *env ? env : SANDBOX_SECCOMP_EXEC;
    return p.front() == '/' && ::access(p.c_str(), X_OK) == 0 ? p : std::string();
}

// The home directory of the account the command runs as: firejail's --private replaces it.
std::string account_home(const driver_context& ctx)
{
    passwd pw{};
    passwd* found = nullptr;
    std::vector<char> buf(16384);
    const int rc = ctx.root ? ::getpwnam_r(ctx.options.firejail_user.c_str(), &pw, buf.data(), buf.size(), &found)
                            : ::getpwuid_r(::geteuid(), &pw, buf.data(), buf.size(), &found);
    return rc == 0 && found && pw.pw_dir ? std::string(pw.pw_dir) : std::string();
}

void prepare(const driver_context& ctx, sandbox_setup& s, run_resources&)
{
    struct stat st {};
    if (ctx.root && !ctx.options.work_dir.empty() && ::stat(s.work_dir.c_str(), &st) == 0 && st.st_uid != s.uid)
        fail_launch(ctx, "work dir " + s.work_dir.string() + " belongs to uid " + std::to_string(st.st_uid) +
                             "; firejail runs as uid " + std::to_string(s.uid) + " (" + ctx.options.firejail_user +
                             ") and only takes a directory that uid owns",
                    errc::bad_working_directory);
    s.seccomp_exec = seccomp_exec_path();
    if (s.seccomp_exec.empty())
        fail_launch(ctx, "sandbox-seccomp-exec, which loads the library's seccomp filter in the jail, was not found "
                         "(installed with the library at " + std::string(SANDBOX_SECCOMP_EXEC) +
                         ", or named by SANDBOX_SECCOMP_EXEC)",
                    errc::driver_unavailable);
    if (auto why = firejail_path_problem(s.seccomp_exec); !why.empty())
        fail_launch(ctx, "sandbox-seccomp-exec at " + s.seccomp_exec + " cannot be given to firejail: " + why,
                    errc::driver_unavailable);
    // Fail closed: a path firejail would glob could open more of the host than asked.
    auto check = [&](const std::string& path, const char* what) {
        if (auto why = firejail_path_problem(path); !why.empty())
            fail_launch(ctx, std::string(what) + " " + path + " cannot be given to firejail: " + why,
                        make_error_code(boost::system::errc::invalid_argument));
    };
    check(s.work_dir.string(), "work dir");
    for (const auto& m : s.mounts) check(m.host, m.read_only() ? "readable path" : "writable path");
    // firejail opens for writing, to an unprivileged caller, only what that caller owns: any
    // other writable path would be silently read-only.
    if (!ctx.root)
        for (const auto& m : s.mounts) {
            struct stat st {};
            if (!m.read_only() && ::stat(m.host.c_str(), &st) == 0 && st.st_uid != ::geteuid())
                fail_launch(ctx, "writable path " + m.host + " belongs to uid " + std::to_string(st.st_uid) +
                                     ", and firejail makes writable for an unprivileged caller (uid " +
                                     std::to_string(::geteuid()) + ") only what that caller owns",
                            make_error_code(boost::system::errc::permission_denied));
        }
    // Never a silent miss: a path the jail would hide is refused (bubblewrap, landlock and the
    // containers show it).
    const std::string home = account_home(ctx);
    for (const auto& m : s.mounts)
        if (auto why = firejail_hidden_place(m.host, home); !why.empty())
            fail_launch(ctx, std::string(m.read_only() ? "readable path " : "writable path ") + m.host +
                                 " cannot be shown to the command: " + why +
                                 "; use a path elsewhere (under /tmp or /srv, say) or another driver",
                        make_error_code(boost::system::errc::invalid_argument));
    s.host_writable_mounts = writable_host_mounts();
    for (const auto& m : s.host_writable_mounts) check(m, "the writable host mount");
    const auto& base = ctx.options.work_dir.empty() ? ctx.policy.base_dir() : ctx.options.work_dir.parent_path();
    s.hidden_base_dir = base_to_hide(base, s.mounts);
    if (!s.hidden_base_dir.empty()) check(s.hidden_base_dir.string(), "base directory");
}

launch_plan command_line(const driver_context& ctx, const sandbox_setup& s, const std::vector<std::string>& args)
{
    launch_plan plan;
    plan.argv = firejail_argv(s, ctx.policy, args);
    plan.limits = firejail_confinement(s);
    // Through the spawn helper even with nothing to confine: firejail, set-id, has no
    // parent-death signal, and the helper ends it if this process is SIGKILLed.
    plan.through_helper = true;
    plan.env = env_strings(s.env);  // firejail hands its environment to the command
    return plan;
}

void check_result(const driver_context& ctx, const exec_result& r, const run_resources&)
{
    // The mount prelude's and sandbox-seccomp-exec's own failures, before the command existed.
    if (r.exit_code == 125 && r.err.rfind("sandbox: ", 0) == 0 && r.err.rfind("sandbox: cannot execute ", 0) != 0)
        fail_launch(ctx, engine_error_line(r.err));
}

// The command runs through a shell, through env -C with a cwd, and through
// sandbox-seccomp-exec with the set-id filter: each reports it in its own words.
std::string start_failure(int exit_code, const std::string& line, const std::string& command)
{
    if (exit_code != 126 && exit_code != 127) return {};
    for (const auto& prefix : {"/bin/sh: 1: " + command + ": ", "env: '" + command + "': ",
                               "sandbox: cannot execute " + command + ": "})
        if (line.size() > prefix.size() && line.compare(0, prefix.size(), prefix) == 0) return line.substr(prefix.size());
    return {};
}

capabilities caps(const driver_context& ctx)
{
    return {isolation::namespaces, true, cgroups_usable(), false, ctx.root};
}

command_user user(const driver_options& options, bool root)
{
    if (!root) return {sandbox_uid(), sandbox_gid(), {}};
    const auto account = firejail_account(options.firejail_user);
    return {account.uid, account.gid, account.problem};
}

}  // namespace

constinit const driver_spec firejail_driver{
    .id = driver::firejail, .tool = "firejail", .binary_variable = "FIREJAIL_BIN", .isolating = true,
    .host_paths = true, .runs_unprivileged = true, .slow_shutdown = true, .caps = caps,
    .on_create = [](const driver_context&) { sweep_dead_runs_once(); }, .plan = isolated_plan, .user = user,
    .prepare = prepare, .command_line = command_line, .check_result = check_result, .start_failure = start_failure,
    .report_prefixes = {"Error: ", "/bin/sh: 1: ", "env: '"}};

}  // namespace sandbox::detail
