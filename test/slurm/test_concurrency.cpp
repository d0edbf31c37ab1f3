// SPDX-License-Identifier: BSL-1.0
// Many job steps at once from one io_context: each keeps its own stdin, output and result.
#include "slurm_fixture.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

using namespace sandbox;
using namespace sandbox::test;
namespace data = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(slurm_concurrency)

BOOST_DATA_TEST_CASE(twenty_steps_at_once_on_one_io_context, data::make(inner_drivers), inner)
{
    SANDBOX_REQUIRE_SLURM(inner);
    slurm_env e(inner);
    e.policy = e.policy.with_timeout(60s);
    constexpr int n = 20;
    auto runner = e.runner();
    asio::io_context ctx;
    std::vector<std::optional<exec_result>> results(n);
    std::vector<std::string> errors;
    int finished = 0;
    for (int i = 0; i < n; ++i) {
        auto one = [&runner, &results, i]() -> asio::awaitable<void> {
            std::vector<std::string> argv{"sh", "-c", "read x; echo job-$0-$x; sleep 0.5; echo done-$0 >&2; exit $(($0 % 4))",
                                          std::to_string(i)};
            std::optional<std::string> input = "in" + std::to_string(i) + "\n";
            output_callback no_callback;
            auto op = runner->execute(std::move(argv), std::move(input), std::move(no_callback));
            auto r = co_await std::move(op);
            results[static_cast<std::size_t>(i)] = std::move(r);
        };
        // co_spawn keeps the callable alive while its coroutine runs.
        asio::co_spawn(ctx, std::move(one), [&, i](std::exception_ptr ep) {
            ++finished;
            if (!ep) return;
            try {
                std::rethrow_exception(ep);
            } catch (const std::exception& ex) {
                errors.push_back(std::to_string(i) + ": " + ex.what());
            }
        });
    }
    const auto start = std::chrono::steady_clock::now();
    ctx.run_for(120s);
    const auto took = seconds_since(start);
    BOOST_TEST(finished == n);
    BOOST_TEST(errors.empty(), join(errors, "\n"));
    for (int i = 0; i < n; ++i) {
        const auto& r = results[static_cast<std::size_t>(i)];
        BOOST_TEST_REQUIRE(r.has_value(), "no result for " << i);
        BOOST_TEST_INFO_SCOPE(i << ": " << describe(*r));
        BOOST_TEST(r->exit_code == i % 4);
        BOOST_TEST(!r->timed_out);
        BOOST_TEST(r->out == "job-" + std::to_string(i) + "-in" + std::to_string(i) + "\n");
        BOOST_TEST(r->err == "done-" + std::to_string(i) + "\n");
    }
    BOOST_TEST_MESSAGE("20 slurm steps (" << to_string(inner) << " inside) took " << took << " s");
    BOOST_TEST(took < 90.0);
    BOOST_TEST(!has_children());
    // Jobs that ended on their own may be COMPLETING a moment longer.
    BOOST_TEST(eventually([] { return queued(our_job_prefix()).empty(); }, 30s), join(queued(our_job_prefix()), "; "));
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
}

BOOST_AUTO_TEST_SUITE_END()
