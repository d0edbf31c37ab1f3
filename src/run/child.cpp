// SPDX-License-Identifier: BSL-1.0
#include "run/child.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <list>
#include <mutex>
#include <thread>

namespace sandbox::detail {

std::pair<int, int> decode_wait_status(int status) noexcept
{
    if (WIFEXITED(status)) return {WEXITSTATUS(status), 0};
    if (WIFSIGNALED(status)) return {128 + WTERMSIG(status), WTERMSIG(status)};
    return {-1, 0};
}

namespace {

std::chrono::nanoseconds to_ns(const timeval& tv)
{
    return std::chrono::seconds(tv.tv_sec) + std::chrono::microseconds(tv.tv_usec);
}

}  // namespace

child_process& child_process::operator=(child_process&& o) noexcept
{
    if (this != &o) {
        (void)kill_and_reap();
        pid_ = std::exchange(o.pid_, -1);
        pidfd_ = std::move(o.pidfd_);
        reaped_ = o.reaped_;
        lost_ = o.lost_;
        kill_request_ = o.kill_request_;
    }
    return *this;
}

bool child_process::open_pidfd() noexcept
{
    if (pidfd_) return true;
    if (pid_ <= 0 || reaped_ || lost_) return false;
    // Still our unreaped child (nobody else reaps it), so the pid names it.
    pidfd_.reset(static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0)));
    return static_cast<bool>(pidfd_);
}

void child_process::signal_tree(int sig) noexcept
{
    if (pid_ <= 0 || reaped_) return;
    if (sig == SIGKILL && kill_request_ != 0 && !exited()) {
        if (!pidfd_ || ::syscall(SYS_pidfd_send_signal, pidfd_.get(), kill_request_, nullptr, 0) != 0)
            ::kill(pid_, kill_request_);
        return;
    }
    ::kill(-pid_, sig);
    if (pidfd_ && !lost_) ::syscall(SYS_pidfd_send_signal, pidfd_.get(), sig, nullptr, 0);
}

bool child_process::exited() noexcept
{
    if (pid_ <= 0 || reaped_ || lost_) return true;
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
        // Reaped behind our back: the application ignores SIGCHLD, so the kernel reaps for it.
        if (errno == ECHILD) lost_ = true;
        return errno == ECHILD;
    }
    return info.si_pid == pid_;
}

exit_info child_process::reaped_with(pid_t r, int status, const ::rusage& ru) noexcept
{
    reaped_ = true;
    exit_info e;
    if (r == pid_) {
        std::tie(e.exit_code, e.term_signal) = decode_wait_status(status);
        e.usage = {to_ns(ru.ru_utime), to_ns(ru.ru_stime), static_cast<std::uint64_t>(ru.ru_maxrss) * 1024};
    }
    // The pidfd stays open until we go: an exit_watch may still have it in the reactor.
    return e;
}

std::optional<exit_info> child_process::try_reap() noexcept
{
    if (pid_ <= 0 || reaped_) return std::nullopt;
    int status = 0;
    ::rusage ru{};
    pid_t r = ::wait4(pid_, &status, WNOHANG, &ru);
    while (r < 0 && errno == EINTR) r = ::wait4(pid_, &status, WNOHANG, &ru);
    if (r == 0) return std::nullopt;
    return reaped_with(r, status, ru);  // r < 0: ECHILD, the status is lost
}

exit_info child_process::kill_and_reap() noexcept
{
    if (pid_ <= 0 || reaped_) return {};
    signal_tree(SIGKILL);
    if (kill_request_ != 0) {
        // The launcher kills what it started, then itself; if it does not (stopped by its
        // user), the group's SIGKILL after all.
        for (int i = 0; i < 2000 && !exited(); ++i) ::usleep(1000);
        kill_request_ = 0;
        signal_tree(SIGKILL);
    }
    return wait_and_reap();
}

std::optional<exit_info> child_process::kill_and_reap_within(std::chrono::milliseconds limit) noexcept
{
    if (pid_ <= 0 || reaped_) return exit_info{};
    if (kill_request_ != 0) return kill_and_reap();  // bounded: the launcher gets 2 s
    signal_tree(SIGKILL);
    // Polled rather than waited on a pidfd: a dying process takes microseconds to a few
    // milliseconds, and there may be no pidfd.
    const auto end = std::chrono::steady_clock::now() + limit;
    for (auto pause = std::chrono::microseconds(50); !exited(); pause = std::min(pause * 2, std::chrono::microseconds(5000))) {
        if (std::chrono::steady_clock::now() >= end) return std::nullopt;
        std::this_thread::sleep_for(pause);
    }
    return wait_and_reap();
}

exit_info child_process::wait_and_reap() noexcept
{
    if (pid_ <= 0 || reaped_) return {};
    int status = 0;
    ::rusage ru{};
    pid_t r = ::wait4(pid_, &status, 0, &ru);
    while (r < 0 && errno == EINTR) r = ::wait4(pid_, &status, 0, &ru);
    return reaped_with(r, status, ru);
}

// ---- abandoned children ---------------------------------------------------------------------

namespace {

// One thread for the whole process, running only while some child is abandoned: such
// children are rare (they outlived SIGKILL), and they must be reaped whatever happens to
// the io_context that started them.
class reaper {
public:
    static reaper& instance()
    {
        static reaper* r = new reaper;  // never destroyed: it may run during static destruction
        return *r;
    }

    void add(child_process child, std::function<void()> cleanup)
    {
        std::lock_guard lock(mutex_);
        entries_.push_back({std::move(child), std::move(cleanup)});
        if (!running_) {
            running_ = true;
            std::thread([this] { run(); }).detach();
        }
    }

private:
    struct entry {
        child_process child;
        std::function<void()> cleanup;
    };

    void run()
    {
        std::unique_lock lock(mutex_);
        while (!entries_.empty()) {
            for (auto it = entries_.begin(); it != entries_.end();) {
                if (!it->child.try_reap()) {
                    ++it;
                    continue;
                }
                auto cleanup = std::move(it->cleanup);
                it = entries_.erase(it);
                lock.unlock();
                if (cleanup) {
                    try {
                        cleanup();
                    } catch (...) {
                    }
                }
                lock.lock();
            }
            if (entries_.empty()) break;
            lock.unlock();
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            lock.lock();
        }
        running_ = false;
    }

    std::mutex mutex_;
    std::list<entry> entries_;
    bool running_ = false;
};

}  // namespace

void abandon(child_process child, std::function<void()> cleanup)
{
    if (!child || child.reaped()) {
        if (cleanup) cleanup();
        return;
    }
    reaper::instance().add(std::move(child), std::move(cleanup));
}

// ---- exit_watch -----------------------------------------------------------------------------

void exit_watch::start(child_process& child, std::mutex* guard, std::function<void()> on_exit)
{
    child_ = &child;
    guard_ = guard;
    active_ = true;
    boost::system::error_code ec;
    if (child.pidfd() >= 0 && !pidfd_.is_open() && !pidfd_.assign(child.pidfd(), ec)) {
        wait_pidfd(std::move(on_exit));
        return;
    }
    interval_ = std::chrono::milliseconds(1);
    poll(std::move(on_exit));
}

bool exit_watch::exited()
{
    if (!guard_) return child_->exited();
    std::lock_guard lock(*guard_);
    return child_->exited();
}

void exit_watch::stop() noexcept
{
    active_ = false;
    poll_.cancel();
    if (pidfd_.is_open()) pidfd_.release();  // the child owns the descriptor
}

void exit_watch::wait_pidfd(std::function<void()> on_exit)
{
    pidfd_.async_wait(descriptor::wait_read, [this, f = std::move(on_exit)](boost::system::error_code ec) mutable {
        // `f` keeps the watch's owner, so `this`, alive until here.
        if (ec || !active_) return;
        // A wait may complete spuriously: with several threads, Asio's epoll reactor can hand
        // a stale event of a just-closed descriptor to the state it reuses for this one.
        // Acting on it would SIGKILL a live command, so ask the kernel.
        if (!exited()) {
            wait_pidfd(std::move(f));
            return;
        }
        active_ = false;
        f();
    });
}

void exit_watch::poll(std::function<void()> on_exit)
{
    poll_.expires_after(interval_);
    interval_ = std::min(interval_ * 2, std::chrono::milliseconds(50));
    poll_.async_wait([this, f = std::move(on_exit)](boost::system::error_code ec) mutable {
        if (ec || !active_) return;
        if (!exited()) {
            poll(std::move(f));
            return;
        }
        active_ = false;
        f();
    });
}

}  // namespace sandbox::detail
