// SPDX-License-Identifier: BSL-1.0
// The private work dir of a run: its name, creation, removal, and the fences on the paths
// inside it.
#include "drivers/support.hpp"

#include <sandbox/errors.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <random>
#include <system_error>

namespace sandbox::detail {

namespace {

boost::system::error_code system_code(int err) { return {err, boost::system::system_category()}; }

}  // namespace

std::string random_sandbox_name()
{
    thread_local std::mt19937_64 gen = [] {
        std::random_device rd;
        std::seed_seq seq{rd(), rd(), rd(), rd()};
        return std::mt19937_64(seq);
    }();
    static constexpr char hex[] = "0123456789abcdef";
    std::string name = "sandbox-";
    for (int i = 0; i < 24; ++i) name += hex[gen() & 15];
    return name;
}

std::filesystem::path create_work_dir(const std::filesystem::path& base, const std::string& name, uid_t owner,
                                      gid_t group, std::string_view error_name)
{
    struct stat st {};
    if (::stat(base.c_str(), &st) != 0)
        fail_start(error_name, "base directory " + base.string() + " is invalid: " + errno_text(errno),
             errc::bad_working_directory);
    if (!S_ISDIR(st.st_mode))
        fail_start(error_name, "base directory " + base.string() + " is not a directory", errc::bad_working_directory);
    const auto dir = base / name;
    // mkdir applies the umask; chmod makes 0700 exact.
    if (::mkdir(dir.c_str(), 0700) != 0) {
        const int err = errno;
        fail_start(error_name, "cannot create work dir " + dir.string() + ": " + errno_text(err), system_code(err));
    }
    if (::chmod(dir.c_str(), 0700) != 0 ||
        (owner != static_cast<uid_t>(-1) && ::chown(dir.c_str(), owner, group) != 0)) {
        const int err = errno;
        ::rmdir(dir.c_str());
        fail_start(error_name, "cannot prepare work dir " + dir.string() + ": " + errno_text(err), system_code(err));
    }
    return dir;
}

namespace {

struct dir_id {
    dev_t dev;
    ino_t ino;
};

bool same(const struct stat& st, const dir_id& id) { return st.st_dev == id.dev && st.st_ino == id.ino; }

// Opens a subdirectory without following links; one a command made unreadable is made
// ours again first (it is being deleted anyway).
int open_subdir(int parent, const char* name)
{
    int fd = ::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == EACCES && ::fchmodat(parent, name, 0700, 0) == 0)
        fd = ::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    return fd;
}

bool unlink_entry(int parent, const char* name, int flags)
{
    if (::unlinkat(parent, name, flags) == 0) return true;
    // A directory the command made read-only: take write permission back and retry.
    return errno == EACCES && ::fchmod(parent, 0700) == 0 && ::unlinkat(parent, name, flags) == 0;
}

}  // namespace

bool remove_tree(const std::filesystem::path& dir) noexcept
{
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0) return errno == ENOENT;
    if (!S_ISDIR(st.st_mode)) return ::unlink(dir.c_str()) == 0;  // a link is removed, never followed

    // Depth first, holding one directory open at a time: a command can nest directories
    // deeper than the descriptor limit. Going up re-opens "..", checked against the identity
    // recorded on the way down; entries that cannot be removed are remembered and skipped.
    struct level {
        std::string name;  // in the parent
        dir_id id;
        std::vector<std::string> stuck;
    };
    std::vector<level> levels;
    int cur = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (cur < 0 || ::fstat(cur, &st) != 0) {
        if (cur >= 0) ::close(cur);
        // Out of descriptors (EMFILE), as when a launch fails for want of them: a work dir
        // that nothing was written to yet still goes, since rmdir needs no descriptor.
        return ::rmdir(dir.c_str()) == 0;
    }
    levels.push_back({{}, {st.st_dev, st.st_ino}, {}});
    bool ok = true;
    for (;;) {
        // Remove the plain entries of `cur`; stop at the first subdirectory to descend into.
        std::string descend;
        {
            const int listing = ::dup(cur);
            DIR* d = listing < 0 ? nullptr : ::fdopendir(listing);
            if (!d) {
                if (listing >= 0) ::close(listing);
                ok = false;
            }
            while (d) {
                dirent* e = ::readdir(d);
                if (!e) break;
                const std::string name = e->d_name;
                if (name == "." || name == "..") continue;
                auto& stuck = levels.back().stuck;
                if (std::find(stuck.begin(), stuck.end(), name) != stuck.end()) continue;
                struct stat est {};
                if (::fstatat(cur, name.c_str(), &est, AT_SYMLINK_NOFOLLOW) != 0) continue;
                if (S_ISDIR(est.st_mode)) {
                    descend = name;
                    break;
                }
                if (!unlink_entry(cur, name.c_str(), 0)) {
                    stuck.push_back(name);
                    ok = false;
                }
            }
            if (d) ::closedir(d);
        }
        if (!descend.empty()) {
            const int sub = open_subdir(cur, descend.c_str());
            struct stat sst {};
            if (sub < 0 || ::fstat(sub, &sst) != 0) {
                if (sub >= 0) ::close(sub);
                levels.back().stuck.push_back(descend);
                ok = false;
                continue;
            }
            ::close(cur);
            cur = sub;
            levels.push_back({descend, {sst.st_dev, sst.st_ino}, {}});
            continue;
        }
        // `cur` is as empty as it gets: go up and remove it.
        if (levels.size() == 1) break;
        const int parent = ::openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct stat pst {};
        if (parent < 0 || ::fstat(parent, &pst) != 0 || !same(pst, levels[levels.size() - 2].id)) {
            if (parent >= 0) ::close(parent);
            ok = false;  // moved under us: stop rather than delete elsewhere
            break;
        }
        ::close(cur);
        cur = parent;
        const std::string name = levels.back().name;
        levels.pop_back();
        if (!unlink_entry(cur, name.c_str(), AT_REMOVEDIR)) {
            levels.back().stuck.push_back(name);
            ok = false;
        }
    }
    ::close(cur);
    return ::rmdir(dir.c_str()) == 0 && ok;
}

std::filesystem::path first_unsearchable(const std::filesystem::path& path, uid_t uid, gid_t gid)
{
    std::error_code ec;
    auto p = std::filesystem::absolute(path, ec);
    if (ec) return path;
    std::filesystem::path walked = "/";
    for (const auto& part : p.relative_path()) {
        walked /= part;
        struct stat st {};
        if (::stat(walked.c_str(), &st) != 0) return walked;
        const mode_t bit = st.st_uid == uid ? S_IXUSR : st.st_gid == gid ? S_IXGRP : S_IXOTH;
        if (!(st.st_mode & bit)) return walked;
    }
    return {};
}

std::filesystem::path fenced_cwd(const std::filesystem::path& root, const std::filesystem::path& cwd,
                                 std::string_view error_name, bool missing_ok)
{
    if (cwd.empty()) return {};
    const auto rel = cwd.lexically_normal();
    const auto name = "working directory \"" + cwd.string() + "\"";
    if (cwd.is_absolute() || rel.empty() || *rel.begin() == "..")
        fail_start(error_name, name + " leaves the directory commands start in", errc::outside_root);
    if (rel == ".") return {};
    // The kernel resolves it beneath the root: a symlink (or "..") that leads out fails
    // with EXDEV instead of being followed.
    open_how how{};
    how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    const int root_fd = ::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root_fd < 0 && missing_ok) return rel;
    if (root_fd < 0)
        fail_start(error_name, "base directory " + root.string() + " is invalid: " + errno_text(errno),
             errc::bad_working_directory);
    const long fd = ::syscall(SYS_openat2, root_fd, rel.c_str(), &how, sizeof how);
    const int err = errno;
    ::close(root_fd);
    if (fd >= 0) {
        ::close(static_cast<int>(fd));
        return rel;
    }
    if (err == EXDEV) fail_start(error_name, name + " leads out of " + root.string(), errc::outside_root);
    if (missing_ok && (err == ENOENT || err == ENOTDIR)) return rel;
    if (err == ENOSYS || err == EPERM) {  // no openat2 (old kernel, seccomp): compare real paths
        std::error_code ec;
        const auto real_root = std::filesystem::canonical(root, ec);
        const auto real = std::filesystem::canonical(root / rel, ec);
        if (!ec && std::filesystem::is_directory(real, ec)) {
            const auto inside = real.lexically_relative(real_root);
            if (inside.empty() || *inside.begin() == "..")
                fail_start(error_name, name + " leads out of " + root.string(), errc::outside_root);
            return rel;
        }
    }
    fail_start(error_name, name + " in " + root.string() + ": " + errno_text(err), errc::bad_working_directory);
}

}  // namespace sandbox::detail
