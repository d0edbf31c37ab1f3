// SPDX-License-Identifier: BSL-1.0
#include "sys/dynamic_uid.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <random>
#include <system_error>

namespace sandbox::detail {

namespace {

// A directory for the locks that only root can write to: made if missing, refused if someone
// else owns it or may write to it (a planted directory would let them hold every uid).
bool usable_dir(const std::filesystem::path& dir, std::string& why, int& errno_out)
{
    (void)::mkdir(dir.parent_path().c_str(), 0755);
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
        errno_out = errno;
        why = "cannot create " + dir.string() + ": " + std::error_code(errno, std::system_category()).message();
        return false;
    }
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022)) {
        why = dir.string() + " is not a directory that only root can write to";
        return false;
    }
    return true;
}

}  // namespace

std::filesystem::path run_uid::lock_dir()
{
    struct stat st {};
    if (::stat("/run", &st) == 0 && S_ISDIR(st.st_mode) && ::access("/run", W_OK) == 0) return "/run/sandbox/uids";
    const char* tmp = std::getenv("TMPDIR");
    return std::filesystem::path(tmp && *tmp == '/' ? tmp : "/tmp") / "sandbox-uids";
}

std::optional<run_uid> run_uid::acquire(std::string& why, int& err)
{
    err = 0;
    if (::geteuid() != 0) {
        why = "only root can run commands as uids of their own";
        return std::nullopt;
    }
    static const auto& dir = *new const auto(lock_dir());  // never destroyed: see filter_program
    if (!usable_dir(dir, why, err)) return std::nullopt;
    thread_local std::mt19937 gen{std::random_device{}()};
    const uid_t start = static_cast<uid_t>(gen() % dynamic_uid_count);
    // From a random place, so concurrent processes seldom try the same uid; one that is held
    // is passed over at once (LOCK_NB).
    for (uid_t i = 0; i < dynamic_uid_count; ++i) {
        const uid_t uid = dynamic_uid_first + (start + i) % dynamic_uid_count;
        const auto path = dir / std::to_string(uid);
        unique_fd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
        if (!fd) {
            err = errno;
            why = "cannot open " + path.string() + ": " + std::error_code(errno, std::system_category()).message();
            return std::nullopt;
        }
        if (::flock(fd.get(), LOCK_EX | LOCK_NB) == 0) return run_uid(std::move(fd), uid);
        if (errno != EWOULDBLOCK) {
            err = errno;
            why = "cannot lock " + path.string() + ": " + std::error_code(errno, std::system_category()).message();
            return std::nullopt;
        }
    }
    why = "every uid of the range is held by a run";
    return std::nullopt;
}

}  // namespace sandbox::detail
