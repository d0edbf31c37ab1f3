// SPDX-License-Identifier: BSL-1.0
// The one command_runner behind every driver, and what it derives from a policy.
#ifndef SANDBOX_SRC_DRIVERS_RUNNER_HPP
#define SANDBOX_SRC_DRIVERS_RUNNER_HPP

#include "run/process_runner.hpp"
#include <sandbox/command_runner.hpp>

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sandbox::detail {

/// A runner executing the row of `d` (drivers/table.cpp). `fixed_user`: the uid:gid all its
/// runs take (a session's, whose work dir is theirs) instead of a uid of each run's own.
std::unique_ptr<command_runner> make_driver_runner(execution_policy policy, driver_options options, driver d,
                                                   std::optional<std::pair<uid_t, gid_t>> fixed_user = std::nullopt);

/// "NAME=value" strings.
std::vector<std::string> env_strings(const env_list& env);

/// The timers and output caps of one run.
run_limits limits_for(const execution_policy& policy, const driver_options& options, const exec_options& o = {});

/// The uid:gid a command of driver `d` runs as (the firejail account under a root caller,
/// else sandbox_uid()/sandbox_gid()): what a work dir kept between runs must belong to.
std::pair<uid_t, gid_t> command_ids(driver d, const driver_options& options);

}  // namespace sandbox::detail

#endif
