// SPDX-License-Identifier: BSL-1.0
#include "result_writer.hpp"

#include "progress.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <string_view>
#include <system_error>

namespace sandbox::cli {

result_writer::result_writer(int fd, std::size_t limit, std::function<void()> notify, shared_terminal* terminal)
    : fd_(fd), limit_(limit), notify_(std::move(notify)), terminal_(terminal)
{
    struct stat st {};
    whole_writes_ = ::fstat(fd_, &st) == 0 && (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode));
    regular_ = whole_writes_ && S_ISREG(st.st_mode);
    wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wake_fd_ < 0) throw std::system_error(errno, std::system_category(), "cannot create an eventfd");

    // The thread takes no asynchronous signals: they are for the io thread's signal_set, and
    // would only interrupt the writes here.
    sigset_t blocked, old;
    sigfillset(&blocked);
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP}) sigdelset(&blocked, sig);
    ::pthread_sigmask(SIG_SETMASK, &blocked, &old);
    try {
        thread_ = std::thread([this] { run(); });
    } catch (...) {
        ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
        ::close(wake_fd_);
        throw;
    }
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

result_writer::~result_writer()
{
    abort();
    thread_.join();
    ::close(wake_fd_);
}

void result_writer::push(std::string line)
{
    {
        std::lock_guard lock(mutex_);
        if (closed_ || error_ || aborted_) {
            ++dropped_;
            return;
        }
        pending_ += line.size();
        queue_.push_back(std::move(line));
    }
    wake_.notify_one();
}

bool result_writer::full() const
{
    std::lock_guard lock(mutex_);
    return pending_ >= limit_;
}

void result_writer::close()
{
    {
        std::lock_guard lock(mutex_);
        closed_ = true;
    }
    wake_.notify_one();
}

void result_writer::abort()
{
    {
        std::lock_guard lock(mutex_);
        if (aborted_) return;
        aborted_ = true;
        for (const auto& line : queue_) pending_ -= line.size();
        dropped_ += queue_.size();
        queue_.clear();
    }
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto n = ::write(wake_fd_, &one, sizeof one);  // wakes a waiting poll()
    wake_.notify_one();
}

bool result_writer::finished() const
{
    std::lock_guard lock(mutex_);
    return finished_;
}

int result_writer::error() const
{
    std::lock_guard lock(mutex_);
    return error_;
}

std::uint64_t result_writer::dropped() const
{
    std::lock_guard lock(mutex_);
    return dropped_;
}

void result_writer::run()
{
    std::unique_lock lock(mutex_);
    for (;;) {
        wake_.wait(lock, [this] { return !queue_.empty() || closed_ || aborted_; });
        if (aborted_ || queue_.empty()) break;
        std::string line = std::move(queue_.front());
        queue_.pop_front();
        lock.unlock();
        int err = 0;
        if (terminal_) {
            std::lock_guard screen(terminal_->mutex);
            terminal_->clear_line();
            err = write_line(line);
        } else {
            err = write_line(line);
        }
        lock.lock();
        const bool was_full = pending_ >= limit_;
        pending_ -= line.size();
        if (err) {  // this line and everything after it are lost
            if (err != ECANCELED) error_ = err;
            for (const auto& l : queue_) pending_ -= l.size();
            dropped_ += 1 + queue_.size();
            queue_.clear();
            break;
        }
        if (was_full && pending_ < limit_) {
            lock.unlock();
            notify_();
            lock.lock();
        }
    }
    finished_ = true;
    lock.unlock();
    notify_();
}

// A result line is written whole or not at all: in a regular file, a write cut short (a full
// disk) is taken back, so the file stays one valid JSON object a line for --resume.
int result_writer::write_line(const std::string& line)
{
    off_t start = -1;
    if (regular_) start = (::fcntl(fd_, F_GETFL) & O_APPEND) ? ::lseek(fd_, 0, SEEK_END) : ::lseek(fd_, 0, SEEK_CUR);
    const int err = write_all(line);
    if (err && start >= 0 && ::ftruncate(fd_, start) == 0) (void)::lseek(fd_, start, SEEK_SET);
    return err;
}

int result_writer::write_all(std::string_view rest)
{
    while (!rest.empty()) {
        // Wait for room first, so that the write below does not wait: a pipe with room takes
        // PIPE_BUF bytes at once. abort() ends the wait.
        pollfd fds[2] = {{fd_, POLLOUT, 0}, {wake_fd_, POLLIN, 0}};
        if (::poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        if (fds[0].revents & POLLNVAL) return EBADF;
        if (fds[0].revents == 0) return ECANCELED;  // only the wake-up: aborted
        const std::size_t piece = whole_writes_ ? rest.size() : std::min<std::size_t>(rest.size(), PIPE_BUF);
        const ssize_t n = ::write(fd_, rest.data(), piece);
        if (n < 0) {
            // EAGAIN: the descriptor was made non-blocking by someone sharing it (a terminal
            // that is also our stdin, say); poll() again.
            if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
            return errno;
        }
        rest.remove_prefix(static_cast<std::size_t>(n));
    }
    return 0;
}

}  // namespace sandbox::cli
