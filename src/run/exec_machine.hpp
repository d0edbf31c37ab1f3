// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_SRC_RUN_EXEC_MACHINE_HPP
#define SANDBOX_SRC_RUN_EXEC_MACHINE_HPP

#include <sandbox/exec_result.hpp>
#include <sandbox/output.hpp>

#include <signal.h>

#include <chrono>
#include <optional>
#include <utility>
#include <ostream>

namespace sandbox::detail {

/// The clocks of one execution.
struct exec_timing {
    std::chrono::nanoseconds wall{std::chrono::seconds(5)};
    std::optional<std::chrono::nanoseconds> idle;
    std::chrono::nanoseconds kill_grace{std::chrono::milliseconds(250)};
    std::chrono::nanoseconds drain{std::chrono::milliseconds(250)};
    /// How long a command may run before its exit is watched through a pidfd. Most short
    /// commands are seen to end by their outputs closing first, and never need one (each
    /// pidfd costs a descriptor, which every later spawn then copies). 0: watch from the start.
    std::chrono::nanoseconds exit_watch_delay{0};
    /// After SIGKILL, how long to wait for the main process: one that cannot be killed (a
    /// setuid program on the host driver) must not hold the result back for ever.
    std::chrono::nanoseconds give_up{std::chrono::seconds(5)};
    /// Every stop is SIGKILL, never SIGTERM or SIGINT first: for a launcher that answers
    /// those by killing what it launched at once (srun), where the driver's cleanup stops
    /// it more gently.
    bool sigkill_only = false;
};

enum class exec_phase {
    spawning,     ///< handed to a spawner thread; no clock runs yet
    running,      ///< the command runs; wall and idle clocks armed
    terminating,  ///< SIGTERM sent to the group; waiting for the main process or the grace
    killed,       ///< SIGKILL sent; waiting for the main process to die, until give_up
    draining,     ///< main process ended, leftovers killed; reading what the pipes still hold
    done,         ///< reap and complete
    abandoned,    ///< SIGKILL did not end it in time: completed without it, reaped later
};

std::ostream& operator<<(std::ostream& os, exec_phase p);

/// What the I/O layer must do after an event, in field order.
struct exec_actions {
    int signal_group = 0;       ///< send this signal to the command's process group
    bool watch_exit = false;    ///< start watching for the main process's exit (pidfd)
    bool close_stdin = false;   ///< stop feeding stdin
    bool stop_reading = false;  ///< close the output pipes even if a writer still holds them
    bool reap = false;          ///< reap the main process and complete
    bool abandon = false;       ///< complete without the main process, which would not die

    friend bool operator==(const exec_actions&, const exec_actions&) = default;
};

std::ostream& operator<<(std::ostream& os, const exec_actions& a);


/// The decision logic of one execution, free of I/O so it can be tested without processes:
/// events go in, actions come out, and next_deadline() says when to call on_deadline().
///
/// - Wall and idle deadlines end the whole group: SIGTERM, then SIGKILL after the grace.
/// - When the main process ends (it is a zombie, so its process group id cannot be reused),
///   whatever it left behind gets SIGKILL at once; the pipes are read until EOF, or until the
///   drain deadline if something out of reach still holds them; then reap.
/// - Output only records the time: the idle deadline is checked lazily when it fires, so
///   no timer is re-armed per chunk.
class exec_machine {
public:
    using clock = std::chrono::steady_clock;

    /// Starts in the spawning phase.
    explicit exec_machine(const exec_timing& timing) noexcept : timing_(timing) {}
    /// Already spawned at `start`.
    exec_machine(const exec_timing& timing, clock::time_point start) noexcept : timing_(timing)
    {
        (void)on_spawned(start);
    }

    /// The child exists: the clocks start now. Acts on a cancellation that came meanwhile.
    exec_actions on_spawned(clock::time_point now) noexcept;

    void on_output(clock::time_point now) noexcept { last_activity_ = now; }
    exec_actions on_stream_closed(stream_kind k) noexcept;
    exec_actions on_exit(clock::time_point now) noexcept;
    exec_actions on_deadline(clock::time_point now) noexcept;
    /// The awaiting operation was cancelled, or the output callback threw.
    /// The caller cancelled: `first` (SIGTERM, SIGINT) then SIGKILL after the grace, or
    /// SIGKILL at once.
    exec_actions on_cancel(clock::time_point now, int first = SIGTERM) noexcept;
    /// The runner needs the exit watched now (outputs closed but no exit yet). True the
    /// first time, when the watch must be started.
    bool start_watching() noexcept { return !std::exchange(watching_, true); }
    bool watching() const noexcept { return watching_; }

    /// When on_deadline() must next be called; time_point::max() when no clock runs.
    clock::time_point next_deadline() const noexcept;

    exec_phase phase() const noexcept { return phase_; }
    bool cancelled() const noexcept { return cancelled_; }
    std::optional<timeout_reason> timed_out() const noexcept { return reason_; }
    bool main_exited() const noexcept { return exited_; }

private:
    exec_actions terminate(clock::time_point now, int first = SIGTERM) noexcept;
    exec_actions finish_if_drained() noexcept;

    exec_timing timing_;
    exec_phase phase_ = exec_phase::spawning;
    clock::time_point wall_deadline_;
    clock::time_point idle_check_;  // when to look at last_activity_ next
    clock::time_point last_activity_;
    clock::time_point phase_deadline_ = clock::time_point::max();  // grace or drain
    clock::time_point watch_at_;                                    // when to start watching the exit
    std::optional<timeout_reason> reason_;
    bool cancelled_ = false;
    int cancel_signal_ = SIGTERM;  // what a cancellation during the spawn sends first
    bool exited_ = false;
    bool out_open_ = true;
    bool err_open_ = true;
    bool watching_ = false;
};

}  // namespace sandbox::detail

#endif
