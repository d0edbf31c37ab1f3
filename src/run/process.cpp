// SPDX-License-Identifier: BSL-1.0
//
// The life of a long-lived process after its spawn: stderr kept, the exit watched, the tree
// killed and reaped, the cleanup run, the waiters woken.
#include "run/offload.hpp"
#include "run/process_state.hpp"
#include "run/spawn.hpp"
#include "run/start_steps.hpp"

#include <sandbox/errors.hpp>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>

#include <signal.h>

#include <future>
#include <optional>

namespace sandbox::detail {

using error_code = boost::system::error_code;

void process_state::start_watching()
{
    read_stderr();
    std::lock_guard lock(mutex);
    exit.start(child, &mutex, [self = shared_from_this()] { self->on_exit(); });
}

void process_state::read_stderr()
{
    err.async_read_some(asio::buffer(err_chunk), [self = shared_from_this()](error_code ec, std::size_t n) {
        {
            std::lock_guard lock(self->mutex);
            const std::string_view chunk(self->err_chunk.data(), n);
            auto& sieve = self->plan.err_sieve;  // the launcher's own lines are not the command's
            if (n > 0) self->err_tail.append(sieve ? std::string_view(sieve->feed(chunk)) : chunk);
            if (ec && sieve) self->err_tail.append(sieve->finish());
            if (ec) self->stderr_done = true;
        }
        if (!ec) self->read_stderr();
        else self->maybe_finish();
    });
}

launch_plan process_state::take_cleanup()
{
    launch_plan parts;
    if (std::exchange(cleanup_taken, true)) return parts;
    parts.cleanup_argv = std::move(plan.cleanup_argv);
    parts.cleanup = std::move(plan.cleanup);
    parts.env = plan.env;
    parts.failure_prefix = plan.failure_prefix;
    return parts;
}

void process_state::on_exit()
{
    launch_plan parts;
    bool ended_by_us = false;
    {
        std::lock_guard lock(mutex);
        if (child.reaped()) return;  // the owner went first
        // Whatever the main process left behind goes now, while it still pins the group.
        child.signal_tree(SIGKILL);
        auto e = child.try_reap();
        if (!e) e = child.kill_and_reap();
        result.exit_code = e->exit_code;
        result.term_signal = e->term_signal;
        result.usage = e->usage;
        result.duration = clock::now() - started;
        parts = take_cleanup();
        ended_by_us = killed;
    }
    // What the command wrote to stderr just before it ended belongs in the result: wait
    // for EOF, but not for something that escaped the kill and holds the pipe.
    drain.expires_after(limits.timing.drain);
    drain.async_wait([self = shared_from_this()](error_code) {
        {
            std::lock_guard lock(self->mutex);
            self->drained = true;
        }
        self->maybe_finish();
    });
    clean_up_async(strand, parts, ended_by_us, [self = shared_from_this()] {
        {
            std::lock_guard lock(self->mutex);
            if (self->plan.measure) self->plan.measure(self->result);
            self->cleaned = true;
        }
        self->maybe_finish();
    });
}

void process_state::maybe_finish()
{
    std::vector<std::shared_ptr<waiter>> to_wake;
    {
        std::lock_guard lock(mutex);
        if (finished || !child.reaped() || !(stderr_done || drained) || !cleaned) return;
        finished = true;
        to_wake = std::move(waiters);
    }
    for (auto& w : to_wake) wake(std::move(w));
}

void process_state::wake(std::shared_ptr<waiter> w)
{
    // Completes on the channel's own executor: the waiting coroutine runs there.
    (void)w->ended.try_send(boost::system::error_code{});
}

void process_state::kill_tree() noexcept
{
    std::lock_guard lock(mutex);
    killed = true;
    child.signal_tree(SIGKILL);  // the exit watch then reaps and cleans up
}

void process_state::signal_tree(int sig) noexcept
{
    if (sig == SIGKILL || plan.sigkill_only) return kill_tree();
    std::lock_guard lock(mutex);
    if (child && !child.reaped() && !finished) child.signal_tree(sig);
}

void process_state::shut_down(bool last_reference) noexcept
{
    launch_plan parts;
    bool was_running = false;
    std::optional<exit_info> e;
    std::vector<std::shared_ptr<waiter>> to_wake;
    {
        std::lock_guard lock(mutex);
        was_running = child && !child.reaped();
        killed = true;
        // Not until the child ends: SIGKILL does not reach a set-id program that became
        // another user, and the dropping thread must not wait for it.
        e = child.kill_and_reap_within(std::chrono::milliseconds(250));
        if (was_running) {  // what waiters see: the kill, not a clean exit; -1 if it lives on
            result.exit_code = e ? e->exit_code : -1;
            result.term_signal = e ? e->term_signal : 0;
            result.usage = e ? e->usage : resource_usage{};
            result.duration = clock::now() - started;
        }
        // A child that lives on keeps its cleanup until it ends: the exit watch, which holds
        // this state, reaps it then and cleans up; without the watch (the io_context is gone,
        // or this is the last reference), a thread of the library does.
        if (e || last_reference) parts = take_cleanup();
        if (parts.cleanup && plan.measure) result.usage = resource_usage{.available = false};  // cleaned up later
        finished = true;
        to_wake = std::move(waiters);
    }
    if (!e && last_reference) {
        exit.stop();  // no handler of it can run any more: none holds this state
        abandon(std::move(child), [parts = std::move(parts)]() mutable { clean_up_now(parts, true); });
    } else if (e && (parts.cleanup || (was_running && !parts.cleanup_argv.empty()))) {
        run_on(worker::blocking, [parts = std::move(parts), was_running]() mutable { clean_up_now(parts, was_running); });
    }
    for (auto& w : to_wake) wake(std::move(w));
}

bool process_state::add_waiter(const std::shared_ptr<waiter>& w)
{
    std::lock_guard lock(mutex);
    if (finished) return false;
    waiters.push_back(w);
    return true;
}

std::shared_ptr<process_state> start_long_lived(asio::any_io_executor ex, launch_plan plan, const run_limits& limits)
{
    auto state = std::make_shared<process_state>(ex, std::move(plan), limits);
    auto fail = [&](const spawn_failure& f, bool setup_failed = true) {
        auto code = f.code;
        // On isolating drivers the program that failed is the driver's own tool.
        if (state->plan.throw_on_start_failure && !(state->plan.runs_command_itself && !setup_failed) &&
            (code == errc::command_not_found || code == errc::command_not_executable))
            code = errc::driver_unavailable;
        state->shut_down();
        throw launch_error(code, state->plan.failure_prefix + ": " + f.why);
    };
    auto req = take_spawn_request(state->plan);
    req.stdin_socket = true;
    child_pipes pipes;
    std::string what;
    if (auto ec = prepare_spawn(req, pipes, what)) fail(spawn_failed(req, ec, what));
    if (auto ec = attach_pipes({pipes.stdout_r, pipes.stderr_r, pipes.stdin_w}, state->out, state->err, state->in))
        fail(pipes_failed(ec));
    // start() answers synchronously, so it waits for the spawner thread: what the caller
    // learns is the same posix_spawn report as for executions.
    std::packaged_task<spawn_outcome()> task([&] { return spawn_child(req, pipes); });
    auto outcome_future = task.get_future();
    run_on(worker::spawn, [&task] { task(); });
    auto o = outcome_future.get();
    if (o.error) fail(spawn_failed(req, o.error, o.what), o.setup_failed);
    {
        std::lock_guard lock(state->mutex);
        state->child = std::move(o.child);
        state->child.kill_through(state->plan.kill_request_signal);
        state->started = o.started;
    }
    asio::dispatch(state->strand, [state] { state->start_watching(); });
    return state;
}

}  // namespace sandbox::detail
