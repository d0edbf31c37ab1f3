// SPDX-License-Identifier: BSL-1.0
// The descriptor limit lowered while executions are in flight: the ones that cannot get
// their pipes fail with EMFILE, the others finish, and once the limit is back everything
// works again with nothing leaked.
#include "fault_support.hpp"

#include <boost/test/unit_test.hpp>

using namespace sandbox;
using namespace sandbox::test;

BOOST_AUTO_TEST_SUITE(descriptors_run_out)

BOOST_AUTO_TEST_CASE(host_executions_that_cannot_get_descriptors_fail_with_emfile_and_the_rest_finish)
{
    const auto marker = unique_seconds(1);  // `sleep 1.xxxxxxx`
    auto runner = make_runner(execution_policy::defaults().with_timeout(10s), driver::host);
    asio::io_context ctx;
    run_coro(ctx, runner->execute({"true"}));  // the spawner threads and /dev/null exist from now on
    const int fds = open_fd_count();

    std::vector<std::shared_ptr<outcome>> all;
    nofile_limit limit;
    for (int i = 0; i < 100; ++i) all.push_back(start_one(ctx, *runner, {"sleep", marker}));
    // Let the first half spawn, then leave room for a few more only.
    run_until(ctx, [&] { return processes_matching(marker).size() >= 100; }, 5s);
    limit.lower_to(static_cast<rlim_t>(open_fd_count() + 40));
    for (int i = 0; i < 100; ++i) all.push_back(start_one(ctx, *runner, {"sleep", marker}));
    BOOST_REQUIRE_MESSAGE(run_until(ctx, [&] { return all_done(all); }, 30s), "executions still pending");
    limit.restore();

    int ok = 0, emfile = 0;
    for (const auto& o : all) {
        BOOST_TEST_CONTEXT(o->message() << describe(o->result))
        {
            BOOST_TEST(!o->error);  // the host driver reports a start failure as a result
            if (o->result.success()) {
                ++ok;
                continue;
            }
            BOOST_TEST(o->result.exit_code == exit_codes::command_not_found);
            BOOST_TEST(o->result.start_error == system_code(EMFILE));
            BOOST_TEST(mentions(o->result.err, "Failed to start host process"));
            BOOST_TEST(mentions(o->result.err, "Too many open files"));
            BOOST_TEST(!o->result.timed_out);
            ++emfile;
        }
    }
    BOOST_TEST_MESSAGE("host: " << ok << " finished, " << emfile << " failed with EMFILE");
    BOOST_TEST(ok >= 100);
    BOOST_TEST(emfile > 0);
    BOOST_TEST(ok + emfile == 200);

    // With the limit back, the same runner on the same context works again.
    auto again = run_coro(ctx, runner->execute({"sh", "-c", "echo back"}));
    BOOST_TEST(again.success());
    BOOST_TEST(again.out == "back\n");
    check_nothing_left(marker, fds);
}

BOOST_AUTO_TEST_CASE(bubblewrap_executions_that_cannot_get_descriptors_fail_with_a_launch_error_naming_emfile)
{
    SANDBOX_REQUIRE_DRIVER(driver::bubblewrap);
    driver_env env(driver::bubblewrap);
    const auto marker = unique_seconds(1);
    auto runner = env.runner();
    asio::io_context ctx;
    run_coro(ctx, runner->execute({"true"}));
    const int fds = open_fd_count();

    std::vector<std::shared_ptr<outcome>> all;
    nofile_limit limit;
    for (int i = 0; i < 8; ++i) all.push_back(start_one(ctx, *runner, {"sleep", marker}));
    // The commands themselves (bwrap's own command line names them too): all eight started.
    run_until(ctx, [&] { return processes_matching("sleep " + marker, true).size() >= 8; }, 10s);
    limit.lower_to(static_cast<rlim_t>(open_fd_count() + 12));
    for (int i = 0; i < 12; ++i) all.push_back(start_one(ctx, *runner, {"sleep", marker}));
    BOOST_REQUIRE_MESSAGE(run_until(ctx, [&] { return all_done(all); }, 60s), "executions still pending");
    limit.restore();

    int ok = 0, emfile = 0;
    for (const auto& o : all) {
        BOOST_TEST_CONTEXT(o->message() << describe(o->result))
        {
            if (!o->error) {
                BOOST_TEST(o->result.success());
                ++ok;
                continue;
            }
            BOOST_TEST(o->launch_failed());
            BOOST_TEST(o->code() == system_code(EMFILE));
            BOOST_TEST(mentions(o->message(), "Failed to start bwrap"));
            BOOST_TEST(mentions(o->message(), "Too many open files"));
            ++emfile;
        }
    }
    BOOST_TEST_MESSAGE("bubblewrap: " << ok << " finished, " << emfile << " failed with EMFILE");
    BOOST_TEST(ok >= 8);
    BOOST_TEST(emfile > 0);
    BOOST_TEST(ok + emfile == 20);

    auto again = run_coro(ctx, runner->execute({"sh", "-c", "echo back"}));
    BOOST_TEST(again.success());
    BOOST_TEST(again.out == "back\n");
    check_nothing_left(marker, fds, env.base.path);
}

// The limit drops below what is open while a command that filled its work dir runs: the run
// still completes, and the work dir it could not remove then (no descriptor to open it with)
// is removed by a later run once descriptors are back, not left for the next process.
BOOST_AUTO_TEST_CASE(a_work_dir_that_could_not_be_removed_for_want_of_descriptors_goes_with_a_later_run)
{
    SANDBOX_REQUIRE_DRIVER(driver::bubblewrap);
    driver_env env(driver::bubblewrap);
    const auto marker = unique_seconds(1);
    auto runner = env.runner();
    asio::io_context ctx;
    run_coro(ctx, runner->execute({"true"}));
    const int fds = open_fd_count();

    auto o = start_one(ctx, *runner,
                       {"sh", "-c", "mkdir -p /work/d/e && echo x > /work/d/e/f && echo y > /work/g && sleep " + marker});
    BOOST_REQUIRE(run_until(ctx, [&] { return processes_matching(marker).size() >= 1; }, 10s));
    {
        nofile_limit limit;
        limit.lower_to(3);  // below what is open: not one more descriptor
        BOOST_REQUIRE_MESSAGE(run_until(ctx, [&] { return o->done; }, 30s), "the execution did not complete");
    }
    BOOST_TEST(!o->error, o->message());
    BOOST_TEST(o->result.success(), describe(o->result));
    // Nothing has run since: the work dir is still there, so the case does test the later removal.
    BOOST_TEST(run_dirs_in(env.base.path).size() == 1u);

    auto again = run_coro(ctx, runner->execute({"true"}));
    BOOST_TEST(again.success(), describe(again));
    check_nothing_left(marker, fds, env.base.path);
}

BOOST_AUTO_TEST_SUITE_END()
