// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_SRC_RUN_PROCESS_STATE_HPP
#define SANDBOX_SRC_RUN_PROCESS_STATE_HPP

#include "run/child.hpp"
#include "run/process_runner.hpp"
#include "run/tail_buffer.hpp"

#include <sandbox/exec_result.hpp>

#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <array>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace sandbox::detail {

/// A long-lived process: the same launch plans, spawn, child handle, exit watch and cleanup
/// as executions, but the caller drives stdin and stdout. The child is looked at under a
/// mutex, because kill(), running() and the owner's destructor may come from any thread.
/// How much of a long-lived process's stderr is kept (process::stderr_tail_bytes).
inline constexpr std::size_t stderr_tail_bytes = 64 * 1024;

struct process_state : std::enable_shared_from_this<process_state> {
    using clock = std::chrono::steady_clock;

    process_state(asio::any_io_executor ex, launch_plan p, const run_limits& l)
        : strand(asio::make_strand(ex)), in(strand), out(strand), err(strand), plan(std::move(p)), limits(l),
          exit(strand), drain(strand), err_tail(stderr_tail_bytes)
    {
    }
    ~process_state() { shut_down(true); }

    strand_type strand;
    asio::local::stream_protocol::socket in;
    asio::posix::stream_descriptor out;
    asio::posix::stream_descriptor err;
    launch_plan plan;  // its cleanup parts are taken under the mutex
    run_limits limits;
    clock::time_point started{};
    std::string line_buffer;  // read_line's unread bytes
    std::array<char, 4096> err_chunk{};

    mutable std::mutex mutex;  // guards everything below
    child_process child;
    exit_watch exit;  // after child: it borrows the child's pidfd
    asio::basic_waitable_timer<clock, asio::wait_traits<clock>, strand_type> drain;
    tail_buffer err_tail;
    exec_result result;
    bool stderr_done = false;
    bool drained = false;   // stopped waiting for stderr after the exit
    bool cleaned = false;   // work dir, cgroups and container are gone
    bool finished = false;  // waiters are woken and see the final result
    bool killed = false;
    bool cleanup_taken = false;
    // Callers of wait() park on a channel of their own, which the end sends to: the wait then
    // belongs to their io_context and to their cancellation slot, and a send that comes
    // before the wait has begun is kept (a cancelled timer would lose it).
    struct waiter {
        explicit waiter(const asio::any_io_executor& ex) : ended(ex, 1) {}
        asio::experimental::concurrent_channel<void(boost::system::error_code)> ended;
    };
    std::vector<std::shared_ptr<waiter>> waiters;

    void start_watching();
    void read_stderr();
    void on_exit();
    void maybe_finish();
    static void wake(std::shared_ptr<waiter> w);
    void kill_tree() noexcept;
    /// `sig` to the tree while it runs; SIGKILL where the launcher takes no other
    /// (sigkill_only), whose cleanup then stops the command gracefully.
    void signal_tree(int sig) noexcept;
    /// Under the mutex: the cleanup parts of the plan, once.
    launch_plan take_cleanup();
    /// The owner is gone: nothing may outlive it. The tree is killed and reaped here, from
    /// whatever thread (SIGKILL makes that quick); the removals, which may take long, run on
    /// a blocking-work thread. A child that SIGKILL does not end within 250 ms is reaped,
    /// and cleaned up after, whenever it ends: by the exit watch, or, once `last_reference`
    /// (the destructor: no handler holds the state), by a thread of the library.
    void shut_down(bool last_reference = false) noexcept;
    /// Registers a waiter unless the end is already known.
    bool add_waiter(const std::shared_ptr<waiter>& w);
};

/// Starts a long-lived process from a plan (no clocks: the owner decides when it ends; the
/// drain of `limits` bounds the wait for stderr after the exit): the state a `process` holds.
/// Throws launch_error when it cannot be started. Waits for the spawn, which runs on a
/// spawner thread.
std::shared_ptr<process_state> start_long_lived(asio::any_io_executor ex, launch_plan plan, const run_limits& limits);

}  // namespace sandbox::detail

#endif
