// SPDX-License-Identifier: BSL-1.0
// Runs the library ends: wall and idle timeouts, a cancellation through the handler's slot,
// and a request the scheduler cannot place yet. Each returns within a loose bound, and
// afterwards the queue holds nothing of the job and the host no process of the command.
#include "slurm_fixture.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/system/error_code.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

using namespace sandbox;
using namespace sandbox::test;
namespace data = boost::unit_test::data;

namespace {

// The job is gone from the queue as soon as the execution returned, and no process whose
// command line holds `marker` is left (srun, slurmstepd's task, sandbox-run, bwrap, the command).
void expect_nothing_left(const slurm_env& e, const std::string& job_name, const std::string& marker)
{
    BOOST_TEST(job_name.starts_with(our_job_prefix()), "job name seen at launch: '" << job_name << "'");
    const auto left = queued(job_name.empty() ? our_job_prefix() : job_name);
    BOOST_TEST(left.empty(), "still in squeue: " << join(left, "; "));
    BOOST_TEST(no_process_matching(marker), "a process with '" << marker << "' is still running");
    BOOST_TEST(!has_children());
    BOOST_TEST(e.leftovers().empty(), "left in the base dir: " << join(e.leftovers()));
}

// Cancels a run through its handler's slot, with `type`, once the command has printed "ready".
void cancel_and_check(driver inner, asio::cancellation_type type)
{
    slurm_env e(inner);
    auto runner = e.runner();
    asio::io_context ctx;
    asio::cancellation_signal signal;
    const auto marker = "1234.8" + random_digits();
    bool ready = false;
    exec_options o;
    job_name_catcher names;
    o.on_launch = names;
    o.on_output = [&](stream_kind k, std::string_view chunk) {
        if (k != stream_kind::out || ready || chunk.find("ready") == std::string_view::npos) return;
        ready = true;
        asio::post(ctx, [&signal, type] { signal.emit(type); });
    };
    boost::system::error_code error;
    bool done = false;
    std::vector<std::string> argv{"sh", "-c", "trap '' TERM; echo ready; sleep " + marker + "; sleep " + marker};
    const auto start = std::chrono::steady_clock::now();
    // Not through a coroutine, which would pass on terminal cancellation only.
    async_execute(*runner, std::move(argv), std::move(o),
                  asio::bind_cancellation_slot(signal.slot(),
                                               asio::bind_executor(ctx, [&](boost::system::error_code ec, exec_result) {
                                                   error = ec;
                                                   done = true;
                                               })));
    ctx.run_for(60s);
    BOOST_TEST(ready);
    BOOST_REQUIRE(done);
    BOOST_TEST(seconds_since(start) < 25.0);
    BOOST_TEST((error == asio::error::operation_aborted), error.message());
    expect_nothing_left(e, *names.name, "sleep " + marker);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(slurm_timeouts)

BOOST_DATA_TEST_CASE(a_wall_timeout_ends_the_step_with_124, data::make(inner_drivers), inner)
{
    SANDBOX_REQUIRE_SLURM(inner);
    slurm_env e(inner);
    e.policy = e.policy.with_timeout(2s);
    auto runner = e.runner();
    const auto marker = "1234.5" + random_digits();
    job_name_catcher names;
    exec_options o;
    o.on_launch = names;
    std::vector<std::string> argv{"sh", "-c", "echo started; sleep " + marker + "; echo never"};
    const auto start = std::chrono::steady_clock::now();
    const auto r = execute_with(*runner, std::move(argv), std::move(o));
    const auto took = seconds_since(start);
    BOOST_TEST_INFO_SCOPE(describe(r));
    BOOST_TEST(r.timed_out);
    BOOST_TEST(r.exit_code == exit_codes::timeout);
    BOOST_TEST((r.timeout == timeout_reason::wall));
    BOOST_TEST(!r.success());
    BOOST_TEST(r.out == "started\n");
    BOOST_TEST(r.err.find("srun:") == std::string::npos, r.err);
    BOOST_TEST(r.err.find("slurmstepd") == std::string::npos, r.err);
    BOOST_TEST(took >= 2.0);
    BOOST_TEST(took < 20.0);
    expect_nothing_left(e, *names.name, "sleep " + marker);
}

BOOST_DATA_TEST_CASE(an_idle_timeout_ends_a_silent_step, data::make(inner_drivers), inner)
{
    SANDBOX_REQUIRE_SLURM(inner);
    slurm_env e(inner);
    e.policy = e.policy.with_timeout(30s).with_idle_timeout(3s);
    auto runner = e.runner();
    const auto marker = "1234.6" + random_digits();
    job_name_catcher names;
    exec_options o;
    o.on_launch = names;
    std::vector<std::string> argv{"sh", "-c", "echo hello; sleep " + marker};
    const auto start = std::chrono::steady_clock::now();
    const auto r = execute_with(*runner, std::move(argv), std::move(o));
    const auto took = seconds_since(start);
    BOOST_TEST_INFO_SCOPE(describe(r));
    BOOST_TEST(r.timed_out);
    BOOST_TEST(r.exit_code == exit_codes::timeout);
    BOOST_TEST((r.timeout == timeout_reason::idle));
    BOOST_TEST(r.out == "hello\n");
    BOOST_TEST(took >= 3.0);
    BOOST_TEST(took < 20.0);
    expect_nothing_left(e, *names.name, "sleep " + marker);

    // Output now and then keeps it going.
    const auto chatty = e.sh("for i in 1 2 3 4 5; do echo $i; sleep 1; done");
    BOOST_TEST_INFO_SCOPE(describe(chatty));
    BOOST_TEST(chatty.success());
    BOOST_TEST(chatty.out == "1\n2\n3\n4\n5\n");
}

BOOST_DATA_TEST_CASE(a_terminal_cancellation_ends_the_step_with_operation_aborted, data::make(inner_drivers), inner)
{
    SANDBOX_REQUIRE_SLURM(inner);
    cancel_and_check(inner, asio::cancellation_type::terminal);
}

// partial: SIGTERM to srun first (then SIGKILL after the kill grace), as a wall timeout does.
BOOST_AUTO_TEST_CASE(a_partial_cancellation_ends_the_step_with_operation_aborted)
{
    SANDBOX_REQUIRE_SLURM(driver::bubblewrap);
    cancel_and_check(driver::bubblewrap, asio::cancellation_type::partial);
}

BOOST_AUTO_TEST_CASE(a_request_that_cannot_be_placed_yet_times_out_instead_of_hanging)
{
    SANDBOX_REQUIRE_SLURM(driver::bubblewrap);
    slurm_env e;
    e.options.slurm.extra_args = {"--begin=now+1hour"};
    auto runner = e.runner();
    const auto marker = "1234.9" + random_digits();
    job_name_catcher names;
    exec_options o;
    o.on_launch = names;
    o.timeout = 3s;
    std::vector<std::string> argv{"sh", "-c", "echo never; sleep " + marker};
    const auto start = std::chrono::steady_clock::now();
    const auto r = execute_with(*runner, std::move(argv), std::move(o));
    const auto took = seconds_since(start);
    BOOST_TEST_INFO_SCOPE(describe(r));
    BOOST_TEST(r.timed_out);
    BOOST_TEST(r.exit_code == exit_codes::timeout);
    BOOST_TEST((r.timeout == timeout_reason::wall));
    BOOST_TEST(r.out.empty());
    BOOST_TEST(took >= 3.0);
    BOOST_TEST(took < 20.0);
    expect_nothing_left(e, *names.name, "sleep " + marker);
}

// Commands that end right around the wall timeout: a result is either the command's own
// (exit 0, its output) or a timeout (124, wall), never a timeout with the node's exit code.
// Several at once, so that some land on each side of the deadline.
BOOST_AUTO_TEST_CASE(a_command_ending_at_the_deadline_is_either_done_or_timed_out)
{
    SANDBOX_REQUIRE_SLURM(driver::host);
    slurm_env e(driver::host);
    e.policy = e.policy.with_timeout(1500ms);
    auto runner = e.runner();
    asio::io_context ctx;
    constexpr int n = 12;
    std::vector<std::optional<exec_result>> results(n);
    int errors = 0;
    for (int i = 0; i < n; ++i) {
        auto one = [&runner, &results, i]() -> asio::awaitable<void> {
            const int centis = 90 + 5 * i;  // 0.90 .. 1.45 s: srun takes its share of the 1.5 s first
            const auto seconds = std::to_string(centis / 100) + "." + std::to_string(centis % 100 / 10) +
                                 std::to_string(centis % 10);
            std::vector<std::string> argv{"sh", "-c", "sleep " + seconds + "; echo done"};
            exec_options o;
            auto op = runner->execute(std::move(argv), std::move(o));
            results[static_cast<std::size_t>(i)] = co_await std::move(op);
        };
        asio::co_spawn(ctx, std::move(one), [&errors](std::exception_ptr ep) {
            if (ep) ++errors;
        });
    }
    ctx.run_for(120s);
    BOOST_TEST(errors == 0);
    int timed_out = 0;
    for (int i = 0; i < n; ++i) {
        const auto& r = results[static_cast<std::size_t>(i)];
        BOOST_TEST_REQUIRE(r.has_value());
        BOOST_TEST_INFO_SCOPE("run " << i << ": " << describe(*r));
        if (r->timed_out) {
            ++timed_out;
            BOOST_TEST(r->exit_code == exit_codes::timeout);
            BOOST_TEST((r->timeout == timeout_reason::wall));
        } else {
            BOOST_TEST(r->exit_code == 0);
            BOOST_TEST(r->out == "done\n");
        }
    }
    BOOST_TEST_MESSAGE(timed_out << " of " << n << " timed out");
    BOOST_TEST(!has_children());
}

BOOST_AUTO_TEST_SUITE_END()
