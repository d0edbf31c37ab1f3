// SPDX-License-Identifier: BSL-1.0
// One command: output streamed live (or one JSON object), the command's exit status.
#ifndef SANDBOX_CLI_SINGLE_RUN_HPP
#define SANDBOX_CLI_SINGLE_RUN_HPP

#include "options.hpp"

namespace sandbox::cli {

/// Runs o.command under `policy` and returns the exit status for the tool (see --help).
int run_single(const options& o, const execution_policy& policy);

}  // namespace sandbox::cli

#endif
