// SPDX-License-Identifier: BSL-1.0
// The child's lifecycle at its edges: an application that ignores SIGCHLD, a kernel (or
// seccomp profile) without pidfd_open, and a command abandoned after SIGKILL.
#include "host_fixture.hpp"

#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <sys/wait.h>

#include <cerrno>
#include <random>
#include <thread>

using namespace sandbox;
using namespace sandbox::test;

namespace {

std::string unique_marker()
{
    std::random_device rd;
    return "31." + std::to_string(100000 + rd() % 800000);
}

bool gone_within(const std::string& needle, std::chrono::milliseconds limit)
{
    const auto end = std::chrono::steady_clock::now() + limit;
    do {
        if (processes_matching(needle).empty()) return true;
        std::this_thread::sleep_for(10ms);
    } while (std::chrono::steady_clock::now() < end);
    return false;
}

// The runner in a process where pidfd_open fails (test/tools/no_pidfd.cpp); its exit status.
int without_pidfd(const char* scenario)
{
    auto runner = make_runner(execution_policy::defaults().with_timeout(60s), driver::host);
    const auto r = run_sync(*runner, {build::no_pidfd_tool(), scenario});
    if (!r.err.empty()) BOOST_TEST_MESSAGE(r.err);
    return r.exit_code;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(test_child_lifecycle, host_fixture)

BOOST_AUTO_TEST_CASE(with_sigchld_ignored_what_the_command_left_behind_is_still_killed)
{
    // The kernel reaps our children itself then, so the main process's pid may be gone when
    // we look; its process group id is still pinned by the members it left behind.
    struct sigaction ign {}, old {};
    ign.sa_handler = SIG_IGN;
    ::sigaction(SIGCHLD, &ign, &old);
    const auto marker = unique_marker();
    const auto r = sh("sleep " + marker + " & echo started");
    ::sigaction(SIGCHLD, &old, nullptr);
    BOOST_TEST(r.out == "started\n");
    BOOST_TEST(gone_within(marker, 2s), "sleep " << marker << " survived its main process");
}

BOOST_AUTO_TEST_CASE(with_sigchld_ignored_a_timeout_still_kills_the_tree)
{
    struct sigaction ign {}, old {};
    ign.sa_handler = SIG_IGN;
    ::sigaction(SIGCHLD, &ign, &old);
    const auto marker = unique_marker();
    policy = policy.with_timeout(200ms);
    const auto r = sh("sleep " + marker + " & sleep " + marker);
    ::sigaction(SIGCHLD, &old, nullptr);
    BOOST_TEST(r.timed_out);
    BOOST_TEST(gone_within(marker, 2s));
}

BOOST_AUTO_TEST_CASE(without_pidfd_the_exit_is_seen_by_polling)
{
    const int status = without_pidfd("poll");
    BOOST_TEST(status == 0, "the scenario failed at step " << status);
}

BOOST_AUTO_TEST_CASE(an_abandoned_command_without_pidfd_is_reaped_and_cleaned_up_later)
{
    const int status = without_pidfd("abandon");
    BOOST_TEST(status == 0, "the scenario failed at step " << status);
}

BOOST_AUTO_TEST_SUITE_END()
