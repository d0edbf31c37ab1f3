// SPDX-License-Identifier: BSL-1.0
// One line of a batch: its checks, its attempts (--retries), its result line, its place under -k.
#include "batch_run.hpp"

#include "io.hpp"

#include <boost/asio/error.hpp>
#include <boost/system/system_error.hpp>

#include <functional>

namespace sandbox::cli {

asio::awaitable<void> batch_run::run_line(line_source::line line, std::uint64_t seq)
{
    run_times times;
    times.started_at = times.ended_at = system_clock::now();
    if (line.too_long) {
        finish_unrun(job_outcome::error);
        emit(seq, error_line(nullptr, line.number, times,
                             "the line is longer than --max-line (" + std::to_string(max_line()) + " bytes)"));
        co_return;
    }
    job j = parse_job(line.text, line.number, policy_);
    line.text = std::string();  // the line is not needed while the job runs
    if (j.error.empty()) j.error = check_job(j);
    if (!j.error.empty()) {
        finish_unrun(job_outcome::error);
        emit(seq, error_line(j.id, line.number, times, j.error));
        co_return;
    }
    if (!resumed_.empty()) {
        const auto it = resumed_.find(id_key(j.id));
        if (it != resumed_.end() && (it->second || !o_.resume_failed)) {  // done before
            ++counts_.skipped;
            if (!it->second) ++counts_.skipped_failed;
            emit(seq, {});
            co_return;
        }
    }

    std::unique_ptr<command_runner> own;  // a job with its own policy or driver gets its own runner
    command_runner* runner = base_runner_.get();
    if (j.policy || j.driver || j.image) {
        auto opts = driver_options_;
        if (j.image) opts.image = *j.image;
        own = make_runner(j.policy ? std::move(*j.policy) : policy_, j.driver.value_or(driver_), opts);
        runner = own.get();
        if (o_.strict) {
            auto asked = asked_by(j.policy_keys);
            using field = std::string asked_settings::*;
            for (field f : {&asked_settings::memory, &asked_settings::disk, &asked_settings::network_off,
                            &asked_settings::paths})
                if ((asked.*f).empty()) asked.*f = asked_.*f;
            const auto missing =
                unenforced_settings(asked, runner->policy(), runner->caps(), j.driver.value_or(driver_));
            if (!missing.empty()) {
                finish_unrun(job_outcome::error);
                emit(seq, error_line(j.id, line.number, times,
                                     missing.front() + " (" + make_error_code(errc::limit_not_enforced).message() +
                                         "; --strict)"));
                co_return;
            }
        }
    }

    // Counted as running until its outcome is counted, once, whatever throws below.
    running_job tally(counts_);
    std::optional<exec_result> result;
    std::string error;
    job_outcome outcome = job_outcome::error;
    // A job that failed to start or did not succeed runs again, up to --retries more
    // times; the result is the last attempt's, its times span them all.
    for (unsigned attempt = 0; attempt <= o_.retries && !stopping_; ++attempt) {
        result.reset();
        error.clear();
        outcome = job_outcome::error;
        ++times.attempts;
        try {
            // Plain locals: g++ 12 mishandles temporaries made by ?: inside a co_await.
            std::vector<std::string> args;
            std::optional<std::string> input;
            if (attempt == o_.retries) {
                args = std::move(j.argv);
                input = std::move(j.stdin_data);
            } else {
                args = j.argv;
                input = j.stdin_data;
            }
            exec_options eo;
            eo.stdin_data = std::move(input);
            if (o_.verbose)
                eo.on_launch = [n = line.number](const launch_preview& p) {
                    say("line " + std::to_string(n) + ": starting: " + shell_command(p.argv));
                };
            result = co_await runner->execute(std::move(args), std::move(eo));
            outcome = result->success() ? job_outcome::succeeded
                      : result->timed_out ? job_outcome::timed_out
                                          : job_outcome::failed;
        } catch (const boost::system::system_error& e) {
            if (e.code() == asio::error::operation_aborted && stopping_) {
                outcome = job_outcome::cancelled;
                error = "cancelled: " + stop_reason();
            } else {
                error = e.what();
            }
        } catch (const std::exception& e) {  // launch_error and anything else: this job only
            error = e.what();
        }
        if (outcome == job_outcome::succeeded || outcome == job_outcome::cancelled) break;
    }
    // A stop (--halt soon) that cuts the retries short leaves the job unfinished rather than
    // failed, so --resume runs it again.
    if (stopping_ && outcome != job_outcome::succeeded && outcome != job_outcome::cancelled &&
        times.attempts <= o_.retries) {
        std::string how = error.empty() ? std::string() : ": " + error;
        if (result)
            how = result->timed_out     ? ": timed out"
                  : result->term_signal ? ": signal " + std::to_string(result->term_signal)
                                        : ": exit " + std::to_string(result->exit_code);
        error = "cancelled: " + stop_reason() + " (attempt " + std::to_string(times.attempts) + " of " +
                std::to_string(o_.retries + 1) + " did not succeed" + how + ")";
        outcome = job_outcome::cancelled;
        result.reset();
    }
    times.ended_at = system_clock::now();

    std::string out;
    if (result) {
        try {
            out = result_line(j.id, line.number, times, std::move(*result));
        } catch (const std::exception& e) {  // the job ran, but its result cannot be told
            outcome = job_outcome::error;
            error = std::string("cannot make the result line: ") + e.what();
        }
    }
    if (out.empty()) out = error_line(j.id, line.number, times, error);
    tally.finish(outcome);
    emit(seq, std::move(out));
    count_for_halt(outcome);
}

// A line that never ran: counted, and for --halt.
void batch_run::finish_unrun(job_outcome o)
{
    count_outcome(counts_, o);
    count_for_halt(o);
}

// What stops a job line from running before it starts: ids used twice under --resume,
// and under --lock-policy whatever loosens the command line's policy.
std::string batch_run::check_job(const job& j)
{
    const auto key = id_key(j.id);
    if (!ids_seen_.insert(std::hash<std::string>{}(key)).second) {
        if (o_.resume_file) return "id " + key + " is used by an earlier line too; --resume needs every id to be unique";
        if (duplicate_ids_++ == 0) first_duplicate_ = key;
    }
    if (!o_.lock_policy) return {};
    if (j.driver && *j.driver != driver_)
        return "key \"driver\": --lock-policy keeps the command line's driver (" + std::string(to_string(driver_)) + ")";
    if (j.image && *j.image != driver_options_.image)
        return "key \"image\": --lock-policy keeps the command line's image (" + driver_options_.image + ")";
    if (j.policy) {
        if (auto what = loosened_setting(policy_, *j.policy); !what.empty())
            return "key \"policy\": --lock-policy allows only tighter settings; " + what;
    }
    return {};
}

// Never waits: the writer's thread writes the line. `seq` is the line's place in the
// input; with -k a line waits here for those before it (an empty one only makes way).
void batch_run::emit(std::uint64_t seq, std::string line)
{
    if (!o_.keep_order) {
        if (!line.empty()) writer_.push(std::move(line));
        return;
    }
    held_bytes_ += line.size();
    held_.emplace(seq, std::move(line));
    const bool had_room = held_bytes_ < keep_order_window;
    while (!held_.empty() && held_.begin()->first == next_emit_) {
        release(held_.begin());
        ++next_emit_;
    }
    if (!had_room && held_bytes_ < keep_order_window) room_.cancel();
}

void batch_run::release(std::map<std::uint64_t, std::string>::iterator it)
{
    held_bytes_ -= it->second.size();
    if (!it->second.empty()) writer_.push(std::move(it->second));
    held_.erase(it);
}

// Once no job runs: whatever still waits for a line that will never come goes out in order.
void batch_run::release_held()
{
    while (!held_.empty()) release(held_.begin());
}

}  // namespace sandbox::cli
