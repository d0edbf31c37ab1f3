// SPDX-License-Identifier: BSL-1.0
// The few mount operations the library makes on the host itself (root only).
#ifndef SANDBOX_SRC_SYS_MOUNTS_HPP
#define SANDBOX_SRC_SYS_MOUNTS_HPP

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>

namespace sandbox::detail {

/// Mounts a tmpfs of at most `bytes` over `dir` (nosuid, nodev, mode 0700, owned by
/// uid:gid): whatever is written below `dir` then fails with ENOSPC past the limit and never
/// reaches the disk. Returns why not, or empty.
std::string mount_bounded_tmpfs(const std::filesystem::path& dir, std::uint64_t bytes, uid_t uid, gid_t gid);

/// Whether `dir` is the root of a mount other than its parent's (a tmpfs over it).
bool is_mount_root(const std::filesystem::path& dir) noexcept;

/// Detaches the mount at `dir` (lazily: it goes once nothing uses it). Never follows a
/// symlink. Returns false when nothing was mounted there or it could not be detached.
bool detach_mount(const std::filesystem::path& dir) noexcept;

}  // namespace sandbox::detail

#endif
