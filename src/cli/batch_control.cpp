// SPDX-License-Identifier: BSL-1.0
// How a batch stops (a signal, --halt, an error) and the command line that resumes it.
#include "batch_run.hpp"

#include "io.hpp"
#include "option_values.hpp"

#include <sys/stat.h>
#include <unistd.h>

namespace sandbox::cli {

void batch_run::count_for_halt(job_outcome o)
{
    const auto& rule = o_.halt;
    if (rule.at == halt_rule::when::never || o == job_outcome::cancelled) return;
    ++halt_ended_;
    if (o != job_outcome::succeeded) ++halt_failures_;
    if (halted() || stopping_) return;
    if (rule.percent > 0) {
        // A share of the jobs ended so far, judged once there are a few of them.
        if (halt_failures_ == 0 || halt_ended_ < halt_percent_min_jobs ||
            static_cast<double>(halt_failures_) * 100.0 < rule.percent * static_cast<double>(halt_ended_))
            return;
    } else if (o == job_outcome::succeeded || halt_failures_ < rule.failures) {
        return;
    }
    halt_reason_ = "halted after " + std::to_string(halt_failures_) + (halt_failures_ == 1 ? " failure" : " failures");
    if (rule.percent > 0)
        halt_reason_ += " in " + std::to_string(halt_ended_) + (halt_ended_ == 1 ? " job" : " jobs");
    halt_reason_ += " (--halt " + halt_text(rule) + ")";
    stop(rule.at == halt_rule::when::now);
}

// After a stop, the command line that runs what is left.
void batch_run::say_resume_command() const
{
    std::string target;
    bool append = false;
    if (o_.output_file && *o_.output_file != "-") target = *o_.output_file;
    else if (struct stat st {}; ::fstat(STDOUT_FILENO, &st) == 0 && S_ISREG(st.st_mode)) {
        char path[4096];
        const auto n = ::readlink("/proc/self/fd/1", path, sizeof path - 1);
        if (n > 0 && path[0] == '/') {
            target.assign(path, static_cast<std::size_t>(n));
            append = true;
        }
    }
    if (target.empty()) {
        say("to resume later, write the results to a file (-o FILE) and run again with --resume FILE");
        return;
    }
    if (o_.resume_file && *o_.resume_file != target) {
        say("to resume: put both results together (cat " + shell_quote(*o_.resume_file) + " " + shell_quote(target) +
            " > all.jsonl) and run again with --resume all.jsonl");
        return;
    }
    std::string cmd(program_name);
    for (const auto& a : o_.args) cmd += " " + shell_quote(a);
    if (!o_.resume_file) cmd += " --resume " + shell_quote(target);
    if (append) cmd += " >> " + shell_quote(target);
    say("to resume: " + cmd);
}

std::string batch_run::stop_reason() const
{
    if (stop_signal_) return "sandbox-run was interrupted by " + signal_name(stop_signal_);
    if (halted()) return "sandbox-run " + halt_reason_;
    return "sandbox-run stopped";
}

// Starts no more jobs; `cancel_running`: the running ones are cancelled too (also after an
// earlier stop that let them run).
void batch_run::stop(bool cancel_running)
{
    if (!stopping_) {
        stopping_ = true;
        source_.cancel();
        room_.cancel();
    }
    // (workers done: the writer failed while draining)
    if (workers_done_ || !cancel_running || running_cancelled_) return;
    running_cancelled_ = true;
    for (unsigned i = 0; i < workers_; ++i) cancel_[i].emit(asio::cancellation_type::terminal);
}

void batch_run::record_internal_error(std::exception_ptr e)
{
    try {
        std::rethrow_exception(e);
    } catch (const std::exception& ex) {
        internal_error_ = ex.what();
    } catch (...) {
        internal_error_ = "unknown exception";
    }
    stop();
}

}  // namespace sandbox::cli
