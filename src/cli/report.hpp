// SPDX-License-Identifier: BSL-1.0
// `sandbox-run report RESULTS.jsonl [-o report.html]`: one self-contained HTML page about the
// result lines of a batch (summary, timeline, durations, slowest and failed jobs). Inline CSS
// and SVG only: no script, nothing fetched, so it looks the same in any browser, offline.
#ifndef SANDBOX_CLI_REPORT_HPP
#define SANDBOX_CLI_REPORT_HPP

#include <string>
#include <string_view>
#include <vector>

namespace sandbox::cli {

/// Runs `report` with the arguments that follow the word and returns the exit status: 2 (with
/// one line on stderr) for a bad flag, an input that cannot be read or an output that cannot
/// be made, 1 when the page could not be written.
int run_report(const std::vector<std::string_view>& args);

/// The `report --help` text.
std::string report_usage_text();

}  // namespace sandbox::cli

#endif
