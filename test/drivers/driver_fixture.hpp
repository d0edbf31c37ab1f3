// SPDX-License-Identifier: BSL-1.0
// Shared pieces of the driver tests: which drivers can run here (and the rule that CI never
// skips one), a fresh base directory per test, helpers to run commands and to look at what a
// run left behind on the host (work dirs, containers, processes).
#ifndef SANDBOX_TEST_DRIVER_FIXTURE_HPP
#define SANDBOX_TEST_DRIVER_FIXTURE_HPP

#include "driver_availability.hpp"
#include "ended_runs.hpp"

#include "drivers/runner.hpp"
#include "sys/cgroup.hpp"
#include "sys/dynamic_uid.hpp"
#include "drivers/support.hpp"

#include <boost/test/unit_test.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <ostream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace sandbox::test {

/// Whether this machine lets us create memory cgroups (what bubblewrap and firejail rely on).
inline bool cgroups_usable_here()
{
    static const bool usable = [] {
        std::string why;
        return detail::cgroup_limits::create(detail::random_sandbox_name(), 64ull << 20, 16, why).has_value();
    }();
    return usable;
}

/// Outside /tmp, which firejail and the namespaces replace anyway: a place the host shares
/// with every user, as a server's data directory would be.
struct shared_dir {
    std::filesystem::path path;
    // Not /var/tmp by default: firejail's jail hides it (and refuses paths there).
    explicit shared_dir(const std::string& parent = "/srv")
    {
        std::string tmpl = parent + "/sandbox-attack-XXXXXX";
        // /srv and /var/lib are root's: an unprivileged run shares /tmp instead.
        if (!::mkdtemp(tmpl.data()) && (::geteuid() == 0 || !::mkdtemp((tmpl = "/tmp/sandbox-attack-XXXXXX").data())))
            throw std::runtime_error("mkdtemp in " + parent + " failed");
        path = tmpl;
        ::chmod(path.c_str(), 0755);
    }
    ~shared_dir()
    {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    shared_dir(const shared_dir&) = delete;
    shared_dir& operator=(const shared_dir&) = delete;
};

/// Sets (or unsets, with nullopt) a variable of this process for a scope.
class env_guard {
public:
    env_guard(std::string name, const std::optional<std::string>& value) : name_(std::move(name))
    {
        if (const char* old = std::getenv(name_.c_str())) old_ = old;
        if (value) ::setenv(name_.c_str(), value->c_str(), 1);
        else ::unsetenv(name_.c_str());
    }
    ~env_guard()
    {
        if (old_) ::setenv(name_.c_str(), old_->c_str(), 1);
        else ::unsetenv(name_.c_str());
    }
    env_guard(const env_guard&) = delete;
    env_guard& operator=(const env_guard&) = delete;

private:
    std::string name_;
    std::optional<std::string> old_;
};

/// A fresh scratch directory with a chosen mode (0755 by default: the sandbox user, 65534,
/// must be able to traverse it for bubblewrap to bind what lies beneath).
struct scratch_dir : temp_dir {
    explicit scratch_dir(mode_t mode = 0755) { ::chmod(path.c_str(), mode); }
    std::filesystem::path sub(const std::string& name, mode_t mode = 0777) const
    {
        auto p = path / name;
        std::filesystem::create_directories(p);
        ::chmod(p.c_str(), mode);
        return p;
    }
};

/// Names in a directory, sorted.
inline std::vector<std::string> dir_entries(const std::filesystem::path& dir)
{
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

inline std::string join(const std::vector<std::string>& v, const std::string& sep = " ")
{
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
    return out;
}

inline std::vector<std::string> split_lines(const std::string& text)
{
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

/// A whole file, or "" when it cannot be read.
inline std::string read_text(const std::filesystem::path& p) { return file_contents(p); }

inline std::string trim(std::string s)
{
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return {};
    const auto e = s.find_last_not_of(" \t\r\n");
    return s.substr(b, e - b + 1);
}

/// A random decimal suffix, for arguments that identify a test's processes on the host.
inline std::string random_digits(int n = 6)
{
    thread_local std::mt19937 gen{std::random_device{}()};
    std::string s;
    for (int i = 0; i < n; ++i) s += static_cast<char>('1' + gen() % 9);
    return s;
}

/// Polls `pred` until it holds or `limit` passes.
inline bool eventually(const std::function<bool()>& pred, std::chrono::milliseconds limit = 5s)
{
    const auto end = std::chrono::steady_clock::now() + limit;
    for (;;) {
        if (pred()) return true;
        if (std::chrono::steady_clock::now() > end) return false;
        std::this_thread::sleep_for(20ms);
    }
}

/// No process whose command line contains `needle` is left on the host (polled).
inline bool no_process_matching(const std::string& needle, std::chrono::milliseconds limit = 5s)
{
    return eventually([&] { return processes_matching(needle).empty(); }, limit);
}

/// Output of a shell command line on the host.
inline std::string host_output(const std::string& cmd)
{
    std::string out;
    if (FILE* p = ::popen(cmd.c_str(), "r")) {
        char buf[4096];
        while (auto n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
        ::pclose(p);
    }
    return out;
}

/// Names of all containers (running or not) of a container engine, as the library's client sees them.
inline std::vector<std::string> container_names(driver d)
{
    const bool podman = d == driver::podman;
    const auto bin = detail::resolve_binary("", podman ? "PODMAN_BIN" : "DOCKER_BIN", podman ? "podman" : "docker",
                                            podman ? "podman" : "docker");
    return split_lines(host_output("'" + bin + "' ps -a --format '{{.Names}}' 2>/dev/null"));
}

inline bool container_exists(driver d, const std::string& name)
{
    const auto names = container_names(d);
    return std::find(names.begin(), names.end(), name) != names.end();
}


/// One driver with a private base directory, a policy rooted there and the test image.
struct driver_env {
    driver d;
    scratch_dir base;
    execution_policy policy;
    driver_options options;

    explicit driver_env(driver drv)
        : d(drv), policy(execution_policy::in(base.path).with_timeout(30s)), options(options_for(drv))
    {
    }

    std::unique_ptr<command_runner> runner() const { return make_runner(policy, d, options); }

    exec_result run(std::vector<std::string> argv, std::optional<std::string> stdin_data = std::nullopt,
                    output_callback cb = {}) const
    {
        auto r = runner();
        return run_sync(*r, std::move(argv), std::move(stdin_data), std::move(cb));
    }

    exec_result sh(const std::string& script, std::vector<std::string> args = {},
                   std::optional<std::string> stdin_data = std::nullopt) const
    {
        std::vector<std::string> argv{"sh", "-c", script, "sh"};
        argv.insert(argv.end(), args.begin(), args.end());
        return run(std::move(argv), std::move(stdin_data));
    }

    /// What runs left in the base directory (the isolating drivers' work dirs must be gone).
    std::vector<std::string> leftovers() const { return dir_entries(base.path); }

    /// The only work dir currently in the base directory, or empty.
    std::string current_work_dir_name() const
    {
        for (const auto& e : dir_entries(base.path))
            if (is_sandbox_name(e)) return e;
        return {};
    }
};

/// Whether `uid` is what a command of `d` runs as here: under a root caller, a uid of each
/// run's own from the reserved range (bubblewrap, landlock, docker, podman) or firejail's
/// account; else the caller's own.
inline bool is_command_uid(driver d, uid_t uid)
{
    if (::geteuid() == 0 && d != driver::firejail) return detail::is_dynamic_uid(uid);
    return uid == detail::command_ids(d, options_for(d)).first;
}

/// Prints a result when a check on it failed, to make failures readable.
inline std::string describe(const exec_result& r)
{
    std::ostringstream os;
    os << "exit=" << r.exit_code << " timed_out=" << r.timed_out << " signal=" << r.term_signal << "\n--- stdout\n"
       << r.out << "--- stderr\n"
       << r.err;
    return os.str();
}

}  // namespace sandbox::test

#endif
