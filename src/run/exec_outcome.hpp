// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_SRC_RUN_EXEC_OUTCOME_HPP
#define SANDBOX_SRC_RUN_EXEC_OUTCOME_HPP

#include "run/child.hpp"
#include "run/tail_buffer.hpp"

#include <sandbox/exec_result.hpp>

#include <boost/asio/cancellation_type.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <exception>
#include <optional>
#include <string>

namespace sandbox::detail {

/// The first signal a cancellation sends, as Boost.Process maps them: terminal kills,
/// partial asks to terminate, total interrupts (the last two followed by SIGKILL after the
/// kill grace).
int cancel_signal(boost::asio::cancellation_type_t type) noexcept;

/// The result of a command that ran: its outputs' tails, its exit (null for one we stopped
/// waiting for: exit code -1), and 124 with the reason when a clock ended it.
exec_result ran_result(tail_buffer& out, tail_buffer& err, const exit_info* exit,
                       std::optional<timeout_reason> timeout, std::chrono::nanoseconds duration);

/// A command that could not start. The host driver's contract is a 127 (126) result whose
/// stderr says why, left in `result`; a driver's own launcher failing (`launcher_failed`)
/// is a launch_error instead, returned, and naming the driver as unavailable when its tool
/// is missing or not executable.
std::exception_ptr start_failure(boost::system::error_code code, const std::string& message, bool launcher_failed,
                                 exec_result& result);

}  // namespace sandbox::detail

#endif
