// SPDX-License-Identifier: BSL-1.0
//
// bench/slurm: driver::slurm against bare srun, in one run on the same cluster.
//
//   1. Per job: N sequential runs of `true` through the library (one runner, one io_context;
//      inner driver bubblewrap, then host) against bare srun running the same inner command:
//      the exact srun argv the library builds (command_runner::preview(), a fresh one per
//      run, so the job name and report tag are fresh as the library's are), started with
//      posix_spawn (stdin /dev/null, stdout and stderr into a pipe read to EOF) and waited
//      for: the physical limit of the scheduler path. Library and bare runs alternate
//      (A B B A A B ...) so that load drift (the cluster is shared) hits both alike; median
//      and p90 per job, the ratio library / bare of each, and the median of the ratios of
//      neighbouring runs (robust to drift). The library's own time is shown too: from
//      execute() to srun's spawn (on_launch), and that plus from srun's reap to the result.
//   2. Batch: `sandbox-run --batch jobs.jsonl --driver slurm -j P -o results.jsonl` over J
//      jobs {"id":"jN","argv":["true"]}: jobs/s, every result line present, and sandbox-run's
//      resident memory (VmRSS) sampled every 100 ms, shown at 10 %, 50 % and 100 % of the
//      jobs and at its maximum; it must not grow with the job count. Against the same J jobs
//      as bare srun, P at a time, each with the argv the CLI starts for a job (its
//      `--dry-run --json`, with a fresh job name and tag per job), output read from a pipe; half
//      of them before the library's batch and half after, so that drift hits both alike.
//      Also per side: each job's time from spawn to reap (the library's from its results),
//      the jobs in flight on average, and the CPU time on this side of the scheduler per
//      job (sandbox-run's own apart): what tells the library's cost from the scheduler's.
//   3. Optionally (--rounds R): R more rounds of a K-job batch (--round-jobs, default 100)
//      through sandbox-run and the same K jobs as bare srun, in turn first: a paired
//      throughput comparison that a cluster shared with other work cannot skew as it can the
//      single long batch above (its load changes from minute to minute).
//
// Usage: bench_slurm [--runs N] [--warmup W] [--jobs J] [--parallel P] [--rounds R] [--round-jobs K]
//                    [--no-sequential] [--no-batch]
// Exits 1 when srun is not usable (or a run fails), 3 when a ratio is above 1.10 or the
// batch's resident memory grows.
#include <sandbox/json.hpp>
#include <sandbox/sandbox.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#ifndef SANDBOX_BENCH_RUN_BIN
#error "SANDBOX_BENCH_RUN_BIN (the path of sandbox-run) must be defined"
#endif

extern char** environ;

namespace {

using clock_type = std::chrono::steady_clock;
namespace asio = boost::asio;

const std::string sandbox_run = SANDBOX_BENCH_RUN_BIN;

double ms_since(clock_type::time_point t0)
{
    return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

double ms_between(clock_type::time_point a, clock_type::time_point b)
{
    return std::chrono::duration<double, std::milli>(b - a).count();
}

double mean(const std::vector<double>& v)
{
    return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const auto n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Nearest rank.
double percentile(std::vector<double> v, double p)
{
    std::sort(v.begin(), v.end());
    const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
    return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

std::string random_hex(int digits)
{
    static std::mt19937_64 gen{std::random_device{}()};
    static constexpr char hex[] = "0123456789abcdef";
    std::string s;
    for (int i = 0; i < digits; ++i) s += hex[gen() & 15];
    return s;
}

std::vector<std::string> environ_strings()
{
    std::vector<std::string> out;
    for (char** e = environ; *e; ++e) out.emplace_back(*e);
    return out;
}

std::vector<char*> c_strings(const std::vector<std::string>& v)
{
    std::vector<char*> p;
    for (const auto& s : v) p.push_back(const_cast<char*>(s.c_str()));
    p.push_back(nullptr);
    return p;
}

// ------------------------------------------------------------------ direct launches

struct direct_outcome {
    int status = -1;      // exit code, or 128 + signal
    std::string output;   // stdout and stderr, interleaved
    bool killed = false;  // the time limit ran out
};

// One direct launch of `argv` with `env`: stdin on /dev/null, stdout and stderr into one
// pipe read to EOF, then waitpid. After `limit`, SIGTERM (srun cancels its job), then SIGKILL.
direct_outcome run_direct(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                          std::chrono::milliseconds limit)
{
    auto a = c_strings(argv);
    auto e = c_strings(env);
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_adddup2(&fa, p[1], 2);
    pid_t pid = 0;
    const int rc = argv[0].find('/') == std::string::npos ? posix_spawnp(&pid, a[0], &fa, nullptr, a.data(), e.data())
                                                          : posix_spawn(&pid, a[0], &fa, nullptr, a.data(), e.data());
    posix_spawn_file_actions_destroy(&fa);
    ::close(p[1]);
    if (rc != 0) {
        ::close(p[0]);
        throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
    }
    direct_outcome out;
    auto deadline = clock_type::now() + limit;
    int stage = 0;  // 0 running, 1 SIGTERM sent, 2 SIGKILL sent
    char buf[4096];
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now()).count();
        pollfd pfd{p[0], POLLIN, 0};
        const int r = ::poll(&pfd, 1, static_cast<int>(std::clamp<long long>(left, 0, 1000)));
        if (r < 0 && errno == EINTR) continue;
        if (r == 0) {
            if (clock_type::now() < deadline) continue;
            if (stage == 0) {
                ::kill(pid, SIGTERM);
                deadline = clock_type::now() + std::chrono::seconds(5);
            } else if (stage == 1) {
                ::kill(pid, SIGKILL);
                deadline = clock_type::now() + std::chrono::hours(1);
            }
            ++stage;
            out.killed = true;
            continue;
        }
        const ssize_t n = ::read(p[0], buf, sizeof buf);
        if (n > 0)
            out.output.append(buf, static_cast<std::size_t>(n));
        else if (n == 0 || errno != EINTR)
            break;
    }
    ::close(p[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) throw std::runtime_error("waitpid failed");
    out.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return out;
}

// srun from SRUN_BIN or PATH, as the library resolves it; empty when there is none.
std::string find_srun()
{
    if (const char* v = std::getenv("SRUN_BIN"); v && *v) return ::access(v, X_OK) == 0 ? v : "";
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path ? path : "/usr/bin:/bin");
    std::string dir;
    while (std::getline(dirs, dir, ':'))
        if (!dir.empty() && ::access((dir + "/srun").c_str(), X_OK) == 0) return dir + "/srun";
    return "";
}

// Fails with a clear message unless srun can run a one-task job step here.
void check_srun()
{
    const auto srun = find_srun();
    if (srun.empty())
        throw std::runtime_error(
            "srun is not usable: not found (SRUN_BIN, PATH); is Slurm installed? "
            "(scripts/setup-slurm.sh sets up a single-node cluster)");
    if (::access(sandbox_run.c_str(), X_OK) != 0)
        throw std::runtime_error("sandbox-run is not built at " + sandbox_run);
    const std::vector<std::string> probe{srun, "--ntasks=1", "--nodes=1", "--quiet", "--job-name=sbx-bench-probe",
                                         "--", "/bin/true"};
    const auto r = run_direct(probe, environ_strings(), std::chrono::seconds(60));
    if (r.status != 0 || r.killed) {
        std::string why = r.killed ? "no answer within 60 s" : "exit " + std::to_string(r.status);
        if (!r.output.empty()) why += ": " + r.output.substr(0, r.output.find_last_not_of('\n') + 1);
        throw std::runtime_error("srun is not usable (`srun --ntasks=1 /bin/true` failed: " + why +
                                 "); is the cluster up? (sinfo; scripts/setup-slurm.sh)");
    }
}

// ------------------------------------------------------------------ 1. per job

struct per_job_row {
    std::string inner;
    std::vector<double> lib, bare;
    // The library's own time: from execute() to srun's spawn (on_launch), and from srun's
    // reap to the result in hand (the run's wall time less the result's duration, which runs
    // from the spawn to the reap, and less the former).
    std::vector<double> lib_to_spawn, lib_own;
};

std::string value_after(const std::vector<std::string>& argv, const std::string& flag)
{
    for (std::size_t i = 0; i + 1 < argv.size(); ++i)
        if (argv[i] == flag) return argv[i + 1];
    return "";
}

per_job_row bench_per_job(sandbox::driver inner, int runs, int warmup)
{
    per_job_row row;
    row.inner = std::string(sandbox::to_string(inner));
    sandbox::driver_options options;
    options.slurm.inner = inner;
    options.slurm.node_program = sandbox_run;
    // The defaults are the CLI's (5 s, 128M): the same srun flags as the batch part.
    auto runner = sandbox::make_runner(sandbox::execution_policy::defaults(), sandbox::driver::slurm, options);
    const std::vector<std::string> command{"true"};
    asio::io_context ctx;

    auto lib_once = [&](bool keep) {
        std::optional<sandbox::exec_result> result;
        std::exception_ptr error;
        clock_type::time_point launched{};
        sandbox::exec_options eo;
        eo.on_launch = [&launched](const sandbox::launch_preview&) { launched = clock_type::now(); };
        const auto t0 = clock_type::now();
        asio::co_spawn(ctx, runner->execute(command, std::move(eo)), [&](std::exception_ptr e, sandbox::exec_result r) {
            error = e;
            result = std::move(r);
        });
        ctx.restart();
        ctx.run();
        const double ms = ms_since(t0);
        if (error) std::rethrow_exception(error);
        if (!result || !result->success())
            throw std::runtime_error("library run (inner " + row.inner + ") failed: exit " +
                                     std::to_string(result ? result->exit_code : -1) +
                                     (result ? ": " + result->err : std::string()));
        if (keep) {
            const double to_spawn = ms_between(t0, launched);
            row.lib.push_back(ms);
            row.lib_to_spawn.push_back(to_spawn);
            row.lib_own.push_back(ms - std::chrono::duration<double, std::milli>(result->duration).count());
        }
    };
    auto bare_once = [&](bool keep) {
        const auto p = runner->preview(command);  // the exact argv and environment, not timed
        const auto tag = value_after(p.argv, "--tag");
        const auto t0 = clock_type::now();
        const auto r = run_direct(p.argv, p.env, std::chrono::seconds(60));
        const double ms = ms_since(t0);
        if (r.status != 0 || r.killed)
            throw std::runtime_error("bare srun (inner " + row.inner + ") failed: exit " + std::to_string(r.status) +
                                     ": " + r.output);
        // The node ran the step: its report line came back.
        if (tag.empty() || r.output.find(tag + "{") == std::string::npos)
            throw std::runtime_error("bare srun (inner " + row.inner +
                                     "): no report line from the node in: " + r.output);
        if (keep) row.bare.push_back(ms);
    };

    for (int i = 0; i < warmup; ++i) {
        lib_once(false);
        bare_once(false);
    }
    for (int i = 0; i < runs; ++i) {
        // Alternate which goes first, too.
        if (i % 2 == 0) {
            lib_once(true);
            bare_once(true);
        } else {
            bare_once(true);
            lib_once(true);
        }
    }
    return row;
}

// ------------------------------------------------------------------ 2. batch

long vm_rss_kib(pid_t pid)
{
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(in, line))
        if (line.starts_with("VmRSS:")) return std::atol(line.c_str() + 6);
    return -1;
}

// utime + stime of `pid` itself (not its children), in seconds; -1 when it is gone.
double own_cpu_seconds(pid_t pid)
{
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    try {
        text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    } catch (const std::ios_base::failure&) {  // it ended while being read (ESRCH)
        return -1;
    }
    const auto close = text.rfind(')');  // the name may hold spaces
    if (close == std::string::npos) return -1;
    std::istringstream rest(text.substr(close + 2));
    std::string field;
    double ticks = 0;
    for (int i = 3; i <= 15 && rest >> field; ++i)  // fields 14 and 15: utime, stime
        if (i >= 14) ticks += std::atof(field.c_str());
    return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// CPU seconds (user + system) of the reaped children so far, theirs included.
double children_cpu_seconds()
{
    rusage u{};
    ::getrusage(RUSAGE_CHILDREN, &u);
    auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
    return s(u.ru_utime) + s(u.ru_stime);
}

struct rss_sample {
    double t = 0;
    long kib = 0;
    long done = 0;
};

struct batch_figures {
    double lib_seconds = 0, bare_seconds = 0;
    long results = 0, succeeded = 0, unique_ids = 0;
    std::string summary;  // sandbox-run's own last line
    std::vector<rss_sample> samples;
    long bare_failures = 0;
    // CPU seconds: of sandbox-run itself (its last sample), and of each side's whole tree
    // on this machine (the client side: sandbox-run and its sruns, or the bare sruns).
    double lib_own_cpu = 0, lib_tree_cpu = 0, bare_tree_cpu = 0;
    // Each job's time from its spawn to its reap, ms: the library's from its results
    // ("duration"), the bare ones timed here.
    std::vector<double> lib_job_ms, bare_job_ms;
};

// Lines of the results so far: sandbox-run writes them to .results.jsonl.XXXXXX beside
// results.jsonl and renames it at the end.
class progress_counter {
public:
    explicit progress_counter(std::filesystem::path dir) : dir_(std::move(dir)) {}
    ~progress_counter()
    {
        if (fd_ >= 0) ::close(fd_);
    }
    progress_counter(const progress_counter&) = delete;
    progress_counter& operator=(const progress_counter&) = delete;

    long lines()
    {
        if (fd_ < 0) open_temp();
        if (fd_ < 0) return 0;
        char buf[65536];
        for (;;) {
            const ssize_t n = ::read(fd_, buf, sizeof buf);
            if (n <= 0) break;
            lines_ += std::count(buf, buf + n, '\n');
        }
        return lines_;
    }

private:
    void open_temp()
    {
        DIR* d = ::opendir(dir_.c_str());
        if (!d) return;
        while (dirent* e = ::readdir(d)) {
            if (std::string_view(e->d_name).starts_with(".results.jsonl.")) {
                fd_ = ::open((dir_ / e->d_name).c_str(), O_RDONLY | O_CLOEXEC);
                break;
            }
        }
        ::closedir(d);
    }

    std::filesystem::path dir_;
    int fd_ = -1;
    long lines_ = 0;
};

void run_library_batch(const std::filesystem::path& dir, long jobs, int parallel, batch_figures& f)
{
    const auto jobs_file = (dir / "jobs.jsonl").string();
    const auto results_file = (dir / "results.jsonl").string();
    const auto log_file = (dir / "batch.log").string();
    {
        std::ofstream out(jobs_file);
        for (long i = 1; i <= jobs; ++i) out << "{\"id\":\"j" << i << "\",\"argv\":[\"true\"]}\n";
    }
    const std::vector<std::string> argv{
        sandbox_run, "--batch",    jobs_file,      "--driver", "slurm", "-j", std::to_string(parallel),
        "-o",        results_file, "--no-progress"};
    auto a = c_strings(argv);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid = 0;
    const double cpu0 = children_cpu_seconds();
    const auto t0 = clock_type::now();
    const int rc = posix_spawn(&pid, a[0], &fa, nullptr, a.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) throw std::runtime_error("cannot start " + sandbox_run + ": " + std::strerror(rc));

    progress_counter progress(dir);
    int status = 0;
    for (;;) {
        const long kib = vm_rss_kib(pid);
        if (const double cpu = own_cpu_seconds(pid); cpu >= 0) f.lib_own_cpu = cpu;
        const long done = progress.lines();
        const pid_t w = ::waitpid(pid, &status, WNOHANG);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) throw std::runtime_error("waitpid failed");
        if (kib > 0) f.samples.push_back({ms_since(t0) / 1000.0, kib, done});
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    f.lib_seconds = ms_since(t0) / 1000.0;
    f.lib_tree_cpu = children_cpu_seconds() - cpu0;

    std::ifstream log(log_file);
    std::string line, all;
    while (std::getline(log, line))
        if (!line.empty()) {
            f.summary = line;
            all += line + "\n";
        }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        throw std::runtime_error("sandbox-run --batch failed (status " + std::to_string(status) + "):\n" + all);

    std::set<std::string> ids;
    std::ifstream results(results_file);
    while (std::getline(results, line)) {
        if (line.empty()) continue;
        ++f.results;
        const auto v = boost::json::parse(line).as_object();
        if (const auto* id = v.if_contains("id"); id && id->is_string()) ids.insert(std::string(id->as_string()));
        if (const auto* s = v.if_contains("success"); s && s->is_bool() && s->as_bool()) ++f.succeeded;
        if (const auto* d = v.if_contains("duration"); d && d->is_number())
            f.lib_job_ms.push_back(d->to_number<double>() * 1000);
    }
    f.unique_ids = static_cast<long>(ids.size());
}

// What the CLI starts for one job of the batch: its dry run of the same command.
sandbox::launch_preview cli_job_launch()
{
    const std::vector<std::string> argv{sandbox_run, "--driver", "slurm", "--dry-run", "--json", "--", "true"};
    const auto r = run_direct(argv, environ_strings(), std::chrono::seconds(30));
    if (r.status != 0) throw std::runtime_error("sandbox-run --dry-run failed: " + r.output);
    const auto v = boost::json::parse(r.output).as_object();
    sandbox::launch_preview p;
    for (const auto& s : v.at("argv").as_array()) p.argv.emplace_back(s.as_string());
    for (const auto& s : v.at("env").as_array()) p.env.emplace_back(s.as_string());
    return p;
}

// The same argv with the run's random parts (job name, report tag) made afresh, as the
// library does per run.
std::vector<std::string> fresh_names(std::vector<std::string> argv)
{
    for (std::size_t i = 0; i < argv.size(); ++i) {
        if (argv[i].starts_with("--job-name=sbx-"))
            argv[i] = "--job-name=sbx-" + std::to_string(::getpid()) + "-" + random_hex(12);
        else if (argv[i] == "--tag" && i + 1 < argv.size())
            argv[i + 1] = "sandbox-run slurm-step " + random_hex(16) + " ";
    }
    return argv;
}

// The same jobs as bare srun, `parallel` at a time, stdin /dev/null, their stdout and stderr
// into one pipe read to EOF by a thread (a caller wants the output, as sandbox-run does).
// Adds its wall time to f.bare_seconds.
void run_bare_batch(const sandbox::launch_preview& job, long jobs, int parallel, batch_figures& f)
{
    auto e = c_strings(job.env);
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    std::thread reader([fd = p[0]] {
        char buf[65536];
        for (;;) {
            const ssize_t n = ::read(fd, buf, sizeof buf);
            if (n > 0 || (n < 0 && errno == EINTR)) continue;
            break;
        }
        ::close(fd);
    });
    struct end_output {  // also when a spawn fails: the reader sees EOF once the children are gone
        int& fd;
        std::thread& reader;
        ~end_output()
        {
            if (fd >= 0) ::close(fd);
            reader.join();
        }
    } end{p[1], reader};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_adddup2(&fa, p[1], 2);
    // Made before the clock starts, as the library's are before their spawns in its run.
    std::vector<std::vector<std::string>> argvs;
    for (long i = 0; i < jobs; ++i) argvs.push_back(fresh_names(job.argv));
    const double cpu0 = children_cpu_seconds();
    const auto t0 = clock_type::now();
    long started = 0, done = 0, running = 0;
    std::map<pid_t, clock_type::time_point> spawned;
    while (done < jobs) {
        while (running < parallel && started < jobs) {
            auto a = c_strings(argvs[static_cast<std::size_t>(started)]);
            pid_t pid = 0;
            const auto at = clock_type::now();
            if (const int rc = posix_spawn(&pid, a[0], &fa, nullptr, a.data(), e.data()); rc != 0) {
                posix_spawn_file_actions_destroy(&fa);
                throw std::runtime_error("cannot start srun: " + std::string(std::strerror(rc)));
            }
            spawned[pid] = at;
            ++started;
            ++running;
        }
        int status = 0;
        const pid_t pid = ::waitpid(-1, &status, 0);
        if (pid < 0) {
            if (errno == EINTR) continue;
            throw std::runtime_error("waitpid failed");
        }
        if (auto it = spawned.find(pid); it != spawned.end()) {
            f.bare_job_ms.push_back(ms_since(it->second));
            spawned.erase(it);
        }
        --running;
        ++done;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++f.bare_failures;
    }
    ::close(std::exchange(p[1], -1));
    f.bare_seconds += ms_since(t0) / 1000.0;
    f.bare_tree_cpu += children_cpu_seconds() - cpu0;
    posix_spawn_file_actions_destroy(&fa);
}

// The first sample at or past `fraction` of the jobs (the last one for 1.0 if none is).
const rss_sample& sample_at(const std::vector<rss_sample>& s, long jobs, double fraction)
{
    const auto want = static_cast<long>(std::ceil(fraction * static_cast<double>(jobs)));
    for (const auto& x : s)
        if (x.done >= want) return x;
    return s.back();
}

}  // namespace

int main(int argc, char** argv)
{
    int runs = 60, warmup = 3, parallel = 16;
    long jobs = 1000, round_jobs = 100;
    int rounds = 0;
    bool sequential = true, batch = true;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--runs" && i + 1 < argc)
            runs = std::max(1, std::atoi(argv[++i]));
        else if (a == "--warmup" && i + 1 < argc)
            warmup = std::max(0, std::atoi(argv[++i]));
        else if (a == "--jobs" && i + 1 < argc)
            jobs = std::max(10L, std::atol(argv[++i]));
        else if ((a == "--parallel" || a == "-j") && i + 1 < argc)
            parallel = std::max(1, std::atoi(argv[++i]));
        else if (a == "--rounds" && i + 1 < argc)
            rounds = std::max(0, std::atoi(argv[++i]));
        else if (a == "--round-jobs" && i + 1 < argc)
            round_jobs = std::max(10L, std::atol(argv[++i]));
        else if (a == "--no-sequential")
            sequential = false;
        else if (a == "--no-batch")
            batch = false;
        else {
            std::fprintf(stderr,
                         "usage: %s [--runs N] [--warmup W] [--jobs J] [--parallel P] [--rounds R] [--round-jobs K]\n"
                         "          [--no-sequential] [--no-batch]\n"
                         "  --runs N        sequential runs of `true` per side and inner driver (default 60)\n"
                         "  --warmup W      unmeasured runs per side first (default 3)\n"
                         "  --jobs J        jobs in the batch (default 1000)\n"
                         "  --parallel P    jobs at a time in the batches (sandbox-run -j; default 16)\n"
                         "  --rounds R      then R paired rounds of a K-job batch, sandbox-run and bare in turn\n"
                         "                  first (default 0: none)\n"
                         "  --round-jobs K  jobs per round (default 100)\n",
                         argv[0]);
            return 2;
        }
    }

    // srun inherits these: an inherited allocation would make every run a step of it.
    for (const char* v : {"SLURM_JOB_ID", "SLURM_JOBID"})
        if (const char* set = std::getenv(v); set && *set)
            std::printf("note: %s=%s is set: runs are steps of that allocation (--exact)\n", v, set);

    try {
        check_srun();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_slurm: %s\n", e.what());
        return 1;
    }

    bool goal_missed = false;
    std::string summary;
    try {
        if (sequential) {
            std::printf(
                "bench_slurm, part 1: per job, %d sequential runs of `true` per side (after %d warm-ups), library "
                "and bare srun (same argv) interleaved\n",
                runs, warmup);
            std::printf("%-11s %9s %9s %9s %9s %9s %9s %7s %7s %7s %10s %9s\n", "inner", "bare med", "lib med",
                        "bare p90", "lib p90", "bare mean", "lib mean", "med ×", "p90 ×", "pair ×", "lib→spawn",
                        "lib own");
            std::fflush(stdout);
            for (auto inner : {sandbox::driver::bubblewrap, sandbox::driver::host}) {
                const auto r = bench_per_job(inner, runs, warmup);
                const double bm = median(r.bare), lm = median(r.lib);
                const double b9 = percentile(r.bare, 90), l9 = percentile(r.lib, 90);
                // Each library run against the bare run next to it: drift between the pairs cancels.
                std::vector<double> pairs;
                for (std::size_t i = 0; i < r.lib.size(); ++i) pairs.push_back(r.lib[i] / r.bare[i]);
                std::printf("%-11s %7.1fms %7.1fms %7.1fms %7.1fms %7.1fms %7.1fms %7.3f %7.3f %7.3f %8.2fms %7.2fms\n",
                            r.inner.c_str(), bm, lm, b9, l9, mean(r.bare), mean(r.lib), lm / bm, l9 / b9, median(pairs),
                            median(r.lib_to_spawn), median(r.lib_own));
                std::fflush(stdout);
                if (lm / bm > 1.10) goal_missed = true;
                char buf[160];
                std::snprintf(buf, sizeof buf, "%s %.1f/%.1f ms (%.2f×, paired %.2f×)", r.inner.c_str(), lm, bm,
                              lm / bm, median(pairs));
                summary += (summary.empty() ? "" : ", ") + std::string(buf);
            }
            std::printf(
                "  (med/p90/mean: per job; × = library / bare, of the medians, of the p90s, and the median of "
                "each library run / the bare\n   run beside it; lib→spawn: the library's median time from "
                "execute() to srun's spawn; lib own: its median time\n   outside srun's life, i.e. lib→spawn "
                "plus from srun's reap to the result in hand)\n\n");
        }

        if (batch) {
            std::string tmpl = (std::filesystem::temp_directory_path() / "sandbox-bench-slurm-XXXXXX").string();
            if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
            const std::filesystem::path dir = tmpl;
            std::printf("bench_slurm, part 2: batch of %ld jobs `true`, %d at a time (in %s)\n", jobs, parallel,
                        dir.c_str());
            std::printf("  sandbox-run --batch jobs.jsonl --driver slurm -j %d -o results.jsonl --no-progress\n",
                        parallel);
            std::fflush(stdout);
            const auto job = cli_job_launch();
            std::printf(
                "  bare: the CLI's srun argv for a job (its --dry-run), with a fresh job name and tag per job, "
                "%d at a time,\n  output read from a pipe; half of the jobs before the library's batch and half "
                "after, so that drift hits both alike\n",
                parallel);
            std::fflush(stdout);
            batch_figures f;
            run_bare_batch(job, jobs / 2, parallel, f);
            run_library_batch(dir, jobs, parallel, f);
            run_bare_batch(job, jobs - jobs / 2, parallel, f);

            const double lib_rate = static_cast<double>(jobs) / f.lib_seconds;
            const double bare_rate = static_cast<double>(jobs) / f.bare_seconds;
            const bool complete = f.results == jobs && f.unique_ids == jobs && f.succeeded == jobs;
            std::printf("  %-20s %10s %10s %8s\n", "", "bare srun", "sandbox", "×");
            std::printf("  %-20s %9.2fs %9.2fs %8.3f   (× = sandbox time / bare time)\n", "wall time", f.bare_seconds,
                        f.lib_seconds, f.lib_seconds / f.bare_seconds);
            std::printf("  %-20s %10.1f %10.1f %8.3f   (bare rate / sandbox rate: the same)\n", "jobs/s", bare_rate,
                        lib_rate, bare_rate / lib_rate);
            // Where the time goes: each job's srun (spawn to reap), and how many ran at once.
            if (!f.lib_job_ms.empty() && !f.bare_job_ms.empty()) {
                std::printf("  %-20s %8.1fms %8.1fms %8.3f   (median time from spawn to reap)\n", "srun per job",
                            median(f.bare_job_ms), median(f.lib_job_ms), median(f.lib_job_ms) / median(f.bare_job_ms));
                std::printf("  %-20s %8.1fms %8.1fms %8.3f\n", "  mean", mean(f.bare_job_ms), mean(f.lib_job_ms),
                            mean(f.lib_job_ms) / mean(f.bare_job_ms));
                // Jobs in flight on average (the sum of the jobs' times over the wall time): how
                // full each side kept its slots. The bare side's two halves have a ramp-up and a
                // tail each, the library's batch one.
                const auto in_flight = [](double seconds, const std::vector<double>& v) {
                    return std::accumulate(v.begin(), v.end(), 0.0) / (seconds * 1000);
                };
                std::printf("  %-20s %10.2f %10.2f            (sum of the jobs' times / wall time; at most %d)\n",
                            "jobs in flight", in_flight(f.bare_seconds, f.bare_job_ms),
                            in_flight(f.lib_seconds, f.lib_job_ms), parallel);
            }
            const double per_job = 1000.0 / static_cast<double>(jobs);
            std::printf(
                "  %-20s %8.1fms %8.1fms %8.3f   (user + system, srun and all on this side of the "
                "scheduler)\n",
                "CPU per job", f.bare_tree_cpu * per_job, f.lib_tree_cpu * per_job, f.lib_tree_cpu / f.bare_tree_cpu);
            std::printf("  %-20s %10s %8.1fms            (sandbox-run itself, without its sruns)\n", "", "",
                        f.lib_own_cpu * per_job);
            std::printf("  results: %ld lines, %ld distinct ids, %ld succeeded (of %ld)%s; bare srun failures: %ld\n",
                        f.results, f.unique_ids, f.succeeded, jobs, complete ? "" : "  INCOMPLETE", f.bare_failures);
            std::printf("  sandbox-run says: %s\n", f.summary.c_str());
            if (f.samples.empty()) throw std::runtime_error("no resident memory sample of sandbox-run");
            long max_kib = 0;
            for (const auto& s : f.samples) max_kib = std::max(max_kib, s.kib);
            const auto& s10 = sample_at(f.samples, jobs, 0.10);
            const auto& s50 = sample_at(f.samples, jobs, 0.50);
            const auto& s100 = sample_at(f.samples, jobs, 1.0);
            std::printf(
                "  sandbox-run VmRSS (%zu samples, every 100 ms; at 100 %%: the last sample before its exit):\n",
                f.samples.size());
            std::printf("    %-8s %8s %8s %10s\n", "at", "jobs", "t", "VmRSS");
            const auto& s1 = sample_at(f.samples, 1, 1.0);
            for (const auto* s : {&s1, &s10, &s50, &s100}) {
                const char* label = s == &s1 ? "1st job" : s == &s10 ? "10 %" : s == &s50 ? "50 %" : "100 %";
                std::printf("    %-8s %8ld %7.1fs %7.1f MiB\n", label, s->done, s->t,
                            static_cast<double>(s->kib) / 1024);
            }
            std::printf("    %-8s %8s %8s %7.1f MiB\n", "max", "", "", static_cast<double>(max_kib) / 1024);
            // Flat: from 10 % of the jobs to the end, less than 1 MiB or 5 % more.
            const long growth = s100.kib - s10.kib;
            const bool flat = growth <= std::max(1024L, s10.kib / 20);
            std::printf("    growth from 10 %% to 100 %% of the jobs: %+ld KiB: %s\n", growth,
                        flat ? "flat" : "GROWS with the job count");
            if (!complete) {
                std::fprintf(stderr, "bench_slurm: the batch's results are incomplete\n");
                return 1;
            }
            if (f.bare_failures) throw std::runtime_error(std::to_string(f.bare_failures) + " bare srun jobs failed");
            if (!flat || f.lib_seconds / f.bare_seconds > 1.10) goal_missed = true;
            char buf[256];
            std::snprintf(buf, sizeof buf, "batch %ld: %.1f/%.1f jobs/s (%.2f×), RSS %.1f→%.1f MiB (max %.1f) %s", jobs,
                          lib_rate, bare_rate, bare_rate / lib_rate, static_cast<double>(s10.kib) / 1024,
                          static_cast<double>(s100.kib) / 1024, static_cast<double>(max_kib) / 1024,
                          flat ? "flat" : "GROWS");
            summary += (summary.empty() ? "" : "; ") + std::string(buf);

            if (rounds > 0) {
                std::printf(
                    "\nbench_slurm, part 3: %d paired rounds of %ld jobs, %d at a time, sandbox-run and bare srun in "
                    "turn first\n",
                    rounds, round_jobs, parallel);
                std::printf("  %-6s %10s %10s %8s %12s %12s\n", "round", "bare", "sandbox", "×", "bare CPU/job",
                            "lib CPU/job");
                std::fflush(stdout);
                std::vector<double> ratios;
                double bare_total = 0, lib_total = 0;
                for (int r = 0; r < rounds; ++r) {
                    batch_figures rf;
                    if (r % 2 == 0) {
                        run_library_batch(dir, round_jobs, parallel, rf);
                        run_bare_batch(job, round_jobs, parallel, rf);
                    } else {
                        run_bare_batch(job, round_jobs, parallel, rf);
                        run_library_batch(dir, round_jobs, parallel, rf);
                    }
                    if (rf.succeeded != round_jobs || rf.bare_failures)
                        throw std::runtime_error("round " + std::to_string(r + 1) + ": not every job succeeded");
                    ratios.push_back(rf.lib_seconds / rf.bare_seconds);
                    bare_total += rf.bare_seconds;
                    lib_total += rf.lib_seconds;
                    const double per_job = 1000.0 / static_cast<double>(round_jobs);
                    std::printf("  %-6d %9.2fs %9.2fs %8.3f %10.1fms %10.1fms\n", r + 1, rf.bare_seconds,
                                rf.lib_seconds, ratios.back(), rf.bare_tree_cpu * per_job, rf.lib_tree_cpu * per_job);
                    std::fflush(stdout);
                }
                std::printf(
                    "  %-6s %9.2fs %9.2fs %8.3f   (× = sandbox time / bare time; median of the rounds' × "
                    "%.3f)\n",
                    "total", bare_total, lib_total, lib_total / bare_total, median(ratios));
                std::snprintf(buf, sizeof buf, "; %d paired rounds of %ld: %.2f× (median %.2f×)", rounds, round_jobs,
                              lib_total / bare_total, median(ratios));
                summary += buf;
            }
            std::error_code ec;
            std::filesystem::remove_all(dir, ec);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_slurm: %s\n", e.what());
        return 1;
    }
    std::printf("\nsummary: library/bare %s; goal (≤ 1.10, flat memory) %s\n", summary.c_str(),
                goal_missed ? "MISSED" : "met");
    return goal_missed ? 3 : 0;
}
