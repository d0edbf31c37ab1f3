// A project that only knows the installed package, using the API as its users do: tokens,
// per-execution options, error codes, and a long-lived process read with Asio's own
// composed operations.
#include <sandbox/sandbox.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>

#include <filesystem>
#include <iostream>
#include <thread>

namespace asio = boost::asio;

namespace {

int failures = 0;

void check(bool ok, const std::string& what)
{
    std::cout << (ok ? "ok   " : "FAIL ") << what << "\n";
    if (!ok) ++failures;
}

asio::awaitable<void> coroutine_side(sandbox::command_runner& runner)
{
    // deferred, the default token, awaited directly.
    std::vector<std::string> echo{"echo", "deferred"};
    const auto r1 = co_await sandbox::async_execute(runner, echo);
    check(r1.out == "deferred\n", "co_await async_execute(runner, argv)");

    // as_tuple(use_awaitable): errors as values.
    sandbox::exec_options opts;
    opts.cwd = "sub";
    opts.env = {{"CONSUMER_VAR", "42"}};
    opts.timeout = std::chrono::milliseconds(5000);
    std::vector<std::string> show{"sh", "-c", "echo \"$(basename \"$PWD\") $CONSUMER_VAR\""};
    auto [ec, r2] = co_await sandbox::async_execute(runner, show, opts, asio::as_tuple(asio::use_awaitable));
    check(!ec && r2.out == "sub 42\n", "exec_options cwd and env (" + r2.out + ")");

    // A per-execution timeout, and no_timeout.
    sandbox::exec_options quick;
    quick.timeout = std::chrono::milliseconds(200);
    std::vector<std::string> sleeper{"sleep", "5"};
    const auto r3 = co_await sandbox::async_execute(runner, sleeper, quick, asio::use_awaitable);
    check(r3.timed_out, "exec_options timeout");
    sandbox::exec_options unbounded;
    unbounded.timeout = sandbox::no_timeout;
    std::vector<std::string> brief{"sleep", "0.1"};
    const auto r4 = co_await sandbox::async_execute(runner, brief, unbounded, asio::use_awaitable);
    check(r4.success() && !r4.timed_out, "no_timeout");

    // A path out of the base dir.
    sandbox::exec_options outside;
    outside.cwd = "../..";
    std::vector<std::string> t{"true"};
    auto [ec5, r5] = co_await sandbox::async_execute(runner, t, outside, asio::as_tuple(asio::use_awaitable));
    check(ec5 == sandbox::errc::outside_root || r5.start_error == sandbox::errc::outside_root,
          "cwd outside the base dir: " + ec5.message() + " / " + r5.start_error.message());

    // A start failure on the host driver is a result with start_error.
    std::vector<std::string> missing{"/nonexistent/command"};
    const auto r6 = co_await sandbox::async_execute(runner, missing, sandbox::exec_options{}, asio::use_awaitable);
    check(r6.exit_code == 127 && r6.start_error == sandbox::errc::command_not_found, "start_error command_not_found");

    // A long-lived process read with async_read_until.
    auto ex = co_await asio::this_coro::executor;
    std::vector<std::string> cat{"cat"};
    auto p = runner.start(ex, cat);
    const std::string line = "through the stream\n";
    co_await asio::async_write(p, asio::buffer(line), asio::use_awaitable);
    std::string got;
    const auto n = co_await asio::async_read_until(p, asio::dynamic_buffer(got), '\n', asio::use_awaitable);
    check(n == line.size() && got == line, "process with asio::async_read_until");
    p.close_stdin();
    const auto end = co_await p.wait();
    check(end.exit_code == 0, "process ends at EOF");
}

}  // namespace

int main()
{
    const auto base = std::filesystem::temp_directory_path() / ("sandbox-consumer-" + std::to_string(::getpid()));
    std::filesystem::create_directories(base / "sub");
    auto runner = sandbox::make_runner(sandbox::execution_policy::in(base), sandbox::driver::host);

    // run_sync and a plain callback.
    const auto plain = sandbox::run_sync(*runner, {"echo", "consumer ok"});
    check(plain.success() && plain.out == "consumer ok\n", "run_sync");
    asio::io_context ctx;
    std::string from_callback;
    std::vector<std::string> cb_argv{"echo", "callback"};
    // The handler's executor is where the I/O runs (without one: Asio's system executor).
    sandbox::async_execute(*runner, cb_argv, sandbox::exec_options{},
                           asio::bind_executor(ctx, [&](boost::system::error_code ec, sandbox::exec_result r) {
                               if (!ec) from_callback = r.out;
                           }));
    ctx.run();
    check(from_callback == "callback\n", "a plain callback");

    // use_future, with the I/O on another thread.
    ctx.restart();
    auto work = asio::make_work_guard(ctx);
    std::thread io([&] { ctx.run(); });
    std::vector<std::string> fut_argv{"echo", "future"};
    auto fut = sandbox::async_execute(*runner, fut_argv, sandbox::exec_options{},
                                      asio::bind_executor(ctx, asio::use_future));
    check(fut.get().out == "future\n", "use_future");
    work.reset();
    io.join();

    // Coroutines.
    ctx.restart();
    asio::co_spawn(ctx, coroutine_side(*runner), [](std::exception_ptr e) {
        if (e) {
            try {
                std::rethrow_exception(e);
            } catch (const std::exception& x) {
                check(false, std::string("coroutine threw: ") + x.what());
            }
        }
    });
    ctx.run();

    // A launch failure: an isolating driver whose tool is missing throws launch_error with
    // a code, and hands the same code to a handler.
    sandbox::driver_options missing_tool;
    missing_tool.binary = "/nonexistent/bwrap";
    auto broken = sandbox::make_runner(sandbox::execution_policy::in(base), sandbox::driver::bubblewrap, missing_tool);
    try {
        sandbox::run_sync(*broken, {"true"});
        check(false, "launch_error thrown");
    } catch (const sandbox::launch_error& e) {
        check(e.code() == sandbox::errc::driver_unavailable, std::string("launch_error code: ") + e.what());
    }
    ctx.restart();
    boost::system::error_code handed;
    std::vector<std::string> t{"true"};
    sandbox::async_execute(*broken, t, sandbox::exec_options{},
                           asio::bind_executor(ctx, [&](boost::system::error_code ec, sandbox::exec_result) { handed = ec; }));
    ctx.run();
    check(handed == sandbox::errc::driver_unavailable, "the handler gets the code: " + handed.message());

    std::filesystem::remove_all(base);
    std::cout << (failures ? "consumer FAILED\n" : "consumer ok\n");
    return failures ? 1 : 0;
}
