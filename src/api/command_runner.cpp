// SPDX-License-Identifier: BSL-1.0
#include <sandbox/command_runner.hpp>
#include <sandbox/errors.hpp>

#include "drivers/runners.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

namespace sandbox {

command_runner::~command_runner() = default;

process command_runner::start(asio::any_io_executor, std::vector<std::string>)
{
    throw launch_error(make_error_code(boost::system::errc::operation_not_supported),
                       "this runner cannot start long-lived processes");
}

namespace {

}  // namespace

std::unique_ptr<command_runner> make_runner(execution_policy policy, driver d, driver_options options)
{
    if (d == driver::host) return detail::make_host_runner(std::move(policy), std::move(options));
    return detail::make_isolating_runner(std::move(policy), std::move(options), d);
}

std::unique_ptr<command_runner> make_runner(execution_policy policy, std::string_view driver_name,
                                            driver_options options)
{
    return make_runner(std::move(policy), parse_driver(driver_name), std::move(options));
}

exec_result run_sync(command_runner& runner, std::vector<std::string> argv, std::optional<std::string> stdin_data,
                     output_callback on_output)
{
    asio::io_context ctx;
    std::exception_ptr error;
    exec_result result;
    asio::co_spawn(ctx, runner.execute(std::move(argv), std::move(stdin_data), std::move(on_output)),
                   [&](std::exception_ptr e, exec_result r) {
                       error = e;
                       result = std::move(r);
                   });
    ctx.run();
    if (error) std::rethrow_exception(error);
    return result;
}

}  // namespace sandbox
