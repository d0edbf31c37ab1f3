// SPDX-License-Identifier: BSL-1.0
// When a pool of sandboxes started ahead starts a taken one's replacement: when the execution
// that took it completes, when its refill delay has passed, or at once when an execution found
// none ready; never while a short command is still starting. The sandboxes here are plain
// sleeping children: the pool's timing, not a driver, is under test.
#include "drivers/warm_pool.hpp"

#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <spawn.h>

#include <chrono>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

using namespace sandbox::detail;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

extern char** environ;

namespace {

// Records when each sandbox was started; each is a `sleep` in a session of its own.
struct starts {
    std::mutex mutex;
    std::vector<clock_type::time_point> at;

    std::size_t count()
    {
        std::lock_guard lock(mutex);
        return at.size();
    }
    clock_type::time_point last()
    {
        std::lock_guard lock(mutex);
        return at.back();
    }
    // Waits up to `limit` for the count to reach `n`.
    bool reach(std::size_t n, std::chrono::milliseconds limit = 10s)
    {
        const auto end = clock_type::now() + limit;
        while (count() < n && clock_type::now() < end) std::this_thread::sleep_for(1ms);
        return count() >= n;
    }
};

warm_sandbox sleeping_sandbox(starts& s)
{
    {
        std::lock_guard lock(s.mutex);
        s.at.push_back(clock_type::now());
    }
    posix_spawnattr_t attr;
    ::posix_spawnattr_init(&attr);
    ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
    char* const argv[] = {const_cast<char*>("sleep"), const_cast<char*>("30"), nullptr};
    pid_t pid = -1;
    const int rc = ::posix_spawnp(&pid, "sleep", nullptr, &attr, argv, environ);
    ::posix_spawnattr_destroy(&attr);
    if (rc != 0) throw std::runtime_error("cannot start sleep");
    warm_sandbox w;
    w.started = std::make_shared<started_sandbox>();
    w.started->child = child_process(pid, unique_fd{});
    return w;
}

// A pool kept at one sandbox, closed at the end of the test. The records are shared with the
// pool's threads, which may still be leaving a start as a test ends.
struct pool_of_one {
    explicit pool_of_one(std::chrono::milliseconds refill_delay)
    {
        pool = std::make_shared<warm_pool>([r = records] { return sleeping_sandbox(*r); }, refill_delay);
        std::promise<void> ready;
        pool->fill(1, 60s, [&ready](std::exception_ptr e) {
            if (e) ready.set_exception(e);
            else ready.set_value();
        });
        BOOST_REQUIRE(ready.get_future().wait_for(30s) == std::future_status::ready);
        BOOST_REQUIRE(s.count() == 1u);
    }
    ~pool_of_one() { pool->close(); }

    std::shared_ptr<starts> records = std::make_shared<starts>();
    starts& s = *records;
    std::shared_ptr<warm_pool> pool;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(warm_pool_refill)

BOOST_AUTO_TEST_CASE(nothing_replaces_a_taken_sandbox_while_its_execution_runs_within_the_delay)
{
    pool_of_one p(std::chrono::hours(1));
    auto& s = p.s;
    auto& pool = p.pool;
    auto w = pool->take();
    BOOST_REQUIRE(w);
    std::this_thread::sleep_for(300ms);
    BOOST_TEST(s.count() == 1u);
}

BOOST_AUTO_TEST_CASE(the_replacement_starts_when_the_execution_completes)
{
    pool_of_one p(std::chrono::hours(1));
    auto& s = p.s;
    auto& pool = p.pool;
    auto w = pool->take();
    BOOST_REQUIRE(w);
    BOOST_TEST(s.count() == 1u);
    w->started->on_end.reset();  // what the process runner does as it completes
    BOOST_TEST(s.reach(2));
    BOOST_TEST(pool->ready() <= 1u);
}

BOOST_AUTO_TEST_CASE(the_replacement_starts_after_the_delay_while_a_long_execution_runs)
{
    pool_of_one p(warm_pool::default_refill_delay);
    auto& s = p.s;
    auto& pool = p.pool;
    const auto taken = clock_type::now();
    auto w = pool->take();
    BOOST_REQUIRE(w);
    BOOST_TEST(s.reach(2));
    BOOST_TEST((s.last() - taken >= warm_pool::default_refill_delay));
}

BOOST_AUTO_TEST_CASE(an_execution_that_finds_none_ready_starts_the_owed_replacement_at_once)
{
    pool_of_one p(std::chrono::hours(1));
    auto& s = p.s;
    auto& pool = p.pool;
    auto first = pool->take();
    BOOST_REQUIRE(first);
    auto second = pool->take();
    BOOST_TEST(!second);  // it launches cold, and the pool catches up
    BOOST_TEST(s.reach(2));
}

BOOST_AUTO_TEST_CASE(a_replacement_is_started_once_whatever_comes_first)
{
    pool_of_one p(20ms);
    auto& s = p.s;
    auto& pool = p.pool;
    auto w = pool->take();
    BOOST_REQUIRE(w);
    BOOST_TEST(s.reach(2));
    w->started->on_end.reset();  // after the delay: already repaid
    std::this_thread::sleep_for(300ms);
    BOOST_TEST(s.count() == 2u);
    BOOST_TEST(pool->ready() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()
