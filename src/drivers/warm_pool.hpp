// SPDX-License-Identifier: BSL-1.0
// Sandboxes started ahead of their commands (command_runner::prewarm). Each is the driver's
// whole sandbox (namespaces, mounts, cgroups, seccomp, container) whose command is the
// library's stub, `sandbox-spawn --await`, waiting on stdin; an execution takes one, writes
// which command to run, where and with what environment, and from then on it is an ordinary
// execution of the process runner. A sandbox serves one execution and is then gone; the pool
// starts another in the background, on threads of its own, to keep the count it was asked
// for. Unused ones go after the pool's idle time, with the runner, or, after a crash, with
// the sweep of dead runs (each has its run record like any run).
#ifndef SANDBOX_SRC_DRIVERS_WARM_POOL_HPP
#define SANDBOX_SRC_DRIVERS_WARM_POOL_HPP

#include "drivers/driver_spec.hpp"
#include "run/process_runner.hpp"

#include <chrono>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace sandbox::detail {

/// One sandbox waiting for its command.
struct warm_sandbox {
    launch_plan plan;  ///< its launch: the tool's argv (the stub at its end), cleanup, measure
    std::shared_ptr<started_sandbox> started;
    warm_setup setup;
    std::chrono::steady_clock::time_point ready_at{};
};

/// Starts one sandbox ahead and waits until it is ready (blocking); throws launch_error.
warm_sandbox start_warm(const driver_context& ctx);

/// The launch of `args` with `o` in `w`: its plan, whose `started` hands the sandbox over (`w`
/// is emptied). Throws launch_error (a working directory outside the work dir), `w` untouched.
launch_plan warm_launch(const driver_context& ctx, warm_sandbox& w, std::vector<std::string> args, const exec_options& o);

/// Ends a sandbox that will not be used (blocking): its tool killed and reaped, the run's
/// container, cgroups and work dir removed.
void discard(warm_sandbox w) noexcept;

/// The same on a thread of the pools', for callers on an io thread.
void discard_later(std::vector<warm_sandbox> gone);

class warm_pool : public std::enable_shared_from_this<warm_pool> {
public:
    using starter = std::function<warm_sandbox()>;

    /// How long a taken sandbox's replacement waits at most for its execution to complete.
    static constexpr std::chrono::milliseconds default_refill_delay{10};

    explicit warm_pool(starter start, std::chrono::milliseconds refill_delay = default_refill_delay)
        : start_(std::move(start)), refill_delay_(refill_delay)
    {
    }
    ~warm_pool();

    /// Keeps `count` sandboxes ready, starting what is missing in the background; `done` is
    /// called once that many are ready, or with the error of the first that failed to start
    /// (then the pool stops refilling until fill() is called again). Unused for `idle`, the
    /// ready ones go.
    void fill(std::size_t count, std::chrono::seconds idle, std::function<void(std::exception_ptr)> done);

    /// A ready sandbox, if there is one (never blocks). Its replacement starts when the
    /// execution that took it completes (its started_sandbox::on_end is let go of), or the
    /// refill delay after the take, whichever comes first: a short command does not share
    /// the machine with the next sandbox's start. Finding none ready starts every
    /// replacement still owed at once.
    std::optional<warm_sandbox> take();

    /// Ends every ready sandbox and stops refilling (in the background).
    void close();

    /// How many are ready now (for tests and benchmarks).
    std::size_t ready() const;

    /// Drops what has waited longer than the idle time and starts the replacements whose
    /// delay has passed; called by the pools' janitor thread. Returns when it next has a
    /// replacement due (max() for none).
    std::chrono::steady_clock::time_point expire(std::chrono::steady_clock::time_point now);

private:
    struct refill_owed;
    friend struct refill_owed;

    void start_missing(std::unique_lock<std::mutex>& lock);
    void started_one(std::optional<warm_sandbox> w, std::exception_ptr error);
    void repay(const std::shared_ptr<bool>& ticket);
    void forget_owed();  // under the lock

    starter start_;
    std::chrono::milliseconds refill_delay_;
    mutable std::mutex mutex_;
    std::deque<warm_sandbox> ready_;
    std::size_t target_ = 0;
    std::size_t starting_ = 0;
    std::chrono::seconds idle_{60};
    std::chrono::steady_clock::time_point last_use_ = std::chrono::steady_clock::now();
    bool closed_ = false;
    bool failed_ = false;
    std::vector<std::function<void(std::exception_ptr)>> waiting_;  // fill()'s completions
    /// Taken sandboxes whose replacement has not started yet: each a ticket (set once repaid)
    /// and when it is due at the latest.
    std::deque<std::pair<std::shared_ptr<bool>, std::chrono::steady_clock::time_point>> owed_;
};

}  // namespace sandbox::detail

#endif
