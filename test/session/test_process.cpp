// SPDX-License-Identifier: BSL-1.0
// Long-lived processes: the Go backend's process conformance cases on every driver, plus
// wait() memoised, kill() idempotent over the whole tree, and destruction killing.
#include "driver_availability.hpp"
#include "ended_runs.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <future>
#include <optional>

#include <random>
#include <thread>

using namespace sandbox;
using namespace sandbox::test;
namespace bdata = boost::unit_test::data;

namespace {

// Every driver: sessions and long-lived processes work on each.
const std::vector<driver>& process_drivers = every_driver;

std::string unique_sleep()
{
    std::random_device rd;
    return "31." + std::to_string(100000 + rd() % 800000);
}

bool gone(const std::string& needle)
{
    for (int i = 0; i < 300; ++i) {
        if (processes_matching(needle).empty()) return true;
        std::this_thread::sleep_for(10ms);
    }
    return false;
}

struct process_fixture {
    temp_dir base;
    // Searchable by the uid bubblewrap runs as, as /tmp is.
    bool searchable = (std::filesystem::permissions(base.path, std::filesystem::perms::others_exec,
                                                    std::filesystem::perm_options::add),
                       true);
    asio::io_context ctx;
    std::unique_ptr<command_runner> runner(driver d, execution_policy p = execution_policy::defaults())
    {
        return make_runner(p.with_base_dir(base.path), d, test_options());
    }
    process start(command_runner& r, std::vector<std::string> argv) { return r.start(ctx.get_executor(), std::move(argv)); }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(test_process)

BOOST_DATA_TEST_CASE_F(process_fixture, echo_round_trip, bdata::make(process_drivers), d)
{
    if (!require_driver(d)) return;
    auto r = runner(d);
    auto p = start(*r, {"cat"});
    auto line = run_coro(ctx, [&]() -> asio::awaitable<std::optional<std::string>> {
        co_await p.write("ping\n");
        co_return co_await p.read_line();
    }(), 15s);
    BOOST_TEST(line.value_or("<eof>") == "ping");
    p.kill();
}

BOOST_DATA_TEST_CASE_F(process_fixture, kill_terminates_and_wait_returns, bdata::make(process_drivers), d)
{
    if (!require_driver(d)) return;
    auto r = runner(d);
    const auto marker = unique_sleep();
    auto p = start(*r, {"sleep", marker});
    BOOST_TEST(p.running());
    p.kill();
    const auto res = run_coro(ctx, p.wait(), 15s);
    BOOST_TEST(res.exit_code == 137);
    BOOST_TEST(res.term_signal == SIGKILL);
    BOOST_TEST(!p.running());
    p.kill();  // idempotent, also after the end
    BOOST_TEST(gone("sleep " + marker));
}

BOOST_DATA_TEST_CASE_F(process_fixture, self_exit_makes_wait_return, bdata::make(process_drivers), d)
{
    if (!require_driver(d)) return;
    auto r = runner(d);
    auto p = start(*r, {"sh", "-c", "exit 3"});
    const auto res = run_coro(ctx, p.wait(), 15s);
    BOOST_TEST(res.exit_code == 3);
    BOOST_TEST(res.term_signal == 0);
}

BOOST_DATA_TEST_CASE_F(process_fixture, stderr_captured_without_deadlock, bdata::make(process_drivers), d)
{
    if (!require_driver(d)) return;
    auto r = runner(d);
    auto p = start(*r, {"sh", "-c", "echo oops >&2; exec cat"});
    auto line = run_coro(ctx, [&]() -> asio::awaitable<std::optional<std::string>> {
        asio::steady_timer t(co_await asio::this_coro::executor);
        for (int i = 0; i < 250 && p.stderr_tail().find("oops") == std::string::npos; ++i) {
            t.expires_after(20ms);
            co_await t.async_wait(asio::use_awaitable);
        }
        co_await p.write("alive\n");
        co_return co_await p.read_line();
    }(), 15s);
    BOOST_TEST(p.stderr_tail().find("oops") != std::string::npos);
    BOOST_TEST(line.value_or("<eof>") == "alive");
    p.kill();
}

BOOST_DATA_TEST_CASE_F(process_fixture, the_whole_tree_ends_with_kill_and_with_the_owner, bdata::make(process_drivers), d)
{
    if (!require_driver(d)) return;
    auto r = runner(d);
    const auto a = unique_sleep(), b = unique_sleep();
    {
        auto p = start(*r, {"sh", "-c", "sleep " + a + " & sleep " + a + "; true"});
        std::this_thread::sleep_for(300ms);
        p.kill();
        run_coro(ctx, p.wait(), 15s);
    }
    BOOST_TEST(gone("sleep " + a));
    {
        auto p = start(*r, {"sh", "-c", "sleep " + b + " & sleep " + b + "; true"});
        std::this_thread::sleep_for(300ms);
    }  // destroyed while running
    BOOST_TEST(gone("sleep " + b));
    BOOST_TEST(!has_children());
    // Killed while the engine may still be creating the container: its runtime's init must
    // not be left waiting in the cgroup the library made for it.
    const auto strays = processes_of_ended_runs();
    BOOST_TEST(strays.empty(), strays.size() << " left, first: " << (strays.empty() ? "" : strays.front()));
}

BOOST_AUTO_TEST_CASE(wait_gives_the_same_result_to_every_caller)
{
    process_fixture f;
    auto r = f.runner(driver::host);
    auto p = f.start(*r, {"sh", "-c", "echo bye >&2; sleep 0.2; exit 5"});
    std::vector<exec_result> results;
    for (int i = 0; i < 3; ++i)
        asio::co_spawn(f.ctx, p.wait(), [&](std::exception_ptr e, exec_result res) {
            BOOST_TEST(!e);
            results.push_back(res);
        });
    f.ctx.run_for(10s);
    BOOST_REQUIRE(results.size() == 3u);
    for (const auto& res : results) {
        BOOST_TEST(res.exit_code == 5);
        BOOST_TEST(res.err == "bye\n");
        BOOST_TEST((res == results.front()));
    }
    const auto later = run_coro(f.ctx, p.wait());
    BOOST_TEST((later == results.front()));
}

BOOST_AUTO_TEST_CASE(wait_can_be_cancelled)
{
    using namespace asio::experimental::awaitable_operators;
    process_fixture f;
    auto r = f.runner(driver::host);
    auto p = f.start(*r, {"sleep", "30"});
    const auto start = std::chrono::steady_clock::now();
    auto winner = run_coro(f.ctx, [&]() -> asio::awaitable<std::size_t> {
        asio::steady_timer t(co_await asio::this_coro::executor, 200ms);
        auto v = co_await (p.wait() || t.async_wait(asio::use_awaitable));
        co_return v.index();
    }());
    BOOST_TEST(winner == 1u);
    BOOST_TEST((std::chrono::steady_clock::now() - start < 2s));
    BOOST_TEST(p.running());
    p.kill();
    BOOST_TEST(run_coro(f.ctx, p.wait()).term_signal == SIGKILL);
}

// request_exit() and interrupt() reach the command's traps (the whole tree gets the signal);
// terminate() is SIGKILL; all are harmless after the end.
BOOST_AUTO_TEST_CASE(request_exit_and_interrupt_run_the_commands_traps)
{
    process_fixture f;
    auto r = f.runner(driver::host);
    const std::string script = "trap 'echo term; exit 3' TERM; trap 'echo int; exit 4' INT; echo ready; "
                               "while :; do sleep 0.05; done";
    struct signalled {
        void (process::*send)() noexcept;
        std::optional<std::string> said;
        int exit_code;
        int term_signal;
    };
    for (const auto& s : {signalled{&process::request_exit, "term", 3, 0}, signalled{&process::interrupt, "int", 4, 0},
                          signalled{&process::terminate, std::nullopt, 128 + SIGKILL, SIGKILL}}) {
        auto p = f.start(*r, {"sh", "-c", script});
        BOOST_REQUIRE((run_coro(f.ctx, p.read_line()) == std::optional<std::string>("ready")));
        (p.*s.send)();
        BOOST_TEST((run_coro(f.ctx, p.read_line()) == s.said));
        const auto end = run_coro(f.ctx, p.wait());
        BOOST_TEST(end.exit_code == s.exit_code);
        BOOST_TEST(end.term_signal == s.term_signal);
        (p.*s.send)();  // after the end: nothing
        p.interrupt();
        BOOST_TEST(run_coro(f.ctx, p.wait()).exit_code == s.exit_code);
    }
    process none;
    none.interrupt();
    none.request_exit();
    none.terminate();
}

// async_wait() takes any token, can be cancelled without ending the command, and stays valid
// when the process object is moved.
BOOST_AUTO_TEST_CASE(async_wait_takes_any_completion_token)
{
    process_fixture f;
    auto r = f.runner(driver::host);
    // A callback, on the executor bound to it.
    auto p = f.start(*r, {"sh", "-c", "exit 5"});
    auto other = asio::make_strand(f.ctx);
    boost::system::error_code ec;
    exec_result got;
    bool on_strand = false;
    p.async_wait(asio::bind_executor(other, [&](boost::system::error_code e, exec_result res) {
        on_strand = other.running_in_this_thread();
        ec = e;
        got = std::move(res);
    }));
    f.ctx.restart();
    f.ctx.run();
    BOOST_TEST(!ec, ec.message());
    BOOST_TEST(got.exit_code == 5);
    BOOST_TEST(on_strand);

    // Deferred, started after the object moved: the operation holds the state.
    auto q = f.start(*r, {"sh", "-c", "exit 6"});
    auto op = q.async_wait();
    process moved = std::move(q);
    std::move(op)([&](boost::system::error_code e, exec_result res) {
        ec = e;
        got = std::move(res);
    });
    f.ctx.restart();
    f.ctx.run();
    BOOST_TEST(!ec, ec.message());
    BOOST_TEST(got.exit_code == 6);

    // Cancelled through the slot: the wait ends, the command does not.
    auto s = f.start(*r, {"sleep", "30"});
    asio::cancellation_signal cancel;
    ec = {};
    bool done = false;
    s.async_wait(asio::bind_cancellation_slot(cancel.slot(), [&](boost::system::error_code e, exec_result) {
        ec = e;
        done = true;
    }));
    asio::steady_timer t(f.ctx, 100ms);
    t.async_wait([&](boost::system::error_code) { cancel.emit(asio::cancellation_type::terminal); });
    f.ctx.restart();
    f.ctx.run_for(5s);
    BOOST_TEST(done);
    BOOST_TEST(ec == asio::error::operation_aborted);
    BOOST_TEST(s.running());
    s.terminate();
    BOOST_TEST(run_coro(f.ctx, s.wait()).term_signal == SIGKILL);

    // An empty process: bad_descriptor, posted through the system executor, whose thread
    // completes it.
    process none;
    std::promise<boost::system::error_code> empty;
    auto empty_ec = empty.get_future();
    none.async_wait([&](boost::system::error_code e, exec_result) { empty.set_value(e); });
    BOOST_REQUIRE(empty_ec.wait_for(5s) == std::future_status::ready);
    BOOST_TEST(empty_ec.get() == asio::error::bad_descriptor);
}

// async_start() launches off the calling thread with any token: the process's I/O is on the
// handler's executor, and a launch failure is the handler's code with an empty process.
BOOST_AUTO_TEST_CASE(async_start_takes_any_completion_token)
{
    process_fixture f;
    auto r = f.runner(driver::host);
    auto strand = asio::make_strand(f.ctx);
    boost::system::error_code ec = asio::error::would_block;
    std::optional<process> got;
    bool on_strand = false;
    r->async_start({"sh", "-c", "read line; echo \"got $line\"; exit 4"}, {},
                   asio::bind_executor(strand, [&](boost::system::error_code e, process p) {
                       on_strand = strand.running_in_this_thread();
                       ec = e;
                       got.emplace(std::move(p));
                   }));
    BOOST_TEST(!got.has_value());  // the launch runs elsewhere; the handler is posted
    // run_one blocks until the handler ran: the launch keeps the context busy meanwhile.
    while (!got && f.ctx.run_one_for(10s) > 0) {
    }
    BOOST_TEST(!ec, ec.message());
    BOOST_TEST(on_strand);
    BOOST_REQUIRE(got.has_value());
    BOOST_TEST(got->running());
    const auto line = run_coro(f.ctx, [&]() -> asio::awaitable<std::optional<std::string>> {
        co_await got->write("hi\n");
        co_return co_await got->read_line();
    }());
    BOOST_TEST(line.value_or("(none)") == "got hi");
    BOOST_TEST(run_coro(f.ctx, got->wait()).exit_code == 4);

    // A coroutine.
    auto p = run_coro(f.ctx, r->async_start({"sleep", "30"}, {}, asio::use_awaitable));
    BOOST_TEST(p.running());
    p.terminate();
    BOOST_TEST(run_coro(f.ctx, p.wait()).term_signal == SIGKILL);

    // A failure: the launch_error's code, an empty process.
    exec_options outside;
    outside.cwd = "../..";
    std::promise<std::pair<boost::system::error_code, bool>> failed;
    auto failure = failed.get_future();
    r->async_start({"true"}, outside, [&](boost::system::error_code e, process q) { failed.set_value({e, q.running()}); });
    BOOST_REQUIRE(failure.wait_for(10s) == std::future_status::ready);
    const auto [code, running] = failure.get();
    BOOST_TEST(code == make_error_code(errc::outside_root), code.message());
    BOOST_TEST(!running);
}

// A handle dropped (or assigned over) while another coroutine waits: the waiter learns the
// process was killed, not that it exited cleanly.
BOOST_AUTO_TEST_CASE(a_wait_outliving_the_handle_sees_the_kill)
{
    process_fixture f;
    auto r = f.runner(driver::host);
    std::optional<process> p = f.start(*r, {"sleep", "30"});
    std::optional<exec_result> seen;
    asio::co_spawn(f.ctx, p->wait(), [&](std::exception_ptr e, exec_result res) {
        BOOST_TEST(!e);
        seen = std::move(res);
    });
    f.ctx.run_for(100ms);
    BOOST_TEST(!seen);
    p.reset();
    f.ctx.run_for(5s);
    BOOST_TEST_REQUIRE(seen.has_value());
    BOOST_TEST(!seen->success());
    BOOST_TEST(seen->term_signal == SIGKILL);
    BOOST_TEST((seen->duration > std::chrono::milliseconds(50)));
}

BOOST_AUTO_TEST_CASE(destroying_the_io_context_during_a_wait_ends_the_process)
{
    const auto marker = unique_sleep();
    auto r = make_runner(execution_policy::defaults(), driver::host);
    {
        asio::io_context ctx;
        asio::co_spawn(
            ctx,
            [&]() -> asio::awaitable<void> {
                std::vector<std::string> argv{"sleep", marker};
                auto p = r->start(co_await asio::this_coro::executor, std::move(argv));
                co_await p.wait();
            },
            asio::detached);
        ctx.run_for(300ms);
    }  // the coroutine, and the process it owns, go with the context
    BOOST_TEST(gone("sleep " + marker));
    BOOST_TEST(!has_children());
}

BOOST_AUTO_TEST_CASE(stdout_reads_to_eof_and_leftovers_are_killed)
{
    process_fixture f;
    auto r = f.runner(driver::host);
    const auto marker = unique_sleep();
    auto p = f.start(*r, {"sh", "-c", "sleep " + marker + " >/dev/null & printf 'one\\ntwo'"});
    auto lines = run_coro(f.ctx, [&]() -> asio::awaitable<std::vector<std::string>> {
        std::vector<std::string> v;
        while (auto line = co_await p.read_line()) v.push_back(*line);
        co_return v;
    }());
    BOOST_TEST(lines == (std::vector<std::string>{"one", "two"}), boost::test_tools::per_element());
    BOOST_TEST(run_coro(f.ctx, p.wait()).exit_code == 0);
    BOOST_TEST(gone("sleep " + marker));
}

// A moved-from (or default-built) process is empty: it answers, it never crashes; and a
// read deferred before the move completes through the new owner's state.
BOOST_AUTO_TEST_CASE(an_empty_or_moved_from_process_answers_and_a_deferred_read_survives_the_move)
{
    process_fixture f;
    auto r = f.runner(driver::host);
    process none;
    BOOST_TEST(!none.running());
    BOOST_TEST(none.pid() == -1);
    none.kill();
    none.close_stdin();
    BOOST_TEST(none.stderr_tail().empty());

    auto p = f.start(*r, {"sh", "-c", "read x; echo got $x"});
    char buf[64];
    auto deferred_read = p.async_read_some(asio::buffer(buf));
    process q = std::move(p);
    BOOST_TEST(!p.running());  // NOLINT(bugprone-use-after-move): what is tested
    BOOST_TEST(p.pid() == -1);
    p.kill();
    BOOST_CHECK_EXCEPTION(run_coro(f.ctx, p.wait()), boost::system::system_error,
                          [](const boost::system::system_error& e) { return e.code() == asio::error::bad_descriptor; });
    boost::system::error_code ec;
    std::size_t n = 0;
    std::move(deferred_read)([&](boost::system::error_code e, std::size_t got) {
        ec = e;
        n = got;
    });
    run_coro(f.ctx, q.write("x\n"));
    f.ctx.restart();
    f.ctx.run();
    BOOST_TEST(!ec, ec.message());
    BOOST_TEST(std::string(buf, n) == "got x\n");
    BOOST_TEST(run_coro(f.ctx, q.wait()).exit_code == 0);
    boost::system::error_code read_ec;
    none.async_read_some(asio::buffer(buf),
                         asio::bind_executor(f.ctx, [&](boost::system::error_code e, std::size_t) { read_ec = e; }));
    f.ctx.restart();
    f.ctx.run();
    BOOST_TEST((read_ec == asio::error::bad_descriptor), read_ec.message());
}

BOOST_AUTO_TEST_CASE(writing_after_the_end_is_broken_pipe)
{
    process_fixture f;
    auto r = f.runner(driver::host);
    auto p = f.start(*r, {"true"});
    run_coro(f.ctx, p.wait());
    const std::string big(1 << 20, 'x');
    BOOST_CHECK_EXCEPTION(run_coro(f.ctx, p.write(big)), boost::system::system_error,
                          [](const boost::system::system_error& e) { return e.code() == asio::error::broken_pipe; });
}

BOOST_AUTO_TEST_CASE(stderr_tail_is_bounded)
{
    process_fixture f;
    auto r = f.runner(driver::host);
    auto p = f.start(*r, {"sh", "-c", "head -c 200000 /dev/zero | tr '\\0' e >&2; printf END >&2"});
    const auto res = run_coro(f.ctx, p.wait());
    BOOST_TEST(res.err.size() == process::stderr_tail_bytes);
    BOOST_TEST(res.truncated_err);
    BOOST_TEST(res.err.substr(res.err.size() - 3) == "END");
    BOOST_TEST(p.stderr_tail() == res.err);
}

BOOST_AUTO_TEST_CASE(policy_env_and_cwd_apply)
{
    process_fixture f;
    auto r = f.runner(driver::host, execution_policy::defaults().with_env({{"FOO", "bar"}}));
    auto p = f.start(*r, {"sh", "-c", "pwd; echo \"$FOO\"; env | wc -l"});
    auto lines = run_coro(f.ctx, [&]() -> asio::awaitable<std::vector<std::string>> {
        std::vector<std::string> v;
        while (auto line = co_await p.read_line()) v.push_back(*line);
        co_return v;
    }());
    BOOST_REQUIRE(lines.size() == 3u);
    BOOST_TEST(lines[0] == f.base.path.string());
    BOOST_TEST(lines[1] == "bar");
}

BOOST_AUTO_TEST_CASE(a_start_failure_throws_launch_error)
{
    process_fixture f;
    auto r = f.runner(driver::host);
    BOOST_CHECK_EXCEPTION(f.start(*r, {"__missing_program__"}), launch_error, [](const launch_error& e) {
        return std::string(e.what()).rfind("Failed to start host process: __missing_program__", 0) == 0 &&
               e.code() == errc::command_not_found;
    });
    fake_sandbox fake(execution_policy::defaults());
    BOOST_CHECK_THROW(fake.start(f.ctx.get_executor(), {"cat"}), launch_error);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(test_bubblewrap_reachability)

BOOST_AUTO_TEST_CASE(an_unreachable_base_dir_is_named_in_the_error)
{
    if (::geteuid() != 0 || !require_driver(driver::bubblewrap)) return;
    temp_dir private_parent;  // 0700 root: bwrap, started as uid 65534, cannot pass it
    const auto base = private_parent.path / "base";
    std::filesystem::create_directory(base);
    ::chmod(base.c_str(), 0755);
    auto r = make_runner(execution_policy::in(base), driver::bubblewrap);
    BOOST_CHECK_EXCEPTION(run_sync(*r, {"true"}), launch_error, [&](const launch_error& e) {
        const std::string what = e.what();
        return what.rfind("Failed to start bwrap: base directory " + base.string(), 0) == 0 &&
               what.find(private_parent.path.string() + " is not searchable") != std::string::npos &&
               what.find("chmod o+x") != std::string::npos;
    });
    BOOST_TEST(std::filesystem::is_empty(base));
    // The base dir itself may be private: the work dir is bound over it for bwrap.
    auto private_base = make_runner(execution_policy::in(private_parent.path), driver::bubblewrap);
    const auto ok = run_sync(*private_base, {"sh", "-c", "echo in > f; cat f"});
    BOOST_TEST(ok.out == "in\n", ok.err);
    std::vector<std::string> left;
    for (const auto& entry : std::filesystem::directory_iterator(private_parent.path))
        left.push_back(entry.path().filename().string());
    BOOST_TEST((left == std::vector<std::string>{"base"}));  // the work dir is gone
}

BOOST_AUTO_TEST_SUITE_END()
