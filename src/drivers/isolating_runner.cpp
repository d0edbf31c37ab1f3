// SPDX-License-Identifier: BSL-1.0
// The four isolating drivers share one runner: prepare a private work dir, the mounts, the
// environment and the limits; let the driver's plan turn them into a command line; run it
// through the process runner; clean up whatever happened.
#include "drivers/runners.hpp"

#include "sys/cgroup.hpp"
#include "drivers/orphans.hpp"
#include "drivers/plans.hpp"
#include "drivers/run_record.hpp"
#include "drivers/seccomp_profile.hpp"
#include "sys/idmap.hpp"
#include "sys/mounts.hpp"
#include "sys/setid_filter.hpp"
#include "run/process_runner.hpp"
#include <sandbox/environment.hpp>
#include <sandbox/errors.hpp>


#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <mutex>

namespace sandbox::detail {

namespace {

// The helper that loads the set-id filter in firejail's jail: $SANDBOX_SECCOMP_EXEC, else where
// the library installed it (never a build tree, which others may write to). Empty if missing.
std::string seccomp_exec_path()
{
    const char* env = std::getenv("SANDBOX_SECCOMP_EXEC");
    std::string p = env && *env ? env : SANDBOX_SECCOMP_EXEC;
    return p.front() == '/' && ::access(p.c_str(), X_OK) == 0 ? p : std::string();
}

// What one run owns on the host; released exactly once, after the run or on failure.
struct run_resources {
    std::filesystem::path work_dir;  // empty when the caller provided it
    bool work_dir_mounted = false;   // the disk limit's tmpfs is over it
    std::optional<cgroup_limits> cgroup;
    std::optional<engine_cgroup> container_cgroup;  // docker and podman: --cgroup-parent
    std::optional<cgroup_usage> usage;  // the command's tree, read before its cgroup goes
    std::filesystem::path cid_file;  // docker and podman write the container id here
    bool container_created = false;
    int idmapped = 0;  // writable paths shown through idmapped mounts below the record
    run_record record;  // for a later sweep, should this process die before release()

    void release() noexcept
    {
        try {
            if (cgroup) usage = cgroup->usage();
            if (container_cgroup) usage = container_cgroup->settle_and_read();
        } catch (...) {  // not measured: the removal matters more
        }
        cgroup.reset();  // kills what is left inside, then removes it
        container_cgroup.reset();
        if (!work_dir.empty()) {
            if (work_dir_mounted) detach_mount(work_dir);
            remove_tree(work_dir);
        }
        work_dir.clear();
        work_dir_mounted = false;
        if (!cid_file.empty()) {
            container_created = ::access(cid_file.c_str(), F_OK) == 0;
            ::unlink(cid_file.c_str());
            cid_file.clear();
        }
        record.release();  // last: until now a sweep would have had something to clean
    }
    ~run_resources() { release(); }
};

// Whether cgroups can be made here, tried once.
bool cgroups_usable()
{
    static const bool usable = [] {
        std::string why;
        auto probe = cgroup_limits::create(random_sandbox_name(), 64ull << 20, 16, why);
        return probe.has_value();
    }();
    return usable;
}

// The line of an engine client's stderr that says what went wrong: docker ends with a
// "Run 'docker run --help'" hint and may start with "Unable to find image ... locally".
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

class isolating_runner final : public command_runner {
public:
    isolating_runner(execution_policy policy, driver_options options, driver d)
        : policy_(std::move(policy)), options_(std::move(options)), driver_(d)
    {
        sweep_dead_runs_once();
        if (container()) {
            try {
                sweep_orphans_once(resolve_binary(options_.binary, binary_variable(), tool(), tool()),
                                   driver_ == driver::podman, env_strings(current_environment()));
            } catch (...) {  // no engine binary: the launch will say so
            }
        }
    }

    const execution_policy& policy() const override { return policy_; }

    capabilities caps() const override
    {
        switch (driver_) {
        case driver::docker:
        case driver::podman: return {isolation::container, true, true, true, true};
        case driver::bubblewrap: return {isolation::namespaces, true, cgroups_usable(), true, true};
        case driver::firejail: return {isolation::namespaces, true, cgroups_usable(), false, ::geteuid() == 0};
        case driver::host: break;
        }
        return {};
    }

    void async_start(asio::any_io_executor ex, std::vector<std::string> argv, exec_options o,
                     execute_handler h) override
    {
        launch_plan plan;
        try {
            plan = plan_for(argv, o);
        } catch (...) {
            return complete_later(ex, std::move(h), std::current_exception());
        }
        plan.stdin_fd = o.stdin_fd;
        plan.on_launch = std::move(o.on_launch);
        start_process(std::move(ex), std::move(plan), limits_for(policy_, options_, o), std::move(o.stdin_data),
                      std::move(o.on_output), std::move(h));
    }

    process start(asio::any_io_executor ex, std::vector<std::string> argv, const exec_options& o) override
    {
        return start_long_lived(std::move(ex), plan_for(argv, o), limits_for(policy_, options_, o));
    }

    launch_preview preview(std::vector<std::string> argv, const exec_options& o) const override
    {
        auto plan = plan_for(argv, o);
        plan.cleanup();  // nothing ran: the work dir, cgroups and record go at once
        return {std::move(plan.argv), std::move(plan.env), std::move(plan.cwd)};
    }
    using command_runner::preview;

private:
    // The work dir and everything else one run owns, and the command line: released by the
    // plan's cleanup, whatever happens.
    launch_plan plan_for(const std::vector<std::string>& argv, const exec_options& o) const
    {
        auto resources = std::make_shared<run_resources>();
        sandbox_setup s = prepare(*resources);
        s.env = with_extra_env(std::move(s.env), o.env);
        if (!o.cwd.empty()) s.cwd = fenced_cwd(s.work_dir, o.cwd, tool());
        if (const auto wall = o.timeout.value_or(policy_.timeout()); container() && wall != no_timeout) {
            // Past this, with a margin for the kill and the removal, the container is an orphan.
            const auto overdue = std::chrono::system_clock::now() + wall + options_.kill_grace + std::chrono::minutes(1);
            s.deadline = std::chrono::duration_cast<std::chrono::seconds>(overdue.time_since_epoch()).count();
        }
        launch_plan plan = make_plan(s, argv);
        plan.cleanup = [resources] { resources->release(); };
        plan.measure = [resources, limit = policy_.memory_limit_bytes()](exec_result& r) noexcept {
            // Not the launcher's wait4: the cgroup's, or nothing.
            if (!resources->usage) {
                r.usage = resource_usage{.available = false};
                return;
            }
            const auto& u = *resources->usage;
            r.usage = resource_usage{u.user_cpu, u.system_cpu, u.peak_bytes, true};
            const bool killed = !r.timed_out && (r.term_signal == SIGKILL || r.exit_code == 128 + SIGKILL);
            r.oom_killed = killed && u.oom_seen(limit);
        };
        plan.check = [this, resources, command = argv.empty() ? std::string() : argv.front()](exec_result& r) {
            if (!as_start_failure(r, driver_, tool(), command)) check_result(r, *resources);
        };
        return plan;
    }

    bool container() const { return driver_ == driver::docker || driver_ == driver::podman; }
    std::string_view tool() const
    {
        switch (driver_) {
        case driver::docker: return "docker";
        case driver::podman: return "podman";
        case driver::firejail: return "firejail";
        default: return "bwrap";
        }
    }
    const char* binary_variable() const
    {
        switch (driver_) {
        case driver::docker: return "DOCKER_BIN";
        case driver::podman: return "PODMAN_BIN";
        case driver::firejail: return "FIREJAIL_BIN";
        default: return "BWRAP_BIN";
        }
    }
    [[noreturn]] void fail(const std::string& why, boost::system::error_code code = errc::engine_failed) const
    {
        throw launch_error(code, "Failed to start " + std::string(tool()) + ": " + why);
    }

    sandbox_setup prepare(run_resources& res) const
    {
        sandbox_setup s;
        s.binary = resolve_binary(options_.binary, binary_variable(), tool(), tool());
        s.name = random_sandbox_name();
        s.uid = sandbox_uid();
        s.gid = sandbox_gid();
        const bool root = ::geteuid() == 0;
        const bool drop = root && (driver_ == driver::bubblewrap || driver_ == driver::firejail);
        const auto& base = options_.work_dir.empty() ? policy_.base_dir() : options_.work_dir.parent_path();
        if (drop) {
            if (driver_ == driver::firejail) {
                const auto acct = firejail_account(options_.firejail_user);
                if (!acct.problem.empty()) fail(acct.problem);
                s.uid = acct.uid;
                s.gid = acct.gid;
            }
            // The tool starts unprivileged and must reach the work dir by its path. A private
            // base dir (0700) is no obstacle to bwrap: the work dir is bound over it first.
            const auto abs_base = std::filesystem::absolute(base).lexically_normal();
            if (driver_ == driver::bubblewrap && options_.work_dir.empty() && abs_base.has_parent_path() &&
                abs_base != abs_base.root_path() && !first_unsearchable(base, s.uid, s.gid).empty() &&
                first_unsearchable(abs_base.parent_path(), s.uid, s.gid).empty())
                s.work_alias = abs_base;
            else if (auto blocked = first_unsearchable(base, s.uid, s.gid); !blocked.empty())
                fail("base directory " + base.string() + " is not reachable for uid " + std::to_string(s.uid) +
                     ", which " + std::string(tool()) + " runs as (" + blocked.string() + " is not searchable by it; use a base "
                     "dir such as /tmp, or chmod o+x " + blocked.string() + ")",
                     errc::bad_working_directory);
            s.drop_to_uid = true;
            for (auto [tool_path, name] : {std::pair{&s.setpriv, "setpriv"}, {&s.unshare, "unshare"}, {&s.mount_tool, "mount"}}) {
                *tool_path = find_on_path(name);
                if (tool_path->empty())
                    fail(std::string(name) + " (util-linux) not found; it starts " + std::string(tool()) + " unprivileged",
                         errc::driver_unavailable);
            }
        }
        if (options_.work_dir.empty()) {
            if (container() && policy_.base_dir().native().find(':') != std::string::npos)
                fail("base directory " + policy_.base_dir().string() + " contains ':', which -v cannot mount",
                     errc::bad_working_directory);
            // Under a root caller the command runs as s.uid, so the work dir must be theirs.
            s.work_dir = create_work_dir(policy_.base_dir(), s.name, root ? s.uid : static_cast<uid_t>(-1), s.gid,
                                         tool());
            res.work_dir = s.work_dir;
            res.record = run_record::create(s.name, std::filesystem::absolute(s.work_dir), tool());
        } else {
            res.record = run_record::create(s.name, {}, tool());
            s.work_dir = options_.work_dir;
            struct stat st {};
            if (driver_ == driver::firejail && root && ::stat(s.work_dir.c_str(), &st) == 0 && st.st_uid != s.uid)
                fail("work dir " + s.work_dir.string() + " belongs to uid " + std::to_string(st.st_uid) +
                     "; firejail runs as uid " + std::to_string(s.uid) + " (" + options_.firejail_user +
                     ") and only takes a directory that uid owns",
                     errc::bad_working_directory);
        }
        if (container() && (options_.image.empty() || options_.image.front() == '-'))
            fail("image name \"" + options_.image + "\" is not valid");
        if (container()) {
            // Not beside the work dir: the base dir holds work dirs and nothing else.
            s.cid_file = (res.record.dir() / "cid").string();
            res.cid_file = s.cid_file;
        }
        if (const auto disk = policy_.disk_limit_bytes()) bound_disk(s, res, disk, root);
        s.mounts = mounts_for(policy_, driver_);
        for (auto m : options_.extra_mounts) {
            if (m.host.find(':') != std::string::npos || m.container.find(':') != std::string::npos)
                fail("mount " + m.host + " -> " + m.container + " holds ':'", make_error_code(boost::system::errc::invalid_argument));
            if (driver_ == driver::firejail) m.container = m.host;
            s.mounts.push_back(std::move(m));
        }
        if (container()) {
            // -v ...:ro is read-only at the top only; each submount gets its own.
            s.mounts = with_read_only_submounts(std::move(s.mounts), host_mounts());
            for (const auto& m : s.mounts)
                if (m.host.find(':') != std::string::npos || m.container.find(':') != std::string::npos)
                    fail("the mount " + m.host + " below a read-only path holds ':', which -v cannot bind read-only",
                         make_error_code(boost::system::errc::invalid_argument));
        }
        if (root) idmap_writable_paths(s, res);
        if (driver_ == driver::podman || (container() && res.idmapped > 0)) {
            std::string why;
            s.seccomp_profile = seccomp_profile_file(res.idmapped > 0, why).string();
            if (s.seccomp_profile.empty()) fail(why);
        }
        s.env = sandbox_environment(policy_);
        if (driver_ == driver::firejail) {
            // Fail closed: a path firejail would glob could open more of the host than asked.
            auto check = [&](const std::string& path, const char* what) {
                if (auto why = firejail_path_problem(path); !why.empty())
                    fail(std::string(what) + " " + path + " cannot be given to firejail: " + why,
                         make_error_code(boost::system::errc::invalid_argument));
            };
            check(s.work_dir.string(), "work dir");
            for (const auto& m : s.mounts) check(m.host, m.read_only() ? "readable path" : "writable path");
            s.host_writable_mounts = writable_host_mounts();
            for (const auto& m : s.host_writable_mounts) check(m, "the writable host mount");
            s.hidden_base_dir = base_to_hide(base, s.mounts);
            if (!s.hidden_base_dir.empty()) check(s.hidden_base_dir.string(), "base directory");
        }
        if (!container()) {
            std::string why;
            if (auto cg = cgroup_limits::create(s.name, policy_.memory_limit_bytes(), options_.pids_limit, why)) {
                s.limit_prefix = cg->join_prefix();
                res.cgroup.emplace(std::move(*cg));
            } else {
                s.rlimit_as = policy_.memory_limit_bytes();  // per process only: see caps()
                s.prlimit = find_on_path("prlimit");
                if (driver_ == driver::bubblewrap && s.prlimit.empty()) fail("prlimit (util-linux) not found", errc::driver_unavailable);
            }
        } else if (std::string why; auto cg = engine_cgroup::plan(s.name, why)) {
            s.cgroup_parent = cg->parent();  // else the usage is not available
            res.container_cgroup.emplace(std::move(*cg));
        }
        return s;
    }

    // Under a root caller the command runs as s.uid, so a writable path it does not own is
    // shown to it through an idmapped mount: the owner appears as s.uid, and what the command
    // creates there stays the owner's on the host (the path's owner and mode never change).
    // The mount is attached below the run's record (0700): bubblewrap's prelude binds it
    // over the path, the container engines bind it from there. As the owner may be root, a
    // seccomp filter keeps the command from making set-id files (bwrap --seccomp, or the
    // containers' profile).
    void idmap_writable_paths(sandbox_setup& s, run_resources& res) const
    {
        for (auto& m : s.mounts) {
            struct stat st {};
            if (m.read_only() || ::stat(m.host.c_str(), &st) != 0 || st.st_uid == s.uid) continue;  // missing: the tool says so
            const auto writable = [&] { return "writable path " + m.host + " (owned by uid " + std::to_string(st.st_uid) + ")"; };
            if (!S_ISDIR(st.st_mode))
                fail(writable() + " is not a directory: as root, only a directory can be made writable for uid " +
                         std::to_string(s.uid) + ", which the command runs as",
                     make_error_code(boost::system::errc::invalid_argument));
            const auto staged = res.record.dir() / ("rw" + std::to_string(res.idmapped++));
            if (::mkdir(staged.c_str(), 0700) != 0)
                fail("cannot create " + staged.string() + ": " + std::error_code(errno, std::system_category()).message());
            if (auto why = attach_idmapped(m.host, staged, {st.st_uid, st.st_gid}, {s.uid, s.gid}); !why.empty())
                fail(writable() + " cannot be made writable for uid " + std::to_string(s.uid) + ": " + why);
            if (container()) m.host = staged.string();
            else s.idmapped_binds.emplace_back(staged.string(), m.host);
        }
        if (res.idmapped == 0 || container()) return;
        if (driver_ == driver::firejail) {
            s.seccomp_exec = seccomp_exec_path();
            if (s.seccomp_exec.empty())
                fail("writable path " + s.idmapped_binds.front().second + " is not owned by uid " + std::to_string(s.uid) +
                         " (" + options_.firejail_user + "), so set-id files must be refused there, which needs "
                         "sandbox-seccomp-exec (installed with the library at " + std::string(SANDBOX_SECCOMP_EXEC) +
                         ", or named by SANDBOX_SECCOMP_EXEC); it was not found",
                     errc::driver_unavailable);
            if (auto why = firejail_path_problem(s.seccomp_exec); !why.empty())
                fail("sandbox-seccomp-exec at " + s.seccomp_exec + " cannot be given to firejail: " + why,
                     errc::driver_unavailable);
            return;
        }
        const auto filter = res.record.dir() / "setid.bpf";
        const int fd = ::open(filter.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        auto why = fd < 0 ? std::error_code(errno, std::system_category()).message() : write_setid_filter(fd);
        if (fd >= 0) ::close(fd);
        if (!why.empty()) fail("cannot write the set-id filter " + filter.string() + ": " + why);
        s.setid_filter = filter.string();
    }

    // The disk limit: /tmp is a tmpfs of that size on every driver (see the plans), and so
    // is /work: mounted over the work dir by a root caller (so sessions keep theirs), else
    // made by the tool itself.
    void bound_disk(sandbox_setup& s, run_resources& res, std::uint64_t bytes, bool root) const
    {
        s.disk_bytes = bytes;
        auto refuse = [&](const std::string& why) {
            fail("disk_limit " + *policy_.disk_limit() + " cannot be enforced: " + why, errc::limit_not_enforced);
        };
        if (!options_.work_dir.empty()) {
            // A session's work dir is bounded by the session; one the caller made is not ours to cover.
            if (!is_mount_root(s.work_dir) && !is_mount_root(s.work_dir.parent_path()))
                refuse("the work dir " + s.work_dir.string() + " was given by the caller and is not a bounded mount");
            return;
        }
        if (root) {
            if (auto why = mount_bounded_tmpfs(s.work_dir, bytes, s.uid, s.gid); !why.empty()) refuse(why);
            res.work_dir_mounted = true;
        } else if (driver_ == driver::firejail) {
            refuse("firejail cannot mount a bounded /work or /tmp for an unprivileged caller");
        } else {
            s.work_tmpfs = true;
        }
    }

    launch_plan make_plan(const sandbox_setup& s, const std::vector<std::string>& argv) const
    {
        launch_plan plan;
        plan.cwd = s.work_dir;
        plan.failure_prefix = "Failed to start " + std::string(tool());
        plan.throw_on_start_failure = true;
        switch (driver_) {
        case driver::docker:
        case driver::podman: {
            const bool podman = driver_ == driver::podman;
            plan.argv = container_argv(s, policy_, options_, podman, argv);
            plan.cleanup_argv = container_cleanup_argv(s, podman);
            plan.env = env_strings(current_environment());  // the client's own (DOCKER_HOST...)
            break;
        }
        case driver::bubblewrap:
            plan.argv = bubblewrap_argv(s, policy_, argv);
            plan.env = {"PATH=" + std::string(default_sandbox_path)};  // bwrap --clearenv's inside
            break;
        case driver::firejail:
            plan.argv = firejail_argv(s, policy_, argv);
            plan.env = env_strings(s.env);  // firejail hands its environment to the command
            break;
        case driver::host: break;
        }
        return plan;
    }

    // Failures of the tool itself, told apart from the command's own exit codes.
    void check_result(exec_result& r, const run_resources& res) const
    {
        // 125 from the client is an engine failure only if no container was ever created:
        // a command may exit 125 itself, and print anything.
        if (container() && r.exit_code == 125 && !r.timed_out && !res.container_created) {
            if (r.err.find("Cannot connect to the Docker daemon") != std::string::npos)
                fail("the Docker engine is not running (" + engine_error_line(r.err) + ")");
            if (r.err.find("No such image") != std::string::npos || r.err.find("image not known") != std::string::npos)
                fail("image " + options_.image + " is not on this machine and is never pulled implicitly; get it "
                     "with \"" + std::string(tool()) + " pull " + options_.image + "\" (" + engine_error_line(r.err) + ")");
            fail(engine_error_line(r.err));
        }
        if (driver_ == driver::firejail && r.exit_code == 125 && r.err.rfind("sandbox: cannot bind ", 0) == 0)
            fail(engine_error_line(r.err));
        // bwrap's own failures exit 1 with "bwrap: ..." (a command it cannot execute is
        // as_start_failure's).
        if (driver_ == driver::bubblewrap && r.exit_code == 1 && r.err.rfind("bwrap: ", 0) == 0 &&
            r.err.rfind("bwrap: execvp ", 0) != 0)
            fail(engine_error_line(r.err));
    }

    execution_policy policy_;
    driver_options options_;
    driver driver_;
};

}  // namespace

std::unique_ptr<command_runner> make_isolating_runner(execution_policy policy, driver_options options, driver d)
{
    return std::make_unique<isolating_runner>(std::move(policy), std::move(options), d);
}

}  // namespace sandbox::detail
