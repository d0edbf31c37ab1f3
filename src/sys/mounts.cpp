// SPDX-License-Identifier: BSL-1.0
#include "sys/mounts.hpp"

#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
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

int open_no_symlinks(const char* path) noexcept
{
    open_how how{};
    how.flags = O_PATH | O_CLOEXEC;
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    return static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how));
}

std::string unprivileged_user_namespaces()
{
    auto setting = [](const char* file) -> long {
        const int fd = ::open(file, O_RDONLY | O_CLOEXEC);
        if (fd < 0) return -1;
        char buf[32] = {};
        const auto n = ::read(fd, buf, sizeof buf - 1);
        ::close(fd);
        return n > 0 ? std::strtol(buf, nullptr, 10) : -1;
    };
    if (setting("/proc/sys/user/max_user_namespaces") == 0) return "user.max_user_namespaces is 0";
    if (setting("/proc/sys/kernel/unprivileged_userns_clone") == 0) return "kernel.unprivileged_userns_clone is 0";
    if (setting("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1)
        return "kernel.apparmor_restrict_unprivileged_userns is 1";
    return {};
}

pinned_path open_pinned(const std::string& path, std::string& why)
{
    pinned_path p;
    p.fd = unique_fd(open_no_symlinks(path.c_str()));
    struct stat st {};
    if (!p.fd || ::fstat(p.fd.get(), &st) != 0) {
        const int err = errno;
        why = err == ELOOP ? "has a symbolic link on its way now (a component was replaced since the policy was checked)"
                           : "cannot be opened: " + std::error_code(err, std::system_category()).message();
        p.fd.reset();
        errno = err;
        return p;
    }
    p.dev = st.st_dev;
    p.ino = st.st_ino;
    return p;
}

std::string attach_clone(int fd, const std::filesystem::path& target, bool read_only)
{
    const auto fail = [&](const char* step) {
        return std::string(step) + " for " + target.string() + ": " + std::error_code(errno, std::system_category()).message();
    };
    unique_fd tree(static_cast<int>(::syscall(SYS_open_tree, fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH)));
    if (!tree) return fail("open_tree");
    mount_attr attr{};
    attr.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (read_only ? MOUNT_ATTR_RDONLY : 0);
    if (::syscall(SYS_mount_setattr, tree.get(), "", AT_EMPTY_PATH, &attr, sizeof attr) != 0) return fail("mount_setattr");
    if (::syscall(SYS_move_mount, tree.get(), "", AT_FDCWD, target.c_str(), MOVE_MOUNT_F_EMPTY_PATH) != 0)
        return fail("move_mount");
    return {};
}

bool detach_mount(const std::filesystem::path& dir) noexcept
{
    return ::umount2(dir.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW) == 0;
}

}  // namespace sandbox::detail
