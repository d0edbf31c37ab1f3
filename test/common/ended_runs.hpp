// SPDX-License-Identifier: BSL-1.0
// What the isolating drivers' runs may leave on the host once they have ended: processes in
// the cgroups the library made for them.
#ifndef SANDBOX_TEST_ENDED_RUNS_HPP
#define SANDBOX_TEST_ENDED_RUNS_HPP

#include "test_support.hpp"

#include "drivers/run_record.hpp"

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

namespace sandbox::test {

/// True for "sandbox-" followed by 24 lower-case hex digits.
inline bool is_sandbox_name(const std::string& s)
{
    if (s.size() != 32 || s.rfind("sandbox-", 0) != 0) return false;
    return s.find_first_not_of("0123456789abcdef", 8) == std::string::npos;
}

/// Processes still inside a cgroup of a run that has ended ("pid cmdline in cgroup"): a
/// cgroup path with a `sandbox-<hex>` component whose run has no record any more. Dead runs'
/// records (another test program may have been SIGKILLed) are swept first, so what is left
/// is what a run's own cleanup missed, such as a container runtime's init waiting in the
/// cgroup of a container whose removal raced its creation.
inline std::vector<std::string> processes_of_ended_runs()
{
    (void)detail::sweep_dead_runs(detail::run_record_dir());
    const auto records = detail::run_record_dir();
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
        const auto pid = e.path().filename().string();
        if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
        std::istringstream lines(file_contents(e.path() / "cgroup"));
        for (std::string line; std::getline(lines, line);) {
            const auto at = line.find("/sandbox-");
            if (at == std::string::npos) continue;
            const auto name = line.substr(at + 1, 32);
            if (!is_sandbox_name(name)) continue;
            if (std::filesystem::exists(records / (name + ".run"), ec) ||
                std::filesystem::exists(records / (name + ".run-new"), ec))
                continue;
            auto cmd = file_contents(e.path() / "cmdline");
            std::replace(cmd.begin(), cmd.end(), '\0', ' ');
            out.push_back(pid + " " + cmd + "in " + line);
            break;
        }
    }
    return out;
}

}  // namespace sandbox::test

#endif
