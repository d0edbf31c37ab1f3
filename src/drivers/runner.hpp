// SPDX-License-Identifier: BSL-1.0
// What every driver's run derives from its policy and options.
#ifndef SANDBOX_SRC_DRIVERS_RUNNER_HPP
#define SANDBOX_SRC_DRIVERS_RUNNER_HPP

#include "run/process_runner.hpp"
#include <sandbox/driver.hpp>
#include <sandbox/driver_options.hpp>
#include <sandbox/environment.hpp>
#include <sandbox/exec_options.hpp>
#include <sandbox/execution_policy.hpp>

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sandbox::detail {

/// "NAME=value" strings.
std::vector<std::string> env_strings(const env_list& env);

/// The timers and output caps of one run.
run_limits limits_for(const execution_policy& policy, const driver_options& options, const exec_options& o = {});

/// The uid:gid a command of driver `d` runs as (the firejail account under a root caller,
/// else sandbox_uid()/sandbox_gid()): what a work dir kept between runs must belong to.
std::pair<uid_t, gid_t> command_ids(driver d, const driver_options& options);

}  // namespace sandbox::detail

#endif
