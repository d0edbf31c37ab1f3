// SPDX-License-Identifier: BSL-1.0
// The one command_runner behind every driver.
#ifndef SANDBOX_SRC_API_DRIVER_RUNNER_HPP
#define SANDBOX_SRC_API_DRIVER_RUNNER_HPP

#include <sandbox/command_runner.hpp>

#include <sys/types.h>

#include <memory>
#include <optional>
#include <utility>

namespace sandbox::detail {

/// A runner executing the row of `d` (drivers/table.cpp). `fixed_user`: the uid:gid all its
/// runs take (a session's, whose work dir is theirs) instead of a uid of each run's own.
std::unique_ptr<command_runner> make_driver_runner(execution_policy policy, driver_options options, driver d,
                                                   std::optional<std::pair<uid_t, gid_t>> fixed_user = std::nullopt);

}  // namespace sandbox::detail

#endif
