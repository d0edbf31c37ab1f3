// SPDX-License-Identifier: BSL-1.0
// The posix_spawn launch against real processes: what the child gets, and how posix_spawn
// itself reports a failure (no record of the launch is kept until the reap).
#include "deny_syscall.hpp"
#include "host_fixture.hpp"

#include "run/spawn.hpp"

#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <fstream>
#include <thread>

using namespace sandbox;
using namespace sandbox::detail;
using namespace sandbox::test;

namespace {

struct outcome {
    int status = -1;
    std::string out;
    std::error_code failure;
    std::string what;
};

std::string read_all(int fd)
{
    std::string s;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n > 0) s.append(buf, static_cast<std::size_t>(n));
        else if (n == 0 || errno != EINTR) break;
    }
    return s;
}

// Spawns, reads stdout to EOF, reaps. A failure comes back from posix_spawn at once. No
// Boost.Test macro here: threads call it.
outcome spawn_and_wait(const spawn_request& req)
{
    child_pipes pipes;
    outcome o;
    if ((o.failure = prepare_spawn(req, pipes, o.what))) {
        o.what = "prepare_spawn: " + o.what;
        return o;
    }
    auto s = spawn_child(req, pipes);
    if (pipes.stdout_child || pipes.stderr_child) o.what = "the child's ends were left open";
    if (s.error) {
        o.failure = s.error;
        o.what += s.what;
        return o;
    }
    o.out = read_all(pipes.stdout_r.get());
    while (::waitpid(s.child.pid(), &o.status, 0) < 0 && errno == EINTR) {
    }
    (void)s.child.release();
    return o;
}

outcome run_spawn(const spawn_request& req)
{
    auto o = spawn_and_wait(req);
    BOOST_TEST(o.what.find("left open") == std::string::npos);
    BOOST_TEST(o.what.find("prepare_spawn") == std::string::npos, o.what);
    return o;
}

std::vector<std::string> base_env() { return {"PATH=/usr/bin:/bin"}; }

}  // namespace

BOOST_AUTO_TEST_SUITE(test_spawn)

BOOST_AUTO_TEST_CASE(runs_the_command_with_its_argv_env_and_cwd)
{
    temp_dir dir;
    const auto o = run_spawn({.argv = {"sh", "-c", "echo \"$0 $1 $GREETING\"; pwd", "a b", "c"},
                              .env = {"PATH=/usr/bin:/bin", "GREETING=hello"},
                              .cwd = dir.path});
    BOOST_TEST(WIFEXITED(o.status));
    BOOST_TEST(WEXITSTATUS(o.status) == 0);
    BOOST_TEST(o.out == "a b c hello\n" + dir.path.string() + "\n");
    BOOST_TEST(!o.failure);
}

BOOST_AUTO_TEST_CASE(a_missing_command_is_enoent_from_posix_spawn)
{
    const auto o = run_spawn({.argv = {"__no_such_command__"}, .env = base_env()});
    BOOST_TEST(o.failure.value() == ENOENT);
    BOOST_TEST(o.what.empty());  // exec: describe_spawn_error explains it
    const auto abs = run_spawn({.argv = {"/no/such/command"}, .env = base_env()});
    BOOST_TEST(abs.failure.value() == ENOENT);
}

BOOST_AUTO_TEST_CASE(a_command_that_exits_127_by_itself_is_not_a_launch_failure)
{
    const auto o = run_spawn({.argv = {"sh", "-c", "exit 127"}, .env = base_env()});
    BOOST_TEST(WEXITSTATUS(o.status) == 127);
    BOOST_TEST(!o.failure);
}

BOOST_AUTO_TEST_CASE(a_file_without_execute_permission_is_eacces_as_with_execvp)
{
    temp_dir dir;
    const auto script = dir.path / "script";
    std::ofstream(script) << "#!/bin/sh\necho hi\n";
    ::chmod(script.c_str(), 0644);
    BOOST_TEST(run_spawn({.argv = {script.string()}, .env = base_env()}).failure.value() == EACCES);
    // On PATH search, EACCES is remembered while the search goes on, and reported when
    // nothing else is found.
    const auto old_path = std::getenv("PATH") ? std::string(std::getenv("PATH")) : std::string();
    ::setenv("PATH", (dir.path.string() + ":/nonexistent").c_str(), 1);
    const auto o = run_spawn({.argv = {"script"}, .env = base_env()});
    ::setenv("PATH", old_path.c_str(), 1);
    BOOST_TEST(o.failure.value() == EACCES);
}

BOOST_AUTO_TEST_CASE(the_search_goes_on_past_a_directory_without_the_command)
{
    temp_dir dir;
    const auto old_path = std::getenv("PATH") ? std::string(std::getenv("PATH")) : std::string();
    ::setenv("PATH", (dir.path.string() + ":/nonexistent:/usr/bin:/bin").c_str(), 1);
    const auto o = run_spawn({.argv = {"echo", "found"}, .env = base_env()});
    ::setenv("PATH", old_path.c_str(), 1);
    BOOST_TEST(!o.failure);
    BOOST_TEST(o.out == "found\n");
}

BOOST_AUTO_TEST_CASE(a_missing_working_directory_is_reported_by_posix_spawn)
{
    const auto o = run_spawn({.argv = {"true"}, .env = base_env(), .cwd = "/nonexistent-sandbox-cwd"});
    BOOST_TEST(o.failure.value() == ENOENT);
    spawn_request req{.argv = {"true"}, .cwd = "/nonexistent-sandbox-cwd"};
    const auto text = describe_spawn_error(req, o.failure, o.what);
    BOOST_TEST(text.find("/nonexistent-sandbox-cwd") != std::string::npos, text);
}

BOOST_AUTO_TEST_CASE(bad_input_is_refused_before_any_child_exists)
{
    for (auto req : {spawn_request{.argv = {}}, spawn_request{.argv = {std::string("a\0b", 3)}},
                     spawn_request{.argv = {"true"}, .env = {"NOEQUALS"}},
                     spawn_request{.argv = {"true"}, .cwd = std::string("/tmp\0x", 6)}}) {
        child_pipes pipes;
        std::string what;
        const auto ec = prepare_spawn(req, pipes, what);
        BOOST_TEST((ec == std::errc::invalid_argument), ec.message());
        BOOST_TEST(!what.empty());
        BOOST_TEST(!pipes.stdout_r);
    }
}

BOOST_AUTO_TEST_CASE(handlers_mask_and_ignored_signals_are_reset_as_documented)
{
    // A caught SIGUSR1 must be the default in the child (no handler of ours may run there), and
    // so must every signal the server ignores (SIGPIPE, SIGWINCH), though an ignored
    // disposition would survive exec: the command must not depend on who started it. Nothing
    // is blocked.
    struct sigaction sa {};
    sa.sa_handler = +[](int) {};
    struct sigaction old_usr1 {}, old_pipe {}, old_winch {};
    ::sigaction(SIGUSR1, &sa, &old_usr1);
    sa.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &sa, &old_pipe);
    ::sigaction(SIGWINCH, &sa, &old_winch);
    sigset_t block, prev;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR2);
    ::pthread_sigmask(SIG_BLOCK, &block, &prev);
    const auto o = run_spawn({.argv = {"sh", "-c", "grep -E '^Sig(Blk|Ign|Cgt)' /proc/self/status; kill -USR1 $$; echo survived"},
                              .env = base_env()});
    ::pthread_sigmask(SIG_SETMASK, &prev, nullptr);
    ::sigaction(SIGUSR1, &old_usr1, nullptr);
    ::sigaction(SIGPIPE, &old_pipe, nullptr);
    ::sigaction(SIGWINCH, &old_winch, nullptr);

    BOOST_TEST(WIFSIGNALED(o.status), o.out);  // SIGUSR1's default: terminate
    BOOST_TEST(WTERMSIG(o.status) == SIGUSR1);
    BOOST_TEST(o.out.find("survived") == std::string::npos);
    auto mask = [&](const std::string& key) {
        const auto pos = o.out.find(key);
        BOOST_REQUIRE(pos != std::string::npos);
        return std::stoull(o.out.substr(pos + key.size()), nullptr, 16);
    };
    const auto bit = [](int sig) { return 1ULL << (sig - 1); };
    BOOST_TEST(mask("SigBlk:\t") == 0u, o.out);
    // But 32 and 33, glibc's own (thread cancellation, set*id across threads): its posix_spawn
    // ignores them in the child, and no program may name them.
    BOOST_TEST((mask("SigIgn:\t") & ~(bit(32) | bit(33))) == 0u, o.out);
    BOOST_TEST((mask("SigIgn:\t") & (bit(SIGPIPE) | bit(SIGWINCH))) == 0u, o.out);
}

BOOST_AUTO_TEST_CASE(many_threads_launch_at_once)
{
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&] {
            for (int i = 0; i < 100; ++i) {
                const auto o = spawn_and_wait({.argv = {"echo", std::to_string(i)}, .env = base_env()});
                if (o.out != std::to_string(i) + "\n" || o.failure) ++failures;
            }
        });
    for (auto& t : threads) t.join();
    BOOST_TEST(failures == 0);
    BOOST_TEST(!has_children());
}

BOOST_AUTO_TEST_CASE(descriptors_are_closed_where_close_range_is_refused)
{
    // A seccomp filter that answers close_range with EPERM, as some container profiles do for
    // system calls they do not know: the child must still close everything above 2. In a
    // forked process, so that the filter stays there.
    const pid_t tester = ::fork();
    BOOST_TEST_REQUIRE(tester >= 0);
    if (tester == 0) {
        int extra[2];
        if (::pipe(extra) != 0) ::_exit(10);  // not close-on-exec
        if (!deny_syscall(SYS_close_range, EPERM)) ::_exit(11);
        if (::syscall(SYS_close_range, 1000, 1000, 0) == 0 || errno != EPERM) ::_exit(12);  // the filter works
        spawn_request req{.argv = child_args({"print-fds"})};
        child_pipes pipes;
        std::string what;
        if (prepare_spawn(req, pipes, what)) ::_exit(13);
        auto s = spawn_child(req, pipes);
        if (s.error) ::_exit(15);
        const auto out = read_all(pipes.stdout_r.get());
        int status = 0;
        ::waitpid(s.child.release(), &status, 0);
        ::_exit(out == "0 1 2\n" && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 14);
    }
    int status = 0;
    BOOST_TEST_REQUIRE(::waitpid(tester, &status, 0) == tester);
    BOOST_TEST(WIFEXITED(status));
    BOOST_TEST(WEXITSTATUS(status) == 0, "the forked tester failed at step " << WEXITSTATUS(status));
}

BOOST_FIXTURE_TEST_CASE(an_application_that_ignores_sigchld_still_learns_of_start_failures, host_fixture)
{
    // With SIGCHLD ignored the kernel reaps our children itself: the exit status is lost, but
    // output still arrives, and a command that could not start is still reported as such.
    struct sigaction ign {}, old {};
    ign.sa_handler = SIG_IGN;
    ::sigaction(SIGCHLD, &ign, &old);
    const auto ok = run({"echo", "hi"});
    const auto missing = run({"__no_such_command__"});
    ::sigaction(SIGCHLD, &old, nullptr);
    BOOST_TEST(ok.out == "hi\n");
    BOOST_TEST(missing.exit_code == 127);
    BOOST_TEST((missing.err.rfind("Failed to start host process", 0) == 0), missing.err);
    BOOST_TEST(missing.err.find("No such file or directory") != std::string::npos, missing.err);
}

BOOST_AUTO_TEST_SUITE_END()
