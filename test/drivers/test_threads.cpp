// SPDX-License-Identifier: BSL-1.0
// A pool thread that stops running the io_context must not take the sandboxes it happened to
// start with it (bwrap --die-with-parent watches the thread that spawned it).
#include "driver_fixture.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/test/unit_test.hpp>

#include <thread>

using namespace sandbox;
using namespace sandbox::test;

BOOST_AUTO_TEST_SUITE(threads)

BOOST_AUTO_TEST_CASE(a_sandbox_outlives_the_pool_thread_that_started_it)
{
    SANDBOX_REQUIRE_DRIVER(driver::bubblewrap);
    driver_env e(driver::bubblewrap);
    auto r = e.runner();
    asio::io_context ctx;
    auto guard = asio::make_work_guard(ctx);
    std::optional<exec_result> result;
    std::exception_ptr error;
    // Thread B alone runs the context while the execution starts, then leaves.
    std::thread b([&] {
        std::vector<std::string> argv{"sh", "-c", "sleep 1; echo finished"};
        asio::co_spawn(ctx, r->execute(std::move(argv)), [&](std::exception_ptr ep, exec_result res) {
            error = ep;
            result = std::move(res);
            guard.reset();
        });
        ctx.run_for(300ms);
    });
    b.join();
    // Thread A carries on.
    ctx.restart();
    ctx.run_for(20s);
    BOOST_REQUIRE(!error);
    BOOST_REQUIRE(result.has_value());
    BOOST_TEST(result->exit_code == 0, describe(*result));
    BOOST_TEST(result->out == "finished\n");
}

BOOST_AUTO_TEST_SUITE_END()
