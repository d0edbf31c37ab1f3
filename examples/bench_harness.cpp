// SPDX-License-Identifier: BSL-1.0
//
// bench_harness: times a command N times and prints wall, CPU and peak-memory statistics,
// all from exec_result (duration and usage), so it measures the same thing on every driver.
//
// Usage: bench_harness [-n N] [--warmup W] [-- COMMAND ARGS...]
//   -n N        measured runs (default 10)
//   --warmup W  runs before measuring, to warm caches (default 1)
//   COMMAND     defaults to sorting 100 000 numbers: sh -c 'seq 100000 | sort -rn | head -n 1'
// Exits 0 when every run succeeded.
#include <sandbox/sandbox.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

using namespace std::chrono_literals;

namespace {

struct stats {
    double min = 0, median = 0, mean = 0, p95 = 0, max = 0, stddev = 0;
};

stats summarize(std::vector<double> v)
{
    stats s;
    if (v.empty()) return s;
    std::sort(v.begin(), v.end());
    const auto n = v.size();
    s.min = v.front();
    s.max = v.back();
    s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(n);
    // Nearest-rank percentile.
    s.p95 = v[static_cast<std::size_t>(std::ceil(0.95 * static_cast<double>(n))) - 1];
    double sq = 0;
    for (double x : v) sq += (x - s.mean) * (x - s.mean);
    s.stddev = n > 1 ? std::sqrt(sq / static_cast<double>(n - 1)) : 0.0;
    return s;
}

void row(const char* name, const char* unit, const stats& s)
{
    std::printf("%-12s %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f  %s\n", name, s.min, s.median, s.mean, s.p95, s.max,
                s.stddev, unit);
}

double seconds(std::chrono::nanoseconds ns) { return std::chrono::duration<double>(ns).count(); }

}  // namespace

int main(int argc, char** argv)
{
    int runs = 10;
    int warmup = 1;
    std::vector<std::string> command;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--") {
            command.assign(argv + i + 1, argv + argc);
            break;
        }
        if (arg == "-n" && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
        else if (arg == "--warmup" && i + 1 < argc) warmup = std::max(0, std::atoi(argv[++i]));
        else {
            std::cerr << "usage: bench_harness [-n N] [--warmup W] [-- COMMAND ARGS...]\n";
            return 2;
        }
    }
    if (command.empty()) command = {"sh", "-c", "seq 100000 | sort -rn | head -n 1"};

    const auto policy = sandbox::execution_policy::defaults().with_timeout(60s);
    auto runner = sandbox::make_runner(policy, sandbox::driver::host);

    std::string shown;
    for (const auto& a : command) shown += (shown.empty() ? "" : " ") + a;
    std::printf("command: %s\nruns: %d (after %d warm-up)\n\n", shown.c_str(), runs, warmup);

    std::vector<double> wall, user, sys, cpu, rss;
    int failures = 0;
    for (int i = 0; i < warmup + runs; ++i) {
        const auto r = sandbox::run_sync(*runner, command);
        if (!r.success()) {
            ++failures;
            std::fprintf(stderr, "run %d failed: exit %d%s\n", i + 1, r.exit_code, r.timed_out ? " (timed out)" : "");
        }
        if (i < warmup) continue;
        wall.push_back(seconds(r.duration) * 1e3);
        user.push_back(seconds(r.usage.user_cpu) * 1e3);
        sys.push_back(seconds(r.usage.system_cpu) * 1e3);
        cpu.push_back(seconds(r.usage.user_cpu + r.usage.system_cpu) * 1e3);
        rss.push_back(static_cast<double>(r.usage.max_rss_bytes) / (1024.0 * 1024.0));
    }

    std::printf("%-12s %10s %10s %10s %10s %10s %10s\n", "", "min", "median", "mean", "p95", "max", "stddev");
    row("wall", "ms", summarize(wall));
    row("user cpu", "ms", summarize(user));
    row("system cpu", "ms", summarize(sys));
    row("total cpu", "ms", summarize(cpu));
    row("peak rss", "MiB", summarize(rss));
    const auto w = summarize(wall);
    const auto c = summarize(cpu);
    std::printf("\ncpu/wall (median): %.2f\n", w.median > 0 ? c.median / w.median : 0.0);
    if (failures) std::printf("%d of %d runs failed\n", failures, warmup + runs);
    return failures ? 1 : 0;
}
