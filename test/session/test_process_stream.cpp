// SPDX-License-Identifier: BSL-1.0
// sandbox::process as an Asio stream: Asio's composed operations (async_read_until,
// async_read, async_write) on it with every kind of completion token, mixed with the
// coroutine helpers, per-operation cancellation, and the same on every driver.
#include "driver_availability.hpp"
#include "ended_runs.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <thread>

using namespace sandbox;
using namespace sandbox::test;
namespace bdata = boost::unit_test::data;
using error_code = boost::system::error_code;

namespace {

struct stream_fixture {
    temp_dir base;
    bool searchable = (std::filesystem::permissions(base.path, std::filesystem::perms::others_exec,
                                                    std::filesystem::perm_options::add),
                       true);
    asio::io_context ctx;
    std::unique_ptr<command_runner> runner(driver d = driver::host)
    {
        return make_runner(execution_policy::defaults().with_base_dir(base.path), d, test_options());
    }
};

// Runs the context until `done` or the limit.
void run_until(asio::io_context& ctx, const bool& done, std::chrono::seconds limit = 30s)
{
    const auto end = std::chrono::steady_clock::now() + limit;
    ctx.restart();
    while (!done && std::chrono::steady_clock::now() < end) ctx.run_one_for(100ms);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(process_stream)

BOOST_FIXTURE_TEST_CASE(composed_operations_work_with_plain_callbacks, stream_fixture)
{
    auto r = runner();
    auto p = r->start(ctx.get_executor(), {"cat"});
    static const std::string request = "first line\nsecond line\n";
    std::string got;
    error_code write_ec, read_ec;
    bool done = false;
    asio::async_write(p, asio::buffer(request), [&](error_code ec, std::size_t n) {
        write_ec = ec;
        BOOST_TEST(n == request.size());
        asio::async_read_until(p, asio::dynamic_buffer(got), "second line\n", [&](error_code ec2, std::size_t) {
            read_ec = ec2;
            done = true;
        });
    });
    run_until(ctx, done);
    BOOST_TEST_REQUIRE(done);
    BOOST_TEST(!write_ec, write_ec.message());
    BOOST_TEST(!read_ec, read_ec.message());
    BOOST_TEST(got == request);
    p.close_stdin();
    BOOST_TEST(run_coro(ctx, p.wait()).exit_code == 0);
}

BOOST_FIXTURE_TEST_CASE(the_end_of_output_is_eof_as_on_a_socket, stream_fixture)
{
    auto r = runner();
    auto p = r->start(ctx.get_executor(), {"printf", "abc"});
    std::string got;
    auto [ec, n] = run_coro(ctx, asio::async_read(p, asio::dynamic_buffer(got), asio::as_tuple(asio::use_awaitable)));
    BOOST_TEST(ec == asio::error::eof, ec.message());
    BOOST_TEST(n == 3u);
    BOOST_TEST(got == "abc");
    // read_some, the convenience, says 0 at the end.
    std::array<char, 8> buf{};
    BOOST_TEST(run_coro(ctx, p.read_some(asio::buffer(buf))) == 0u);
}

BOOST_FIXTURE_TEST_CASE(use_future_from_another_thread, stream_fixture)
{
    auto r = runner();
    auto p = r->start(ctx.get_executor(), {"cat"});
    auto guard = asio::make_work_guard(ctx);
    std::thread io([this] { ctx.run(); });
    static const std::string line = "over a future\n";
    auto wrote = asio::async_write(p, asio::buffer(line), asio::use_future);
    std::string got;
    auto read = asio::async_read_until(p, asio::dynamic_buffer(got), '\n', asio::use_future);
    BOOST_TEST(wrote.get() == line.size());
    BOOST_TEST(read.get() == line.size());
    BOOST_TEST(got == line);
    p.kill();
    guard.reset();
    ctx.stop();
    io.join();
}

BOOST_FIXTURE_TEST_CASE(deferred_operations_are_awaited_or_composed, stream_fixture)
{
    auto r = runner();
    auto p = r->start(ctx.get_executor(), {"cat"});
    const auto got = run_coro(ctx, [&]() -> asio::awaitable<std::string> {
        static const std::string hello = "hello";
        // The default token is deferred: the operation starts when awaited.
        auto write_op = p.async_write_some(asio::buffer(hello));
        const std::size_t n = co_await std::move(write_op);
        BOOST_TEST(n == hello.size());
        std::string in(16, '\0');
        std::size_t total = 0;
        while (total < hello.size()) {
            auto read_op = p.async_read_some(asio::buffer(in.data() + total, in.size() - total));
            total += co_await std::move(read_op);
        }
        in.resize(total);
        co_return in;
    }());
    BOOST_TEST(got == "hello");
    p.kill();
}

BOOST_FIXTURE_TEST_CASE(read_line_leftovers_come_first, stream_fixture)
{
    auto r = runner();
    // One write: read_line sees both lines at once and keeps the second.
    auto p = r->start(ctx.get_executor(), {"printf", "one\\ntwo\\n"});
    const auto first = run_coro(ctx, p.read_line());
    BOOST_TEST(first.value_or("<eof>") == "one");
    std::string rest;
    auto [ec, n] = run_coro(ctx, asio::async_read(p, asio::dynamic_buffer(rest), asio::as_tuple(asio::use_awaitable)));
    BOOST_TEST(ec == asio::error::eof);
    BOOST_TEST(rest == "two\n");
    BOOST_TEST(n == 4u);
}

BOOST_FIXTURE_TEST_CASE(a_cancelled_read_leaves_the_process_and_the_stream_usable, stream_fixture)
{
    auto r = runner();
    auto p = r->start(ctx.get_executor(), {"cat"});
    asio::cancellation_signal cancel;
    std::array<char, 64> buf{};
    error_code read_ec;
    bool done = false;
    p.async_read_some(asio::buffer(buf), asio::bind_cancellation_slot(cancel.slot(), [&](error_code ec, std::size_t) {
                          read_ec = ec;
                          done = true;
                      }));
    asio::steady_timer t(ctx, 50ms);
    t.async_wait([&](error_code) { cancel.emit(asio::cancellation_type::terminal); });
    run_until(ctx, done);
    BOOST_TEST_REQUIRE(done);
    BOOST_TEST(read_ec == asio::error::operation_aborted, read_ec.message());
    BOOST_TEST(p.running());  // a read's cancellation is the read's, not the process's
    const auto echoed = run_coro(ctx, [&]() -> asio::awaitable<std::optional<std::string>> {
        co_await p.write("still here\n");
        co_return co_await p.read_line();
    }());
    BOOST_TEST(echoed.value_or("<eof>") == "still here");
    p.kill();
    BOOST_TEST(run_coro(ctx, p.wait()).term_signal == SIGKILL);
}

BOOST_FIXTURE_TEST_CASE(writing_after_close_stdin_fails_with_a_code, stream_fixture)
{
    auto r = runner();
    auto p = r->start(ctx.get_executor(), {"cat"});
    p.close_stdin();
    auto [ec, n] = run_coro(ctx, [&]() -> asio::awaitable<std::tuple<error_code, std::size_t>> {
        static const std::string x = "x";
        co_return co_await asio::async_write(p, asio::buffer(x), asio::as_tuple(asio::use_awaitable));
    }());
    BOOST_TEST((ec == asio::error::broken_pipe || ec == asio::error::bad_descriptor), ec.message());
    BOOST_TEST(n == 0u);
    BOOST_TEST(run_coro(ctx, p.wait()).exit_code == 0);
}

// Every driver: sessions and long-lived processes work on each.
const std::vector<driver>& stream_drivers = every_driver;

BOOST_DATA_TEST_CASE_F(stream_fixture, a_line_protocol_over_async_read_until_on_every_driver,
                       bdata::make(stream_drivers), d)
{
    if (!require_driver(d)) return;
    auto r = runner(d);
    // A line-oriented server: answers each request line with its length.
    auto p = r->start(ctx.get_executor(), {"sh", "-c", "while read -r l; do echo \"${#l}\"; done"});
    const auto answers = run_coro(
        ctx,
        [&]() -> asio::awaitable<std::vector<std::string>> {
            asio::streambuf in;
            std::vector<std::string> out;
            for (const std::string request : {"a\n", "three\n", "seventeen chars!!\n"}) {
                co_await asio::async_write(p, asio::buffer(request), asio::use_awaitable);
                const auto n = co_await asio::async_read_until(p, in, '\n', asio::use_awaitable);
                std::string line(asio::buffers_begin(in.data()), asio::buffers_begin(in.data()) + n - 1);
                in.consume(n);
                out.push_back(line);
            }
            co_return out;
        }(),
        60s);
    BOOST_TEST(answers == (std::vector<std::string>{"1", "5", "17"}), boost::test_tools::per_element());
    p.close_stdin();
    BOOST_TEST(run_coro(ctx, p.wait(), 60s).exit_code == 0);
}

BOOST_AUTO_TEST_SUITE_END()
