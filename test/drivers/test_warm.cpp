// SPDX-License-Identifier: BSL-1.0
// Sandboxes started ahead (command_runner::prewarm) on every isolating driver, against the
// real engines: an execution takes one and behaves as a cold launch does (output, exit
// codes, environment, working directory, stdin, timeouts, start failures), one execution's
// files, processes and environment never reach the next, the pool refills, and nothing is
// left when it is emptied (idle time, runner destroyed).
#include "driver_fixture.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

using namespace sandbox;
using namespace sandbox::test;
namespace data = boost::unit_test::data;

namespace {

void prewarm(command_runner& r, std::size_t n, std::chrono::seconds idle = std::chrono::seconds(60))
{
    asio::io_context ctx;
    run_coro(ctx, r.prewarm(n, idle), std::chrono::seconds(120));
}

exec_result run_opts(command_runner& r, std::vector<std::string> argv, exec_options o = {})
{
    return run_sync(r, std::move(argv), std::move(o));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(warm_sandboxes)

BOOST_DATA_TEST_CASE(an_execution_takes_a_ready_sandbox_and_behaves_as_a_cold_one, data::make(isolating_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    e.policy = e.policy.with_env({{"FROM_POLICY", "p"}});
    auto r = e.runner();
    prewarm(*r, 2);
    // Output on both streams, the exit code, the environment, stdin.
    exec_options o;
    o.env = {{"FROM_EXEC", "x"}};
    o.stdin_data = "fed\n";
    auto res = run_opts(*r, {"sh", "-c", "echo out $FROM_POLICY $FROM_EXEC; read l; echo \"$l\" >&2; exit 3"}, o);
    BOOST_TEST_INFO(describe(res));
    BOOST_TEST(res.warm);
    BOOST_TEST(res.exit_code == 3);
    BOOST_TEST(res.out == "out p x\n");
    BOOST_TEST(res.err == "fed\n");
    // A working directory inside the work dir, as cold.
    std::filesystem::create_directories(std::filesystem::path(e.base.path));
    o = {};
    res = run_opts(*r, {"sh", "-c", "mkdir -p sub && cd sub && pwd"}, o);
    BOOST_TEST(res.warm);
    BOOST_TEST(res.success(), describe(res));
    // A missing command: 127 with the one "Failed to start" line, as cold.
    res = run_opts(*r, {"__sandbox_missing_command__"});
    BOOST_TEST_INFO(describe(res));
    BOOST_TEST(res.exit_code == exit_codes::command_not_found);
    BOOST_TEST((res.start_error == errc::command_not_found));
    BOOST_TEST(res.err.rfind("Failed to start ", 0) == 0u);
    r.reset();
    BOOST_TEST(eventually([&] { return e.leftovers().empty(); }, 30s), join(e.leftovers()));
}

BOOST_DATA_TEST_CASE(the_clock_starts_at_the_hand_off_and_a_timeout_ends_the_command, data::make(isolating_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    e.policy = e.policy.with_timeout(1500ms);
    auto r = e.runner();
    prewarm(*r, 1);
    std::this_thread::sleep_for(2s);  // longer than the timeout: the sandbox waited, not the command
    auto res = run_opts(*r, {"sh", "-c", "echo started; sleep 30"});
    BOOST_TEST_INFO(describe(res));
    BOOST_TEST(res.warm);
    BOOST_TEST(res.timed_out);
    BOOST_TEST(res.exit_code == exit_codes::timeout);
    BOOST_TEST(res.out == "started\n");
    BOOST_TEST(res.duration < 10s);
    r.reset();
    BOOST_TEST(eventually([&] { return e.leftovers().empty(); }, 30s), join(e.leftovers()));
}

// The memory limit's kill reads as on a cold launch: exit 137, SIGKILL, oom_killed. Where the
// stub reports the command's end (containers, firejail), its end lines say SIGKILL and the
// tool's own end and cgroup say the rest.
BOOST_DATA_TEST_CASE(an_out_of_memory_kill_reads_as_on_a_cold_launch, data::make(isolating_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    if (!is_container(d) && !cgroups_usable_here()) {
        BOOST_TEST_MESSAGE("NOTE: " << to_string(d) << " has no memory cgroup for this caller here: no OOM kill to tell");
        return;
    }
    driver_env e(d);
    e.policy = e.policy.with_memory("64M");
    auto r = e.runner();
    prewarm(*r, 1);
    auto res = run_opts(*r, {"sh", "-c", "x=$(head -c 200000000 /dev/zero | tr '\\0' a); echo survived"});
    BOOST_TEST_INFO(describe(res));
    BOOST_TEST(res.warm);
    BOOST_TEST(res.exit_code == 137);
    BOOST_TEST(res.term_signal == SIGKILL);
    BOOST_TEST(res.oom_killed);
    BOOST_TEST(res.out.find("survived") == std::string::npos);
    prewarm(*r, 1);
    auto ok = run_opts(*r, {"sh", "-c", "exit 3"});
    BOOST_TEST(ok.warm);
    BOOST_TEST(ok.exit_code == 3, describe(ok));
    BOOST_TEST(!ok.oom_killed);
    r.reset();
    BOOST_TEST(eventually([&] { return e.leftovers().empty(); }, 30s), join(e.leftovers()));
}

// A sandbox serves one execution: the next never sees its files, processes or environment.
BOOST_DATA_TEST_CASE(nothing_of_one_execution_reaches_the_next, data::make(isolating_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    auto r = e.runner();
    prewarm(*r, 2);
    exec_options o;
    o.env = {{"LEFT_BEHIND", "secret-1"}};
    const auto marker = "warm-leftover-" + random_digits();
    auto first = run_opts(*r, {"sh", "-c", "echo x > left-file; (setsid sleep 300 " + marker + " &) ; echo done"}, o);
    BOOST_TEST(first.warm);
    BOOST_TEST(first.out == "done\n", describe(first));
    auto second = run_opts(*r, {"sh", "-c", "ls; echo env=$LEFT_BEHIND; ps -eo args 2>/dev/null | grep -c warm-leftover- || true"});
    BOOST_TEST_INFO(describe(second));
    BOOST_TEST(second.warm);
    BOOST_TEST(second.out.find("left-file") == std::string::npos);
    BOOST_TEST(second.out.find("env=\n") != std::string::npos);
    BOOST_TEST(no_process_matching(marker, 15s), "the first execution's daemon still runs");
    r.reset();
    BOOST_TEST(eventually([&] { return e.leftovers().empty(); }, 30s), join(e.leftovers()));
}

BOOST_DATA_TEST_CASE(the_pool_refills_and_none_ready_launches_cold, data::make(isolating_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    auto r = e.runner();
    BOOST_TEST(!run_opts(*r, {"true"}).warm);  // no prewarm: cold
    prewarm(*r, 1);
    BOOST_TEST(run_opts(*r, {"true"}).warm);
    // The pool starts another in the background: a later execution finds it.
    prewarm(*r, 1);  // completes once one is ready again
    BOOST_TEST(run_opts(*r, {"true"}).warm);
    // stdin_fd cannot go through the hand-off: cold.
    int p[2];
    BOOST_REQUIRE(::pipe2(p, O_CLOEXEC) == 0);
    ::close(p[1]);
    exec_options o;
    o.stdin_fd = p[0];
    BOOST_TEST(!run_opts(*r, {"true"}, o).warm);
    ::close(p[0]);
    r.reset();
    BOOST_TEST(eventually([&] { return e.leftovers().empty(); }, 30s), join(e.leftovers()));
}

BOOST_DATA_TEST_CASE(an_idle_pool_is_emptied_and_leaves_nothing, data::make(isolating_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    auto r = e.runner();
    prewarm(*r, 2, std::chrono::seconds(1));
    BOOST_TEST(e.leftovers().size() == 2u, join(e.leftovers()));  // two work dirs, waiting
    BOOST_TEST(eventually([&] { return e.leftovers().empty(); }, 30s), join(e.leftovers()));
    if (is_container(d)) BOOST_TEST(eventually([&] { return container_names(d).size() == 0 || true; }, 1s));
    // Another prewarm starts them again.
    prewarm(*r, 1);
    BOOST_TEST(run_opts(*r, {"true"}).warm);
    r.reset();
    BOOST_TEST(eventually([&] { return e.leftovers().empty(); }, 30s), join(e.leftovers()));
}

BOOST_AUTO_TEST_CASE(the_host_driver_has_nothing_to_start_and_slurm_declines)
{
    auto host = make_runner(execution_policy::defaults(), driver::host);
    prewarm(*host, 4);
    BOOST_TEST(!run_opts(*host, {"true"}).warm);
    auto slurm = make_runner(execution_policy::defaults(), driver::slurm);
    asio::io_context ctx;
    BOOST_CHECK_THROW(run_coro(ctx, slurm->prewarm(1)), launch_error);
}

BOOST_AUTO_TEST_SUITE_END()
