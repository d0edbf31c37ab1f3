// SPDX-License-Identifier: BSL-1.0
// One line of a jobs file, and the result lines written for it.
#ifndef SANDBOX_CLI_JOB_HPP
#define SANDBOX_CLI_JOB_HPP

#include <sandbox/sandbox.hpp>

#include <boost/json/value.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sandbox::cli {

/// `{"id": ..., "argv": [...], "stdin": "...", "policy": {...}}`; only argv is required.
struct job {
    boost::json::value id;  ///< as given, else the line number
    std::vector<std::string> argv;
    std::optional<std::string> stdin_data;
    std::optional<execution_policy> policy;  ///< the line's policy keys over the base policy
    std::string error;                       ///< non-empty: the line cannot run, and why
};

/// Parses and checks one line. Never throws for bad input: it fills `error` instead (and
/// `id` as far as the line gives one).
job parse_job(std::string_view text, std::uint64_t line_number, const execution_policy& base);

/// to_json(r), with bytes that are not UTF-8 in stdout and stderr replaced by U+FFFD so
/// that the text is valid JSON whatever the command wrote.
std::string result_json(exec_result r);

/// `{"id":...,"line":N,<the keys of result_json(r)>}` and a newline.
std::string result_line(const boost::json::value& id, std::uint64_t line_number, exec_result r);
/// `{"id":...,"line":N,"error":"..."}` and a newline.
std::string error_line(const boost::json::value& id, std::uint64_t line_number, std::string_view error);

}  // namespace sandbox::cli

#endif
