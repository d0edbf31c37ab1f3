// SPDX-License-Identifier: BSL-1.0
// Helpers shared by the tests: running coroutines with a deadline, counting descriptors and
// children, and the path of the helper child.
#ifndef SANDBOX_TEST_SUPPORT_HPP
#define SANDBOX_TEST_SUPPORT_HPP

#include "build_paths.hpp"

#include <sandbox/sandbox.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/test/unit_test.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace sandbox::test {

using namespace std::chrono_literals;

/// A whole file, or what could be read of it ("" when it cannot be opened). Safe on /proc
/// files of a process that exits meanwhile, where read() fails with ESRCH (an
/// istreambuf_iterator would throw out of the stream buffer).
inline std::string file_contents(const std::filesystem::path& p)
{
    std::string out;
    const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return out;
    char buf[4096];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    return out;
}

/// The library runs its helpers (sandbox-seccomp-exec, sandbox-landlock-exec, sandbox-spawn,
/// sandbox-sweep)
/// from their installed paths only (or the ones the variables name): the tests take the ones
/// just built.
inline const bool seccomp_exec_from_the_build = [] {
    ::setenv("SANDBOX_SECCOMP_EXEC", build::seccomp_exec(), 0);
    ::setenv("SANDBOX_LANDLOCK_EXEC", build::landlock_exec(), 0);
    ::setenv("SANDBOX_SPAWN_HELPER", build::spawn_helper(), 0);
    ::setenv("SANDBOX_SWEEP", build::sweeper(), 0);
    return true;
}();

/// Path of the helper child (test/common/test_child.cpp).
inline std::string child() { return build::test_child(); }

/// argv for the helper child in `mode`.
inline std::vector<std::string> child_args(std::vector<std::string> args)
{
    args.insert(args.begin(), child());
    return args;
}

/// Runs the awaitable on `ctx` until it completes (other work on the context, such as a
/// long-lived process's background reads, does not hold it up) or `limit` passes (then
/// fails the test instead of hanging) and returns its value, rethrowing its exception.
template <typename T>
T run_coro(asio::io_context& ctx, asio::awaitable<T> aw, std::chrono::steady_clock::duration limit = 60s)
{
    std::optional<T> value;
    std::exception_ptr error;
    bool done = false;
    asio::co_spawn(ctx, std::move(aw), [&](std::exception_ptr e, auto... v) {
        error = e;
        if constexpr (sizeof...(v) == 1) value.emplace(std::move(v)...);
        done = true;
        ctx.stop();
    });
    ctx.restart();
    ctx.run_for(limit);
    if (!done) BOOST_FAIL("coroutine did not complete within the time limit");
    if (error) std::rethrow_exception(error);
    if constexpr (!std::is_void_v<T>) return std::move(*value);
}

inline void run_coro(asio::io_context& ctx, asio::awaitable<void> aw, std::chrono::steady_clock::duration limit = 60s)
{
    std::exception_ptr error;
    bool done = false;
    asio::co_spawn(ctx, std::move(aw), [&](std::exception_ptr e) {
        error = e;
        done = true;
        ctx.stop();
    });
    ctx.restart();
    ctx.run_for(limit);
    if (!done) BOOST_FAIL("coroutine did not complete within the time limit");
    if (error) std::rethrow_exception(error);
}

/// Number of open descriptors of this process.
inline int open_fd_count()
{
    int n = 0;
    if (DIR* d = opendir("/proc/self/fd")) {
        while (dirent* e = readdir(d))
            if (e->d_name[0] != '.') ++n;
        closedir(d);
    }
    return n - 1;  // the directory stream itself
}

/// True when this process has an unreaped child (a zombie or a running one).
inline bool has_children()
{
    siginfo_t info{};
    return ::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid != 0;
}

/// Pids of processes whose command line (arguments joined by spaces) contains `needle`, or
/// with `at_start`, begins with it: a command itself, not the launcher or the runner whose
/// arguments name it. Excludes this process and zombies.
inline std::vector<int> processes_matching(const std::string& needle, bool at_start = false)
{
    std::vector<int> pids;
    DIR* d = opendir("/proc");
    if (!d) return pids;
    while (dirent* e = readdir(d)) {
        const int pid = std::atoi(e->d_name);
        if (pid <= 0 || pid == ::getpid()) continue;
        std::string cmd = file_contents("/proc/" + std::string(e->d_name) + "/cmdline");
        for (auto& c : cmd)
            if (c == '\0') c = ' ';
        if (at_start ? cmd.rfind(needle, 0) == 0 : cmd.find(needle) != std::string::npos) {
            const std::string stat = file_contents("/proc/" + std::string(e->d_name) + "/stat");
            const auto close = stat.rfind(')');
            if (close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z') continue;
            pids.push_back(pid);
        }
    }
    closedir(d);
    return pids;
}

/// A unique scratch directory, removed at the end of the scope.
struct temp_dir {
    std::filesystem::path path;
    temp_dir()
    {
        std::string tmpl = (std::filesystem::temp_directory_path() / "sandbox-test-XXXXXX").string();
        if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
        path = tmpl;
    }
    ~temp_dir()
    {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;
};

/// True when the variable CI is "true": tests must then never skip a driver.
inline bool running_in_ci()
{
    const char* ci = std::getenv("CI");
    return ci && std::string(ci) == "true";
}

/// The digits right after `label` in `text` ("" when there are none). (No std::regex: g++ 12
/// warns in its headers under the sanitizers.)
inline std::string number_after(const std::string& text, const std::string& label)
{
    const auto at = text.find(label);
    if (at == std::string::npos) return {};
    const auto begin = at + label.size();
    auto end = begin;
    while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
    return text.substr(begin, end - begin);
}

}  // namespace sandbox::test

#endif
