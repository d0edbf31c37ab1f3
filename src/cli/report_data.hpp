// SPDX-License-Identifier: BSL-1.0
// The report's data model: what is kept of each result line, and what the page computes from it.
#ifndef SANDBOX_CLI_REPORT_DATA_HPP
#define SANDBOX_CLI_REPORT_DATA_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sandbox::cli {

enum class outcome : unsigned char { succeeded, failed, timed_out, cancelled, error };
inline constexpr std::size_t outcome_count = 5;

struct outcome_style {
    const char* name;
    const char* colour;
};
// Exact colours: the browser test counts their pixels in a screenshot.
inline constexpr std::array<outcome_style, outcome_count> styles{{
    {"succeeded", "#2e9d4a"},
    {"failed", "#d1352b"},
    {"timed out", "#e08a00"},
    {"cancelled", "#7d6cc4"},
    {"error", "#6b6b6b"},
}};

inline std::size_t index_of(outcome o) { return static_cast<std::size_t>(o); }

// What the page draws; chosen so that 100,000 jobs still make a page of a few megabytes.
inline constexpr double chart_width = 1000;     // px of the time axis
inline constexpr double chart_left = 56;        // px for the slot labels
inline constexpr double strip_width = 2;        // px of one merged strip
inline constexpr std::size_t bar_budget = 4000;  // jobs drawn as bars of their own
inline constexpr std::size_t max_rows = 100;     // slots drawn
inline constexpr std::size_t slowest_count = 20;
inline constexpr std::size_t failure_groups_max = 50;  // kinds of failure listed
inline constexpr std::size_t failure_examples = 10;    // jobs listed in each
inline constexpr std::size_t max_warnings = 10;
inline constexpr std::size_t histogram_bins = 30;

struct job_record {
    std::int64_t start_us = 0;  // since the epoch, when `timed`
    std::int64_t end_us = 0;
    double duration = -1;       // seconds; negative: unknown
    std::uint64_t line = 0;     // in the jobs file (the result's "line"), else 0
    std::string id;             // shortened, not escaped
    std::string status;         // "exit 3", "SIGKILL", "timed out (wall)", ...
    outcome kind = outcome::error;
    bool timed = false;
};

struct failure {
    std::size_t job;     // index into the records
    std::string detail;  // the error, or the start error, or the last line of stderr
};

// The failures that ended the same way: one exit status, signal or timeout, or one error.
struct failure_group {
    outcome kind = outcome::failed;
    std::string label;              // "exit 3", "SIGKILL", "timed out (wall)", "Failed to start docker"
    std::uint64_t count = 0;
    std::vector<failure> examples;  // the first failure_examples, in file order
};

struct report_data {
    std::vector<job_record> jobs;
    std::vector<failure_group> failure_groups;  // largest first (the first failure_groups_max kinds)
    std::uint64_t failures_total = 0;
    std::uint64_t failures_ungrouped = 0;       // of kinds beyond failure_groups_max
    std::uint64_t bad_lines = 0;
    std::uint64_t superseded = 0;     // results of an id that a later line of the same id replaced
    std::uint64_t retried = 0;        // jobs with more than one attempt
    std::uint64_t attempts_total = 0;  // over the jobs that say
    std::array<std::uint64_t, outcome_count> counts{};
};

struct timeline {
    std::int64_t t0 = 0;                  // the first start
    std::int64_t t1 = 0;                  // the last end
    std::vector<std::size_t> order;       // timed jobs by start
    std::vector<std::uint32_t> slot;      // per job; meaningful for the timed ones
    std::size_t slots = 0;                // the most jobs that ran at once
};

/// One line on stderr, after "sandbox-run report: "; never throws.
void say(const std::string& s) noexcept;

/// The result lines of `fd` (named `name` in messages); a line that is not one is skipped
/// with a warning. Throws usage_error when the input cannot be read.
report_data read_results(int fd, const std::string& name);

/// The slot of each timed job: as many slots as the most jobs that ran at once.
timeline place(const std::vector<job_record>& jobs);

/// The label a failure is grouped under: its status, or for an error the text before its
/// first colon ("Failed to start docker").
std::string failure_label(const job_record& j, const std::string& detail);

/// The duration above which a job is an outlier, far above the others (Tukey's far-out fence,
/// Q3 + 3 IQR), for durations sorted ascending; negative when there are too few to tell.
double outlier_fence(const std::vector<double>& sorted);

/// The nearest-rank quantile `q` of durations sorted ascending (not empty).
double quantile(const std::vector<double>& sorted, double q);

/// A tick step of 1, 2 or 5 times a power of ten, giving about `ticks` ticks over `span`.
double nice_step(double span, int ticks);

}  // namespace sandbox::cli

#endif
