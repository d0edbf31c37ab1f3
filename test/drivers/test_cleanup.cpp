// SPDX-License-Identifier: BSL-1.0
// Nothing outlives a run: timeouts and cancellations end the command inside the container
// or namespace, containers are removed, no process of the command is left on the host, the
// cgroups and the work dir are removed (never following symlinks), also when the launch fails.
#include "driver_fixture.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <fstream>

using namespace sandbox;
using namespace sandbox::test;
using namespace asio::experimental::awaitable_operators;
namespace data = boost::unit_test::data;

// Named (not anonymous): the test cases' lambdas capture these types.
namespace cleanup_helpers {

void expect_clean(const driver_env& e) { BOOST_TEST(e.leftovers().empty(), "left in the base dir: " << join(e.leftovers())); }

// Cgroup directories named `name` under this process's memory and pids cgroups.
std::vector<std::filesystem::path> cgroups_named(const std::string& name)
{
    std::vector<std::filesystem::path> found;
    std::ifstream cg("/proc/self/cgroup");
    for (std::string line; std::getline(cg, line);) {
        const auto first = line.find(':'), second = line.find(':', first + 1);
        if (first == std::string::npos || second == std::string::npos) continue;
        const auto controllers = line.substr(first + 1, second - first - 1);
        const auto rel = std::filesystem::path(line.substr(second + 1)).relative_path();
        std::vector<std::filesystem::path> candidates;
        if (controllers.empty()) candidates.push_back(std::filesystem::path("/sys/fs/cgroup") / rel / name);
        for (const char* c : {"memory", "pids"})
            if (controllers.find(c) != std::string::npos)
                candidates.push_back(std::filesystem::path("/sys/fs/cgroup") / c / rel / name);
        for (const auto& p : candidates)
            if (std::filesystem::exists(p)) found.push_back(p);
    }
    return found;
}

// Records the run's sandbox name (work dir, container and cgroup name) once the command
// has printed "ready".
struct name_catcher {
    const driver_env& env;
    std::string name;
    bool ready = false;
    void operator()(stream_kind k, std::string_view chunk)
    {
        if (k != stream_kind::out || ready || chunk.find("ready") == std::string_view::npos) return;
        ready = true;
        name = env.current_work_dir_name();
    }
};

// Everything a run could leave behind is gone.
void expect_nothing_left(const driver_env& e, const std::string& name, const std::string& marker)
{
    BOOST_TEST(is_sandbox_name(name), "sandbox name seen during the run: '" << name << "'");
    if (is_container(e.d) && !name.empty())
        BOOST_TEST(!container_exists(e.d, name), "container " << name << " is still in `" << to_string(e.d) << " ps -a`");
    BOOST_TEST(no_process_matching(marker), "a process with '" << marker << "' is still running");
    if (!is_container(e.d) && !name.empty()) {
        const auto left = cgroups_named(name);
        BOOST_TEST(left.empty(), "cgroup left: " << (left.empty() ? "" : left.front().string()));
    }
    BOOST_TEST(!has_children());
    expect_clean(e);
}

bool is_aborted(const boost::system::system_error& err) { return err.code() == asio::error::operation_aborted; }

// Runs `argv` with a terminal cancellation emitted once `ready(stream, chunk)` is true for
// its output, and checks that the run ends with operation_aborted.
template <typename Ready>
void run_cancelled_when(command_runner& runner, std::vector<std::string> argv, Ready ready)
{
    asio::io_context ctx;
    asio::cancellation_signal signal;
    bool emitted = false;
    auto cb = [&](stream_kind k, std::string_view chunk) {
        if (ready(k, chunk) && !std::exchange(emitted, true))
            asio::post(ctx, [&] { signal.emit(asio::cancellation_type::terminal); });
    };
    std::exception_ptr error;
    bool done = false;
    asio::co_spawn(ctx, runner.execute(std::move(argv), std::nullopt, cb),
                   asio::bind_cancellation_slot(signal.slot(), [&](std::exception_ptr ep, exec_result) {
                       error = ep;
                       done = true;
                   }));
    ctx.run_for(60s);
    BOOST_REQUIRE(done);
    BOOST_REQUIRE(error);
    BOOST_CHECK_EXCEPTION(std::rethrow_exception(error), boost::system::system_error, is_aborted);
}

}  // namespace cleanup_helpers

using namespace cleanup_helpers;

BOOST_AUTO_TEST_SUITE(nothing_outlives_a_run)

BOOST_DATA_TEST_CASE(a_timeout_removes_the_container_and_every_process_of_the_command, data::make(isolating_drivers),
                     d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    e.policy = e.policy.with_timeout(6s);  // containers start in a few hundred ms, seconds on a loaded machine
    const auto marker = "31." + random_digits();
    name_catcher names{e};
    // A background child, and a main process that ignores SIGTERM.
    const std::string script =
        "trap '' TERM; sleep " + marker + " & echo ready; sleep " + marker + "; sleep " + marker;
    const auto r = e.run({"sh", "-c", script}, std::nullopt, std::ref(names));
    BOOST_TEST_INFO(describe(r));
    BOOST_TEST(r.timed_out);
    BOOST_TEST(r.exit_code == exit_codes::timeout);
    BOOST_TEST((r.timeout == timeout_reason::wall));
    BOOST_TEST(r.out == "ready\n");
    BOOST_TEST((r.duration < 20s));
    // Checked as soon as execute() returned: the container is already gone.
    expect_nothing_left(e, names.name, "sleep " + marker);
}

BOOST_DATA_TEST_CASE(losing_an_awaitable_operators_race_ends_the_sandbox, data::make(isolating_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    auto runner = e.runner();
    asio::io_context ctx;
    const auto marker = "33." + random_digits();
    name_catcher names{e};
    auto race = [&]() -> asio::awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        std::vector<std::string> argv{"sh", "-c", "sleep " + marker + " & echo ready; sleep " + marker};
        auto waiter = [&]() -> asio::awaitable<void> {
            asio::steady_timer t(ex);
            // Until the command is running inside its sandbox (at most 20 s), then a little more.
            for (int i = 0; i < 1000 && !names.ready; ++i) {
                t.expires_after(20ms);
                co_await t.async_wait(asio::use_awaitable);
            }
            t.expires_after(200ms);
            co_await t.async_wait(asio::use_awaitable);
        };
        auto winner = co_await (runner->execute(std::move(argv), std::nullopt, std::ref(names)) || waiter());
        BOOST_TEST(winner.index() == 1u);
    };
    const auto start = std::chrono::steady_clock::now();
    run_coro(ctx, race(), 60s);
    BOOST_TEST(names.ready);
    BOOST_TEST((std::chrono::steady_clock::now() - start < 25s));
    expect_nothing_left(e, names.name, "sleep " + marker);
}

BOOST_DATA_TEST_CASE(a_cancellation_slot_ends_the_sandbox_with_operation_aborted, data::make(isolating_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    auto runner = e.runner();
    const auto marker = "34." + random_digits();
    name_catcher names{e};
    run_cancelled_when(*runner, {"sh", "-c", "trap '' TERM; echo ready; sleep " + marker + "; sleep " + marker},
                       [&](stream_kind k, std::string_view chunk) {
                           names(k, chunk);
                           return names.ready;
                       });
    expect_nothing_left(e, names.name, "sleep " + marker);
}

BOOST_DATA_TEST_CASE(background_children_do_not_outlive_the_main_process, data::make(every_driver), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    const auto marker = "35." + random_digits();
    const auto r = e.sh("sleep " + marker + " & sleep " + marker + " & echo started");
    BOOST_TEST_INFO(describe(r));
    BOOST_TEST(r.success());
    BOOST_TEST(r.out == "started\n");
    BOOST_TEST((r.duration < 20s));
    BOOST_TEST(no_process_matching("sleep " + marker));
    BOOST_TEST(!has_children());
    if (d != driver::host) expect_clean(e);
}

// A process that leaves the process group (setsid), as a daemon does, is still part of the
// run: killed when the main process ends and when the run times out. bubblewrap ends its pid
// namespace; landlock kills the cgroup, or (without cgroups, an unprivileged caller here)
// its launcher, the subreaper the orphans come back to, kills them.
BOOST_DATA_TEST_CASE(a_process_that_leaves_the_group_is_killed_with_the_run,
                     data::make({driver::bubblewrap, driver::landlock}), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    const auto marker = "36." + random_digits();
    const auto r = e.sh("setsid sleep " + marker + " & setsid sh -c 'sleep " + marker + " & sleep " + marker +
                        "' & sleep 0.2; echo started; exit 3");
    BOOST_TEST_INFO(describe(r));
    BOOST_TEST(r.exit_code == 3);
    BOOST_TEST(r.out == "started\n");
    BOOST_TEST(no_process_matching("sleep " + marker));
    e.policy = e.policy.with_timeout(2s);
    const auto t = e.sh("trap '' TERM; setsid sleep " + marker + " & sleep " + marker + "; sleep " + marker);
    BOOST_TEST_INFO(describe(t));
    BOOST_TEST(t.timed_out);
    BOOST_TEST(no_process_matching("sleep " + marker));
    BOOST_TEST(!has_children());
    expect_clean(e);
}

// The same when the run is killed at once: no grace (a timeout's SIGKILL comes first), or a
// terminal cancellation. Without a cgroup, landlock's launcher is asked to kill the tree
// rather than killed with its process group, which would leave the daemon to init.
BOOST_DATA_TEST_CASE(a_process_that_leaves_the_group_is_killed_with_a_run_killed_at_once,
                     data::make({driver::bubblewrap, driver::landlock}), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    const auto marker = "37." + random_digits();
    const std::string script = "setsid sh -c 'sleep " + marker + " & sleep " + marker + "' & setsid sleep " + marker +
                               " & sleep 0.3; echo started; sleep " + marker;
    e.policy = e.policy.with_timeout(2s);
    e.options.kill_grace = 0ms;
    const auto t = e.sh(script);
    BOOST_TEST_INFO(describe(t));
    BOOST_TEST(t.timed_out);
    BOOST_TEST(t.out == "started\n");
    BOOST_TEST(no_process_matching("sleep " + marker));

    e.policy = e.policy.with_timeout(30s);
    run_cancelled_when(*e.runner(), {"sh", "-c", script}, [](stream_kind, std::string_view chunk) {
        return chunk.find("started") != std::string_view::npos;
    });
    BOOST_TEST(no_process_matching("sleep " + marker));
    BOOST_TEST(!has_children());
    expect_clean(e);
}

BOOST_DATA_TEST_CASE(removing_the_work_dir_never_follows_symlinks, data::make(isolating_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    scratch_dir outside;
    const auto precious = outside.sub("precious", 0777);
    { std::ofstream(precious / "keep") << "keep me\n"; }
    { std::ofstream(outside.path / "top") << "top\n"; }
    const std::string script =
        "ln -s \"$1\" link-dir && ln -s \"$1/keep\" link-file && ln -s \"$2\" link-outside && "
        "mkdir -p sub/deeper && ln -s \"$1\" sub/deeper/link && echo f > sub/file && "
        "mkdir locked && echo g > locked/g && ln -s \"$1\" locked/link && chmod 0500 locked && echo planted";
    const auto r = e.sh(script, {precious.string(), outside.path.string()});
    BOOST_TEST_INFO(describe(r));
    BOOST_TEST(r.success());
    BOOST_TEST(r.out == "planted\n");
    BOOST_TEST(std::filesystem::exists(precious / "keep"));
    BOOST_TEST(std::filesystem::exists(outside.path / "top"));
    BOOST_TEST(dir_entries(precious) == std::vector<std::string>{"keep"});
    expect_clean(e);
}

BOOST_DATA_TEST_CASE(a_launch_failure_after_the_work_dir_exists_removes_it, data::make(isolating_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    scratch_dir locked(0700);  // the sandbox user (65534) cannot enter it
    const auto inner = locked.sub("inner", 0777);
    std::string expect_prefix;
    switch (d) {
    case driver::docker:
    case driver::podman:
        e.options.image = "sandbox-test/no-such-image-" + random_digits() + ":latest";
        expect_prefix = "Failed to start " + std::string(to_string(d)) + ": ";
        break;
    case driver::bubblewrap:
        if (::geteuid() != 0) {
            BOOST_TEST_MESSAGE("bubblewrap can enter every directory its caller can: no failure to provoke");
            return;
        }
        e.policy = e.policy.with_writable_paths({inner});
        expect_prefix = "Failed to start bwrap: ";
        break;
    default:
        // firejail reports its own failures as the command's exit status, not as launch errors:
        // its work dir must still be removed after a failing run.
        e.policy = e.policy.with_writable_paths({inner});
        {
            const auto r = e.sh("exit 3");
            BOOST_TEST(r.exit_code == 3);
        }
        expect_clean(e);
        return;
    }
    try {
        const auto r = e.run({"true"});
        BOOST_ERROR("no launch_error; " << describe(r));
    } catch (const launch_error& err) {
        const std::string what = err.what();
        BOOST_TEST(what.rfind(expect_prefix, 0) == 0u, what);
        if (d == driver::bubblewrap) BOOST_TEST(what.find(inner.string()) != std::string::npos, what);
    }
    expect_clean(e);
}

// The engine client is asked to remove a container only when the run was ended by a timeout
// or a cancellation (`--rm` handles a normal exit), exactly once, as `rm -f <name>` (podman:
// `rm -f -t 0 <name>`), and a normal run does not pay for an extra client invocation. A fake
// client that logs its arguments shows what the runner asked for; no engine is needed.
BOOST_DATA_TEST_CASE(the_engine_is_told_to_remove_a_container_only_after_ending_a_run, data::make(container_drivers),
                     d)
{
    driver_env e(d);
    scratch_dir dir;
    const auto log = dir.path / "client.log";
    const auto client = dir.path / "fake-client";
    std::ofstream(client) << "#!/bin/sh\necho \"$*\" >> '" << log.string()
                          << "'\nif [ \"$1\" = run ] && [ \"$SANDBOX_FAKE_SLOW\" = 1 ]; then exec sleep 30; fi\nexit 0\n";
    ::chmod(client.c_str(), 0755);
    e.options.binary = client.string();

    // Listings are not removals: the runner's sweep for orphans (ps --filter label=)
    // and, when a removal printed nothing, the look for what is left.
    auto removals_and_runs = [&] {
        std::vector<std::string> out;
        for (auto& l : split_lines(read_text(log)))
            if (l.rfind("ps ", 0) != 0) out.push_back(l);
        return out;
    };
    const auto quick = e.run({"true"});
    BOOST_TEST_INFO(describe(quick));
    BOOST_TEST(quick.success());
    auto lines = removals_and_runs();
    BOOST_TEST(lines.size() == 1u, "client invocations after a normal run:\n" << join(lines, "\n"));
    BOOST_REQUIRE(!lines.empty());
    BOOST_TEST(lines[0].rfind("run --rm -i --init --name sandbox-", 0) == 0u, lines[0]);

    std::filesystem::remove(log);
    env_guard slow("SANDBOX_FAKE_SLOW", "1");
    e.policy = e.policy.with_timeout(300ms);
    const auto timed = e.run({"true"});
    BOOST_TEST(timed.timed_out);
    lines = removals_and_runs();
    // The fake client removes nothing and never made the cid file, so never asked for a
    // container: after the removal, one look, and no wait for a late one.
    const auto all = split_lines(read_text(log));
    const auto looks = std::count_if(all.begin(), all.end(), [](const std::string& l) { return l.rfind("ps -a -q", 0) == 0; });
    BOOST_TEST(looks == 1);
    BOOST_REQUIRE(!lines.empty());
    const auto name_at = lines[0].find("--name ");
    BOOST_REQUIRE(name_at != std::string::npos);
    const auto name = lines[0].substr(name_at + 7, 32);
    const std::string expected_rm = d == driver::podman ? "rm -f -t 0 " + name : "rm -f " + name;
    // docker's client is only ever SIGKILLed, so the command's SIGTERM comes from the engine.
    const std::size_t expected_calls = d == driver::podman ? 2u : 3u;
    BOOST_TEST(lines.size() == expected_calls, "client invocations after a timeout:\n" << join(lines, "\n"));
    BOOST_TEST(std::count(lines.begin(), lines.end(), expected_rm) == 1, "expected one '" << expected_rm << "'");
    if (d == driver::docker) BOOST_TEST(std::count(lines.begin(), lines.end(), "kill --signal TERM " + name) == 1);
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
}

BOOST_AUTO_TEST_CASE(a_long_cleanup_does_not_delay_another_executions_timeout)
{
    // 100,000 files in a work dir: removing them takes seconds, on a thread of its own. An
    // execution started as that removal begins must still time out on time.
    SANDBOX_REQUIRE_DRIVER(driver::bubblewrap);
    const auto r = make_runner(execution_policy::defaults().with_timeout(120s), driver::bubblewrap);
    auto quick = make_runner(execution_policy::defaults().with_timeout(500ms), driver::host);
    asio::io_context ctx;
    std::optional<double> late_ms;
    std::optional<std::chrono::steady_clock::time_point> removal_done;
    bool started_b = false;
    auto b = [&]() -> asio::awaitable<void> {
        const auto t0 = std::chrono::steady_clock::now();
        std::vector<std::string> argv{"sleep", "5"};
        const auto res = co_await quick->execute(std::move(argv));
        BOOST_TEST(res.timed_out);
        late_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - (t0 + 500ms)).count();
    };
    auto a = [&]() -> asio::awaitable<void> {
        std::vector<std::string> argv{"sh", "-c", "seq 100000 | xargs touch && echo created"};
        const auto res = co_await r->execute(std::move(argv), std::nullopt, [&](stream_kind, std::string_view chunk) {
            if (!started_b && chunk.find("created") != std::string_view::npos) {
                started_b = true;
                asio::co_spawn(ctx, b(), asio::detached);
            }
        });
        removal_done = std::chrono::steady_clock::now();
        BOOST_TEST(res.exit_code == 0, res.err);
    };
    asio::co_spawn(ctx, a(), asio::detached);
    ctx.run_for(120s);
    BOOST_TEST_REQUIRE(late_ms.has_value());
    BOOST_TEST(*late_ms < 50.0, "the 500 ms timeout fired " << *late_ms << " ms late");
    BOOST_TEST(removal_done.has_value());
}

BOOST_AUTO_TEST_SUITE_END()
