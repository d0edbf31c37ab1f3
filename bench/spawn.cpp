// SPDX-License-Identifier: BSL-1.0
//
// bench/spawn: the process runner against the physical limit on the same machine, in one run.
//
//   1. /bin/true through the host runner vs raw posix_spawn + waitpid, 1 and 64 in flight;
//   2. the same with 2 GiB touched in the parent (fork() would copy its page tables);
//   3. 1 GiB of stdout captured under a 1 MiB cap vs a raw pipe read loop;
//   4. resident memory per in-flight execution with 1000 sleeping commands;
//   5. Boost.Process v2's async_execute, its default and its vfork launcher, beside raw
//      posix_spawn in the same rounds (the rows named "Boost.Process v2"), 1 and 64 in
//      flight, also with the 2 GiB parent: the library's alternative, measured.
//
// Usage: bench_spawn [--runs N] [--rounds R] [--quick] [--json FILE] [--only SUBSTRING]
#include <sandbox/sandbox.hpp>

// Boost 1.81's Process v2 with std::filesystem (no Boost.Filesystem to link): its config
// names boost::optional and boost::decay without including them.
#define BOOST_PROCESS_USE_STD_FS 1
#include <boost/optional.hpp>
#include <boost/type_traits/decay.hpp>
#include <boost/process/v2/execute.hpp>
#include <boost/process/v2/posix/default_launcher.hpp>
#include <boost/process/v2/posix/vfork_launcher.hpp>
#include <boost/process/v2/process.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace {

using clock_type = std::chrono::steady_clock;
namespace asio = boost::asio;

double seconds_since(clock_type::time_point t0) { return std::chrono::duration<double>(clock_type::now() - t0).count(); }

struct figure {
    std::string name;
    std::string unit;
    double raw = 0;
    double lib = 0;
    bool higher_is_better = true;
    std::vector<double> round_ratios;  // library / raw of each round's adjacent pair
    std::string who = "sandbox";       // what `lib` measured: the library, or a peer
    double ratio() const { return higher_is_better ? lib / raw : raw / lib; }
};

std::vector<figure> figures;

void report(const figure& f)
{
    figures.push_back(f);
    std::printf("%-44s raw %10.1f %-6s  %s %10.1f %-6s  ratio %.2f", f.name.c_str(), f.raw, f.unit.c_str(),
                f.who.c_str(), f.lib, f.unit.c_str(), f.ratio());
    // The spread shows how much the machine moved during the figure: a bar closer to the
    // median than the spread is not settled by one run.
    if (f.round_ratios.size() > 1) {
        auto v = f.round_ratios;
        std::sort(v.begin(), v.end());
        std::printf("  (rounds %.2f-%.2f)", v.front(), v.back());
    }
    std::printf("\n");
    std::fflush(stdout);
}

pid_t spawn_raw(const char* path, char* const argv[], posix_spawn_file_actions_t* fa = nullptr)
{
    pid_t pid;
    if (int rc = posix_spawn(&pid, path, fa, nullptr, argv, environ); rc != 0)
        throw std::runtime_error(std::string("posix_spawn: ") + std::strerror(rc));
    return pid;
}

void check_status(int status)
{
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error("child failed");
}

// Raw: posix_spawn + waitpid, `inflight` children at a time, from `threads` threads that
// each keep their share in flight and reap only their own children (__WNOTHREAD).
double raw_spawn_rate(int runs, int inflight, int threads)
{
    const auto t0 = clock_type::now();
    std::vector<std::thread> workers;
    std::atomic<int> failures{0};
    for (int t = 0; t < threads; ++t)
        workers.emplace_back([&, t] {
            char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
            const int mine = runs / threads + (t < runs % threads ? 1 : 0);
            const int cap = std::max(1, inflight / threads);
            int running = 0, started = 0, done = 0;
            while (done < mine) {
                while (running < cap && started < mine) {
                    spawn_raw("/bin/true", argv);
                    ++running;
                    ++started;
                }
                int status = 0;
                if (::waitpid(-1, &status, __WNOTHREAD) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                    ++failures;
                --running;
                ++done;
            }
        });
    for (auto& w : workers) w.join();
    if (failures) throw std::runtime_error("raw runs failed");
    return runs / seconds_since(t0);
}

// Raw: posix_spawn + waitpid, `inflight` children at a time.
double raw_spawn_rate(int runs, int inflight)
{
    char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
    const auto t0 = clock_type::now();
    int running = 0, started = 0, done = 0;
    while (done < runs) {
        while (running < inflight && started < runs) {
            spawn_raw("/bin/true", argv);
            ++running;
            ++started;
        }
        int status = 0;
        if (::waitpid(-1, &status, 0) < 0) throw std::runtime_error("waitpid");
        check_status(status);
        --running;
        ++done;
    }
    return runs / seconds_since(t0);
}

// The runner's shape without the runner, one at a time: the io thread (here, this one) makes
// the pipes and hands the spawn to a spawner thread, which runs posix_spawn with the same
// attributes as the library (own session, every signal at its default, empty mask, stdin
// /dev/null, descriptors 0-2 only, a cwd) and opens a pidfd, then wakes this thread through
// an eventfd in its epoll set; this thread waits for both pipes to close and the pidfd, and
// reaps. What the design itself costs against raw posix_spawn + waitpid on this machine:
// the thread handoff in each direction, which a spawn that must not block an io thread pays.
double handoff_model_rate(int runs)
{
    const int ep = ::epoll_create1(EPOLL_CLOEXEC);
    const int wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = wake;
    ::epoll_ctl(ep, EPOLL_CTL_ADD, wake, &ev);

    std::mutex m;
    std::condition_variable cv;
    int out_w = -1, err_w = -1;  // a request: the child's ends
    bool stop = false;
    pid_t pid = -1;
    int pidfd = -1;
    std::thread spawner([&] {
        std::unique_lock lock(m);
        for (;;) {
            cv.wait(lock, [&] { return out_w >= 0 || stop; });
            if (stop) return;
            posix_spawn_file_actions_t fa;
            posix_spawnattr_t at;
            ::posix_spawn_file_actions_init(&fa);
            ::posix_spawnattr_init(&at);
            ::posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
            ::posix_spawn_file_actions_adddup2(&fa, out_w, 1);
            ::posix_spawn_file_actions_adddup2(&fa, err_w, 2);
            ::posix_spawn_file_actions_addclosefrom_np(&fa, 3);
            ::posix_spawn_file_actions_addchdir_np(&fa, "/tmp");
            sigset_t all, none;
            sigfillset(&all);
            sigemptyset(&none);
            ::posix_spawnattr_setsigdefault(&at, &all);
            ::posix_spawnattr_setsigmask(&at, &none);
            ::posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
            char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
            if (::posix_spawn(&pid, "/bin/true", &fa, &at, argv, environ) != 0) pid = -1;
            ::posix_spawn_file_actions_destroy(&fa);
            ::posix_spawnattr_destroy(&at);
            pidfd = pid > 0 ? static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)) : -1;
            ::close(out_w);
            ::close(err_w);
            out_w = err_w = -1;
            const std::uint64_t one = 1;
            if (::write(wake, &one, sizeof one) < 0) pid = -1;
        }
    });

    int failures = 0;
    const auto t0 = clock_type::now();
    for (int i = 0; i < runs; ++i) {
        int out[2], err[2];
        if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
        for (int fd : {out[0], err[0]}) {
            ::fcntl(fd, F_SETFL, O_NONBLOCK);
            ev.events = EPOLLIN | EPOLLET;
            ev.data.fd = fd;
            ::epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
        }
        {
            std::lock_guard lock(m);
            out_w = out[1];
            err_w = err[1];
        }
        cv.notify_one();
        int open = 3;  // both pipes and the spawn's answer, then the pidfd
        bool answered = false;
        while (open > 0) {
            epoll_event got[4];
            const int n = ::epoll_wait(ep, got, 4, -1);
            for (int k = 0; k < n; ++k) {
                const int fd = got[k].data.fd;
                if (fd == wake) {
                    std::uint64_t v;
                    if (::read(wake, &v, sizeof v) < 0) continue;
                    std::lock_guard lock(m);
                    if (pid < 0 || pidfd < 0) throw std::runtime_error("spawn failed");
                    answered = true;
                    ev.events = EPOLLIN;
                    ev.data.fd = pidfd;
                    ::epoll_ctl(ep, EPOLL_CTL_ADD, pidfd, &ev);
                } else if (answered && fd == pidfd) {
                    siginfo_t si{};
                    if (::waitid(static_cast<idtype_t>(P_PIDFD), pidfd, &si, WEXITED) != 0 || si.si_status != 0)
                        ++failures;
                    ::epoll_ctl(ep, EPOLL_CTL_DEL, pidfd, nullptr);
                    ::close(pidfd);
                    --open;
                } else {
                    char buf[4096];
                    if (::read(fd, buf, sizeof buf) == 0) {
                        ::epoll_ctl(ep, EPOLL_CTL_DEL, fd, nullptr);
                        ::close(fd);
                        --open;
                    }
                }
            }
        }
    }
    const double rate = runs / seconds_since(t0);
    {
        std::lock_guard lock(m);
        stop = true;
    }
    cv.notify_one();
    spawner.join();
    ::close(wake);
    ::close(ep);
    if (failures) throw std::runtime_error("model runs failed");
    return rate;
}

// `inflight` coroutines on one io_context (run by `threads` threads), each running its share
// of `runs` awaits of `one(ctx)`, an awaitable<bool> that says the run succeeded.
template <class One>
double coroutine_rate(int runs, int inflight, int threads, One one)
{
    asio::io_context ctx(threads);
    std::atomic<int> failures{0};
    std::mutex error_mutex;
    std::exception_ptr error;
    const auto t0 = clock_type::now();
    for (int w = 0; w < inflight; ++w) {
        const int share = runs / inflight + (w < runs % inflight ? 1 : 0);
        asio::co_spawn(
            ctx,
            [&, share]() -> asio::awaitable<void> {
                for (int i = 0; i < share; ++i)
                    if (!co_await one(ctx)) failures.fetch_add(1);
            },
            [&](std::exception_ptr e) {
                std::lock_guard lock(error_mutex);
                if (e && !error) error = e;
            });
    }
    std::vector<std::thread> extra;
    for (int t = 1; t < threads; ++t) extra.emplace_back([&] { ctx.run(); });
    ctx.run();
    for (auto& t : extra) t.join();
    const double rate = runs / seconds_since(t0);
    if (error) std::rethrow_exception(error);
    if (failures) throw std::runtime_error("runs failed");
    return rate;
}

// The library's host runner.
double lib_spawn_rate(int runs, int inflight, int threads = 1)
{
    auto runner = sandbox::make_runner(sandbox::execution_policy::defaults(), sandbox::driver::host);
    return coroutine_rate(runs, inflight, threads, [&](asio::io_context&) -> asio::awaitable<bool> {
        std::vector<std::string> argv{"/bin/true"};
        co_return (co_await runner->execute(std::move(argv))).success();
    });
}

// Boost.Process v2: /bin/true launched with `Launcher`, awaited with async_execute, as its
// documentation shows.
template <class Launcher>
double v2_spawn_rate(int runs, int inflight)
{
    return coroutine_rate(runs, inflight, 1, [](asio::io_context& ctx) -> asio::awaitable<bool> {
        auto proc = Launcher()(ctx, "/bin/true", std::vector<std::string>{});
        co_return co_await boost::process::v2::async_execute(std::move(proc), asio::use_awaitable) == 0;
    });
}

// Boost 1.81's vfork launcher fails on its first launch ("assign: Invalid argument") and,
// with several in flight, its vfork child can run on in the parent's memory instead of
// exec'ing, which hangs the parent for good: it is measured in a process of its own
// (this program again, with --v2-vfork), given 30 s.
double v2_vfork_rate_in_child(int runs, int inflight)
{
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t fa;
    ::posix_spawn_file_actions_init(&fa);
    ::posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    const std::string r = std::to_string(runs), f = std::to_string(inflight);
    std::vector<const char*> argv{"/proc/self/exe", "--v2-vfork", r.c_str(), f.c_str(), nullptr};
    pid_t pid = -1;
    const int rc = ::posix_spawn(&pid, "/proc/self/exe", &fa, nullptr, const_cast<char* const*>(argv.data()), environ);
    ::posix_spawn_file_actions_destroy(&fa);
    ::close(out[1]);
    if (rc != 0) {
        ::close(out[0]);
        throw std::runtime_error("cannot start the measuring process");
    }
    std::string text;
    const auto deadline = clock_type::now() + std::chrono::seconds(30);
    bool timed_out = false;
    for (;;) {
        pollfd p{out[0], POLLIN, 0};
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now()).count();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
        char buf[512];
        const ssize_t n = ::read(out[0], buf, sizeof buf);
        if (n <= 0) break;
        text.append(buf, static_cast<std::size_t>(n));
    }
    ::close(out[0]);
    if (timed_out) ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    if (timed_out) throw std::runtime_error("hangs: no answer in 30 s (its vfork child ran on instead of exec'ing)");
    if (text.rfind("rate ", 0) != 0) throw std::runtime_error(text.empty() ? "the measuring process died" : text);
    return std::atof(text.c_str() + 5);
}

// fork+exec for contrast (never used by the library).
double fork_rate(int runs)
{
    const auto t0 = clock_type::now();
    for (int i = 0; i < runs; ++i) {
        pid_t pid = ::fork();
        if (pid == 0) {
            ::execl("/bin/true", "/bin/true", nullptr);
            ::_exit(127);
        }
        int status = 0;
        ::waitpid(pid, &status, 0);
        check_status(status);
    }
    return runs / seconds_since(t0);
}

int rounds = 7;
std::string only;  // --only: run the figures whose name contains it

bool wanted(const std::string& name) { return only.empty() || name.find(only) != std::string::npos; }

// Raw and library alternate, in turn first, for `rounds` rounds, and each side reports its
// median round: a machine shared with other work slows some rounds down, the alternation
// exposes both sides to the same drift, and the median ignores the odd round on either side.
struct medians {
    double raw = 0, lib = 0;
    std::vector<double> round_ratios;
};

template <typename Raw, typename Lib>
medians median_of(Raw raw_fn, Lib lib_fn)
{
    std::vector<double> raw, lib;
    for (int round = 0; round < rounds; ++round) {
        if (round % 2 == 0) {
            raw.push_back(raw_fn());
            lib.push_back(lib_fn());
        } else {
            lib.push_back(lib_fn());
            raw.push_back(raw_fn());
        }
    }
    auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
    };
    medians m{median(raw), median(lib), {}};
    for (std::size_t i = 0; i < raw.size(); ++i) m.round_ratios.push_back(lib[i] / raw[i]);
    return m;
}

// Whether --only picks any figure spawn_figures(runs, suffix) would report.
bool any_spawn_figure_wanted(const std::string& suffix)
{
    const int cores = std::max(2, static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN)));
    for (const char* head : {"spawn /bin/true, ", "Boost.Process v2, default launcher, ", "Boost.Process v2, vfork launcher, "})
        for (const char* flight : {"1 in flight", "64 in flight"})
            if (wanted(head + std::string(flight) + suffix)) return true;
    return wanted("spawn /bin/true, 64 in flight, " + std::to_string(cores) + " threads" + suffix);
}

void spawn_figures(int runs, const std::string& suffix)
{
    for (int inflight : {1, 64}) {
        const auto name = "spawn /bin/true, " + std::to_string(inflight) + " in flight" + suffix;
        if (wanted(name)) {
            auto m = median_of([&] { return raw_spawn_rate(runs, inflight); },
                               [&] { return lib_spawn_rate(runs, inflight); });
            report({name, "/s", m.raw, m.lib, true, m.round_ratios});
        }
        // What the spawner-thread design costs by itself, for reading the figure above.
        const auto model = "  the runner's shape, no runner (see handoff_model_rate)" + suffix;
        if (inflight == 1 && suffix.empty() && wanted(model)) {
            auto h = median_of([&] { return raw_spawn_rate(runs, 1); }, [&] { return handoff_model_rate(runs); });
            report({model, "/s", h.raw, h.lib, true, h.round_ratios});
        }
    }
    // Boost.Process v2 beside raw posix_spawn, in rounds of their own.
    for (int inflight : {1, 64}) {
        const auto tail = ", " + std::to_string(inflight) + " in flight" + suffix;
        const auto peer = [&](const std::string& name, auto rate) {
            if (!wanted(name)) return;
            try {
                auto m = median_of([&] { return raw_spawn_rate(runs, inflight); }, rate);
                report({name, "/s", m.raw, m.lib, true, m.round_ratios, "v2"});
            } catch (const std::exception& e) {
                const std::string what = e.what();  // without Boost's "[system:22 at file:line ...]"
                std::printf("%-44s fails: %s\n", name.c_str(), what.substr(0, what.find(" [")).c_str());
            }
        };
        peer("Boost.Process v2, default launcher" + tail,
             [&] { return v2_spawn_rate<boost::process::v2::posix::default_launcher>(runs, inflight); });
        peer("Boost.Process v2, vfork launcher" + tail, [&] { return v2_vfork_rate_in_child(runs, inflight); });
    }
    // The same load spread over every core: the io_context run by one thread per core,
    // against raw loops on as many threads.
    const int cores = std::max(2, static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN)));
    const auto name = "spawn /bin/true, 64 in flight, " + std::to_string(cores) + " threads" + suffix;
    if (!wanted(name)) return;
    auto m = median_of([&] { return raw_spawn_rate(runs, 64, cores); },
                       [&] { return lib_spawn_rate(runs, 64, cores); });
    report({name, "/s", m.raw, m.lib, true, m.round_ratios});
}

constexpr std::uint64_t capture_bytes = 1ull << 30;

// Raw: dd writes 1 GiB in 64 KiB blocks into a pipe; we read it in 64 KiB reads.
double raw_capture_rate()
{
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    char* argv[] = {const_cast<char*>("dd"), const_cast<char*>("if=/dev/zero"), const_cast<char*>("bs=64K"),
                    const_cast<char*>("count=16384"), const_cast<char*>("status=none"), nullptr};
    const auto t0 = clock_type::now();
    pid_t pid = spawn_raw("/bin/dd", argv, &fa);
    posix_spawn_file_actions_destroy(&fa);
    ::close(p[1]);
    std::vector<char> buf(64 * 1024);
    std::uint64_t total = 0;
    for (;;) {
        ssize_t n = ::read(p[0], buf.data(), buf.size());
        if (n <= 0) break;
        total += static_cast<std::uint64_t>(n);
    }
    ::close(p[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    const double s = seconds_since(t0);
    if (total != capture_bytes) throw std::runtime_error("raw capture: short read");
    return static_cast<double>(total) / s / 1e6;
}

double lib_capture_rate()
{
    auto runner = sandbox::make_runner(
        sandbox::execution_policy::defaults().with_timeout(std::chrono::seconds(120)).with_output_caps(1 << 20, 1 << 20),
        sandbox::driver::host);
    const auto t0 = clock_type::now();
    auto r = sandbox::run_sync(*runner, {"/bin/dd", "if=/dev/zero", "bs=64K", "count=16384", "status=none"});
    const double s = seconds_since(t0);
    if (!r.success() || !r.truncated_out || r.out.size() != (1u << 20)) throw std::runtime_error("library capture failed");
    return static_cast<double>(capture_bytes) / s / 1e6;
}

long resident_bytes()
{
    std::ifstream statm("/proc/self/statm");
    long size = 0, resident = 0;
    statm >> size >> resident;
    return resident * ::sysconf(_SC_PAGESIZE);
}

// Starts n sleeping commands, measures this process's resident memory growth once all
// are running, then cancels them.
double kib_per_inflight(int n)
{
    auto runner = sandbox::make_runner(sandbox::execution_policy::defaults().with_timeout(std::chrono::seconds(60)),
                                       sandbox::driver::host);
    asio::io_context ctx;
    // Warm up the reactor, the thread-local read buffer and the allocator.
    {
        std::vector<std::string> argv{"/bin/true"};
        asio::co_spawn(ctx, runner->execute(std::move(argv)), asio::detached);
        ctx.run();
        ctx.restart();
    }
    const long before = resident_bytes();
    std::vector<asio::cancellation_signal> signals(static_cast<std::size_t>(n));
    int finished = 0;
    for (auto& s : signals) {
        std::vector<std::string> argv{"sleep", "30"};
        asio::co_spawn(ctx, runner->execute(std::move(argv)),
                       asio::bind_cancellation_slot(s.slot(), [&](std::exception_ptr, sandbox::exec_result) { ++finished; }));
    }
    // Let every spawn happen and every coroutine reach its wait.
    asio::steady_timer settle(ctx, std::chrono::seconds(2));
    long during = 0;
    settle.async_wait([&](boost::system::error_code) {
        during = resident_bytes();
        for (auto& s : signals) s.emit(asio::cancellation_type::terminal);
    });
    ctx.run();
    if (finished != n) throw std::runtime_error("not every sleeping command finished");
    return static_cast<double>(during - before) / n / 1024.0;
}

void touch_parent(std::size_t bytes, void*& block)
{
    block = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (block == MAP_FAILED) throw std::runtime_error("mmap failed");
    std::memset(block, 1, bytes);
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc == 4 && std::string(argv[1]) == "--v2-vfork") {  // see v2_vfork_rate_in_child
        try {
            std::printf("rate %f\n",
                        v2_spawn_rate<boost::process::v2::posix::vfork_launcher>(std::atoi(argv[2]), std::atoi(argv[3])));
        } catch (const std::exception& e) {
            std::printf("%s\n", e.what());
        }
        return 0;
    }
    int runs = 2000;
    bool quick = false;
    std::string json_path;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--runs" && i + 1 < argc) runs = std::atoi(argv[++i]);
        else if (a == "--quick") quick = true;
        else if (a == "--rounds" && i + 1 < argc) rounds = std::max(1, std::atoi(argv[++i]));
        else if (a == "--json" && i + 1 < argc) json_path = argv[++i];
        else if (a == "--only" && i + 1 < argc) only = argv[++i];
        else {
            std::cerr << "usage: bench_spawn [--runs N] [--rounds R] [--quick] [--json FILE] [--only SUBSTRING]\n";
            return 2;
        }
    }
    if (quick) {
        runs = 300;
        rounds = 2;
    }

    // 1000 in flight needs about 3000 descriptors.
    rlimit nofile{};
    ::getrlimit(RLIMIT_NOFILE, &nofile);
    nofile.rlim_cur = nofile.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &nofile);

    try {
        std::printf("bench_spawn: %d runs per round, median of %d rounds (raw and library alternating), %ld cores\n\n",
                    runs, rounds, ::sysconf(_SC_NPROCESSORS_ONLN));
        spawn_figures(runs, "");

        if (any_spawn_figure_wanted(", 2 GiB parent") || wanted("fork")) {
            void* block = nullptr;
            const std::size_t two_gib = 2ull << 30;
            touch_parent(two_gib, block);
            spawn_figures(runs, ", 2 GiB parent");
            const double forks = wanted("fork") ? fork_rate(quick ? 5 : 20) : 0;
            if (wanted("fork"))
                std::printf("%-44s %10.1f /s  (for contrast: what a forking launcher gets)\n",
                        "fork+exec /bin/true, 2 GiB parent", forks);
            ::munmap(block, two_gib);
        }

        if (wanted("capture")) {
            const int saved = rounds;
            rounds = quick ? 3 : 9;  // a round is about a second; a pipe's rate moves a lot from one to the next
            auto m = median_of(raw_capture_rate, lib_capture_rate);
            rounds = saved;
            report({"capture 1 GiB stdout, 1 MiB cap", "MB/s", m.raw, m.lib, true, m.round_ratios});
        }

        const double kib = wanted("resident") ? kib_per_inflight(quick ? 200 : 1000) : 0;
        if (wanted("resident"))
            std::printf("%-44s %10.1f KiB per execution (bound: 16)\n",
                    quick ? "resident memory, 200 sleeping commands" : "resident memory, 1000 sleeping commands", kib);

        if (!json_path.empty()) {
            std::ofstream out(json_path);
            out << "{\"figures\":[";
            for (std::size_t i = 0; i < figures.size(); ++i)
                out << (i ? "," : "") << "{\"name\":\"" << figures[i].name << "\",\"unit\":\"" << figures[i].unit
                    << "\",\"raw\":" << figures[i].raw << ",\"" << figures[i].who << "\":" << figures[i].lib
                    << ",\"ratio\":" << figures[i].ratio() << "}";
            out << "],\"kib_per_inflight\":" << kib << "}\n";
        }
    } catch (const std::exception& e) {
        std::cerr << "bench_spawn: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
