// SPDX-License-Identifier: BSL-1.0
// async_execute with every completion token users reach for, the cancellation types and the
// signals they send, error codes through the handler, and exec_options.
#include "host_fixture.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <fstream>
#include <future>
#include <thread>

using namespace sandbox;
using namespace sandbox::test;
using boost::system::error_code;
using args = std::vector<std::string>;

namespace {

std::string read_file(const std::filesystem::path& p)
{
    std::ifstream f(p);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(async_execute_tokens, host_fixture)

BOOST_AUTO_TEST_CASE(a_plain_callback_runs_on_its_bound_executor)
{
    auto r = runner();
    asio::io_context ctx;
    error_code ec = asio::error::would_block;
    exec_result result;
    std::thread::id ran_on;
    async_execute(*r, {"echo", "hi"}, {}, asio::bind_executor(ctx, [&](error_code e, exec_result res) {
                      ec = e;
                      result = std::move(res);
                      ran_on = std::this_thread::get_id();
                  }));
    ctx.run();
    BOOST_TEST(!ec);
    BOOST_TEST(result.out == "hi\n");
    BOOST_TEST((ran_on == std::this_thread::get_id()));
}

BOOST_AUTO_TEST_CASE(a_callback_without_an_executor_and_use_future_work_without_an_io_context)
{
    auto r = runner();
    std::promise<std::pair<error_code, exec_result>> p;
    async_execute(*r, {"echo", "plain"}, {}, [&](error_code e, exec_result res) { p.set_value({e, std::move(res)}); });
    auto [ec, res] = p.get_future().get();
    BOOST_TEST(!ec);
    BOOST_TEST(res.out == "plain\n");

    std::future<exec_result> f = async_execute(*r, {"echo", "future"}, {}, asio::use_future);
    BOOST_TEST(f.get().out == "future\n");
    // use_future turns an error code into an exception.
    exec_options bad;
    bad.cwd = "../elsewhere";
    auto failing = async_execute(*r, {"true"}, bad, asio::use_future);
    BOOST_CHECK_EXCEPTION(failing.get(), boost::system::system_error, [](const boost::system::system_error& e) {
        return e.code() == errc::outside_root;
    });
}

BOOST_AUTO_TEST_CASE(deferred_use_awaitable_and_as_tuple)
{
    auto r = runner();
    asio::io_context ctx;
    // Made outside the coroutine: g++ 12 rejects an initializer list's array in its frame.
    const args echo_deferred{"echo", "deferred"}, echo_awaitable{"echo", "awaitable"}, exit3{"sh", "-c", "exit 3"},
        just_true{"true"};
    const exec_options none;
    run_coro(ctx, [&]() -> asio::awaitable<void> {
        // The default token is deferred: an operation to await or compose.
        exec_result a = co_await async_execute(*r, echo_deferred)(asio::use_awaitable);
        BOOST_CHECK(a.out == "deferred\n");
        exec_result b = co_await async_execute(*r, echo_awaitable, none, asio::use_awaitable);
        BOOST_CHECK(b.out == "awaitable\n");
        auto [ec, three] = co_await async_execute(*r, exit3, none, asio::as_tuple(asio::use_awaitable));
        BOOST_CHECK(!ec);  // a non-zero exit is a result
        BOOST_CHECK(three.exit_code == 3);
        exec_options bad;
        bad.cwd = "/etc";
        auto t2 = co_await async_execute(*r, just_true, bad, asio::as_tuple(asio::use_awaitable));
        BOOST_CHECK(std::get<0>(t2) == errc::outside_root);
        // Without as_tuple the code is thrown as a system_error.
        bool thrown = false;
        try {
            co_await async_execute(*r, just_true, bad, asio::use_awaitable);
        } catch (const boost::system::system_error& e) {
            thrown = e.code() == errc::outside_root;
        }
        BOOST_CHECK(thrown);
    }());
}

BOOST_AUTO_TEST_CASE(temporaries_of_options_inside_co_await_and_a_bare_deferred_await)
{
    // exec_options is not an aggregate: g++ 12 frees an aggregate temporary made inside a
    // co_await expression twice (this case crashed before).
    static_assert(!std::is_aggregate_v<exec_options>);
    auto r = runner();
    asio::io_context ctx;
    const args echo_tmp{"echo", "tmp"}, echo_bare{"echo", "bare"};
    run_coro(ctx, [&]() -> asio::awaitable<void> {
        exec_result a = co_await async_execute(*r, echo_tmp, exec_options{}, asio::use_awaitable);
        BOOST_CHECK(a.out == "tmp\n");
        exec_result b = co_await async_execute(*r, echo_bare);  // deferred, awaited as it is
        BOOST_CHECK(b.out == "bare\n");
        exec_result c = co_await r->execute(echo_tmp, exec_options{});
        BOOST_CHECK(c.out == "tmp\n");
    }());
}

BOOST_AUTO_TEST_CASE(an_argv_and_a_command_spec_are_accepted_where_words_are)
{
    static_assert(!std::is_aggregate_v<command_spec>);  // made inside co_await below
    auto r = runner();
    asio::io_context ctx;
    const auto words = sandbox::argv::of({"sh", "-c"}).with("echo \"$0\"; cat").with("word");
    const command_spec fed{sandbox::argv::of({"cat"}), "fed\n"};
    const command_spec plain{sandbox::argv::of({"echo", "plain"})};
    const auto cat = sandbox::argv::of({"cat"});  // outside: g++ 12 rejects an initializer list in the frame
    exec_options with_stdin;
    with_stdin.stdin_data = "from options\n";
    run_coro(ctx, [&]() -> asio::awaitable<void> {
        exec_result a = co_await r->execute(words, with_stdin);
        BOOST_CHECK(a.out == "word\nfrom options\n");
        exec_result b = co_await async_execute(*r, fed, with_stdin, asio::use_awaitable);
        BOOST_CHECK(b.out == "fed\n");  // the spec's stdin wins
        exec_result c = co_await async_execute(*r, plain);
        BOOST_CHECK(c.out == "plain\n");
        exec_result d = co_await r->execute(command_spec{cat, "tmp\n"}, exec_options{});
        BOOST_CHECK(d.out == "tmp\n");
        // A spec without stdin keeps the options' stdin.
        exec_result e = co_await r->execute(command_spec{cat}, with_stdin);
        BOOST_CHECK(e.out == "from options\n");
    }());
    BOOST_CHECK(run_sync(*r, fed).out == "fed\n");
    BOOST_CHECK(run_sync(*r, words.with("x")).out == "word\n");  // a temporary argv moves its words
    auto f = async_execute(*r, fed, exec_options{}, asio::use_future);
    ctx.restart();
    ctx.run();
    BOOST_CHECK(f.get().out == "fed\n");
}

BOOST_AUTO_TEST_CASE(a_launch_failure_gives_the_launch_errors_code)
{
    driver_options o;
    o.binary = "/nonexistent/docker";
    auto r = make_runner(policy, driver::docker, o);
    asio::io_context ctx;
    error_code ec;
    exec_result got;
    async_execute(*r, {"true"}, {}, asio::bind_executor(ctx, [&](error_code e, exec_result res) {
        ec = e;
        got = std::move(res);
    }));
    ctx.run();
    BOOST_TEST((ec == errc::driver_unavailable), ec.message());
    // The result says so too: never a success with nothing on stderr.
    BOOST_TEST(!got.success());
    BOOST_TEST(got.exit_code == exit_codes::sandbox_failed);
    BOOST_TEST((got.start_error == errc::driver_unavailable));
    BOOST_TEST(got.err.find("Failed to start docker: ") == 0u, got.err);
    BOOST_TEST(got.err.find("/nonexistent/docker") != std::string::npos, got.err);
}

// Asio's rule: a handler never runs inside the call that starts the operation, also when the
// start fails at once (here a NUL in an argument) and the caller is on the io_context.
BOOST_AUTO_TEST_CASE(a_start_that_fails_at_once_completes_after_the_initiating_call)
{
    auto r = runner();
    asio::io_context ctx;
    bool returned = false, ran_inline = false, ran = false;
    error_code ec;
    exec_result result;
    asio::post(ctx, [&] {
        async_execute(*r, {std::string("/bin/tr\0ue", 10)}, {},
                      asio::bind_executor(ctx, [&](error_code e, exec_result res) {
                          ran = true;
                          ran_inline = !returned;
                          ec = e;
                          result = std::move(res);
                      }));
        returned = true;
    });
    ctx.run();
    BOOST_TEST(ran);
    BOOST_TEST(!ran_inline);
    BOOST_TEST((ec.failed() || !result.success()), ec.message() << " / exit " << result.exit_code << ": " << result.err);
}

BOOST_AUTO_TEST_CASE(a_throwing_output_callback_is_callback_failed)
{
    auto r = runner();
    asio::io_context ctx;
    error_code ec;
    exec_options o;
    o.on_output = [](stream_kind, std::string_view) { throw std::runtime_error("no thanks"); };
    async_execute(*r, {"sh", "-c", "echo x; sleep 5"}, std::move(o),
                  asio::bind_executor(ctx, [&](error_code e, exec_result) { ec = e; }));
    const auto t0 = std::chrono::steady_clock::now();
    ctx.run();
    BOOST_TEST((ec == errc::callback_failed), ec.message());
    BOOST_TEST(seconds(std::chrono::steady_clock::now() - t0) < 4.0);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(async_execute_cancellation, host_fixture)

// Each cancellation type sends its signal first: the command writes down which one it got.
BOOST_AUTO_TEST_CASE(each_cancellation_type_sends_its_signal)
{
    const std::vector<std::pair<asio::cancellation_type, std::string>> cases{
        {asio::cancellation_type::terminal, ""},  // SIGKILL: no trap runs
        {asio::cancellation_type::partial, "TERM"},
        {asio::cancellation_type::total, "INT"},
    };
    for (const auto& [type, expected] : cases) {
        temp_dir dir;
        const auto mark = dir.path / "mark";
        auto r = runner();
        asio::io_context ctx;
        asio::cancellation_signal cancel;
        error_code ec;
        exec_options o;
        o.on_output = [&](stream_kind, std::string_view chunk) {
            if (chunk.find("ready") != std::string_view::npos) cancel.emit(type);
        };
        const std::string script = "trap 'echo TERM > " + mark.string() + "; exit 0' TERM; trap 'echo INT > " +
                                   mark.string() + "; exit 0' INT; echo ready; while :; do sleep 0.05; done";
        const auto t0 = std::chrono::steady_clock::now();
        async_execute(*r, {"sh", "-c", script}, std::move(o),
                      asio::bind_cancellation_slot(cancel.slot(), asio::bind_executor(ctx, [&](error_code e, exec_result) {
                                                       ec = e;
                                                   })));
        ctx.run();
        BOOST_TEST((ec == asio::error::operation_aborted), ec.message());
        std::string got = read_file(mark);
        if (!got.empty() && got.back() == '\n') got.pop_back();
        BOOST_TEST(got == expected, "cancellation type " << static_cast<int>(type));
        BOOST_TEST(seconds(std::chrono::steady_clock::now() - t0) < 5.0);
    }
}

BOOST_AUTO_TEST_CASE(an_awaitable_operators_race_cancels_the_loser)
{
    using namespace asio::experimental::awaitable_operators;
    auto r = runner();
    asio::io_context ctx;
    const args sleep30{"sleep", "30.417"};  // a duration no other test uses
    const exec_options none;
    run_coro(ctx, [&]() -> asio::awaitable<void> {
        asio::steady_timer timer(co_await asio::this_coro::executor, std::chrono::milliseconds(200));
        const auto t0 = std::chrono::steady_clock::now();
        auto winner = co_await (async_execute(*r, sleep30, none, asio::use_awaitable) ||
                                timer.async_wait(asio::use_awaitable));
        BOOST_CHECK(winner.index() == 1u);  // the timer
        BOOST_CHECK(seconds(std::chrono::steady_clock::now() - t0) < 3.0);
    }());
    BOOST_TEST(processes_matching("sleep 30.417").empty());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(exec_options_per_execution, host_fixture)

BOOST_AUTO_TEST_CASE(cwd_is_relative_to_the_base_dir_and_fenced)
{
    temp_dir dir;
    std::filesystem::create_directories(dir.path / "sub" / "deeper");
    std::filesystem::create_directory_symlink("/etc", dir.path / "out");
    std::filesystem::create_directory_symlink("sub", dir.path / "in");
    policy = execution_policy::in(dir.path);
    auto r = runner();
    auto run_in = [&](std::filesystem::path cwd) {
        exec_options o;
        o.cwd = std::move(cwd);
        asio::io_context ctx;
        error_code ec;
        exec_result res;
        async_execute(*r, {"pwd", "-P"}, std::move(o), asio::bind_executor(ctx, [&](error_code e, exec_result x) {
                          ec = e;
                          res = std::move(x);
                      }));
        ctx.run();
        return std::pair{ec, res};
    };
    const auto real = std::filesystem::canonical(dir.path);
    BOOST_TEST(run_in("sub/deeper").second.out == (real / "sub/deeper").string() + "\n");
    BOOST_TEST(run_in("sub/../sub").second.out == (real / "sub").string() + "\n");
    BOOST_TEST(run_in("in").second.out == (real / "sub").string() + "\n");  // a link that stays inside
    BOOST_TEST(run_in("").second.out == real.string() + "\n");
    for (const char* out : {"..", "../x", "/etc", "out", "sub/../../x"}) {
        const auto [ec, res] = run_in(out);
        BOOST_TEST((ec == errc::outside_root), out << ": " << ec.message() << " " << res.out);
    }
    // A missing directory is the command's start failure, as on a shell.
    const auto [ec, res] = run_in("missing");
    BOOST_TEST(!ec);
    BOOST_TEST((res.start_error == errc::bad_working_directory), res.start_error.message());
    BOOST_TEST(res.exit_code == 127);
}

BOOST_AUTO_TEST_CASE(env_is_added_and_blocked_names_still_removed)
{
    policy = policy.with_env({{"KEEP", "policy"}, {"OVER", "policy"}});
    auto r = runner();
    exec_options o;
    o.env = {{"OVER", "option"}, {"NEW", "1"}, {"LD_PRELOAD", "/evil.so"}, {"PYTHONPATH", "/x"}};
    const auto res = async_execute(*r, {"env"}, std::move(o), asio::use_future).get();
    BOOST_TEST(res.out.find("KEEP=policy\n") != std::string::npos, res.out);
    BOOST_TEST(res.out.find("OVER=option\n") != std::string::npos, res.out);
    BOOST_TEST(res.out.find("NEW=1\n") != std::string::npos, res.out);
    BOOST_TEST(res.out.find("LD_PRELOAD") == std::string::npos, res.out);
    BOOST_TEST(res.out.find("PYTHONPATH") == std::string::npos, res.out);
}

BOOST_AUTO_TEST_CASE(timeout_replaces_the_policys_and_no_timeout_means_none)
{
    policy = policy.with_timeout(std::chrono::milliseconds(150));
    auto r = runner();
    exec_options longer;
    longer.timeout = std::chrono::seconds(5);
    const auto ok = async_execute(*r, {"sleep", "0.4"}, longer, asio::use_future).get();
    BOOST_TEST(ok.success(), ok.exit_code);
    exec_options none;
    none.timeout = no_timeout;
    BOOST_TEST(async_execute(*r, {"sleep", "0.4"}, none, asio::use_future).get().success());
    BOOST_TEST(async_execute(*r, {"sleep", "0.4"}, {}, asio::use_future).get().timed_out);  // the policy's 150 ms
    exec_options shorter;
    shorter.timeout = std::chrono::milliseconds(100);
    policy = policy.with_timeout(std::chrono::seconds(10));
    auto r2 = runner();
    const auto cut = async_execute(*r2, {"sleep", "5"}, shorter, asio::use_future).get();
    BOOST_TEST(cut.timed_out);
    BOOST_TEST(seconds(cut.duration) < 3.0);
    // The policy itself may say no timeout.
    BOOST_TEST(execution_policy::defaults().with_timeout(no_timeout).timeout() == no_timeout);
}

// The setters read as designated initializers would, and a temporary chained inside co_await
// (where g++ 12 frees an aggregate temporary twice) runs cleanly, under the sanitizers too.
BOOST_AUTO_TEST_CASE(exec_options_chain_on_a_temporary_inside_co_await)
{
    temp_dir dir;
    std::filesystem::create_directory(dir.path / "sub");
    policy = execution_policy::in(dir.path).with_timeout(std::chrono::seconds(10));
    auto r = runner();
    asio::io_context ctx;
    std::string seen, launched;
    const auto got = run_coro(ctx, [&]() -> asio::awaitable<exec_result> {
        std::vector<std::string> argv{"sh", "-c", "read x; echo $A $B $x; pwd -P; sleep 5"};
        co_return co_await r->execute(std::move(argv),
                                      exec_options()
                                          .with_cwd("sub")
                                          .with_env("A", "one")
                                          .with_env("B", "two")
                                          .with_env("A", "uno")
                                          .with_stdin("three\n")
                                          .with_timeout(std::chrono::milliseconds(1500))
                                          .with_output([&](stream_kind, std::string_view c) { seen += c; })
                                          .with_on_launch([&](const launch_preview& p) { launched = p.argv.front(); }));
    }());
    BOOST_TEST(got.timed_out);  // the option's 1.5 s, not the policy's 10 s
    BOOST_TEST(seconds(got.duration) < 5.0);
    BOOST_TEST(got.out == "uno two three\n" + std::filesystem::canonical(dir.path / "sub").string() + "\n");
    BOOST_TEST(seen == got.out);
    BOOST_TEST(launched == "sh");
    // On a named object the setters change it in place.
    exec_options named;
    named.with_cwd("sub").with_stdin_fd(0).with_env("A", "1");
    BOOST_TEST(named.cwd == "sub");
    BOOST_TEST(named.stdin_fd == 0);
    BOOST_TEST((named.env == env_list{{"A", "1"}}));
}

BOOST_AUTO_TEST_CASE(start_takes_the_options_too)
{
    temp_dir dir;
    std::filesystem::create_directory(dir.path / "sub");
    policy = execution_policy::in(dir.path);
    auto r = runner();
    asio::io_context ctx;
    exec_options o;
    o.cwd = "sub";
    o.env = {{"GREETING", "hello"}};
    auto p = r->start(ctx.get_executor(), {"sh", "-c", "echo $GREETING; pwd -P"}, o);
    const std::optional<std::string> hello("hello"), sub((std::filesystem::canonical(dir.path) / "sub").string());
    run_coro(ctx, [&]() -> asio::awaitable<void> {
        const auto first = co_await p.read_line();
        const auto second = co_await p.read_line();
        BOOST_CHECK(first == hello);
        BOOST_CHECK(second == sub);
        co_await p.wait();
    }());
    o.cwd = "..";
    BOOST_CHECK_EXCEPTION(r->start(ctx.get_executor(), {"true"}, o), launch_error,
                          [](const launch_error& e) { return e.code() == errc::outside_root; });
}

BOOST_AUTO_TEST_SUITE_END()
