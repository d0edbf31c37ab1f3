// SPDX-License-Identifier: BSL-1.0
//
// The one process runner every driver launches through: pipes, clocks, caps, kill, reap.
// Written against the OS and Asio directly rather than Boost.Process v2, whose 1.81 launcher
// forks (its cost grows with the parent's memory), has no process groups and waits with a
// blocking waitpid. Here glibc's posix_spawn runs on a spawner thread (offload.hpp), a pidfd
// in the reactor says when the command ends, and its process group takes the tree down.
//
// All state of one execution lives on its own strand, so an io_context run by several
// threads is safe. The decisions (when to signal, when to stop reading, when to reap) are
// made by exec_machine; this file only performs them.
#include "run/end_line.hpp"
#include "run/exec_outcome.hpp"
#include "run/offload.hpp"
#include "run/output_pipe.hpp"
#include "run/pending_handler.hpp"
#include "run/process_runner.hpp"
#include "run/spawn.hpp"
#include "run/spawn_wire.hpp"
#include "run/start_steps.hpp"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/system/system_error.hpp>

#include <signal.h>

#include <cstdio>
#include <memory>

namespace sandbox::detail {

namespace {

using clock = std::chrono::steady_clock;
using error_code = boost::system::error_code;
// I/O objects typed on the strand itself: wrapping a strand in any_io_executor would
// allocate a type-erased copy for each object and each operation.
using socket_type = asio::basic_stream_socket<asio::local::stream_protocol, strand_type>;
using timer_type = asio::basic_waitable_timer<clock, asio::wait_traits<clock>, strand_type>;

std::exception_ptr aborted() { return std::make_exception_ptr(boost::system::system_error(asio::error::operation_aborted)); }

class execution : public std::enable_shared_from_this<execution> {
public:
    execution(asio::any_io_executor ex, launch_plan plan, run_limits limits, std::optional<std::string> stdin_data,
              output_callback on_output, run_handler handler)
        : strand_(asio::make_strand(ex)),
          plan_(std::move(plan)),
          limits_(limits),
          stdin_(std::move(stdin_data)),
          on_output_(std::move(on_output)),
          handler_(std::move(handler), ex),
          machine_(limits.timing),
          exit_(strand_),
          in_(strand_),
          timer_(strand_),
          out_(strand_, limits.stdout_cap),
          err_(strand_, limits.stderr_cap)
    {
        holding_reports_ = !plan_.report_prefixes.empty();
    }

    // Reached without completing only when the io_context is destroyed with the execution
    // pending: nothing may outlive it, so kill, reap and clean up here.
    ~execution()
    {
        exit_.stop();
        if (completed_) return;
        const bool started = static_cast<bool>(child_);
        child_.kill_and_reap();
        clean_up_now(plan_, started);
    }

    // Called on the initiating thread, where the awaiting coroutine's slot may be touched.
    // Posted, not dispatched: a start that fails at once must not run the handler inside the
    // initiating call.
    void launch()
    {
        handler_.on_cancel(cancel_handler{weak_from_this()});
        asio::post(strand_, [self = shared_from_this()] { self->start(); });
    }

private:
    struct cancel_handler {
        std::weak_ptr<execution> op;
        void operator()(asio::cancellation_type_t type) const
        {
            const int sig = cancel_signal(type);
            if (auto self = op.lock())
                asio::dispatch(self->strand_, [self, sig] { self->apply(self->machine_.on_cancel(clock::now(), sig)); });
        }
    };

    output_pipe& stream(stream_kind k) { return k == stream_kind::out ? out_ : err_; }
    static stream_kind other(stream_kind k) { return k == stream_kind::out ? stream_kind::err : stream_kind::out; }

    // ---- start ----------------------------------------------------------------------------

    // On the strand: the pipes and their registrations here; the spawn, which waits for the
    // child's exec, on a spawner thread.
    void start()
    {
        if (machine_.cancelled()) return complete(aborted(), {});
        if (plan_.started) return adopt();
        if (plan_.on_launch) {
            try {
                plan_.on_launch(launch_preview{plan_.argv, plan_.env, plan_.cwd});
            } catch (...) {  // nothing started: clean up what the driver prepared, then report it
                stop_io();
                return clean_up_async(strand_, plan_, false, [self = shared_from_this(), ep = std::current_exception()] {
                    self->complete(ep, {});
                });
            }
        }
        auto req = std::make_shared<spawn_request>(take_spawn_request(plan_));
        req->stdin_socket = stdin_ && !stdin_->empty();
        req->stdin_fd = plan_.stdin_fd;
        req->open_pidfd = limits_.timing.exit_watch_delay.count() <= 0;
        child_pipes pipes;
        std::string what;
        if (auto failed = prepare_spawn(*req, pipes, what)) return start_failed(spawn_failed(*req, failed, what));
        if (auto ec = attach_pipes({pipes.stdout_r, pipes.stderr_r, pipes.stdin_w}, out_, err_, in_))
            return start_failed(pipes_failed(ec));
        offload_of(strand_).run(
            worker::spawn, strand_, [req, p = std::move(pipes)]() mutable { return spawn_child(*req, p); },
            [self = shared_from_this(), req](spawn_outcome o) { self->spawned(*req, std::move(o)); });
    }

    void spawned(const spawn_request& req, spawn_outcome o)
    {
        if (o.error) return start_failed(spawn_failed(req, o.error, o.what), o.setup_failed);
        run(std::move(o.child), o.started);
    }

    // A sandbox started ahead: its tool runs and waits on stdin. What it reads first says which
    // command to run; the clocks start now.
    void adopt()
    {
        auto& started = *plan_.started;
        if (plan_.on_launch) {
            try {
                plan_.on_launch(launch_preview{plan_.argv, plan_.env, plan_.cwd});
            } catch (...) {  // the sandbox goes, unused
                stop_io();
                child_ = std::move(started.child);
                child_.kill_and_reap();
                return clean_up_async(strand_, plan_, true, [self = shared_from_this(), ep = std::current_exception()] {
                    self->complete(ep, {});
                });
            }
        }
        if (auto ec = attach_pipes({started.stdout_r, started.stderr_r, started.stdin_w}, out_, err_, in_)) {
            child_ = std::move(started.child);
            child_.kill_and_reap();
            return start_failed(pipes_failed(ec));
        }
        stdin_ = started.hand_off + (stdin_ ? *stdin_ : std::string());
        warm_ = true;
        if (!started.end_token.empty()) {
            const auto prefix = wire::end_line_prefix(started.end_token);
            out_end_.emplace(prefix);
            err_end_.emplace(prefix);
        }
        run(std::move(started.child), clock::now());
    }

    void run(child_process child, clock::time_point started)
    {
        child_ = std::move(child);
        child_.kill_through(plan_.kill_request_signal);
        start_time_ = started;
        wait_readable(stream_kind::out);
        wait_readable(stream_kind::err);
        if (in_.is_open())
            asio::async_write(in_, asio::buffer(*stdin_), [self = shared_from_this()](error_code, std::size_t) {
                error_code ignored;
                self->in_.close(ignored);
            });
        const auto actions = machine_.on_spawned(start_time_);
        if (machine_.watching()) watch_exit();
        apply(actions);
    }

    // ---- output ---------------------------------------------------------------------------

    void wait_readable(stream_kind k)
    {
        stream(k).wait([self = shared_from_this(), k] { self->read_available(k); });
    }

    void read_available(stream_kind k)
    {
        if (finished_) return;
        const auto got = stream(k).read([this, k](std::string_view chunk) {
            deliver(k, chunk);
            return !finished_;
        });
        switch (got) {
        case output_pipe::drained::empty: return wait_readable(k);
        case output_pipe::drained::closed: return stream_closed(k);
        case output_pipe::drained::more:
            return asio::post(strand_, [self = shared_from_this(), k] { self->read_available(k); });
        case output_pipe::drained::stopped: return;
        }
    }

    void deliver(stream_kind k, std::string_view chunk)
    {
        machine_.on_output(clock::now());
        if (auto& end = k == stream_kind::out ? out_end_ : err_end_; end && !end->done()) {
            const auto passed = end->feed(chunk);
            if (!passed.empty()) deliver_output(k, passed);
            if (end->done()) end_line_seen(k);
            return;
        }
        deliver_output(k, chunk);
    }

    void deliver_output(stream_kind k, std::string_view chunk)
    {
        if (k == stream_kind::err && plan_.err_sieve) {
            const auto passed = plan_.err_sieve->feed(chunk);
            if (!passed.empty()) pass_on(k, passed);
            return;
        }
        pass_on(k, chunk);
    }

    void pass_on(stream_kind k, std::string_view chunk)
    {
        stream(k).tail().append(chunk);
        if (!on_output_ || callback_error_) return;
        if (holding_reports_) {
            const bool appended = k == stream_kind::err && held_.size() + chunk.size() <= max_held_report;
            if (appended) {
                held_.append(chunk);
                if (could_be_report(held_)) return;
            }
            holding_reports_ = false;
            if (!held_.empty()) {
                const auto held = std::exchange(held_, std::string());
                if (!call_back(stream_kind::err, held) || appended) return;
            }
        }
        call_back(k, chunk);
    }

    bool call_back(stream_kind k, std::string_view chunk)
    {
        try {
            on_output_(k, chunk);
            return true;
        } catch (...) {
            // The caller's callback failed: end the command and hand the exception back.
            callback_error_ = std::current_exception();
            apply(machine_.on_cancel(clock::now()));
            return false;
        }
    }

    bool could_be_report(std::string_view text) const
    {
        for (std::string_view p : plan_.report_prefixes)
            if (!p.empty() && (text.starts_with(p) || p.starts_with(text))) return true;
        return false;
    }

    // At the end, what was held back: the start failure's own line instead, or as it was.
    void release_held(std::exception_ptr& ep, const exec_result& result)
    {
        holding_reports_ = false;
        if (held_.empty() || !on_output_ || callback_error_) return;
        const auto held = std::exchange(held_, std::string());
        if (ep) return;  // the exception says it
        try {
            on_output_(stream_kind::err, result.start_error ? std::string_view(result.err) : std::string_view(held));
        } catch (...) {
            ep = std::current_exception();
        }
    }

    // The end line of a sandbox started ahead on one stream: the rest of it is the engine's.
    // Both seen: the command has ended, and how is on stdout's.
    void end_line_seen(stream_kind k)
    {
        stream(k).close();
        if (!out_end_->done() || !err_end_->done()) return;
        int status = 0;
        long long utime = 0, stime = 0;
        long maxrss = 0;
        if (std::sscanf(out_end_->fields().c_str(), " %d %lld %lld %ld", &status, &utime, &stime, &maxrss) != 4)
            return apply_closed_streams();
        exit_info e;
        std::tie(e.exit_code, e.term_signal) = decode_wait_status(status);
        // A SIGKILL may be the memory limit's: the engine's cgroup says, after its teardown.
        if (e.term_signal == SIGKILL) return apply_closed_streams();
        e.usage = resource_usage{std::chrono::microseconds(utime), std::chrono::microseconds(stime),
                                 static_cast<std::uint64_t>(maxrss) * 1024, true};
        stop_io();
        exit_seen_ = true;
        auto result = ran_result(out_.tail(), err_.tail(), &e, machine_.timed_out(), clock::now() - start_time_);
        // The tool ends by itself once its sandbox is torn down; it is reaped, and the run's
        // work dir and cgroups removed, then, off this thread and without holding the result.
        child_.close_pidfd();
        abandon(std::move(child_), std::exchange(plan_.cleanup, nullptr));
        plan_.measure = nullptr;  // the usage came with the end line
        complete(outcome_error(), std::move(result));
    }

    // The end lines did not say (or said SIGKILL): the tool's own end decides, as for a cold run.
    void apply_closed_streams()
    {
        for (auto k : {stream_kind::out, stream_kind::err}) {
            apply(machine_.on_stream_closed(k));
            if (finished_) return;
        }
        if (!exit_seen_ && child_.exited()) on_exited();
        else if (!exit_seen_ && machine_.start_watching()) watch_exit();
    }

    void stream_closed(stream_kind k)
    {
        if (auto& end = k == stream_kind::out ? out_end_ : err_end_; end && !end->done())
            if (const auto held = end->finish(); !held.empty()) deliver_output(k, held);
        if (k == stream_kind::err && plan_.err_sieve)
            if (const auto rest = plan_.err_sieve->finish(); !rest.empty()) pass_on(k, rest);
        stream(k).close();
        apply(machine_.on_stream_closed(k));
        if (finished_) return;
        // A command closes both outputs as it exits: read the other one now rather than
        // wake up again for its event, and see whether the command is already gone rather
        // than sleep until the pidfd says so.
        if (stream(other(k)).is_open()) read_available(other(k));
        else if (!exit_seen_ && child_.exited()) on_exited();
        else if (!exit_seen_ && machine_.start_watching()) watch_exit();  // closed its outputs, still running
    }

    // ---- exit and clocks ------------------------------------------------------------------

    void watch_exit()
    {
        if (exit_.active() || exit_seen_ || finished_ || !child_) return;
        (void)child_.open_pidfd();  // else the watch polls
        exit_.start(child_, nullptr, [self = shared_from_this()] { self->on_exited(); });
    }

    void on_exited()
    {
        if (finished_ || exit_seen_) return;
        exit_seen_ = true;
        // Read what the pipes hold now, usually everything up to EOF, so that no drain
        // deadline is needed; then the machine ends what the command left behind.
        for (auto k : {stream_kind::out, stream_kind::err})
            if (!finished_ && stream(k).is_open()) read_available(k);
        if (!finished_) apply(machine_.on_exit(clock::now()));
    }

    void arm_timer()
    {
        const auto deadline = machine_.next_deadline();
        if (deadline == armed_) return;
        armed_ = deadline;
        ++timer_generation_;
        if (deadline == clock::time_point::max()) return (void)timer_.cancel();
        timer_.expires_at(deadline);
        timer_.async_wait([self = shared_from_this(), generation = timer_generation_](error_code ec) {
            if (ec || self->finished_ || generation != self->timer_generation_) return;
            self->armed_ = clock::time_point::max();
            self->apply(self->machine_.on_deadline(clock::now()));
        });
    }

    // ---- actions --------------------------------------------------------------------------

    void apply(const exec_actions& a)
    {
        if (finished_ || !child_) return;  // before the spawn: on_spawned() acts on it
        error_code ignored;
        if (a.close_stdin) in_.close(ignored);
        if (a.watch_exit) watch_exit();
        if (a.signal_group != 0) {
            if (a.signal_group != SIGKILL && plan_.polite_signal) plan_.polite_signal(child_.pid(), a.signal_group);
            else child_.signal_tree(a.signal_group);
        }
        if (a.stop_reading) {
            out_.close();
            err_.close();
        }
        if (a.reap) finish();
        else if (a.abandon) give_up();
        else arm_timer();
    }

    void stop_io()
    {
        finished_ = true;
        error_code ignored;
        timer_.cancel();
        exit_.stop();
        out_.close();
        err_.close();
        in_.close(ignored);
    }

    // `e` is null for a command we stopped waiting for.
    exec_result make_result(const exit_info* e)
    {
        if (plan_.err_sieve) err_.tail().append(plan_.err_sieve->finish());  // a stream we stopped reading
        return ran_result(out_.tail(), err_.tail(), e, machine_.timed_out(), clock::now() - start_time_);
    }

    std::exception_ptr outcome_error() const
    {
        if (callback_error_) return callback_error_;
        return machine_.cancelled() ? aborted() : nullptr;
    }

    void finish()
    {
        stop_io();
        auto e = child_.try_reap();
        if (!e) e = child_.kill_and_reap();  // cannot happen after an exit; never leave a zombie
        child_.close_pidfd();                // the watch has let go of it
        auto result = make_result(&*e);
        const bool ended_by_us = machine_.timed_out() || machine_.cancelled();
        clean_up_async(strand_, plan_, ended_by_us,
                       [self = shared_from_this(), ep = outcome_error(), r = std::move(result)]() mutable {
                           self->complete(ep, std::move(r));
                       });
    }

    // SIGKILL did not end the main process in time (it runs as another user: a setuid
    // program on the host driver). Complete without it; it is reaped, and its work dir
    // removed, whenever it ends.
    void give_up()
    {
        // A launcher asked to kill its tree that has not ended: the group's SIGKILL after all.
        child_.kill_through(0);
        child_.signal_tree(SIGKILL);
        stop_io();
        auto result = make_result(nullptr);
        child_.close_pidfd();  // the watch has let go of it
        abandon(std::move(child_), std::exchange(plan_.cleanup, nullptr));
        if (std::exchange(plan_.measure, nullptr)) result.usage = resource_usage{.available = false};  // not cleaned up yet
        complete(outcome_error(), std::move(result));
    }

    // `setup_failed`: the launch's own step failed, not the program's exec.
    void start_failed(const spawn_failure& f, bool setup_failed = true)
    {
        stop_io();
        exec_result result;
        const bool launchers = plan_.throw_on_start_failure || (setup_failed && !plan_.limits.empty());
        std::exception_ptr ep = machine_.cancelled()
                                    ? aborted()
                                    : start_failure(f.code, plan_.failure_prefix + ": " + f.why, launchers, result);
        if (!ep && on_output_) {
            try {
                on_output_(stream_kind::err, result.err);
            } catch (...) {
                ep = std::current_exception();
            }
        }
        clean_up_async(strand_, plan_, false, [self = shared_from_this(), ep, r = std::move(result)]() mutable {
            self->complete(ep, std::move(r));
        });
    }

    void complete(std::exception_ptr ep, exec_result result)
    {
        if (plan_.measure) plan_.measure(result);
        if (!ep && plan_.check) {
            try {
                plan_.check(result);
            } catch (...) {
                ep = std::current_exception();
            }
        }
        release_held(ep, result);
        if (plan_.started) plan_.started->on_end.reset();
        result.warm = warm_;
        finished_ = true;
        completed_ = true;
        handler_.complete(ep, std::move(result));
    }

    strand_type strand_;
    launch_plan plan_;
    run_limits limits_;
    std::optional<std::string> stdin_;
    output_callback on_output_;
    pending_handler handler_;
    exec_machine machine_;

    child_process child_;
    exit_watch exit_;  // after child_: it borrows the child's pidfd
    socket_type in_;
    timer_type timer_;
    output_pipe out_;
    output_pipe err_;

    clock::time_point start_time_ = clock::now();
    clock::time_point armed_ = clock::time_point::max();
    std::uint64_t timer_generation_ = 0;
    std::exception_ptr callback_error_;
    static constexpr std::size_t max_held_report = 4096;
    bool holding_reports_ = false;  // see launch_plan::report_prefixes
    std::string held_;
    std::optional<end_line_scanner> out_end_, err_end_;  // a sandbox started ahead that reports its command's end
    bool warm_ = false;
    bool exit_seen_ = false;
    bool finished_ = false;   // no more I/O or clocks
    bool completed_ = false;  // the handler has been called, or is queued
};

}  // namespace

spawn_request take_spawn_request(launch_plan& plan)
{
    return spawn_request{.argv = std::move(plan.argv),
                         .env = plan.cleanup_argv.empty() ? std::move(plan.env) : plan.env,  // the removal needs it too
                         .cwd = std::move(plan.cwd),
                         .pass_fds = plan.pass_fds,
                         .through_helper = plan.through_helper,
                         .search_path = plan.search_path,
                         .limits = plan.limits};
}

void start_process(asio::any_io_executor ex, launch_plan plan, run_limits limits,
                   std::optional<std::string> stdin_data, output_callback on_output, run_handler handler)
{
    if (plan.sigkill_only) limits.timing.sigkill_only = true;
    auto op = std::make_shared<execution>(ex, std::move(plan), limits, std::move(stdin_data), std::move(on_output),
                                          std::move(handler));
    op->launch();
}

}  // namespace sandbox::detail
