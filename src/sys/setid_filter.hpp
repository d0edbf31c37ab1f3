// SPDX-License-Identifier: BSL-1.0
// A seccomp filter that refuses to make set-id files: what lets a command write through an
// idmapped mount (where its files belong to the directory's owner, possibly root) without
// leaving a setuid program on the host. Everything else is allowed.
#ifndef SANDBOX_SRC_SYS_SETID_FILTER_HPP
#define SANDBOX_SRC_SYS_SETID_FILTER_HPP

#include <string>

namespace sandbox::detail {

/// Writes the filter as a BPF program (what `bwrap --seccomp FD` and seccomp(2) take) to
/// `fd`, for this machine's architecture. Refused with EPERM: chmod, fchmod, fchmodat and
/// fchmodat2 with S_ISUID or S_ISGID; mknod and mknodat with them; open, openat and creat
/// creating a file (O_CREAT or O_TMPFILE) with them. Refused with ENOSYS, as a kernel
/// without them would: openat2 (its mode is out of a filter's reach) and io_uring_setup
/// (its operations bypass the filter). Returns why not, or empty.
std::string write_setid_filter(int fd);

/// Loads the same filter into this process (and what it executes), setting no_new_privs.
/// Returns why not, or empty.
std::string load_setid_filter();

}  // namespace sandbox::detail

#endif
