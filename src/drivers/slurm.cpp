// SPDX-License-Identifier: BSL-1.0
// slurm: every execution is one Slurm job step, started with srun and placed by the scheduler.
// On the node `sandbox-run slurm-step` applies the policy with the inner driver (bubblewrap
// or host), streams the output back through srun and ends stderr with a report line, which
// the client takes out again. The library's own timers stay authoritative: srun's --time is a
// backstop, and a run we end is cancelled with scancel and waited for.
#include "drivers/driver_spec.hpp"

#include "drivers/orphans.hpp"
#include "drivers/run_record.hpp"
#include "drivers/runner.hpp"
#include "drivers/support.hpp"
#include "run/line_sieve.hpp"
#include "run/offload.hpp"
#include <sandbox/environment.hpp>
#include <sandbox/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <cstring>

namespace sandbox::detail {

namespace {

constexpr std::uint64_t mib = 1024 * 1024;

// srun's own lines (its errors, the step's exit note) and the node's (slurmstepd's kill
// notes). Its errors and the node's notes may also follow an unterminated line of the
// command's stderr. The report line's prefix is added per run.
constexpr const char* srun_prefix = "srun: ";
// What `sandbox-run slurm-step` reads on the node (src/cli/slurm_step.cpp): the node's policy
// as JSON and the tag of its report line.
constexpr std::string_view step_policy_variable = "SANDBOX_STEP_POLICY";
constexpr std::string_view step_tag_variable = "SANDBOX_STEP_TAG";
constexpr const char* srun_error = "srun: error: ";
constexpr const char* stepd_markers[] = {"slurmstepd: ", "slurmstepd-"};

bool exists_executable(const std::string& p) { return !p.empty() && ::access(p.c_str(), X_OK) == 0; }

// The program the nodes run: as configured, else SANDBOX_RUN_BIN, else the installed
// sandbox-run (the same path on every node), else one on PATH, else the one built beside
// this library.
std::string node_program(const driver_options& o)
{
    if (!o.slurm.node_program.empty()) return o.slurm.node_program;
    if (const char* v = std::getenv("SANDBOX_RUN_BIN"); v && *v) return v;
    for (std::string p : {std::string(SANDBOX_INSTALL_BINDIR "/sandbox-run"), find_on_path("sandbox-run"),
                          std::string(SANDBOX_BUILD_BINDIR "/sandbox-run")})
        if (exists_executable(p)) return p;
    fail_start("srun", "sandbox-run, which runs the command on the node, is not installed here; set SANDBOX_RUN_BIN");
}

driver inner_driver(const driver_context& ctx)
{
    const auto inner = ctx.options.slurm.inner;
    if (inner != driver::host && inner != driver::bubblewrap)
        fail_start("srun", "driver_options::slurm.inner is " + std::string(to_string(inner)) +
                               "; a node runs commands with host or bubblewrap");
    return inner;
}

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

// A run we ended: its job (or, in an allocation, its step) is told to stop, cancelled and
// waited for until the queue no longer has it, so that nothing of it runs on the node any more.
std::vector<std::string> cancel_argv(const std::string& name, const char* job_id)
{
    // $1 the job or step name, $2 the allocation's job id (empty: the run was a job).
    // A pending job has no step to signal (scancel --signal would retry for a long time):
    // it is cancelled at once.
    static constexpr const char* script = R"(i=0
while [ $i -lt 600 ]; do
    if [ -n "$2" ]; then ids=$(squeue -h -s -j "$2" -o '%i %j' | awk -v n="$1" '$2 == n {print $1}')
    else
        pending=$(squeue -h -n "$1" -t PENDING -o '%i')
        [ -z "$pending" ] || scancel $pending
        ids=$(squeue -h -n "$1" -o '%i')
    fi
    [ -n "$ids" ] || exit 0
    case $i in
    0) scancel --signal=TERM $ids ;;   # the node's sandbox-run ends the command and cleans up
    5) scancel $ids ;;                 # then the job or step itself
    *[05]0) scancel --signal=KILL $ids; scancel $ids ;;
    esac
    i=$((i + 1))
    sleep 0.1
done
echo "srun: $1 still in the queue after 60 s" >&2
exit 1)";
    return {"/bin/sh", "-c", script, "sandbox-slurm-cancel", name, job_id ? job_id : ""};
}

// The jobs of runs that died without cancelling them (a SIGKILLed runner whose spawn helper
// died too: the helper's own sweep cancels them at once otherwise), cancelled at this
// process's first launch, on a thread of their own and bounded in time.
void cancel_jobs_of_dead_runs(std::vector<std::string> env)
{
    static std::once_flag once;
    std::call_once(once, [&] {
        try {
            run_on(worker::engine, [env = std::move(env)] { cancel_slurm_jobs_of_dead_runs(env); });
        } catch (...) {  // best effort: the next process tries again
        }
    });
}

launch_plan plan(const driver_context& ctx, std::vector<std::string> args, const exec_options& o)
{
    if (args.empty()) fail_start("srun", "empty command");
    const auto inner = inner_driver(ctx);
    const auto srun = resolve_binary(ctx.options.binary, "SRUN_BIN", "srun", "srun");
    const auto node = node_program(ctx.options);
    const char* job = std::getenv("SLURM_JOB_ID");
    if (job && !*job) job = nullptr;

    const auto name = "sbx-" + std::to_string(::getpid()) + "-" + random_sandbox_name().substr(8, 12);
    const auto tag = "sandbox-run slurm-step " + random_sandbox_name().substr(8, 16) + " ";
    const auto wall = wall_timeout(ctx.policy, o);
    // The node's cgroup (bubblewrap) ends the command at its limit; Slurm's, which also
    // counts sandbox-run and bwrap, is the limit for the host and a backstop otherwise.
    const auto mem_mb = ceil_div(ctx.policy.memory_limit_bytes(), mib) + (inner == driver::host ? 16 : 64);

    std::vector<std::string> a{srun, "--ntasks=1", "--nodes=1", "--quiet", "--unbuffered", "--job-name=" + name,
                               "--mem=" + std::to_string(mem_mb) + "M"};
    // Minutes, and one more: the timers come first. Without a timeout, a bound all the same:
    // a job whose runner and spawn helper both died is cancelled only by a later process.
    const auto minutes =
        wall ? ceil_div(static_cast<std::uint64_t>(wall->count()), 60000) + 1
             : static_cast<std::uint64_t>(std::max<std::int64_t>(0, ctx.options.slurm.time_limit_without_timeout.count()));
    if (minutes > 0) a.push_back("--time=" + std::to_string(minutes));
    if (!ctx.options.slurm.partition.empty()) a.push_back("--partition=" + ctx.options.slurm.partition);
    if (job) a.push_back("--exact");  // a step of the allocation, with only what it asked for
    // Held until the step is done or cancelled: a job whose record nobody holds is cancelled
    // by a later process (a runner killed outright cancels nothing).
    auto record = std::make_shared<run_record>(run_record::create(random_sandbox_name(), {}, "srun"));
    if (!job) a.push_back("--comment=" + run_comment(record->dir().string()));
    // Only SLURM_*, the step's two variables and the helpers' places reach the node (srun's
    // own environment carries them: an argv is world-readable in /proc, an environment only
    // to its owner).
    std::string exported = std::string(step_policy_variable) + "," + std::string(step_tag_variable);
    // Where the library's helpers are, when named here: the node runs this same program.
    for (const char* helper : {"SANDBOX_SPAWN_HELPER", "SANDBOX_LANDLOCK_EXEC", "SANDBOX_SECCOMP_EXEC", "SANDBOX_SWEEP"})
        if (const char* v = std::getenv(helper); v && *v && !std::strchr(v, ',')) exported += std::string(",") + helper;
    a.insert(a.end(), {"--export=" + exported, "--chdir=/"});
    a.insert(a.end(), ctx.options.slurm.extra_args.begin(), ctx.options.slurm.extra_args.end());

    // The node gets the environment made here (srun --export would split values on commas)
    // and the policy with the wall timer as a backstop; the idle timer runs here.
    const auto env = with_extra_env(sandbox_environment(ctx.policy), o.env, ctx.policy);
    auto node_policy = ctx.policy.with_env(env, false).with_env_allowlist(std::nullopt).with_idle_timeout(std::nullopt);
    if (wall) node_policy = node_policy.with_timeout(*wall + std::chrono::seconds(5));
    a.insert(a.end(), {"--", node, "slurm-step", "--driver", std::string(to_string(inner))});
    if (!o.cwd.empty()) a.insert(a.end(), {"--cwd", o.cwd.string()});
    a.push_back("--");
    a.insert(a.end(), std::make_move_iterator(args.begin()), std::make_move_iterator(args.end()));

    launch_plan p;
    p.argv = std::move(a);
    p.env = env_strings(current_environment());  // srun's own: SLURM_CONF, SLURM_JOB_ID, PATH
    std::erase_if(p.env, [](const std::string& kv) {
        return kv.starts_with(std::string(step_policy_variable) + "=") || kv.starts_with(std::string(step_tag_variable) + "=");
    });
    p.env.push_back(std::string(step_policy_variable) + "=" + to_json(node_policy));
    p.env.push_back(std::string(step_tag_variable) + "=" + tag);
    p.failure_prefix = "Failed to start srun";
    p.throw_on_start_failure = true;
    p.cleanup_argv = cancel_argv(name, job);
    p.cleanup = [record] { record->release(); };  // after the cancel: the step is gone
    cancel_jobs_of_dead_runs(env_strings(current_environment()));
    // srun answers SIGTERM or a second SIGINT by killing the step on the spot, before the
    // node's sandbox-run can remove its work dir: srun is killed, and the cancel stops the
    // step gently.
    p.sigkill_only = true;
    // Through the spawn helper, as the engines' clients: should this process be SIGKILLed,
    // the helper kills srun and its sweep cancels the job at once.
    p.through_helper = true;
    // The report follows the command's last output, which may not end its line.
    auto sieve = std::make_shared<line_sieve>(std::vector<std::string>{srun_prefix},
                                              std::vector<std::string>{tag, srun_error, stepd_markers[0], stepd_markers[1]});
    p.err_sieve = sieve;
    p.check = [sieve, tag](exec_result& r) {
        std::string first_error;  // srun's, when it could not start the step
        bool report_seen = false;
        for (const auto& line : sieve->taken()) {
            if (line.starts_with(tag)) {
                const auto report = boost::json::parse(std::string_view(line).substr(tag.size()));
                if (const auto* e = report.as_object().if_contains("error")) {
                    const auto& err = e->as_object();
                    throw launch_error(errc::engine_failed,
                                       "Failed to start the command on the node: " +
                                           std::string(err.at("message").as_string()));
                }
                auto node_result = boost::json::value_to<exec_result>(report);
                if (!r.timed_out) {  // our timer fired first: 124 stands, as on every driver
                    r.exit_code = node_result.exit_code;
                    r.term_signal = node_result.term_signal;
                }
                r.usage = node_result.usage;
                r.oom_killed = node_result.oom_killed;
                r.start_error = node_result.start_error;
                if (r.start_error) r.err = std::move(node_result.err);  // the node driver's message
                if (node_result.timed_out && !r.timed_out) {
                    r.timed_out = true;
                    r.timeout = node_result.timeout;
                }
                report_seen = true;
            } else if (line.find("exceeded memory limit") != std::string::npos) {
                r.oom_killed = true;  // Slurm's own limit killed the step (host inner driver)
            } else if (line.starts_with(srun_error) && line.find(": task ") == std::string::npos &&
                       first_error.empty()) {
                first_error = line.substr(std::string_view(srun_error).size());
            }
        }
        if (report_seen || r.timed_out || r.oom_killed) return;
        if (!first_error.empty()) throw launch_error(errc::engine_failed, "Failed to start srun: " + first_error);
        // No report and no error: srun lost the task's last output (it does when the task
        // ends while its stdin is still being fed). The node's exit status, which srun
        // passes on, is the command's.
    };
    // wait4's usage is srun's; the command's comes in the node's report.
    p.measure = [](exec_result& r) noexcept { r.usage = resource_usage{.available = false}; };
    return p;
}

capabilities caps(const driver_context& ctx)
{
    // What the node's driver enforces, with memory always bounded by Slurm's --mem.
    return ctx.options.slurm.inner == driver::bubblewrap ? capabilities{isolation::namespaces, true, true, true, true}
                                                         : capabilities{isolation::none, false, true, false, false};
}

}  // namespace

constinit const driver_spec slurm_driver{.id = driver::slurm, .tool = "srun", .binary_variable = "SRUN_BIN",
                                         .isolating = true, .caps = caps, .plan = plan,
                                         .report_prefixes = {"srun: "}};

}  // namespace sandbox::detail
