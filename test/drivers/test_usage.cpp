// SPDX-License-Identifier: BSL-1.0
// usage and oom_killed are the command's, against the real engines: CPU burnt by a child of
// the command is counted (the launcher, bwrap or the engine client, uses next to none), the
// peak memory lies below the limit, and a command ended by its memory limit says so.
#include "driver_fixture.hpp"

#include "drivers/plans.hpp"
#include "sys/cgroup.hpp"

#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <csignal>

#include <unistd.h>

#include <algorithm>

using namespace sandbox;
using namespace sandbox::test;
namespace data = boost::unit_test::data;

namespace {

constexpr std::uint64_t limit_bytes = 64ull << 20;

// Whether the driver can measure the command's tree here; else its usage must say it
// cannot rather than report the launcher's.
bool measurable(driver d, std::string& why)
{
    if (d == driver::bubblewrap || d == driver::firejail || d == driver::landlock) {
        why = "no memory cgroup can be made here (rlimits only)";
        return cgroups_usable_here();
    }
    return detail::engine_cgroup::plan(detail::random_sandbox_name(), why).has_value();
}

// About half a second of CPU (0.45 to 0.8 s measured) in a shell that is a child of the
// command, never its main process: what wait4 on the launcher cannot see.
const std::string burn = "sh -c 'i=0; while [ $i -lt 500000 ]; do i=$((i+1)); done'; echo burnt";

// The shell holds 200 MB of output in memory: far past the limit.
const std::string hog = "x=$(head -c 200000000 /dev/zero | tr '\\0' a); echo survived";

}  // namespace

BOOST_AUTO_TEST_SUITE(usage)

BOOST_AUTO_TEST_CASE(containers_run_under_the_parent_their_usage_is_read_from)
{
    detail::sandbox_setup s;
    s.binary = "/usr/bin/engine";
    s.name = detail::random_sandbox_name();
    s.work_dir = "/tmp/w";
    const auto policy = execution_policy::defaults();
    driver_options o;
    o.image = "img";
    auto has = [](const std::vector<std::string>& a, const std::vector<std::string>& seq) {
        return std::search(a.begin(), a.end(), seq.begin(), seq.end()) != a.end();
    };
    const std::vector<std::string> argv{"true"};
    BOOST_TEST(!has(detail::container_argv(s, policy, o, false, argv), {"--cgroup-parent"}));
    BOOST_TEST(!has(detail::container_argv(s, policy, o, true, argv), {"--cgroups=no-conmon"}));
    s.cgroup_parent = "/sandbox/" + s.name;
    const auto docker = detail::container_argv(s, policy, o, false, argv);
    const auto podman = detail::container_argv(s, policy, o, true, argv);
    BOOST_TEST(has(docker, {"--cgroup-parent", s.cgroup_parent}));
    BOOST_TEST(!has(docker, {"--cgroups=no-conmon"}));
    BOOST_TEST(has(podman, {"--cgroup-parent", s.cgroup_parent}));
    BOOST_TEST(has(podman, {"--cgroups=no-conmon"}));  // conmon is not the command
}

BOOST_DATA_TEST_CASE(cpu_of_a_child_and_peak_memory_are_the_commands, data::make(isolating_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    e.policy = e.policy.with_memory("64M");
    const auto r = e.sh(burn);
    BOOST_TEST_REQUIRE(r.exit_code == 0, describe(r));
    BOOST_TEST(r.out == "burnt\n");
    BOOST_TEST(!r.oom_killed);
    std::string why;
    if (!measurable(d, why)) {
        BOOST_TEST_MESSAGE("NOTE: " << to_string(d) << " cannot measure the command here: " << why);
        BOOST_TEST(!r.usage.available);
        BOOST_TEST(r.usage.max_rss_bytes == 0u);
        return;
    }
    BOOST_TEST_REQUIRE(r.usage.available);
    const auto cpu = std::chrono::duration<double>(r.usage.user_cpu + r.usage.system_cpu).count();
    BOOST_TEST_MESSAGE(to_string(d) << ": user " << std::chrono::duration<double>(r.usage.user_cpu).count()
                                    << " s, system " << std::chrono::duration<double>(r.usage.system_cpu).count()
                                    << " s, peak " << r.usage.max_rss_bytes << " bytes");
    BOOST_TEST(cpu >= 0.3, "user+system " << cpu << " s");  // the clients alone: up to 0.25 s
    BOOST_TEST(r.usage.max_rss_bytes > 0u);
    BOOST_TEST(r.usage.max_rss_bytes < limit_bytes);
}

BOOST_DATA_TEST_CASE(a_command_past_its_memory_limit_is_oom_killed, data::make(isolating_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    std::string why;
    if (!measurable(d, why)) {
        // Not root on a cgroup v1 host: no cgroup at all, which the driver says.
        if (::geteuid() != 0 && !is_container(d)) {
            BOOST_TEST(!driver_env(d).runner()->caps().memory_enforced);
            BOOST_TEST_MESSAGE("NOTE: " << to_string(d) << " cannot tell an OOM kill for an unprivileged caller here: " << why);
            return;
        }
        if (running_in_ci()) BOOST_FAIL(to_string(d) << " cannot tell an OOM kill here, and CI=true forbids skipping: " << why);
        BOOST_TEST_MESSAGE("SKIPPED: " << to_string(d) << " cannot tell an OOM kill here: " << why);
        BOOST_WARN_MESSAGE(false, "SKIPPED: " << to_string(d) << " cannot tell an OOM kill here: " << why);
        return;
    }
    driver_env e(d);
    e.policy = e.policy.with_memory("64M");
    const auto r = e.sh(hog);
    BOOST_TEST(r.exit_code == 137, describe(r));
    BOOST_TEST(r.out.find("survived") == std::string::npos);
    BOOST_TEST(r.oom_killed, describe(r));
    BOOST_TEST(r.term_signal == SIGKILL, describe(r));  // also where a tool passes it on as 137
    BOOST_TEST(!r.timed_out);
    BOOST_TEST(r.usage.available);
    BOOST_TEST(r.usage.max_rss_bytes <= limit_bytes + (4u << 20));

    // The same runner's next command, within the limit, is not.
    const auto ok = e.sh("x=$(head -c 1000000 /dev/zero | tr '\\0' a); echo ${#x}");
    BOOST_TEST(ok.exit_code == 0, describe(ok));
    BOOST_TEST(!ok.oom_killed);
}

BOOST_DATA_TEST_CASE(a_command_killed_by_a_timeout_is_not_oom_killed, data::make(isolating_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    e.policy = e.policy.with_memory("64M").with_timeout(std::chrono::milliseconds(500));
    const auto r = e.sh("sleep 30");
    BOOST_TEST(r.timed_out, describe(r));
    BOOST_TEST(!r.oom_killed);
}

BOOST_AUTO_TEST_CASE(the_host_driver_keeps_wait4_and_never_reports_an_oom_kill)
{
    driver_env e(driver::host);
    const auto r = e.sh(burn);
    BOOST_TEST_REQUIRE(r.exit_code == 0, describe(r));
    BOOST_TEST(r.usage.available);
    BOOST_TEST(!r.oom_killed);
    // wait4 counts the children the shell waited for.
    BOOST_TEST(std::chrono::duration<double>(r.usage.user_cpu + r.usage.system_cpu).count() >= 0.3);
}

BOOST_AUTO_TEST_SUITE_END()
