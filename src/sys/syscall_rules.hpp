// SPDX-License-Identifier: BSL-1.0
// What a sandboxed command may not do, as one table of system calls. Every isolating driver
// applies the same rows: bubblewrap (bwrap --seccomp), firejail (sandbox-seccomp-exec in the
// jail), landlock (the launch loads it before the command), docker and podman (rules added to
// the engines' seccomp profile). seccomp_filter.cpp compiles the rows to BPF,
// drivers/seccomp_profile.cpp to an OCI profile; doc/isolation.md lists them, and the attack
// suite tries one call of each row under each driver.
#ifndef SANDBOX_SRC_SYS_SYSCALL_RULES_HPP
#define SANDBOX_SRC_SYS_SYSCALL_RULES_HPP

#include <cstdint>
#include <span>
#include <string_view>

namespace sandbox::detail {

/// How a row's calls are matched.
enum class rule_shape {
    calls,             ///< every call of the row, whatever its arguments
    namespace_flags,   ///< clone and unshare with a namespace flag; setns; clone3 (flags out of reach: ENOSYS)
    unix_socket,       ///< socket(AF_UNIX, ...)
    any_socket,        ///< socket(...) of any family (socketpair still works)
    setid_modes,       ///< chmod, mknod and file creation with S_ISUID or S_ISGID; openat2 (mode out of reach: ENOSYS)
    supervised,        ///< handed to the launch's supervisor, which allows it inside the writable paths only
};

/// When a row applies, beyond always.
enum class rule_scope {
    always,
    host_filesystem,  ///< the command sees the host's file system (firejail, landlock): its unix sockets too
    host_network,     ///< the command shares the host's network and the policy turns it off (landlock)
    caller_owned,     ///< the command runs as the caller, who owns files outside the sandbox (landlock, unprivileged)
};

struct syscall_rule {
    std::string_view id;    ///< short name, used by the docs and the tests ("io_uring")
    std::string_view what;  ///< what the row keeps a command from doing, for the docs
    rule_shape shape = rule_shape::calls;
    rule_scope scope = rule_scope::always;
    int error = 1;  ///< errno returned (EPERM unless said)
    /// The calls, by name (libseccomp's and the OCI profile's names). Names this machine's
    /// libseccomp does not know are skipped by the BPF compiler (the kernel then has no such call).
    std::span<const std::string_view> calls;
};

/// The table, in the order doc/isolation.md lists it.
std::span<const syscall_rule> syscall_rules() noexcept;

/// What decides which rows apply to a launch.
struct rule_context {
    bool host_filesystem = false;  ///< the command sees the host's paths (firejail, landlock)
    bool host_network = false;     ///< the command shares the host's network namespace (landlock)
    bool network_enabled = false;  ///< the policy's network_enabled()
    bool caller_owned = false;     ///< the command runs as a caller who owns files outside (landlock, unprivileged)
};

/// Whether `rule` applies to a launch in `ctx`.
bool rule_applies(const syscall_rule& rule, const rule_context& ctx) noexcept;

/// The rows that apply, as a bit set (bit i: syscall_rules()[i]): the key of a compiled filter.
std::uint32_t applicable_rules(const rule_context& ctx) noexcept;

}  // namespace sandbox::detail

#endif
