// SPDX-License-Identifier: BSL-1.0
// A command that cannot be executed is reported by each launcher in its own words (each
// driver's row recognises its tool's). They all become what the host driver reports: 127 or
// 126, one "Failed to start" line, and the result's start_error.
#include "drivers/support.hpp"

#include "drivers/driver_spec.hpp"

#include <sandbox/errors.hpp>

namespace sandbox::detail {

bool as_start_failure(exec_result& r, driver d, std::string_view tool, const std::string& command)
{
    if (r.timed_out || r.term_signal != 0 || !r.out.empty() || command.empty()) return false;
    std::string line = r.err;
    if (!line.empty() && line.back() == '\n') line.pop_back();
    if (line.empty() || line.find('\n') != std::string::npos) return false;

    const auto& spec = spec_of(d);
    // The library's own stub and launcher, on every driver (a sandbox started ahead).
    const std::string ours = "sandbox: cannot execute " + command + ": ";
    std::string reason;
    if ((r.exit_code == 126 || r.exit_code == 127) && line.size() > ours.size() && line.compare(0, ours.size(), ours) == 0)
        reason = line.substr(ours.size());
    else if (spec.start_failure)
        reason = spec.start_failure(r.exit_code, line, command);
    if (reason.empty()) return false;
    const bool missing = reason == "not found" || reason == "No such file or directory";
    r.exit_code = missing ? exit_codes::command_not_found : exit_codes::cannot_execute;
    r.err = "Failed to start " + std::string(tool) + ": " + command + ": " +
            (missing ? std::string("No such file or directory") : reason);
    r.start_error = missing ? errc::command_not_found : errc::command_not_executable;
    return true;
}

}  // namespace sandbox::detail
