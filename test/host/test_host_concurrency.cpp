// SPDX-License-Identifier: BSL-1.0
// Many executions on one io_context, from one thread or several, and no leaks over time.
#include "host_fixture.hpp"

#include <boost/asio/detached.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <thread>

using namespace sandbox;
using namespace sandbox::test;

namespace {

asio::awaitable<void> run_one(command_runner& runner, int i, std::atomic<int>& ok)
{
    std::vector<std::string> argv{"sh", "-c", "echo job-$0; sleep 0.2; echo done-$0 >&2", std::to_string(i)};
    const auto r = co_await runner.execute(std::move(argv));
    if (r.success() && r.out == "job-" + std::to_string(i) + "\n" && r.err == "done-" + std::to_string(i) + "\n")
        ++ok;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(test_host_concurrency, host_fixture)

BOOST_AUTO_TEST_CASE(three_hundred_at_once_on_one_thread)
{
    constexpr int n = 300;
    policy = policy.with_timeout(60s);
    auto r = runner();
    asio::io_context ctx;
    std::atomic<int> ok{0};
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) asio::co_spawn(ctx, run_one(*r, i, ok), asio::detached);
    ctx.run_for(60s);
    const auto took = std::chrono::steady_clock::now() - start;
    BOOST_TEST(ok.load() == n);
    // They ran concurrently: 300 sequential runs would take at least 60 s.
    BOOST_TEST((took < 30s));
    BOOST_TEST(!has_children());
}

BOOST_AUTO_TEST_CASE(two_hundred_with_the_context_run_by_four_threads)
{
    constexpr int n = 200;
    policy = policy.with_timeout(60s);
    auto r = runner();
    asio::io_context ctx;
    std::atomic<int> ok{0};
    for (int i = 0; i < n; ++i) asio::co_spawn(ctx, run_one(*r, i, ok), asio::detached);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) threads.emplace_back([&] { ctx.run_for(60s); });
    for (auto& t : threads) t.join();
    BOOST_TEST(ok.load() == n);
    BOOST_TEST(!has_children());
}

BOOST_AUTO_TEST_CASE(multi_threaded_timeouts_and_output)
{
    // Timeouts, big outputs and quick exits mixed, on a thread pool.
    auto sleeper = make_runner(policy.with_timeout(300ms), driver::host);
    auto writer = make_runner(policy.with_timeout(30s).with_output_caps(4096, 4096), driver::host);
    asio::thread_pool pool(4);
    std::atomic<int> timed_out{0}, big{0}, quick{0}, errors{0};
    for (int i = 0; i < 60; ++i) {
        asio::co_spawn(
            pool,
            [&, i]() -> asio::awaitable<void> {
                try {
                    std::vector<std::string> argv;
                    switch (i % 3) {
                    case 0: argv = {"sh", "-c", "sleep 5"}; break;
                    case 1: argv = child_args({"pattern", "2000000"}); break;
                    default: argv = {"true"}; break;
                    }
                    auto& r = i % 3 == 0 ? *sleeper : *writer;
                    const auto res = co_await r.execute(std::move(argv));
                    if (i % 3 == 0 && res.timed_out) ++timed_out;
                    if (i % 3 == 1 && res.success() && res.truncated_out && res.out.size() == 4096) ++big;
                    if (i % 3 == 2 && res.success()) ++quick;
                } catch (...) {
                    ++errors;
                }
            },
            asio::detached);
    }
    pool.join();
    BOOST_TEST(errors.load() == 0);
    BOOST_TEST(timed_out.load() == 20);
    BOOST_TEST(big.load() == 20);
    BOOST_TEST(quick.load() == 20);
    BOOST_TEST(!has_children());
}

BOOST_AUTO_TEST_CASE(no_growth_of_descriptors_or_zombies_over_500_runs)
{
    auto r = runner();
    asio::io_context ctx;
    // Warm up lazily created state (reactor descriptors, thread-local buffers).
    run_coro(ctx, r->execute({"true"}));
    const int fds_before = open_fd_count();
    int failures = 0;
    for (int i = 0; i < 500; ++i) {
        std::vector<std::string> argv;
        switch (i % 5) {
        case 0: argv = {"true"}; break;
        case 1: argv = {"sh", "-c", "echo x; echo y >&2; exit 3"}; break;
        case 2: argv = {"__missing__"}; break;
        case 3: argv = {"sh", "-c", "sleep 10 & echo bg"}; break;
        default: argv = {"cat"}; break;
        }
        std::optional<std::string> in;
        if (i % 5 == 4) in = "stdin data";
        const auto res = run_coro(ctx, r->execute(std::move(argv), std::move(in)));
        if (i % 5 == 0 && !res.success()) ++failures;
        if (i % 5 == 1 && res.exit_code != 3) ++failures;
        if (i % 5 == 2 && res.exit_code != 127) ++failures;
        if (i % 5 == 4 && res.out != "stdin data") ++failures;
    }
    BOOST_TEST(failures == 0);
    BOOST_TEST(open_fd_count() == fds_before);
    BOOST_TEST(!has_children());
}

BOOST_AUTO_TEST_SUITE_END()
