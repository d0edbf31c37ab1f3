// SPDX-License-Identifier: BSL-1.0
#include "sys/landlock.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sandbox::detail::landlock {

namespace {

// The same numbers on every architecture (system calls from Linux 5.x on).
constexpr long nr_create_ruleset = 444;
constexpr long nr_add_rule = 445;
constexpr long nr_restrict_self = 446;
constexpr unsigned create_ruleset_version = 1u << 0;
constexpr int rule_path_beneath = 1;

// The kernel takes the prefix of this struct its ABI knows: 8 bytes (ABI 1-3), 16 (4-5), 24.
struct ruleset_attr {
    std::uint64_t handled_access_fs;
    std::uint64_t handled_access_net;
    std::uint64_t scoped;
};

struct __attribute__((packed)) path_beneath_attr {
    std::uint64_t allowed_access;
    std::int32_t parent_fd;
};

std::string errno_text(int e) { return std::strerror(e); }

}  // namespace

int abi()
{
    static const int version = [] {
        const long v = ::syscall(nr_create_ruleset, nullptr, 0, create_ruleset_version);
        return v < 0 ? 0 : static_cast<int>(v);
    }();
    return version;
}

std::uint64_t handled_fs(int abi)
{
    if (abi <= 0) return 0;
    std::uint64_t rights = (1ull << 13) - 1;
    if (abi >= 2) rights |= refer;
    if (abi >= 3) rights |= truncate;
    if (abi >= 5) rights |= ioctl_dev;
    return rights;
}

unique_fd make_ruleset(const ruleset_request& req, std::string& why)
{
    const int version = abi();
    if (version <= 0) {
        why = "Landlock is not enabled in this kernel";
        return {};
    }
    if (req.deny_tcp && version < 4) {
        why = "this kernel's Landlock (ABI " + std::to_string(version) + ") cannot restrict TCP (ABI 4 can)";
        return {};
    }
    if (req.scope && version < 6) {
        why = "this kernel's Landlock (ABI " + std::to_string(version) +
              ") cannot scope abstract unix sockets and signals (ABI 6 can)";
        return {};
    }
    const auto fs = handled_fs(version);
    ruleset_attr attr{fs, req.deny_tcp ? bind_tcp | connect_tcp : 0,
                      req.scope ? scope_abstract_unix_socket | scope_signal : 0};
    const std::size_t size = version >= 6 ? 24 : version >= 4 ? 16 : 8;
    unique_fd ruleset(static_cast<int>(::syscall(nr_create_ruleset, &attr, size, 0u)));
    if (!ruleset) {
        why = "landlock_create_ruleset: " + errno_text(errno);
        return {};
    }
    for (const auto& rule : req.paths) {
        unique_fd opened(rule.fd < 0 ? ::open(rule.path.c_str(), O_PATH | O_CLOEXEC) : -1);
        const int dir = rule.fd < 0 ? opened.get() : rule.fd;
        struct stat st {};
        if (dir < 0 || ::fstat(dir, &st) != 0) {
            if (!rule.required && errno == ENOENT) continue;
            why = "cannot open " + rule.path + ": " + errno_text(errno);
            return {};
        }
        path_beneath_attr pb{rule.access & fs, dir};
        if (!S_ISDIR(st.st_mode)) pb.allowed_access &= file_rights;
        if (pb.allowed_access == 0) continue;
        if (::syscall(nr_add_rule, ruleset.get(), rule_path_beneath, &pb, 0u) != 0) {
            why = "landlock_add_rule for " + rule.path + ": " + errno_text(errno);
            return {};
        }
    }
    return ruleset;
}

std::string restrict_self(int ruleset_fd)
{
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return "prctl(PR_SET_NO_NEW_PRIVS): " + errno_text(errno);
    if (::syscall(nr_restrict_self, ruleset_fd, 0u) != 0) return "landlock_restrict_self: " + errno_text(errno);
    return {};
}

}  // namespace sandbox::detail::landlock
