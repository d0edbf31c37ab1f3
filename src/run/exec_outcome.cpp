// SPDX-License-Identifier: BSL-1.0
#include "run/exec_outcome.hpp"

#include <sandbox/errors.hpp>

#include <signal.h>

namespace sandbox::detail {

int cancel_signal(boost::asio::cancellation_type_t type) noexcept
{
    using ct = boost::asio::cancellation_type;
    if ((type & ct::terminal) != ct::none) return SIGKILL;
    if ((type & ct::partial) != ct::none) return SIGTERM;
    return SIGINT;
}

exec_result ran_result(tail_buffer& out, tail_buffer& err, const exit_info* exit,
                       std::optional<timeout_reason> timeout, std::chrono::nanoseconds duration)
{
    exec_result r;
    r.truncated_out = out.truncated();
    r.truncated_err = err.truncated();
    r.out = out.take();
    r.err = err.take();
    if (exit) {
        r.exit_code = exit->exit_code;
        r.term_signal = exit->term_signal;
        r.usage = exit->usage;
    } else {
        r.exit_code = -1;
    }
    if (timeout) {
        r.timed_out = true;
        r.timeout = timeout;
        r.exit_code = exit_codes::timeout;
    }
    r.duration = duration;
    return r;
}

std::exception_ptr start_failure(boost::system::error_code code, const std::string& message, bool launcher_failed,
                                 exec_result& result)
{
    if (launcher_failed) {
        if (code == errc::command_not_found || code == errc::command_not_executable) code = errc::driver_unavailable;
        return std::make_exception_ptr(launch_error(code, message));
    }
    result.exit_code =
        code == errc::command_not_executable ? exit_codes::cannot_execute : exit_codes::command_not_found;
    result.start_error = code;
    result.err = message;
    return nullptr;
}

}  // namespace sandbox::detail
