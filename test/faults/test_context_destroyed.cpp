// SPDX-License-Identifier: BSL-1.0
// The io_context goes away with executions in flight (destroyed while idle, or stopped from
// two running threads first), and with a session and a long-lived process alive in a
// coroutine on it: every process is killed and reaped, every work dir and session dir
// removed, no descriptor kept.
#include "fault_support.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/test/unit_test.hpp>

#include <thread>

using namespace sandbox;
using namespace sandbox::test;

namespace {

struct in_flight_case {
    driver d;
    int count;
};

std::vector<in_flight_case> in_flight_cases()
{
    std::vector<in_flight_case> out{{driver::host, 20}};
    if (driver_ready(driver::bubblewrap)) out.push_back({driver::bubblewrap, 5});
    if (driver_ready(driver::docker)) out.push_back({driver::docker, 2});
    return out;
}

// Starts `count` executions of `sleep <marker>` plus two more that are still being launched
// when the context goes, and waits until the first ones run.
std::vector<std::shared_ptr<outcome>> start_in_flight(asio::io_context& ctx, command_runner& runner,
                                                      const std::string& marker, int count)
{
    std::vector<std::shared_ptr<outcome>> all;
    for (int i = 0; i < count; ++i) all.push_back(start_one(ctx, runner, {"sleep", marker}));
    BOOST_TEST(run_until(ctx, [&] { return static_cast<int>(named("sleep", "sleep " + marker).size()) >= count; }, 30s));
    for (int i = 0; i < 2; ++i) all.push_back(start_one(ctx, runner, {"sleep", marker}));
    ctx.restart();
    ctx.poll();  // their launches begin
    return all;
}

std::vector<std::string> our_containers(const std::vector<std::string>& names)
{
    std::vector<std::string> left;
    for (const auto& n : container_names(driver::docker))
        if (std::find(names.begin(), names.end(), n) != names.end()) left.push_back(n);
    return left;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(context_destroyed)

BOOST_AUTO_TEST_CASE(destroying_the_io_context_with_executions_in_flight_kills_reaps_and_removes_everything)
{
    for (const auto& c : in_flight_cases()) {
        BOOST_TEST_CONTEXT(to_string(c.d))
        {
            scratch_dir base;
            auto runner = make_runner(execution_policy::in(base.path).with_timeout(60s), c.d, options_for(c.d));
            const int fds = [] {
                asio::io_context warm;
                (void)settled_fd_count(warm);  // the library's cached /dev/null, not the context's own
                return open_fd_count();
            }();
            const auto marker = unique_seconds();
            std::vector<std::string> containers;
            {
                asio::io_context ctx;
                auto all = start_in_flight(ctx, *runner, marker, c.count);
                if (c.d == driver::docker)
                    for (const auto& n : container_names(driver::docker))
                        if (is_sandbox_name(n)) containers.push_back(n);
                BOOST_TEST(std::none_of(all.begin(), all.end(), [](const auto& o) { return o->done; }));
            }
            check_nothing_left(marker, fds, base.path);
            if (c.d == driver::docker) {
                BOOST_TEST(!containers.empty());
                BOOST_TEST(eventually([&] { return our_containers(containers).empty(); }, 30s),
                           "containers left: " << join(our_containers(containers)));
            }
            // A new context, the same runner: it works.
            asio::io_context next;
            auto r = run_coro(next, runner->execute({"sh", "-c", "echo next"}), 60s);
            BOOST_TEST(r.success(), describe(r));
            BOOST_TEST(r.out == "next\n");
        }
    }
}

BOOST_AUTO_TEST_CASE(stopping_a_context_run_by_two_threads_then_destroying_it_leaves_nothing)
{
    for (const auto& c : in_flight_cases()) {
        if (c.d == driver::docker) continue;  // the same path as above, at a container's cost
        BOOST_TEST_CONTEXT(to_string(c.d))
        {
            scratch_dir base;
            auto runner = make_runner(execution_policy::in(base.path).with_timeout(60s), c.d, options_for(c.d));
            const int fds = [] {
                asio::io_context warm;
                (void)settled_fd_count(warm);  // the library's cached /dev/null, not the context's own
                return open_fd_count();
            }();
            const auto marker = unique_seconds();
            {
                asio::io_context ctx;
                auto work = asio::make_work_guard(ctx);
                std::vector<std::shared_ptr<outcome>> all;
                for (int i = 0; i < c.count; ++i) all.push_back(start_one(ctx, *runner, {"sleep", marker}));
                std::thread t1([&] { ctx.run(); }), t2([&] { ctx.run(); });
                BOOST_TEST(eventually([&] { return static_cast<int>(named("sleep", "sleep " + marker).size()) >= c.count; }, 30s));
                for (int i = 0; i < 2; ++i) all.push_back(start_one(ctx, *runner, {"sleep", marker}));
                ctx.stop();
                t1.join();
                t2.join();
            }
            check_nothing_left(marker, fds, base.path);
        }
    }
}

BOOST_AUTO_TEST_CASE(a_session_and_a_long_lived_process_alive_in_a_coroutine_go_with_the_destroyed_context)
{
    std::vector<driver> drivers{driver::host};
    if (driver_ready(driver::bubblewrap)) drivers.push_back(driver::bubblewrap);
    for (auto d : drivers) {
        BOOST_TEST_CONTEXT(to_string(d))
        {
            scratch_dir base, state;
            const auto policy = execution_policy::in(base.path).with_timeout(60s);
            auto runner = make_runner(policy, d, options_for(d));
            session_options settings;
            settings.state_root = state.path;
            const int fds = [] {
                asio::io_context warm;
                (void)settled_fd_count(warm);  // the library's cached /dev/null, not the context's own
                return open_fd_count();
            }();
            const auto in_process = unique_seconds(), in_session = unique_seconds();
            bool ready = false, ended = false;
            {
                asio::io_context ctx;
                asio::co_spawn(ctx, [&]() -> asio::awaitable<void> {
                    session s(policy, d, options_for(d), settings);
                    std::vector<std::string> argv{"sh", "-c", "echo ready; exec sleep " + in_process};
                    auto ex = co_await asio::this_coro::executor;
                    auto p = runner->start(ex, std::move(argv));
                    auto line = co_await p.read_line();
                    ready = line == std::optional<std::string>("ready");
                    co_await s.run("sleep " + in_session);
                    ended = true;
                }, asio::detached);
                BOOST_TEST(run_until(ctx, [&] { return ready && !named("sleep", "sleep " + in_session).empty(); }, 30s));
                BOOST_TEST(!run_dirs_in(d == driver::host ? state.path : base.path).empty());
            }
            BOOST_TEST(!ended);
            check_nothing_left(in_process, fds, base.path);
            check_nothing_left(in_session, fds, state.path);
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()
