// SPDX-License-Identifier: BSL-1.0
#include "drivers/run_record.hpp"

#include "drivers/support.hpp"
#include "run/offload.hpp"
#include "sys/cgroup.hpp"
#include "sys/mounts.hpp"
#include <sandbox/errors.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <mutex>
#include <system_error>

namespace sandbox::detail {

namespace {

constexpr std::string_view suffix = ".run";
constexpr std::string_view making_suffix = ".run-new";

bool ends_with(std::string_view s, std::string_view end)
{
    return s.size() > end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0;
}

// A record holds a link, small files and the idmapped mounts of writable paths: those show
// a user's directory, so they are detached and never descended into. What cannot go yet (a
// mount still busy) stays for the next sweep.
void remove_record(const std::filesystem::path& dir) noexcept
{
    std::vector<std::string> names;
    if (DIR* d = ::opendir(dir.c_str())) {
        while (dirent* e = ::readdir(d))
            if (std::string_view n = e->d_name; n != "." && n != "..") names.emplace_back(n);
        ::closedir(d);
    }
    for (const auto& n : names) {
        const auto p = dir / n;
        struct stat st {};
        if (::lstat(p.c_str(), &st) != 0) continue;
        if (!S_ISDIR(st.st_mode)) {
            ::unlink(p.c_str());
            continue;
        }
        if (is_mount_root(p)) detach_mount(p);
        ::rmdir(p.c_str());
    }
    ::rmdir(dir.c_str());
}

// What a dead run of `name` left, its record at `record` (locked by us).
void clean_up_dead_run(const std::filesystem::path& record, const std::string& name)
{
    auto cgroups = cgroup_limits::existing(name);
    cgroups.remove();  // kills what is left of its tree first (firejail's outlive their starter)
    engine_cgroup::remove_left_by(name);  // a container's parent, once the engine is done with it
    char target[4096];
    const auto link = record / "work";
    const auto n = ::readlink(link.c_str(), target, sizeof target - 1);
    if (n > 0) {
        const std::filesystem::path work(std::string(target, static_cast<std::size_t>(n)));
        // A record only ever names its own work dir: never follow one elsewhere.
        if (work.is_absolute() && work.filename() == name) {
            if (is_mount_root(work)) detach_mount(work);
            remove_tree(work);
        }
    }
    remove_record(record);
}

}  // namespace

std::filesystem::path run_record_dir()
{
    std::error_code ec;
    auto dir = std::filesystem::temp_directory_path(ec);
    return ec ? std::filesystem::path("/tmp") : dir;
}

run_record run_record::create(const std::string& name, const std::filesystem::path& work_dir,
                              std::string_view error_name)
{
    const auto base = run_record_dir();
    const auto making = base / (name + std::string(making_suffix));
    auto failed = [&](const std::string& what) {
        const int err = errno;
        throw launch_error({err, boost::system::system_category()},
                           "Failed to start " + std::string(error_name) + ": cannot " + what + " " + making.string() +
                               ": " + std::error_code(err, std::system_category()).message());
    };
    // Made under another name, locked, then renamed: a sweep never sees it unlocked.
    if (::mkdir(making.c_str(), 0700) != 0) failed("create");
    run_record r;
    r.dir_ = making;
    r.fd_ = ::open(making.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (r.fd_ < 0 || ::flock(r.fd_, LOCK_EX | LOCK_NB) != 0) failed("lock");
    if (!work_dir.empty() && ::symlinkat(work_dir.c_str(), r.fd_, "work") != 0) failed("write into");
    const auto final_dir = base / (name + std::string(suffix));
    if (::rename(making.c_str(), final_dir.c_str()) != 0) failed("rename");
    r.dir_ = final_dir;
    return r;
}

run_record& run_record::operator=(run_record&& o) noexcept
{
    if (this != &o) {
        release();
        dir_ = std::move(o.dir_);
        fd_ = o.fd_;
        o.fd_ = -1;
        o.dir_.clear();
    }
    return *this;
}

namespace {
// Set by a run that left something behind; read at each launch.
std::atomic<bool> sweep_due{false};

bool listable(const std::filesystem::path& dir)
{
    DIR* d = ::opendir(dir.c_str());
    if (d) ::closedir(d);
    return d != nullptr || (errno != EMFILE && errno != ENFILE);
}
}  // namespace

void run_record::release() noexcept
{
    if (!dir_.empty()) {
        remove_record(dir_);
        // Descriptors ran out (opendir failed) or a mount is still busy: left for a sweep.
        if (::access(dir_.c_str(), F_OK) == 0) sweep_due.store(true, std::memory_order_relaxed);
    }
    dir_.clear();
    if (fd_ >= 0) ::close(fd_);  // the lock goes with it
    fd_ = -1;
}

void run_record::abandon() noexcept
{
    if (!dir_.empty()) sweep_due.store(true, std::memory_order_relaxed);
    dir_.clear();
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
}

std::vector<std::string> sweep_dead_runs(const std::filesystem::path& records)
{
    std::vector<std::string> cleaned;
    DIR* d = ::opendir(records.c_str());
    if (!d) return cleaned;
    std::vector<std::string> entries;
    while (dirent* e = ::readdir(d)) {
        const std::string_view n = e->d_name;
        if (n.rfind("sandbox-", 0) == 0 && (ends_with(n, suffix) || ends_with(n, making_suffix))) entries.emplace_back(n);
    }
    ::closedir(d);
    for (const auto& entry : entries) {
        const auto record = records / entry;
        const int fd = ::open(record.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) continue;
        struct stat st {};
        // Only records of this user: another's are not ours to judge (nor to delete).
        const bool mine = ::fstat(fd, &st) == 0 && st.st_uid == ::geteuid();
        // A record still being made is only abandoned if it is old.
        const bool settled = ends_with(entry, suffix) ||
                             std::chrono::system_clock::now() - std::chrono::system_clock::from_time_t(st.st_mtime) >
                                 std::chrono::minutes(1);
        if (mine && settled && ::flock(fd, LOCK_EX | LOCK_NB) == 0) {
            const auto name = entry.substr(0, entry.size() - (ends_with(entry, suffix) ? suffix : making_suffix).size());
            clean_up_dead_run(record, name);
            cleaned.push_back(name);
        }
        ::close(fd);
    }
    return cleaned;
}

void sweep_dead_runs_once()
{
    static std::once_flag once;
    bool first = false;
    std::call_once(once, [&] { first = true; });
    if (!first && !sweep_due.exchange(false, std::memory_order_relaxed)) return;
    try {
        run_on(worker::blocking, [] {
            // Still out of descriptors: the next launch tries again.
            if (!listable(run_record_dir())) return sweep_due.store(true, std::memory_order_relaxed);
            (void)sweep_dead_runs(run_record_dir());
        });
    } catch (...) {  // best effort
    }
}

}  // namespace sandbox::detail
