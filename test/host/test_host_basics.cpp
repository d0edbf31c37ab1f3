// SPDX-License-Identifier: BSL-1.0
// The host driver against real processes: exit codes, stdin, environment, descriptors.
#include "host_fixture.hpp"

#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <signal.h>

#include <cstdlib>
#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

using namespace sandbox;
using namespace sandbox::test;

BOOST_FIXTURE_TEST_SUITE(test_host_basics, host_fixture)

BOOST_AUTO_TEST_CASE(echo_succeeds)
{
    const auto r = run({"echo", "hello"});
    BOOST_TEST(r.success());
    BOOST_TEST(r.exit_code == 0);
    BOOST_TEST(r.out == "hello\n");
    BOOST_TEST(r.err.empty());
    BOOST_TEST(!r.timed_out);
    BOOST_TEST(!r.timeout.has_value());
    BOOST_TEST(r.term_signal == 0);
    BOOST_TEST(r.duration.count() > 0);
}

BOOST_AUTO_TEST_CASE(exit_codes_are_reported)
{
    for (int code : {0, 1, 3, 42, 255}) {
        const auto r = run(child_args({"exit", std::to_string(code)}));
        BOOST_TEST(r.exit_code == code);
        BOOST_TEST(r.success() == (code == 0));
    }
    const auto r = sh("echo out; echo err >&2; exit 7");
    BOOST_TEST(r.exit_code == 7);
    BOOST_TEST(r.out == "out\n");
    BOOST_TEST(r.err == "err\n");
    BOOST_TEST(r.combined_output() == "out\n\nerr\n");
}

BOOST_AUTO_TEST_CASE(a_signal_death_is_128_plus_n)
{
    const auto r = sh("kill -9 $$");
    BOOST_TEST(r.exit_code == 137);
    BOOST_TEST(r.term_signal == 9);
    BOOST_TEST(!r.timed_out);
    const auto t = sh("kill -TERM $$");
    BOOST_TEST(t.exit_code == 143);
    BOOST_TEST(t.term_signal == 15);
}

BOOST_AUTO_TEST_CASE(a_missing_command_is_127_not_an_exception)
{
    const auto r = run({"__missing_command__"});
    BOOST_TEST(!r.success());
    BOOST_TEST(r.exit_code == 127);
    BOOST_TEST((r.err.rfind("Failed to start host process", 0) == 0));
    BOOST_TEST(r.err.find("__missing_command__") != std::string::npos);
    BOOST_TEST(r.err.find("No such file or directory") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_missing_base_dir_is_127_and_named)
{
    policy = policy.with_base_dir("/nonexistent-sandbox-dir");
    const auto r = run({"true"});
    BOOST_TEST(r.exit_code == 127);
    BOOST_TEST(r.err.find("/nonexistent-sandbox-dir") != std::string::npos);
    BOOST_TEST((r.start_error == errc::bad_working_directory), r.start_error.message());
}

BOOST_AUTO_TEST_CASE(start_error_says_why_the_command_did_not_start)
{
    BOOST_TEST(!run({"true"}).start_error);
    BOOST_TEST(!run({"false"}).start_error);  // started, then failed: not a start error

    const auto missing = run({"__missing_command__"});
    BOOST_TEST((missing.start_error == errc::command_not_found));
    BOOST_TEST(missing.start_error.category().name() == std::string("sandbox"));

    temp_dir dir;
    const auto plain = dir.path / "not-executable";
    std::ofstream(plain) << "#!/bin/sh\necho hi\n";
    for (const auto& path : {plain, dir.path}) {  // no execute bit; a directory
        const auto r = run({path.string()});
        BOOST_TEST((r.start_error == errc::command_not_executable), path << ": " << r.start_error.message());
        BOOST_TEST(r.exit_code == 126);
        BOOST_TEST((r.err.rfind("Failed to start host process: " + path.string(), 0) == 0), r.err);
    }

    const auto empty = run({});
    BOOST_TEST((empty.start_error == boost::system::errc::invalid_argument), empty.start_error.message());
    BOOST_TEST(empty.exit_code == 127);
}

BOOST_AUTO_TEST_CASE(an_empty_argv_is_127_with_the_reason)
{
    const auto r = run({});
    BOOST_TEST(r.exit_code == 127);
    BOOST_TEST((r.err == "Failed to start host process: argv is empty"));
    const auto nul = run({"echo", std::string("a\0b", 3)});
    BOOST_TEST(nul.exit_code == 127);
    BOOST_TEST(nul.err.find("argument 1 contains a NUL byte") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(runs_in_base_dir)
{
    temp_dir dir;
    policy = execution_policy::in(dir.path);
    const auto r = run(child_args({"print-cwd"}));
    BOOST_TEST(r.out == dir.path.string() + "\n");
}

BOOST_AUTO_TEST_CASE(stdin_is_delivered_then_eof)
{
    BOOST_TEST(run({"cat"}, std::string("hello\n")).out == "hello\n");
    // No stdin, or empty stdin: EOF at once, so cat ends.
    const auto none = run({"cat"});
    BOOST_TEST(none.success());
    BOOST_TEST(none.out.empty());
    BOOST_TEST(run({"cat"}, std::string()).success());
}

namespace {

// Runs argv with exec_options on a fresh io_context, as run_sync does with the older shape.
exec_result run_with(command_runner& r, std::vector<std::string> argv, exec_options o)
{
    asio::io_context ctx;
    auto f = asio::co_spawn(ctx, r.execute(std::move(argv), std::move(o)), asio::use_future);
    ctx.run();
    return f.get();
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_stdin_descriptor_is_read_as_it_comes)
{
    int p[2];
    BOOST_TEST_REQUIRE(::pipe2(p, O_CLOEXEC) == 0);
    // The writer keeps its end open: the command must not wait for EOF, nor the call for it.
    std::thread writer([fd = p[1]] {
        std::this_thread::sleep_for(200ms);
        BOOST_TEST(::write(fd, "first\nsecond\n", 13) == 13);
    });
    auto r = runner();
    exec_options o;
    o.stdin_fd = p[0];
    const auto start = std::chrono::steady_clock::now();
    const auto res = run_with(*r, {"head", "-1"}, o);
    writer.join();
    BOOST_TEST(res.success(), res.err);
    BOOST_TEST(res.out == "first\n");
    BOOST_TEST(seconds(std::chrono::steady_clock::now() - start) < 5.0);
    // Still ours, and still open: the library only copied it.
    BOOST_TEST(::fcntl(p[0], F_GETFD) >= 0);
    ::close(p[0]);
    ::close(p[1]);
}

BOOST_AUTO_TEST_CASE(with_a_stdin_descriptor_the_timeout_runs_from_the_start)
{
    int p[2];
    BOOST_TEST_REQUIRE(::pipe2(p, O_CLOEXEC) == 0);  // nothing is ever written, nor closed
    policy = policy.with_timeout(300ms);
    auto r = runner();
    exec_options o;
    o.stdin_fd = p[0];
    const auto res = run_with(*r, {"cat"}, o);
    BOOST_TEST(res.timed_out);
    BOOST_TEST(res.exit_code == exit_codes::timeout);
    BOOST_TEST(seconds(res.duration) < 5.0);
    o.stdin_fd = p[0];
    BOOST_TEST(run_with(*r, child_args({"print-fds"}), o).out == "0 1 2\n");
    ::close(p[0]);
    ::close(p[1]);
}

BOOST_AUTO_TEST_CASE(a_bad_stdin_descriptor_is_a_start_failure_that_says_so)
{
    auto r = runner();
    exec_options o;
    o.stdin_fd = 1000;  // not open
    auto res = run_with(*r, {"cat"}, o);
    BOOST_TEST(res.exit_code == exit_codes::command_not_found);
    BOOST_TEST(!!res.start_error);
    BOOST_TEST(res.err.find("stdin_fd 1000 is not an open descriptor") != std::string::npos, res.err);
    o.stdin_fd = 0;
    o.stdin_data = "x";
    res = run_with(*r, {"cat"}, o);
    BOOST_TEST(!!res.start_error);
    BOOST_TEST(res.err.find("both stdin_data and stdin_fd") != std::string::npos, res.err);
}

BOOST_AUTO_TEST_CASE(preview_and_on_launch_show_what_starts)
{
    temp_dir dir;
    policy = execution_policy::in(dir.path).with_env({{"A", "1"}});
    auto r = runner();
    exec_options o;
    o.env = {{"B", "2"}};
    const auto p = r->preview({"sh", "-c", "touch ran"}, o);
    BOOST_TEST((p.argv == std::vector<std::string>{"sh", "-c", "touch ran"}));
    BOOST_TEST((std::find(p.env.begin(), p.env.end(), "A=1") != p.env.end()));
    BOOST_TEST((std::find(p.env.begin(), p.env.end(), "B=2") != p.env.end()));
    BOOST_TEST(std::filesystem::equivalent(p.cwd, dir.path));
    BOOST_TEST(!std::filesystem::exists(dir.path / "ran"));

    std::vector<launch_preview> seen;
    o.on_launch = [&](const launch_preview& l) { seen.push_back(l); };
    BOOST_TEST(run_with(*r, {"sh", "-c", "touch ran"}, o).success());
    BOOST_TEST_REQUIRE(seen.size() == 1u);
    BOOST_TEST((seen[0].argv == p.argv));
    BOOST_TEST((seen[0].env == p.env));

    // What on_launch throws ends the execution before anything starts.
    std::filesystem::remove(dir.path / "ran");
    o.on_launch = [](const launch_preview&) { throw std::runtime_error("not now"); };
    BOOST_CHECK_EXCEPTION(run_with(*r, {"sh", "-c", "touch ran"}, o), std::runtime_error,
                          [](const std::runtime_error& e) { return std::string(e.what()) == "not now"; });
    BOOST_TEST(!std::filesystem::exists(dir.path / "ran"));
}

BOOST_AUTO_TEST_CASE(eight_mib_round_trip_through_cat)
{
    std::string data(8 << 20, '\0');
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>('a' + (i * 7 + i / 4096) % 26);
    policy = policy.with_output_caps(16 << 20, 1 << 20);
    const auto r = run({"cat"}, data);
    BOOST_TEST(r.success());
    BOOST_TEST(!r.truncated_out);
    BOOST_TEST(r.out.size() == data.size());
    BOOST_TEST((r.out == data));
}

BOOST_AUTO_TEST_CASE(stdin_larger_than_the_socket_buffer_is_counted)
{
    const auto r = run(child_args({"stdin-count"}), std::string(3 << 20, 'z'));
    BOOST_TEST(r.out == std::to_string(3 << 20) + "\n");
}

BOOST_AUTO_TEST_CASE(a_command_closing_stdin_early_does_not_hurt_the_parent)
{
    // head stops reading after 10 bytes; the rest of the write fails with EPIPE, never SIGPIPE.
    const auto r = run({"head", "-c", "10"}, "0123456789" + std::string(4 << 20, 'x'));
    BOOST_TEST(r.success());
    BOOST_TEST(r.out == "0123456789");
}

BOOST_AUTO_TEST_CASE(only_descriptors_0_1_2_reach_the_child)
{
    // Open a few descriptors without close-on-exec in this process first.
    const int fd1 = ::open("/dev/null", O_RDONLY);
    const int fd2 = ::dup(1);
    BOOST_TEST(run(child_args({"print-fds"})).out == "0 1 2\n");
    BOOST_TEST(run(child_args({"print-fds"}), std::string("x")).out == "0 1 2\n");
    const auto ls = run({"ls", "/proc/self/fd"});
    BOOST_TEST(ls.out == "0\n1\n2\n3\n");  // 3 is ls's own directory stream
    ::close(fd1);
    ::close(fd2);
}

BOOST_AUTO_TEST_CASE(signals_are_neither_blocked_nor_ignored_in_the_child)
{
    // A server typically ignores SIGPIPE; the child must not inherit that.
    auto old = ::signal(SIGPIPE, SIG_IGN);
    sigset_t set, prev;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    ::pthread_sigmask(SIG_BLOCK, &set, &prev);
    const auto r = run(child_args({"print-signals"}));
    ::pthread_sigmask(SIG_SETMASK, &prev, nullptr);
    ::signal(SIGPIPE, old);
    // Only the standard signals: glibc's posix_spawn leaves its two internal real-time
    // signals (32, 33) ignored in every child, whoever spawns it.
    auto mask = [&](const std::string& key) {
        const auto pos = r.out.find(key);
        BOOST_REQUIRE(pos != std::string::npos);
        return std::stoull(r.out.substr(pos + key.size()), nullptr, 16) & 0x7fffffffULL;
    };
    BOOST_TEST(mask("SigBlk:\t") == 0u, r.out);
    BOOST_TEST(mask("SigIgn:\t") == 0u, r.out);
}

BOOST_AUTO_TEST_CASE(environment_is_only_the_policy_env_by_default)
{
    ::setenv("SANDBOX_TEST_PARENT_ONLY", "parent", 1);
    policy = policy.with_env({{"APP_ENV", "test"}, {"B", "2"}});
    const auto r = run(child_args({"print-env"}));
    BOOST_TEST(r.out == "APP_ENV=test\nB=2\n");
}

BOOST_AUTO_TEST_CASE(environment_inherit_overlay_and_blocklist)
{
    ::setenv("SANDBOX_TEST_INHERITED", "parent", 1);
    ::setenv("SANDBOX_TEST_OVERRIDDEN", "parent", 1);
    ::setenv("LD_PRELOAD", "/evil.so", 1);
    ::setenv("AWS_SECRET_ACCESS_KEY", "secret", 1);
    ::setenv("npm_config_x", "1", 1);
    policy = policy.with_env({{"SANDBOX_TEST_OVERRIDDEN", "policy"}, {"PYTHONPATH", "/x"}, {"NEW", "1"}}, true);
    const auto out = run(child_args({"print-env"})).out;
    ::unsetenv("LD_PRELOAD");
    ::unsetenv("AWS_SECRET_ACCESS_KEY");
    ::unsetenv("npm_config_x");
    BOOST_TEST(out.find("SANDBOX_TEST_INHERITED=parent\n") != std::string::npos);
    BOOST_TEST(out.find("SANDBOX_TEST_OVERRIDDEN=policy\n") != std::string::npos);
    BOOST_TEST(out.find("SANDBOX_TEST_OVERRIDDEN=parent") == std::string::npos);
    BOOST_TEST(out.find("NEW=1\n") != std::string::npos);
    BOOST_TEST(out.find("PATH=") != std::string::npos);
    BOOST_TEST(out.find("LD_PRELOAD") == std::string::npos);
    BOOST_TEST(out.find("AWS_SECRET_ACCESS_KEY") == std::string::npos);
    BOOST_TEST(out.find("PYTHONPATH") == std::string::npos);
    BOOST_TEST(out.find("npm_config_x") == std::string::npos);  // NPM_* matches case-insensitively
}

BOOST_AUTO_TEST_CASE(argv0_is_found_on_the_parent_path_even_with_an_empty_child_env)
{
    BOOST_TEST(policy.env().empty());
    const auto r = run({"sh", "-c", "echo $PATH; exit 0"});
    BOOST_TEST(r.success());
}

BOOST_AUTO_TEST_CASE(usage_is_reported)
{
    const auto r = run(child_args({"alloc", "64"}));
    BOOST_TEST(r.out == "allocated\n");
    BOOST_TEST(r.usage.max_rss_bytes >= 64u << 20);
    BOOST_TEST(r.usage.user_cpu.count() + r.usage.system_cpu.count() > 0);
}

BOOST_AUTO_TEST_CASE(caps_report_no_isolation)
{
    const auto c = runner()->caps();
    BOOST_TEST((c.level == isolation::none));
    BOOST_TEST(!c.network_isolated);
    BOOST_TEST(!c.memory_enforced);
    BOOST_TEST(!c.filesystem_confined);
}

BOOST_AUTO_TEST_CASE(a_command_that_closes_its_outputs_early_is_still_waited_for)
{
    // Its pipes end long before it does: the end is seen through the process, not the pipes.
    const auto start = std::chrono::steady_clock::now();
    const auto r = sh("echo bye; exec >&- 2>&-; sleep 0.3; exit 4");
    const auto took = std::chrono::steady_clock::now() - start;
    BOOST_TEST(r.exit_code == 4);
    BOOST_TEST(r.out == "bye\n");
    BOOST_TEST((took >= 300ms));
    BOOST_TEST((took < 2s));
}

BOOST_AUTO_TEST_CASE(a_long_command_whose_pipes_stay_open_is_seen_to_end)
{
    // Runs past the point where the exit is watched through a pidfd.
    const auto r = sh("sleep 0.2; echo done");
    BOOST_TEST(r.success());
    BOOST_TEST(r.out == "done\n");
}

BOOST_AUTO_TEST_SUITE_END()
