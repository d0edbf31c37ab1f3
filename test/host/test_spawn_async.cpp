// SPDX-License-Identifier: BSL-1.0
// The clone(CLONE_VM) launch (spawn_child_async) against real processes: what the child gets,
// how a failure in it is reported once it is reaped, and that it never writes our memory.
#include "host_fixture.hpp"

#include "run/spawn.hpp"

#include <boost/test/unit_test.hpp>

#include <linux/filter.h>
#include <linux/seccomp.h>
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

outcome run_async(spawn_request req)
{
    auto shared = std::make_shared<const spawn_request>(std::move(req));
    spawned_child child;
    std::string what;
    const auto ec = spawn_child_async(shared, child, what);
    BOOST_TEST_REQUIRE(!ec, what << ": " << ec.message());
    outcome o;
    o.out = read_all(child.stdout_r.get());
    while (::waitpid(child.pid, &o.status, 0) < 0 && errno == EINTR) {
    }
    BOOST_TEST_REQUIRE(child.launch != nullptr);
    o.failure = launch_failure(*child.launch, o.what);
    return o;
}

std::vector<std::string> base_env() { return {"PATH=/usr/bin:/bin"}; }

}  // namespace

BOOST_AUTO_TEST_SUITE(test_spawn_async)

BOOST_AUTO_TEST_CASE(runs_the_command_with_its_argv_env_and_cwd)
{
    temp_dir dir;
    const auto o = run_async({.argv = {"sh", "-c", "echo \"$0 $1 $GREETING\"; pwd", "a b", "c"},
                              .env = {"PATH=/usr/bin:/bin", "GREETING=hello"},
                              .cwd = dir.path});
    BOOST_TEST(WIFEXITED(o.status));
    BOOST_TEST(WEXITSTATUS(o.status) == 0);
    BOOST_TEST(o.out == "a b c hello\n" + dir.path.string() + "\n");
    BOOST_TEST(!o.failure);
}

BOOST_AUTO_TEST_CASE(a_missing_command_exits_127_and_says_enoent)
{
    const auto o = run_async({.argv = {"__no_such_command__"}, .env = base_env()});
    BOOST_TEST(WEXITSTATUS(o.status) == 127);
    BOOST_TEST(o.failure.value() == ENOENT);
    BOOST_TEST(o.what.empty());  // exec: describe_spawn_error explains it
    const auto abs = run_async({.argv = {"/no/such/command"}, .env = base_env()});
    BOOST_TEST(abs.failure.value() == ENOENT);
}

BOOST_AUTO_TEST_CASE(a_command_that_exits_127_by_itself_is_not_a_launch_failure)
{
    const auto o = run_async({.argv = {"sh", "-c", "exit 127"}, .env = base_env()});
    BOOST_TEST(WEXITSTATUS(o.status) == 127);
    BOOST_TEST(!o.failure);
}

BOOST_AUTO_TEST_CASE(a_file_without_execute_permission_is_eacces_as_with_execvp)
{
    temp_dir dir;
    const auto script = dir.path / "script";
    std::ofstream(script) << "#!/bin/sh\necho hi\n";
    ::chmod(script.c_str(), 0644);
    BOOST_TEST(run_async({.argv = {script.string()}, .env = base_env()}).failure.value() == EACCES);
    // On PATH search, EACCES is remembered while the search goes on, and reported when
    // nothing else is found.
    const auto old_path = std::getenv("PATH") ? std::string(std::getenv("PATH")) : std::string();
    ::setenv("PATH", (dir.path.string() + ":/nonexistent").c_str(), 1);
    const auto o = run_async({.argv = {"script"}, .env = base_env()});
    ::setenv("PATH", old_path.c_str(), 1);
    BOOST_TEST(o.failure.value() == EACCES);
}

BOOST_AUTO_TEST_CASE(the_search_goes_on_past_a_directory_without_the_command)
{
    temp_dir dir;
    const auto old_path = std::getenv("PATH") ? std::string(std::getenv("PATH")) : std::string();
    ::setenv("PATH", (dir.path.string() + ":/nonexistent:/usr/bin:/bin").c_str(), 1);
    const auto o = run_async({.argv = {"echo", "found"}, .env = base_env()});
    ::setenv("PATH", old_path.c_str(), 1);
    BOOST_TEST(!o.failure);
    BOOST_TEST(o.out == "found\n");
}

BOOST_AUTO_TEST_CASE(a_missing_working_directory_fails_in_the_child)
{
    const auto o = run_async({.argv = {"true"}, .env = base_env(), .cwd = "/nonexistent-sandbox-cwd"});
    BOOST_TEST(WEXITSTATUS(o.status) == 127);
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
        spawned_child child;
        std::string what;
        const auto ec = spawn_child_async(std::make_shared<const spawn_request>(req), child, what);
        BOOST_TEST((ec == std::errc::invalid_argument), ec.message());
        BOOST_TEST(!what.empty());
        BOOST_TEST(child.pid == -1);
    }
}

BOOST_AUTO_TEST_CASE(handlers_mask_and_ignored_signals_are_reset_as_documented)
{
    // A caught SIGUSR1 must be the default in the child (no handler of ours may run there), an
    // ignored SIGPIPE too (in the reset list), while an ignored SIGWINCH stays ignored, as
    // POSIX says ignored signals survive exec. Nothing is blocked.
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
    const auto o = run_async({.argv = {"sh", "-c", "grep -E '^Sig(Blk|Ign|Cgt)' /proc/self/status; kill -USR1 $$; echo survived"},
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
    BOOST_TEST((mask("SigIgn:\t") & bit(SIGPIPE)) == 0u, o.out);
    BOOST_TEST((mask("SigIgn:\t") & bit(SIGWINCH)) != 0u, o.out);
}

BOOST_AUTO_TEST_CASE(the_child_leaves_our_errno_and_memory_alone)
{
    // The child shares our address space and TLS until it execs: a failing exec in it must not
    // show up as errno in the thread that started it.
    for (int i = 0; i < 200; ++i) {
        auto shared = std::make_shared<const spawn_request>(spawn_request{.argv = {"__no_such_command__"}});
        spawned_child child;
        std::string what;
        BOOST_TEST_REQUIRE(!spawn_child_async(shared, child, what));
        errno = 4242;
        int status = 0;
        while (::waitpid(child.pid, &status, __WALL | WNOHANG) == 0) std::this_thread::yield();
        BOOST_TEST_REQUIRE(errno == 4242);
        BOOST_TEST_REQUIRE(WEXITSTATUS(status) == 127);
    }
}

BOOST_AUTO_TEST_CASE(dropping_the_record_early_waits_for_the_exec)
{
    // The record must outlive the child's use of our memory even when nobody reaps it first.
    for (int i = 0; i < 50; ++i) {
        pid_t pid = -1;
        {
            auto shared = std::make_shared<const spawn_request>(spawn_request{.argv = {"true"}, .env = base_env()});
            spawned_child child;
            std::string what;
            BOOST_TEST_REQUIRE(!spawn_child_async(shared, child, what));
            pid = child.pid;
        }  // the record goes here, most likely before the child has exec'd
        int status = 0;
        BOOST_TEST_REQUIRE(::waitpid(pid, &status, 0) == pid);
        BOOST_TEST_REQUIRE(WIFEXITED(status));
        BOOST_TEST_REQUIRE(WEXITSTATUS(status) == 0);
    }
}

BOOST_AUTO_TEST_CASE(many_threads_launch_at_once)
{
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&] {
            for (int i = 0; i < 100; ++i) {
                const auto o = run_async({.argv = {"echo", std::to_string(i)}, .env = base_env()});
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
        sock_filter filter[] = {
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_close_range, 0, 1),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        sock_fprog prog{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
        if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
            ::_exit(11);
        if (::syscall(SYS_close_range, 1000, 1000, 0) == 0 || errno != EPERM) ::_exit(12);  // the filter works
        auto req = std::make_shared<const spawn_request>(spawn_request{.argv = child_args({"print-fds"})});
        spawned_child child;
        std::string what;
        if (spawn_child_async(req, child, what)) ::_exit(13);
        const auto out = read_all(child.stdout_r.get());
        int status = 0;
        ::waitpid(child.pid, &status, 0);
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
