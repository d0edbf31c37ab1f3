// SPDX-License-Identifier: BSL-1.0
// Shared pieces of the fault injection tests: many executions in flight on one io_context,
// what a run may leave behind (descriptors, children, processes, work dirs), and scoped
// faults that always undo themselves (a descriptor limit, a pids cgroup, a small tmpfs).
#ifndef SANDBOX_TEST_FAULT_SUPPORT_HPP
#define SANDBOX_TEST_FAULT_SUPPORT_HPP

#include "driver_fixture.hpp"
#include "run/helper_spawn.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/test/unit_test.hpp>

#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace sandbox::test {

inline double seconds(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }

/// How one execution ended: its result, or the exception it completed with.
struct outcome {
    bool done = false;
    exec_result result;
    std::exception_ptr error;

    /// The exception's message ("" for a result).
    std::string message() const
    {
        if (!error) return {};
        try {
            std::rethrow_exception(error);
        } catch (const std::exception& e) {
            return e.what();
        } catch (...) {
            return "unknown exception";
        }
    }
    /// The error code of the exception (empty for a result).
    boost::system::error_code code() const { return error ? detail::to_error_code(error) : boost::system::error_code{}; }
    /// A launch_error, as opposed to a result or another exception.
    bool launch_failed() const
    {
        if (!error) return false;
        try {
            std::rethrow_exception(error);
        } catch (const launch_error&) {
            return true;
        } catch (...) {
            return false;
        }
    }
};

/// Starts one execution on `ctx`; the outcome fills in when it completes.
inline std::shared_ptr<outcome> start_one(asio::io_context& ctx, command_runner& runner, std::vector<std::string> argv,
                                          exec_options options = {})
{
    auto o = std::make_shared<outcome>();
    runner.async_run(ctx.get_executor(), std::move(argv), std::move(options),
                       [o](std::exception_ptr e, exec_result r) {
                           o->error = e;
                           o->result = std::move(r);
                           o->done = true;
                       });
    return o;
}

inline bool all_done(const std::vector<std::shared_ptr<outcome>>& v)
{
    return std::all_of(v.begin(), v.end(), [](const auto& o) { return o->done; });
}

/// Runs `ctx` until `pred` holds or `limit` passes; false on the deadline.
template <typename Pred>
bool run_until(asio::io_context& ctx, Pred pred, std::chrono::milliseconds limit)
{
    const auto end = std::chrono::steady_clock::now() + limit;
    while (!pred()) {
        if (std::chrono::steady_clock::now() > end) return false;
        ctx.restart();
        ctx.run_for(20ms);
    }
    return true;
}

/// A unique token for a test's commands: a fractional sleep duration no other process uses
/// (`sleep 61.4821937`), so /proc can be scanned for what the commands left behind.
inline std::string unique_seconds(int whole = 61) { return std::to_string(whole) + "." + random_digits(7); }

/// The name of process `pid` (its comm).
inline std::string comm_of(int pid)
{
    auto c = file_contents("/proc/" + std::to_string(pid) + "/comm");
    if (!c.empty() && c.back() == '\n') c.pop_back();
    return c;
}

/// Processes named `comm` whose command line holds `needle`.
inline std::vector<int> named(const std::string& comm, const std::string& needle)
{
    std::vector<int> out;
    for (int pid : processes_matching(needle))
        if (comm_of(pid) == comm) out.push_back(pid);
    return out;
}

/// Children of `parent` by pid, from /proc (zombies included); only the zombies when asked.
inline std::vector<int> children_of(int parent, bool zombies_only = false)
{
    std::vector<int> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
        const auto name = e.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        const auto stat = file_contents(e.path() / "stat");
        const auto close = stat.rfind(')');
        if (close == std::string::npos) continue;
        std::istringstream rest(stat.substr(close + 2));
        std::string state;
        int ppid = 0;
        rest >> state >> ppid;
        if (ppid == parent && (!zombies_only || state == "Z")) out.push_back(std::stoi(name));
    }
    return out;
}

/// Zombies and running children of this process, but the library's spawn helper (one per
/// process, living as long as it).
inline std::vector<int> own_children()
{
    auto out = children_of(::getpid());
    std::erase(out, static_cast<int>(detail::spawn_helper_pid()));
    return out;
}

/// The descriptor count once `ctx` has run an execution: its reactor's descriptors and the
/// library's cached /dev/null exist from then on.
inline int settled_fd_count(asio::io_context& ctx)
{
    auto runner = make_runner(execution_policy::defaults(), driver::host);
    run_coro(ctx, runner->execute({"true"}));
    return open_fd_count();
}

/// Work dirs (sandbox-<24 hex>) and session dirs left in `dir`.
inline std::vector<std::string> run_dirs_in(const std::filesystem::path& dir)
{
    std::vector<std::string> out;
    for (const auto& e : dir_entries(dir))
        if (is_sandbox_name(e) || e.rfind("sandbox-session-", 0) == 0) out.push_back(e);
    return out;
}

/// Checks that nothing of a test's commands is left: no process matching `marker`, no
/// child of this process (zombie or running), the descriptor count back to `fd_baseline`,
/// and no work dir in `base` (when given).
inline void check_nothing_left(const std::string& marker, int fd_baseline, const std::filesystem::path& base = {})
{
    BOOST_TEST_CONTEXT("marker " << marker)
    {
        BOOST_TEST(no_process_matching(marker, 15s), "processes left: " << processes_matching(marker).size());
        BOOST_TEST(eventually([] { return own_children().empty(); }, 5s),
                   "children of the test process left: " << own_children().size());
        BOOST_TEST(!has_children());
        BOOST_TEST(eventually([&] { return open_fd_count() <= fd_baseline; }, 5s),
                   "descriptors: " << open_fd_count() << ", before: " << fd_baseline);
        if (!base.empty()) BOOST_TEST(eventually([&] { return run_dirs_in(base).empty(); }, 10s), "left in " << base << ": " << join(run_dirs_in(base)));
    }
}

/// Lowers this process's soft RLIMIT_NOFILE for a scope, restoring the old one after.
class nofile_limit {
public:
    nofile_limit() { ::getrlimit(RLIMIT_NOFILE, &old_); }
    void lower_to(rlim_t soft)
    {
        rlimit l = old_;
        l.rlim_cur = soft;
        BOOST_REQUIRE_EQUAL(::setrlimit(RLIMIT_NOFILE, &l), 0);
    }
    void restore() { ::setrlimit(RLIMIT_NOFILE, &old_); }
    ~nofile_limit() { restore(); }
    nofile_limit(const nofile_limit&) = delete;
    nofile_limit& operator=(const nofile_limit&) = delete;

private:
    rlimit old_{};
};

/// A small tmpfs on a fresh directory, unmounted and removed at the end of the scope.
class small_tmpfs {
public:
    explicit small_tmpfs(const std::string& options)
    {
        std::string tmpl = "/tmp/sandbox-faults-fs-XXXXXX";
        if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
        path_ = tmpl;
        if (::mount("sandbox-faults", path_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0) {
            const int err = errno;
            ::rmdir(path_.c_str());
            throw std::runtime_error("cannot mount a tmpfs (" + options + ") on " + path_.string() + ": " +
                                     std::strerror(err));
        }
    }
    ~small_tmpfs()
    {
        ::umount2(path_.c_str(), MNT_DETACH);
        ::rmdir(path_.c_str());
    }
    small_tmpfs(const small_tmpfs&) = delete;
    small_tmpfs& operator=(const small_tmpfs&) = delete;

    const std::filesystem::path& path() const { return path_; }

    /// Creates empty files until the inodes run out; returns their names.
    std::vector<std::string> use_up_inodes(const std::string& prefix = "inode-") const
    {
        std::vector<std::string> made;
        for (int i = 0;; ++i) {
            const auto name = prefix + std::to_string(i);
            const int fd = ::open((path_ / name).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
            if (fd < 0) {
                BOOST_REQUIRE_EQUAL(errno, ENOSPC);
                return made;
            }
            ::close(fd);
            made.push_back(name);
        }
    }

    /// Writes one file until the blocks run out.
    void use_up_blocks(const std::string& name = "blocks") const
    {
        const int fd = ::open((path_ / name).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        BOOST_REQUIRE(fd >= 0);
        const std::string chunk(4096, 'x');
        for (;;) {
            const ssize_t n = ::write(fd, chunk.data(), chunk.size());
            if (n > 0) continue;
            BOOST_REQUIRE_EQUAL(errno, ENOSPC);
            break;
        }
        ::close(fd);
    }

    /// Removes everything in it.
    void clear() const
    {
        for (const auto& e : dir_entries(path_)) std::filesystem::remove_all(path_ / e);
    }

private:
    std::filesystem::path path_;
};

/// This process in a pids cgroup (v1) of its own for a scope, with the library's spawn helper
/// (which forks the sandboxes' tools for it); back in the root group, and the group removed,
/// at the end.
class pids_cgroup {
public:
    static constexpr const char* root = "/sys/fs/cgroup/pids";

    pids_cgroup() : dir_(std::string(root) + "/sandbox-faults-" + std::to_string(::getpid()))
    {
        std::error_code ec;
        std::filesystem::create_directory(dir_, ec);
        if (ec) throw std::runtime_error("cannot create " + dir_.string() + ": " + ec.message());
        if (!write(dir_ / "cgroup.procs", std::to_string(::getpid()))) {
            ::rmdir(dir_.c_str());
            throw std::runtime_error("cannot move this process into " + dir_.string());
        }
        if (const auto helper = detail::spawn_helper_pid(); helper > 0) (void)write(dir_ / "cgroup.procs", std::to_string(helper));
    }
    ~pids_cgroup() { leave(); }
    pids_cgroup(const pids_cgroup&) = delete;
    pids_cgroup& operator=(const pids_cgroup&) = delete;

    /// Tasks (threads) in the group now.
    long current() const { return std::stol(file_contents(dir_ / "pids.current")); }
    void set_max(long n) const { BOOST_REQUIRE(write(dir_ / "pids.max", std::to_string(n))); }
    void lift() const { (void)write(dir_ / "pids.max", "max"); }

    /// Back to the root group; the group is removed once empty (children may still be
    /// leaving it).
    void leave()
    {
        if (dir_.empty()) return;
        lift();
        (void)write(std::filesystem::path(root) / "cgroup.procs", std::to_string(::getpid()));
        if (const auto helper = detail::spawn_helper_pid(); helper > 0)
            (void)write(std::filesystem::path(root) / "cgroup.procs", std::to_string(helper));
        eventually([&] { return ::rmdir(dir_.c_str()) == 0 || errno == ENOENT; }, 10s);
        dir_.clear();
    }

private:
    static bool write(const std::filesystem::path& file, const std::string& value)
    {
        const int fd = ::open(file.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd < 0) return false;
        const bool ok = ::write(fd, value.data(), value.size()) == static_cast<ssize_t>(value.size());
        ::close(fd);
        return ok;
    }

    std::filesystem::path dir_;
};

/// A system error_code for errno `err`, as start_error and launch_error carry it.
inline boost::system::error_code system_code(int err) { return {err, boost::system::system_category()}; }

/// True when `text` mentions `what`.
inline bool mentions(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

}  // namespace sandbox::test

#endif
