// SPDX-License-Identifier: BSL-1.0
// Seccomp filters the library loads itself (the containers' engines load their own
// profiles, src/drivers/seccomp_profile.hpp). Each refuses a few calls and allows the rest.
#ifndef SANDBOX_SRC_SYS_SECCOMP_FILTER_HPP
#define SANDBOX_SRC_SYS_SECCOMP_FILTER_HPP

#include <sandbox/detail/unique_fd.hpp>

#include <string>

namespace sandbox::detail {

/// What socket(2) may make.
enum class socket_rule {
    any,      ///< every family
    no_unix,  ///< every family but AF_UNIX, whose connect() by path Landlock does not fence
    none,     ///< no socket at all (socketpair(AF_UNIX) still works)
};

/// What a filter refuses.
struct filter_spec {
    /// Set-id files: refused with EPERM are chmod, fchmod, fchmodat and fchmodat2 with
    /// S_ISUID or S_ISGID; mknod and mknodat with them; open, openat and creat creating a file
    /// (O_CREAT or O_TMPFILE) with them; refused with ENOSYS, as a kernel without them would,
    /// openat2 (its mode is out of a filter's reach). What makes an idmapped writable path
    /// safe when its owner is root.
    bool setid_files = false;
    /// What a command never needs and an attacker wants, as Docker's default profile refuses
    /// it: new namespaces (clone and unshare with a namespace flag, setns; clone3, whose flags
    /// a filter cannot read, fails with ENOSYS and the C library falls back to clone), keyctl,
    /// add_key, request_key, bpf, userfaultfd, perf_event_open, the kernel module and kexec
    /// calls, every mount call, open_by_handle_at, swapon, swapoff, reboot, acct, quotactl,
    /// syslog, iopl and ioperm.
    bool hardening = false;
    socket_rule sockets = socket_rule::any;
};

/// Writes the filter as a BPF program (what `bwrap --seccomp FD` and seccomp(2) take) to
/// `fd`, for this machine's architecture; calls of another architecture kill the caller.
/// io_uring_setup fails with ENOSYS in every filter but the empty one: its operations would
/// bypass it. Returns why not, or empty.
std::string write_filter(int fd, const filter_spec& spec);

/// The same program in memory, made once per process and spec; empty with `why` when it
/// cannot be made.
const std::string& filter_program(const filter_spec& spec, std::string& why);

/// The same program in a sealed memory file (close-on-exec), to hand to a launched program
/// as a descriptor; unset with `why` when it cannot be made.
unique_fd sealed_program(const filter_spec& spec, std::string& why);

/// Loads a filter into this process (and what it executes), setting no_new_privs. Returns
/// why not, or empty.
std::string load_filter(const filter_spec& spec);

/// The set-id filter alone (sandbox-seccomp-exec, firejail's runs).
inline std::string write_setid_filter(int fd) { return write_filter(fd, {.setid_files = true}); }
inline std::string load_setid_filter() { return load_filter({.setid_files = true}); }

}  // namespace sandbox::detail

#endif
