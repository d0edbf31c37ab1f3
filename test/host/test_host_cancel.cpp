// SPDX-License-Identifier: BSL-1.0
// Per-operation cancellation: the tree is killed, reaped, and the awaiter sees
// operation_aborted.
#include "host_fixture.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <random>
#include <thread>

using namespace sandbox;
using namespace sandbox::test;
using namespace asio::experimental::awaitable_operators;

namespace {

std::string unique_marker()
{
    std::random_device rd;
    return "30." + std::to_string(100000 + rd() % 800000);
}

bool gone(const std::string& needle)
{
    for (int i = 0; i < 200; ++i) {
        if (processes_matching(needle).empty()) return true;
        std::this_thread::sleep_for(10ms);
    }
    return false;
}

bool is_aborted(const boost::system::system_error& e) { return e.code() == asio::error::operation_aborted; }

}  // namespace

namespace boost::asio {
inline std::ostream& boost_test_print_type(std::ostream& os, cancellation_type t)
{
    return os << "cancellation_type(" << static_cast<unsigned>(t) << ")";
}
}  // namespace boost::asio

BOOST_FIXTURE_TEST_SUITE(test_host_cancel, host_fixture)

BOOST_AUTO_TEST_CASE(losing_a_race_kills_and_reaps_the_tree)
{
    auto r = runner();
    asio::io_context ctx;
    const auto marker = unique_marker();
    const auto start = std::chrono::steady_clock::now();
    auto race = [&]() -> asio::awaitable<void> {
        asio::steady_timer t(co_await asio::this_coro::executor, 200ms);
        std::vector<std::string> argv{"sh", "-c", "sleep " + marker + " & sleep " + marker + "; true"};
        auto winner = co_await (r->execute(std::move(argv)) || t.async_wait(asio::use_awaitable));
        BOOST_TEST(winner.index() == 1u);
    };
    run_coro(ctx, race());
    BOOST_TEST((std::chrono::steady_clock::now() - start < 2s));
    BOOST_TEST(!has_children());
    BOOST_TEST(gone("sleep " + marker));
}

BOOST_AUTO_TEST_CASE(cancelled_execute_throws_operation_aborted)
{
    auto r = runner();
    asio::io_context ctx;
    asio::cancellation_signal signal;
    asio::steady_timer t(ctx, 100ms);
    t.async_wait([&](boost::system::error_code) { signal.emit(asio::cancellation_type::terminal); });
    std::exception_ptr error;
    std::optional<exec_result> result;
    asio::co_spawn(ctx, r->execute({"sleep", "30"}),
                   asio::bind_cancellation_slot(signal.slot(), [&](std::exception_ptr e, exec_result res) {
                       error = e;
                       result = std::move(res);
                   }));
    ctx.run_for(10s);
    BOOST_REQUIRE(error);
    BOOST_CHECK_EXCEPTION(std::rethrow_exception(error), boost::system::system_error, is_aborted);
    BOOST_TEST(!has_children());
}

BOOST_DATA_TEST_CASE(every_cancellation_type_ends_a_sigterm_ignoring_command,
                     boost::unit_test::data::make({asio::cancellation_type::terminal, asio::cancellation_type::partial,
                                                   asio::cancellation_type::total}),
                     type)
{
    host_fixture f;
    f.options.kill_grace = 200ms;
    auto r = f.runner();
    asio::io_context ctx;
    asio::cancellation_signal signal;
    std::exception_ptr error;
    bool done = false;
    // Cancel once the child has said it ignores SIGTERM, so the SIGKILL path is exercised.
    auto cb = [&](stream_kind, std::string_view chunk) {
        if (chunk.find("ready") != std::string_view::npos) asio::post(ctx, [&] { signal.emit(type); });
    };
    const auto start = std::chrono::steady_clock::now();
    // Awaitable frames pass only terminal cancellation unless told otherwise.
    auto body = [&]() -> asio::awaitable<void> {
        co_await asio::this_coro::reset_cancellation_state(asio::enable_total_cancellation());
        auto argv = child_args({"ignore-term", "30000"});
        co_await r->execute(std::move(argv), std::nullopt, cb);
    };
    asio::co_spawn(ctx, body(),
                   asio::bind_cancellation_slot(signal.slot(), [&](std::exception_ptr e) {
                       error = e;
                       done = true;
                   }));
    ctx.run_for(10s);
    BOOST_REQUIRE(done);
    BOOST_CHECK_EXCEPTION(std::rethrow_exception(error), boost::system::system_error, is_aborted);
    BOOST_TEST((std::chrono::steady_clock::now() - start < 3s));
    BOOST_TEST(!has_children());
}

BOOST_AUTO_TEST_CASE(cancelling_many_at_once_leaves_nothing_behind)
{
    auto r = runner();
    asio::io_context ctx;
    asio::steady_timer t(ctx, 300ms);  // creates the reactor before counting descriptors
    const auto fds = open_fd_count();
    const auto marker = unique_marker();
    int aborted = 0;
    asio::cancellation_signal signals[50];
    for (auto& s : signals)
        asio::co_spawn(ctx, r->execute({"sh", "-c", "sleep " + marker + "; true"}),
                       asio::bind_cancellation_slot(s.slot(), [&](std::exception_ptr e, exec_result) {
                           try {
                               if (e) std::rethrow_exception(e);
                           } catch (const boost::system::system_error& err) {
                               if (is_aborted(err)) ++aborted;
                           }
                       }));
    t.async_wait([&](boost::system::error_code) {
        for (auto& s : signals) s.emit(asio::cancellation_type::terminal);
    });
    ctx.run_for(20s);
    BOOST_TEST(aborted == 50);
    BOOST_TEST(!has_children());
    BOOST_TEST(open_fd_count() == fds);
    BOOST_TEST(gone("sleep " + marker));
}

BOOST_AUTO_TEST_CASE(cancellation_after_completion_is_harmless)
{
    auto r = runner();
    asio::io_context ctx;
    asio::cancellation_signal signal;
    std::optional<exec_result> result;
    asio::co_spawn(ctx, r->execute({"echo", "fast"}),
                   asio::bind_cancellation_slot(signal.slot(), [&](std::exception_ptr e, exec_result res) {
                       BOOST_TEST(!e);
                       result = std::move(res);
                   }));
    ctx.run_for(10s);
    signal.emit(asio::cancellation_type::terminal);
    ctx.restart();
    ctx.run_for(100ms);
    BOOST_REQUIRE(result.has_value());
    BOOST_TEST(result->out == "fast\n");
}

BOOST_AUTO_TEST_SUITE_END()
