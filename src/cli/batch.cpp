// SPDX-License-Identifier: BSL-1.0
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
// Stopping (SIGINT, SIGTERM, SIGHUP, or the results can no longer be written): each worker
// was spawned with its own cancellation signal; emitting them cancels the running
// executions, which kill and reap their process trees before they complete. Since workers
// take lines in order, what was not run is every line from the first one not taken. Once
// every worker is done, the run lasts until the writer has written everything; a signal then
// (the first, or one after the jobs were stopped) drops what the reader has not taken yet.
#include "batch.hpp"

#include "enforcement.hpp"
#include "io.hpp"
#include "job.hpp"
#include "line_source.hpp"
#include "progress.hpp"
#include "result_writer.hpp"
#include "signals.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <thread>
#include <unordered_map>
#include <unordered_set>

namespace sandbox::cli {

namespace {

using clock = std::chrono::steady_clock;

// Result bytes waiting for the reader before the workers stop starting jobs.
constexpr std::size_t max_pending_bytes = 1 << 20;
// -k: result bytes held for an earlier job still running before the workers stop starting jobs.
constexpr std::size_t keep_order_window = 16 << 20;

using system_clock = std::chrono::system_clock;

// What --resume learnt from earlier results: each id's text (as JSON) and whether a result
// of it succeeded.
using resumed_ids = std::unordered_map<std::string, bool>;

std::string id_key(const boost::json::value& id) { return serialize_json(id); }

// A result line's id, unless the line is no result: not one of ours, or a job a stop
// cancelled, which --resume runs again like one never started.
const boost::json::value* finished_id(const boost::json::value& v)
{
    const auto* obj = v.if_object();
    const auto* id = obj ? obj->if_contains("id") : nullptr;
    if (!id) return nullptr;
    if (const auto* e = obj->if_contains("error"); e && e->is_string() && e->get_string().starts_with("cancelled"))
        return nullptr;
    return id;
}

// Reads the results of an earlier run, a line at a time; a line that is not a result (a
// torn or foreign line) is passed over.
resumed_ids read_resume_file(const std::string& name)
{
    std::ifstream in(name);
    if (!in) throw usage_error("--resume " + name + ": cannot read it: " + std::strerror(errno));
    resumed_ids ids;
    std::string text;
    while (std::getline(in, text)) {
        boost::system::error_code ec;
        const auto v = boost::json::parse(text, ec);
        const auto* id = ec ? nullptr : finished_id(v);
        if (!id) continue;
        const auto* ok = v.get_object().if_contains("success");
        auto& succeeded = ids[id_key(*id)];
        succeeded = succeeded || (ok && ok->is_bool() && ok->get_bool());
    }
    if (in.bad()) throw usage_error("--resume " + name + ": cannot read it: " + std::strerror(errno));
    return ids;
}


void say_line(const std::string& s) noexcept
{
    try {
        write_all(STDERR_FILENO, s + "\n");
    } catch (...) {  // nowhere left to say it
    }
}

void say(const std::string& s) noexcept { say_line(std::string(program_name) + ": " + s); }

class batch_run {
public:
    batch_run(const options& o, const execution_policy& policy, int in_fd, bool own_in, int out_fd, resumed_ids resumed)
        : o_(o),
          writer_fd_(out_fd),
          policy_(policy),
          source_(ctx_.get_executor(), in_fd, own_in, o.max_line),
          writer_(out_fd, max_pending_bytes, [this] { asio::post(ctx_, [this] { writer_changed(); }); },
                  shares_terminal(o, out_fd) ? &terminal_ : nullptr),
          room_(ctx_),
          workers_(o.jobs.value_or(default_jobs())),
          cancel_(std::make_unique<asio::cancellation_signal[]>(workers_)),
          max_line_(o.max_line)
    {
        if (o.image) driver_options_.image = *o.image;
        driver_ = o.driver;
        base_runner_ = make_runner(policy_, driver_, driver_options_);
        show_progress_ = o.progress.value_or(is_terminal(STDERR_FILENO));
        room_.expires_at(asio::steady_timer::time_point::max());
        resumed_ = std::move(resumed);
        asked_ = asked_by(o);
    }

    /// The settings of the command line that the driver does not enforce (checked before
    /// anything runs).
    std::vector<std::string> unenforced() const
    {
        return unenforced_settings(asked_, policy_, base_runner_->caps(), driver_);
    }

    bool halted() const noexcept { return !halt_reason_.empty(); }

    int run()
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
        signals_.emplace(
            ctx_,
            [this](int sig) {
                stop_signal_ = sig;
                if (workers_done_) writer_.abort();  // only the results are left: drop them
                else stop();
            },
            [this](int) {  // once the jobs are stopped, a later signal drops the results left
                if (workers_done_) writer_.abort();
            });

        unsigned active = workers_;
        for (unsigned i = 0; i < workers_; ++i) {
            asio::co_spawn(ctx_, worker(),
                           asio::bind_cancellation_slot(cancel_[i].slot(), [&](std::exception_ptr e) {
                               if (e) record_internal_error(e);
                               if (--active == 0) {
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
        if (stop_signal_) stopped_by = "interrupted by " + signal_name(stop_signal_);
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
        const bool all_ok = counts_.failures() == 0 && not_run.lines == 0 && !output_errno_ &&
                            source_.read_error().empty() && internal_error_.empty();
        return all_ok ? exit_status::ok : exit_status::some_failed;
    }

private:
    // The results go to the terminal that shows the progress line.
    static bool shares_terminal(const options& o, int out_fd)
    {
        return o.progress.value_or(is_terminal(STDERR_FILENO)) && is_terminal(out_fd) && is_terminal(STDERR_FILENO);
    }

    static unsigned default_jobs()
    {
        const unsigned n = std::thread::hardware_concurrency();
        return n > 0 ? n : 2;
    }

    asio::awaitable<void> worker()
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

    asio::awaitable<void> run_line(line_source::line line, std::uint64_t seq)
    {
        run_times times;
        times.started_at = times.ended_at = system_clock::now();
        if (line.too_long) {
            finish_unrun(job_outcome::error);
            emit(seq, error_line(static_cast<std::uint64_t>(line.number), line.number, times,
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
                std::vector<std::string> argv;
                std::optional<std::string> input;
                if (attempt == o_.retries) {
                    argv = std::move(j.argv);
                    input = std::move(j.stdin_data);
                } else {
                    argv = j.argv;
                    input = j.stdin_data;
                }
                exec_options eo;
                eo.stdin_data = std::move(input);
                if (o_.verbose)
                    eo.on_launch = [n = line.number](const launch_preview& p) {
                        say("line " + std::to_string(n) + ": starting: " + shell_command(p.argv));
                    };
                result = co_await runner->execute(std::move(argv), std::move(eo));
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
    void finish_unrun(job_outcome o)
    {
        count_outcome(counts_, o);
        count_for_halt(o);
    }

    // What stops a job line from running before it starts: ids used twice under --resume,
    // and under --lock-policy whatever loosens the command line's policy.
    std::string check_job(const job& j)
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

    void count_for_halt(job_outcome o)
    {
        if (o_.halt.at == halt_rule::when::never || o == job_outcome::succeeded || o == job_outcome::cancelled) return;
        if (++halt_failures_ < o_.halt.failures || halted() || stopping_) return;
        const bool now = o_.halt.at == halt_rule::when::now;
        halt_reason_ = "halted after " + std::to_string(halt_failures_) + (halt_failures_ == 1 ? " failure" : " failures") +
                       " (--halt " + (now ? "now" : "soon") + ",fail=" + std::to_string(o_.halt.failures) + ")";
        stop(now);
    }

    // After a stop, the command line that runs what is left.
    void say_resume_command() const
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

    std::size_t max_line() const noexcept { return max_line_; }

    std::string stop_reason() const
    {
        if (stop_signal_) return "sandbox-run was interrupted by " + signal_name(stop_signal_);
        if (halted()) return "sandbox-run " + halt_reason_;
        return "sandbox-run stopped";
    }

    // Never waits: the writer's thread writes the line. `seq` is the line's place in the
    // input; with -k a line waits here for those before it (an empty one only makes way).
    void emit(std::uint64_t seq, std::string line)
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

    void release(std::map<std::uint64_t, std::string>::iterator it)
    {
        held_bytes_ -= it->second.size();
        if (!it->second.empty()) writer_.push(std::move(it->second));
        held_.erase(it);
    }

    // Once no job runs: whatever still waits for a line that will never come goes out in order.
    void release_held()
    {
        while (!held_.empty()) release(held_.begin());
    }

    // On the io thread, after the writer's thread said something changed.
    void writer_changed()
    {
        if (const int e = writer_.error(); e && !output_errno_) {  // the results go nowhere any more
            output_errno_ = e;
            stop();
        }
        room_.cancel();  // the workers waiting for room look again
        finish_if_done();
    }

    // Everything is done once the workers are and the writer has written (or dropped) the rest.
    void finish_if_done()
    {
        if (!workers_done_ || !writing_ || !writer_.finished()) return;
        writing_.reset();
        signals_->close();
    }

    // Starts no more jobs; `cancel_running`: the running ones are cancelled too.
    void stop(bool cancel_running = true)
    {
        if (stopping_) return;
        stopping_ = true;
        source_.cancel();
        room_.cancel();
        if (workers_done_ || !cancel_running) return;  // (workers done: the writer failed while draining)
        for (unsigned i = 0; i < workers_; ++i) cancel_[i].emit(asio::cancellation_type::terminal);
    }

    void record_internal_error(std::exception_ptr e)
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
    std::string halt_reason_;

    std::uint64_t next_seq_ = 0;   // the next line taken gets this place
    std::uint64_t next_emit_ = 0;  // -k: the place whose result goes out next
    std::map<std::uint64_t, std::string> held_;
    std::size_t held_bytes_ = 0;
};

int open_input(const std::string& name)
{
    if (name == "-") return STDIN_FILENO;
    const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw usage_error("--batch " + name + ": cannot open it: " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        ::close(fd);
        throw usage_error("--batch " + name + ": is a directory");
    }
    return fd;
}

// Where the results go: stdout, or a device or pipe as it is, or a regular file written
// under a temporary name beside it and renamed into place when the batch ends (also after
// Ctrl-C): until then the old file stays whole, and a killed run never leaves a half-written
// one where the results were.
struct output_target {
    int fd = STDOUT_FILENO;
    std::string path;  // the name asked for, when written under `temp`
    std::string temp;
};

output_target open_output(const std::optional<std::string>& name, int input_fd, const std::string& input_name)
{
    output_target t;
    if (!name || *name == "-") return t;
    const auto fail = [&](const std::string& what) {
        throw usage_error("--output " + *name + ": " + what + ": " + std::strerror(errno));
    };
    mode_t mode = 0666 & ~[] {
        const mode_t m = ::umask(0);
        ::umask(m);
        return m;
    }();
    struct stat out {};
    if (::stat(name->c_str(), &out) == 0) {
        struct stat in {};
        // The same file, through any name or link: writing the results would destroy the jobs.
        if (::fstat(input_fd, &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino)
            throw usage_error("--output " + *name + " is the job file (--batch " + input_name +
                              "): the results would overwrite the jobs; write them to another file");
        if (!S_ISREG(out.st_mode)) {
            t.fd = ::open(name->c_str(), O_WRONLY | O_CLOEXEC);
            if (t.fd < 0) fail("cannot open it");
            return t;
        }
        mode = out.st_mode & 07777;
    }
    const auto slash = name->rfind('/');
    const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : name->substr(0, slash);
    std::string temp = dir + "/." + name->substr(slash == std::string::npos ? 0 : slash + 1) + ".XXXXXX";
    t.fd = ::mkostemp(temp.data(), O_CLOEXEC);
    if (t.fd < 0) fail("cannot create a file in " + dir);
    ::fchmod(t.fd, mode);
    t.path = *name;
    t.temp = std::move(temp);
    return t;
}

// --resume FILE -o FILE: the results of the jobs that are not run again stay in the file.
// They are copied into the new results first, so the file holds every job's result once the
// batch ends, however it ends.
void keep_resumed_results(const options& o, const resumed_ids& resumed, const output_target& out)
{
    struct stat r {}, t {};
    if (::stat(o.resume_file->c_str(), &r) != 0 || ::stat(out.path.c_str(), &t) != 0 || r.st_dev != t.st_dev ||
        r.st_ino != t.st_ino)
        return;
    std::ifstream in(*o.resume_file);
    std::string text, kept;
    while (std::getline(in, text)) {
        // A cancelled job's line goes, and with --resume-failed a failed one's: those jobs run again.
        boost::system::error_code ec;
        const auto v = boost::json::parse(text, ec);
        if (!ec && v.is_object() && v.get_object().contains("id")) {
            const auto* id = finished_id(v);
            if (!id) continue;
            const auto it = resumed.find(id_key(*id));
            if (o.resume_failed && it != resumed.end() && !it->second) continue;
        }
        kept += text;
        kept += '\n';
        if (kept.size() >= (1u << 20)) {
            write_all(out.fd, kept);
            kept.clear();
        }
    }
    if (in.bad()) throw usage_error("--resume " + *o.resume_file + ": cannot read it: " + std::strerror(errno));
    write_all(out.fd, kept);
}

}  // namespace

int run_batch(const options& o, const execution_policy& policy)
{
    const int in = open_input(*o.batch_file);
    output_target out;
    resumed_ids resumed;
    try {
        if (o.resume_file) resumed = read_resume_file(*o.resume_file);
        out = open_output(o.output_file, in, *o.batch_file);
        if (o.resume_file && !out.temp.empty()) keep_resumed_results(o, resumed, out);
    } catch (...) {
        if (in != STDIN_FILENO) ::close(in);
        if (!out.temp.empty()) {
            ::close(out.fd);
            ::unlink(out.temp.c_str());
        }
        throw;
    }
    int status = 0;
    {
        // The results written so far take the output's name however the batch ends.
        struct commit {
            output_target& out;
            const std::optional<std::string>& name;
            int& status;
            ~commit()
            {
                if (out.fd == STDOUT_FILENO) return;
                if (::close(out.fd) != 0 && status == 0) {
                    say(std::string("--output ") + *name + ": " + std::strerror(errno));
                    status = exit_status::some_failed;
                }
                if (!out.temp.empty() && ::rename(out.temp.c_str(), out.path.c_str()) != 0) {
                    say("--output " + out.path + ": cannot rename " + out.temp + " to it (the results are there): " +
                        std::strerror(errno));
                    status = exit_status::some_failed;
                }
            }
        } on_exit{out, o.output_file, status};
        batch_run run(o, policy, in, in != STDIN_FILENO, out.fd, std::move(resumed));
        for (const auto& what : run.unenforced()) {
            if (o.strict) {
                say(what + " (" + make_error_code(errc::limit_not_enforced).message() + "; --strict)");
                status = exit_status::sandbox_failed;
                return status;
            }
            say("warning: " + what);
        }
        status = run.run();
    }
    return status;
}

}  // namespace sandbox::cli
