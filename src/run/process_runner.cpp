// SPDX-License-Identifier: BSL-1.0
//
// The one process runner every driver launches through: spawn, pipes, clocks, caps, kill,
// reap. Written against the OS and Asio directly rather than Boost.Process v2, because the
// 1.81 v2 launcher forks (cost grows with the parent's memory), has no process groups, and
// waits with a blocking waitpid; here a clone(CLONE_VM) that does not wait for the exec
// (spawn_child_async), a pidfd and the process group do that.
//
// All state of one execution lives on its own strand, so an io_context run by several
// threads is safe. The decisions (when to signal, when to stop reading, when to reap) are
// made by exec_machine; this file only performs them.

#include "run/process_runner.hpp"
#include "run/spawn.hpp"
#include "run/spawn_service.hpp"
#include "run/tail_buffer.hpp"
#include <sandbox/errors.hpp>

#include <boost/asio/any_completion_executor.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/execution/context.hpp>
#include <boost/asio/query.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/system/system_error.hpp>

#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <memory>

namespace sandbox::detail {

std::pair<int, int> decode_wait_status(int status) noexcept
{
    if (WIFEXITED(status)) return {WEXITSTATUS(status), 0};
    if (WIFSIGNALED(status)) return {128 + WTERMSIG(status), WTERMSIG(status)};
    return {-1, 0};
}

namespace {

using clock = std::chrono::steady_clock;
using error_code = boost::system::error_code;
// I/O objects typed on the strand itself: wrapping a strand in any_io_executor would
// allocate a type-erased copy for each object and each operation.
using strand_type = asio::strand<asio::any_io_executor>;
using descriptor = asio::posix::basic_stream_descriptor<strand_type>;
using socket_type = asio::basic_stream_socket<asio::local::stream_protocol, strand_type>;
using timer_type = asio::basic_waitable_timer<clock, asio::wait_traits<clock>, strand_type>;

constexpr std::size_t scratch_size = 64 * 1024;
// Reads in one turn on the strand before yielding to other work.
constexpr int reads_per_turn = 16;

// Direct reads land here: one buffer per thread instead of one per execution, so a thousand
// quiet commands cost no read buffers. Data is handed on before the handler returns.
char* scratch_buffer()
{
    thread_local std::unique_ptr<char[]> buf(new char[scratch_size]);
    return buf.get();
}

std::chrono::nanoseconds to_ns(const timeval& tv)
{
    return std::chrono::seconds(tv.tv_sec) + std::chrono::microseconds(tv.tv_usec);
}

// Runs a command to completion on this thread, output discarded. Only for the teardown path
// where no io_context is left to run it on.
void run_blocking(const std::vector<std::string>& argv, const std::vector<std::string>& env) noexcept
{
    spawn_request req{.argv = argv, .env = env};
    spawned_child child;
    std::string what;
    if (spawn_child(req, child, what)) return;
    int status = 0;  // the pipes stay open until the end: the output is tiny
    while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
    }
}

class execution : public std::enable_shared_from_this<execution> {
public:
    execution(asio::any_io_executor ex, launch_plan plan, run_limits limits, std::optional<std::string> stdin_data,
              output_callback on_output, run_handler handler)
        : strand_(asio::make_strand(ex)),
          plan_(std::move(plan)),
          limits_(limits),
          stdin_(std::move(stdin_data)),
          on_output_(std::move(on_output)),
          handler_(std::move(handler)),
          handler_work_(asio::prefer(asio::get_associated_executor(handler_, ex),
                                     asio::execution::outstanding_work.tracked)),
          slot_(asio::get_associated_cancellation_slot(handler_)),
          pidfd_(strand_),
          in_(strand_),
          timer_(strand_),
          out_(strand_, limits.stdout_cap),
          err_(strand_, limits.stderr_cap)
    {
    }

    // Reached without finish() only when the io_context is destroyed with the execution still
    // pending: nothing may outlive it, so kill and reap here (SIGKILL makes the wait short).
    ~execution()
    {
        if (pid_ > 0 && !reaped_ && !abandoned_) {  // an abandoned one would block this for ever
            ::kill(-pid_, SIGKILL);
            ::kill(pid_, SIGKILL);
            int status = 0;
            while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
            }
        }
        if (pid_ > 0 && !reaped_ && !plan_.cleanup_argv.empty()) run_blocking(plan_.cleanup_argv, cleanup_env_);
        if (!abandoned_ || reaped_) run_cleanup();
    }

    // Called on the initiating thread, where the awaiting coroutine's slot may be touched.
    void launch()
    {
        if (slot_.is_connected()) slot_.emplace<cancel_handler>(weak_from_this());
        asio::dispatch(strand_, [self = shared_from_this()] { self->start(); });
    }

private:
    void start()
    {
        started_ = true;
        if (cancel_requested_) {
            complete(std::make_exception_ptr(boost::system::system_error(asio::error::operation_aborted)), {});
            return;
        }
        if (!plan_.cleanup_argv.empty()) cleanup_env_ = plan_.env;
        auto req = std::make_shared<spawn_request>(spawn_request{
            .argv = std::move(plan_.argv),
            .env = std::move(plan_.env),
            .cwd = std::move(plan_.cwd),
            .stdin_socket = stdin_ && !stdin_->empty(),
            .open_pidfd = limits_.timing.exit_watch_delay.count() <= 0});
        req_ = req;
        if (plan_.spawn_from_stable_thread) {
            auto& service = asio::use_service<spawn_service>(asio::query(strand_.get_inner_executor(),
                                                                         asio::execution::context));
            const bool queued = service.submit([self = shared_from_this(), req] {
                // Should the io_context go before the completion below runs, a started child
                // must not be left behind unsupervised: kill and reap it.
                std::shared_ptr<spawned_child> child(new spawned_child, [](spawned_child* c) {
                    if (c->pid > 0) {
                        ::kill(-c->pid, SIGKILL);
                        ::kill(c->pid, SIGKILL);
                        int status = 0;
                        while (::waitpid(c->pid, &status, 0) < 0 && errno == EINTR) {
                        }
                    }
                    delete c;
                });
                auto what = std::make_shared<std::string>();
                const auto started = clock::now();
                const auto ec = spawn_child_async(req, *child, *what);
                asio::post(self->strand_, [self, req, child, what, started, ec] {
                    self->spawned(*req, ec, *child, *what, started);
                });
            });
            if (queued) return;
            start_failed(plan_.failure_prefix + ": the io_context is shutting down");
            return;
        }
        spawned_child child;
        std::string what;
        const auto started = clock::now();
        const auto ec = spawn_child_async(req, child, what);
        spawned(*req, ec, child, what, started);
    }

    void spawned(const spawn_request& req, std::error_code spawn_ec, spawned_child& child, const std::string& what,
                 clock::time_point started)
    {
        start_time_ = started;
        if (spawn_ec) {
            start_failed(plan_.failure_prefix + ": " + describe_spawn_error(req, spawn_ec, what));
            return;
        }
        pid_ = std::exchange(child.pid, -1);  // ours now
        launch_ = std::move(child.launch);  // the child may still be using it: kept until the reap
        machine_.emplace(limits_.timing, start_time_);

        // Registering with the reactor can fail (ENOMEM, the epoll watch limit): then the
        // child must not be left behind.
        error_code ec;
        if (out_.d.assign(child.stdout_r.get(), ec) || err_.d.assign(child.stderr_r.get(), ec) ||
            (child.stdin_w && in_.assign(asio::local::stream_protocol(), child.stdin_w.get(), ec)) ||
            (child.pidfd && pidfd_.assign(child.pidfd.get(), ec))) {
            // The descriptors still belong to `child`, which closes them.
            if (out_.d.is_open()) out_.d.release();
            if (err_.d.is_open()) err_.d.release();
            if (in_.is_open()) in_.release();
            if (pidfd_.is_open()) pidfd_.release();
            abandon_spawned(ec);
            return;
        }
        child.stdout_r.release();
        child.stderr_r.release();
        child.stdin_w.release();
        child.pidfd.release();
        wait_readable(stream_kind::out);
        wait_readable(stream_kind::err);
        if (in_.is_open()) {
            asio::async_write(in_, asio::buffer(*stdin_),
                              [self = shared_from_this()](error_code, std::size_t) { self->close_stdin(); });
        }
        if (pidfd_.is_open()) {
            wait_exit();
        } else if (machine_->watching()) {
            poll_exit();  // pidfd_open failed
        }
        if (cancel_requested_) apply(machine_->on_cancel(clock::now()));  // arrived while spawning
        if (!finished_) arm_timer();
    }
    struct cancel_handler {
        std::weak_ptr<execution> op;
        void operator()(asio::cancellation_type_t) const
        {
            if (auto self = op.lock()) asio::dispatch(self->strand_, [self] { self->on_cancel(); });
        }
    };

    struct output_stream {
        output_stream(const strand_type& s, std::size_t cap) : d(s), tail(cap) {}
        descriptor d;
        tail_buffer tail;
        bool waiting = false;  // an async_wait is queued
    };

    output_stream& stream(stream_kind k) { return k == stream_kind::out ? out_ : err_; }
    static stream_kind other(stream_kind k) { return k == stream_kind::out ? stream_kind::err : stream_kind::out; }

    // ---- output ---------------------------------------------------------------------------

    // Readiness waits, and every read done here: so a stream can also be read when we know
    // it holds data (the command exited, the other stream ended) without going back to the
    // reactor, and no read is ever in flight behind our back. Asio re-arms the descriptor
    // when it queues a wait, so no wake-up is lost.
    void wait_readable(stream_kind k)
    {
        auto& s = stream(k);
        if (s.waiting || !s.d.is_open()) return;
        s.waiting = true;
        s.d.async_wait(descriptor::wait_read, [self = shared_from_this(), k](error_code ec) {
            auto& s = self->stream(k);
            s.waiting = false;
            if (ec || self->finished_ || !s.d.is_open()) return;
            self->read_available(k);
        });
    }

    // Reads what the pipe holds now into the per-thread scratch buffer, then waits for more.
    void read_available(stream_kind k)
    {
        auto& s = stream(k);
        char* buf = scratch_buffer();
        for (int i = 0; i < reads_per_turn; ++i) {
            if (finished_ || !s.d.is_open()) return;
            const ssize_t n = ::read(s.d.native_handle(), buf, scratch_size);
            if (n > 0) {
                deliver(k, {buf, static_cast<std::size_t>(n)});
                continue;
            }
            if (n < 0 && errno == EINTR) continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                wait_readable(k);
                return;
            }
            stream_closed(k);  // EOF or a read error
            return;
        }
        // A fast writer: let other work on the strand run, then go on.
        asio::post(strand_, [self = shared_from_this(), k] { self->read_available(k); });
    }

    void deliver(stream_kind k, std::string_view chunk)
    {
        const auto now = clock::now();
        machine_->on_output(now);
        stream(k).tail.append(chunk);
        if (!on_output_ || callback_error_) return;
        try {
            on_output_(k, chunk);
        } catch (...) {
            // The caller's callback failed: end the command and hand the exception back.
            callback_error_ = std::current_exception();
            apply(machine_->on_cancel(now));
        }
    }

    void stream_closed(stream_kind k)
    {
        error_code ignored;
        stream(k).d.close(ignored);
        apply(machine_->on_stream_closed(k));
        if (finished_) return;
        // A command closes both outputs as it exits: read the other one now rather than
        // wake up again for its event, and see whether the command is already gone rather
        // than sleep until the pidfd says so.
        if (stream(other(k)).d.is_open()) read_available(other(k));
        else if (!exit_seen_ && exited_now()) on_exited();
        else if (!exit_seen_ && machine_->start_watching()) watch_exit();  // closed its outputs, still running
    }

    // Starts watching the main process's exit: a pidfd when possible, else polling.
    void watch_exit()
    {
        if (exit_seen_ || (finished_ && !abandoned_) || pidfd_.is_open() || poll_timer_) return;
        // Still our unreaped child (nobody else reaps it), so the pid names it.
        const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
        if (fd < 0) {
            poll_exit();
            return;
        }
        error_code ec;
        if (pidfd_.assign(fd, ec)) {
            ::close(fd);
            poll_exit();
            return;
        }
        wait_exit();  // a pidfd of a command that already ended is readable at once
    }

    // ---- stdin, exit, timers --------------------------------------------------------------

    void close_stdin()
    {
        error_code ignored;
        if (in_.is_open()) in_.close(ignored);
    }

    bool exited_now()
    {
        siginfo_t info{};
        if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
            // Reaped behind our back (the application ignores SIGCHLD): it is gone, and its
            // pid and group id may already name someone else.
            if (errno == ECHILD) auto_reaped_ = true;
            return errno == ECHILD;
        }
        return info.si_pid == pid_;
    }

    void wait_exit()
    {
        pidfd_.async_wait(descriptor::wait_read, [self = shared_from_this()](error_code ec) {
            if (!ec && self->abandoned_ && !self->reaped_) {
                if (self->exited_now()) self->reap_abandoned();
                else self->wait_exit();
                return;
            }
            if (ec || self->finished_ || self->exit_seen_) return;
            // A wait may complete spuriously: with several threads, Asio's epoll reactor can
            // hand a stale event of a just-closed descriptor to the state it reuses for this
            // one. Acting on it would SIGKILL a live command, so ask the kernel.
            if (self->exited_now()) self->on_exited();
            else self->wait_exit();
        });
        // No lost wake-up: Asio re-arms the descriptor (EPOLL_CTL_MOD) when it queues a
        // wait, so an exit that happened before is reported too.
    }

    // Without pidfd (old kernels, strict seccomp profiles): poll with a backoff.
    void poll_exit()
    {
        if (exited_now()) {
            on_exited();
            return;
        }
        if (!poll_timer_) poll_timer_.emplace(strand_);
        poll_timer_->expires_after(poll_interval_);
        poll_interval_ = std::min(poll_interval_ * 2, std::chrono::milliseconds(50));
        poll_timer_->async_wait([self = shared_from_this()](error_code ec) {
            if (!ec && !self->finished_ && !self->exit_seen_) self->poll_exit();
        });
    }

    void on_exited()
    {
        if (finished_ || exit_seen_) return;
        exit_seen_ = true;
        // Read what the pipes hold now, usually everything up to EOF, so that no drain
        // deadline is needed; then the machine ends what the command left behind.
        for (auto k : {stream_kind::out, stream_kind::err})
            if (!finished_ && stream(k).d.is_open()) read_available(k);
        if (!finished_) apply(machine_->on_exit(clock::now()));
    }

    void on_cancel()
    {
        if (finished_) return;
        if (!machine_) {  // before or during the spawn: acted on once it is done
            cancel_requested_ = true;
            return;
        }
        apply(machine_->on_cancel(clock::now()));
    }

    void arm_timer()
    {
        const auto deadline = machine_->next_deadline();
        if (deadline == armed_) return;
        armed_ = deadline;
        ++timer_generation_;
        if (deadline == clock::time_point::max()) {
            timer_.cancel();
            return;
        }
        timer_.expires_at(deadline);
        timer_.async_wait([self = shared_from_this(), generation = timer_generation_](error_code ec) {
            if (ec || self->finished_ || generation != self->timer_generation_) return;
            self->armed_ = clock::time_point::max();
            self->apply(self->machine_->on_deadline(clock::now()));
        });
    }

    // ---- actions --------------------------------------------------------------------------

    void apply(const exec_actions& a)
    {
        if (finished_) return;
        if (a.close_stdin) close_stdin();
        if (a.watch_exit) watch_exit();
        if (finished_) return;
        if (a.signal_group != 0) signal_group(a.signal_group);
        if (a.stop_reading) {
            error_code ignored;
            out_.d.close(ignored);
            err_.d.close(ignored);
        }
        if (a.reap) finish();
        else if (a.abandon) give_up();
        else arm_timer();
    }

    void signal_group(int sig)
    {
        // The main process is either alive or an unreaped zombie, so its pid, which is also
        // the group id, cannot have been reused (unless it was reaped behind our back).
        if (auto_reaped_) return;
        ::kill(-pid_, sig);
        // Until its exec the child may not have made its group yet (setsid): then the group
        // kill misses it, but a signal to the pid waits, blocked, until the child is ready.
        if (launch_ && !launch_released(*launch_)) ::kill(pid_, sig);
        if (!exit_seen_ && pidfd_.is_open())  // in case it moved itself to another group
            ::syscall(SYS_pidfd_send_signal, pidfd_.native_handle(), sig, nullptr, 0);
    }

    void finish()
    {
        finished_ = true;
        error_code ignored;
        timer_.cancel();
        if (poll_timer_) poll_timer_->cancel();
        out_.d.close(ignored);
        err_.d.close(ignored);
        in_.close(ignored);
        pidfd_.close(ignored);

        int status = 0;
        rusage ru{};
        pid_t r = ::wait4(pid_, &status, WNOHANG, &ru);
        if (r == 0) {  // cannot happen after an exit notification; never leave a zombie
            ::kill(pid_, SIGKILL);
            r = ::wait4(pid_, &status, 0, &ru);
        }
        reaped_ = true;
        const auto end = clock::now();

        // The child could not run the command (a bad cwd, not found, not executable): the
        // same failure posix_spawn would have reported at once.
        // (Also when the child was reaped behind our back: the record outlives that.)
        if (launch_ && !machine_->cancelled() && !callback_error_) {
            std::string what;
            if (const auto ec = launch_failure(*launch_, what)) {
                start_failed(plan_.failure_prefix + ": " + describe_spawn_error(*req_, ec, what));
                return;
            }
        }

        exec_result result;
        result.truncated_out = out_.tail.truncated();
        result.truncated_err = err_.tail.truncated();
        result.out = out_.tail.take();
        result.err = err_.tail.take();
        if (r == pid_) {
            std::tie(result.exit_code, result.term_signal) = decode_wait_status(status);
            result.usage = {to_ns(ru.ru_utime), to_ns(ru.ru_stime), static_cast<std::uint64_t>(ru.ru_maxrss) * 1024};
        } else {
            result.exit_code = -1;  // reaped by someone else: the status is lost
        }
        if (auto reason = machine_->timed_out()) {
            result.timed_out = true;
            result.timeout = reason;
            result.exit_code = exit_codes::timeout;
        }
        result.duration = end - start_time_;

        std::exception_ptr ep = callback_error_;
        if (!ep && machine_->cancelled())
            ep = std::make_exception_ptr(boost::system::system_error(asio::error::operation_aborted));

        const bool ended_by_us = machine_->timed_out() || machine_->cancelled();
        if (ended_by_us && !plan_.cleanup_argv.empty()) {
            run_cleanup_command([self = shared_from_this(), ep, r = std::move(result)]() mutable {
                self->run_cleanup();
                self->complete(ep, std::move(r));
            });
            return;
        }
        run_cleanup();
        complete(ep, std::move(result));
    }

    // SIGKILL did not end the main process (it runs as another user: a setuid program on the
    // host driver). Complete without it, and keep waiting to reap it whenever it ends.
    void give_up()
    {
        abandoned_ = true;
        finished_ = true;
        timer_.cancel();
        exec_result result;
        result.truncated_out = out_.tail.truncated();
        result.truncated_err = err_.tail.truncated();
        result.out = out_.tail.take();
        result.err = err_.tail.take();
        result.exit_code = -1;
        if (auto reason = machine_->timed_out()) {
            result.timed_out = true;
            result.timeout = reason;
            result.exit_code = exit_codes::timeout;
        }
        result.duration = clock::now() - start_time_;
        std::exception_ptr ep = callback_error_;
        if (!ep && machine_->cancelled())
            ep = std::make_exception_ptr(boost::system::system_error(asio::error::operation_aborted));
        if (!pidfd_.is_open()) watch_exit();
        complete(ep, std::move(result));
    }

    void reap_abandoned()
    {
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) reaped_ = true;
        error_code ignored;
        pidfd_.close(ignored);
        run_cleanup();  // only now: the command may have used its work dir to the end
    }

    // Runs plan_.cleanup_argv as an execution of its own, then `then`.
    template <typename Then>
    void run_cleanup_command(Then then)
    {
        launch_plan plan{.argv = std::exchange(plan_.cleanup_argv, {}), .env = cleanup_env_,
                         .failure_prefix = plan_.failure_prefix};
        run_limits limits;
        limits.timing.wall = std::chrono::seconds(60);
        start_process(strand_, std::move(plan), limits, std::nullopt, {},
                      asio::bind_executor(strand_, [then = std::move(then)](std::exception_ptr, exec_result) mutable {
                          then();
                      }));
    }

    // The child started but cannot be watched: kill and reap it, then fail the execution.
    void abandon_spawned(const error_code& ec)
    {
        ::kill(-pid_, SIGKILL);
        ::kill(pid_, SIGKILL);
        int status = 0;
        while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
        }
        reaped_ = true;
        finished_ = true;
        run_cleanup();
        complete(std::make_exception_ptr(boost::system::system_error(ec, plan_.failure_prefix)), {});
    }

    void start_failed(const std::string& message)
    {
        finished_ = true;
        run_cleanup();
        if (plan_.throw_on_start_failure) {
            complete(std::make_exception_ptr(launch_error(message)), {});
            return;
        }
        exec_result result;
        result.exit_code = exit_codes::command_not_found;
        result.err = message;
        result.duration = clock::now() - start_time_;
        if (on_output_) {
            try {
                on_output_(stream_kind::err, result.err);
            } catch (...) {
                complete(std::current_exception(), std::move(result));
                return;
            }
        }
        complete(nullptr, std::move(result));
    }

    void run_cleanup() noexcept
    {
        if (!plan_.cleanup) return;
        try {
            plan_.cleanup();
        } catch (...) {  // cleanup is best effort and must not lose the result
        }
        plan_.cleanup = nullptr;
    }

    void complete(std::exception_ptr ep, exec_result result)
    {
        finished_ = true;
        auto ex = handler_work_;
        handler_work_ = {};
        asio::dispatch(ex, [h = std::move(handler_), slot = slot_, ep, r = std::move(result)]() mutable {
            // Cleared on the handler's executor, where the cancellation signal is emitted.
            if (slot.is_connected()) slot.clear();
            std::move(h)(ep, std::move(r));
        });
    }

    strand_type strand_;
    launch_plan plan_;
    run_limits limits_;
    std::optional<std::string> stdin_;
    output_callback on_output_;
    run_handler handler_;
    asio::any_completion_executor handler_work_;
    asio::cancellation_slot slot_;

    descriptor pidfd_;
    socket_type in_;
    timer_type timer_;
    std::optional<timer_type> poll_timer_;
    std::chrono::milliseconds poll_interval_{1};
    output_stream out_;
    output_stream err_;

    std::shared_ptr<const spawn_request> req_;
    std::shared_ptr<launch_record> launch_;
    std::optional<exec_machine> machine_;
    clock::time_point start_time_{};
    clock::time_point armed_ = clock::time_point::max();
    std::uint64_t timer_generation_ = 0;
    std::vector<std::string> cleanup_env_;
    std::exception_ptr callback_error_;
    pid_t pid_ = -1;
    bool started_ = false;
    bool cancel_requested_ = false;
    bool exit_seen_ = false;
    bool reaped_ = false;
    bool auto_reaped_ = false;
    bool abandoned_ = false;
    bool finished_ = false;
};

}  // namespace

void start_process(asio::any_io_executor ex, launch_plan plan, run_limits limits,
                   std::optional<std::string> stdin_data, output_callback on_output, run_handler handler)
{
    auto op = std::make_shared<execution>(ex, std::move(plan), limits, std::move(stdin_data), std::move(on_output),
                                          std::move(handler));
    op->launch();
}

}  // namespace sandbox::detail
