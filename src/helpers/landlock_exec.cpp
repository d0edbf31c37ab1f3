// SPDX-License-Identifier: BSL-1.0
// sandbox-landlock-exec [--cgroup PROCS]... [--rlimit-as BYTES] [--user UID:GID] [--parent PID] [--reap]
//                       -- PROGRAM [ARG...]
// The landlock driver's launcher, started with a Landlock ruleset as descriptor 3 and a
// seccomp BPF program as descriptor 4, both made by the library: joins the cgroups (as the
// caller, maybe root), limits the address space, drops to the command's user, then sets
// no_new_privs, enforces the ruleset, loads the filter and executes PROGRAM. Linked
// statically and without a sanitizer: it costs one small exec.
//
// --reap, for runs without a cgroup to kill the tree by: PROGRAM runs in a child, and this
// process stays as its parent and the subreaper of everything it starts, so that a process
// that leaves the process group (setsid) still comes back here when its parent dies. When
// PROGRAM ends, every process left is killed before this one exits with PROGRAM's status;
// on SIGTERM (the runner's timeout), those outside the process group, which the runner's
// kill cannot reach, are killed at once; SIGUSR1, which the runner sends this process alone
// in place of the group's SIGKILL, kills everything and then this process.
//
// --parent PID, the runner's process: the run dies with it, as bwrap's --die-with-parent
// does. With --reap, its death is SIGUSR1 here (everything goes); without, SIGKILL to the
// command (the rest of its tree is in the run's cgroup, which the next runner's sweep of
// dead runs kills and removes).
#include "sys/landlock.hpp"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

constexpr int ruleset_fd = 3;
constexpr int program_fd = 4;

// Exits 125, the code of a sandbox that never ran its command, with the runner's "sandbox: " line.
[[noreturn]] void fail(const std::string& what)
{
    std::fprintf(stderr, "sandbox: %s\n", what.c_str());
    std::exit(125);
}

std::string errno_text() { return std::strerror(errno); }

bool parse_number(std::string_view s, unsigned long long& out)
{
    if (s.empty() || s.size() > 20) return false;
    out = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return false;
        out = out * 10 + static_cast<unsigned>(c - '0');
    }
    return true;
}

void join_cgroup(const char* procs)
{
    const int fd = ::open(procs, O_WRONLY | O_CLOEXEC);
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (fd < 0 || ::write(fd, pid.data(), pid.size()) != static_cast<ssize_t>(pid.size()))
        fail(std::string("cannot join the cgroup ") + procs + ": " + errno_text());
    ::close(fd);
}

void become(std::string_view ids)
{
    const auto colon = ids.find(':');
    unsigned long long uid = 0, gid = 0;
    if (colon == std::string_view::npos || !parse_number(ids.substr(0, colon), uid) ||
        !parse_number(ids.substr(colon + 1), gid))
        fail("--user takes UID:GID, not " + std::string(ids));
    // No capability to come back through later: the bounding set emptied while still root.
    for (int cap = 0; ::prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; ++cap)
        if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) fail("cannot drop capability " + std::to_string(cap) + ": " + errno_text());
    if (::setgroups(0, nullptr) != 0 || ::setresgid(static_cast<gid_t>(gid), static_cast<gid_t>(gid), static_cast<gid_t>(gid)) != 0 ||
        ::setresuid(static_cast<uid_t>(uid), static_cast<uid_t>(uid), static_cast<uid_t>(uid)) != 0)
        fail("cannot become uid " + std::to_string(uid) + ": " + errno_text());
    // The inheritable set survives the change of uid (and keeps the ambient one alive).
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct none[2]{};
    if (::syscall(SYS_capset, &header, none) != 0) fail("cannot clear the capability sets: " + errno_text());
}

void load_program()
{
    struct stat st {};
    if (::fstat(program_fd, &st) != 0 || st.st_size <= 0 || st.st_size % sizeof(sock_filter) != 0)
        fail("descriptor 4 does not hold a seccomp program");
    std::vector<sock_filter> code(static_cast<std::size_t>(st.st_size) / sizeof(sock_filter));
    if (::pread(program_fd, code.data(), static_cast<std::size_t>(st.st_size), 0) != st.st_size)
        fail("cannot read the seccomp program: " + errno_text());
    ::close(program_fd);
    sock_fprog prog{static_cast<unsigned short>(code.size()), code.data()};
    if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0) fail("cannot load the seccomp filter: " + errno_text());
}

// The children of `pid`, from the kernel's own list (the subreaper's include the orphans
// that came back to it).
std::vector<pid_t> children_of(pid_t pid)
{
    std::vector<pid_t> out;
    const std::string path = "/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children";
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return out;
    std::string text;
    char buf[4096];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    pid_t child = 0;
    for (char c : text) {
        if (c >= '0' && c <= '9') child = child * 10 + (c - '0');
        else if (child) out.push_back(std::exchange(child, 0));
    }
    if (child) out.push_back(child);
    return out;
}

void descendants(pid_t pid, std::vector<pid_t>& out, int depth = 0)
{
    if (depth > 64) return;
    for (const pid_t c : children_of(pid)) {
        out.push_back(c);
        descendants(c, out, depth + 1);
    }
}

// Kills and reaps every process left; what they start meanwhile comes back here too.
void kill_everything()
{
    for (;;) {
        for (const pid_t c : children_of(::getpid())) ::kill(c, SIGKILL);
        if (::waitpid(-1, nullptr, 0) < 0 && errno == ECHILD) return;
    }
}

[[noreturn]] void exit_as(int status)
{
    if (WIFEXITED(status)) std::_Exit(WEXITSTATUS(status));
    const int sig = WTERMSIG(status);
    const rlimit no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);
    ::signal(sig, SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    ::sigprocmask(SIG_UNBLOCK, &one, nullptr);
    ::kill(::getpid(), sig);
    std::_Exit(128 + sig);
}

[[noreturn]] void reap(pid_t main_pid, const sigset_t& waited)
{
    for (int fd : {0, 1}) ::close(fd);  // the command's ends of the pipes are its own
    for (;;) {
        siginfo_t info{};
        if (::sigwaitinfo(&waited, &info) < 0) continue;
        if (info.si_signo == SIGUSR1) {
            // The runner's SIGKILL for the run, sent here alone (the group's would end this
            // process first): all it started goes, then itself, as if killed with them.
            std::vector<pid_t> all;
            descendants(::getpid(), all);
            for (const pid_t p : all) ::kill(p, SIGKILL);
            kill_everything();
            ::kill(::getpid(), SIGKILL);
            std::_Exit(128 + SIGKILL);
        }
        if (info.si_signo != SIGCHLD) {
            const pid_t group = ::getpgrp();
            if (::getpgid(main_pid) != group) ::kill(main_pid, info.si_signo);  // else it has its own
            std::vector<pid_t> all;
            descendants(::getpid(), all);
            for (const pid_t p : all)
                if (::getpgid(p) != group) ::kill(p, SIGKILL);
            continue;
        }
        for (int status = 0;;) {
            const pid_t w = ::waitpid(-1, &status, WNOHANG);
            if (w <= 0) break;
            if (w == main_pid) {
                kill_everything();
                exit_as(status);
            }
        }
    }
}

}  // namespace

int main(int argc, char** argv)
{
    int i = 1;
    bool reaper = false;
    unsigned long long parent = 0;
    for (; i < argc && std::string_view(argv[i]) != "--"; ++i) {
        const std::string_view opt = argv[i];
        if (opt == "--reap") {
            reaper = true;
            continue;
        }
        if (i + 1 >= argc) fail("sandbox-landlock-exec: " + std::string(opt) + " needs a value");
        const char* value = argv[++i];
        if (opt == "--cgroup") {
            join_cgroup(value);
        } else if (opt == "--rlimit-as") {
            unsigned long long bytes = 0;
            if (!parse_number(value, bytes)) fail("--rlimit-as takes bytes, not " + std::string(value));
            const rlimit lim{bytes, bytes};
            if (::setrlimit(RLIMIT_AS, &lim) != 0) fail("cannot limit the address space: " + errno_text());
        } else if (opt == "--user") {
            become(value);
        } else if (opt == "--parent") {
            if (!parse_number(value, parent) || parent == 0) fail("--parent takes a pid, not " + std::string(value));
        } else {
            fail("sandbox-landlock-exec: unknown option " + std::string(opt));
        }
    }
    if (i + 1 >= argc)
        fail("usage: sandbox-landlock-exec [--cgroup PROCS]... [--rlimit-as BYTES] [--user UID:GID] [--parent PID] "
             "[--reap] -- PROGRAM [ARG...]");
    // After the change of user, which clears it; the check after it closes the window in
    // which the parent may have died already.
    if (parent != 0 && (::prctl(PR_SET_PDEATHSIG, reaper ? SIGUSR1 : SIGKILL, 0, 0, 0) != 0 ||
                        static_cast<unsigned long long>(::getppid()) != parent))
        fail("the runner that started this sandbox is gone");
    if (reaper) {
        sigset_t waited, previous;
        sigemptyset(&waited);
        for (int sig : {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1}) sigaddset(&waited, sig);
        if (::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 || ::sigprocmask(SIG_BLOCK, &waited, &previous) != 0)
            fail("cannot become the command's reaper: " + errno_text());
        const pid_t launcher = ::getpid();
        const pid_t pid = ::fork();
        if (pid < 0) fail("cannot fork: " + errno_text());
        if (pid > 0) {
            for (int fd : {ruleset_fd, program_fd}) ::close(fd);
            reap(pid, waited);
        }
        // The command: dies with this process, whatever kills it.
        if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || ::getppid() != launcher) std::_Exit(125);
        ::sigprocmask(SIG_SETMASK, &previous, nullptr);
    }
    if (const auto why = sandbox::detail::landlock::restrict_self(ruleset_fd); !why.empty()) fail(why);
    ::close(ruleset_fd);
    load_program();
    char** command = argv + i + 1;
    ::execvp(command[0], command);
    const int err = errno;
    // What the runner turns into its one "Failed to start" line (start_failure).
    std::fprintf(stderr, "sandbox: cannot execute %s: %s\n", command[0], std::strerror(err));
    return err == ENOENT ? 127 : 126;
}
