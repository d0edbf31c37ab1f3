// SPDX-License-Identifier: BSL-1.0
//
// Long-lived processes: the same launch plans and spawn as executions, but the caller drives
// stdin and stdout. Exit is watched through the pidfd on a strand; the reap and kill() are
// serialised by a mutex so a signal never reaches a pid that was already reaped.
#include "run/process_runner.hpp"
#include "run/spawn.hpp"
#include "run/spawn_service.hpp"
#include "run/tail_buffer.hpp"
#include <sandbox/errors.hpp>
#include <sandbox/process.hpp>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/execution/context.hpp>
#include <boost/asio/query.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/system/system_error.hpp>

#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <array>
#include <future>
#include <mutex>
#include <vector>

namespace sandbox::detail {

using error_code = boost::system::error_code;
using clock = std::chrono::steady_clock;

struct process_state : std::enable_shared_from_this<process_state> {
    process_state(asio::any_io_executor ex, launch_plan plan)
        : strand(asio::make_strand(ex)),
          pidfd(strand),
          in(strand),
          out(strand),
          err(strand),
          plan(std::move(plan)),
          err_tail(process::stderr_tail_bytes)
    {
    }

    asio::strand<asio::any_io_executor> strand;
    asio::posix::stream_descriptor pidfd;
    asio::local::stream_protocol::socket in;
    asio::posix::stream_descriptor out;
    asio::posix::stream_descriptor err;
    launch_plan plan;
    pid_t pid = -1;
    clock::time_point started{};
    std::string line_buffer;  // read_line's unread bytes

    mutable std::mutex mutex;  // guards everything below
    tail_buffer err_tail;
    std::array<char, 4096> err_chunk{};
    bool reaped = false;
    bool stderr_done = false;
    bool drained = false;   // stopped waiting for stderr after the exit
    bool finished = false;  // waiters are woken and see the final result
    bool killed = false;
    bool cleanup_running = false;  // the engine is removing the container kill() ended
    bool cleaned = false;
    exec_result result;
    // Callers of wait() park on a timer of their own that is cancelled at the end: the wait
    // then belongs to their io_context (destroyed with it) and to their cancellation slot.
    struct waiter {
        explicit waiter(const asio::any_io_executor& ex) : timer(ex, asio::steady_timer::time_point::max()) {}
        asio::steady_timer timer;
    };
    std::vector<std::shared_ptr<waiter>> waiters;

    void start_watching()
    {
        read_stderr();
        if (pidfd.is_open()) watch_exit();
        else poll_exit(std::chrono::milliseconds(1));
    }

    void read_stderr()
    {
        err.async_read_some(asio::buffer(err_chunk), [self = shared_from_this()](error_code ec, std::size_t n) {
            {
                std::lock_guard lock(self->mutex);
                if (n > 0) self->err_tail.append({self->err_chunk.data(), n});
                if (ec) self->stderr_done = true;
            }
            if (!ec) self->read_stderr();
            else self->maybe_finish();
        });
    }

    bool exited_now() const
    {
        siginfo_t info{};
        if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) return errno == ECHILD;
        return info.si_pid == pid;
    }

    void watch_exit()
    {
        pidfd.async_wait(asio::posix::stream_descriptor::wait_read, [self = shared_from_this()](error_code ec) {
            if (ec) return;
            // Spurious completions happen (see process_runner.cpp): ask the kernel.
            if (self->exited_now()) self->on_exit();
            else self->watch_exit();
        });
    }

    void poll_exit(std::chrono::milliseconds interval)
    {
        if (exited_now()) {
            on_exit();
            return;
        }
        auto timer = std::make_shared<asio::steady_timer>(strand, interval);
        timer->async_wait([self = shared_from_this(), timer, interval](error_code ec) {
            if (!ec) self->poll_exit(std::min(interval * 2, std::chrono::milliseconds(50)));
        });
    }

    // Kills what the main process left behind (its group id is pinned while it is a zombie),
    // reaps it, records the result. Under the mutex, so kill() cannot race the reap.
    void reap_locked(bool blocking)
    {
        if (reaped) return;
        ::kill(-pid, SIGKILL);
        int status = 0;
        rusage ru{};
        pid_t r = ::wait4(pid, &status, blocking ? 0 : WNOHANG, &ru);
        while (r < 0 && errno == EINTR) r = ::wait4(pid, &status, blocking ? 0 : WNOHANG, &ru);
        if (r == 0) return;  // not yet: the caller waits for the exit notification
        reaped = true;
        result.duration = clock::now() - started;
        if (r == pid) {
            std::tie(result.exit_code, result.term_signal) = decode_wait_status(status);
            result.usage = {std::chrono::seconds(ru.ru_utime.tv_sec) + std::chrono::microseconds(ru.ru_utime.tv_usec),
                            std::chrono::seconds(ru.ru_stime.tv_sec) + std::chrono::microseconds(ru.ru_stime.tv_usec),
                            static_cast<std::uint64_t>(ru.ru_maxrss) * 1024};
        } else {
            result.exit_code = -1;
        }
    }

    void on_exit()
    {
        {
            std::lock_guard lock(mutex);
            if (reaped) return;
            reap_locked(false);
            if (!reaped) return;
        }
        error_code ignored;
        pidfd.close(ignored);
        clean_up();
        // What the command wrote to stderr just before it ended belongs in the result:
        // wait for EOF, but not for something that escaped the kill and holds the pipe.
        auto timer = std::make_shared<asio::steady_timer>(strand, std::chrono::milliseconds(250));
        timer->async_wait([self = shared_from_this(), timer](error_code) {
            {
                std::lock_guard lock(self->mutex);
                self->drained = true;
            }
            self->maybe_finish();
        });
        maybe_finish();
    }

    void maybe_finish()
    {
        std::vector<std::shared_ptr<waiter>> to_wake;
        {
            std::lock_guard lock(mutex);
            if (finished || !reaped || !(stderr_done || drained) || cleanup_running) return;
            finished = true;
            to_wake = std::move(waiters);
        }
        for (auto& h : to_wake) wake(std::move(h));
    }

    // The work dir and cgroups go once the process is gone; a killed container too.
    void clean_up() noexcept
    {
        {
            std::lock_guard lock(mutex);
            if (cleaned) return;
            cleaned = true;
        }
        if (plan.cleanup) {
            try {
                plan.cleanup();
            } catch (...) {
            }
        }
    }

    static void wake(std::shared_ptr<waiter> w)
    {
        // On the timer's own executor: the waiting coroutine runs there.
        auto ex = w->timer.get_executor();
        asio::post(ex, [w = std::move(w)] { w->timer.cancel(); });
    }

    void kill_tree() noexcept
    {
        bool start_cleanup_command = false;
        {
            std::lock_guard lock(mutex);
            if (reaped) return;
            ::kill(-pid, SIGKILL);
            if (pidfd.is_open()) ::syscall(SYS_pidfd_send_signal, pidfd.native_handle(), SIGKILL, nullptr, 0);
            start_cleanup_command = !killed && !plan.cleanup_argv.empty();
            if (start_cleanup_command) cleanup_running = true;
            killed = true;
        }
        if (start_cleanup_command) {
            // docker rm -f: the container does not die with its client.
            launch_plan stop{.argv = plan.cleanup_argv, .env = plan.env};
            run_limits limits;
            limits.timing.wall = std::chrono::seconds(60);
            // wait() reports the end once the container is gone too.
            start_process(strand, std::move(stop), limits, std::nullopt, {},
                          asio::bind_executor(strand, [self = shared_from_this()](std::exception_ptr, exec_result) {
                              {
                                  std::lock_guard lock(self->mutex);
                                  self->cleanup_running = false;
                              }
                              self->maybe_finish();
                          }));
        }
    }

    // The owner is gone: nothing may outlive it.
    void shut_down() noexcept
    {
        std::vector<std::shared_ptr<waiter>> to_wake;
        bool run_cleanup_command = false;
        {
            std::lock_guard lock(mutex);
            run_cleanup_command = !killed && !reaped && !plan.cleanup_argv.empty();
            killed = true;
            reap_locked(true);
            finished = true;
            to_wake = std::move(waiters);
        }
        if (run_cleanup_command) {
            // No io_context may be left to run it on: do it here.
            spawn_request req{.argv = plan.cleanup_argv, .env = plan.env};
            spawned_child child;
            std::string what;
            if (!spawn_child(req, child, what)) {
                int status = 0;
                while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
                }
            }
        }
        clean_up();
        for (auto& h : to_wake) wake(std::move(h));
        // The descriptors belong to the strand's handlers: close them there.
        asio::post(strand, [self = shared_from_this()] {
            error_code ignored;
            self->in.close(ignored);
            self->out.close(ignored);
            self->err.close(ignored);
            self->pidfd.close(ignored);
        });
    }

    // Registers a waiter unless the end is already known.
    bool add_waiter(const std::shared_ptr<waiter>& w)
    {
        std::lock_guard lock(mutex);
        if (finished) return false;
        waiters.push_back(w);
        return true;
    }

    void remove_waiter(const std::shared_ptr<waiter>& w)
    {
        std::lock_guard lock(mutex);
        std::erase(waiters, w);
    }
};

process start_long_lived(asio::any_io_executor ex, launch_plan plan)
{
    auto state = std::make_shared<process_state>(ex, std::move(plan));
    spawn_request req{.argv = state->plan.argv, .env = state->plan.env, .cwd = state->plan.cwd, .stdin_socket = true};
    spawned_child child;
    std::string what;
    state->started = clock::now();
    std::error_code spawn_ec;
    if (state->plan.spawn_from_stable_thread) {
        // See spawn_service: the launcher must not be a child of a thread that may end.
        std::promise<void> done;
        auto& service = asio::use_service<spawn_service>(asio::query(ex, asio::execution::context));
        if (!service.submit([&] {
                spawn_ec = spawn_child(req, child, what);
                done.set_value();
            }))
            throw launch_error(state->plan.failure_prefix + ": the io_context is shutting down");
        done.get_future().wait();
    } else {
        spawn_ec = spawn_child(req, child, what);
    }
    if (auto ec = spawn_ec) {
        const std::string message = state->plan.failure_prefix + ": " + describe_spawn_error(req, ec, what);
        state->clean_up();
        throw launch_error(message);
    }
    state->pid = child.pid;
    boost::system::error_code ec;
    if ((child.pidfd && state->pidfd.assign(child.pidfd.get(), ec)) ||
        state->in.assign(asio::local::stream_protocol(), child.stdin_w.get(), ec) ||
        state->out.assign(child.stdout_r.get(), ec) || state->err.assign(child.stderr_r.get(), ec)) {
        // Cannot be watched: end it rather than leave it behind. `child` closes the fds.
        if (state->pidfd.is_open()) state->pidfd.release();
        if (state->in.is_open()) state->in.release();
        if (state->out.is_open()) state->out.release();
        if (state->err.is_open()) state->err.release();
        ::kill(-child.pid, SIGKILL);
        int status = 0;
        while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
        }
        state->reaped = true;
        state->clean_up();
        throw launch_error(state->plan.failure_prefix + ": " + ec.message());
    }
    child.pidfd.release();
    child.stdin_w.release();
    child.stdout_r.release();
    child.stderr_r.release();
    asio::dispatch(state->strand, [state] { state->start_watching(); });
    return process(state);
}

}  // namespace sandbox::detail

namespace sandbox {

process::process(std::shared_ptr<detail::process_state> state) noexcept : state_(std::move(state)) {}
process::process(process&&) noexcept = default;
process& process::operator=(process&& o) noexcept
{
    if (this != &o) {
        if (state_) state_->shut_down();
        state_ = std::move(o.state_);
    }
    return *this;
}
process::~process()
{
    if (state_) state_->shut_down();
}

pid_t process::pid() const noexcept { return state_->pid; }

asio::awaitable<void> process::write(std::string_view data)
{
    auto st = state_;
    co_await asio::async_write(st->in, asio::buffer(data.data(), data.size()), asio::use_awaitable);
}

void process::close_stdin() noexcept
{
    // On the strand: the socket is not safe to close from another thread mid-operation.
    asio::dispatch(state_->strand, [st = state_] {
        boost::system::error_code ignored;
        st->in.close(ignored);
    });
}

asio::awaitable<std::size_t> process::read_some(asio::mutable_buffer buffer)
{
    auto st = state_;
    if (!st->line_buffer.empty()) {
        const auto n = std::min(buffer.size(), st->line_buffer.size());
        std::memcpy(buffer.data(), st->line_buffer.data(), n);
        st->line_buffer.erase(0, n);
        co_return n;
    }
    boost::system::error_code ec;
    const auto n = co_await st->out.async_read_some(buffer, asio::redirect_error(asio::use_awaitable, ec));
    if (ec == asio::error::eof) co_return 0;
    if (ec) throw boost::system::system_error(ec, "process: reading stdout");
    co_return n;
}

asio::awaitable<std::optional<std::string>> process::read_line()
{
    auto st = state_;
    boost::system::error_code ec;
    const auto n = co_await asio::async_read_until(st->out, asio::dynamic_buffer(st->line_buffer), '\n',
                                                   asio::redirect_error(asio::use_awaitable, ec));
    if (!ec) {
        std::string line = st->line_buffer.substr(0, n - 1);
        st->line_buffer.erase(0, n);
        co_return line;
    }
    if (ec != asio::error::eof) throw boost::system::system_error(ec, "process: reading stdout");
    if (st->line_buffer.empty()) co_return std::nullopt;
    co_return std::exchange(st->line_buffer, {});
}

std::string process::stderr_tail() const
{
    std::lock_guard lock(state_->mutex);
    detail::tail_buffer copy = state_->err_tail;
    return copy.take();
}

bool process::running() const noexcept
{
    std::lock_guard lock(state_->mutex);
    return !state_->reaped;
}

asio::awaitable<exec_result> process::wait()
{
    auto st = state_;
    auto w = std::make_shared<detail::process_state::waiter>(co_await asio::this_coro::executor);
    if (st->add_waiter(w)) {
        boost::system::error_code ec;
        co_await w->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        std::unique_lock lock(st->mutex);
        if (!st->finished) {  // our caller was cancelled, not woken
            lock.unlock();
            st->remove_waiter(w);
            throw boost::system::system_error(asio::error::operation_aborted, "process::wait");
        }
    }
    std::lock_guard lock(st->mutex);
    exec_result r = st->result;
    detail::tail_buffer copy = st->err_tail;
    r.truncated_err = copy.truncated();
    r.err = copy.take();
    co_return r;
}

void process::kill() noexcept { state_->kill_tree(); }

}  // namespace sandbox
