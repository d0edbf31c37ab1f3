// SPDX-License-Identifier: BSL-1.0
// Batch mode: jobs from a file of JSON lines, -j at a time, results as JSON lines as they end.
#ifndef SANDBOX_CLI_BATCH_HPP
#define SANDBOX_CLI_BATCH_HPP

#include "options.hpp"

namespace sandbox::cli {

/// Runs the jobs of o.batch_file under `policy` (each line's own policy keys over it) and
/// returns the exit status: 0 all succeeded, 1 some did not, 128+N stopped by signal N.
int run_batch(const options& o, const execution_policy& policy);

}  // namespace sandbox::cli

#endif
