// SPDX-License-Identifier: BSL-1.0
// A command that cannot be executed is reported by each launcher in its own words (bwrap's
// execvp, the shell firejail runs it through, coreutils' env, the containers' tini). They
// all become what the host driver reports: 127 or 126, one "Failed to start" line, and
// the result's start_error.
#include "drivers/support.hpp"

#include <sandbox/errors.hpp>

namespace sandbox::detail {

namespace {

// The rest of `line` after `prefix`, or "" when it does not start so.
std::string after(const std::string& line, const std::string& prefix)
{
    return line.size() > prefix.size() && line.compare(0, prefix.size(), prefix) == 0 ? line.substr(prefix.size())
                                                                                       : std::string();
}

}  // namespace

bool as_start_failure(exec_result& r, driver d, std::string_view tool, const std::string& command)
{
    if (r.timed_out || r.term_signal != 0 || !r.out.empty() || command.empty()) return false;
    std::string line = r.err;
    if (!line.empty() && line.back() == '\n') line.pop_back();
    if (line.empty() || line.find('\n') != std::string::npos) return false;

    std::string reason;
    switch (d) {
    case driver::bubblewrap:
        if (r.exit_code == 1) reason = after(line, "bwrap: execvp " + command + ": ");
        break;
    case driver::firejail:
        if (r.exit_code == 126 || r.exit_code == 127) {
            reason = after(line, "/bin/sh: 1: " + command + ": ");
            if (reason.empty()) reason = after(line, "env: '" + command + "': ");  // with a cwd: env -C
            if (reason.empty()) reason = after(line, "sandbox: cannot execute " + command + ": ");  // sandbox-seccomp-exec
        }
        break;
    case driver::docker:
    case driver::podman:
        if ((r.exit_code == 126 || r.exit_code == 127) && line.rfind("[FATAL tini (", 0) == 0) {
            const std::string needle = ")] exec " + command + " failed: ";
            const auto at = line.find(needle);
            if (at != std::string::npos) reason = line.substr(at + needle.size());
        }
        break;
    case driver::host: break;
    }
    if (reason.empty()) return false;
    const bool missing = reason == "not found" || reason == "No such file or directory";
    r.exit_code = missing ? exit_codes::command_not_found : exit_codes::cannot_execute;
    r.err = "Failed to start " + std::string(tool) + ": " + command + ": " +
            (missing ? std::string("No such file or directory") : reason);
    r.start_error = missing ? errc::command_not_found : errc::command_not_executable;
    return true;
}

}  // namespace sandbox::detail
