// SPDX-License-Identifier: BSL-1.0
//
// bench/landlock: what the landlock driver's confinement costs a launch, against the host
// driver in the same run, with the physical limit beside them.
//
// N runs of `/bin/true` each, interleaved (raw, host, landlock, then rotated): raw is
// posix_spawn + waitpid with the output read from a pipe to EOF; host and landlock go through
// the library (one runner each, one io_context). landlock also makes and removes a private
// work dir, builds a Landlock ruleset and hands it and a seccomp program to its launcher,
// which joins the cgroups (as root), drops to uid 65534 and executes the command. Medians of
// one run; the ratio to watch is landlock / host (goal: 1.5 or less).
//
// Usage: bench_landlock [--runs N]. Exits 3 when landlock / host is above 1.5.
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
#include <exception>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace {

namespace asio = boost::asio;
using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point t0) { return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count(); }

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const auto n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double raw_once()
{
    const auto t0 = clock_type::now();
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    char arg0[] = "/bin/true";
    char* argv[] = {arg0, nullptr};
    pid_t pid = -1;
    const int rc = ::posix_spawn(&pid, arg0, &fa, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(out[1]);
    char buf[256];
    while (::read(out[0], buf, sizeof buf) > 0) {
    }
    ::close(out[0]);
    int status = 0;
    if (rc != 0 || ::waitpid(pid, &status, 0) != pid || status != 0) throw std::runtime_error("raw posix_spawn failed");
    return ms_since(t0);
}

struct lib_bench {
    std::shared_ptr<sandbox::command_runner> runner;
    asio::io_context ctx;

    double once()
    {
        std::optional<sandbox::exec_result> result;
        std::exception_ptr error;
        const auto t0 = clock_type::now();
        asio::co_spawn(ctx, runner->execute({"/bin/true"}), [&](std::exception_ptr e, sandbox::exec_result r) {
            error = e;
            result = std::move(r);
        });
        ctx.restart();
        ctx.run();
        const double ms = ms_since(t0);
        if (error) std::rethrow_exception(error);
        if (!result || !result->success())
            throw std::runtime_error("run failed: exit " + std::to_string(result ? result->exit_code : -1) +
                                     (result ? ": " + result->err : std::string()));
        return ms;
    }
};

}  // namespace

int main(int argc, char** argv)
{
    int runs = 300;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--runs" && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
        else {
            std::fprintf(stderr, "usage: %s [--runs N]\n", argv[0]);
            return 2;
        }
    }
    ::setenv("SANDBOX_LANDLOCK_EXEC", SANDBOX_BENCH_LANDLOCK_EXEC, 0);
    // A private base directory the command's user (65534 under root) can enter.
    std::string tmpl = (std::filesystem::temp_directory_path() / "sandbox-bench-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) {
        std::perror("mkdtemp");
        return 1;
    }
    const std::filesystem::path base = tmpl;
    ::chmod(base.c_str(), 0755);
    const auto policy = sandbox::execution_policy::in(base).with_timeout(std::chrono::seconds(60));
    lib_bench host{sandbox::make_runner(policy, sandbox::driver::host), {}};
    lib_bench landlock{sandbox::make_runner(policy, sandbox::driver::landlock), {}};
    std::vector<double> raw, on_host, on_landlock;
    int status = 0;
    try {
        for (int i = 0; i < 5; ++i) {  // warm-up: the spawner threads, the cgroup probe, /etc's listing
            raw_once();
            host.once();
            landlock.once();
        }
        for (int i = 0; i < runs; ++i) {
            switch (i % 3) {
            case 0:
                raw.push_back(raw_once());
                on_host.push_back(host.once());
                on_landlock.push_back(landlock.once());
                break;
            case 1:
                on_host.push_back(host.once());
                on_landlock.push_back(landlock.once());
                raw.push_back(raw_once());
                break;
            default:
                on_landlock.push_back(landlock.once());
                raw.push_back(raw_once());
                on_host.push_back(host.once());
                break;
            }
        }
        const double r = median(raw), h = median(on_host), l = median(on_landlock);
        std::printf("bench_landlock: %d runs of /bin/true each, interleaved; medians of one run\n", runs);
        std::printf("  raw posix_spawn  %7.3f ms\n  host driver      %7.3f ms  (%.2fx raw)\n"
                    "  landlock driver  %7.3f ms  (%.2fx raw, %.2fx host)\n",
                    r, h, h / r, l, l / r, l / h);
        std::printf("\n| launch of `true` | median | vs raw posix_spawn | vs host driver |\n|---|---|---|---|\n");
        std::printf("| raw posix_spawn | %.2f ms | 1.00 | |\n| host driver | %.2f ms | %.2f | 1.00 |\n"
                    "| landlock driver | %.2f ms | %.2f | %.2f |\n",
                    r, h, h / r, l, l / r, l / h);
        if (l / h > 1.5) {
            std::printf("\nlandlock / host is above 1.5\n");
            status = 3;
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_landlock: %s\n", e.what());
        status = 1;
    }
    std::error_code ec;
    std::filesystem::remove_all(base, ec);
    return status;
}
