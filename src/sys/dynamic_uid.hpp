// SPDX-License-Identifier: BSL-1.0
// A uid of its own for each run of a root caller, from a reserved range, as systemd's
// DynamicUser= gives each service one: no two runs alive at once on the machine share a uid,
// so none can read, change or signal another's files and processes by the permissions a
// shared uid would grant. A uid is held by an flock on a file named after it, in a directory
// only root can write; the kernel drops the lock when its holder dies, so a crashed
// process's uids come back by themselves.
#ifndef SANDBOX_SRC_SYS_DYNAMIC_UID_HPP
#define SANDBOX_SRC_SYS_DYNAMIC_UID_HPP

#include <sandbox/detail/unique_fd.hpp>

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>

namespace sandbox::detail {

/// The reserved range: 65,536 uids from 2,147,352,576 (0x7FFE0000), above the ranges
/// distributions hand to users and to user namespaces (/etc/subuid), below 2^31.
inline constexpr uid_t dynamic_uid_first = 0x7FFE0000;
inline constexpr uid_t dynamic_uid_count = 0x10000;

/// Whether `uid` is in the reserved range.
constexpr bool is_dynamic_uid(uid_t uid) noexcept
{
    return uid >= dynamic_uid_first && uid - dynamic_uid_first < dynamic_uid_count;
}

/// One uid of the range, held until destroyed; its gid has the same number.
class run_uid {
public:
    /// Takes a free uid; nullopt, with `why` (and `err`, the system's error when there is one:
    /// descriptors ran out), when none can be taken (not root, or the lock directory cannot be
    /// made).
    static std::optional<run_uid> acquire(std::string& why, int& err);

    run_uid(run_uid&&) noexcept = default;
    run_uid& operator=(run_uid&&) noexcept = default;

    uid_t uid() const noexcept { return uid_; }
    gid_t gid() const noexcept { return static_cast<gid_t>(uid_); }

    /// Where the locks are: /run/sandbox/uids, or <TMPDIR>/sandbox-uids without /run.
    static std::filesystem::path lock_dir();

private:
    run_uid(unique_fd lock, uid_t uid) : lock_(std::move(lock)), uid_(uid) {}
    unique_fd lock_;
    uid_t uid_ = 0;
};

}  // namespace sandbox::detail

#endif
