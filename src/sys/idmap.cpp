// SPDX-License-Identifier: BSL-1.0
#include "sys/idmap.hpp"

#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>

namespace sandbox::detail {

namespace {

std::string errno_text(int err) { return std::error_code(err, std::system_category()).message(); }

class fd_guard {
public:
    explicit fd_guard(int fd = -1) : fd_(fd) {}
    ~fd_guard()
    {
        if (fd_ >= 0) ::close(fd_);
    }
    fd_guard(const fd_guard&) = delete;
    fd_guard& operator=(const fd_guard&) = delete;
    int get() const { return fd_; }
    void reset(int fd)
    {
        if (fd_ >= 0) ::close(fd_);
        fd_ = fd;
    }

private:
    int fd_;
};

bool write_all(const std::string& path, const std::string& text)
{
    fd_guard fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
    return fd.get() >= 0 && ::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size());
}

// A user namespace whose one-id maps say `owner` (inside) is `shown` (outside): the mapping
// an idmapped mount applies. It needs a process to exist in: a child made for the purpose,
// which only waits for the pipe to close (raw system calls only: it is a copy of a process
// that may have other threads) and is reaped at once.
int mapping_namespace(id_pair owner, id_pair shown, std::string& why)
{
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
        why = "pipe: " + errno_text(errno);
        return -1;
    }
    fd_guard rd(pipe_fds[0]), wr(pipe_fds[1]);
    const long pid = ::syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, nullptr, nullptr, nullptr, nullptr);
    if (pid == 0) {
        ::syscall(SYS_close, pipe_fds[1]);
        char c;
        ::syscall(SYS_read, pipe_fds[0], &c, 1);
        ::syscall(SYS_exit_group, 0);
    }
    if (pid < 0) {
        why = "clone(CLONE_NEWUSER): " + errno_text(errno);
        return -1;
    }
    const std::string proc = "/proc/" + std::to_string(pid) + "/";
    int ns = -1;
    if (!write_all(proc + "uid_map", std::to_string(owner.uid) + " " + std::to_string(shown.uid) + " 1\n"))
        why = "cannot write uid_map: " + errno_text(errno);
    else if (!write_all(proc + "setgroups", "deny") ||
             !write_all(proc + "gid_map", std::to_string(owner.gid) + " " + std::to_string(shown.gid) + " 1\n"))
        why = "cannot write gid_map: " + errno_text(errno);
    else if ((ns = ::open((proc + "ns/user").c_str(), O_RDONLY | O_CLOEXEC)) < 0)
        why = "cannot open its user namespace: " + errno_text(errno);
    wr.reset(-1);  // the child's read returns: it exits
    int status = 0;
    while (::waitpid(static_cast<pid_t>(pid), &status, __WALL) < 0 && errno == EINTR) {
    }
    return ns;
}

}  // namespace

std::string attach_idmapped(int source, const std::string& name, const std::filesystem::path& target, id_pair owner,
                            id_pair shown)
{
    std::string why;
    fd_guard ns(mapping_namespace(owner, shown, why));
    if (ns.get() < 0) return "cannot map uid " + std::to_string(owner.uid) + " to " + std::to_string(shown.uid) + ": " + why;
    fd_guard tree(static_cast<int>(
        ::syscall(SYS_open_tree, source, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH)));
    if (tree.get() < 0) return "cannot clone the mount of " + name + ": " + errno_text(errno);
    mount_attr attr{};
    attr.attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
    attr.userns_fd = static_cast<__u64>(ns.get());
    if (::syscall(SYS_mount_setattr, tree.get(), "", AT_EMPTY_PATH, &attr, sizeof attr) != 0)
        return "cannot idmap " + name + " (its file system may not support idmapped mounts): " +
               errno_text(errno);
    if (::syscall(SYS_move_mount, tree.get(), "", AT_FDCWD, target.c_str(), MOVE_MOUNT_F_EMPTY_PATH) != 0)
        return "cannot attach the idmapped " + name + " at " + target.string() + ": " + errno_text(errno);
    return {};
}

}  // namespace sandbox::detail
