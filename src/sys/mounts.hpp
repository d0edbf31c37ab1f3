// SPDX-License-Identifier: BSL-1.0
// The few mount operations the library makes on the host itself (root only).
#ifndef SANDBOX_SRC_SYS_MOUNTS_HPP
#define SANDBOX_SRC_SYS_MOUNTS_HPP

#include <sys/types.h>

#include <sandbox/detail/unique_fd.hpp>

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

/// A path the policy names, held open (O_PATH) as it was when the launch checked it. Its
/// real path has no symbolic link, so one met on the way means a component was swapped
/// since (a directory replaced by a link elsewhere): the open fails with ELOOP rather than
/// follow it. Every mount and rule made for the path is made from the descriptor, so a swap
/// after the open moves nothing.
struct pinned_path {
    unique_fd fd;
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
};

/// Opens `path` as pinned_path, or returns an unset descriptor and `why` (errno kept).
pinned_path open_pinned(const std::string& path, std::string& why);

/// Opens `path` (absolute) without following any symbolic link on the way; -1 and errno on failure.
int open_no_symlinks(const char* path) noexcept;

/// Whether this kernel lets an unprivileged process make a user namespace, by its settings
/// (user.max_user_namespaces, Debian's kernel.unprivileged_userns_clone, Ubuntu's
/// kernel.apparmor_restrict_unprivileged_userns): an empty string, or why not.
std::string unprivileged_user_namespaces();

/// Attaches a copy of the mount of the pinned directory `fd` (not its submounts) at `target`,
/// nosuid and nodev, read-only if asked (root only). Returns why not, or empty.
std::string attach_clone(int fd, const std::filesystem::path& target, bool read_only);

}  // namespace sandbox::detail

#endif
