// SPDX-License-Identifier: BSL-1.0
#include "run/spawn.hpp"

#include "run/helper_spawn.hpp"
#include "run/offload.hpp"

#include <sandbox/errors.hpp>


#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstring>

namespace sandbox::detail {

namespace {

struct file_actions {
    posix_spawn_file_actions_t fa;
    file_actions() { posix_spawn_file_actions_init(&fa); }
    ~file_actions() { posix_spawn_file_actions_destroy(&fa); }
    file_actions(const file_actions&) = delete;
    file_actions& operator=(const file_actions&) = delete;
};

struct spawn_attr {
    posix_spawnattr_t attr;
    spawn_attr() { posix_spawnattr_init(&attr); }
    ~spawn_attr() { posix_spawnattr_destroy(&attr); }
    spawn_attr(const spawn_attr&) = delete;
    spawn_attr& operator=(const spawn_attr&) = delete;
};

// Keeps our pipe ends off 0-2 in case the host process closed its standard descriptors:
// otherwise dup2 onto the same number would keep close-on-exec set.
int above_stdio(int fd)
{
    if (fd > 2) return fd;
    int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
    ::close(fd);
    return moved;
}

std::error_code make_pipe(unique_fd& read_end, unique_fd& write_end)
{
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) return {errno, std::system_category()};
    read_end.reset(above_stdio(p[0]));
    write_end.reset(above_stdio(p[1]));
    if (!read_end || !write_end) return {errno, std::system_category()};
    return {};
}

std::error_code make_stdin_socket(unique_fd& child_end, unique_fd& parent_end)
{
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return {errno, std::system_category()};
    child_end.reset(above_stdio(sv[0]));
    parent_end.reset(above_stdio(sv[1]));
    if (!child_end || !parent_end) return {errno, std::system_category()};
    // One direction only: the command reads, we write.
    (void)::shutdown(child_end.get(), SHUT_WR);
    (void)::shutdown(parent_end.get(), SHUT_RD);
    return {};
}

}  // namespace

namespace {

// /dev/null, opened once: dup2 in the child is cheaper than an open by path while the
// parent waits for the exec. Checked on every use: an application that closes descriptors
// it does not know (daemonising) may have closed ours, and the number may name another
// file by now.
int dev_null()
{
    static std::atomic<int> cached{-1};
    int fd = cached.load(std::memory_order_acquire);
    struct stat st {};
    if (fd >= 0 && ::fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3)) return fd;
    const int fresh = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fresh < 0) return -1;
    const int moved = above_stdio(fresh);
    // Another thread may have raced us here: keep one, close ours if we lost.
    if (!cached.compare_exchange_strong(fd, moved)) {
        ::close(moved);
        return fd;
    }
    return moved;
}

bool has_nul(const std::string& s) { return s.find('\0') != std::string::npos; }

std::error_code validate(const spawn_request& req, std::string& what)
{
    const auto invalid = std::make_error_code(std::errc::invalid_argument);
    if (req.argv.empty() || req.argv.front().empty()) {
        what = "argv is empty";
        return invalid;
    }
    for (std::size_t i = 0; i < req.argv.size(); ++i)
        if (has_nul(req.argv[i])) {
            what = "argument " + std::to_string(i) + " contains a NUL byte";
            return invalid;
        }
    for (const auto& e : req.env)
        if (has_nul(e) || e.find('=') == std::string::npos) {
            what = "environment entry is not NAME=value or contains NUL";
            return invalid;
        }
    if (has_nul(req.cwd.native())) {
        what = "the working directory contains a NUL byte";
        return invalid;
    }
    if (req.stdin_fd >= 0 && req.stdin_socket) {
        what = "both stdin_data and stdin_fd are set (give one)";
        return invalid;
    }
    if (req.stdin_fd >= 0 && ::fcntl(req.stdin_fd, F_GETFD) < 0) {
        what = "stdin_fd " + std::to_string(req.stdin_fd) + " is not an open descriptor";
        return {errno, std::system_category()};
    }
    for (const int fd : req.pass_fds)
        if (::fcntl(fd, F_GETFD) < 0) {
            what = "descriptor " + std::to_string(fd) + " to pass is not open";
            return {errno, std::system_category()};
        }
    return {};
}

std::vector<char*> c_strings(const std::vector<std::string>& v)
{
    std::vector<char*> p;
    p.reserve(v.size() + 1);
    for (const auto& s : v) p.push_back(const_cast<char*>(s.c_str()));
    p.push_back(nullptr);
    return p;
}

}  // namespace

std::error_code prepare_spawn(const spawn_request& req, child_pipes& p, std::string& what)
{
    if (auto ec = validate(req, what)) return ec;
    std::error_code ec;
    if ((ec = make_pipe(p.stdout_r, p.stdout_child)) || (ec = make_pipe(p.stderr_r, p.stderr_child)) ||
        (req.stdin_socket && (ec = make_stdin_socket(p.stdin_child, p.stdin_w))))
        what = "cannot create pipes";
    else if (req.stdin_fd >= 0) {
        p.stdin_child.reset(::fcntl(req.stdin_fd, F_DUPFD_CLOEXEC, 3));
        if (!p.stdin_child) {
            ec = {errno, std::system_category()};
            what = "cannot copy stdin_fd";
        }
    }
    const int first_free = 3 + static_cast<int>(req.pass_fds.size());
    for (std::size_t i = 0; !ec && i < req.pass_fds.size(); ++i) {
        p.passed.emplace_back(::fcntl(req.pass_fds[i], F_DUPFD_CLOEXEC, first_free));
        if (!p.passed.back()) {
            ec = {errno, std::system_category()};
            what = "cannot copy a descriptor to pass";
        }
    }
    // Our ends are made non-blocking by Asio when it first waits on them.
    return ec;
}

spawn_outcome spawn_child(const spawn_request& req, child_pipes& pipes)
{
    const bool confined = !req.limits.empty() || !req.search_path.empty();
    if (confined || req.through_helper) {
        bool available = false;
        auto out = spawn_through_helper(req, pipes, available);
        if (available) return out;
        if (confined) {
            // Nothing but the helper can apply it: never launch without it.
            pipes.stdin_child.reset();
            pipes.stdout_child.reset();
            pipes.stderr_child.reset();
            pipes.passed.clear();
            if (on_library_thread()) {
                out.error = std::make_error_code(std::errc::no_such_file_or_directory);
                out.what = "the library's spawn helper, sandbox-spawn, was not found (installed with the library at " +
                           std::string(SANDBOX_SPAWN_HELPER_INSTALLED) + ", or named by SANDBOX_SPAWN_HELPER)";
            } else {
                out.error = std::make_error_code(std::errc::resource_unavailable_try_again);
                out.what = "no thread of the library could be made to start the spawn helper from";
            }
            return out;
        }
    }
    return spawn_child_here(req, pipes);
}

spawn_outcome spawn_child_here(const spawn_request& req, child_pipes& pipes)
{
    spawn_outcome out;
    file_actions fa;
    int rc = 0;
    if (pipes.stdin_child) rc = posix_spawn_file_actions_adddup2(&fa.fa, pipes.stdin_child.get(), 0);
    else if (const int null_fd = dev_null(); null_fd >= 0) rc = posix_spawn_file_actions_adddup2(&fa.fa, null_fd, 0);
    else rc = posix_spawn_file_actions_addopen(&fa.fa, 0, "/dev/null", O_RDONLY, 0);
    if (!rc) rc = posix_spawn_file_actions_adddup2(&fa.fa, pipes.stdout_child.get(), 1);
    if (!rc) rc = posix_spawn_file_actions_adddup2(&fa.fa, pipes.stderr_child.get(), 2);
    if (!rc && !req.cwd.empty()) rc = posix_spawn_file_actions_addchdir_np(&fa.fa, req.cwd.c_str());
    for (std::size_t i = 0; !rc && i < pipes.passed.size(); ++i)
        rc = posix_spawn_file_actions_adddup2(&fa.fa, pipes.passed[i].get(), 3 + static_cast<int>(i));
    // One close_range in the child instead of trusting every descriptor to be close-on-exec.
    if (!rc) rc = posix_spawn_file_actions_addclosefrom_np(&fa.fa, 3 + static_cast<int>(pipes.passed.size()));

    spawn_attr attr;
    sigset_t empty, defaults;
    sigemptyset(&empty);
    // Every signal back to its default: an ignored disposition survives exec. Naming them all
    // is also the cheapest for glibc's child, which otherwise asks the kernel about each
    // signal not named before deciding (about 100 sigaction calls instead of 64).
    sigfillset(&defaults);
    // Own session: one kill(-pid) reaches the whole tree, and no controlling terminal.
    if (!rc) rc = posix_spawnattr_setflags(&attr.attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    if (!rc) rc = posix_spawnattr_setsigmask(&attr.attr, &empty);
    if (!rc) rc = posix_spawnattr_setsigdefault(&attr.attr, &defaults);
    if (rc) {
        // glibc refuses a descriptor numbered at or above RLIMIT_NOFILE with EBADF: ours are
        // open, so the limit was lowered below them since they were made.
        out.error = {rc == EBADF ? EMFILE : rc, std::system_category()};
        out.what = rc == EBADF ? "cannot prepare posix_spawn: a descriptor is above the descriptor limit"
                               : "cannot prepare posix_spawn";
        return out;
    }

    auto args = c_strings(req.argv);
    auto envp = c_strings(req.env);
    pid_t pid = -1;
    const bool search = req.argv.front().find('/') == std::string::npos;
    out.started = std::chrono::steady_clock::now();
    rc = search ? ::posix_spawnp(&pid, args[0], &fa.fa, &attr.attr, args.data(), envp.data())
                : ::posix_spawn(&pid, args[0], &fa.fa, &attr.attr, args.data(), envp.data());
    // The child has its copies (or there is no child): ours must go, or EOF never comes.
    pipes.stdin_child.reset();
    pipes.stdout_child.reset();
    pipes.stderr_child.reset();
    pipes.passed.clear();
    if (rc != 0) {
        out.error = {rc, std::system_category()};
        return out;
    }
    // Nobody else can have reaped the child yet, so the pid still names it. pidfds are
    // always close-on-exec.
    unique_fd pidfd;
    if (req.open_pidfd) pidfd.reset(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    out.child = child_process(pid, std::move(pidfd));
    return out;
}

std::string describe_spawn_error(const spawn_request& req, std::error_code ec, const std::string& what)
{
    std::string s;
    if (!req.argv.empty() && !req.argv.front().empty()) s = req.argv.front() + ": ";
    if (!what.empty()) {
        s += what;
        if (ec != std::errc::invalid_argument) s += ": " + ec.message();
        return s;
    }
    s += ec.message();
    std::error_code cwd_ec;
    if (!req.cwd.empty() && !std::filesystem::is_directory(req.cwd, cwd_ec))
        s += " (working directory " + req.cwd.string() + " does not exist or is not a directory)";
    return s;
}

boost::system::error_code classify_spawn_error(const spawn_request& req, std::error_code ec, const std::string& what)
{
    const boost::system::error_code system(ec.value(), boost::system::system_category());
    if (!what.empty()) return system;  // a step before the exec: pipes, descriptors
    if (!req.cwd.empty()) {
        struct stat st {};
        if (::stat(req.cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || ::access(req.cwd.c_str(), X_OK) != 0)
            return errc::bad_working_directory;
    }
    switch (ec.value()) {
    case ENOENT: return errc::command_not_found;
    case EACCES:
    case EPERM:
    case ENOEXEC:
    case EISDIR:
    case ENOTDIR:
    case ELOOP:
    case ENAMETOOLONG:
    case ETXTBSY: return errc::command_not_executable;
    default: return system;
    }
}

}  // namespace sandbox::detail
