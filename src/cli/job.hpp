// SPDX-License-Identifier: BSL-1.0
// One line of a jobs file, and the result lines written for it.
#ifndef SANDBOX_CLI_JOB_HPP
#define SANDBOX_CLI_JOB_HPP

#include <sandbox/sandbox.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sandbox::cli {

/// `{"id": ..., "argv": [...], "stdin": "...", "policy": {...}, "driver": "...", "image": "..."}`;
/// only argv is required.
struct job {
    boost::json::value id;  ///< as given, else the line number; null when the line cannot be read
    std::vector<std::string> argv;
    std::optional<std::string> stdin_data;
    std::optional<execution_policy> policy;  ///< the line's policy keys over the base policy
    boost::json::object policy_keys;         ///< the line's policy object as given
    std::optional<sandbox::driver> driver;
    std::optional<std::string> image;
    std::string error;                       ///< non-empty: the line cannot run, and why
};

/// Parses and checks one line. Never throws for bad input: it fills `error` instead (and
/// `id` as far as the line gives one).
job parse_job(std::string_view text, std::uint64_t line_number, const execution_policy& base);

/// Empty when `job` is at most as permissive as `base`; else which setting it loosens and
/// how (for --lock-policy): a longer timeout or none, more memory, disk or output, the
/// network on, the caller's environment, paths that base does not give, another base dir.
std::string loosened_setting(const execution_policy& base, const execution_policy& job);

/// What a result line says besides the result: the attempts made (0 for a line that never
/// ran) and when the first began and the last ended.
struct run_times {
    unsigned attempts = 0;
    std::chrono::system_clock::time_point started_at;
    std::chrono::system_clock::time_point ended_at;
};

/// "0.5 s", or "none" for sandbox::no_timeout: a limit as the messages say it.
std::string seconds_text(std::chrono::milliseconds d);

/// RFC 3339 in UTC with microseconds: "2026-12-02T20:31:40.123456Z".
std::string rfc3339(std::chrono::system_clock::time_point t);

/// to_json(r), with bytes that are not UTF-8 in stdout and stderr replaced by U+FFFD so
/// that the text is valid JSON whatever the command wrote.
std::string result_json(exec_result r);

/// `{"id":...,"line":N,"attempts":A,"started_at":"...","ended_at":"...",<the keys of
/// result_json(r)>}` and a newline.
std::string result_line(const boost::json::value& id, std::uint64_t line_number, const run_times& t, exec_result r);
/// `{"id":...,"line":N,"attempts":A,"started_at":"...","ended_at":"...","error":"..."}` and a newline.
std::string error_line(const boost::json::value& id, std::uint64_t line_number, const run_times& t,
                       std::string_view error);

}  // namespace sandbox::cli

#endif
