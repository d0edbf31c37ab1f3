// SPDX-License-Identifier: BSL-1.0
// Running sandbox-run as a user does: as a child process (through the library's own host
// runner), with arguments, stdin and environment, looking at its exit status and output.
#ifndef SANDBOX_TEST_CLI_SUPPORT_HPP
#define SANDBOX_TEST_CLI_SUPPORT_HPP

#include "test_support.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <signal.h>

#include <atomic>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace sandbox::test {

inline std::string tool() { return build::run_bin(); }

struct cli_result {
    int code = -1;
    std::string out;
    std::string err;
    double seconds = 0;
    exec_result raw;
};

struct cli_options {
    std::optional<std::string> input;      ///< the tool's stdin
    env_list env;                          ///< the tool's environment
    output_callback on_output;             ///< sees the tool's output as it comes
    std::optional<std::filesystem::path> cwd;  ///< the tool's working directory (else the policy's default)
    std::chrono::milliseconds timeout = 120s;
};

/// The policy the tool itself runs under in the tests: generous limits.
/// The sanitizers' settings reach the tool too, so that a finding in it fails the tests.
inline execution_policy tool_policy(env_list env = {})
{
    // And the helpers just built, which the tool runs (and a slurm node's tool too).
    for (const char* name : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "SANDBOX_SPAWN_HELPER",
                             "SANDBOX_LANDLOCK_EXEC", "SANDBOX_SECCOMP_EXEC", "SANDBOX_SWEEP"})
        if (const char* v = std::getenv(name)) env.emplace_back(name, v);
    // A blocked name given here is for the tool (to see what it does with it): it must
    // reach the tool, so the harness passes it on purpose.
    std::vector<std::string> blocked;
    for (const auto& [name, value] : env)
        if (is_blocked_env_name(name)) blocked.push_back(name);
    return execution_policy::defaults()
        .with_timeout(120s)
        .with_output_caps(256u << 20, 256u << 20)
        .with_env(std::move(env))
        .with_env_unblocked(std::move(blocked));
}

inline cli_result run_cli(std::vector<std::string> args, cli_options o = {})
{
    auto policy = tool_policy(o.env).with_timeout(o.timeout);
    if (o.cwd) policy = policy.with_base_dir(*o.cwd);
    auto runner = make_runner(policy, driver::host);
    args.insert(args.begin(), tool());
    auto r = run_sync(*runner, std::move(args), std::move(o.input), std::move(o.on_output));
    return {r.exit_code, r.out, r.err, std::chrono::duration<double>(r.duration).count(), r};
}

inline cli_result run_cli(std::vector<std::string> args, std::string input)
{
    cli_options o;
    o.input = std::move(input);
    return run_cli(std::move(args), std::move(o));
}

/// Splits text into lines (without the newlines); a last line without '\n' counts too.
inline std::vector<std::string> lines_of(const std::string& text)
{
    std::vector<std::string> lines;
    std::string line;
    std::istringstream in(text);
    while (std::getline(in, line)) lines.push_back(line);
    return lines;
}

/// Every line parsed as a JSON object (fails the test for one that is not).
inline std::vector<boost::json::object> json_lines(const std::string& text)
{
    std::vector<boost::json::object> out;
    for (const auto& line : lines_of(text)) {
        boost::system::error_code ec;
        auto v = boost::json::parse(line, ec);
        BOOST_TEST_REQUIRE(!ec, "not JSON: " << line);
        BOOST_TEST_REQUIRE(v.is_object(), "not an object: " << line);
        out.push_back(v.as_object());
    }
    return out;
}

/// The result lines by line number.
inline std::map<std::int64_t, boost::json::object> by_line(const std::vector<boost::json::object>& results)
{
    std::map<std::int64_t, boost::json::object> m;
    for (const auto& r : results) {
        BOOST_TEST_REQUIRE(r.contains("line"));
        m[r.at("line").to_number<std::int64_t>()] = r;
    }
    return m;
}

inline void write_text(const std::filesystem::path& p, const std::string& text)
{
    std::ofstream f(p, std::ios::binary);
    f << text;
}

inline std::string read_text(const std::filesystem::path& p)
{
    return file_contents(p);
}

/// A number like 7.123456, unlikely to appear in any other process's command line.
inline std::string unique_seconds(int whole = 7)
{
    std::random_device rd;
    return std::to_string(whole) + "." + std::to_string(100000 + rd() % 800000);
}

/// A job line running argv, with optional extra members (already JSON, e.g. R"("id":"x")").
inline std::string job(const std::vector<std::string>& argv, const std::string& extra = "")
{
    boost::json::array a;
    for (const auto& s : argv) a.emplace_back(boost::json::string(s));
    std::string s = "{";
    if (!extra.empty()) s += extra + ",";
    s += "\"argv\":" + boost::json::serialize(a) + "}";
    return s;
}

/// Waits (polling) until `pred` holds or `limit` passes. A `pred` that throws has not held
/// yet: the predicates read /proc, where a process that exits while its cmdline is being read
/// makes the read fail (ESRCH), and that says nothing about what is waited for.
inline bool eventually(const std::function<bool()>& pred, std::chrono::milliseconds limit = 20s)
{
    auto holds = [&] {
        try {
            return pred();
        } catch (const std::exception&) {
            return false;
        }
    };
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
        if (holds()) return true;
        std::this_thread::sleep_for(20ms);
    }
    return holds();
}

/// Pids of sandbox-run processes (argv[0] is the tool) whose command line holds `token`.
inline std::vector<int> tool_processes(const std::string& token)
{
    std::vector<int> out;
    for (int pid : processes_matching(token)) {
        const std::string cmd = file_contents("/proc/" + std::to_string(pid) + "/cmdline");
        if (cmd.starts_with(tool() + '\0')) out.push_back(pid);
    }
    return out;
}

/// A fresh `--env` value that marks one sandbox-run process.
inline std::string fresh_token() { return "CLI_TEST_MARK=" + unique_seconds(1); }

/// Runs argv (which starts a sandbox-run carrying `token`); once `ready()` holds, sends
/// `sig` to that sandbox-run, then calls `after_sent` with its pid (from another thread).
/// Returns the result of argv; `signalled` says whether the signal was sent.
inline cli_result run_and_signal(std::vector<std::string> argv, const std::string& token,
                                 const std::function<bool()>& ready, int sig, bool* signalled = nullptr,
                                 const std::function<void(int)>& after_sent = {})
{
    auto runner = make_runner(tool_policy(), driver::host);
    asio::io_context ctx;
    std::optional<exec_result> result;
    std::exception_ptr error;
    asio::co_spawn(ctx, runner->execute(std::move(argv)), [&](std::exception_ptr e, exec_result r) {
        error = e;
        result = std::move(r);
    });
    std::atomic<bool> sent{false};
    std::thread killer([&] {
        int pid = 0;
        if (!eventually([&] {
                auto pids = tool_processes(token);
                if (pids.size() == 1) pid = pids.front();
                return pid != 0 && ready();
            }))
            return;
        ::kill(pid, sig);
        sent = true;
        if (after_sent) after_sent(pid);
    });
    ctx.run_for(120s);
    killer.join();
    if (signalled) *signalled = sent;
    if (error) std::rethrow_exception(error);
    BOOST_TEST_REQUIRE(result.has_value());
    return {result->exit_code, result->out, result->err, std::chrono::duration<double>(result->duration).count(),
            *result};
}

/// sandbox-run with `args`; once `ready()` holds, `sig` is sent to it.
inline cli_result run_cli_and_signal(std::vector<std::string> args, const std::function<bool()>& ready, int sig,
                                     bool* signalled = nullptr, const std::function<void(int)>& after_sent = {})
{
    const auto token = fresh_token();
    args.insert(args.begin(), {tool(), "--env", token});
    return run_and_signal(std::move(args), token, ready, sig, signalled, after_sent);
}

/// True when AddressSanitizer is on (everything is slower and bigger then).
constexpr bool sanitized()
{
#if defined(__SANITIZE_ADDRESS__)
    return true;
#else
    return false;
#endif
}

}  // namespace sandbox::test

#endif
