// SPDX-License-Identifier: BSL-1.0
// sandbox-landlock-exec [--cgroup PROCS]... [--rlimit-as BYTES] [--user UID:GID] -- PROGRAM [ARG...]
// The landlock driver's launcher, started with a Landlock ruleset as descriptor 3 and a
// seccomp BPF program as descriptor 4, both made by the library: joins the cgroups (as the
// caller, maybe root), limits the address space, drops to the command's user, then sets
// no_new_privs, enforces the ruleset, loads the filter and executes PROGRAM. Linked
// statically and without a sanitizer: it costs one small exec.
#include "sys/landlock.hpp"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
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

}  // namespace

int main(int argc, char** argv)
{
    int i = 1;
    for (; i < argc && std::string_view(argv[i]) != "--"; ++i) {
        const std::string_view opt = argv[i];
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
        } else {
            fail("sandbox-landlock-exec: unknown option " + std::string(opt));
        }
    }
    if (i + 1 >= argc) fail("usage: sandbox-landlock-exec [--cgroup PROCS]... [--rlimit-as BYTES] [--user UID:GID] -- PROGRAM [ARG...]");
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
