// SPDX-License-Identifier: BSL-1.0
// sandbox-spawn --parent PID: the library's spawn helper, one per library process. It gets
// launch requests on descriptor 3 (src/run/spawn_wire.hpp), forks for each, and the child
// sets itself up in plain linear code (descriptors, signals, session, cgroups, limits, a
// private mount namespace or a read-only view, the user, no_new_privs, Landlock, seccomp) and
// executes the program. No shell, setpriv or launcher runs in front of a sandbox's program.
//
// The same program, as `sandbox-spawn --await [--report]`, is what a sandbox started ahead
// of its command runs (command_runner::prewarm): it waits for the command on its stdin and
// becomes it (await_command below).
//
// Why a process of its own: the library's process may hold thousands of descriptors and
// gigabytes of memory, and every spawn from it copies its descriptor table (posix_spawn) or
// more (fork); this one holds a handful and a few pages, so a fork here is cheap, and the
// code between fork and exec is ordinary code, never run on a thread of the caller (gdb,
// Valgrind and ThreadSanitizer keep seeing the library as they did).
//
// The children are made with CLONE_PARENT: the library's process is their parent, reaps
// them (with their resource usage) and holds their pidfds, as for any child it spawns
// itself; the helper keeps nothing of them. It is single-threaded and handles one request at
// a time, so no child inherits another request's descriptors. Linked statically and never
// sanitized: it starts once, and its children run nothing of a sanitizer before the exec.
#include "run/spawn_wire.hpp"
#include "sys/landlock.hpp"
#include "sys/mounts.hpp"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/mount.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace wire = sandbox::detail::wire;
using sandbox::detail::mount_step;

namespace {

constexpr int control_fd = 3;

// The children still running, each with a pidfd (CLONE_PIDFD): when the library's process
// ends, the helper kills them (a set-id launcher such as firejail has no parent-death
// signal, and a command may have none), then has their runs swept. A pidfd turns readable
// when its child ends; the helper then forgets it.
struct running_child {
    pid_t pid;
    int pidfd;
};
std::vector<running_child> children;
std::size_t max_tracked = 4096;

// ---- the child: from the fork to the exec -------------------------------------------------

// Everything the child needs, made before the fork: after it, only system calls.
struct prepared {
    wire::launch req;
    std::vector<int> fds;                 // received, in the body's index order
    int reply = -1;                       // the request's reply socket
    std::vector<std::string> candidates;  // where argv[0] may be, in order
    std::vector<char*> argv, envp;
};

[[noreturn]] void child_fail(int reply, wire::step s, int err, const char* detail = "")
{
    wire::reply r;
    r.pid = static_cast<std::int32_t>(::syscall(SYS_getpid));
    r.from_child = 1;
    r.failed = s;
    r.error = err;
    std::strncpy(r.detail, detail, sizeof r.detail - 1);
    (void)::send(reply, &r, sizeof r, MSG_NOSIGNAL);
    ::_exit(127);
}

// Moves the descriptors to their numbers in the child; the reply socket and the two
// descriptors the confinement uses land just above them, close-on-exec; all else is closed.
void place_descriptors(prepared& p, int& reply, int& ruleset, int& program)
{
    int top = 2;
    for (auto t : p.req.targets) top = t > top ? t : top;
    const int floor = top + 8;  // copies go above every number the child will use
    auto lift = [&](int fd) {
        if (fd < 0) return -1;
        const int c = ::fcntl(fd, F_DUPFD_CLOEXEC, floor);
        if (c < 0) child_fail(p.reply, wire::step::descriptors, errno);
        return c;
    };
    std::vector<int> copies;
    copies.reserve(p.req.targets.size());
    for (std::size_t i = 0; i < p.req.targets.size(); ++i) copies.push_back(lift(p.fds[i]));
    const int reply_copy = lift(p.reply);
    auto index_fd = [&](int index) {
        return index >= 0 && static_cast<std::size_t>(index) < p.fds.size() ? p.fds[static_cast<std::size_t>(index)] : -1;
    };
    const int ruleset_copy = lift(index_fd(p.req.limits.landlock_ruleset));
    const int program_copy = lift(index_fd(p.req.limits.seccomp_program));
    for (std::size_t i = 0; i < copies.size(); ++i)
        if (::dup2(copies[i], p.req.targets[i]) < 0) child_fail(reply_copy, wire::step::descriptors, errno);
    reply = top + 1;
    ruleset = ruleset_copy >= 0 ? top + 2 : -1;
    program = program_copy >= 0 ? top + 3 : -1;
    if (::dup3(reply_copy, reply, O_CLOEXEC) < 0) child_fail(reply_copy, wire::step::descriptors, errno);
    if (ruleset >= 0 && ::dup3(ruleset_copy, ruleset, O_CLOEXEC) < 0) child_fail(reply, wire::step::descriptors, errno);
    if (program >= 0 && ::dup3(program_copy, program, O_CLOEXEC) < 0) child_fail(reply, wire::step::descriptors, errno);
    if (ruleset < 0) ::close(top + 2);  // whatever the helper had there
    if (program < 0) ::close(top + 3);
    // Everything else: the helper's own descriptors, the received ones, the copies.
    if (::syscall(SYS_close_range, top + 4, ~0u, 0) != 0) child_fail(reply, wire::step::descriptors, errno);
}

void default_signals()
{
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig)
        if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &dfl, nullptr);  // the reserved ones fail: fine
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

// Writes `text` to `file` in one write (cgroup.procs, /proc/self's maps); false with errno
// on failure.
bool write_file(const char* file, const char* text)
{
    const int fd = ::open(file, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    const auto n = static_cast<ssize_t>(std::strlen(text));
    const bool ok = ::write(fd, text, static_cast<std::size_t>(n)) == n;
    const int err = errno;
    ::close(fd);
    errno = err;
    return ok;
}

void join_cgroups(const std::vector<std::string>& procs, int reply)
{
    char pid[24];
    std::snprintf(pid, sizeof pid, "%ld\n", static_cast<long>(::syscall(SYS_getpid)));
    for (const auto& p : procs)
        if (!write_file(p.c_str(), pid)) child_fail(reply, wire::step::cgroup, errno, p.c_str());
}

void set_limits(const sandbox::detail::confinement& c, int reply)
{
    auto set = [&](int resource, std::uint64_t v, const char* what) {
        const rlimit lim{v, v};
        if (v && ::setrlimit(resource, &lim) != 0) child_fail(reply, wire::step::limit, errno, what);
    };
    set(RLIMIT_AS, c.rlimit_as, "RLIMIT_AS");
    set(RLIMIT_NPROC, c.rlimit_nproc, "RLIMIT_NPROC");
}

// mkdir -p, as root, for a mount point below a tmpfs the child just made.
void make_parents(const std::string& path)
{
    for (std::size_t at = path.find('/', 1); at != std::string::npos; at = path.find('/', at + 1))
        (void)::mkdir(path.substr(0, at).c_str(), 0755);
}

// The directory at `m.target`, reached without a symbolic link and, when the launch pinned
// it, checked to be that directory; the launch fails otherwise.
int open_target(const mount_step& m, int reply)
{
    const int at = sandbox::detail::open_no_symlinks(m.target.c_str());
    if (at < 0) child_fail(reply, wire::step::mounts, errno, m.target.c_str());
    struct stat st {};
    if (m.ino && (::fstat(at, &st) != 0 || st.st_dev != m.dev || st.st_ino != m.ino))
        child_fail(reply, wire::step::mounts, ESTALE, m.target.c_str());
    return at;
}

// A bind onto a path the policy names, pinned by the launch: whatever is at the target's
// path now must be that directory, reached without a symbolic link, and the mount goes onto
// it through its descriptor. A swap of a component of the path fails the launch.
void pinned_bind(const mount_step& m, int reply)
{
    const int target = open_target(m, reply);
    const int tree = m.source == m.target
                         ? static_cast<int>(::syscall(SYS_open_tree, target, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH))
                         : static_cast<int>(::syscall(SYS_open_tree, AT_FDCWD, m.source.c_str(),
                                                      OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW));
    if (tree < 0) child_fail(reply, wire::step::mounts, errno, m.source.c_str());
    mount_attr attr{};
    attr.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
    if (::syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof attr) != 0 ||
        ::syscall(SYS_move_mount, tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
        child_fail(reply, wire::step::mounts, errno, m.target.c_str());
    ::close(tree);
    ::close(target);
}

void mount_steps(const sandbox::detail::confinement& c, int reply)
{
    if (!c.private_mounts) return;
    if (::unshare(CLONE_NEWNS) != 0) child_fail(reply, wire::step::mounts, errno, "unshare(CLONE_NEWNS)");
    // Nothing of ours reaches the host, and nothing the host mounts meanwhile reaches us.
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
        child_fail(reply, wire::step::mounts, errno, "private propagation");
    for (const auto& m : c.mounts) {
        if (m.what == mount_step::kind::bind && m.ino) {
            pinned_bind(m, reply);
            continue;
        }
        if (m.what == mount_step::kind::bind) {
            if (::mount(m.source.c_str(), m.target.c_str(), nullptr, MS_BIND, nullptr) != 0 ||
                ::mount(nullptr, m.target.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV, nullptr) != 0)
                child_fail(reply, wire::step::mounts, errno, m.target.c_str());
            continue;
        }
        // A bounded /tmp with the paths below it that must stay (the work dir, the policy's
        // paths): each opened before /tmp is covered, then bound back from its descriptor.
        std::vector<int> kept;
        for (const auto& k : m.keep) {
            const int fd = ::open(k.c_str(), O_PATH | O_CLOEXEC);
            if (fd < 0) child_fail(reply, wire::step::mounts, errno, k.c_str());
            kept.push_back(fd);
        }
        char opts[64];
        std::snprintf(opts, sizeof opts, "size=%llu,mode=1777", static_cast<unsigned long long>(m.size));
        if (::mount("sandbox-tmp", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0)
            child_fail(reply, wire::step::mounts, errno, "/tmp");
        for (std::size_t i = 0; i < kept.size(); ++i) {
            const auto& path = m.keep[i];
            struct stat st {};
            make_parents(path);
            if (::fstat(kept[i], &st) == 0 && S_ISDIR(st.st_mode)) (void)::mkdir(path.c_str(), 0755);
            else if (const int f = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600); f >= 0) ::close(f);
            char from[64];
            std::snprintf(from, sizeof from, "/proc/self/fd/%d", kept[i]);
            if (::mount(from, path.c_str(), nullptr, MS_BIND, nullptr) != 0)
                child_fail(reply, wire::step::mounts, errno, path.c_str());
            ::close(kept[i]);
        }
    }
}

// The writable trees are cloned first (from this namespace: a descriptor of the old one
// cannot be cloned), then every mount is made read-only and the clones go back on top, the
// shorter paths first, so a writable path inside another lands on the outer one's clone.
void read_only_view(const sandbox::detail::confinement& c, int reply)
{
    if (!c.read_only_view) return;
    const auto uid = static_cast<unsigned>(::getuid()), gid = static_cast<unsigned>(::getgid());
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
        child_fail(reply, wire::step::mounts, errno, "unshare(CLONE_NEWUSER | CLONE_NEWNS), for a read-only view");
    char map[64];
    if (!write_file("/proc/self/setgroups", "deny")) child_fail(reply, wire::step::mounts, errno, "/proc/self/setgroups");
    std::snprintf(map, sizeof map, "%u %u 1", uid, uid);
    if (!write_file("/proc/self/uid_map", map)) child_fail(reply, wire::step::mounts, errno, "/proc/self/uid_map");
    std::snprintf(map, sizeof map, "%u %u 1", gid, gid);
    if (!write_file("/proc/self/gid_map", map)) child_fail(reply, wire::step::mounts, errno, "/proc/self/gid_map");
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
        child_fail(reply, wire::step::mounts, errno, "private propagation");
    std::vector<int> trees;
    for (const auto& m : c.writable) {
        const int at = open_target(m, reply);
        const int tree = static_cast<int>(
            ::syscall(SYS_open_tree, at, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE));
        if (tree < 0) child_fail(reply, wire::step::mounts, errno, m.target.c_str());
        mount_attr attr{};
        attr.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
        if (::syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) != 0)
            child_fail(reply, wire::step::mounts, errno, m.target.c_str());
        ::close(at);
        trees.push_back(tree);
    }
    mount_attr read_only{};
    read_only.attr_set = MOUNT_ATTR_RDONLY;
    if (::syscall(SYS_mount_setattr, AT_FDCWD, "/", AT_RECURSIVE, &read_only, sizeof read_only) != 0)
        child_fail(reply, wire::step::mounts, errno, "every mount read-only");
    for (std::size_t i = 0; i < trees.size(); ++i) {
        const auto& m = c.writable[i];
        const int at = open_target(m, reply);
        if (::syscall(SYS_move_mount, trees[i], "", at, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
            child_fail(reply, wire::step::mounts, errno, m.target.c_str());
        ::close(at);
        ::close(trees[i]);
    }
}

void become(const sandbox::detail::confinement& c, int reply)
{
    if (!c.user) return;
    const auto [uid, gid] = *c.user;
    char who[48];
    std::snprintf(who, sizeof who, "%u:%u", static_cast<unsigned>(uid), static_cast<unsigned>(gid));
    // No capability to come back through later: the bounding set emptied while still root
    // (but for a set-uid program, which needs it as any user's run of it would).
    for (int cap = 0; !c.setuid_program && ::prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; ++cap)
        if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) child_fail(reply, wire::step::user, errno, who);
    if (::setgroups(0, nullptr) != 0 || ::setresgid(gid, gid, gid) != 0 || ::setresuid(uid, uid, uid) != 0)
        child_fail(reply, wire::step::user, errno, who);
    // The inheritable set survives the change of uid (and keeps the ambient one alive).
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct none[2]{};
    if (::syscall(SYS_capset, &header, none) != 0) child_fail(reply, wire::step::user, errno, who);
}

void load_program(int program, int reply)
{
    struct stat st {};
    if (::fstat(program, &st) != 0 || st.st_size <= 0 || st.st_size % sizeof(sock_filter) != 0)
        child_fail(reply, wire::step::seccomp, EINVAL, "not a BPF program");
    void* code = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, program, 0);
    if (code == MAP_FAILED) child_fail(reply, wire::step::seccomp, errno);
    sock_fprog prog{static_cast<unsigned short>(static_cast<std::size_t>(st.st_size) / sizeof(sock_filter)),
                    static_cast<sock_filter*>(code)};
    if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) child_fail(reply, wire::step::seccomp, errno);
    ::close(program);
}

// execvp's search, over the library's PATH: a missing file goes on to the next directory, a
// refused one is remembered.
[[noreturn]] void execute(prepared& p, int reply)
{
    bool refused = false;
    int last = ENOENT;
    for (const auto& c : p.candidates) {
        ::execve(c.c_str(), p.argv.data(), p.envp.data());
        last = errno;
        if (last == EACCES) refused = true;
        else if (last != ENOENT && last != ENOTDIR && last != ESTALE && last != ENODEV && last != ETIMEDOUT) break;
    }
    child_fail(reply, wire::step::exec, refused && (last == ENOENT || last == ENOTDIR) ? EACCES : last,
               p.req.argv.front().c_str());
}

[[noreturn]] void child_main(prepared& p)
{
    int reply = -1, ruleset = -1, program = -1;
    place_descriptors(p, reply, ruleset, program);
    default_signals();
    // Its own session and process group: one kill(-pid) reaches the tree, and no terminal.
    if (::setsid() < 0) child_fail(reply, wire::step::session, errno);
    const auto& c = p.req.limits;
    join_cgroups(c.cgroup_procs, reply);
    set_limits(c, reply);
    if (!p.req.cwd.empty() && ::chdir(p.req.cwd.c_str()) != 0) child_fail(reply, wire::step::cwd, errno, p.req.cwd.c_str());
    mount_steps(c, reply);
    read_only_view(c, reply);
    // The old directory is under the writable clone now: the same path reaches the clone.
    if (c.read_only_view && !p.req.cwd.empty() && ::chdir(p.req.cwd.c_str()) != 0)
        child_fail(reply, wire::step::cwd, errno, p.req.cwd.c_str());
    become(c, reply);
    if (c.parent_death_signal) {
        // After the change of user, which clears it; the check after closes the window in
        // which the library may have ended already.
        if (::prctl(PR_SET_PDEATHSIG, c.parent_death_signal, 0, 0, 0) != 0)
            child_fail(reply, wire::step::parent_gone, errno);
        if (static_cast<std::uint32_t>(::getppid()) != p.req.library_pid) child_fail(reply, wire::step::parent_gone, ESRCH);
    }
    if ((c.no_new_privs || ruleset >= 0 || program >= 0) && ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        child_fail(reply, wire::step::no_new_privs, errno);
    if (ruleset >= 0) {
        if (const auto why = sandbox::detail::landlock::restrict_self(ruleset); !why.empty())
            child_fail(reply, wire::step::landlock, errno ? errno : EPERM, why.c_str());
        ::close(ruleset);
    }
    if (program >= 0) load_program(program, reply);
    execute(p, reply);
}

// ---- the helper: one request at a time ----------------------------------------------------

void close_all(const std::vector<int>& fds)
{
    for (int fd : fds)
        if (fd >= 0) ::close(fd);
}

void answer(int reply, pid_t pid, wire::step failed = wire::step::none, int err = 0)
{
    wire::reply r;
    r.pid = pid;
    r.failed = failed;
    r.error = err;
    (void)::send(reply, &r, sizeof r, MSG_NOSIGNAL);
}

// Reads one request; false when the library has gone (end of file, or the socket failed).
bool handle_request()
{
    wire::header h;
    std::vector<char> body(wire::inline_body_max);
    iovec iov[2]{{&h, sizeof h}, {body.data(), body.size()}};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * (wire::max_fds + 2))];
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = 2;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(control_fd, &msg, MSG_CMSG_CLOEXEC);
    if (n == 0) return false;
    if (n < 0) return errno == EINTR || errno == EAGAIN;
    std::vector<int> fds;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            const auto count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            const auto* data = reinterpret_cast<const int*>(CMSG_DATA(c));
            fds.insert(fds.end(), data, data + count);
        }
    if (fds.empty()) return true;  // no reply socket: nobody to answer
    prepared p;
    p.reply = fds.front();
    const bool truncated = (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0;
    std::string text;
    std::size_t first_fd = 1;
    if (!truncated && static_cast<std::size_t>(n) >= sizeof h && h.magic == wire::magic) {
        if (h.body_in_file) {
            first_fd = 2;
            if (fds.size() >= 2) {
                text.resize(h.body_size);
                if (::pread(fds[1], text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) text.clear();
            }
        } else if (static_cast<std::size_t>(n) - sizeof h == h.body_size) {
            text.assign(body.data(), h.body_size);
        }
    }
    if (text.empty() || !wire::decode(text, p.req) || fds.size() - first_fd < p.req.targets.size()) {
        answer(p.reply, -1, wire::step::request, EINVAL);
        close_all(fds);
        return true;
    }
    p.fds.assign(fds.begin() + static_cast<std::ptrdiff_t>(first_fd), fds.end());
    // execvp's candidates and the C strings, made before the fork.
    p.candidates = wire::exec_candidates(p.req.argv.front(), p.req.path_search);
    for (auto& a : p.req.argv) p.argv.push_back(a.data());
    p.argv.push_back(nullptr);
    for (auto& e : p.req.env) p.envp.push_back(e.data());
    p.envp.push_back(nullptr);

    // A fork whose parent is the library: it reaps the child and holds its pidfd. The helper
    // keeps a pidfd of its own, to end the child if the library ends first.
    // Past max_tracked, or out of descriptors for the pidfd (thousands of runs at once): the
    // child all the same, which then has only its parent-death signal and the sweep.
    int pidfd = -1;
    const bool track = children.size() < max_tracked;
    long pid = ::syscall(SYS_clone, CLONE_PARENT | (track ? CLONE_PIDFD : 0) | SIGCHLD, nullptr,
                         track ? &pidfd : nullptr, nullptr, 0);
    if (pid < 0 && track && (errno == EMFILE || errno == ENFILE)) {
        pidfd = -1;
        pid = ::syscall(SYS_clone, CLONE_PARENT | SIGCHLD, nullptr, nullptr, nullptr, 0);
    }
    if (pid == 0) child_main(p);
    if (pid < 0) answer(p.reply, -1, wire::step::fork, errno);
    else answer(p.reply, static_cast<pid_t>(pid));
    if (pid > 0 && pidfd >= 0) {
        ::fcntl(pidfd, F_SETFD, FD_CLOEXEC);
        children.push_back({static_cast<pid_t>(pid), pidfd});
    }
    close_all(fds);
    return true;
}

// ---- a sandbox started ahead: sandbox-spawn --await [--report] ----------------------------

bool read_exactly(int fd, void* buf, std::size_t n)
{
    auto* p = static_cast<char*>(buf);
    while (n > 0) {
        const ssize_t got = ::read(fd, p, n);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return false;
        p += got;
        n -= static_cast<std::size_t>(got);
    }
    return true;
}

bool write_all(int fd, std::string_view s)
{
    while (!s.empty()) {
        const ssize_t n = ::write(fd, s.data(), s.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        s.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

// As the command: moves to its directory and executes it, searching the PATH of its own
// environment; says why not in the words the drivers recognise, and exits 127 or 126.
[[noreturn]] void become_command(wire::hand_off& h)
{
    if (!h.cwd.empty() && ::chdir(h.cwd.c_str()) != 0) {
        std::fprintf(stderr, "sandbox: cannot execute %s: %s (working directory %s)\n", h.argv.front().c_str(),
                     std::strerror(errno), h.cwd.c_str());
        ::_exit(127);
    }
    std::vector<char*> args, envp;
    for (auto& a : h.argv) args.push_back(a.data());
    args.push_back(nullptr);
    std::string path = "/usr/local/bin:/usr/bin:/bin";
    for (auto& e : h.env) {
        if (e.rfind("PATH=", 0) == 0) path = e.substr(5);
        envp.push_back(e.data());
    }
    envp.push_back(nullptr);
    const auto& name = h.argv.front();
    int err = ENOENT;
    bool refused = false;
    auto attempt = [&](const std::string& file) {
        ::execve(file.c_str(), args.data(), envp.data());
        err = errno;
        if (err == EACCES) refused = true;
        return err == ENOENT || err == ENOTDIR || err == EACCES || err == ESTALE || err == ENODEV || err == ETIMEDOUT;
    };
    for (const auto& file : wire::exec_candidates(name, path))
        if (!attempt(file)) break;
    if (refused && (err == ENOENT || err == ENOTDIR)) err = EACCES;
    std::fprintf(stderr, "sandbox: cannot execute %s: %s\n", name.c_str(), std::strerror(err));
    ::_exit(err == ENOENT ? 127 : 126);
}

pid_t command_pid = -1;

void forward(int sig)
{
    if (command_pid > 0) ::kill(command_pid, sig);
}

// Started inside a sandbox before any command is asked for: says it is ready, waits for the
// hand-off on stdin, then becomes the command. With --report it runs the command as its
// child instead, and when it ends writes the end line (status and usage) on stdout and
// stderr: what a container's output shows before its engine is done tearing it down.
int await_command(bool report)
{
    if (!write_all(1, std::string_view(&wire::ready_byte, 1))) return 125;
    wire::hand_off_header head;
    if (!read_exactly(0, &head, sizeof head) || head.magic != wire::magic || head.body_size > (64u << 20)) {
        std::fprintf(stderr, "sandbox: the sandbox started ahead got no command\n");
        return 125;
    }
    std::string body(head.body_size, '\0');
    wire::hand_off h;
    if (!read_exactly(0, body.data(), body.size()) || !wire::decode(body, h)) {
        std::fprintf(stderr, "sandbox: the sandbox started ahead got no command\n");
        return 125;
    }
    if (!report) become_command(h);
    const pid_t pid = ::fork();
    if (pid < 0) {
        std::fprintf(stderr, "sandbox: cannot fork: %s\n", std::strerror(errno));
        return 125;
    }
    if (pid == 0) become_command(h);
    command_pid = pid;
    // The engine's init passes signals to this process: they are the command's.
    for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2}) ::signal(sig, forward);
    ::close(0);
    int status = 0;
    rusage ru{};
    while (::wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
    }
    const auto prefix = wire::end_line_prefix(h.token);
    char tail[160];
    std::snprintf(tail, sizeof tail, " %d %lld %lld %ld\n", status,
                  static_cast<long long>(ru.ru_utime.tv_sec) * 1000000 + ru.ru_utime.tv_usec,
                  static_cast<long long>(ru.ru_stime.tv_sec) * 1000000 + ru.ru_stime.tv_usec, ru.ru_maxrss);
    (void)write_all(2, prefix + "\n");
    (void)write_all(1, prefix + tail);
    // The tool passes this on as its own end: what the library reads when the end lines are
    // not enough (a SIGKILL, which may be the memory limit's, is told by the tool's cgroup).
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

// The library's process is gone if the helper's parent is no longer it: its socket closes
// before it is reparented, so give that a moment. A socket closed by a live library (it
// started another helper) is not its end.
bool library_ended(long parent)
{
    for (int i = 0; i < 200; ++i) {
        if (::getppid() != parent) return true;
        ::usleep(5000);
    }
    return false;
}

// The library has ended: whatever it started through here and still runs goes, with its
// process group (the launcher's whole tree: firejail's sandbox dies with firejail).
void end_children()
{
    for (const auto& c : children) {
        pollfd p{c.pidfd, POLLIN, 0};
        if (::poll(&p, 1, 0) == 0) {  // still running, so its pid and group are its own
            ::syscall(SYS_pidfd_send_signal, c.pidfd, SIGKILL, nullptr, 0);
            ::kill(-c.pid, SIGKILL);
        }
        ::close(c.pidfd);
    }
    children.clear();
}

// Forgets the children that have ended.
void forget_ended(const std::vector<pollfd>& polled)
{
    for (std::size_t i = 1; i < polled.size(); ++i) {
        if (!(polled[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        for (auto it = children.begin(); it != children.end(); ++it)
            if (it->pidfd == polled[i].fd) {
                ::close(it->pidfd);
                children.erase(it);
                break;
            }
    }
}

// Runs the sweep of what the library's runs left (sandbox-sweep), in a session of its own,
// and does not wait for it.
void start_sweeper(const char* sweeper)
{
    const pid_t pid = ::fork();
    if (pid != 0) return;
    ::setsid();
    // Nothing of the library's: whoever reads its output to the end (a shell's $(...))
    // must not wait for the sweep.
    const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    for (int fd = 0; fd <= 2; ++fd) ::dup2(null, fd);
    ::syscall(SYS_close_range, 3, ~0u, 0);  // the control socket and what a request left
    char* const args[] = {const_cast<char*>(sweeper), nullptr};
    ::execv(sweeper, args);
    ::_exit(127);
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc >= 2 && std::strcmp(argv[1], "--await") == 0)
        return await_command(argc >= 3 && std::strcmp(argv[2], "--report") == 0);
    long parent = 0;
    const char* sweeper = nullptr;
    if ((argc == 3 || argc == 5) && std::strcmp(argv[1], "--parent") == 0) parent = std::strtol(argv[2], nullptr, 10);
    if (argc == 5 && std::strcmp(argv[3], "--sweeper") == 0 && argv[4][0] == '/') sweeper = argv[4];
    else if (argc == 5) parent = 0;
    if (parent <= 0 || ::fcntl(control_fd, F_GETFD) < 0) {
        std::fprintf(stderr, "usage: sandbox-spawn --parent PID [--sweeper PATH] (started by the sandbox library, with "
                             "its socket as descriptor 3)\n");
        return 2;
    }
    // The library's end going away (its process ended) ends the helper, which then has the
    // runs it left swept: nothing else is ours.
    ::signal(SIGPIPE, SIG_IGN);
    ::fcntl(control_fd, F_SETFD, FD_CLOEXEC);
    ::prctl(PR_SET_NAME, "sandbox-spawn", 0, 0, 0);
    // A pidfd per running child, up to half the descriptors this process may have: the rest
    // stay free for the requests' own (its children inherit its limit, so it keeps it).
    rlimit files{};
    if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY)
        max_tracked = static_cast<std::size_t>(files.rlim_cur / 2);
    std::vector<pollfd> polled;
    for (;;) {
        polled.assign(1, pollfd{control_fd, POLLIN, 0});
        for (const auto& c : children) polled.push_back(pollfd{c.pidfd, POLLIN, 0});
        if (::poll(polled.data(), polled.size(), -1) < 0) {
            if (errno == EINTR) continue;
            return 1;
        }
        forget_ended(polled);
        const auto control = polled.front().revents;
        if (!control) continue;
        if (((control & (POLLHUP | POLLERR)) && !(control & POLLIN)) || !handle_request()) break;
    }
    if (library_ended(parent)) {
        end_children();
        if (sweeper) start_sweeper(sweeper);
    }
    return 0;
}
