// SPDX-License-Identifier: BSL-1.0
#include "run/helper_spawn.hpp"

#include "run/offload.hpp"
#include "run/spawn_wire.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

extern char** environ;  // NOLINT: POSIX

namespace sandbox::detail {

namespace {

// The helper of this process. The control socket is shared by the threads that send on it
// (a SOCK_SEQPACKET message is sent whole, so they need no lock); a restart swaps it, and
// the old one closes when its last sender lets go.
struct helper_state {
    std::mutex mutex;
    pid_t owner = 0;  // the process that started it: a child of fork() starts its own
    pid_t pid = -1;
    std::shared_ptr<unique_fd> control;
};

helper_state& state()
{
    static auto* s = new helper_state;  // never destroyed: spawns may run during static destruction
    return *s;
}

// Starts the helper; the caller holds the state's lock.
std::shared_ptr<unique_fd> start_helper(helper_state& s, const std::string& path, std::error_code& ec)
{
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        ec = {errno, std::system_category()};
        return nullptr;
    }
    unique_fd ours(sv[0]), theirs(sv[1]);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, theirs.get(), 3);
    posix_spawn_file_actions_addclosefrom_np(&fa, 4);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    const std::string parent = std::to_string(::getpid());
    // Once this process has ended, the helper runs the sweep of what its runs left
    // (sandbox-sweep), in this process's environment: TMPDIR, PATH, DOCKER_HOST and the like
    // say where. The helper's own children get the environment of their request.
    static const auto& sweeper = *new const std::string(sweeper_path());
    std::vector<char*> argv{const_cast<char*>(path.c_str()), const_cast<char*>("--parent"),
                            const_cast<char*>(parent.c_str())};
    if (!sweeper.empty()) argv.insert(argv.end(), {const_cast<char*>("--sweeper"), const_cast<char*>(sweeper.c_str())});
    argv.push_back(nullptr);
    pid_t pid = -1;
    const int rc = ::posix_spawn(&pid, path.c_str(), &fa, &attr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
        ec = {rc, std::system_category()};
        return nullptr;
    }
    s.pid = pid;
    s.owner = ::getpid();
    s.control = std::make_shared<unique_fd>(std::move(ours));
    return s.control;
}

// The helper's control socket, started if need be; `stale` is one that failed a send.
std::shared_ptr<unique_fd> connect(const std::string& path, const std::shared_ptr<unique_fd>& stale, std::error_code& ec)
{
    auto& s = state();
    std::lock_guard lock(s.mutex);
    if (s.owner != ::getpid()) {
        s.control.reset();  // a copy from before a fork: the parent's helper, not ours
        s.pid = -1;
    }
    if (s.control && s.control != stale) return s.control;
    if (s.control) {  // it died: reap it, start another
        s.control.reset();
        if (s.pid > 0) (void)::waitpid(s.pid, nullptr, WNOHANG);
        s.pid = -1;
    }
    return start_helper(s, path, ec);
}

std::string step_text(const wire::reply& r)
{
    const std::string detail = r.detail;
    switch (r.failed) {
    case wire::step::fork: return "cannot fork";
    case wire::step::request: return "the spawn helper could not read the request";
    case wire::step::descriptors: return "cannot pass the descriptors";
    case wire::step::session: return "cannot start a session";
    case wire::step::cgroup: return "cannot join the cgroup " + detail;
    case wire::step::limit: return "cannot set " + detail;
    case wire::step::mounts: return "cannot set up its mount namespace (" + detail + ")";
    case wire::step::user: return "cannot become uid:gid " + detail;
    case wire::step::parent_gone: return "the process that started it is gone";
    case wire::step::no_new_privs: return "cannot set no_new_privs";
    case wire::step::landlock: return "cannot restrict itself with Landlock" + (detail.empty() ? "" : ": " + detail);
    case wire::step::seccomp: return "cannot load the seccomp filter" + (detail.empty() ? "" : " (" + detail + ")");
    case wire::step::none:
    case wire::step::cwd:
    case wire::step::exec: break;
    }
    return {};
}

bool send_request(int control, const std::string& body, const std::vector<int>& fds, std::error_code& ec)
{
    wire::header h;
    h.body_size = static_cast<std::uint32_t>(body.size());
    std::vector<int> all = fds;
    unique_fd file;
    iovec iov[2]{{&h, sizeof h}, {const_cast<char*>(body.data()), body.size()}};
    if (body.size() > wire::inline_body_max) {
        // Too large for one message (a long argv or environment): in a memory file.
        file.reset(::memfd_create("sandbox-spawn-request", MFD_CLOEXEC));
        if (!file || ::write(file.get(), body.data(), body.size()) != static_cast<ssize_t>(body.size())) {
            ec = {errno, std::system_category()};
            return false;
        }
        h.body_in_file = 1;
        all.insert(all.begin() + 1, file.get());
        iov[1].iov_len = 0;
    }
    std::vector<char> control_buf(CMSG_SPACE(sizeof(int) * all.size()));
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = 2;
    msg.msg_control = control_buf.data();
    msg.msg_controllen = control_buf.size();
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * all.size());
    std::memcpy(CMSG_DATA(c), all.data(), sizeof(int) * all.size());
    ssize_t n;
    do n = ::sendmsg(control, &msg, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n < 0) ec = {errno, std::system_category()};
    return n >= 0;
}

// One reply, or end of file (false, no error): the child executed.
bool read_reply(int fd, wire::reply& r, std::error_code& ec)
{
    ssize_t n;
    do n = ::recv(fd, &r, sizeof r, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0) ec = {errno, std::system_category()};
    else if (n > 0 && (static_cast<std::size_t>(n) != sizeof r || r.magic != wire::magic)) ec = std::make_error_code(std::errc::protocol_error);
    r.detail[sizeof r.detail - 1] = '\0';
    return n > 0 && !ec;
}

}  // namespace

pid_t spawn_helper_pid() noexcept
{
    auto& s = state();
    std::lock_guard lock(s.mutex);
    return s.owner == ::getpid() ? s.pid : -1;
}

std::string sweeper_path()
{
    const char* env = std::getenv("SANDBOX_SWEEP");
    std::string p = env && *env ? env : SANDBOX_SWEEP_INSTALLED;
    return !p.empty() && p.front() == '/' && ::access(p.c_str(), X_OK) == 0 ? p : std::string();
}

std::string spawn_helper_path()
{
    const char* env = std::getenv("SANDBOX_SPAWN_HELPER");
    std::string p = env && *env ? env : SANDBOX_SPAWN_HELPER_INSTALLED;
    return !p.empty() && p.front() == '/' && ::access(p.c_str(), X_OK) == 0 ? p : std::string();
}

spawn_outcome spawn_through_helper(const spawn_request& req, child_pipes& pipes, bool& available)
{
    spawn_outcome out;
    static const auto& path = *new const std::string(spawn_helper_path());  // never destroyed
    available = !path.empty() && on_library_thread();
    if (!available) return out;

    // What the child gets, in order: stdin, stdout, stderr, the passed descriptors; then the
    // confinement's own (used and closed before the exec).
    wire::launch l;
    if (!req.search_path.empty()) l.path_search = req.search_path;
    else if (const char* p = std::getenv("PATH")) l.path_search = p;
    l.cwd = req.cwd.string();
    l.argv = req.argv;
    l.env = req.env;
    l.library_pid = static_cast<std::uint32_t>(::getpid());
    l.limits = req.limits;
    unique_fd null_in;
    if (!pipes.stdin_child) null_in.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    std::vector<int> fds{-1, pipes.stdin_child ? pipes.stdin_child.get() : null_in.get(), pipes.stdout_child.get(),
                         pipes.stderr_child.get()};
    for (const auto& p : pipes.passed) fds.push_back(p.get());
    for (std::size_t i = 0; i + 1 < fds.size(); ++i) l.targets.push_back(static_cast<std::int32_t>(i));
    auto extra = [&](int fd) {
        if (fd < 0) return -1;
        fds.push_back(fd);
        return static_cast<int>(fds.size()) - 2;  // the index after the reply socket
    };
    l.limits.landlock_ruleset = extra(req.limits.landlock_ruleset);
    l.limits.seccomp_program = extra(req.limits.seccomp_program);
    if (fds[1] < 0) {
        out.error = {errno, std::system_category()};
        out.what = "cannot open /dev/null";
        return out;
    }
    const auto body = wire::encode(l);

    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        out.error = {errno, std::system_category()};
        out.what = "cannot create a socket for the spawn helper";
        return out;
    }
    unique_fd reply(sv[0]), remote(sv[1]);
    fds[0] = remote.get();
    std::shared_ptr<unique_fd> control;
    std::error_code ec;
    out.started = std::chrono::steady_clock::now();
    for (int attempt = 0; attempt < 2; ++attempt) {  // a helper that died is started again, once
        control = connect(path, control, ec);
        if (!control) break;
        ec.clear();
        if (send_request(control->get(), body, fds, ec)) break;
        if (ec != std::errc::broken_pipe && ec != std::errc::connection_refused && ec != std::errc::connection_reset)
            break;
    }
    // The child has its copies, or will never have them: ours go, or EOF never comes.
    remote.reset();
    pipes.stdin_child.reset();
    pipes.stdout_child.reset();
    pipes.stderr_child.reset();
    pipes.passed.clear();
    if (!control || ec) {
        out.error = ec ? ec : std::make_error_code(std::errc::no_such_file_or_directory);
        out.what = "cannot reach the spawn helper " + path;
        return out;
    }
    // The helper's answer and the child's report of a failed step, in either order, until
    // both have closed the socket: then the child has executed, or exited, or never was.
    pid_t pid = -1;
    std::optional<wire::reply> answer, failure;
    for (wire::reply r; read_reply(reply.get(), r, ec);) (r.from_child ? failure : answer) = r;
    if (answer && answer->pid > 0) pid = answer->pid;
    else if (failure && failure->pid > 0) pid = failure->pid;  // the helper's answer was lost: the child said who it is
    // Our child (CLONE_PARENT): nobody else can reap it, so the pid names it.
    if (pid > 0 && (failure || ec)) {
        // A step failed and the child exits: reap it here, as posix_spawn does.
        if (ec) ::kill(pid, SIGKILL);
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
    if (pid <= 0 || failure || ec) {
        const wire::reply& why = failure ? *failure : answer ? *answer : wire::reply{};
        out.error = ec ? ec : std::error_code(why.error ? why.error : EPROTO, std::system_category());
        out.what = ec ? "the spawn helper did not answer" : step_text(why);
        out.setup_failed = ec || !failure || (failure->failed != wire::step::exec && failure->failed != wire::step::cwd);
        return out;
    }
    unique_fd pidfd;
    if (req.open_pidfd) pidfd.reset(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    out.child = child_process(pid, std::move(pidfd));
    return out;
}

}  // namespace sandbox::detail
