// SPDX-License-Identifier: BSL-1.0
// Shared pieces of the slurm driver tests, against the real cluster: whether it can run here
// (never skipped under CI=true), runners with the build's sandbox-run as the node program,
// and what the queue and the host still hold of a run once it has ended.
#ifndef SANDBOX_TEST_SLURM_FIXTURE_HPP
#define SANDBOX_TEST_SLURM_FIXTURE_HPP

#include "../drivers/driver_fixture.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace sandbox::test {

/// The inner drivers a node may use.
inline constexpr std::array<driver, 2> inner_drivers{driver::bubblewrap, driver::host};

/// The sandbox-run of this build, which the nodes start (the same machine here).
inline std::string node_program() { return build::run_bin(); }

/// driver_options for driver::slurm with `inner` on the node and the build's sandbox-run.
inline driver_options slurm_options(driver inner = driver::bubblewrap)
{
    driver_options o;
    o.slurm.inner = inner;
    o.slurm.node_program = node_program();
    return o;
}

/// Why driver::slurm with `inner` cannot run `true` here, or nullopt. Tried once per inner driver.
inline const std::optional<std::string>& slurm_unavailable_reason(driver inner)
{
    static std::mutex m;
    static std::map<driver, std::optional<std::string>> cache;
    std::lock_guard lock(m);
    if (auto it = cache.find(inner); it != cache.end()) return it->second;
    std::optional<std::string> why;
    try {
        auto runner = make_runner(execution_policy::defaults().with_timeout(60s), driver::slurm, slurm_options(inner));
        const auto r = run_sync(*runner, {"true"});
        if (!r.success())
            why = "`true` exited " + std::to_string(r.exit_code) + (r.timed_out ? " (timed out)" : "") + ": " + r.err;
    } catch (const std::exception& e) {
        why = e.what();
    }
    return cache.emplace(inner, std::move(why)).first->second;
}

/// True when the cluster runs commands with `inner` on the node. Otherwise a loud skip
/// message, or a test failure under CI=true (scripts/setup-slurm.sh starts the cluster there).
inline bool slurm_ready(driver inner = driver::bubblewrap)
{
    const auto& why = slurm_unavailable_reason(inner);
    if (!why) return true;
    const auto what = "slurm (inner " + std::string(to_string(inner)) + ") cannot run here: " + *why;
    if (running_in_ci()) {
        BOOST_ERROR(what << "; CI=true forbids skipping (scripts/setup-slurm.sh starts the cluster)");
    } else {
        BOOST_TEST_MESSAGE("SKIPPED: " << what);
        BOOST_WARN_MESSAGE(false, "SKIPPED: " << what);
    }
    return false;
}

#define SANDBOX_REQUIRE_SLURM(inner)                                                                                   \
    do {                                                                                                               \
        if (!::sandbox::test::slurm_ready(inner)) return;                                                             \
    } while (0)

/// A slurm runner's setting: a private base dir, a 30 s policy rooted there, `inner` on the node.
struct slurm_env : driver_env {
    explicit slurm_env(driver inner = driver::bubblewrap) : driver_env(driver::slurm)
    {
        options = slurm_options(inner);
    }
};

/// "sbx-<pid>-": how the driver names the jobs (and steps) of this process.
inline std::string our_job_prefix() { return "sbx-" + std::to_string(::getpid()) + "-"; }

/// "<id> <name> <state>" of the queue's jobs whose name starts with `prefix`; with `job_id`,
/// of that allocation's steps instead.
inline std::vector<std::string> queued(const std::string& prefix, const std::string& job_id = {})
{
    const auto cmd = job_id.empty() ? std::string("squeue -h -o '%i %j %T' 2>&1")
                                    : "squeue -h -s -j '" + job_id + "' -o '%i %j' 2>&1";
    std::vector<std::string> out;
    for (const auto& line : split_lines(host_output(cmd))) {
        const auto sp = line.find(' ');
        if (sp != std::string::npos && line.compare(sp + 1, prefix.size(), prefix) == 0) out.push_back(line);
    }
    return out;
}

/// Records the job name of the srun an execution starts (from exec_options::on_launch).
struct job_name_catcher {
    std::shared_ptr<std::string> name = std::make_shared<std::string>();
    void operator()(const launch_preview& p) const
    {
        for (const auto& a : p.argv)
            if (a.starts_with("--job-name=")) *name = a.substr(11);
    }
};

/// Runs `argv` with `options` on a private io_context (the call is made here, outside any
/// co_await expression).
inline exec_result execute_with(command_runner& runner, std::vector<std::string> argv, exec_options options,
                                std::chrono::steady_clock::duration limit = 120s)
{
    asio::io_context ctx;
    auto op = runner.execute(std::move(argv), std::move(options));
    return run_coro(ctx, std::move(op), limit);
}

/// Seconds since `start`.
inline double seconds_since(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace sandbox::test

#endif
