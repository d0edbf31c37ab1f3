// SPDX-License-Identifier: BSL-1.0
// No process can be made at the spawn: a pids cgroup at its limit (root ignores
// RLIMIT_NPROC), and RLIMIT_NPROC for an unprivileged caller.
#include "fault_support.hpp"

#include <boost/test/unit_test.hpp>

#include <grp.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

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
