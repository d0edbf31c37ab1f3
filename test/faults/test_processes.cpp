// SPDX-License-Identifier: BSL-1.0
// No process can be made at the spawn: a pids cgroup at its limit (root ignores
// RLIMIT_NPROC), and RLIMIT_NPROC for an unprivileged caller.
#include "fault_support.hpp"

#include <boost/test/unit_test.hpp>

#include <grp.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

using namespace sandbox;
using namespace sandbox::test;

namespace {

// An execution that could not get a process: EAGAIN, said as the system says it.
void check_eagain_result(const outcome& o, const std::string& prefix)
{
    BOOST_TEST_CONTEXT(o.message() << describe(o.result))
    {
        BOOST_TEST(!o.error);
        BOOST_TEST(o.result.exit_code == exit_codes::command_not_found);
        BOOST_TEST(o.result.start_error == system_code(EAGAIN));
        BOOST_TEST(mentions(o.result.err, prefix));
        BOOST_TEST(mentions(o.result.err, "Resource temporarily unavailable"));
    }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(processes_run_out)

BOOST_AUTO_TEST_CASE(host_spawns_past_a_pids_cgroup_limit_fail_with_eagain_and_work_again_once_it_is_lifted)
{
    const auto marker = unique_seconds(1);
    auto runner = make_runner(execution_policy::defaults().with_timeout(10s), driver::host);
    asio::io_context ctx;
    run_coro(ctx, runner->execute({"true"}));  // the library's threads exist before the limit
    const int fds = open_fd_count();
    {
        pids_cgroup group;
        // Room for three commands; the other seven cannot be made.
        group.set_max(group.current() + 3);
        std::vector<std::shared_ptr<outcome>> all;
        for (int i = 0; i < 10; ++i) all.push_back(start_one(ctx, *runner, {"sleep", marker}));
        BOOST_REQUIRE(run_until(ctx, [&] { return all_done(all); }, 30s));
        int ok = 0, failed = 0;
        for (const auto& o : all) {
            if (o->result.success()) {
                ++ok;
                continue;
            }
            check_eagain_result(*o, "Failed to start host process: sleep: ");
            ++failed;
        }
        BOOST_TEST_MESSAGE("pids cgroup: " << ok << " ran, " << failed << " could not be made");
        BOOST_TEST(ok <= 3);
        BOOST_TEST(failed >= 7);

        // Nothing at all may start at the limit.
        group.set_max(group.current());
        auto none = run_coro(ctx, runner->execute({"true"}));
        outcome o;
        o.result = none;
        check_eagain_result(o, "Failed to start host process: true: ");
        group.leave();
    }
    auto again = run_coro(ctx, runner->execute({"sh", "-c", "echo back"}));
    BOOST_TEST(again.success());
    BOOST_TEST(again.out == "back\n");
    check_nothing_left(marker, fds);
}

BOOST_AUTO_TEST_CASE(a_bubblewrap_launch_past_a_pids_cgroup_limit_is_a_launch_error_with_eagain_and_leaves_no_work_dir)
{
    SANDBOX_REQUIRE_DRIVER(driver::bubblewrap);
    driver_env env(driver::bubblewrap);
    auto runner = env.runner();
    asio::io_context ctx;
    run_coro(ctx, runner->execute({"true"}));
    const int fds = open_fd_count();
    {
        pids_cgroup group;
        group.set_max(group.current());
        auto o = start_one(ctx, *runner, {"true"});
        BOOST_REQUIRE(run_until(ctx, [&] { return o->done; }, 30s));
        BOOST_TEST(o->launch_failed(), o->message() << describe(o->result));
        BOOST_TEST(o->code() == system_code(EAGAIN));
        BOOST_TEST(mentions(o->message(), "Failed to start bwrap: "));
        BOOST_TEST(mentions(o->message(), "Resource temporarily unavailable"));
        BOOST_TEST(run_dirs_in(env.base.path).empty(), join(run_dirs_in(env.base.path)));
        group.leave();
    }
    auto again = run_coro(ctx, runner->execute({"sh", "-c", "echo back"}));
    BOOST_TEST(again.success(), describe(again));
    BOOST_TEST(again.out == "back\n");
    check_nothing_left("sandbox-faults-none", fds, env.base.path);
}

// Runs one of the disabled `fresh_process` cases below in a new process of this program
// (exec'd, not only forked, so the sanitizers' runtimes and the library start afresh there).
static int run_in_a_fresh_process(const std::string& test_case)
{
    const auto self = std::filesystem::read_symlink("/proc/self/exe").string();
    const std::string cmd = "'" + self + "' --run_test=fresh_process/" + test_case + " --report_level=no";
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// RLIMIT_NPROC binds only an unprivileged caller: a fresh process that became uid 65534
// runs the library there.
BOOST_AUTO_TEST_CASE(an_unprivileged_caller_past_rlimit_nproc_gets_eagain_and_runs_again_once_it_is_raised)
{
    if (::geteuid() != 0) {
        BOOST_TEST_MESSAGE("SKIPPED: needs root to become another user");
        return;
    }
    BOOST_TEST(run_in_a_fresh_process("past_rlimit_nproc_as_an_unprivileged_user") == 0);
}

// A fresh process, with none of the library's threads yet, whose very first launch meets a
// full pids cgroup: the library cannot make its spawner threads either, and must still
// answer with the EAGAIN result rather than throw out of the io_context or hang; its threads
// come once the limit is lifted.
BOOST_AUTO_TEST_CASE(a_first_launch_that_cannot_make_the_librarys_threads_gets_eagain_and_the_threads_come_later)
{
    BOOST_TEST(run_in_a_fresh_process("first_launch_at_the_pids_limit") == 0);
}

// Dropping a long-lived process whose child SIGKILL cannot reach (a set-id program that became
// root, started by an unprivileged caller) returns at once; the child is reaped, not left a
// zombie, once it ends by itself.
BOOST_AUTO_TEST_CASE(dropping_a_process_sigkill_cannot_reach_does_not_wait_for_it)
{
    if (::geteuid() != 0) {
        BOOST_TEST_MESSAGE("SKIPPED: needs root to install a set-id program");
        return;
    }
    temp_dir dir;
    const auto sleeper = dir.path / "sleeper";
    std::filesystem::copy_file(build::setuid_sleeper(), sleeper);
    BOOST_REQUIRE(::chown(sleeper.c_str(), 0, 0) == 0 && ::chmod(sleeper.c_str(), 04755) == 0);
    BOOST_REQUIRE(::chmod(dir.path.c_str(), 0755) == 0);
    ::setenv("SANDBOX_TEST_SLEEPER", sleeper.c_str(), 1);
    BOOST_TEST(run_in_a_fresh_process("drop_a_process_sigkill_cannot_reach") == 0);
    ::unsetenv("SANDBOX_TEST_SLEEPER");
}

BOOST_AUTO_TEST_SUITE_END()

// The bodies of the cases above, each run alone in a process of its own.
BOOST_AUTO_TEST_SUITE(fresh_process, *boost::unit_test::disabled())

BOOST_AUTO_TEST_CASE(past_rlimit_nproc_as_an_unprivileged_user)
{
    BOOST_REQUIRE(::setgroups(0, nullptr) == 0 && ::setgid(65534) == 0 && ::setuid(65534) == 0);
    auto runner = make_runner(execution_policy::in("/").with_timeout(10s), driver::host);
    BOOST_REQUIRE(run_sync(*runner, {"true"}).success());  // this process's threads, first
    rlimit old{};
    ::getrlimit(RLIMIT_NPROC, &old);
    rlimit none = old;
    none.rlim_cur = 0;  // below what uid 65534 already has: nothing new at all
    BOOST_REQUIRE(::setrlimit(RLIMIT_NPROC, &none) == 0);
    const auto r = run_sync(*runner, {"true"});
    ::setrlimit(RLIMIT_NPROC, &old);
    outcome o;
    o.result = r;
    check_eagain_result(o, "Failed to start host process: true: ");
    BOOST_TEST(run_sync(*runner, {"true"}).success());
}

BOOST_AUTO_TEST_CASE(drop_a_process_sigkill_cannot_reach)
{
    BOOST_REQUIRE(::setgroups(0, nullptr) == 0 && ::setgid(65534) == 0 && ::setuid(65534) == 0);
    auto runner = make_runner(execution_policy::in("/").with_timeout(30s), driver::host);
    // Two such children: the io_context of one runs on after the drop, the other's is destroyed.
    auto ran_on = std::make_unique<asio::io_context>(), destroyed = std::make_unique<asio::io_context>();
    std::vector<pid_t> pids;
    for (auto* ctx : {ran_on.get(), destroyed.get()}) {
        auto p = runner->start(ctx->get_executor(), {std::getenv("SANDBOX_TEST_SLEEPER"), "3"});
        pids.push_back(p.pid());
        const auto said = run_coro(*ctx, p.read_line());
        BOOST_REQUIRE(said == std::optional<std::string>("root"));  // out of this user's reach now
        BOOST_REQUIRE(::kill(p.pid(), 0) != 0 && errno == EPERM);
        const auto t0 = std::chrono::steady_clock::now();
        p = {};
        const auto took = std::chrono::steady_clock::now() - t0;
        BOOST_TEST(took < 1s, "dropping took " << std::chrono::duration<double>(took).count() << " s");
        BOOST_TEST(std::filesystem::exists("/proc/" + std::to_string(pids.back())));  // it runs on
    }
    destroyed.reset();  // a thread of the library reaps that one
    ran_on->restart();
    ran_on->run_for(10s);  // the exit watch reaps this one when it ends
    for (const pid_t pid : pids) {
        bool gone = false;
        for (int i = 0; i < 100 && !gone; ++i) {
            gone = !std::filesystem::exists("/proc/" + std::to_string(pid));
            if (!gone) std::this_thread::sleep_for(100ms);
        }
        BOOST_TEST(gone, "pid " << pid << " was not reaped 10 s after the drop");
    }
}

BOOST_AUTO_TEST_CASE(first_launch_at_the_pids_limit)
{
    auto runner = make_runner(execution_policy::defaults().with_timeout(10s), driver::host);
    {
        pids_cgroup group;
        group.set_max(group.current());  // not one more thread or process
        outcome o;
        o.result = run_sync(*runner, {"true"});
        check_eagain_result(o, "Failed to start host process: true: ");
    }
    const auto again = run_sync(*runner, {"sh", "-c", "echo back"});
    BOOST_TEST(again.success(), describe(again));
    BOOST_TEST(again.out == "back\n");
}

BOOST_AUTO_TEST_SUITE_END()
