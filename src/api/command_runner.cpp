// SPDX-License-Identifier: BSL-1.0
#include <sandbox/command_runner.hpp>
#include <sandbox/errors.hpp>

#include "api/driver_runner.hpp"
#include "run/offload.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace sandbox {

command_runner::~command_runner() = default;

asio::awaitable<void> command_runner::prewarm(std::size_t, std::chrono::seconds) { co_return; }

asio::awaitable<void> command_runner::prewarm(std::size_t count)
{
    co_await prewarm(count, std::chrono::seconds(60));
}

process command_runner::start(asio::any_io_executor, std::vector<std::string>, const exec_options&)
{
    throw launch_error(make_error_code(boost::system::errc::operation_not_supported),
                       "this runner cannot start long-lived processes");
}

process command_runner::start(asio::any_io_executor ex, std::vector<std::string> args)
{
    return start(std::move(ex), std::move(args), exec_options{});
}

void command_runner::start_in_background(asio::any_io_executor ex, std::vector<std::string> args, exec_options options,
                                         asio::any_completion_handler<start_signature> handler)
{
    // Held by the library thread (run_on takes a copyable job); the tracked executor keeps
    // the handler's io_context from running out of work until the completion is posted.
    struct launch {
        command_runner* runner;
        asio::any_io_executor ex;
        asio::any_io_executor busy;
        std::vector<std::string> args;
        exec_options options;
        asio::any_completion_handler<start_signature> handler;
    };
    auto l = std::make_shared<launch>(launch{this, ex, asio::prefer(ex, asio::execution::outstanding_work.tracked),
                                             std::move(args), std::move(options), std::move(handler)});
    // Not a spawn thread: start() hands its spawn to one and waits.
    detail::run_on(detail::worker::warm, [l]() mutable {
        boost::system::error_code code;
        process p;
        try {
            p = l->runner->start(l->ex, std::move(l->args), l->options);
        } catch (...) {
            code = detail::to_error_code(std::current_exception());
        }
        // Posted to the I/O executor, run through the handler's own (a strand, say). The
        // launch moves into the completion: this thread keeps no reference, whose release
        // here (its tracked work ending) could come after the io_context is gone.
        const auto ex = l->ex;
        const auto target = asio::get_associated_executor(l->handler, ex);
        auto done = [l = std::move(l), code, p = std::make_shared<process>(std::move(p))]() mutable {
            auto h = std::move(l->handler);
            l.reset();  // the io_context may run out of work once the handler has run
            std::move(h)(code, std::move(*p));
        };
        asio::post(ex, asio::bind_executor(target, std::move(done)));
    });
}

launch_preview command_runner::preview(std::vector<std::string>, const exec_options&) const
{
    throw launch_error(make_error_code(boost::system::errc::operation_not_supported),
                       "this runner cannot tell what it would start");
}

launch_preview command_runner::preview(std::vector<std::string> args) const
{
    return preview(std::move(args), exec_options{});
}

asio::awaitable<exec_result> command_runner::execute(std::vector<std::string> args, exec_options options)
{
    auto ex = co_await asio::this_coro::executor;
    co_return co_await asio::async_initiate<const asio::use_awaitable_t<>&, execute_signature>(
        [this](execute_handler h, asio::any_io_executor ex, std::vector<std::string> args, exec_options options) {
            async_run(std::move(ex), std::move(args), std::move(options), std::move(h));
        },
        asio::use_awaitable, asio::any_io_executor(ex), std::move(args), std::move(options));
}

asio::awaitable<exec_result> command_runner::execute(command_spec spec, exec_options options)
{
    if (spec.stdin) options.stdin_data = std::move(spec.stdin);
    return execute(std::move(spec.argv), std::move(options));  // no coroutine frame of its own
}

asio::awaitable<exec_result> command_runner::execute(std::vector<std::string> args,
                                                     std::optional<std::string> stdin_data, output_callback on_output)
{
    exec_options options;
    options.stdin_data = std::move(stdin_data);
    options.on_output = std::move(on_output);
    return execute(std::move(args), std::move(options));  // no coroutine frame of its own
}

exec_result run_sync(command_runner& runner, const command_spec& spec, output_callback on_output)
{
    return run_sync(runner, spec.argv, spec.stdin, std::move(on_output));
}

namespace detail {

boost::system::error_code to_error_code(std::exception_ptr ep) noexcept
{
    try {
        std::rethrow_exception(ep);
    } catch (const boost::system::system_error& e) {  // launch_error included
        return e.code();
    } catch (...) {
        return errc::callback_failed;
    }
}

void describe_failure(exec_result& r, std::exception_ptr ep, boost::system::error_code code) noexcept
{
    // A cancellation is not a failure to start.
    if (!r.start_error && code != boost::asio::error::operation_aborted) r.start_error = code;
    if (r.exit_code == 0) r.exit_code = exit_codes::sandbox_failed;
    if (!r.err.empty()) return;
    try {
        std::rethrow_exception(ep);
    } catch (const std::exception& e) {
        try {
            r.err = e.what();
        } catch (...) {  // out of memory: the code says it
        }
    } catch (...) {
    }
}

}  // namespace detail

std::unique_ptr<command_runner> make_runner(execution_policy policy, driver d, driver_options options)
{
    return detail::make_driver_runner(std::move(policy), std::move(options), d);
}

std::unique_ptr<command_runner> make_runner(execution_policy policy, std::string_view driver_name,
                                            driver_options options)
{
    return make_runner(std::move(policy), parse_driver(driver_name), std::move(options));
}

exec_result run_sync(command_runner& runner, std::vector<std::string> args, std::optional<std::string> stdin_data,
                     output_callback on_output)
{
    exec_options options;
    options.stdin_data = std::move(stdin_data);
    options.on_output = std::move(on_output);
    return run_sync(runner, std::move(args), std::move(options));
}

exec_result run_sync(command_runner& runner, std::vector<std::string> args, exec_options options)
{
    asio::io_context ctx;
    std::exception_ptr error;
    exec_result result;
    runner.async_run(ctx.get_executor(), std::move(args), std::move(options), [&](std::exception_ptr e, exec_result r) {
        error = e;
        result = std::move(r);
    });
    ctx.run();
    if (error) std::rethrow_exception(error);
    return result;
}

}  // namespace sandbox
