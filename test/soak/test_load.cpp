// SPDX-License-Identifier: BSL-1.0
// A heavy load: 10,000 sleeping commands in flight on one io_context (fewer where the
// descriptor limit cannot hold them), each with a wall timeout. Every timeout fires, and on
// time; and a command started while they are all in flight still completes at once. Run by
// one thread, then by two.
#define BOOST_TEST_MODULE sandbox load
#include "test_support.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <thread>

using namespace sandbox;
using namespace sandbox::test;

namespace {

using clock_type = std::chrono::steady_clock;

#ifdef SANDBOX_SOAK_SANITIZED
constexpr bool sanitized = true;
constexpr std::size_t wanted_commands = 1000;
#else
constexpr bool sanitized = false;
constexpr std::size_t wanted_commands = 10000;
#endif
constexpr int probes = 5;

// Raises the descriptor limit as far as it goes (raising the hard limit needs
// CAP_SYS_RESOURCE) and returns the soft limit now in force.
rlim_t raise_descriptor_limit()
{
    rlimit rl{65536, 65536};
    if (::setrlimit(RLIMIT_NOFILE, &rl) != 0) {
        ::getrlimit(RLIMIT_NOFILE, &rl);
        rl.rlim_cur = rl.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &rl);
    }
    ::getrlimit(RLIMIT_NOFILE, &rl);
    return rl.rlim_cur;
}

// Descriptors of one command: while it waits for a spawner thread, both ends of its stdout
// and stderr pipes (made when it is called); once running, the read ends and, from 50 ms
// on, its pidfd. All are called at once, so the limit must hold them all waiting.
constexpr std::size_t fds_waiting = 4;
constexpr std::size_t fds_running = 3;
constexpr std::size_t fds_reserve = 256;  // the test's own, the probes', the libraries'

// Children of this process, from /proc (no per-thread children lists on every kernel).
std::size_t child_count()
{
    std::size_t n = 0;
    const auto self = ::getpid();
    DIR* d = opendir("/proc");
    if (!d) return 0;
    while (dirent* e = readdir(d)) {
        const int pid = std::atoi(e->d_name);
        if (pid <= 0) continue;
        const std::string stat = file_contents("/proc/" + std::string(e->d_name) + "/stat");
        const auto close = stat.rfind(')');
        if (close != std::string::npos && close + 4 < stat.size() && std::atoi(stat.c_str() + close + 4) == self) ++n;
    }
    closedir(d);
    return n;
}

// Tasks on the whole machine, from /proc/loadavg ("0.50 0.40 0.30 2/345 6789").
std::size_t tasks_on_the_machine()
{
    const auto text = file_contents("/proc/loadavg");
    const auto slash = text.find('/');
    return slash == std::string::npos ? 0 : std::strtoul(text.c_str() + slash + 1, nullptr, 10);
}

double ms(clock_type::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double percentile(std::vector<double> v, double p)
{
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const auto i = static_cast<std::size_t>(p / 100.0 * static_cast<double>(v.size() - 1) + 0.5);
    return v[std::min(i, v.size() - 1)];
}

struct load_figures {
    std::size_t commands = 0;
    std::chrono::milliseconds timeout{0};
    std::size_t timed_out = 0;
    std::vector<std::string> wrong;        // the first few unexpected outcomes
    std::vector<double> lateness_ms;       // result minus deadline, per command that timed out
    std::vector<double> probe_ms;          // call to completion, per probe
    bool all_spawned = false;              // the monitor saw every command running
    std::size_t peak_fds = 0;              // once all are running
    double calls_s = 0;                    // from the first call to the last
    double spawn_s = 0;                    // from the first call to the last spawn
    double spawn_window_s = 0;             // from the first spawn to the last
    double first_deadline_margin_s = 0;    // first deadline minus the last spawn
    double probes_margin_s = 0;            // first deadline minus the last probe's completion
    double total_s = 0;
};

// Executions per second here and now: `n` quick commands at once, start to last completion.
// A lower bound on the spawn rate (each also runs and is reaped), to size the timeout.
double calibrate_spawn_rate(std::size_t n)
{
    auto runner = make_runner(execution_policy::in("/tmp").with_timeout(30s), driver::host);
    asio::io_context ctx;
    const auto start = clock_type::now();
    for (std::size_t i = 0; i < n; ++i) {
        std::vector<std::string> argv{"true"};
        async_execute(*runner, std::move(argv), exec_options{}, asio::bind_executor(ctx, [](auto&&...) {}));
    }
    ctx.run();
    return static_cast<double>(n) / std::chrono::duration<double>(clock_type::now() - start).count();
}

// The same with `open` more descriptors open in this process: a spawn copies the descriptor
// table and closes every inherited descriptor in the child, so it slows down as the load
// grows.
double calibrate_spawn_rate_with(std::size_t open, std::size_t n)
{
    std::vector<int> dummies;
    for (std::size_t i = 0; i < open; ++i) dummies.push_back(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    const auto rate = calibrate_spawn_rate(n);
    for (int fd : dummies)
        if (fd >= 0) ::close(fd);
    return rate;
}

// Starts `n` sleeps with a wall timeout on one io_context run by `threads` threads, and once
// they all run, a few quick probes one by one.
load_figures run_load(std::size_t n, int threads, std::chrono::milliseconds timeout)
{
    load_figures f;
    f.commands = n;
    f.timeout = timeout;
    auto sleeper = make_runner(execution_policy::in("/tmp").with_timeout(f.timeout), driver::host);
    auto prober = make_runner(execution_policy::in("/tmp").with_timeout(10s), driver::host);

    struct record {
        clock_type::time_point returned{};
        std::chrono::nanoseconds duration{0};
    };
    std::vector<record> records(n);
    std::vector<exec_result> odd(n);  // kept only for the unexpected ones
    std::vector<char> as_expected(n, 0);
    std::atomic<std::size_t> completed{0};
    std::atomic<bool> all_called{false};

    asio::io_context ctx;
    auto guard = asio::make_work_guard(ctx);
    const auto ex = ctx.get_executor();
    clock_type::time_point t0 = clock_type::now(), calls_done;

    auto start_one = [&](std::size_t i) {
        std::vector<std::string> argv{"sleep", "3600"};
        async_execute(*sleeper, std::move(argv), exec_options{},
                      asio::bind_executor(ex, [&, i](boost::system::error_code ec, exec_result r) {
                          // The result is handed over inline from the execution's strand (a
                          // dispatch on the context running it): nothing queues between the
                          // result and this line.
                          records[i] = {clock_type::now(), r.duration};
                          const bool ok = !ec && r.timed_out && r.timeout == timeout_reason::wall &&
                                          r.exit_code == exit_codes::timeout;
                          as_expected[i] = ok;
                          if (!ok) odd[i] = std::move(r);
                          ++completed;
                      }));
    };
    asio::post(ctx, [&] {
        for (std::size_t i = 0; i < n; ++i) start_one(i);
        calls_done = clock_type::now();
        all_called = true;
    });

    // Watches from outside the context: once every command runs, probes one at a time.
    std::thread monitor([&] {
        const auto give_up = t0 + f.timeout;
        // Cheap first (the machine's task count), then our children counted for certain:
        // every look at /proc or at 20,000 descriptors costs tens of milliseconds.
        const auto tasks_before = tasks_on_the_machine();
        for (int look = 1; clock_type::now() < give_up; ++look) {
            std::this_thread::sleep_for(200ms);
            const bool likely = tasks_on_the_machine() + 16 >= tasks_before + n || look % 10 == 0;
            if (all_called && likely && child_count() >= n) {
                f.all_spawned = true;
                break;
            }
        }
        f.peak_fds = static_cast<std::size_t>(open_fd_count());
        for (int p = 0; p < probes && f.all_spawned; ++p) {
            std::promise<double> latency;
            asio::post(ctx, [&] {
                const auto called = clock_type::now();
                std::vector<std::string> argv{"true"};
                async_execute(*prober, std::move(argv), exec_options{},
                              asio::bind_executor(ex, [&, called](boost::system::error_code ec, exec_result r) {
                                  latency.set_value(ec || !r.success() ? -1.0 : ms(clock_type::now() - called));
                              }));
            });
            f.probe_ms.push_back(latency.get_future().get());
            std::this_thread::sleep_for(50ms);
        }
        f.probes_margin_s = std::chrono::duration<double>(clock_type::now() - t0).count();
        guard.reset();
    });

    std::vector<std::thread> more;
    for (int t = 1; t < threads; ++t) more.emplace_back([&] { ctx.run(); });
    ctx.run();
    for (auto& t : more) t.join();
    monitor.join();
    f.total_s = std::chrono::duration<double>(clock_type::now() - t0).count();
    BOOST_REQUIRE(completed == n);

    // The wall timeout runs from the spawn (the moment posix_spawn returned, on the spawner
    // thread), not from the call: a command waits its turn to be spawned. exec_result::duration
    // is measured from that same moment to when the result is made, so the deadline is
    // returned - duration + timeout, and the lateness is duration - timeout.
    auto first_spawn = clock_type::time_point::max(), last_spawn = clock_type::time_point::min();
    for (std::size_t i = 0; i < n; ++i) {
        if (!as_expected[i]) {
            if (f.wrong.size() < 10)
                f.wrong.push_back("#" + std::to_string(i) + ": exit " + std::to_string(odd[i].exit_code) +
                                  (odd[i].timed_out ? " timed out " : " ") + odd[i].err.substr(0, 200));
            continue;
        }
        ++f.timed_out;
        const auto spawned = records[i].returned - records[i].duration;
        first_spawn = std::min(first_spawn, spawned);
        last_spawn = std::max(last_spawn, spawned);
        f.lateness_ms.push_back(ms(records[i].duration - f.timeout));
    }
    if (f.timed_out == 0) return f;
    f.calls_s = std::chrono::duration<double>(calls_done - t0).count();
    f.spawn_s = std::chrono::duration<double>(last_spawn - t0).count();
    f.spawn_window_s = std::chrono::duration<double>(last_spawn - first_spawn).count();
    f.first_deadline_margin_s = std::chrono::duration<double>(first_spawn + f.timeout - last_spawn).count();
    // Seconds from t0 to the last probe's completion, made relative to the first deadline.
    f.probes_margin_s = std::chrono::duration<double>(first_spawn + f.timeout - t0).count() - f.probes_margin_s;
    return f;
}

void report_and_check(int threads)
{
    const auto fd_limit = raise_descriptor_limit();
    // As many as the descriptor limit holds with every command called at once, up to the
    // number wanted.
    const auto n = std::min<std::size_t>(wanted_commands, (fd_limit - fds_reserve) / fds_waiting);
    asio::io_context warm;  // the library's spawner threads and caches, before the counts
    (void)run_coro(warm, []() -> asio::awaitable<exec_result> {
        auto r = make_runner(execution_policy::defaults(), driver::host);
        std::vector<std::string> argv{"true"};
        co_return co_await r->execute(std::move(argv));
    }());
    const auto fds = open_fd_count();
    // The spawn time grows about linearly with the descriptors open: its mean over the load
    // is the mean of the two ends.
    const auto rate_idle = calibrate_spawn_rate(200);
    const auto rate_loaded = calibrate_spawn_rate_with(fds_running * n, 200);
    // Every command in flight before the first deadline: the timeout covers the spawn phase.
    // 2.5 times the calibrated estimate: with the io threads, the spawners and the children's
    // descriptor closing sharing two CPUs, the spawn phase has run 1.2-2.3x as long here as
    // the calibration said. A busy machine can slow it further (2.8x once): then the run is
    // made again with a timeout sized from the spawn phase just measured under the real load.
    const double seconds_per_spawn = (1.0 / rate_idle + 1.0 / rate_loaded) / 2;
    auto timeout = std::chrono::milliseconds(static_cast<long>(2500.0 * static_cast<double>(n) * seconds_per_spawn) + 3000);
    auto f = run_load(n, threads, timeout);
    std::string retried;
    if (f.timed_out == n && (!f.all_spawned || f.first_deadline_margin_s <= 0.0 || f.probes_margin_s <= 0.0)) {
        std::ostringstream note;
        note << std::fixed << std::setprecision(2) << "   NOTE: run again: the spawn phase took " << f.spawn_s
             << " s of a " << static_cast<double>(timeout.count()) / 1000 << " s timeout (calibration said "
             << static_cast<double>(n) * seconds_per_spawn << " s)\n";
        retried = note.str();
        timeout = std::chrono::milliseconds(static_cast<long>(2000.0 * f.spawn_s) + 5000);
        f = run_load(n, threads, timeout);
    }

    std::ostringstream os;
    os << std::fixed << std::setprecision(2);
    os << "\n== load: " << n << " x `sleep 3600` with a wall timeout of " << f.timeout.count() << " ms, " << threads
       << " thread" << (threads > 1 ? "s" : "") << (sanitized ? " (sanitized build: no latency bars)" : "") << "\n";
    if (n < wanted_commands)
        os << "   NOTE: " << n << " rather than " << wanted_commands << ": the descriptor limit is " << fd_limit
           << " and may not be raised here; each command holds " << fds_waiting
           << " descriptors until it is spawned\n";
    os << retried;
    os << "   calibration (quick commands, spawned and reaped): " << rate_idle << "/s, " << rate_loaded << "/s with "
       << fds_running * n << " descriptors open\n"
       << "   calls issued over " << f.calls_s << " s; all spawned " << f.spawn_s << " s after the first call ("
       << static_cast<double>(n) / f.spawn_s << " spawns/s); spawns spread over " << f.spawn_window_s
       << " s; descriptors with all running " << f.peak_fds << "\n"
       << "   first deadline " << f.first_deadline_margin_s << " s after the last spawn; last probe done "
       << f.probes_margin_s << " s before the first deadline; whole run " << f.total_s << " s\n"
       << "   timed out as expected: " << f.timed_out << " of " << n << "\n"
       << "   lateness (result - deadline) ms: p50 " << percentile(f.lateness_ms, 50) << "  p90 "
       << percentile(f.lateness_ms, 90) << "  p99 " << percentile(f.lateness_ms, 99) << "  max "
       << percentile(f.lateness_ms, 100) << "  min " << percentile(f.lateness_ms, 0) << "\n"
       << "   probe (`true` while all are in flight) ms:";
    for (auto p : f.probe_ms) os << " " << p;
    os << "\n";
    std::cout << os.str() << std::flush;
    BOOST_TEST_MESSAGE(os.str());

    for (const auto& w : f.wrong) BOOST_ERROR(w);
    BOOST_TEST(f.timed_out == n);
    BOOST_TEST(f.all_spawned, "not every command was running before the first deadline");
    BOOST_TEST(f.first_deadline_margin_s > 0.0, "the spawn phase outlasted the timeout: the load was never whole");
    BOOST_TEST(f.probe_ms.size() == static_cast<std::size_t>(probes));
    for (auto p : f.probe_ms) BOOST_TEST(p >= 0.0, "a probe failed");
    BOOST_TEST(f.probes_margin_s > 0.0, "the probes ran into the deadlines");
    // Never before its deadline.
    BOOST_TEST(percentile(f.lateness_ms, 0) >= 0.0);
    // Loose sanity bounds: the figures themselves are the report (the README's Reliability
    // section). Their goal, p99 lateness under 10 ms and a probe under 50 ms, is not met in
    // every run on a two-vCPU VM shared with other work, two io threads especially: a profile
    // of the deadline phase puts the tail in the kernel, readers of tasklist_lock (the
    // process-group kill, waitid) queued behind exiting children.
    if (!sanitized) {
        BOOST_TEST(percentile(f.lateness_ms, 99) < 500.0, "p99 lateness " << percentile(f.lateness_ms, 99) << " ms");
        for (auto p : f.probe_ms) BOOST_TEST(p < 1000.0, "probe took " << p << " ms");
    }
    BOOST_TEST(!has_children());
    BOOST_TEST(open_fd_count() == fds);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(test_load)

BOOST_AUTO_TEST_CASE(ten_thousand_timeouts_on_one_thread_fire_on_time_and_a_new_command_still_runs_at_once)
{
    report_and_check(1);
}

BOOST_AUTO_TEST_CASE(ten_thousand_timeouts_on_two_threads_fire_on_time_and_a_new_command_still_runs_at_once)
{
    report_and_check(2);
}

BOOST_AUTO_TEST_SUITE_END()
