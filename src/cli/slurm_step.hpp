// SPDX-License-Identifier: BSL-1.0
// `sandbox-run slurm-step`: the node side of the slurm driver.
#ifndef SANDBOX_CLI_SLURM_STEP_HPP
#define SANDBOX_CLI_SLURM_STEP_HPP

#include "options.hpp"

#include <string_view>
#include <vector>

namespace sandbox::cli {

/// Runs the command of `args` (the words after "slurm-step") and returns the exit status.
/// Throws usage_error for arguments it does not take.
int run_slurm_step(const std::vector<std::string_view>& args);

}  // namespace sandbox::cli

#endif
