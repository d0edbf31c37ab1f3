// SPDX-License-Identifier: BSL-1.0
//
// bench/drivers: the launch overhead of each driver, in one run on the same machine.
//
// For every driver, N runs of `true` through the library (one runner, one io_context)
// against the same tool started directly with posix_spawn + waitpid (output read from a pipe
// to EOF, as any caller that wants it does), using the exact argv the
// library builds (from the detail plan builders) and the same preparation: a fresh private
// work dir per run, created and removed by the baseline too, and for bubblewrap and firejail
// the same cgroups. Library and raw runs alternate (lib, raw, lib, raw...) so that drift in
// the engines cancels out. The ratio is library / raw of the median time of one run: an
// engine's launch time has a long tail (one run in thirty can take twice as long, on
// either side), which moves a mean of thirty by several percent; the means are printed too.
//
// Usage: bench_drivers [--runs N] [--only DRIVER] [--image IMAGE]
// Prints one line per driver and a Markdown table; a driver that cannot run here is reported
// as skipped. Exits 3 when an isolating driver's median ratio is above 1.10.
#include "sys/cgroup.hpp"
#include "drivers/plans.hpp"
#include "drivers/runner.hpp"
#include "drivers/seccomp_profile.hpp"
#include "drivers/support.hpp"
#include <sandbox/sandbox.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

extern char** environ;

namespace {

using clock_type = std::chrono::steady_clock;
namespace asio = boost::asio;
namespace sd = sandbox::detail;

double ms_since(clock_type::time_point t0)
{
    return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

double mean(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size()); }

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const auto n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string tool_of(sandbox::driver d)
{
    switch (d) {
    case sandbox::driver::docker: return "docker";
    case sandbox::driver::podman: return "podman";
    case sandbox::driver::firejail: return "firejail";
    case sandbox::driver::bubblewrap: return "bwrap";
    case sandbox::driver::slurm: return "srun";
    case sandbox::driver::landlock: return "sandbox-landlock-exec";  // bench/landlock.cpp
    case sandbox::driver::host: break;
    }
    return "true";
}

const char* variable_of(sandbox::driver d)
{
    switch (d) {
    case sandbox::driver::docker: return "DOCKER_BIN";
    case sandbox::driver::podman: return "PODMAN_BIN";
    case sandbox::driver::firejail: return "FIREJAIL_BIN";
    default: return "BWRAP_BIN";
    }
}

std::string describe(const sandbox::capabilities& c)
{
    std::string s{sandbox::to_string(c.level)};
    s += c.network_isolated ? ", network off" : ", network open";
    s += c.memory_enforced ? ", memory limit" : ", no memory limit";
    s += c.filesystem_confined ? ", filesystem confined" : ", host filesystem visible";
    return s;
}

// ------------------------------------------------------------------ the raw baseline

// One direct launch of `argv` in `cwd` with `env`: stdin on /dev/null, stdout and stderr into
// one pipe read to EOF (a caller wants the output, as the library does), then waitpid.
int spawn_and_wait(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                   const std::filesystem::path& cwd)
{
    std::vector<char*> a, e;
    for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    for (const auto& s : env) e.push_back(const_cast<char*>(s.c_str()));
    e.push_back(nullptr);
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_adddup2(&fa, p[1], 2);
    if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, a[0], &fa, nullptr, a.data(), e.data());
    posix_spawn_file_actions_destroy(&fa);
    ::close(p[1]);
    if (rc != 0) {
        ::close(p[0]);
        throw std::runtime_error("posix_spawn " + argv[0] + ": " + std::strerror(rc));
    }
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(p[0], buf, sizeof buf);
        if (n > 0 || (n < 0 && errno == EINTR)) continue;
        break;
    }
    ::close(p[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) throw std::runtime_error("waitpid failed");
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::vector<std::string> environment_strings(const sandbox::env_list& env)
{
    std::vector<std::string> out;
    for (const auto& [k, v] : env) out.push_back(k + "=" + v);
    return out;
}

// What the library's isolating runner does for one run (prepare, plan, launch, clean up),
// done by hand: src/drivers/isolating_runner.cpp.
int raw_run(sandbox::driver d, const sandbox::execution_policy& policy, const sandbox::driver_options& options,
            const std::vector<std::string>& command)
{
    using sandbox::driver;
    if (d == driver::host) return spawn_and_wait({"/bin/true"}, {}, policy.base_dir());

    const bool container = d == driver::docker || d == driver::podman;
    const bool root = ::geteuid() == 0;
    sd::sandbox_setup s;
    s.binary = sd::resolve_binary(options.binary, variable_of(d), tool_of(d), tool_of(d));
    s.name = sd::random_sandbox_name();
    std::tie(s.uid, s.gid) = sd::command_ids(d, options);
    s.work_dir = sd::create_work_dir(policy.base_dir(), s.name, root ? s.uid : static_cast<uid_t>(-1), s.gid,
                                     tool_of(d));
    s.mounts = sandbox::mounts_for(policy, d);
    s.env = sd::sandbox_environment(policy);
    std::optional<sd::cgroup_limits> cgroup;
    std::optional<sd::engine_cgroup> engine_cgroup;
    if (container) {
        // The same flags as the library's: a cid file, the cgroup parent usage is read from,
        // and podman's narrowed seccomp profile.
        s.cid_file = (std::filesystem::temp_directory_path() / (s.name + ".cid")).string();
        std::string why;
        if (auto cg = sd::engine_cgroup::plan(s.name, why)) {
            s.cgroup_parent = cg->parent();
            engine_cgroup.emplace(std::move(*cg));
        }
        s.seccomp_profile = sd::seccomp_profile_file(sd::applicable_rules({}), why).string();
    }
    // bubblewrap and firejail bare: the tool spawned directly with the same namespaces and
    // mounts, without the cgroups, the user change or the seccomp table the library adds.
    std::vector<std::string> argv, env;
    switch (d) {
    case driver::docker:
    case driver::podman:
        argv = sd::container_argv(s, policy, options, d == driver::podman, command);
        for (char** e = environ; *e; ++e) env.emplace_back(*e);
        break;
    case driver::bubblewrap:
        argv = sd::bubblewrap_argv(s, policy, command);
        env = environment_strings(s.env);
        break;
    default:
        argv = sd::firejail_argv(s, policy, command);
        env = environment_strings(s.env);
        break;
    }
    auto clean_up = [&] {
        if (cgroup) {
            (void)cgroup->usage();
            cgroup->remove();
        }
        if (engine_cgroup) {
            (void)engine_cgroup->settle_and_read();
            engine_cgroup->remove();
        }
        if (!s.cid_file.empty()) ::unlink(s.cid_file.c_str());
        sd::remove_tree(s.work_dir);
    };
    int code = -1;
    try {
        code = spawn_and_wait(argv, env, s.work_dir);
    } catch (...) {
        clean_up();
        throw;
    }
    clean_up();
    return code;
}

// ------------------------------------------------------------------ one driver

struct row {
    sandbox::driver d;
    std::string enforces;
    double raw_ms = 0, lib_ms = 0, raw_median = 0, lib_median = 0;
    std::string skipped;
};

row bench_driver(sandbox::driver d, int runs, const std::string& image, const std::filesystem::path& base)
{
    row out{d, {}, 0, 0, 0, 0, {}};
    auto policy = sandbox::execution_policy::in(base).with_timeout(std::chrono::seconds(60));
    sandbox::driver_options options;
    options.image = image;
    auto runner = sandbox::make_runner(policy, d, options);
    out.enforces = describe(runner->caps());
    // `true` inside the image, /bin/true for tools that run host programs.
    const bool container = d == sandbox::driver::docker || d == sandbox::driver::podman;
    const std::vector<std::string> command{container ? "true" : "/bin/true"};
    asio::io_context ctx;
    auto lib_once = [&]() -> double {
        std::optional<sandbox::exec_result> result;
        std::exception_ptr error;
        const auto t0 = clock_type::now();
        asio::co_spawn(ctx, runner->execute(command), [&](std::exception_ptr e, sandbox::exec_result r) {
            error = e;
            result = std::move(r);
        });
        ctx.restart();
        ctx.run();
        const double ms = ms_since(t0);
        if (error) std::rethrow_exception(error);
        if (!result || !result->success())
            throw std::runtime_error("library run failed: exit " + std::to_string(result ? result->exit_code : -1) +
                                     (result ? ": " + result->err : std::string()));
        return ms;
    };
    auto raw_once = [&]() -> double {
        const auto t0 = clock_type::now();
        const int code = raw_run(d, policy, options, command);
        const double ms = ms_since(t0);
        if (code != 0) throw std::runtime_error("direct run failed: exit " + std::to_string(code));
        return ms;
    };
    try {
        // Warm-up: caches, the engine's first container, the cgroup probe.
        for (int i = 0; i < 2; ++i) {
            lib_once();
            raw_once();
        }
    } catch (const std::exception& e) {
        out.skipped = e.what();
        return out;
    }
    std::vector<double> lib, raw;
    for (int i = 0; i < runs; ++i) {
        // Alternate which goes first, too.
        if (i % 2 == 0) {
            lib.push_back(lib_once());
            raw.push_back(raw_once());
        } else {
            raw.push_back(raw_once());
            lib.push_back(lib_once());
        }
    }
    out.raw_ms = mean(raw);
    out.lib_ms = mean(lib);
    out.raw_median = median(raw);
    out.lib_median = median(lib);
    return out;
}

}  // namespace

int main(int argc, char** argv)
{
    int runs = 60;
    std::string only;
    std::string image = std::getenv("SANDBOX_TEST_IMAGE") ? std::getenv("SANDBOX_TEST_IMAGE") : "";
    if (image.empty()) image = "sandbox-test/busybox:latest";
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--runs" && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
        else if (a == "--only" && i + 1 < argc) only = argv[++i];
        else if (a == "--image" && i + 1 < argc) image = argv[++i];
        else {
            std::fprintf(stderr, "usage: %s [--runs N] [--only DRIVER] [--image IMAGE]\n", argv[0]);
            return 2;
        }
    }

    // A private base directory, traversable by the sandbox user (uid 65534 under root).
    std::string tmpl = (std::filesystem::temp_directory_path() / "sandbox-bench-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) {
        std::perror("mkdtemp");
        return 1;
    }
    const std::filesystem::path base = tmpl;
    ::chmod(base.c_str(), 0755);

    std::printf("bench_drivers: %d runs of `true` per driver, library and direct launch interleaved\n", runs);
    std::printf("%-11s %10s %10s %7s %10s %10s %7s   %s\n", "driver", "raw mean", "lib mean", "ratio", "raw med", "lib med",
                "ratio", "enforces (caps())");
    std::fflush(stdout);
    int worst_status = 0;
    std::vector<row> rows;
    for (auto d : {sandbox::driver::host, sandbox::driver::docker, sandbox::driver::podman, sandbox::driver::bubblewrap,
                   sandbox::driver::firejail}) {
        if (!only.empty() && only != sandbox::to_string(d)) continue;
        const auto r = bench_driver(d, runs, image, base);
        rows.push_back(r);
        if (!r.skipped.empty()) {
            std::printf("%-11s skipped: %s\n", std::string(sandbox::to_string(d)).c_str(), r.skipped.c_str());
        } else {
            std::printf("%-11s %10.2f %10.2f %7.3f %10.2f %10.2f %7.3f   %s\n", std::string(sandbox::to_string(d)).c_str(),
                        r.raw_ms, r.lib_ms, r.lib_ms / r.raw_ms, r.raw_median, r.lib_median,
                        r.lib_median / r.raw_median, r.enforces.c_str());
            if (d != sandbox::driver::host && r.lib_median / r.raw_median > 1.10) worst_status = 3;
        }
        std::fflush(stdout);
    }

    std::printf("\n| driver | enforces | direct launch (median) | through the library (median) | overhead ratio |\n");
    std::printf("|---|---|---|---|---|\n");
    for (const auto& r : rows) {
        if (!r.skipped.empty()) continue;
        std::printf("| %s | %s | %.1f ms | %.1f ms | %.2f |\n", std::string(sandbox::to_string(r.d)).c_str(),
                    r.enforces.c_str(), r.raw_median, r.lib_median, r.lib_median / r.raw_median);
    }
    std::error_code ec;
    std::filesystem::remove_all(base, ec);
    if (worst_status) std::printf("\nan isolating driver's overhead ratio is above 1.10\n");
    return worst_status;
}
