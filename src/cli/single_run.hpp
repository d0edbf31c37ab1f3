// SPDX-License-Identifier: BSL-1.0
// One command: output streamed live (or one JSON object), the command's exit status.
#ifndef SANDBOX_CLI_SINGLE_RUN_HPP
#define SANDBOX_CLI_SINGLE_RUN_HPP

#include "options.hpp"

#include <exception>
#include <string>
#include <vector>

namespace sandbox::cli {

/// How one command run by run_until_stopped() ended.
struct run_outcome {
    std::exception_ptr error;  ///< what execute() threw, if it did
    exec_result result;
    int stop_signal = 0;  ///< the SIGINT, SIGTERM or SIGHUP that stopped it, 0 if none
};

/// Runs `command` until it ends, or until SIGINT, SIGTERM or SIGHUP stops it (its whole
/// tree); with `stream`, its output goes to this program's stdout and stderr as it comes.
run_outcome run_until_stopped(command_runner& runner, const std::vector<std::string>& command, exec_options eo,
                              bool stream);

/// Runs o.command under `policy` and returns the exit status for the tool (see --help).
int run_single(const options& o, const execution_policy& policy);

}  // namespace sandbox::cli

#endif
