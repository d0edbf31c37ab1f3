// SPDX-License-Identifier: BSL-1.0
// The workers of a batch and the loop that runs them until the results are written.
//
// One io_context on one thread, a fixed number of worker coroutines (-j) that each take the
// next line from the input, run it and hand its result line to the result_writer before
// taking another. The writer's own thread writes the lines in that order (completion order),
// each as soon as the reader takes it, so a slow reader never holds up the io thread, the
// running jobs or their timeouts. So the cost per job is flat however long the input:
// nothing is kept for a finished job, the input is read a line at a time, and the results in
// memory are bounded: while the lines waiting to be written reach max_pending_bytes, no
// worker starts another job (back-pressure), so at most that much plus -j results (their
// output tails bounded by the caps) are held. No process is started besides the commands
// themselves.
//
// Stopping (SIGINT, SIGHUP, a second SIGTERM, or the results can no longer be written): each
// worker was spawned with its own cancellation signal; emitting them cancels the running
// executions, which kill and reap their process trees before they complete. Since workers
// take lines in order, what was not run is every line from the first one not taken. A first
// SIGTERM (and --halt soon) only stops the taking: the running jobs finish. Once
// every worker is done, the run lasts until the writer has written everything; a signal then
// (the first, or one after the jobs were stopped) drops what the reader has not taken yet.
#include "batch_run.hpp"

#include "io.hpp"
#include "option_values.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>

namespace sandbox::cli {

batch_run::batch_run(const options& o, const execution_policy& policy, int in_fd, bool own_in, int out_fd,
                     resumed_ids resumed)
    : o_(o),
      writer_fd_(out_fd),
      policy_(policy),
      source_(ctx_.get_executor(), in_fd, own_in, o.max_line),
      writer_(out_fd, max_pending_bytes, [this] { asio::post(ctx_, [this] { writer_changed(); }); },
              shares_terminal(o, out_fd) ? &terminal_ : nullptr),
      room_(ctx_),
      workers_(worker_count(o, source_)),
      cancel_(std::make_unique<asio::cancellation_signal[]>(workers_)),
      max_line_(o.max_line)
{
    driver_options_ = driver_options_for(o);
    driver_ = o.driver;
    base_runner_ = make_runner(policy_, driver_, driver_options_);
    show_progress_ = o.progress.value_or(is_terminal(STDERR_FILENO));
    room_.expires_at(asio::steady_timer::time_point::max());
    resumed_ = std::move(resumed);
    asked_ = asked_by(o);
}

std::vector<std::string> batch_run::unenforced() const
{
    return unenforced_settings(asked_, policy_, base_runner_->caps(), driver_);
}

int batch_run::run()
{
    ensure_descriptor_limit(64 + 8ul * workers_);
    const auto start = clock::now();
    std::optional<progress_display> progress;
    if (show_progress_) {
        progress.emplace(ctx_.get_executor(), counts_, source_.count_all(), start,
                         shares_terminal(o_, writer_fd_) ? &terminal_ : nullptr);
        progress->start();
    }
    // Keeps the run going after the workers, until the writer is done.
    writing_.emplace(ctx_.get_executor());
    // As GNU parallel: a first SIGTERM starts no more jobs and lets the running ones finish;
    // SIGINT, SIGHUP or a second signal cancels the running ones.
    signals_.emplace(
        ctx_,
        [this](int sig) {
            stop_signal_ = sig;
            if (workers_done_) {
                writer_.abort();  // only the results are left: drop them
            } else if (sig == SIGTERM) {
                graceful_ = true;
                stop(false);
                if (counts_.running > 0)
                    say("SIGTERM: starting no more jobs; waiting for the " + std::to_string(counts_.running) +
                        (counts_.running == 1 ? " running one" : " running ones") +
                        " to finish (SIGTERM again or SIGINT stops them now)");
            } else {
                stop();
            }
        },
        [this](int) {  // later: cancels the jobs still running, or drops the results left
            if (workers_done_) writer_.abort();
            else stop();
        });

    // Sandboxes started ahead: the first jobs do not wait for them (they start cold until some
    // are ready), and a pool that cannot start says why once and leaves the jobs cold.
    if (o_.warm > 0 && base_runner_->caps().level != isolation::none && driver_ != driver::slurm)
        asio::co_spawn(ctx_, base_runner_->prewarm(o_.warm), [](std::exception_ptr e) {
            if (!e) return;
            try {
                std::rethrow_exception(e);
            } catch (const boost::system::system_error& err) {
                if (err.code() != asio::error::operation_aborted)
                    say("warning: --warm: no sandbox started ahead, jobs start cold: " + std::string(err.what()));
            } catch (const std::exception& err) {
                say("warning: --warm: no sandbox started ahead, jobs start cold: " + std::string(err.what()));
            }
        });

    unsigned active = workers_;
    for (unsigned i = 0; i < workers_; ++i) {
        asio::co_spawn(ctx_, worker(),
                       asio::bind_cancellation_slot(cancel_[i].slot(), [&](std::exception_ptr e) {
                           if (e) record_internal_error(e);
                           if (--active == 0) {
                               // No job is coming: the sandboxes started ahead go now.
                               if (o_.warm > 0) asio::co_spawn(ctx_, base_runner_->prewarm(0), asio::detached);
                               if (progress) progress->stop();
                               release_held();
                               workers_done_ = true;
                               writer_.close();
                               finish_if_done();
                           }
                       }));
    }
    ctx_.run();
    const double elapsed = std::chrono::duration<double>(clock::now() - start).count();

    not_run_info not_run;
    if (stopping_) {
        const auto rest = source_.count_rest();
        not_run.lines = rest.lines + taken_not_run_;
        not_run.first_line = rest.first_line;
        if (first_taken_not_run_ != 0 && (not_run.first_line == 0 || first_taken_not_run_ < not_run.first_line))
            not_run.first_line = first_taken_not_run_;
        not_run.complete = rest.complete;
    }

    std::string stopped_by;
    if (stop_signal_ && graceful_ && !running_cancelled_)
        stopped_by = "stopped by " + signal_name(stop_signal_) + " (the running jobs finished)";
    else if (stop_signal_) stopped_by = "interrupted by " + signal_name(stop_signal_);
    else if (halted()) stopped_by = halt_reason_;
    else if (output_errno_) stopped_by = "stopped: cannot write the results (" + std::string(std::strerror(output_errno_)) + ")";
    if (const auto lost = writer_.dropped(); lost > 0) {
        if (!stopped_by.empty()) stopped_by += "; ";
        stopped_by += std::to_string(lost) + (lost == 1 ? " result" : " results") + " not written";
    }
    if (!internal_error_.empty()) say("internal error: " + internal_error_);
    if (!source_.read_error().empty()) say("error reading the jobs: " + source_.read_error());
    say_line(format_summary(counts_, not_run, elapsed, stopped_by));
    if (duplicate_ids_ > 0)
        say(std::to_string(duplicate_ids_) + (duplicate_ids_ == 1 ? " line has an id" : " lines have ids") +
            " an earlier line has (first: " + first_duplicate_ + "); --resume needs every id to be unique");
    if (not_run.lines > 0 || counts_.cancelled > 0) say_resume_command();

    if (stop_signal_) return 128 + stop_signal_;
    if (output_errno_ == EPIPE) return 128 + SIGPIPE;
    // As GNU parallel's: what this run did (a job that failed in an earlier run and was
    // skipped is in the summary, not in the status), so a loop of the same --resume command
    // line ends.
    const bool all_ok = counts_.failures() == 0 && not_run.lines == 0 && !output_errno_ &&
                        source_.read_error().empty() && internal_error_.empty();
    return all_ok ? exit_status::ok : exit_status::some_failed;
}

void batch_run::say_line(const std::string& s) noexcept
{
    try {
        write_all(STDERR_FILENO, s + "\n");
    } catch (...) {  // nowhere left to say it
    }
}

void batch_run::say(const std::string& s) noexcept { say_line(std::string(program_name) + ": " + s); }

// The results go to the terminal that shows the progress line.
bool batch_run::shares_terminal(const options& o, int out_fd)
{
    return o.progress.value_or(is_terminal(STDERR_FILENO)) && is_terminal(out_fd) && is_terminal(STDERR_FILENO);
}

// -j N, or the CPUs; -j 0: one worker a job, up to all_at_once_jobs (a stream of unknown
// length gets them all).
unsigned batch_run::worker_count(const options& o, const line_source& source)
{
    if (!o.jobs) return cpu_count();
    if (*o.jobs > 0) return *o.jobs;
    const auto total = source.count_all().value_or(all_at_once_jobs);
    return static_cast<unsigned>(std::clamp<std::uint64_t>(total, 1, all_at_once_jobs));
}

asio::awaitable<void> batch_run::worker()
{
    // After a stop, the coroutine's cancellation state stays set; this worker only
    // finishes the job it has (its result says "cancelled") and then returns.
    co_await asio::this_coro::throw_if_cancelled(false);
    while (!stopping_) {
        // Back-pressure: while the reader is behind, start nothing new.
        while (!stopping_ && (writer_.full() || held_bytes_ >= keep_order_window))
            co_await room_.async_wait(asio::as_tuple(asio::use_awaitable));
        if (stopping_) break;
        auto line = co_await source_.next();
        if (!line) break;
        const auto seq = next_seq_++;
        if (stopping_) {  // taken while stopping: not run
            ++taken_not_run_;
            if (first_taken_not_run_ == 0 || line->number < first_taken_not_run_)
                first_taken_not_run_ = line->number;
            emit(seq, {});
            break;
        }
        co_await run_line(std::move(*line), seq);
    }
}

// On the io thread, after the writer's thread said something changed.
void batch_run::writer_changed()
{
    if (const int e = writer_.error(); e && !output_errno_) {  // the results go nowhere any more
        output_errno_ = e;
        stop();
    }
    room_.cancel();  // the workers waiting for room look again
    finish_if_done();
}

// Everything is done once the workers are and the writer has written (or dropped) the rest.
void batch_run::finish_if_done()
{
    if (!workers_done_ || !writing_ || !writer_.finished()) return;
    writing_.reset();
    signals_->close();
}

}  // namespace sandbox::cli
