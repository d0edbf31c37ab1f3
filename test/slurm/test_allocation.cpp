// SPDX-License-Identifier: BSL-1.0
// Inside an allocation (SLURM_JOB_ID set, as under salloc or sbatch) every execution is a
// step of it: two at once fit in `salloc -n2`, and a step the library ends leaves the
// allocation's step list empty while the allocation itself goes on.
#include "slurm_fixture.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>

using namespace sandbox;
using namespace sandbox::test;

namespace {

// An allocation made with `salloc --no-shell`, cancelled at the end of the scope.
struct allocation {
    std::string id;
    std::string salloc_output;
    explicit allocation(const std::string& args)
    {
        const auto name = our_job_prefix() + "alloc-" + random_digits();
        salloc_output = host_output("salloc --no-shell --job-name=" + name + " " + args + " 2>&1 </dev/null");
        id = number_after(salloc_output, "Granted job allocation ");
    }
    ~allocation()
    {
        if (id.empty()) return;
        (void)host_output("scancel " + id + " 2>&1");
        eventually([&] { return host_output("squeue -h -j " + id + " 2>/dev/null").empty(); }, 20s);
    }
    allocation(const allocation&) = delete;
    allocation& operator=(const allocation&) = delete;
    bool running() const { return host_output("squeue -h -j " + id + " -o %T 2>&1").find("RUNNING") != std::string::npos; }
};

// Pids of slurmstepd processes of `job`'s steps ("slurmstepd: [<job>.<step>]").
std::vector<int> step_daemons(const std::string& job) { return processes_matching("slurmstepd: [" + job + "."); }

}  // namespace

BOOST_AUTO_TEST_SUITE(slurm_allocation)

BOOST_AUTO_TEST_CASE(executions_inside_an_allocation_are_its_steps)
{
    SANDBOX_REQUIRE_SLURM(driver::bubblewrap);
    allocation alloc("-N1 -n2 --mem=1G");
    BOOST_TEST_REQUIRE(!alloc.id.empty(), "salloc gave no allocation: " << alloc.salloc_output);
    BOOST_TEST_REQUIRE(alloc.running());
    env_guard in_allocation("SLURM_JOB_ID", alloc.id);

    slurm_env e;
    auto runner = e.runner();
    asio::io_context ctx;
    constexpr int n = 2;
    std::vector<std::optional<exec_result>> results(n);
    std::vector<std::size_t> steps_seen(n, 0);
    std::vector<std::string> step_names(n);
    int errors = 0;
    for (int i = 0; i < n; ++i) {
        auto one = [&, i]() -> asio::awaitable<void> {
            exec_options o;
            // While it runs, its slurmstepd is one of the allocation's, and squeue lists the step.
            o.on_output = [&, i](stream_kind k, std::string_view chunk) {
                if (k != stream_kind::out || chunk.find("ready") == std::string_view::npos) return;
                steps_seen[static_cast<std::size_t>(i)] = step_daemons(alloc.id).size();
                for (const auto& s : queued(our_job_prefix(), alloc.id)) step_names[static_cast<std::size_t>(i)] += s + ";";
            };
            std::vector<std::string> argv{"sh", "-c", "echo ready-$0; sleep 3; echo done-$0", std::to_string(i)};
            auto op = runner->execute(std::move(argv), std::move(o));
            results[static_cast<std::size_t>(i)] = co_await std::move(op);
        };
        asio::co_spawn(ctx, std::move(one), [&](std::exception_ptr ep) {
            if (ep) ++errors;
        });
    }
    const auto start = std::chrono::steady_clock::now();
    ctx.run_for(90s);
    const auto took = seconds_since(start);
    BOOST_TEST(errors == 0);
    for (int i = 0; i < n; ++i) {
        const auto& r = results[static_cast<std::size_t>(i)];
        BOOST_TEST_REQUIRE(r.has_value());
        BOOST_TEST_INFO_SCOPE(describe(*r));
        BOOST_TEST(r->success());
        BOOST_TEST(r->out == "ready-" + std::to_string(i) + "\ndone-" + std::to_string(i) + "\n");
        BOOST_TEST(steps_seen[static_cast<std::size_t>(i)] >= 1u, "no slurmstepd of allocation " << alloc.id);
        BOOST_TEST(!step_names[static_cast<std::size_t>(i)].empty(), "squeue -s -j " << alloc.id << " listed no sbx step");
    }
    // The two steps ran side by side in the allocation's two CPUs: the second saw both.
    BOOST_TEST(*std::max_element(steps_seen.begin(), steps_seen.end()) >= 2u);
    BOOST_TEST(took < 60.0);
    // No job of its own was submitted (those of earlier tests may still be COMPLETING a moment).
    const auto other_jobs = [] {
        std::vector<std::string> out;
        for (const auto& job : queued(our_job_prefix()))
            if (job.find(" " + our_job_prefix() + "alloc-") == std::string::npos) out.push_back(job);
        return out;
    };
    BOOST_TEST(eventually([&] { return other_jobs().empty(); }, 30s), join(other_jobs(), "; "));
    // Steps that ended on their own may be listed a moment longer.
    BOOST_TEST(eventually([&] { return queued(our_job_prefix(), alloc.id).empty(); }, 30s),
               join(queued(our_job_prefix(), alloc.id), "; "));
    BOOST_TEST(alloc.running());
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
}

BOOST_AUTO_TEST_CASE(a_timed_out_step_is_cancelled_and_the_allocation_goes_on)
{
    SANDBOX_REQUIRE_SLURM(driver::bubblewrap);
    allocation alloc("-N1 -n2 --mem=1G");
    BOOST_TEST_REQUIRE(!alloc.id.empty(), "salloc gave no allocation: " << alloc.salloc_output);
    env_guard in_allocation("SLURM_JOB_ID", alloc.id);

    slurm_env e;
    e.policy = e.policy.with_timeout(2s);
    const auto marker = "1234.4" + random_digits();
    const auto start = std::chrono::steady_clock::now();
    const auto r = e.sh("echo started; sleep " + marker);
    const auto took = seconds_since(start);
    BOOST_TEST_INFO_SCOPE(describe(r));
    BOOST_TEST(r.timed_out);
    BOOST_TEST(r.exit_code == exit_codes::timeout);
    BOOST_TEST((r.timeout == timeout_reason::wall));
    BOOST_TEST(r.out == "started\n");
    BOOST_TEST(took < 20.0);
    BOOST_TEST(queued(our_job_prefix(), alloc.id).empty(), join(queued(our_job_prefix(), alloc.id), "; "));
    BOOST_TEST(no_process_matching("sleep " + marker));
    BOOST_TEST(alloc.running(), "the allocation itself was cancelled");

    // The allocation still takes steps.
    const auto after = e.run({"echo", "again"});
    BOOST_TEST_INFO_SCOPE(describe(after));
    BOOST_TEST(after.success());
    BOOST_TEST(after.out == "again\n");
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
}

BOOST_AUTO_TEST_SUITE_END()
