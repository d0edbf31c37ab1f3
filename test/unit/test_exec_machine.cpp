// SPDX-License-Identifier: BSL-1.0
// exec_machine: the timeout, kill, drain and cancel decisions, driven with synthetic times.
#include "run/exec_machine.hpp"

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <csignal>
#include <optional>
#include <sstream>
#include <string>

using namespace std::chrono_literals;
using sandbox::stream_kind;
using sandbox::detail::exec_actions;
using sandbox::detail::exec_machine;
using sandbox::detail::exec_phase;
using sandbox::detail::exec_timing;

namespace {

using clock_type = exec_machine::clock;
using time_point = clock_type::time_point;

// A fixed, arbitrary origin: no real clock is read.
const time_point t0 = time_point{} + std::chrono::hours(1000);
constexpr time_point never = time_point::max();

const exec_actions nothing{};
const exec_actions term_actions{.signal_group = SIGTERM, .close_stdin = true};
const exec_actions kill_actions{.signal_group = SIGKILL};
const exec_actions kill_leftovers{.signal_group = SIGKILL, .close_stdin = true};
const exec_actions kill_leftovers_and_reap{.signal_group = SIGKILL, .close_stdin = true, .reap = true};
const exec_actions reap{.reap = true};
const exec_actions abandon{.stop_reading = true, .reap = true};

exec_timing timing(std::chrono::nanoseconds wall, std::optional<std::chrono::nanoseconds> idle = std::nullopt)
{
    exec_timing t;
    t.wall = wall;
    t.idle = idle;
    t.kill_grace = 250ms;
    t.drain = 100ms;
    return t;
}

// Milliseconds from t0 to `t`, for readable failures; -1 for "never".
long long ms_since_start(time_point t)
{
    if (t == never) return -1;
    return std::chrono::duration_cast<std::chrono::milliseconds>(t - t0).count();
}

std::string reason(const exec_machine& m)
{
    return m.timed_out() ? std::string(sandbox::to_string(*m.timed_out())) : std::string("none");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(test_exec_machine)

BOOST_AUTO_TEST_CASE(a_new_machine_runs_with_the_wall_deadline_armed)
{
    exec_machine m(timing(5s), t0);
    BOOST_TEST(m.phase() == exec_phase::running);
    BOOST_TEST(ms_since_start(m.next_deadline()) == 5000);
    BOOST_TEST(reason(m) == "none");
    BOOST_TEST(!m.cancelled());
    BOOST_TEST(!m.main_exited());
}

BOOST_AUTO_TEST_CASE(the_next_deadline_is_the_earlier_of_wall_and_idle)
{
    exec_machine idle_first(timing(5s, 1s), t0);
    BOOST_TEST(ms_since_start(idle_first.next_deadline()) == 1000);
    exec_machine wall_first(timing(1s, 5s), t0);
    BOOST_TEST(ms_since_start(wall_first.next_deadline()) == 1000);
    exec_machine wall_only(timing(2s), t0);
    BOOST_TEST(ms_since_start(wall_only.next_deadline()) == 2000);
}

BOOST_AUTO_TEST_CASE(an_early_deadline_call_does_nothing)
{
    exec_machine m(timing(5s), t0);
    BOOST_TEST(m.on_deadline(t0 + 4999ms) == nothing);
    BOOST_TEST(m.phase() == exec_phase::running);
    BOOST_TEST(ms_since_start(m.next_deadline()) == 5000);
    BOOST_TEST(reason(m) == "none");
}

BOOST_AUTO_TEST_CASE(wall_deadline_sends_sigterm_and_closes_stdin_then_sigkill_after_the_grace)
{
    exec_machine m(timing(5s), t0);
    BOOST_TEST(m.on_deadline(t0 + 5s) == term_actions);
    BOOST_TEST(m.phase() == exec_phase::terminating);
    BOOST_TEST(reason(m) == "wall");
    BOOST_TEST(ms_since_start(m.next_deadline()) == 5250);

    // Before the grace ends: nothing more.
    BOOST_TEST(m.on_deadline(t0 + 5100ms) == nothing);
    BOOST_TEST(m.phase() == exec_phase::terminating);

    BOOST_TEST(m.on_deadline(t0 + 5250ms) == kill_actions);
    BOOST_TEST(m.phase() == exec_phase::killed);
    // Waits for the main process to die, but not for ever (give_up, 5 s by default).
    BOOST_TEST(ms_since_start(m.next_deadline()) == 10250);
    BOOST_TEST(m.on_deadline(t0 + 10s) == nothing);

    // The main process dies: leftovers killed, drain, reap.
    BOOST_TEST(m.on_exit(t0 + 5300ms) == kill_leftovers);
    BOOST_TEST(m.phase() == exec_phase::draining);
    BOOST_TEST(ms_since_start(m.next_deadline()) == 5400);
    BOOST_TEST(m.on_stream_closed(stream_kind::out) == nothing);
    BOOST_TEST(m.on_stream_closed(stream_kind::err) == reap);
    BOOST_TEST(m.phase() == exec_phase::done);
    BOOST_TEST(reason(m) == "wall");
    BOOST_TEST(!m.cancelled());
}

BOOST_AUTO_TEST_CASE(a_sigkill_only_launcher_is_killed_at_once_by_timeouts_and_every_cancellation)
{
    auto t = timing(5s, 1s);
    t.sigkill_only = true;  // srun: SIGTERM would make it kill its step before the node cleans up
    exec_machine wall(t, t0);
    wall.on_output(t0 + 4500ms);
    BOOST_TEST(wall.on_deadline(t0 + 5s).signal_group == SIGKILL);
    BOOST_TEST(wall.phase() == exec_phase::killed);
    BOOST_TEST(reason(wall) == "wall");
    exec_machine idle(t, t0);
    BOOST_TEST(idle.on_deadline(t0 + 1s).signal_group == SIGKILL);
    BOOST_TEST(reason(idle) == "idle");
    for (int sig : {SIGINT, SIGTERM, SIGKILL}) {
        exec_machine cancelled(t, t0);
        BOOST_TEST(cancelled.on_cancel(t0 + 100ms, sig).signal_group == SIGKILL, "cancelled with signal " << sig);
        BOOST_TEST(cancelled.cancelled());
    }
}

BOOST_AUTO_TEST_CASE(a_late_wall_deadline_call_still_fires)
{
    exec_machine m(timing(1s), t0);
    BOOST_TEST(m.on_deadline(t0 + 3s) == term_actions);
    BOOST_TEST(ms_since_start(m.next_deadline()) == 3250);  // grace counted from the call
}

BOOST_AUTO_TEST_CASE(exit_during_the_grace_ends_the_terminating_phase)
{
    exec_machine m(timing(1s), t0);
    BOOST_TEST(m.on_deadline(t0 + 1s) == term_actions);
    BOOST_TEST(m.on_exit(t0 + 1100ms) == kill_leftovers);
    BOOST_TEST(m.phase() == exec_phase::draining);
    BOOST_TEST(m.main_exited());
    BOOST_TEST(ms_since_start(m.next_deadline()) == 1200);
    // The grace deadline no longer applies: a deadline before the drain ends does nothing.
    BOOST_TEST(m.on_deadline(t0 + 1150ms) == nothing);
    BOOST_TEST(m.phase() == exec_phase::draining);
    BOOST_TEST(reason(m) == "wall");
}

BOOST_AUTO_TEST_CASE(idle_fires_when_no_output_arrives)
{
    exec_machine m(timing(60s, 1s), t0);
    BOOST_TEST(m.on_deadline(t0 + 1s) == term_actions);
    BOOST_TEST(reason(m) == "idle");
    BOOST_TEST(m.phase() == exec_phase::terminating);
    BOOST_TEST(ms_since_start(m.next_deadline()) == 1250);
}

BOOST_AUTO_TEST_CASE(output_keeps_idle_alive_and_the_lazy_recheck_moves_the_deadline)
{
    exec_machine m(timing(60s, 1s), t0);
    m.on_output(t0 + 500ms);
    // Output does not re-arm anything by itself.
    BOOST_TEST(ms_since_start(m.next_deadline()) == 1000);

    // At the first check the last output was 500 ms ago: not idle; look again at 1.5 s.
    BOOST_TEST(m.on_deadline(t0 + 1s) == nothing);
    BOOST_TEST(m.phase() == exec_phase::running);
    BOOST_TEST(ms_since_start(m.next_deadline()) == 1500);

    m.on_output(t0 + 1200ms);
    BOOST_TEST(m.on_deadline(t0 + 1500ms) == nothing);
    BOOST_TEST(ms_since_start(m.next_deadline()) == 2200);

    // Nothing since 1.2 s: idle at 2.2 s.
    BOOST_TEST(m.on_deadline(t0 + 2200ms) == term_actions);
    BOOST_TEST(reason(m) == "idle");
    BOOST_TEST(ms_since_start(m.next_deadline()) == 2450);
}

BOOST_AUTO_TEST_CASE(steady_output_never_times_out_on_idle_but_wall_still_fires)
{
    exec_machine m(timing(3s, 1s), t0);
    time_point now = t0;
    for (int i = 0; i < 100; ++i) {
        now += 25ms;
        m.on_output(now);
        if (now >= m.next_deadline()) BOOST_TEST_REQUIRE(m.on_deadline(now) == nothing);
    }
    BOOST_TEST(m.phase() == exec_phase::running);
    BOOST_TEST(ms_since_start(now) == 2500);
    BOOST_TEST(ms_since_start(m.next_deadline()) <= 3000);
    // Keep writing until the wall deadline.
    while (m.phase() == exec_phase::running) {
        now += 25ms;
        m.on_output(now);
        if (now >= m.next_deadline()) (void)m.on_deadline(now);
    }
    BOOST_TEST(reason(m) == "wall");
    BOOST_TEST(ms_since_start(now) == 3000);
}

BOOST_AUTO_TEST_CASE(wall_is_checked_before_idle)
{
    // Both expired at the same call: wall wins.
    exec_machine same(timing(1s, 1s), t0);
    BOOST_TEST(same.on_deadline(t0 + 1s) == term_actions);
    BOOST_TEST(reason(same) == "wall");

    exec_machine late(timing(2s, 500ms), t0);
    BOOST_TEST(late.on_deadline(t0 + 3s) == term_actions);
    BOOST_TEST(reason(late) == "wall");
}

BOOST_AUTO_TEST_CASE(exit_with_both_streams_open_kills_the_group_and_drains)
{
    exec_machine m(timing(5s), t0);
    BOOST_TEST(m.on_exit(t0 + 1s) == kill_leftovers);
    BOOST_TEST(m.phase() == exec_phase::draining);
    BOOST_TEST(m.main_exited());
    BOOST_TEST(ms_since_start(m.next_deadline()) == 1100);  // drain deadline, not the wall

    BOOST_TEST(m.on_stream_closed(stream_kind::err) == nothing);
    BOOST_TEST(m.phase() == exec_phase::draining);
    BOOST_TEST(m.on_stream_closed(stream_kind::out) == reap);
    BOOST_TEST(m.phase() == exec_phase::done);
    BOOST_TEST(ms_since_start(m.next_deadline()) == -1);
    BOOST_TEST(reason(m) == "none");
}

BOOST_AUTO_TEST_CASE(exit_after_both_streams_closed_reaps_at_once)
{
    exec_machine m(timing(5s), t0);
    BOOST_TEST(m.on_stream_closed(stream_kind::out) == nothing);
    BOOST_TEST(m.on_stream_closed(stream_kind::err) == nothing);
    BOOST_TEST(m.phase() == exec_phase::running);
    BOOST_TEST(ms_since_start(m.next_deadline()) == 5000);

    BOOST_TEST(m.on_exit(t0 + 2s) == kill_leftovers_and_reap);
    BOOST_TEST(m.phase() == exec_phase::done);
    BOOST_TEST(ms_since_start(m.next_deadline()) == -1);
}

BOOST_AUTO_TEST_CASE(the_drain_deadline_stops_reading_and_reaps)
{
    exec_machine m(timing(5s), t0);
    BOOST_TEST(m.on_exit(t0 + 1s) == kill_leftovers);
    BOOST_TEST(m.on_stream_closed(stream_kind::out) == nothing);
    BOOST_TEST(m.on_deadline(t0 + 1050ms) == nothing);
    BOOST_TEST(m.phase() == exec_phase::draining);
    BOOST_TEST(m.on_deadline(t0 + 1100ms) == abandon);
    BOOST_TEST(m.phase() == exec_phase::done);
    // The stream that closes afterwards changes nothing.
    BOOST_TEST(m.on_stream_closed(stream_kind::err) == nothing);
}

BOOST_AUTO_TEST_CASE(the_wall_clock_stops_once_the_main_process_exited)
{
    exec_machine m(timing(1s), t0);
    BOOST_TEST(m.on_exit(t0 + 990ms) == kill_leftovers);
    // The wall deadline passes while draining: no timeout is reported.
    BOOST_TEST(m.on_deadline(t0 + 1s) == nothing);
    BOOST_TEST(m.on_deadline(t0 + 1090ms) == abandon);
    BOOST_TEST(reason(m) == "none");
}

BOOST_AUTO_TEST_CASE(a_second_exit_is_ignored)
{
    exec_machine m(timing(5s), t0);
    BOOST_TEST(m.on_exit(t0 + 1s) == kill_leftovers);
    BOOST_TEST(m.on_exit(t0 + 1050ms) == nothing);
    BOOST_TEST(ms_since_start(m.next_deadline()) == 1100);
}

BOOST_AUTO_TEST_CASE(cancel_while_running_terminates)
{
    exec_machine m(timing(5s), t0);
    BOOST_TEST(m.on_cancel(t0 + 1s) == term_actions);
    BOOST_TEST(m.cancelled());
    BOOST_TEST(m.phase() == exec_phase::terminating);
    BOOST_TEST(reason(m) == "none");  // a cancellation is not a timeout
    BOOST_TEST(ms_since_start(m.next_deadline()) == 1250);
    // The grace still escalates on its own.
    BOOST_TEST(m.on_deadline(t0 + 1250ms) == kill_actions);
    BOOST_TEST(m.phase() == exec_phase::killed);
}

BOOST_AUTO_TEST_CASE(the_cancellation_type_chooses_the_first_signal)
{
    // terminal: SIGKILL at once, then only the give-up deadline.
    exec_machine killed(timing(5s), t0);
    const auto k = killed.on_cancel(t0 + 1s, SIGKILL);
    BOOST_TEST(k.signal_group == SIGKILL);
    BOOST_TEST(k.close_stdin);
    BOOST_TEST(killed.phase() == exec_phase::killed);
    BOOST_TEST(ms_since_start(killed.next_deadline()) == 6000);
    // total: SIGINT, then SIGKILL after the grace.
    exec_machine interrupted(timing(5s), t0);
    BOOST_TEST(interrupted.on_cancel(t0 + 1s, SIGINT).signal_group == SIGINT);
    BOOST_TEST(interrupted.phase() == exec_phase::terminating);
    BOOST_TEST(interrupted.on_deadline(t0 + 1250ms) == kill_actions);
    // Asked during the spawn: the signal is kept for when the child exists.
    exec_machine spawning(timing(5s));
    BOOST_TEST(spawning.on_cancel(t0, SIGINT) == nothing);
    BOOST_TEST(spawning.on_spawned(t0 + 1ms).signal_group == SIGINT);
}

BOOST_AUTO_TEST_CASE(cancel_twice_sends_sigkill)
{
    exec_machine m(timing(5s), t0);
    BOOST_TEST(m.on_cancel(t0 + 1s) == term_actions);
    BOOST_TEST(m.on_cancel(t0 + 1100ms) == kill_actions);
    BOOST_TEST(m.phase() == exec_phase::killed);
    BOOST_TEST(ms_since_start(m.next_deadline()) == 6100);
}

BOOST_AUTO_TEST_CASE(cancel_during_a_timeout_grace_sends_sigkill)
{
    exec_machine m(timing(1s), t0);
    BOOST_TEST(m.on_deadline(t0 + 1s) == term_actions);
    BOOST_TEST(m.on_cancel(t0 + 1100ms) == kill_actions);
    BOOST_TEST(m.cancelled());
    BOOST_TEST(m.phase() == exec_phase::killed);
    BOOST_TEST(reason(m) == "wall");
    BOOST_TEST(ms_since_start(m.next_deadline()) == 6100);
}

BOOST_AUTO_TEST_CASE(a_process_sigkill_cannot_end_is_given_up_on)
{
    auto t = timing(1s);
    t.kill_grace = 100ms;
    t.give_up = 2s;
    exec_machine m(t, t0);
    BOOST_TEST(m.on_deadline(t0 + 1s) == term_actions);
    BOOST_TEST(m.on_deadline(t0 + 1100ms) == kill_actions);
    BOOST_TEST(ms_since_start(m.next_deadline()) == 3100);
    BOOST_TEST(m.on_deadline(t0 + 3000ms) == nothing);
    BOOST_TEST(m.on_deadline(t0 + 3100ms) == (exec_actions{.stop_reading = true, .abandon = true}));
    BOOST_TEST(m.phase() == exec_phase::abandoned);
    BOOST_TEST(reason(m) == "wall");
    // Nothing is asked of an abandoned execution any more.
    BOOST_TEST(m.on_exit(t0 + 4s) == nothing);
    BOOST_TEST(m.on_cancel(t0 + 4s) == nothing);
    BOOST_TEST((m.next_deadline() == clock_type::time_point::max()));
}

BOOST_AUTO_TEST_CASE(cancel_while_draining_stops_reading_and_reaps)
{
    exec_machine m(timing(5s), t0);
    BOOST_TEST(m.on_exit(t0 + 1s) == kill_leftovers);
    BOOST_TEST(m.on_cancel(t0 + 1010ms) == abandon);
    BOOST_TEST(m.cancelled());
    BOOST_TEST(m.phase() == exec_phase::done);
    BOOST_TEST(ms_since_start(m.next_deadline()) == -1);
}

BOOST_AUTO_TEST_CASE(cancel_after_sigkill_leaves_the_kill_in_place)
{
    exec_machine m(timing(1s), t0);
    BOOST_TEST(m.on_deadline(t0 + 1s) == term_actions);
    BOOST_TEST(m.on_deadline(t0 + 1250ms) == kill_actions);
    BOOST_TEST(m.on_cancel(t0 + 1300ms) == nothing);
    BOOST_TEST(m.cancelled());
    BOOST_TEST(m.phase() == exec_phase::killed);
    // The exit still leads to a drain and a reap.
    BOOST_TEST(m.on_exit(t0 + 1310ms) == kill_leftovers);
    BOOST_TEST(m.on_stream_closed(stream_kind::out) == nothing);
    BOOST_TEST(m.on_stream_closed(stream_kind::err) == reap);
}

BOOST_AUTO_TEST_CASE(events_after_done_are_ignored)
{
    exec_machine m(timing(1s, 500ms), t0);
    (void)m.on_stream_closed(stream_kind::out);
    (void)m.on_stream_closed(stream_kind::err);
    BOOST_TEST(m.on_exit(t0 + 100ms) == kill_leftovers_and_reap);
    BOOST_TEST(m.phase() == exec_phase::done);

    m.on_output(t0 + 200ms);
    BOOST_TEST(m.on_deadline(t0 + 10s) == nothing);
    BOOST_TEST(m.on_exit(t0 + 10s) == nothing);
    BOOST_TEST(m.on_cancel(t0 + 10s) == nothing);
    BOOST_TEST(m.on_stream_closed(stream_kind::out) == nothing);
    BOOST_TEST(m.on_stream_closed(stream_kind::err) == nothing);
    BOOST_TEST(m.phase() == exec_phase::done);
    BOOST_TEST(ms_since_start(m.next_deadline()) == -1);
    BOOST_TEST(reason(m) == "none");
    BOOST_TEST(!m.cancelled());
}

BOOST_AUTO_TEST_CASE(a_huge_wall_timeout_saturates_instead_of_wrapping)
{
    exec_timing t = timing(std::chrono::nanoseconds::max(), std::chrono::nanoseconds::max());
    exec_machine m(t, t0);
    BOOST_TEST((m.next_deadline() == never));
    BOOST_TEST(m.on_deadline(t0 + std::chrono::hours(24 * 365)) == nothing);
    BOOST_TEST(m.phase() == exec_phase::running);
}

BOOST_AUTO_TEST_CASE(phases_and_actions_print_readably)
{
    std::ostringstream os;
    os << exec_phase::running << ' ' << exec_phase::terminating << ' ' << exec_phase::killed << ' '
       << exec_phase::draining << ' ' << exec_phase::done;
    BOOST_TEST(os.str() == "running terminating killed draining done");

    std::ostringstream a;
    a << term_actions;
    BOOST_TEST(a.str().find(std::to_string(SIGTERM)) != std::string::npos, a.str());
}

BOOST_AUTO_TEST_CASE(the_exit_is_watched_from_the_start_by_default)
{
    exec_machine m(timing(5s), t0);
    BOOST_TEST(m.watching());
    BOOST_TEST(!m.start_watching());
    BOOST_TEST((m.next_deadline() == t0 + 5s));
}

BOOST_AUTO_TEST_CASE(with_a_watch_delay_the_exit_watch_starts_at_the_delay)
{
    auto t = timing(5s);
    t.exit_watch_delay = 50ms;
    exec_machine m(t, t0);
    BOOST_TEST(!m.watching());
    BOOST_TEST((m.next_deadline() == t0 + 50ms));
    BOOST_TEST(m.on_deadline(t0 + 49ms) == nothing);
    BOOST_TEST(m.on_deadline(t0 + 50ms) == (exec_actions{.watch_exit = true}));
    BOOST_TEST(m.watching());
    BOOST_TEST((m.next_deadline() == t0 + 5s));
    BOOST_TEST(m.on_deadline(t0 + 60ms) == nothing);
}

BOOST_AUTO_TEST_CASE(the_runner_can_start_the_watch_early_once)
{
    auto t = timing(5s);
    t.exit_watch_delay = 50ms;
    exec_machine m(t, t0);
    BOOST_TEST(m.start_watching());
    BOOST_TEST(!m.start_watching());
    BOOST_TEST((m.next_deadline() == t0 + 5s));
    BOOST_TEST(m.on_deadline(t0 + 50ms) == nothing);
}

BOOST_AUTO_TEST_CASE(a_timeout_before_the_watch_delay_starts_the_watch)
{
    auto t = timing(20ms);
    t.exit_watch_delay = 50ms;
    exec_machine m(t, t0);
    BOOST_TEST((m.next_deadline() == t0 + 20ms));
    BOOST_TEST(m.on_deadline(t0 + 20ms) == (exec_actions{.signal_group = SIGTERM, .watch_exit = true, .close_stdin = true}));
    BOOST_TEST(m.watching());
    // A cancellation too.
    exec_machine c(t, t0);
    BOOST_TEST(c.on_cancel(t0 + 1ms) == (exec_actions{.signal_group = SIGTERM, .watch_exit = true, .close_stdin = true}));
}

BOOST_AUTO_TEST_CASE(the_watch_and_a_timeout_due_together_both_happen)
{
    auto t = timing(50ms);
    t.exit_watch_delay = 50ms;
    exec_machine m(t, t0);
    BOOST_TEST(m.on_deadline(t0 + 50ms) == (exec_actions{.signal_group = SIGTERM, .watch_exit = true, .close_stdin = true}));
}

BOOST_AUTO_TEST_CASE(no_clock_runs_while_spawning)
{
    exec_machine m(timing(1s, 500ms));
    BOOST_TEST(m.phase() == exec_phase::spawning);
    BOOST_TEST((m.next_deadline() == clock_type::time_point::max()));
    BOOST_TEST(m.on_deadline(t0 + 10s) == nothing);
    BOOST_TEST(m.on_exit(t0 + 10s) == nothing);  // cannot have exited before it exists
    // The clocks start at the spawn.
    BOOST_TEST(m.on_spawned(t0) == nothing);
    BOOST_TEST(m.phase() == exec_phase::running);
    BOOST_TEST((m.next_deadline() == t0 + 500ms));
    BOOST_TEST(m.on_spawned(t0 + 1s) == nothing);  // once
}

BOOST_AUTO_TEST_CASE(a_cancellation_during_the_spawn_terminates_once_spawned)
{
    exec_machine m(timing(5s));
    BOOST_TEST(m.on_cancel(t0) == nothing);
    BOOST_TEST(m.cancelled());
    BOOST_TEST(m.phase() == exec_phase::spawning);
    BOOST_TEST(m.on_spawned(t0 + 1ms) == term_actions);
    BOOST_TEST(m.phase() == exec_phase::terminating);
}

BOOST_AUTO_TEST_SUITE_END()
