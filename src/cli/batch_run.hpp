// SPDX-License-Identifier: BSL-1.0
// The run of a batch: its workers, the jobs they take, their results, and how a run stops.
#ifndef SANDBOX_CLI_BATCH_RUN_HPP
#define SANDBOX_CLI_BATCH_RUN_HPP

#include "enforcement.hpp"
#include "job.hpp"
#include "line_source.hpp"
#include "options.hpp"
#include "progress.hpp"
#include "result_writer.hpp"
#include "signals.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace sandbox::cli {

// Result bytes waiting for the reader before the workers stop starting jobs.
inline constexpr std::size_t max_pending_bytes = 1 << 20;
// -k: result bytes held for an earlier job still running before the workers stop starting jobs.
inline constexpr std::size_t keep_order_window = 16 << 20;

// What --resume learnt from earlier results: each id's text (as JSON) and whether a result
// of it succeeded.
using resumed_ids = std::unordered_map<std::string, bool>;

/// A job's id as the key of resumed_ids: its text as JSON.
std::string id_key(const boost::json::value& id);

class batch_run {
    using clock = std::chrono::steady_clock;
    using system_clock = std::chrono::system_clock;

public:
    batch_run(const options& o, const execution_policy& policy, int in_fd, bool own_in, int out_fd,
              resumed_ids resumed);

    /// The settings of the command line that the driver does not enforce (checked before
    /// anything runs).
    std::vector<std::string> unenforced() const;

    bool halted() const noexcept { return !halt_reason_.empty(); }

    /// Runs the jobs; the exit status of the batch.
    int run();

    /// One line on stderr; never throws.
    static void say_line(const std::string& s) noexcept;
    /// One line on stderr after the program's name; never throws.
    static void say(const std::string& s) noexcept;

private:
    // The workers' loop.
    static bool shares_terminal(const options& o, int out_fd);
    static unsigned worker_count(const options& o, const line_source& source);
    asio::awaitable<void> worker();
    void writer_changed();
    void finish_if_done();

    // One line of the input: its job, its attempts and its result line.
    asio::awaitable<void> run_line(line_source::line line, std::uint64_t seq);
    void finish_unrun(job_outcome o);
    std::string check_job(const job& j);
    std::size_t max_line() const noexcept { return max_line_; }
    void emit(std::uint64_t seq, std::string line);
    void release(std::map<std::uint64_t, std::string>::iterator it);
    void release_held();

    // Stopping: by a signal, by --halt, by an error; and the command line that resumes.
    void count_for_halt(job_outcome o);
    void say_resume_command() const;
    std::string stop_reason() const;
    void stop(bool cancel_running = true);
    void record_internal_error(std::exception_ptr e);

    const options& o_;
    batch_counts counts_;  // before ctx_: a job's coroutine frame counts it when destroyed
    shared_terminal terminal_;  // before writer_, which uses it
    int writer_fd_;
    asio::io_context ctx_{1};
    execution_policy policy_;
    line_source source_;
    result_writer writer_;      // after ctx_: its thread posts to ctx_, and is joined first
    asio::steady_timer room_;   // wakes the workers waiting for room in the writer
    unsigned workers_;
    std::unique_ptr<asio::cancellation_signal[]> cancel_;
    std::size_t max_line_ = 0;
    driver driver_ = driver::host;
    driver_options driver_options_;
    std::unique_ptr<command_runner> base_runner_;
    bool show_progress_ = false;

    std::optional<asio::executor_work_guard<asio::io_context::executor_type>> writing_;
    std::optional<stop_signals> signals_;
    bool workers_done_ = false;

    bool stopping_ = false;
    bool running_cancelled_ = false;
    bool graceful_ = false;  // a first SIGTERM: the running jobs were left to finish
    int stop_signal_ = 0;
    int output_errno_ = 0;
    std::uint64_t taken_not_run_ = 0;
    std::uint64_t first_taken_not_run_ = 0;
    std::string internal_error_;

    resumed_ids resumed_;
    asked_settings asked_;
    std::unordered_set<std::size_t> ids_seen_;  // hashes of the ids so far: a few bytes a job
    std::uint64_t duplicate_ids_ = 0;
    std::string first_duplicate_;
    std::uint64_t halt_failures_ = 0;
    std::uint64_t halt_ended_ = 0;  // jobs that ended, for --halt fail=X%
    std::string halt_reason_;

    std::uint64_t next_seq_ = 0;   // the next line taken gets this place
    std::uint64_t next_emit_ = 0;  // -k: the place whose result goes out next
    std::map<std::uint64_t, std::string> held_;
    std::size_t held_bytes_ = 0;
};

}  // namespace sandbox::cli

#endif
