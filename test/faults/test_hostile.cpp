// SPDX-License-Identifier: BSL-1.0
// Commands that work against the runner: closing stdout and going on, a flood of stderr,
// leaving the process group, a thousand children, stdin never read, zombies never waited for.
#include "fault_support.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/test/unit_test.hpp>

#include <signal.h>

using namespace sandbox;
using namespace sandbox::test;

namespace {

std::vector<driver> hostile_drivers()
{
    std::vector<driver> out{driver::host};
    if (driver_ready(driver::bubblewrap)) out.push_back(driver::bubblewrap);
    return out;
}

// Each driver with a private base dir (the host driver runs there too).
struct hostile_env {
    driver d;
    scratch_dir base;
    driver_options options = options_for(driver::host);
    execution_policy policy;
    explicit hostile_env(driver drv, std::chrono::milliseconds timeout = 10s)
        : d(drv), policy(execution_policy::in(base.path).with_timeout(timeout))
    {
    }
    std::unique_ptr<command_runner> runner() const { return make_runner(policy, d, options); }
};

// A "<field>:   N kB" line of /proc/self/status.
std::uint64_t status_kib(const std::string& field)
{
    std::istringstream lines(file_contents("/proc/self/status"));
    for (std::string line; std::getline(lines, line);)
        if (line.rfind(field + ":", 0) == 0) return std::stoull(line.substr(field.size() + 1));
    return 0;
}

bool gone(int pid)
{
    const auto stat = file_contents("/proc/" + std::to_string(pid) + "/stat");
    return stat.empty();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(hostile_commands)

BOOST_AUTO_TEST_CASE(a_command_that_closes_stdout_early_runs_on_until_its_own_exit_or_the_timeout)
{
    for (auto d : hostile_drivers()) {
        BOOST_TEST_CONTEXT(to_string(d))
        {
            hostile_env env(d);
            auto runner = env.runner();
            asio::io_context ctx;
            const int fds = settled_fd_count(ctx);
            const auto marker = unique_seconds(1);
            auto r = run_coro(ctx, runner->execute({"sh", "-c", "echo early; exec 1>&-; sleep " + marker + "; echo done >&2"}));
            BOOST_TEST(r.exit_code == 0, describe(r));
            BOOST_TEST(!r.timed_out);
            BOOST_TEST(r.out == "early\n");
            BOOST_TEST(r.err == "done\n");
            BOOST_TEST(seconds(r.duration) >= 1.0);
            BOOST_TEST(seconds(r.duration) < 5.0);

            // Both outputs closed, never ending: the wall timeout ends it, on time.
            const auto forever = unique_seconds();
            exec_options o;
            o.timeout = 1s;
            auto t = run_coro(ctx, runner->execute({"sh", "-c", "exec 1>&- 2>&-; sleep " + forever}, o));
            BOOST_TEST(t.timed_out, describe(t));
            BOOST_TEST(t.exit_code == exit_codes::timeout);
            BOOST_TEST(seconds(t.duration) >= 1.0);
            BOOST_TEST(seconds(t.duration) < 4.0);
            check_nothing_left(marker, fds, d == driver::host ? std::filesystem::path() : env.base.path);
            check_nothing_left(forever, fds);
        }
    }
}

BOOST_AUTO_TEST_CASE(a_gibibyte_on_stderr_keeps_the_last_bytes_up_to_the_cap_in_bounded_memory)
{
    for (auto d : hostile_drivers()) {
        BOOST_TEST_CONTEXT(to_string(d))
        {
            hostile_env env(d, 120s);
            auto runner = env.runner();
            asio::io_context ctx;
            run_coro(ctx, runner->execute({"true"}));
            const auto rss_before = status_kib("VmRSS");
            {  // resets the peak (VmHWM) to the current RSS
                std::ofstream clear("/proc/self/clear_refs");
                clear << "5";
            }
            const auto started = std::chrono::steady_clock::now();
            auto r = run_coro(ctx, runner->execute({"sh", "-c", "head -c 1073741824 /dev/zero >&2; echo end"}), 120s);
            const auto took = std::chrono::steady_clock::now() - started;
            const auto peak = status_kib("VmHWM");
            BOOST_TEST(r.exit_code == 0, r.exit_code << " " << r.err.substr(0, 200));
            BOOST_TEST(r.out == "end\n");
            BOOST_TEST(r.truncated_err);
            BOOST_TEST(!r.truncated_out);
            BOOST_TEST(r.err.size() == env.policy.stderr_limit_bytes());
            BOOST_TEST(r.err.find_first_not_of('\0') == std::string::npos);
            BOOST_TEST_MESSAGE(to_string(d) << ": 1 GiB of stderr in " << seconds(took) << " s, peak RSS "
                                            << peak / 1024 << " MiB (before " << rss_before / 1024 << " MiB)");
            BOOST_TEST(seconds(took) < 60.0);
            BOOST_TEST(peak < rss_before + 50 * 1024, "peak " << peak << " KiB, before " << rss_before << " KiB");
        }
    }
}

BOOST_AUTO_TEST_CASE(on_the_host_a_timeout_kills_the_process_group_and_a_setsid_escapee_does_not_hold_up_the_result)
{
    // What the host driver promises (doc/isolation.md): the process group is killed; a
    // process that left it with setsid is out of reach, and its pipes are given up after
    // the drain timeout.
    hostile_env env(driver::host);
    auto runner = env.runner();
    asio::io_context ctx;
    const int fds = settled_fd_count(ctx);
    const auto in_group = unique_seconds(), escaped = unique_seconds();
    exec_options o;
    o.timeout = 1s;
    auto r = run_coro(ctx, runner->execute({"sh", "-c",
                                            "setsid sh -c 'sleep " + escaped + " & exec sleep " + escaped + "' & "
                                            "sleep " + in_group + " & sleep " + in_group + " & wait"},
                                           o));
    BOOST_TEST(r.timed_out, describe(r));
    BOOST_TEST(seconds(r.duration) < 4.0);
    BOOST_TEST(no_process_matching(in_group));
    const auto survivors = processes_matching(escaped);
    BOOST_TEST_MESSAGE("host: " << survivors.size() << " setsid'd processes outlived the timeout, as documented");
    for (int pid : survivors) ::kill(pid, SIGKILL);
    check_nothing_left(escaped, fds);
}

BOOST_AUTO_TEST_CASE(in_bubblewrap_nothing_of_a_command_that_left_its_session_survives_a_timeout_or_a_cancel)
{
    SANDBOX_REQUIRE_DRIVER(driver::bubblewrap);
    hostile_env env(driver::bubblewrap);
    auto runner = env.runner();
    asio::io_context ctx;
    const int fds = settled_fd_count(ctx);
    const auto marker = unique_seconds();
    const std::vector<std::string> argv{"sh", "-c", "setsid sh -c 'sleep " + marker + " & exec sleep " + marker +
                                                        "' & sleep " + marker + " & echo started; wait"};
    exec_options o;
    o.timeout = 1s;
    auto r = run_coro(ctx, runner->execute(argv, o));
    BOOST_TEST(r.timed_out, describe(r));
    BOOST_TEST(seconds(r.duration) < 4.0);
    check_nothing_left(marker, fds, env.base.path);

    asio::cancellation_signal cancel;
    auto c = std::make_shared<outcome>();
    runner->async_run(ctx.get_executor(), argv, {},
                        asio::bind_cancellation_slot(cancel.slot(), [c](std::exception_ptr e, exec_result res) {
                            c->error = e;
                            c->result = std::move(res);
                            c->done = true;
                        }));
    BOOST_REQUIRE(run_until(ctx, [&] { return processes_matching(marker).size() >= 3; }, 10s));
    cancel.emit(asio::cancellation_type::terminal);
    BOOST_REQUIRE(run_until(ctx, [&] { return c->done; }, 10s));
    BOOST_TEST(c->code() == boost::system::error_code(asio::error::operation_aborted), c->message());
    check_nothing_left(marker, fds, env.base.path);
}

BOOST_AUTO_TEST_CASE(a_thousand_children_left_running_are_all_gone_when_the_command_ends)
{
    for (auto d : hostile_drivers()) {
        BOOST_TEST_CONTEXT(to_string(d))
        {
            hostile_env env(d, 60s);
            env.options.pids_limit = 1100;  // bubblewrap's cgroup must hold them all
            env.policy = env.policy.with_memory("2G");
            auto runner = env.runner();
            asio::io_context ctx;
            const int fds = settled_fd_count(ctx);
            const auto marker = unique_seconds();
            auto r = run_coro(ctx, runner->execute({"sh", "-c",
                                                    "i=0; while [ $i -lt 1000 ]; do sleep " + marker +
                                                        " & i=$((i+1)); done; echo forked"}),
                              90s);
            BOOST_TEST(r.success(), describe(r));
            BOOST_TEST(r.out == "forked\n");
            check_nothing_left(marker, fds, d == driver::host ? std::filesystem::path() : env.base.path);
        }
    }
}

BOOST_AUTO_TEST_CASE(a_command_that_never_reads_a_large_stdin_ends_at_its_own_exit)
{
    const std::string eight_mib(8 << 20, 'i');
    for (auto d : hostile_drivers()) {
        BOOST_TEST_CONTEXT(to_string(d))
        {
            hostile_env env(d);
            auto runner = env.runner();
            asio::io_context ctx;
            const int fds = settled_fd_count(ctx);
            for (const std::string script : {"exit 3", "sleep 0.3; echo slept"}) {
                auto r = run_coro(ctx, runner->execute({"sh", "-c", script}, eight_mib), 20s);
                BOOST_TEST(!r.timed_out, script << ": " << describe(r));
                BOOST_TEST(r.exit_code == (script == "exit 3" ? 3 : 0), describe(r));
                BOOST_TEST(seconds(r.duration) < 5.0);
            }
            check_nothing_left("sandbox-faults-none", fds, d == driver::host ? std::filesystem::path() : env.base.path);
        }
    }
}

BOOST_AUTO_TEST_CASE(zombies_a_command_never_waited_for_are_all_reaped)
{
    for (auto d : hostile_drivers()) {
        for (bool timeout : {false, true}) {
            BOOST_TEST_CONTEXT(to_string(d) << (timeout ? ", ended by its timeout" : ", exits by itself"))
            {
                hostile_env env(d);
                auto runner = env.runner();
                asio::io_context ctx;
                const int fds = settled_fd_count(ctx);
                // exec: the shell becomes a sleep, which never waits for the shell's children.
                const auto marker = unique_seconds(timeout ? 61 : 2);
                exec_options o;
                o.timeout = timeout ? 2s : 20s;
                auto run = start_one(ctx, *runner, {"sh", "-c", "true & true & true & exec sleep " + marker}, o);
                std::vector<int> zombies;
                run_until(ctx, [&] {
                    for (int pid : processes_matching(marker))
                        if (file_contents("/proc/" + std::to_string(pid) + "/comm") == "sleep\n") zombies = children_of(pid, true);
                    return zombies.size() >= 3 || run->done;
                }, 10s);
                BOOST_TEST(zombies.size() == 3u);
                BOOST_REQUIRE(run_until(ctx, [&] { return run->done; }, 30s));
                BOOST_TEST(!run->error, run->message());
                BOOST_TEST(run->result.timed_out == timeout, describe(run->result));
                if (!timeout) BOOST_TEST(run->result.success(), describe(run->result));
                BOOST_TEST(eventually([&] { return std::all_of(zombies.begin(), zombies.end(), gone); }, 5s));
                check_nothing_left(marker, fds, d == driver::host ? std::filesystem::path() : env.base.path);
            }
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()
