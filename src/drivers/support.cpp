// SPDX-License-Identifier: BSL-1.0
#include "drivers/support.hpp"
#include <sandbox/environment.hpp>
#include <sandbox/errors.hpp>
#include <sandbox/mount.hpp>

#include <dirent.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <system_error>

namespace sandbox::detail {

namespace {

std::string errno_text(int err) { return std::error_code(err, std::system_category()).message(); }

[[noreturn]] void fail(std::string_view error_name, const std::string& why,
                       boost::system::error_code code = errc::driver_unavailable)
{
    throw launch_error(code, "Failed to start " + std::string(error_name) + ": " + why);
}

boost::system::error_code system_code(int err) { return {err, boost::system::system_category()}; }

// Why `path` cannot be executed, or empty when it can.
std::string not_executable(const std::string& path)
{
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return path + ": " + errno_text(errno);
    if (S_ISDIR(st.st_mode)) return path + ": is a directory";
    if (::access(path.c_str(), X_OK) != 0) return path + ": " + errno_text(errno);
    return {};
}

}  // namespace

std::string find_on_path(std::string_view name)
{
    std::string dirs;
    if (const char* p = std::getenv("PATH")) dirs = p;
    dirs += ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    std::size_t start = 0;
    while (start <= dirs.size()) {
        const auto end = std::min(dirs.find(':', start), dirs.size());
        std::string dir = dirs.substr(start, end - start);
        start = end + 1;
        if (dir.empty()) continue;
        std::string candidate = dir + "/" + std::string(name);
        // Absolute: the launch runs in the work dir, where a relative path means nothing.
        if (not_executable(candidate).empty()) return std::filesystem::absolute(candidate).lexically_normal().string();
    }
    return {};
}

std::string resolve_binary(const std::string& configured, const char* env_var, std::string_view name,
                           std::string_view error_name)
{
    std::string chosen = configured;
    std::string source = "driver_options::binary";
    if (chosen.empty()) {
        if (const char* v = std::getenv(env_var); v && *v) {
            chosen = v;
            source = env_var;
        }
    }
    if (chosen.empty()) {
        std::string found = find_on_path(name);
        if (found.empty()) fail(error_name, std::string(name) + " not found on PATH (is it installed?)");
        return found;
    }
    if (chosen.find('/') == std::string::npos) {
        std::string found = find_on_path(chosen);
        if (found.empty()) fail(error_name, chosen + " (from " + source + ") not found on PATH");
        return found;
    }
    if (auto why = not_executable(chosen); !why.empty()) fail(error_name, why + " (from " + source + ")");
    return std::filesystem::absolute(chosen).lexically_normal().string();
}

env_list sandbox_environment(const execution_policy& policy)
{
    env_list env = child_environment(policy);
    const bool has_path = std::any_of(env.begin(), env.end(), [](const auto& kv) { return kv.first == "PATH"; });
    if (!has_path) env.emplace_back("PATH", std::string(default_sandbox_path));
    return env;
}

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
        fail(error_name, "base directory " + base.string() + " is invalid: " + errno_text(errno),
             errc::bad_working_directory);
    if (!S_ISDIR(st.st_mode))
        fail(error_name, "base directory " + base.string() + " is not a directory", errc::bad_working_directory);
    const auto dir = base / name;
    // mkdir applies the umask; chmod makes 0700 exact.
    if (::mkdir(dir.c_str(), 0700) != 0) {
        const int err = errno;
        fail(error_name, "cannot create work dir " + dir.string() + ": " + errno_text(err), system_code(err));
    }
    if (::chmod(dir.c_str(), 0700) != 0 ||
        (owner != static_cast<uid_t>(-1) && ::chown(dir.c_str(), owner, group) != 0)) {
        const int err = errno;
        ::rmdir(dir.c_str());
        fail(error_name, "cannot prepare work dir " + dir.string() + ": " + errno_text(err), system_code(err));
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
        return false;
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

namespace {

// mountinfo writes space, tab, newline and backslash as octal escapes (\040 ...).
std::string decode_mountinfo(const std::string& field)
{
    std::string out;
    for (std::size_t i = 0; i < field.size(); ++i) {
        if (field[i] == '\\' && i + 3 < field.size() &&
            std::isdigit(static_cast<unsigned char>(field[i + 1])) && std::isdigit(static_cast<unsigned char>(field[i + 2])) &&
            std::isdigit(static_cast<unsigned char>(field[i + 3]))) {
            out += static_cast<char>((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 + (field[i + 3] - '0'));
            i += 3;
        } else {
            out += field[i];
        }
    }
    return out;
}

}  // namespace

std::vector<host_mount> host_mounts()
{
    std::vector<host_mount> out;
    std::ifstream mi("/proc/self/mountinfo");
    for (std::string line; std::getline(mi, line);) {
        std::istringstream in(line);
        std::string id, parent, dev, root, point, options;
        in >> id >> parent >> dev >> root >> point >> options;
        out.push_back({decode_mountinfo(point), options.compare(0, 2, "rw") == 0});
    }
    return out;
}

std::vector<mount> with_read_only_submounts(std::vector<mount> mounts, const std::vector<host_mount>& host)
{
    const auto asked = mounts;
    for (const auto& m : asked) {
        if (!m.read_only()) continue;
        const std::string prefix = m.host == "/" ? "/" : m.host + "/";
        for (const auto& h : host) {
            if (h.point.size() <= prefix.size() || h.point.compare(0, prefix.size(), prefix) != 0) continue;
            mount sub{h.point, m.container + "/" + h.point.substr(prefix.size()), "ro"};
            // A path asked for on its own keeps what was asked.
            const bool taken = std::any_of(mounts.begin(), mounts.end(), [&](const mount& x) {
                return x.container == sub.container || x.host == sub.host;
            });
            if (!taken) mounts.push_back(std::move(sub));
        }
    }
    return mounts;
}

uid_t sandbox_uid() noexcept { return ::geteuid() == 0 ? 65534 : ::geteuid(); }
gid_t sandbox_gid() noexcept { return ::geteuid() == 0 ? 65534 : ::getegid(); }

}  // namespace sandbox::detail

namespace sandbox {

namespace {

// No `..` component, and no symlink on the way: the path, made absolute, is its real path.
bool is_plain_path(const std::filesystem::path& p, const std::filesystem::path& real)
{
    for (const auto& part : p)
        if (part == "..") return false;
    std::error_code ec;
    auto normal = std::filesystem::absolute(p, ec).lexically_normal();
    if (ec) return false;
    if (!normal.has_filename() && normal.has_parent_path() && normal != "/") normal = normal.parent_path();  // "/a/"
    return normal == real;
}

}  // namespace

std::vector<mount> mounts_for(const execution_policy& policy, driver d)
{
    const bool same_paths = d == driver::host || d == driver::firejail;
    std::vector<mount> out;
    auto add = [&](const std::vector<std::filesystem::path>& paths, const char* prefix, const char* options) {
        std::size_t index = 0;
        for (const auto& p : paths) {
            std::error_code ec;
            const auto real = std::filesystem::canonical(p, ec);
            if (ec || real.native().find(':') != std::string::npos || !is_plain_path(p, real)) continue;
            out.push_back({real.string(), same_paths ? real.string() : prefix + std::to_string(index), options});
            ++index;
        }
    };
    add(policy.writable_paths(), "/mnt/rw", "rw");
    add(policy.readable_paths(), "/mnt/ro", "ro");
    return out;
}

}  // namespace sandbox

namespace sandbox::detail {

env_list with_extra_env(env_list base, const env_list& extra)
{
    for (const auto& [name, value] : extra) {
        if (is_blocked_env_name(name)) continue;
        auto it = std::find_if(base.begin(), base.end(), [&](const auto& kv) { return kv.first == name; });
        if (it != base.end()) it->second = value;
        else base.emplace_back(name, value);
    }
    return base;
}

std::filesystem::path fenced_cwd(const std::filesystem::path& root, const std::filesystem::path& cwd,
                                 std::string_view error_name, bool missing_ok)
{
    if (cwd.empty()) return {};
    const auto rel = cwd.lexically_normal();
    const auto name = "working directory \"" + cwd.string() + "\"";
    if (cwd.is_absolute() || rel.empty() || *rel.begin() == "..")
        fail(error_name, name + " leaves the directory commands start in", errc::outside_root);
    if (rel == ".") return {};
    // The kernel resolves it beneath the root: a symlink (or "..") that leads out fails
    // with EXDEV instead of being followed.
    open_how how{};
    how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    const int root_fd = ::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root_fd < 0 && missing_ok) return rel;
    if (root_fd < 0)
        fail(error_name, "base directory " + root.string() + " is invalid: " + errno_text(errno),
             errc::bad_working_directory);
    const long fd = ::syscall(SYS_openat2, root_fd, rel.c_str(), &how, sizeof how);
    const int err = errno;
    ::close(root_fd);
    if (fd >= 0) {
        ::close(static_cast<int>(fd));
        return rel;
    }
    if (err == EXDEV) fail(error_name, name + " leads out of " + root.string(), errc::outside_root);
    if (missing_ok && (err == ENOENT || err == ENOTDIR)) return rel;
    if (err == ENOSYS || err == EPERM) {  // no openat2 (old kernel, seccomp): compare real paths
        std::error_code ec;
        const auto real_root = std::filesystem::canonical(root, ec);
        const auto real = std::filesystem::canonical(root / rel, ec);
        if (!ec && std::filesystem::is_directory(real, ec)) {
            const auto inside = real.lexically_relative(real_root);
            if (inside.empty() || *inside.begin() == "..")
                fail(error_name, name + " leads out of " + root.string(), errc::outside_root);
            return rel;
        }
    }
    fail(error_name, name + " in " + root.string() + ": " + errno_text(err), errc::bad_working_directory);
}

}  // namespace sandbox::detail
