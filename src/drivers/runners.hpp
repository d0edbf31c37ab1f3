// SPDX-License-Identifier: BSL-1.0
// Driver factories and helpers shared by the drivers.
#ifndef SANDBOX_SRC_DRIVERS_RUNNERS_HPP
#define SANDBOX_SRC_DRIVERS_RUNNERS_HPP

#include <sandbox/command_runner.hpp>
#include "run/process_runner.hpp"

#include <memory>
#include <string>
#include <vector>

namespace sandbox::detail {

std::vector<std::string> env_strings(const env_list& env);
run_limits limits_for(const execution_policy& policy, const driver_options& options, const exec_options& o = {});

std::unique_ptr<command_runner> make_host_runner(execution_policy policy, driver_options options);
std::unique_ptr<command_runner> make_isolating_runner(execution_policy policy, driver_options options, driver d);

}  // namespace sandbox::detail

#endif
