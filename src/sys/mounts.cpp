// SPDX-License-Identifier: BSL-1.0
#include "sys/mounts.hpp"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <cerrno>
#include <system_error>

namespace sandbox::detail {

std::string mount_bounded_tmpfs(const std::filesystem::path& dir, std::uint64_t bytes, uid_t uid, gid_t gid)
{
    const std::string options = "size=" + std::to_string(bytes) + ",mode=0700,uid=" + std::to_string(uid) +
                                ",gid=" + std::to_string(gid);
    if (::mount("sandbox-disk", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) == 0) return {};
    return "cannot mount a " + std::to_string(bytes >> 20) + "M tmpfs over " + dir.string() + ": " +
           std::error_code(errno, std::system_category()).message();
}

bool is_mount_root(const std::filesystem::path& dir) noexcept
{
    struct statx st {};
    if (::statx(AT_FDCWD, dir.c_str(), AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &st) != 0) return false;
    return (st.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) && (st.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

bool detach_mount(const std::filesystem::path& dir) noexcept
{
    return ::umount2(dir.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW) == 0;
}

}  // namespace sandbox::detail
