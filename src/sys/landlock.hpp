// SPDX-License-Identifier: BSL-1.0
// Landlock rulesets, made in the library's process and handed to the child as a
// descriptor: the child only restricts itself with it (src/helpers/landlock_exec.cpp).
// The constants are the kernel's ABI, defined here because the headers of older
// distributions stop before the features used (TCP rules: ABI 4, scoping: ABI 6).
#ifndef SANDBOX_SRC_SYS_LANDLOCK_HPP
#define SANDBOX_SRC_SYS_LANDLOCK_HPP

#include <sandbox/detail/unique_fd.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace sandbox::detail::landlock {

// File-system access rights (include/uapi/linux/landlock.h), with the ABI that added them.
inline constexpr std::uint64_t execute = 1ull << 0;
inline constexpr std::uint64_t write_file = 1ull << 1;
inline constexpr std::uint64_t read_file = 1ull << 2;
inline constexpr std::uint64_t read_dir = 1ull << 3;
inline constexpr std::uint64_t remove_dir = 1ull << 4;
inline constexpr std::uint64_t remove_file = 1ull << 5;
inline constexpr std::uint64_t make_char = 1ull << 6;
inline constexpr std::uint64_t make_dir = 1ull << 7;
inline constexpr std::uint64_t make_reg = 1ull << 8;
inline constexpr std::uint64_t make_sock = 1ull << 9;
inline constexpr std::uint64_t make_fifo = 1ull << 10;
inline constexpr std::uint64_t make_block = 1ull << 11;
inline constexpr std::uint64_t make_sym = 1ull << 12;
inline constexpr std::uint64_t refer = 1ull << 13;      // ABI 2
inline constexpr std::uint64_t truncate = 1ull << 14;   // ABI 3
inline constexpr std::uint64_t ioctl_dev = 1ull << 15;  // ABI 5

/// What a rule on a regular file (rather than a directory) may grant.
inline constexpr std::uint64_t file_rights = execute | write_file | read_file | truncate | ioctl_dev;
/// Read and execute: the system's directories and the policy's readable paths.
inline constexpr std::uint64_t read_only = execute | read_file | read_dir;
/// Everything: the work dir, its /tmp and the policy's writable paths.
inline constexpr std::uint64_t read_write = (1ull << 16) - 1;

// Network rights (ABI 4) and scopes (ABI 6).
inline constexpr std::uint64_t bind_tcp = 1ull << 0;
inline constexpr std::uint64_t connect_tcp = 1ull << 1;
inline constexpr std::uint64_t scope_abstract_unix_socket = 1ull << 0;
inline constexpr std::uint64_t scope_signal = 1ull << 1;

/// The kernel's Landlock ABI version: 0 when Landlock is missing or disabled (asked once).
int abi();

/// The file-system rights an ABI handles: what a ruleset denies unless a rule grants it.
std::uint64_t handled_fs(int abi);

struct path_rule {
    std::string path;
    std::uint64_t access = 0;
    bool required = true;  ///< false: skipped when missing (a system directory this host lacks)
    int fd = -1;           ///< the path held open already (O_PATH), used instead of opening it
};

struct ruleset_request {
    std::vector<path_rule> paths;
    bool deny_tcp = false;  ///< bind and connect refused for every port (ABI 4)
    bool scope = false;     ///< abstract unix sockets and signals kept inside (ABI 6)
};

/// A ruleset for `req` at this kernel's ABI (close-on-exec), or an unset descriptor and
/// `why`, which names the path or the step that failed.
unique_fd make_ruleset(const ruleset_request& req, std::string& why);

/// Sets no_new_privs and enforces the ruleset on this thread (and what it executes).
/// Returns why not, or empty.
std::string restrict_self(int ruleset_fd);

}  // namespace sandbox::detail::landlock

#endif
