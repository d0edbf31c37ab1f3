// SPDX-License-Identifier: BSL-1.0
// What the isolating drivers share: a private work dir, the mounts, the environment, the
// limits and cgroups prepared for one run, then the driver's own command line; everything
// the run owns is released by the plan's cleanup, whatever happens.
#include "drivers/driver_spec.hpp"

#include "drivers/plans.hpp"
#include "drivers/resources.hpp"
#include "drivers/support.hpp"
#include "run/helper_spawn.hpp"
#include "sys/idmap.hpp"
#include "sys/mounts.hpp"
#include "sys/syscall_rules.hpp"
#include <sandbox/errors.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <memory>

namespace sandbox::detail {

void run_resources::release() noexcept
{
    try {
        if (cgroup) usage = cgroup->usage();
        if (container_cgroup) usage = container_cgroup->settle_and_read();
    } catch (...) {  // not measured: the removal matters more
    }
    fds.clear();
    cgroup.reset();  // kills what is left inside, then removes it
    container_cgroup.reset();
    bool left_behind = false;
    if (!work_dir.empty()) {
        if (work_dir_mounted) detach_mount(work_dir);
        // Fails when descriptors ran out: the record stays, for a sweep once they are back.
        left_behind = !remove_tree(work_dir) && ::access(work_dir.c_str(), F_OK) == 0;
    }
    work_dir.clear();
    work_dir_mounted = false;
    if (!cid_file.empty()) {
        container_created = ::access(cid_file.c_str(), F_OK) == 0;
        ::unlink(cid_file.c_str());
        cid_file.clear();
    }
    uid.reset();  // nothing of the run is left that it could reach
    if (left_behind) return record.abandon();
    const bool had_record = !record.dir().empty();  // not a second call (the destructor's)
    record.release();  // last: until now a sweep would have had something to clean
    if (had_record) sweep_dead_runs_once();  // what earlier runs left, now that this one could clean up
}

std::uint32_t command_rules(const driver_context& ctx)
{
    return applicable_rules({.host_filesystem = ctx.spec.host_paths,
                             .host_network = ctx.spec.host_mount_namespace,
                             .network_enabled = ctx.policy.network_enabled(),
                             .caller_owned = ctx.spec.host_mount_namespace && !ctx.root});
}

confinement launch_confinement(const sandbox_setup& s)
{
    confinement c;
    c.cgroup_procs = s.cgroup_procs;
    c.rlimit_as = s.rlimit_as;
    if (s.drop_to_uid) c.user = std::pair{s.uid, s.gid};
    return c;
}

mount_step bind_onto(const sandbox_setup& s, std::string source, const std::string& target)
{
    mount_step m{.source = std::move(source), .target = target};
    for (std::size_t i = 0; i < s.mounts.size() && i < s.pins.size(); ++i)
        if (s.mounts[i].host == target) {
            m.dev = s.pins[i].dev;
            m.ino = s.pins[i].ino;
        }
    return m;
}

bool cgroups_usable()
{
    static const bool usable = [] {
        std::string why;
        auto probe = cgroup_limits::create(random_sandbox_name(), 64ull << 20, 16, why);
        return probe.has_value();
    }();
    return usable;
}

void fail_launch(const driver_context& ctx, const std::string& why, boost::system::error_code code)
{
    throw launch_error(code, "Failed to start " + std::string(ctx.spec.tool) + ": " + why);
}

// docker ends with a "Run 'docker run --help'" hint and may start with "Unable to find
// image ... locally".
std::string engine_error_line(const std::string& err)
{
    std::vector<std::string> lines;
    std::size_t start = 0;
    while (start < err.size()) {
        auto end = err.find('\n', start);
        if (end == std::string::npos) end = err.size();
        if (end > start) lines.push_back(err.substr(start, end - start));
        start = end + 1;
    }
    std::string reason = lines.empty() ? std::string() : lines.back();
    [&] {
        for (const char* marker : {"Cannot connect", "Error response from daemon", "docker: ", "Error: "})
            for (const auto& line : lines)
                if (line.find(marker) != std::string::npos) {
                    reason = line;
                    return;
                }
    }();
    // "Unable to find image 'x' locally" names the image; the daemon's reason does not.
    for (const auto& line : lines)
        if (line.find("Unable to find image") != std::string::npos && line != reason) return line + ": " + reason;
    return reason;
}

namespace {

// Every path the run mounts, held open as it is now: its real path was checked to have no
// symbolic link, so one met on the way now is a component swapped since (a directory
// replaced by a link elsewhere), and the launch is refused. Whatever is mounted or ruled for
// the path from here on is made from the descriptor, or checked against it.
void pin_mounts(const driver_context& ctx, sandbox_setup& s, run_resources& res)
{
    s.pins.clear();
    for (const auto& m : s.mounts) {
        std::string why;
        auto pinned = open_pinned(m.host, why);
        if (!pinned.fd)
            fail_launch(ctx, std::string(m.read_only() ? "readable path " : "writable path ") + m.host + " " + why,
                        make_error_code(boost::system::errc::invalid_argument));
        s.pins.push_back({pinned.fd.get(), pinned.dev, pinned.ino});
        res.fds.push_back(std::move(pinned.fd));
    }
}

// Under a root caller the command runs as s.uid, so a writable path it does not own is
// shown to it through an idmapped mount: the owner appears as s.uid, and what the command
// creates there stays the owner's on the host (the path's owner and mode never change).
// The mount is attached below the run's record (0700); the driver binds it from there and,
// as the owner may be root, keeps the command from making set-id files (its prepare step).
// The engines get every other path from below the record too, as a copy of its mount made
// from its pin: an engine resolves a path it is given by itself, later, and would follow a
// link swapped in meanwhile.
void stage_mounts(const driver_context& ctx, sandbox_setup& s, run_resources& res)
{
    for (std::size_t i = 0; i < s.mounts.size(); ++i) {
        auto& m = s.mounts[i];
        const int pin = s.pins.at(i).fd;
        struct stat st {};
        if (::fstat(pin, &st) != 0)
            fail_launch(ctx, "cannot stat " + m.host + ": " + std::error_code(errno, std::system_category()).message());
        const bool idmap = !m.read_only() && st.st_uid != s.uid;
        if (!idmap && !ctx.spec.container) continue;
        const auto staged = res.record.dir() / ("rw" + std::to_string(res.idmapped++));
        if (!S_ISDIR(st.st_mode)) {
            if (idmap)
                fail_launch(ctx, "writable path " + m.host + " (owned by uid " + std::to_string(st.st_uid) +
                                     ") is not a directory: as root, only a directory can be made writable for uid " +
                                     std::to_string(s.uid) + ", which the command runs as",
                            make_error_code(boost::system::errc::invalid_argument));
            if (const int f = ::open(staged.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600); f >= 0) ::close(f);
        } else {
            (void)::mkdir(staged.c_str(), 0700);
        }
        if (::access(staged.c_str(), F_OK) != 0)
            fail_launch(ctx, "cannot create " + staged.string() + ": " + std::error_code(errno, std::system_category()).message());
        if (idmap) {
            if (auto why = attach_idmapped(pin, m.host, staged, {st.st_uid, st.st_gid}, {s.uid, s.gid}); !why.empty())
                fail_launch(ctx, "writable path " + m.host + " (owned by uid " + std::to_string(st.st_uid) +
                                     ") cannot be made writable for uid " + std::to_string(s.uid) + ": " + why);
        } else if (auto why = attach_clone(pin, staged, m.read_only()); !why.empty()) {
            fail_launch(ctx, (m.read_only() ? "readable path " : "writable path ") + m.host + " cannot be staged: " + why);
        }
        if (ctx.spec.container) m.host = staged.string();
        else s.idmapped_binds.emplace_back(staged.string(), m.host);
    }
}

// The disk limit: /tmp is a tmpfs of that size on every driver (see the plans), and so
// is /work: mounted over the work dir by a root caller (so sessions keep theirs), else
// made by the tool itself.
void bound_disk(const driver_context& ctx, sandbox_setup& s, run_resources& res, std::uint64_t bytes)
{
    s.disk_bytes = bytes;
    auto refuse = [&](const std::string& why) {
        fail_launch(ctx, "disk_limit " + *ctx.policy.disk_limit() + " cannot be enforced: " + why, errc::limit_not_enforced);
    };
    if (!ctx.options.work_dir.empty()) {
        // A session's work dir is bounded by the session; one the caller made is not ours to cover.
        if (!is_mount_root(s.work_dir) && !is_mount_root(s.work_dir.parent_path()))
            refuse("the work dir " + s.work_dir.string() + " was given by the caller and is not a bounded mount");
        return;
    }
    if (ctx.root) {
        if (auto why = mount_bounded_tmpfs(s.work_dir, bytes, s.uid, s.gid); !why.empty()) refuse(why);
        res.work_dir_mounted = true;
    } else if (!ctx.spec.makes_tmpfs) {
        refuse(std::string(ctx.spec.tool) + " cannot mount a bounded /work or /tmp for an unprivileged caller");
    } else {
        s.work_tmpfs = true;
    }
}

// The tool starts unprivileged under a root caller and must reach the work dir by its path.
void check_reachable(const driver_context& ctx, sandbox_setup& s, const std::filesystem::path& base)
{
    const auto abs_base = std::filesystem::absolute(base).lexically_normal();
    // A private base dir (0700) is no obstacle to a tool that binds the work dir over it first.
    if (ctx.spec.binds_work_dir_over_base && ctx.options.work_dir.empty() && abs_base.has_parent_path() &&
        abs_base != abs_base.root_path() && !first_unsearchable(base, s.uid, s.gid).empty() &&
        first_unsearchable(abs_base.parent_path(), s.uid, s.gid).empty())
        s.work_alias = abs_base;
    else if (auto blocked = first_unsearchable(base, s.uid, s.gid); !blocked.empty())
        fail_launch(ctx, "base directory " + base.string() + " is not reachable for uid " + std::to_string(s.uid) +
                             ", which " + std::string(ctx.spec.tool) + " runs as (" + blocked.string() +
                             " is not searchable by it; use a base dir such as /tmp, or chmod o+x " + blocked.string() + ")",
                    errc::bad_working_directory);
    s.drop_to_uid = true;
}

// A path the policy names is seen at its place or the launch is refused, naming it: a mount
// skipped in silence leaves the command an empty place, or another path's data at /mnt/ro0.
void check_policy_paths(const driver_context& ctx)
{
    auto check = [&](const std::vector<std::filesystem::path>& paths, const char* what) {
        for (const auto& p : paths)
            if (auto why = mount_path_problem(p); !why.empty())
                fail_launch(ctx, std::string(what) + " path " + p.string() + " " + why,
                            make_error_code(boost::system::errc::invalid_argument));
    };
    check(ctx.policy.writable_paths(), "writable");
    check(ctx.policy.readable_paths(), "readable");
}

sandbox_setup prepare(const driver_context& ctx, run_resources& res, const exec_options& o)
{
    const auto& spec = ctx.spec;
    const auto& policy = ctx.policy;
    const auto& options = ctx.options;
    check_policy_paths(ctx);
    sandbox_setup s;
    s.binary = resolve_binary(options.binary, spec.binary_variable, spec.tool, spec.tool, spec.installed_binary);
    s.name = random_sandbox_name();
    const auto user = spec.user(options, ctx.root);
    if (!user.problem.empty()) fail_launch(ctx, user.problem);
    s.uid = user.uid;
    s.gid = user.gid;
    if (ctx.fixed_user) {
        std::tie(s.uid, s.gid) = *ctx.fixed_user;
    } else if (ctx.root && spec.dynamic_user) {
        std::string why;
        int err = 0;
        res.uid = run_uid::acquire(why, err);
        if (!res.uid)
            fail_launch(ctx, "no uid of its own for the command: " + why,
                        err ? boost::system::error_code(err, boost::system::system_category()) : errc::driver_unavailable);
        s.uid = res.uid->uid();
        s.gid = res.uid->gid();
    }
    const auto& base = options.work_dir.empty() ? policy.base_dir() : options.work_dir.parent_path();
    if (ctx.root && spec.runs_unprivileged) check_reachable(ctx, s, base);
    sweep_dead_runs_once();  // only when due: a run of ours left something behind
    if (options.work_dir.empty()) {
        // The record first, naming the work dir still to be made: a process killed at any
        // moment from here on leaves something a sweep finds.
        res.record = run_record::create(s.name, std::filesystem::absolute(policy.base_dir() / s.name), spec.tool);
        // Under a root caller the command runs as s.uid, so the work dir must be theirs.
        s.work_dir = create_work_dir(policy.base_dir(), s.name, ctx.root ? s.uid : static_cast<uid_t>(-1), s.gid, spec.tool);
        res.work_dir = s.work_dir;
    } else {
        res.record = run_record::create(s.name, {}, spec.tool);
        s.work_dir = options.work_dir;
    }
    if (const auto disk = policy.disk_limit_bytes()) bound_disk(ctx, s, res, disk);
    s.mounts = mounts_for(policy, spec.id);
    if (s.mounts.size() != policy.writable_paths().size() + policy.readable_paths().size()) {
        // mounts_for skips a path with a problem, which the check above found none of: one
        // changed since (a component swapped for a link). Never a run without it.
        check_policy_paths(ctx);
        fail_launch(ctx, "a readable or writable path changed while the launch was checking it",
                    make_error_code(boost::system::errc::invalid_argument));
    }
    for (auto m : options.extra_mounts) {
        if (m.host.find(':') != std::string::npos || m.container.find(':') != std::string::npos)
            fail_launch(ctx, "mount " + m.host + " -> " + m.container + " holds ':'",
                        make_error_code(boost::system::errc::invalid_argument));
        if (spec.host_paths) m.container = m.host;
        s.mounts.push_back(std::move(m));
    }
    if (spec.container) {
        // -v ...:ro is read-only at the top only; each submount gets its own.
        s.mounts = with_read_only_submounts(std::move(s.mounts), host_mounts());
        for (const auto& m : s.mounts)
            if (m.host.find(':') != std::string::npos || m.container.find(':') != std::string::npos)
                fail_launch(ctx, "the mount " + m.host + " below a read-only path holds ':', which -v cannot bind read-only",
                            make_error_code(boost::system::errc::invalid_argument));
    }
    pin_mounts(ctx, s, res);
    if (ctx.root && !spec.host_mount_namespace) stage_mounts(ctx, s, res);
    s.env = with_extra_env(sandbox_environment(policy), o.env, policy);
    s.syscall_rules = command_rules(ctx);
    if (ctx.warm) s.warm_stub = spawn_helper_path();
    if (!spec.container) {
        std::string why;
        if (auto cg = cgroup_limits::create(s.name, policy.memory_limit_bytes(), options.pids_limit, why)) {
            for (const auto& d : cg->dirs()) s.cgroup_procs.push_back((d / "cgroup.procs").string());
            res.cgroup.emplace(std::move(*cg));
        } else {
            s.rlimit_as = policy.memory_limit_bytes();  // per process only: see caps()
        }
    }
    spec.prepare(ctx, s, res);
    return s;
}

}  // namespace

launch_plan isolated_plan(const driver_context& ctx, std::vector<std::string> args, const exec_options& o)
{
    auto resources = std::make_shared<run_resources>();
    if (ctx.warm) {
        // Known before the preparation, which gives the stub to the sandbox (a bind, a rule).
        if (spawn_helper_path().empty())
            fail_launch(ctx, "sandboxes started ahead wait for their command in sandbox-spawn, which was not found "
                             "(installed with the library at " + std::string(SANDBOX_SPAWN_HELPER_INSTALLED) +
                             ", or named by SANDBOX_SPAWN_HELPER)",
                        errc::driver_unavailable);
    }
    sandbox_setup s = prepare(ctx, *resources, o);
    if (ctx.warm) {
        // The command comes later, through the stub's stdin.
        args = {ctx.spec.host_paths ? s.warm_stub : std::string(warm_stub_inside), "--await"};
        if (ctx.spec.slow_shutdown) args.push_back("--report");
        ctx.warm->work_dir = s.work_dir;
        ctx.warm->inside_work = ctx.spec.container || !ctx.spec.host_paths ? std::string("/work")
                                : ctx.spec.host_mount_namespace       ? s.work_dir.string()
                                                                      : std::string();
        ctx.warm->env = s.env;
        ctx.warm->report = ctx.spec.slow_shutdown;
    }
    if (!o.cwd.empty()) s.cwd = fenced_cwd(s.work_dir, o.cwd, ctx.spec.tool);
    if (const auto wall = wall_timeout(ctx.policy, o); ctx.spec.container && wall && !ctx.warm) {
        // Past this, with a margin for the kill and the removal, the container is an orphan.
        const auto overdue = std::chrono::system_clock::now() + *wall + ctx.options.kill_grace + std::chrono::minutes(1);
        s.deadline = std::chrono::duration_cast<std::chrono::seconds>(overdue.time_since_epoch()).count();
    }
    launch_plan plan = ctx.spec.command_line(ctx, s, args);
    if (plan.cwd.empty()) plan.cwd = s.work_dir;  // the tool moves to the cwd inside
    plan.failure_prefix = "Failed to start " + std::string(ctx.spec.tool);
    if (ctx.warm) plan.runs_command_itself = false;  // the stub's failing is the sandbox's
    plan.throw_on_start_failure = !plan.runs_command_itself;
    plan.cleanup = [resources] { resources->release(); };
    plan.measure = [resources, limit = ctx.policy.memory_limit_bytes()](exec_result& r) noexcept {
        // Not the launcher's wait4: the cgroup's, or nothing.
        if (!resources->usage) {
            r.usage = resource_usage{.available = false};
            return;
        }
        const auto& u = *resources->usage;
        r.usage = resource_usage{u.user_cpu, u.system_cpu, u.peak_bytes, true};
        const bool killed = !r.timed_out && (r.term_signal == SIGKILL || r.exit_code == 128 + SIGKILL);
        r.oom_killed = killed && u.oom_seen(limit);
        // A tool passes its command's death on as 128 + the signal (bwrap, the engines): the
        // kernel's OOM kill is a SIGKILL whatever the tool says.
        if (r.oom_killed) r.term_signal = SIGKILL;
    };
    plan.check = [ctx, resources, command = args.empty() ? std::string() : args.front()](exec_result& r) {
        if (!as_start_failure(r, ctx.spec.id, ctx.spec.tool, command)) ctx.spec.check_result(ctx, r, *resources);
    };
    return plan;
}

}  // namespace sandbox::detail
