// SPDX-License-Identifier: BSL-1.0
#include "run/exec_machine.hpp"

#include <algorithm>
#include <csignal>

namespace sandbox::detail {

namespace {

exec_machine::clock::time_point add(exec_machine::clock::time_point t, std::chrono::nanoseconds d) noexcept
{
    // Saturate: a wall timeout of years must not wrap around.
    if (d <= std::chrono::nanoseconds::zero()) return t;
    if (t > exec_machine::clock::time_point::max() - d) return exec_machine::clock::time_point::max();
    return t + d;
}

}  // namespace

std::ostream& operator<<(std::ostream& os, exec_phase p)
{
    switch (p) {
    case exec_phase::running: return os << "running";
    case exec_phase::terminating: return os << "terminating";
    case exec_phase::killed: return os << "killed";
    case exec_phase::draining: return os << "draining";
    case exec_phase::done: return os << "done";
    case exec_phase::spawning: return os << "spawning";
    case exec_phase::abandoned: return os << "abandoned";
    }
    return os << "?";
}

std::ostream& operator<<(std::ostream& os, const exec_actions& a)
{
    return os << "{signal=" << a.signal_group << " watch_exit=" << a.watch_exit << " close_stdin=" << a.close_stdin
              << " stop_reading=" << a.stop_reading << " reap=" << a.reap << " abandon=" << a.abandon << '}';
}

exec_actions exec_machine::on_spawned(clock::time_point start) noexcept
{
    if (phase_ != exec_phase::spawning) return {};
    phase_ = exec_phase::running;
    wall_deadline_ = add(start, timing_.wall);
    idle_check_ = timing_.idle ? add(start, *timing_.idle) : clock::time_point::max();
    last_activity_ = start;
    watch_at_ = add(start, timing_.exit_watch_delay);
    watching_ = timing_.exit_watch_delay.count() <= 0;
    if (cancelled_) return terminate(start, cancel_signal_);  // asked while the spawn was under way
    return {};
}

exec_machine::clock::time_point exec_machine::next_deadline() const noexcept
{
    switch (phase_) {
    case exec_phase::running:
        return std::min({wall_deadline_, idle_check_, watching_ ? clock::time_point::max() : watch_at_});
    case exec_phase::terminating:
    case exec_phase::killed:
    case exec_phase::draining: return phase_deadline_;
    case exec_phase::spawning:
    case exec_phase::done:
    case exec_phase::abandoned: break;
    }
    return clock::time_point::max();
}

exec_actions exec_machine::terminate(clock::time_point now, int first) noexcept
{
    if (timing_.sigkill_only) first = SIGKILL;
    if (first == SIGKILL) {
        phase_ = exec_phase::killed;
        phase_deadline_ = add(now, timing_.give_up);
    } else {
        phase_ = exec_phase::terminating;
        phase_deadline_ = add(now, timing_.kill_grace);
    }
    return {.signal_group = first, .watch_exit = start_watching(), .close_stdin = true};
}

exec_actions exec_machine::finish_if_drained() noexcept
{
    if (phase_ != exec_phase::draining || out_open_ || err_open_) return {};
    phase_ = exec_phase::done;
    return {.reap = true};
}

exec_actions exec_machine::on_stream_closed(stream_kind k) noexcept
{
    (k == stream_kind::out ? out_open_ : err_open_) = false;
    return finish_if_drained();
}

exec_actions exec_machine::on_exit(clock::time_point now) noexcept
{
    if (exited_ || phase_ == exec_phase::done || phase_ == exec_phase::abandoned || phase_ == exec_phase::spawning)
        return {};
    exited_ = true;
    // Anything still in the group was left behind by the main process: end it now, while the
    // zombie main process still pins the group id.
    phase_ = exec_phase::draining;
    phase_deadline_ = add(now, timing_.drain);
    exec_actions a = finish_if_drained();
    a.signal_group = SIGKILL;
    a.close_stdin = true;
    return a;
}

exec_actions exec_machine::on_deadline(clock::time_point now) noexcept
{
    switch (phase_) {
    case exec_phase::running: {
        const bool watch = !watching_ && now >= watch_at_ && start_watching();
        auto with_watch = [watch](exec_actions a) {
            a.watch_exit = a.watch_exit || watch;
            return a;
        };
        if (now >= wall_deadline_) {
            reason_ = timeout_reason::wall;
            return with_watch(terminate(now));
        }
        if (timing_.idle && now >= idle_check_) {
            const auto idle_until = add(last_activity_, *timing_.idle);
            if (now >= idle_until) {
                reason_ = timeout_reason::idle;
                return with_watch(terminate(now));
            }
            idle_check_ = idle_until;
        }
        return with_watch({});
    }
    case exec_phase::terminating:
        if (now < phase_deadline_) return {};
        phase_ = exec_phase::killed;
        phase_deadline_ = add(now, timing_.give_up);
        return {.signal_group = SIGKILL};
    case exec_phase::draining:
        if (now < phase_deadline_) return {};
        phase_ = exec_phase::done;
        return {.stop_reading = true, .reap = true};
    case exec_phase::killed:
        if (now < phase_deadline_) return {};
        phase_ = exec_phase::abandoned;
        return {.stop_reading = true, .abandon = true};
    case exec_phase::spawning:
    case exec_phase::done:
    case exec_phase::abandoned: break;
    }
    return {};
}

exec_actions exec_machine::on_cancel(clock::time_point now, int first) noexcept
{
    if (phase_ == exec_phase::done || phase_ == exec_phase::abandoned) return {};
    cancelled_ = true;
    switch (phase_) {
    case exec_phase::spawning: cancel_signal_ = first; return {};  // acted on by on_spawned()
    case exec_phase::running: return terminate(now, first);
    case exec_phase::terminating:
        // Asked again, or cancelled during a timeout's grace: stop being polite.
        phase_ = exec_phase::killed;
        phase_deadline_ = add(now, timing_.give_up);
        return {.signal_group = SIGKILL};
    case exec_phase::draining:
        phase_ = exec_phase::done;
        return {.stop_reading = true, .reap = true};
    case exec_phase::killed:
    case exec_phase::done:
    case exec_phase::abandoned: break;
    }
    return {};
}

}  // namespace sandbox::detail
