// SPDX-License-Identifier: BSL-1.0
#include "sys/syscall_rules.hpp"

#include <array>
#include <cerrno>

namespace sandbox::detail {

namespace {

using namespace std::string_view_literals;

// The calls of each row. Docker's default profile refuses all of these to a container without
// capabilities; the table makes every driver refuse them, whatever its tool allows.
constexpr std::array io_uring_calls{"io_uring_setup"sv, "io_uring_enter"sv, "io_uring_register"sv};
constexpr std::array key_calls{"keyctl"sv, "add_key"sv, "request_key"sv};
constexpr std::array bpf_calls{"bpf"sv};
constexpr std::array perf_calls{"perf_event_open"sv};
constexpr std::array userfaultfd_calls{"userfaultfd"sv};
constexpr std::array mount_calls{"mount"sv,   "umount2"sv, "pivot_root"sv, "open_tree"sv,      "move_mount"sv,
                                 "fsopen"sv,  "fsconfig"sv, "fsmount"sv,   "fspick"sv,         "mount_setattr"sv};
constexpr std::array namespace_calls{"clone"sv, "clone3"sv, "unshare"sv, "setns"sv};
constexpr std::array socket_calls{"socket"sv};
constexpr std::array setid_calls{"chmod"sv,   "fchmod"sv, "fchmodat"sv, "fchmodat2"sv, "mknod"sv,
                                 "mknodat"sv, "creat"sv,  "open"sv,     "openat"sv,    "openat2"sv};
constexpr std::array kernel_calls{"init_module"sv,   "finit_module"sv,      "delete_module"sv, "kexec_load"sv,
                                  "kexec_file_load"sv, "open_by_handle_at"sv, "name_to_handle_at"sv,
                                  "swapon"sv,        "swapoff"sv,           "reboot"sv,        "acct"sv,
                                  "quotactl"sv,      "quotactl_fd"sv,       "syslog"sv,        "iopl"sv,
                                  "ioperm"sv,        "lookup_dcookie"sv,    "uselib"sv,        "_sysctl"sv,
                                  "settimeofday"sv,  "clock_settime"sv,     "clock_adjtime"sv, "adjtimex"sv,
                                  "vhangup"sv};

constexpr std::array<syscall_rule, 11> rules{{
    {"io_uring", "io_uring: its operations (IORING_OP_SOCKET, IORING_OP_OPENAT...) bypass every seccomp rule",
     rule_shape::calls, rule_scope::always, ENOSYS, io_uring_calls},
    {"keys", "the kernel's key retention service (keyctl, add_key, request_key), which namespaces do not separate",
     rule_shape::calls, rule_scope::always, EPERM, key_calls},
    {"bpf", "loading eBPF programs and maps", rule_shape::calls, rule_scope::always, EPERM, bpf_calls},
    {"perf", "perf_event_open: the kernel's performance counters", rule_shape::calls, rule_scope::always, EPERM,
     perf_calls},
    {"userfaultfd", "userfaultfd, the usual tool for winning kernel races", rule_shape::calls, rule_scope::always, EPERM,
     userfaultfd_calls},
    {"mounts", "every mount call (mount, umount2, pivot_root, the new mount API)", rule_shape::calls,
     rule_scope::always, EPERM, mount_calls},
    {"namespaces", "new namespaces: clone and unshare with a namespace flag, setns (clone3, whose flags a filter "
                   "cannot read, answers ENOSYS and the C library falls back to clone)",
     rule_shape::namespace_flags, rule_scope::always, EPERM, namespace_calls},
    {"setid_files", "set-id files: chmod, mknod and file creation with S_ISUID or S_ISGID (openat2, whose mode a "
                    "filter cannot read, answers ENOSYS and the C library falls back to openat)",
     rule_shape::setid_modes, rule_scope::always, EPERM, setid_calls},
    {"kernel", "the kernel's own controls: modules, kexec, handles to files by number, swap, reboot, process "
               "accounting, quotas, the kernel log, port I/O, the clock",
     rule_shape::calls, rule_scope::always, EPERM, kernel_calls},
    {"unix_sockets", "socket(AF_UNIX) where the host's file system is visible: a path socket (docker.sock, munge) "
                     "cannot be fenced by path, so the family is refused (socketpair still works)",
     rule_shape::unix_socket, rule_scope::host_filesystem, EACCES, socket_calls},
    {"sockets", "every socket() when the network is off and the command shares the host's network (socketpair "
                "still works)",
     rule_shape::any_socket, rule_scope::host_network, EACCES, socket_calls},
}};

}  // namespace

std::span<const syscall_rule> syscall_rules() noexcept { return rules; }

bool rule_applies(const syscall_rule& rule, const rule_context& ctx) noexcept
{
    switch (rule.scope) {
    case rule_scope::always: return true;
    case rule_scope::host_filesystem: return ctx.host_filesystem;
    case rule_scope::host_network: return ctx.host_network && !ctx.network_enabled;
    case rule_scope::caller_owned: return ctx.caller_owned;
    }
    return false;
}

std::uint32_t applicable_rules(const rule_context& ctx) noexcept
{
    std::uint32_t bits = 0;
    const auto all = syscall_rules();
    for (std::size_t i = 0; i < all.size(); ++i)
        if (rule_applies(all[i], ctx)) bits |= 1u << i;
    return bits;
}

}  // namespace sandbox::detail
