// SPDX-License-Identifier: BSL-1.0
// bench_warm: what a command costs end to end through each driver, cold (the sandbox built
// when the command is asked for) and warm (taken from command_runner::prewarm's pool), side
// by side with the host driver in the same run. One runner per driver and mode, `true` run
// one after another; a warm run starts once a sandbox is ready (the pool refills in the
// background between runs, which is what a steady stream of commands sees), and its time is
// from the request to the result. Reported as medians, p90 and ratios to the host driver.
//
// Usage: bench_warm [--runs N] [--only DRIVER] [--image IMAGE]
#include <sandbox/sandbox.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace asio = boost::asio;
using clock_type = std::chrono::steady_clock;

namespace {

double percentile(std::vector<double> v, double p)
{
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

template <typename T>
T run(asio::io_context& ctx, asio::awaitable<T> a)
{
    std::optional<T> out;
    std::exception_ptr error;
    asio::co_spawn(ctx, std::move(a), [&](std::exception_ptr e, T r) {
        error = e;
        out = std::move(r);
    });
    ctx.restart();
    ctx.run();
    if (error) std::rethrow_exception(error);
    return std::move(*out);
}

void run_void(asio::io_context& ctx, asio::awaitable<void> a)
{
    std::exception_ptr error;
    asio::co_spawn(ctx, std::move(a), [&](std::exception_ptr e) { error = e; });
    ctx.restart();
    ctx.run();
    if (error) std::rethrow_exception(error);
}

struct timings {
    std::vector<double> ms;
    int warm = 0;
    std::string skipped;
};

timings measure(sandbox::driver d, bool warm, int runs, const std::string& image, const std::filesystem::path& base)
{
    timings t;
    try {
        auto policy = sandbox::execution_policy::in(base).with_timeout(std::chrono::seconds(60));
        sandbox::driver_options options;
        options.image = image;
        auto runner = sandbox::make_runner(policy, d, options);
        const bool container = d == sandbox::driver::docker || d == sandbox::driver::podman;
        const std::vector<std::string> command{container ? "true" : "/bin/true"};
        asio::io_context ctx;
        for (int i = -2; i < runs; ++i) {  // two warm-up runs
            if (warm) run_void(ctx, runner->prewarm(1));
            const auto t0 = clock_type::now();
            auto r = run(ctx, runner->execute(command));
            const double ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
            if (!r.success()) throw std::runtime_error("exit " + std::to_string(r.exit_code) + ": " + r.err);
            if (i < 0) continue;
            t.ms.push_back(ms);
            t.warm += r.warm ? 1 : 0;
        }
    } catch (const std::exception& e) {
        t.skipped = e.what();
    }
    return t;
}

}  // namespace

int main(int argc, char** argv)
{
    int runs = 30;
    std::string only;
    std::string image = std::getenv("SANDBOX_TEST_IMAGE") ? std::getenv("SANDBOX_TEST_IMAGE") : "";
    if (image.empty()) image = "sandbox-test/busybox:latest";
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--runs" && i + 1 < argc) runs = std::max(2, std::atoi(argv[++i]));
        else if (a == "--only" && i + 1 < argc) only = argv[++i];
        else if (a == "--image" && i + 1 < argc) image = argv[++i];
        else {
            std::fprintf(stderr, "usage: %s [--runs N] [--only DRIVER] [--image IMAGE]\n", argv[0]);
            return 2;
        }
    }
    std::string tmpl = (std::filesystem::temp_directory_path() / "sandbox-bench-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) {
        std::perror("mkdtemp");
        return 1;
    }
    const std::filesystem::path base = tmpl;
    ::chmod(base.c_str(), 0755);

    std::printf("bench_warm: %d runs of `true` per driver, one after another; ms from request to result\n", runs);
    const auto host = measure(sandbox::driver::host, false, runs, image, base);
    if (!host.skipped.empty()) {
        std::fprintf(stderr, "host driver failed: %s\n", host.skipped.c_str());
        return 1;
    }
    const double host_p50 = percentile(host.ms, 0.5);
    std::printf("\n| driver | cold p50 | cold p90 | warm p50 | warm p90 | warm runs | cold / host | warm / host |\n");
    std::printf("|---|---|---|---|---|---|---|---|\n");
    std::printf("| host | %.2f | %.2f | - | - | - | 1.00 | - |\n", host_p50, percentile(host.ms, 0.9));
    std::fflush(stdout);
    for (auto d : {sandbox::driver::bubblewrap, sandbox::driver::landlock, sandbox::driver::firejail,
                   sandbox::driver::docker, sandbox::driver::podman}) {
        const std::string name(sandbox::to_string(d));
        if (!only.empty() && only != name) continue;
        const auto cold = measure(d, false, runs, image, base);
        const auto warm = measure(d, true, runs, image, base);
        if (!cold.skipped.empty() || !warm.skipped.empty()) {
            std::printf("| %s | skipped: %s |\n", name.c_str(), (cold.skipped.empty() ? warm.skipped : cold.skipped).c_str());
            continue;
        }
        const double c50 = percentile(cold.ms, 0.5), w50 = percentile(warm.ms, 0.5);
        std::printf("| %s | %.2f | %.2f | %.2f | %.2f | %d/%zu | %.2f | %.2f |\n", name.c_str(), c50,
                    percentile(cold.ms, 0.9), w50, percentile(warm.ms, 0.9), warm.warm, warm.ms.size(), c50 / host_p50,
                    w50 / host_p50);
        std::fflush(stdout);
    }
    std::error_code ec;
    std::filesystem::remove_all(base, ec);
    return 0;
}
