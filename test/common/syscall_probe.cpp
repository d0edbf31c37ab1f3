// SPDX-License-Identifier: BSL-1.0
// sandbox_syscall_probe ROW...: tries one call of each named row of the syscall table
// (src/sys/syscall_rules.hpp) and prints "ROW allowed" or "ROW refused <errno>". Static, so it
// runs inside any sandbox, the busybox containers included. The attack suite runs it under
// every driver and expects "refused" for each row the driver's launch applies.
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/perf_event.h>
#include <linux/userfaultfd.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>

namespace {

#ifndef SYS_fsopen
#define SYS_fsopen 430
#endif

// The result of one attempt: >= 0 made something (closed here), < 0 failed with errno.
long attempt(std::string_view row)
{
    if (row == "io_uring") {
        io_uring_params p{};
        return ::syscall(SYS_io_uring_setup, 2, &p);
    }
    if (row == "keys") {
        // keyctl is what podman's own profile lets through; add_key what docker's did.
        const long joined = ::syscall(SYS_keyctl, 1 /* KEYCTL_JOIN_SESSION_KEYRING */, "sandbox-probe");
        if (joined >= 0) return joined;
        return ::syscall(SYS_add_key, "user", "sandbox-probe", "x", 1, -2 /* KEY_SPEC_PROCESS_KEYRING */);
    }
    if (row == "bpf") {
        bpf_attr a{};
        a.map_type = BPF_MAP_TYPE_ARRAY;
        a.key_size = 4;
        a.value_size = 4;
        a.max_entries = 1;
        return ::syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof a);
    }
    if (row == "perf") {
        perf_event_attr a{};
        a.type = PERF_TYPE_SOFTWARE;
        a.size = sizeof a;
        a.config = PERF_COUNT_SW_TASK_CLOCK;
        a.exclude_kernel = 1;
        a.exclude_hv = 1;
        return ::syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
    }
    if (row == "userfaultfd") return ::syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
    if (row == "mounts") return ::syscall(SYS_fsopen, "tmpfs", 0);
    if (row == "namespaces") return ::unshare(CLONE_NEWUSER);
    if (row == "setid_files") {
        // In the working directory, which is writable in every sandbox.
        const char* name = "sandbox-probe-setid";
        ::unlink(name);
        const int fd = ::open(name, O_WRONLY | O_CREAT | O_CLOEXEC, 0755);
        if (fd < 0) return -1;
        ::close(fd);
        const long rc = ::chmod(name, 04755);
        const int err = errno;
        struct stat st {};
        // Refused, or (some other layer) allowed without effect: the bit must not be there.
        const bool has_bit = ::stat(name, &st) == 0 && (st.st_mode & S_ISUID);
        ::unlink(name);
        errno = err;
        if (rc == 0 && !has_bit) {
            errno = EPERM;
            return -1;
        }
        return rc;
    }
    if (row == "kernel") {
        struct {
            unsigned int bytes;
            int type;
            unsigned char f[128];
        } handle{128, 0, {}};
        int mount_id = 0;
        return ::syscall(SYS_name_to_handle_at, AT_FDCWD, ".", &handle, &mount_id, 0);
    }
    if (row == "unix_sockets") return ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (row == "sockets") return ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    errno = EINVAL;
    return -2;
}

}  // namespace

int main(int argc, char** argv)
{
    int status = 0;
    for (int i = 1; i < argc; ++i) {
        errno = 0;
        const long rc = attempt(argv[i]);
        if (rc == -2) {
            std::printf("%s unknown\n", argv[i]);
            status = 2;
        } else if (rc >= 0) {
            std::printf("%s allowed\n", argv[i]);
            if (rc > 2) ::close(static_cast<int>(rc));
        } else {
            std::printf("%s refused %s\n", argv[i], strerrorname_np(errno) ? strerrorname_np(errno) : "?");
        }
    }
    std::fflush(stdout);
    return status;
}
