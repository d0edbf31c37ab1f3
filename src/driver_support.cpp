// SPDX-License-Identifier: BSL-1.0
#include <sandbox/detail/driver_support.hpp>
#include <sandbox/environment.hpp>
#include <sandbox/errors.hpp>
#include <sandbox/mount.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>
#include <system_error>

namespace sandbox::detail {

namespace {

std::string errno_text(int err) { return std::error_code(err, std::system_category()).message(); }

[[noreturn]] void fail(std::string_view error_name, const std::string& why)
{
    throw launch_error("Failed to start " + std::string(error_name) + ": " + why);
}

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
        if (not_executable(candidate).empty()) return candidate;
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
    return chosen;
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
    thread_local std::mt19937_64 gen{std::random_device{}()};
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
        fail(error_name, "base directory " + base.string() + " is invalid: " + errno_text(errno));
    if (!S_ISDIR(st.st_mode)) fail(error_name, "base directory " + base.string() + " is not a directory");
    const auto dir = base / name;
    // mkdir applies the umask; chmod makes 0700 exact.
    if (::mkdir(dir.c_str(), 0700) != 0)
        fail(error_name, "cannot create work dir " + dir.string() + ": " + errno_text(errno));
    if (::chmod(dir.c_str(), 0700) != 0 ||
        (owner != static_cast<uid_t>(-1) && ::chown(dir.c_str(), owner, group) != 0)) {
        const int err = errno;
        ::rmdir(dir.c_str());
        fail(error_name, "cannot prepare work dir " + dir.string() + ": " + errno_text(err));
    }
    return dir;
}

namespace {

// Empties the directory open as `fd` (which this call closes), never following links.
bool empty_dir(int fd) noexcept
{
    DIR* d = ::fdopendir(fd);
    if (!d) {
        ::close(fd);
        return false;
    }
    bool ok = true;
    while (dirent* e = ::readdir(d)) {
        if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
        struct stat st {};
        if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            ok = false;
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            const int sub = ::openat(::dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0 || !empty_dir(sub) || ::unlinkat(::dirfd(d), e->d_name, AT_REMOVEDIR) != 0) ok = false;
        } else if (::unlinkat(::dirfd(d), e->d_name, 0) != 0) {
            ok = false;
        }
    }
    ::closedir(d);
    return ok;
}

}  // namespace

bool remove_tree(const std::filesystem::path& dir) noexcept
{
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0) return errno == ENOENT;
    if (!S_ISDIR(st.st_mode)) return ::unlink(dir.c_str()) == 0;  // a link is removed, never followed
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return false;
    const bool ok = empty_dir(fd);
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

uid_t sandbox_uid() noexcept { return ::geteuid() == 0 ? 65534 : ::geteuid(); }
gid_t sandbox_gid() noexcept { return ::geteuid() == 0 ? 65534 : ::getegid(); }

}  // namespace sandbox::detail

namespace sandbox {

std::vector<mount> mounts_for(const execution_policy& policy, driver d)
{
    const bool same_paths = d == driver::host || d == driver::firejail;
    std::vector<mount> out;
    auto add = [&](const std::vector<std::filesystem::path>& paths, const char* prefix, const char* options) {
        std::size_t index = 0;
        for (const auto& p : paths) {
            std::error_code ec;
            auto real = std::filesystem::canonical(p, ec);
            if (ec || real.native().find(':') != std::string::npos) continue;
            out.push_back({real.string(), same_paths ? real.string() : prefix + std::to_string(index), options});
            ++index;
        }
    };
    add(policy.writable_paths(), "/mnt/rw", "rw");
    add(policy.readable_paths(), "/mnt/ro", "ro");
    return out;
}

}  // namespace sandbox
