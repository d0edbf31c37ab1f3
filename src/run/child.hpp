// SPDX-License-Identifier: BSL-1.0
// One started child, the same for executions and long-lived processes: its pid and pidfd,
// signals to its tree, reaping with resource usage, and waiting for its exit on a strand.
#ifndef SANDBOX_SRC_RUN_CHILD_HPP
#define SANDBOX_SRC_RUN_CHILD_HPP

#include <sandbox/detail/config.hpp>
#include <sandbox/detail/unique_fd.hpp>
#include <sandbox/exec_result.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/posix/basic_stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <utility>

namespace sandbox::detail {

using strand_type = asio::strand<asio::any_io_executor>;

/// How the main process ended.
struct exit_info {
    int exit_code = -1;  ///< 128+N for signal N; -1 when the status is lost
    int term_signal = 0;
    resource_usage usage;  ///< available only when the status is known
};

/// Maps a wait status to (exit_code, term_signal): 128+N and N for a signal death.
std::pair<int, int> decode_wait_status(int status) noexcept;

/// A child we started: its own session and process group (pgid == pid). Until it is reaped
/// its pid, which is also the group id, names nobody else. Not thread-safe: one strand, or
/// the owner's lock. Destroying one that was never reaped kills its tree and reaps it.
class child_process {
public:
    child_process() noexcept = default;
    child_process(pid_t pid, unique_fd pidfd) noexcept : pid_(pid), pidfd_(std::move(pidfd)) {}
    child_process(child_process&& o) noexcept
        : pid_(std::exchange(o.pid_, -1)), pidfd_(std::move(o.pidfd_)), reaped_(o.reaped_), lost_(o.lost_),
          kill_request_(o.kill_request_)
    {
    }
    child_process& operator=(child_process&& o) noexcept;
    ~child_process() { (void)kill_and_reap(); }

    explicit operator bool() const noexcept { return pid_ > 0; }
    pid_t pid() const noexcept { return pid_; }
    int pidfd() const noexcept { return pidfd_.get(); }
    /// Opens a pidfd now if there is none; false when the kernel refuses (old kernel, seccomp).
    bool open_pidfd() noexcept;
    bool reaped() const noexcept { return reaped_; }
    /// Closes the pidfd early (each one costs a descriptor that every later spawn copies).
    /// Only once no exit_watch has it any more.
    void close_pidfd() noexcept { pidfd_.reset(); }

    /// `sig` to the whole process group, and to the main process through its pidfd in case it
    /// left the group. Also when the application ignores SIGCHLD and the kernel reaped the main
    /// process for it: a group id cannot be reused while the group has members.
    void signal_tree(int sig) noexcept;

    /// For a launcher that stays as the subreaper of what it starts: while it lives, a SIGKILL
    /// for the tree becomes `sig` to it alone, and it kills everything it started, then dies
    /// of SIGKILL itself. The group's SIGKILL would end it first, and what left the group (a
    /// daemon that called setsid) would go back to init, out of reach. 0: no such launcher.
    void kill_through(int sig) noexcept { kill_request_ = sig; }

    /// The main process has ended (also when it was reaped behind our back).
    bool exited() noexcept;

    /// Reaps the main process if it has ended; nullopt while it runs.
    std::optional<exit_info> try_reap() noexcept;

    /// SIGKILL to the tree, then reaps (blocking, briefly: SIGKILL cannot be caught; a
    /// kill_through() launcher gets 2 s to do its part). For the paths where nothing is left
    /// to wait on, such as an io_context being destroyed.
    exit_info kill_and_reap() noexcept;

    /// kill_and_reap(), but waits at most `limit` for the main process to die after the
    /// SIGKILL: nullopt, the child still owned, when it has not (SIGKILL does not reach a
    /// set-id program that became another user). For owners that must not block on it.
    std::optional<exit_info> kill_and_reap_within(std::chrono::milliseconds limit) noexcept;

    /// Waits for the end and reaps (blocking). For a short command run during teardown.
    exit_info wait_and_reap() noexcept;

    /// Gives up ownership without reaping (see abandon()).
    pid_t release() noexcept { return std::exchange(pid_, -1); }

private:
    exit_info reaped_with(pid_t r, int status, const ::rusage& ru) noexcept;

    pid_t pid_ = -1;
    unique_fd pidfd_;
    bool reaped_ = false;
    bool lost_ = false;  // reaped by the kernel for an application that ignores SIGCHLD
    int kill_request_ = 0;
};

/// A child that SIGKILL did not end (on the host driver, a setuid program running as another
/// user). Completing must not wait for it, and it must not become a zombie: a thread of the
/// library reaps it whenever it ends, with or without a pidfd and whatever becomes of the
/// io_context, then runs `cleanup` (its work dir goes only once it cannot use it any more).
void abandon(child_process child, std::function<void()> cleanup);

/// Waits on a strand for the main process to end: its pidfd in the reactor, or polling with
/// a backoff where there is no pidfd. Declare it after the child_process it watches: it
/// borrows the child's pidfd.
class exit_watch {
public:
    explicit exit_watch(const strand_type& s) : pidfd_(s), poll_(s) {}
    ~exit_watch() { stop(); }

    /// Calls `on_exit` on the strand once the child has ended, unless stop() comes first.
    /// The pending wait owns `on_exit` (so whatever it holds lives until then), and drops it
    /// without a call when the io_context goes first. `guard`, when given, is held while the
    /// child is looked at: for owners that also touch it from other threads.
    void start(child_process& child, std::mutex* guard, std::function<void()> on_exit);
    bool active() const noexcept { return active_; }
    void stop() noexcept;

private:
    bool exited();
    void wait_pidfd(std::function<void()> on_exit);
    void poll(std::function<void()> on_exit);

    using descriptor = asio::posix::basic_stream_descriptor<strand_type>;
    using timer = asio::basic_waitable_timer<std::chrono::steady_clock,
                                             asio::wait_traits<std::chrono::steady_clock>, strand_type>;
    descriptor pidfd_;  // borrows the child's pidfd
    timer poll_;
    std::chrono::milliseconds interval_{1};
    child_process* child_ = nullptr;
    std::mutex* guard_ = nullptr;
    bool active_ = false;
};

}  // namespace sandbox::detail

#endif
