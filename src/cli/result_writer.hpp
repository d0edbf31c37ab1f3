// SPDX-License-Identifier: BSL-1.0
// The batch results, written by a thread of their own: a slow reader (stdout piped into
// something slow, a terminal, -o on a slow device) holds up that thread only, never the io
// thread that runs the jobs and enforces their timeouts.
#ifndef SANDBOX_CLI_RESULT_WRITER_HPP
#define SANDBOX_CLI_RESULT_WRITER_HPP

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace sandbox::cli {

struct shared_terminal;

class result_writer {
public:
    /// Writes lines to `fd` (not owned) in the order they are pushed, each one as soon as the
    /// reader takes it. `notify` is called on the writer's thread, without its lock held, when
    /// the pending bytes fall below `limit` after having reached it, when writing fails, and
    /// when the writer has finished (after close(), a failure or abort()); it must only hand
    /// the news to the thread that owns the writer (e.g. post to its io_context), which then
    /// looks at full(), error() and finished().
    /// `terminal` (not owned; outlives the writer): the results share a terminal with the
    /// progress line, which is cleared before each result.
    result_writer(int fd, std::size_t limit, std::function<void()> notify, shared_terminal* terminal = nullptr);
    /// Aborts and waits for the thread.
    ~result_writer();
    result_writer(const result_writer&) = delete;
    result_writer& operator=(const result_writer&) = delete;

    /// Queues a line; never waits. After a failure or abort() the line is dropped (and counted).
    void push(std::string line);
    /// The pending bytes (queued and being written) have reached the limit: start nothing
    /// more that would add to them until notified.
    bool full() const;
    /// No more lines: the thread writes what is queued and then finishes.
    void close();
    /// Drops what is queued; the line being written is finished only as far as the reader
    /// takes it without waiting (a write to a pipe or terminal is at most PIPE_BUF bytes once
    /// the descriptor is writable, so none waits long); the thread then finishes.
    void abort();

    bool finished() const;
    /// The errno that ended writing (EPIPE: the reader went away), 0 if none.
    int error() const;
    /// Lines pushed but never written, after a failure or abort().
    std::uint64_t dropped() const;

private:
    void run();
    int write_line(const std::string& line);
    int write_all(std::string_view rest);  // 0 or an errno; ECANCELED after abort()

    int fd_;
    std::size_t limit_;
    std::function<void()> notify_;
    shared_terminal* terminal_ = nullptr;
    bool whole_writes_ = false;  // a regular file or block device: no need to write in small pieces
    bool regular_ = false;       // a regular file: a line cut short can be taken back
    int wake_fd_ = -1;           // an eventfd that abort() makes readable

    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<std::string> queue_;
    std::size_t pending_ = 0;  // bytes queued and being written
    bool closed_ = false;
    bool finished_ = false;
    int error_ = 0;
    std::uint64_t dropped_ = 0;
    std::atomic<bool> aborted_{false};
    std::thread thread_;
};

}  // namespace sandbox::cli

#endif
