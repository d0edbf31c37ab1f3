// SPDX-License-Identifier: BSL-1.0
// docker and podman: one container per execution, removed afterwards.
#include "drivers/plans.hpp"

#include "drivers/driver_spec.hpp"
#include "drivers/orphans.hpp"
#include "drivers/resources.hpp"
#include "drivers/runner.hpp"
#include "drivers/seccomp_profile.hpp"
#include <sandbox/environment.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace sandbox::detail {

std::vector<std::string> container_argv(const sandbox_setup& s, const execution_policy& policy,
                                        const driver_options& options, bool podman,
                                        const std::vector<std::string>& args)
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
    const auto labels = container_labels(s.deadline, s.record);
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
    if (!s.warm_stub.empty()) a.insert(a.end(), {"-v", s.warm_stub + ":" + warm_stub_inside + ":ro"});
    if (!s.seccomp_profile.empty()) a.insert(a.end(), {"--security-opt", "seccomp=" + s.seccomp_profile});
    if (podman) a.push_back("--unsetenv-all");  // drop podman's own container= and TERM=
    // Never a value in argv, which every local user can read: a 0600 file, and the client's
    // own environment for what a line of it cannot hold.
    if (!s.env_file.empty()) a.insert(a.end(), {"--env-file", s.env_file});
    for (const auto& name : s.env_from_client) a.insert(a.end(), {"-e", name});
    a.insert(a.end(), {"-w", s.cwd.empty() ? std::string("/work") : "/work/" + s.cwd.string(), options.image});
    a.insert(a.end(), args.begin(), args.end());
    return a;
}

std::vector<std::string> container_cleanup_argv(const sandbox_setup& s, bool podman, int wait_seconds,
                                                const std::string& grace)
{
    // Kills and removes by name ("-t 0": podman would otherwise wait 10 s); the engine prints
    // the name of what it removed. Nothing printed: the container is not there, or the engine
    // refused (a removal already under way), so look. docker's client creates the cid file,
    // empty, just before it asks for the container and writes the id once it exists: an empty
    // file means the engine may still be creating it for the killed client, so wait for it
    // (the engine can take seconds under load). No file, or an id in it, and nothing listed:
    // nothing is left. podman creates in the client itself: once that is gone, nothing comes.
    std::vector<std::string> a{"/bin/sh", "-c",
                               "b=$1 n=$2 c=$3 w=$4 g=$5; shift 5; t=$(($(date +%s) + w)); "
                               "[ -z \"$g\" ] || { \"$b\" kill --signal TERM \"$n\" >/dev/null 2>&1 && sleep \"$g\"; }; "
                               "while :; do "
                               "[ -n \"$(\"$b\" rm -f \"$@\" \"$n\" 2>/dev/null)\" ] && exit 0; "
                               "if [ -z \"$(\"$b\" ps -a -q --filter \"name=$n\" 2>/dev/null)\" ]; then "
                               "[ -f \"$c\" ] && [ ! -s \"$c\" ] || exit 0; fi; "
                               "[ \"$(date +%s)\" -lt \"$t\" ] || exit 1; sleep 0.1; done",
                               "sh", s.binary, s.name, s.cid_file.empty() ? std::string("/nonexistent") : s.cid_file,
                               std::to_string(wait_seconds), grace};
    if (podman) a.insert(a.end(), {"-t", "0"});
    return a;
}

namespace {

bool podman(const driver_context& ctx) { return ctx.spec.id == driver::podman; }

// The engine's orphans, at the first launch and again at a launch ten minutes after the last
// sweep: a long-lived process clears what a removal missed.
void sweep_engine(const driver_context& ctx)
{
    try {
        sweep_orphans_when_due(
            resolve_binary(ctx.options.binary, ctx.spec.binary_variable, ctx.spec.tool, ctx.spec.tool), podman(ctx),
            env_strings(current_environment()));
    } catch (...) {  // no engine binary: the launch will say so
    }
}

// The environment goes to the engine in a file only this user can read (--env-file), one
// NAME=value a line, as both engines read it: a value holding a newline cannot be written so,
// and is handed to the client instead (`-e NAME` takes it from the client's environment),
// unless the client itself would read that name.
void write_env_file(const driver_context& ctx, sandbox_setup& s, const run_resources& res)
{
    const auto client = current_environment();
    std::string text;
    for (const auto& [name, value] : s.env) {
        const bool plain_name = !name.empty() && name.find_first_of("\n\t #*") == std::string::npos;
        if (!plain_name)
            fail_launch(ctx, "environment variable name \"" + name + "\" cannot be given to " + std::string(ctx.spec.tool),
                        make_error_code(boost::system::errc::invalid_argument));
        if (value.find('\n') == std::string::npos) {
            text += name + '=' + value + '\n';
            continue;
        }
        const bool clients_own =
            name.starts_with("DOCKER") || name.starts_with("PODMAN") || name.starts_with("CONTAINERS") ||
            name.starts_with("REGISTRY") || name.starts_with("XDG_") ||
            std::any_of(client.begin(), client.end(), [&](const auto& kv) { return kv.first == name; });
        if (clients_own)
            fail_launch(ctx, "the value of environment variable " + name + " holds a newline, which " +
                                 std::string(ctx.spec.tool) + "'s --env-file cannot carry, and the client reads " + name +
                                 " itself",
                        make_error_code(boost::system::errc::invalid_argument));
        s.env_from_client.push_back(name);
    }
    s.env_file = (res.record.dir() / "env").string();
    const int fd = ::open(s.env_file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    const bool written = fd >= 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    const int err = errno;
    if (fd >= 0) ::close(fd);
    if (!written) fail_launch(ctx, "cannot write " + s.env_file + ": " + errno_text(err), {err, boost::system::system_category()});
}

void sweep(const driver_context& ctx)
{
    sweep_dead_runs_once();
    sweep_engine(ctx);
}

void prepare(const driver_context& ctx, sandbox_setup& s, run_resources& res)
{
    sweep_engine(ctx);
    if (ctx.options.work_dir.empty() && ctx.policy.base_dir().native().find(':') != std::string::npos)
        fail_launch(ctx, "base directory " + ctx.policy.base_dir().string() + " contains ':', which -v cannot mount",
                    errc::bad_working_directory);
    if (ctx.options.image.empty() || ctx.options.image.front() == '-')
        fail_launch(ctx, "image name \"" + ctx.options.image + "\" is not valid");
    // Not beside the work dir: the base dir holds work dirs and nothing else.
    s.cid_file = (res.record.dir() / "cid").string();
    s.record = res.record.dir().string();
    res.cid_file = s.cid_file;
    write_env_file(ctx, s, res);
    // The syscall table, through the engine's profile (each engine's own default allows some of it).
    std::string why;
    s.seccomp_profile = seccomp_profile_file(s.syscall_rules, why).string();
    if (s.seccomp_profile.empty()) fail_launch(ctx, why, errc::driver_unavailable);
    if (std::string why; auto cg = engine_cgroup::plan(s.name, why)) {
        s.cgroup_parent = cg->parent();  // else the usage is not available
        res.container_cgroup.emplace(std::move(*cg));
    }
}

launch_plan command_line(const driver_context& ctx, const sandbox_setup& s, const std::vector<std::string>& args)
{
    launch_plan plan;
    plan.argv = container_argv(s, ctx.policy, ctx.options, podman(ctx), args);
    if (podman(ctx)) {
        plan.cleanup_argv = container_cleanup_argv(s, true);
    } else {
        // docker's client answers SIGTERM by deleting the still empty cid file while the
        // daemon goes on creating the container, which then stays behind (Created): the
        // client only ever gets SIGKILL, and the command its SIGTERM and grace from here.
        plan.sigkill_only = true;
        char grace[32];
        std::snprintf(grace, sizeof grace, "%.3f", std::chrono::duration<double>(ctx.options.kill_grace).count());
        plan.cleanup_argv = container_cleanup_argv(s, false, 20, grace);
    }
    // Through the spawn helper, which outlives this process: if it is SIGKILLed, the helper
    // has the container removed at once (sandbox-sweep) rather than at a later runner's sweep.
    plan.through_helper = true;
    plan.env = env_strings(current_environment());  // the client's own (DOCKER_HOST...)
    for (const auto& name : s.env_from_client)
        for (const auto& [k, v] : s.env)
            if (k == name) plan.env.push_back(k + '=' + v);
    return plan;
}

// 125 from the client is an engine failure only if no container was ever created: a
// command may exit 125 itself, and print anything.
void check_result(const driver_context& ctx, const exec_result& r, const run_resources& res)
{
    if (r.exit_code != 125 || r.timed_out || res.container_created) return;
    if (r.err.find("Cannot connect to the Docker daemon") != std::string::npos)
        fail_launch(ctx, "the Docker engine is not running (" + engine_error_line(r.err) + ")");
    if (r.err.find("No such image") != std::string::npos || r.err.find("image not known") != std::string::npos)
        fail_launch(ctx, "image " + ctx.options.image + " is not on this machine and is never pulled implicitly; get it "
                         "with \"" + std::string(ctx.spec.tool) + " pull " + ctx.options.image + "\" (" +
                         engine_error_line(r.err) + ")");
    fail_launch(ctx, engine_error_line(r.err));
}

// tini, the containers' PID 1 (--init), reports a command it cannot execute.
std::string start_failure(int exit_code, const std::string& line, const std::string& command)
{
    if ((exit_code != 126 && exit_code != 127) || line.rfind("[FATAL tini (", 0) != 0) return {};
    const std::string needle = ")] exec " + command + " failed: ";
    const auto at = line.find(needle);
    return at == std::string::npos ? std::string() : line.substr(at + needle.size());
}

capabilities caps(const driver_context&) { return {isolation::container, true, true, true, true}; }

command_user user(const driver_options&, bool) { return {sandbox_uid(), sandbox_gid(), {}}; }

}  // namespace

constinit const driver_spec docker_driver{
    .id = driver::docker, .tool = "docker", .binary_variable = "DOCKER_BIN", .isolating = true, .container = true,
    .dynamic_user = true, .makes_tmpfs = true, .slow_shutdown = true, .caps = caps, .on_create = sweep, .plan = isolated_plan, .user = user, .prepare = prepare,
    .command_line = command_line, .check_result = check_result, .start_failure = start_failure,
    .report_prefixes = {"docker: ", "[FATAL tini ("}};

constinit const driver_spec podman_driver{
    .id = driver::podman, .tool = "podman", .binary_variable = "PODMAN_BIN", .isolating = true, .container = true,
    .dynamic_user = true, .makes_tmpfs = true, .slow_shutdown = true, .caps = caps, .on_create = sweep, .plan = isolated_plan, .user = user, .prepare = prepare,
    .command_line = command_line, .check_result = check_result, .start_failure = start_failure,
    .report_prefixes = {"Error: ", "[FATAL tini ("}};

}  // namespace sandbox::detail
