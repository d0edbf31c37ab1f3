// SPDX-License-Identifier: BSL-1.0
// Batch counters, the progress line on stderr and the closing summary.
#ifndef SANDBOX_CLI_PROGRESS_HPP
#define SANDBOX_CLI_PROGRESS_HPP

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

namespace sandbox::cli {

struct batch_counts {
    std::uint64_t succeeded = 0;
    std::uint64_t failed = 0;     ///< ran and exited non-zero (or was killed by a signal)
    std::uint64_t timed_out = 0;
    std::uint64_t errors = 0;     ///< bad lines and launch failures
    std::uint64_t cancelled = 0;  ///< stopped by an interrupt
    std::uint64_t skipped = 0;    ///< --resume: done in an earlier run
    std::uint64_t skipped_failed = 0;  ///< of those, the ones that did not succeed then
    std::uint64_t running = 0;

    std::uint64_t finished() const noexcept { return succeeded + failed + timed_out + errors + cancelled + skipped; }
    std::uint64_t failures() const noexcept { return failed + timed_out + errors + cancelled; }
};

/// How a job ended, for the counters.
enum class job_outcome { succeeded, failed, timed_out, error, cancelled };

/// Counts one finished job (one that never ran: running is not touched).
inline void count_outcome(batch_counts& c, job_outcome o) noexcept
{
    switch (o) {
    case job_outcome::succeeded: ++c.succeeded; break;
    case job_outcome::failed: ++c.failed; break;
    case job_outcome::timed_out: ++c.timed_out; break;
    case job_outcome::error: ++c.errors; break;
    case job_outcome::cancelled: ++c.cancelled; break;
    }
}

/// A running job's place in the counters: it counts as running from construction until
/// finish() counts its outcome instead. A job that is never finished (an exception, or its
/// coroutine destroyed) counts as an error when this goes. Whatever throws where, each job is
/// counted exactly once and `running` comes back down exactly once.
class running_job {
public:
    explicit running_job(batch_counts& c) noexcept : counts_(&c) { ++c.running; }
    ~running_job() { finish(job_outcome::error); }
    running_job(const running_job&) = delete;
    running_job& operator=(const running_job&) = delete;

    /// Counts the outcome; only the first call counts.
    void finish(job_outcome o) noexcept
    {
        if (!counts_) return;
        --counts_->running;
        count_outcome(*counts_, o);
        counts_ = nullptr;
    }

private:
    batch_counts* counts_;
};

/// The terminal that shows both the progress line (stderr, drawn on the io thread) and the
/// results (stdout, written on the writer's thread): a result is written only with the
/// progress line cleared, so the two never mix on one line. The io thread only ever
/// try_locks: a terminal that stalls the writer skips redraws instead of holding up the jobs.
struct shared_terminal {
    std::mutex mutex;
    bool line_shown = false;  ///< under mutex: the progress line is on the screen

    /// Clears the progress line if it is shown; call with mutex held.
    void clear_line() noexcept;
};

/// Redraws one `\r` line on stderr at most ten times a second while a batch runs.
class progress_display {
public:
    using clock = std::chrono::steady_clock;

    /// `terminal`: set when the results go to the same terminal (not owned; outlives this).
    progress_display(boost::asio::any_io_executor ex, const batch_counts& counts, std::optional<std::uint64_t> total,
                     clock::time_point start, shared_terminal* terminal = nullptr);
    void start();
    /// Stops redrawing and clears the line.
    void stop();

    /// The line for the counters at `now` (without the leading `\r`).
    static std::string render(const batch_counts& counts, std::optional<std::uint64_t> total, double elapsed_s);

private:
    void tick();

    boost::asio::steady_timer timer_;
    const batch_counts& counts_;
    std::optional<std::uint64_t> total_;
    clock::time_point start_;
    std::string last_;
    bool running_ = false;
    shared_terminal* terminal_ = nullptr;
};

/// What was not run when a batch stopped early.
struct not_run_info {
    std::uint64_t lines = 0;
    std::uint64_t first_line = 0;
    bool complete = true;  ///< false: the input was not read to its end, so there may be more
};

/// "sandbox-run: N jobs: ... succeeded, ...; 1.42 s, 1408.5 jobs/s" (no newline).
std::string format_summary(const batch_counts& counts, const not_run_info& not_run, double elapsed_s,
                           const std::string& stopped_by);

}  // namespace sandbox::cli

#endif
