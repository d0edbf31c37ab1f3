// SPDX-License-Identifier: BSL-1.0
#include "options.hpp"

#include "io.hpp"

#include <boost/json/parse.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <system_error>

namespace sandbox::cli {

namespace {

std::string squote(std::string_view s) { return "'" + std::string(s) + "'"; }

std::string lower(std::string_view s)
{
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// ---- one table of options -----------------------------------------------------------------

enum class arity { flag, value };

struct option_spec {
    std::string_view name;  // long name without the dashes
    char short_name;        // 0 when none
    arity kind;
    bool batch_only;
    void (*apply)(options&, std::string_view flag, std::string_view value);
};

// A duration, or nullopt for none: "0", "none" or "off".
std::optional<std::chrono::milliseconds> limit_or_none(std::string_view flag, std::string_view v, std::string_view hint)
{
    const auto l = lower(v);
    if (l == "none" || l == "off") return std::nullopt;
    auto d = parse_duration(v);
    if (!d) throw usage_error(std::string(flag) + ": invalid duration " + squote(v) + " (" + std::string(hint) + ")");
    if (d->count() == 0) return std::nullopt;
    return d;
}

std::size_t size_value(std::string_view flag, std::string_view v)
{
    auto s = parse_size(v);
    if (!s || *s > std::numeric_limits<std::size_t>::max())
        throw usage_error(std::string(flag) + ": invalid size " + squote(v) + " (bytes, or with K, M or G: 64K, 1M)");
    return static_cast<std::size_t>(*s);
}

std::string_view non_empty(std::string_view flag, std::string_view v)
{
    if (v.empty()) throw usage_error(std::string(flag) + ": needs a non-empty value");
    return v;
}

constexpr unsigned max_jobs = 10000;

// "never", "now,fail=N" or "soon,fail=N" (GNU parallel's spelling; "now" alone: the first failure).
halt_rule parse_halt(std::string_view flag, std::string_view v)
{
    const auto bad = [&] {
        return usage_error(std::string(flag) + ": expected never, now,fail=N or soon,fail=N (N >= 1), got " + squote(v));
    };
    halt_rule h;
    const auto comma = v.find(',');
    const auto when = v.substr(0, comma);
    if (when == "never" && comma == std::string_view::npos) return h;
    if (when == "now") h.at = halt_rule::when::now;
    else if (when == "soon") h.at = halt_rule::when::soon;
    else throw bad();
    h.failures = 1;
    if (comma == std::string_view::npos) return h;
    const auto rest = v.substr(comma + 1);
    if (!rest.starts_with("fail=")) throw bad();
    const auto num = rest.substr(5);
    auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), h.failures);
    if (ec != std::errc() || end != num.data() + num.size() || h.failures == 0) throw bad();
    return h;
}

const option_spec option_table[] = {
    {"help", 'h', arity::flag, false, [](options& o, auto, auto) { o.mode = run_mode::help; }},
    {"version", 0, arity::flag, false, [](options& o, auto, auto) { o.mode = run_mode::version; }},
    {"show-policy", 0, arity::flag, false, [](options& o, auto, auto) { o.mode = run_mode::show_policy; }},
    {"policy", 0, arity::value, false,
     [](options& o, auto f, auto v) { o.policy_file = std::filesystem::path(non_empty(f, v)); }},
    {"driver", 0, arity::value, false,
     [](options& o, auto f, auto v) {
         try {
             o.driver = parse_driver(v);
         } catch (const std::invalid_argument& e) {
             throw usage_error(std::string(f) + ": " + e.what());
         }
     }},
    {"image", 0, arity::value, false, [](options& o, auto f, auto v) { o.image = std::string(non_empty(f, v)); }},
    {"timeout", 0, arity::value, false,
     [](options& o, auto f, auto v) {
         o.timeout = limit_or_none(f, v, "seconds, e.g. 0.5 or 2; or 500ms, 1m; 0 or none for no timeout")
                         .value_or(no_timeout);
     }},
    {"idle-timeout", 0, arity::value, false,
     [](options& o, auto f, auto v) {
         o.idle_timeout = limit_or_none(f, v, "seconds, e.g. 0.5 or 10; 0 or none disables it");
     }},
    {"memory", 0, arity::value, false,
     [](options& o, auto f, auto v) {
         try {
             o.memory = execution_policy::normalize_memory_limit(v);
         } catch (const std::invalid_argument& e) {
             throw usage_error(std::string(f) + ": " + e.what() + " " + squote(v) + " (e.g. 512M, 2G)");
         }
     }},
    {"disk", 0, arity::value, false,
     [](options& o, auto f, auto v) {
         if (v == "none") {
             o.disk = std::optional<std::string>{};
             return;
         }
         try {
             o.disk = std::optional<std::string>(execution_policy::normalize_memory_limit(v));
         } catch (const std::invalid_argument&) {
             throw usage_error(std::string(f) + ": invalid size " + squote(v) + " (e.g. 256M, 2G, or none)");
         }
     }},
    {"network", 0, arity::flag, false, [](options& o, auto, auto) { o.network = true; }},
    {"no-network", 0, arity::flag, false, [](options& o, auto, auto) { o.network = false; }},
    {"env", 'e', arity::value, false,
     [](options& o, auto f, auto v) {
         const auto eq = v.find('=');
         const auto name = v.substr(0, eq);
         if (name.empty()) throw usage_error(std::string(f) + ": expected NAME=VALUE or NAME, got " + squote(v));
         // The library strips blocked names from every environment; asked for by name here,
         // dropping it silently would run the command without what the user meant to give it.
         if (const auto pattern = blocking_env_pattern(name); !pattern.empty())
             throw usage_error(std::string(f) + " " + std::string(name) + ": blocked by the pattern " + squote(pattern) +
                               " (these names never reach a command: they can take over programs or carry secrets)");
         if (eq == std::string_view::npos) {  // NAME alone: its value here, like docker run -e NAME
             if (const char* value = std::getenv(std::string(name).c_str())) o.env.emplace_back(name, value);
             return;
         }
         o.env.emplace_back(name, v.substr(eq + 1));
     }},
    {"inherit-env", 0, arity::flag, false, [](options& o, auto, auto) { o.inherit_env = true; }},
    {"no-inherit-env", 0, arity::flag, false, [](options& o, auto, auto) { o.inherit_env = false; }},
    {"ro", 0, arity::value, false, [](options& o, auto f, auto v) { o.readable.emplace_back(non_empty(f, v)); }},
    {"rw", 0, arity::value, false, [](options& o, auto f, auto v) { o.writable.emplace_back(non_empty(f, v)); }},
    {"base-dir", 0, arity::value, false,
     [](options& o, auto f, auto v) {
         std::filesystem::path dir(non_empty(f, v));
         std::error_code ec;
         if (!std::filesystem::is_directory(dir, ec))
             throw usage_error(std::string(f) + ": " + squote(v) + " is not a directory");
         o.base_dir = std::move(dir);
     }},
    {"stdout-cap", 0, arity::value, false, [](options& o, auto f, auto v) { o.stdout_cap = size_value(f, v); }},
    {"stderr-cap", 0, arity::value, false, [](options& o, auto f, auto v) { o.stderr_cap = size_value(f, v); }},
    {"json", 0, arity::flag, false, [](options& o, auto, auto) { o.json = true; }},
    {"no-stdin", 0, arity::flag, false, [](options& o, auto, auto) { o.no_stdin = true; }},
    {"batch", 0, arity::value, false,
     [](options& o, auto f, auto v) { o.batch_file = std::string(non_empty(f, v)); }},
    {"jobs", 'j', arity::value, true,
     [](options& o, auto f, auto v) {
         unsigned n = 0;
         auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
         if (ec != std::errc() || end != v.data() + v.size() || n < 1 || n > max_jobs)
             throw usage_error(std::string(f) + ": expected a number of jobs from 1 to " + std::to_string(max_jobs) +
                               ", got " + squote(v));
         o.jobs = n;
     }},
    {"output", 'o', arity::value, true,
     [](options& o, auto f, auto v) { o.output_file = std::string(non_empty(f, v)); }},
    {"progress", 0, arity::flag, true, [](options& o, auto, auto) { o.progress = true; }},
    {"no-progress", 0, arity::flag, true, [](options& o, auto, auto) { o.progress = false; }},
    {"resume", 0, arity::value, true,
     [](options& o, auto f, auto v) { o.resume_file = std::string(non_empty(f, v)); }},
    {"resume-failed", 0, arity::flag, true, [](options& o, auto, auto) { o.resume_failed = true; }},
    {"retries", 0, arity::value, true,
     [](options& o, auto f, auto v) {
         unsigned n = 0;
         auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
         if (ec != std::errc() || end != v.data() + v.size() || n > 100)
             throw usage_error(std::string(f) + ": expected a number of retries from 0 to 100, got " + squote(v));
         o.retries = n;
     }},
    {"halt", 0, arity::value, true, [](options& o, auto f, auto v) { o.halt = parse_halt(f, v); }},
    {"keep-order", 'k', arity::flag, true, [](options& o, auto, auto) { o.keep_order = true; }},
    {"lock-policy", 0, arity::flag, true, [](options& o, auto, auto) { o.lock_policy = true; }},
    {"strict", 0, arity::flag, false, [](options& o, auto, auto) { o.strict = true; }},
    {"dry-run", 0, arity::flag, false, [](options& o, auto, auto) { o.dry_run = true; }},
    {"verbose", 'v', arity::flag, false, [](options& o, auto, auto) { o.verbose = true; }},
    {"max-line", 0, arity::value, true,
     [](options& o, auto f, auto v) {
         o.max_line = size_value(f, v);
         if (o.max_line == 0) throw usage_error(std::string(f) + ": must be more than 0");
     }},
};

const option_spec* find_long(std::string_view name)
{
    for (const auto& s : option_table)
        if (s.name == name) return &s;
    return nullptr;
}

const option_spec* find_short(char c)
{
    for (const auto& s : option_table)
        if (s.short_name != 0 && s.short_name == c) return &s;
    return nullptr;
}

std::string read_text_file(const std::filesystem::path& p, std::string_view flag)
{
    const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        throw usage_error(std::string(flag) + " " + p.string() + ": cannot read it: " + std::strerror(errno));
    try {
        auto text = read_all(fd);
        ::close(fd);
        return text;
    } catch (const std::system_error& e) {
        ::close(fd);
        throw usage_error(std::string(flag) + " " + p.string() + ": cannot read it: " + e.code().message());
    }
}

}  // namespace

// ---- value parsers ------------------------------------------------------------------------

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text)
{
    if (text.empty() || text.front() == '+' || text.front() == '-') return std::nullopt;
    double value = 0;
    const char* first = text.data();
    const char* last = text.data() + text.size();
    auto [end, ec] = std::from_chars(first, last, value, std::chars_format::fixed);
    if (ec != std::errc() || end == first) return std::nullopt;
    const auto unit = lower(std::string_view(end, static_cast<std::size_t>(last - end)));
    double scale = 1.0;  // to seconds
    if (unit.empty() || unit == "s") scale = 1.0;
    else if (unit == "ms") scale = 1e-3;
    else if (unit == "m") scale = 60.0;
    else if (unit == "h") scale = 3600.0;
    else return std::nullopt;
    const double seconds = value * scale;
    if (!std::isfinite(seconds) || seconds < 0 || seconds > 1e9) return std::nullopt;
    auto ms = std::llround(seconds * 1000.0);
    if (ms == 0 && seconds > 0) ms = 1;  // a sub-millisecond limit is the shortest one there is
    return std::chrono::milliseconds(ms);
}

std::optional<std::uint64_t> parse_size(std::string_view text)
{
    std::uint64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end == text.data()) return std::nullopt;
    const auto unit = lower(std::string_view(end, static_cast<std::size_t>(text.data() + text.size() - end)));
    std::uint64_t mult = 1;
    if (unit.empty() || unit == "b") mult = 1;
    else if (unit == "k" || unit == "kb" || unit == "kib") mult = 1ull << 10;
    else if (unit == "m" || unit == "mb" || unit == "mib") mult = 1ull << 20;
    else if (unit == "g" || unit == "gb" || unit == "gib") mult = 1ull << 30;
    else return std::nullopt;
    if (value > std::numeric_limits<std::uint64_t>::max() / mult) return std::nullopt;
    return value * mult;
}

// ---- argv ---------------------------------------------------------------------------------

options parse_options(const std::vector<std::string_view>& args)
{
    options o;
    o.args.assign(args.begin(), args.end());
    std::string_view batch_only_flag;  // the first batch-only flag seen, for the error
    std::string_view single_only_flag;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view a = args[i];
        if (a == "--") {
            o.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
            break;
        }
        if (a.size() < 2 || a.front() != '-') {  // the command starts here
            o.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
            break;
        }

        const option_spec* spec = nullptr;
        std::string flag;
        std::optional<std::string_view> value;
        if (a.starts_with("--")) {
            const auto body = a.substr(2);
            const auto eq = body.find('=');
            flag = "--" + std::string(body.substr(0, eq));
            spec = find_long(body.substr(0, eq));
            if (!spec) throw usage_error("unknown option " + squote(flag) + " (see --help)");
            if (eq != std::string_view::npos) {
                if (spec->kind == arity::flag) throw usage_error("option " + squote(flag) + " takes no value");
                value = body.substr(eq + 1);
            }
        } else {
            flag = std::string(a.substr(0, 2));
            spec = find_short(a[1]);
            if (!spec) throw usage_error("unknown option " + squote(flag) + " (see --help)");
            if (a.size() > 2) {
                if (spec->kind == arity::flag) throw usage_error("option " + squote(flag) + " takes no value");
                value = a.substr(a[2] == '=' ? 3 : 2);  // -j4, -j=4
            }
        }
        if (spec->kind == arity::value && !value) {
            if (i + 1 >= args.size()) throw usage_error("option " + squote(flag) + " needs a value");
            value = args[++i];
        }
        if (spec->batch_only && batch_only_flag.empty()) batch_only_flag = spec->name;
        if ((spec->name == "json" || spec->name == "no-stdin" || spec->name == "dry-run") && single_only_flag.empty())
            single_only_flag = spec->name;
        spec->apply(o, flag, value.value_or(std::string_view{}));
        if (o.mode == run_mode::help || o.mode == run_mode::version) return o;
    }

    if (o.mode == run_mode::show_policy) return o;
    if (o.batch_file) {
        o.mode = run_mode::batch;
        if (!o.command.empty())
            throw usage_error("--batch runs the jobs in its file and takes no command (got " + squote(o.command.front()) +
                              ")");
        if (!single_only_flag.empty())
            throw usage_error("option '--" + std::string(single_only_flag) +
                              "' is for a single command; batch results are always JSON lines");
        if (o.resume_failed && !o.resume_file)
            throw usage_error("--resume-failed needs --resume RESULTS.jsonl (the results that say which jobs failed)");
    } else {
        if (!batch_only_flag.empty())
            throw usage_error("option '--" + std::string(batch_only_flag) + "' needs --batch");
        if (o.command.empty()) throw usage_error("no command given (usage: sandbox-run [options] -- command [args...])");
        if (o.command.front().empty()) throw usage_error("the command name is empty");
    }
    return o;
}

execution_policy effective_policy(const options& o)
{
    execution_policy base = execution_policy::defaults();
    if (o.policy_file) {
        const auto text = read_text_file(*o.policy_file, "--policy");
        boost::system::error_code ec;
        auto jv = boost::json::parse(text, ec);
        if (ec) throw usage_error("--policy " + o.policy_file->string() + ": not valid JSON (" + ec.message() + ")");
        try {
            base = apply_json(base, jv);
        } catch (const std::invalid_argument& e) {
            throw usage_error("--policy " + o.policy_file->string() + ": " + e.what());
        }
    }

    policy_changes c;
    c.base_dir = o.base_dir;
    c.timeout = o.timeout;
    c.idle_timeout = o.idle_timeout;
    c.memory_limit = o.memory;
    c.disk_limit = o.disk;
    if (!o.readable.empty()) {
        auto paths = base.readable_paths();
        paths.insert(paths.end(), o.readable.begin(), o.readable.end());
        c.readable_paths = std::move(paths);
    }
    if (!o.writable.empty()) {
        auto paths = base.writable_paths();
        paths.insert(paths.end(), o.writable.begin(), o.writable.end());
        c.writable_paths = std::move(paths);
    }
    if (!o.env.empty()) {
        env_list env = base.env();
        for (const auto& [name, value] : o.env) {
            auto it = std::find_if(env.begin(), env.end(), [&](const auto& kv) { return kv.first == name; });
            if (it != env.end()) it->second = value;
            else env.emplace_back(name, value);
        }
        c.env = std::move(env);
    }
    c.inherit_env = o.inherit_env;
    c.network_enabled = o.network;
    c.stdout_limit_bytes = o.stdout_cap;
    c.stderr_limit_bytes = o.stderr_cap;
    try {
        return base.with(c);
    } catch (const std::invalid_argument& e) {
        throw usage_error(std::string("--env: ") + e.what());
    }
}

std::string usage_text()
{
    return R"(Usage: sandbox-run [OPTIONS] [--] COMMAND [ARG...]
       sandbox-run [OPTIONS] --batch JOBS.jsonl [-j N] [-o RESULTS.jsonl]
       sandbox-run report RESULTS.jsonl [-o REPORT.html]   (an HTML page; report --help)

Runs a command under an execution policy (time, memory, network, environment, paths and
output limits), or a batch of commands from a file of JSON lines.

Policy (the --policy file is loaded first, then the flags override it):
  --policy FILE            the policy as a JSON object with any of the keys base_dir,
                           timeout_seconds, idle_timeout_seconds, memory_limit,
                           readable_paths, writable_paths, env, inherit_env,
                           network_enabled, stdout_limit_bytes, stderr_limit_bytes,
                           env_allowlist, disk_limit
  --driver NAME            host (default), docker, podman, firejail or bubblewrap
  --image IMAGE            container image for docker and podman (default alpine:3)
  --timeout DURATION       wall-clock limit for the whole command (default 5);
                           0 or none: no limit
  --idle-timeout DURATION  stop the command after this long without any output;
                           0 or none turns it off (default off)
  --memory SIZE            memory limit, e.g. 512M or 2G (default 128M); enforced by
                           the isolating drivers, not by host
  --disk SIZE              what the command may write to /work and to /tmp, each
                           (e.g. 256M; default none); enforced by the isolating drivers
  --network, --no-network  allow or deny network access (default deny; not enforced by host)
  -e, --env NAME=VALUE     set a variable (repeatable; adds to the file's variables);
                           NAME alone copies its value from this environment; a blocked
                           name is refused (exit 2), naming the pattern that blocks it
  --inherit-env, --no-inherit-env
                           start from this program's environment (default: only --env);
                           blocked names (LD_PRELOAD, AWS_*, PYTHON*, ...) never pass
  --ro PATH                make PATH readable (repeatable; adds to the file's list)
  --rw PATH                make PATH writable (repeatable; adds to the file's list)
  --base-dir DIR           where commands run on host, and where the isolating drivers
                           make their work dirs (default /tmp)
  --stdout-cap SIZE        keep at most the last SIZE bytes of stdout in results
                           (default 1M, at least 1K); streamed output is never cut
  --stderr-cap SIZE        the same for stderr
  --show-policy            print the resulting policy as JSON and exit
  --dry-run                print what the driver would start (the real command line,
                           environment and working directory) and start nothing; as
                           one JSON object with --json
  -v, --verbose            print what starts on stderr first (each job's, in a batch)
  --strict                 a setting given that the driver does not enforce (--memory,
                           --disk, --no-network, --ro/--rw on host) is an error, exit 125;
                           without it, one warning line each on stderr

One command (the default mode):
  --json                   print the result as one JSON object (stdout, stderr, exit_code,
                           duration, timed_out, truncated_stdout, truncated_stderr,
                           success, timeout_reason, term_signal, usage, oom_killed,
                           start_error, driver, caps: what the driver enforces) instead
                           of streaming the output; bytes that are not UTF-8 show as U+FFFD
  --no-stdin               do not pass stdin on; otherwise, when stdin is not a terminal,
                           it is the command's stdin, read by the command as it comes
  The command's output is written to stdout and stderr as it comes. SIGINT, SIGTERM and
  SIGHUP stop the command (its whole process tree) and sandbox-run exits 128+signal.
  When sandbox-run ends the command (a timeout, the memory limit), one line on stderr
  says why and which setting did it.

Batch:
  --batch FILE             run the jobs in FILE ("-" for stdin), one JSON object a line:
                             {"id": "a1", "argv": ["cmd", "arg"], "stdin": "text",
                              "policy": {"timeout_seconds": 2}, "driver": "docker",
                              "image": "alpine:3"}
                           argv is required; id defaults to the line number; the keys of
                           policy override the command-line policy for that job, driver
                           and image its driver and image
  -j, --jobs N             run N jobs at a time (default: the number of CPUs)
  -o, --output FILE        write the results to FILE instead of stdout
  --progress, --no-progress
                           show or hide the progress line on stderr (default: shown when
                           stderr is a terminal)
  --max-line SIZE          longest input line accepted (default 64M)
  -k, --keep-order         write the results in input order (default: as jobs end); a
                           result waits for those before it, and while 16M of results
                           wait, no new job starts
  --retries N              run a job that failed to start or did not succeed up to N
                           more times (default 0); "attempts" in its result
  --halt WHEN              never (default), now,fail=N or soon,fail=N: after N failed
                           jobs start no more; now also cancels the running ones
  --resume RESULTS         skip the jobs whose id has a result in RESULTS (the -o file
                           of an earlier run; a cancelled job has none and runs again);
                           with -o the same file, its results stay and the new ones are
                           added; ids must be unique
  --resume-failed          with --resume: run again the jobs whose result failed
  --lock-policy            a job line may only tighten the policy (shorter timeouts,
                           less memory, disk or output, network off, fewer paths) and
                           may not change the driver or image
  One result line is written (and flushed) as each job ends, in the order they end:
    {"id": ..., "line": N, "attempts": A, "started_at": "...", "ended_at": "...",
     "stdout": ..., "exit_code": ..., ...}  (the keys of --json)
    {"id": ..., "line": N, ..., "error": "what is wrong"}   for a line that could not run
  started_at and ended_at are RFC 3339 UTC times with microseconds (first attempt's
  start, last attempt's end). Numbers are plain decimals.
  A slow reader of the results never holds up the running jobs; while 1M of results
  wait for it, no new job starts. Blank lines are skipped. At the end a summary goes to
  stderr: jobs, succeeded, failed, timed out, errors, cancelled, not run, wall time,
  jobs/s. Ctrl-C (or SIGTERM) starts no more jobs, cancels the running ones (their
  results say "cancelled") and reports the lines that were not run and the command
  that resumes; the results are still written, unless Ctrl-C comes again once no job
  is running. With -o FILE the results go to a temporary file beside FILE, renamed to
  FILE when the batch ends; an -o that is the jobs file is refused.

Other:
  -h, --help               show this help and exit
  --version                show the version and exit

Values: --name VALUE or --name=VALUE (and -jN, -oFILE). DURATION is in seconds with an
optional fraction (0.5, 2) or a unit (500ms, 2s, 1m, 1h). SIZE is in bytes or with K, M
or G (powers of 1024).

Exit status, one command:
  N        the command's own exit status
  124      the command timed out (wall or idle), as with GNU timeout
  125      the sandbox itself failed (e.g. the driver could not start)
  126      the command was found but could not be executed
  127      the command was not found
  128+N    the command was killed by signal N
  130, 143 sandbox-run was interrupted by SIGINT or SIGTERM (the command was stopped)
  2        bad usage: a bad option or value (one line on stderr names it)
Exit status, batch:
  0 every job succeeded, 1 some did not (or a line was bad, or --halt stopped it),
  2 bad usage, 125 --strict refused a setting of the command line,
  130 (143) interrupted by SIGINT (SIGTERM).
)";
}

}  // namespace sandbox::cli
