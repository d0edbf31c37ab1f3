// SPDX-License-Identifier: BSL-1.0
// Disk, private base dirs and dead runs, per isolating driver against the real engines: a
// command cannot fill the host's disk through /work or /tmp; a 0700 base dir works; what a
// SIGKILLed process leaves (work dir, bounded mount, cgroups, a firejail command, a container)
// is swept at once by its spawn helper's sandbox-sweep.
#include "driver_fixture.hpp"

#include "drivers/run_record.hpp"
#include "sys/mounts.hpp"
#include <sandbox/session.hpp>

#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace sandbox;
using namespace sandbox::test;
namespace data = boost::unit_test::data;

extern char** environ;

namespace {

// Writes 64M into /work (the command's cwd) and into /tmp, then reports what it could keep.
const char* fill_both =
    "dd if=/dev/zero of=big bs=1M count=64 2>&1 | grep -o 'No space left on device'; echo work=$(du -k big | cut -f1); "
    "dd if=/dev/zero of=/tmp/big bs=1M count=64 2>&1 | grep -o 'No space left on device'; echo tmp=$(du -k /tmp/big | cut -f1); "
    "stat -f -c type=%T .";

long value_after(const std::string& out, const std::string& key)
{
    const auto at = out.find(key + "=");
    if (at == std::string::npos) return -1;
    return std::strtol(out.c_str() + at + key.size() + 1, nullptr, 10);
}

bool mounted_anywhere_below(const std::filesystem::path& dir)
{
    const auto prefix = dir.string() + "/";
    for (const auto& m : detail::host_mounts())
        if (m.point.rfind(prefix, 0) == 0 || m.point == dir.string()) return true;
    return false;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(disk)

BOOST_DATA_TEST_CASE(a_command_cannot_write_past_the_disk_limit, data::make(isolating_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    e.policy = e.policy.with_disk_limit("16M").with_memory("256M");
    if (d == driver::landlock && ::geteuid() != 0) {
        // Without a mount namespace only a root caller can mount the bounded work dir: refused.
        BOOST_TEST(!e.runner()->caps().disk_enforced);
        try {
            const auto r = e.run({"true"});
            BOOST_ERROR("no launch_error; " << describe(r));
        } catch (const launch_error& err) {
            BOOST_TEST((err.code() == errc::limit_not_enforced), err.what());
        }
        BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
        return;
    }
    BOOST_TEST(e.runner()->caps().disk_enforced);
    const auto r = e.sh(fill_both);
    BOOST_TEST_INFO(describe(r));
    BOOST_TEST(r.exit_code == 0);
    BOOST_TEST(r.out.find("No space left on device") != std::string::npos);
    // What was kept stays within the limit in both places (du counts KiB).
    BOOST_TEST(value_after(r.out, "work") >= 0);
    BOOST_TEST(value_after(r.out, "work") <= 16 * 1024);
    BOOST_TEST(value_after(r.out, "tmp") >= 0);
    BOOST_TEST(value_after(r.out, "tmp") <= 16 * 1024);
    BOOST_TEST(r.out.find("type=tmpfs") != std::string::npos);
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
    BOOST_TEST(!mounted_anywhere_below(e.base.path));
}

BOOST_DATA_TEST_CASE(without_a_disk_limit_nothing_changes, data::make(isolating_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    const auto r = e.sh("dd if=/dev/zero of=big bs=1M count=20 2>/dev/null; echo work=$(du -k big | cut -f1)");
    BOOST_TEST_INFO(describe(r));
    BOOST_TEST(value_after(r.out, "work") >= 20 * 1024);
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
}

BOOST_DATA_TEST_CASE(a_session_keeps_its_bounded_work_dir, data::make(isolating_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    if (::geteuid() != 0) {
        BOOST_TEST_MESSAGE("a bounded session needs a root caller; checked that it is refused instead");
        driver_env e(d);
        BOOST_CHECK_THROW(session(e.policy.with_disk_limit("8M"), d, e.options), launch_error);
        return;
    }
    driver_env e(d);
    std::filesystem::path dir;
    {
        session s(e.policy.with_disk_limit("8M"), d, e.options);
        dir = s.directory();
        BOOST_TEST(detail::is_mount_root(dir));
        const auto first = run_sync(s, {"sh", "-c", "echo kept > note; dd if=/dev/zero of=big bs=1M count=32 2>&1 | grep -o 'No space left on device'"});
        BOOST_TEST_INFO(describe(first));
        BOOST_TEST(first.out.find("No space left on device") != std::string::npos);
        const auto second = run_sync(s, {"sh", "-c", "cat note"});
        BOOST_TEST_INFO(describe(second));
        BOOST_TEST(second.out == "kept\n");
    }
    BOOST_TEST(!std::filesystem::exists(dir));
    BOOST_TEST(!mounted_anywhere_below(e.base.path));
}

BOOST_DATA_TEST_CASE(a_malformed_disk_limit_is_refused, data::make({"", "abc", "-1", "1.5G"}), text)
{
    BOOST_CHECK_THROW((void)execution_policy::defaults().with_disk_limit(std::string_view(text)), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(private_base_dir)

BOOST_AUTO_TEST_CASE(bubblewrap_works_in_a_base_dir_only_root_may_enter)
{
    SANDBOX_REQUIRE_DRIVER(driver::bubblewrap);
    driver_env e(driver::bubblewrap);
    ::chmod(e.base.path.c_str(), 0700);
    const auto r = e.sh("echo hello > f && cat f && pwd");
    BOOST_TEST_INFO(describe(r));
    BOOST_TEST(r.exit_code == 0);
    BOOST_TEST(r.out == "hello\n/work\n");
    // Also with a disk limit, whose mount the alias carries.
    const auto bounded = driver_env(driver::bubblewrap);
    ::chmod(bounded.base.path.c_str(), 0700);
    auto policy = bounded.policy.with_disk_limit("8M");
    auto runner = make_runner(policy, driver::bubblewrap, bounded.options);
    const auto b = run_sync(*runner, {"sh", "-c", "dd if=/dev/zero of=big bs=1M count=32 2>&1 | grep -o 'No space left on device'"});
    BOOST_TEST_INFO(describe(b));
    BOOST_TEST(b.out.find("No space left on device") != std::string::npos);
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
    BOOST_TEST(bounded.leftovers().empty(), join(bounded.leftovers()));
}

BOOST_AUTO_TEST_SUITE_END()

#ifdef SANDBOX_HAVE_RUN_BIN
BOOST_AUTO_TEST_SUITE(dead_runs)

// sandbox-run starts a long command and is SIGKILLed. Its spawn helper outlives it and has
// its runs swept at once (sandbox-sweep): within seconds the command is gone on every driver
// (a firejail command, set-id, has no parent-death signal; a container runs in its engine),
// and so are its work dir, the disk limit's mount, its cgroups, its record and its container.
BOOST_DATA_TEST_CASE(what_a_killed_process_left_is_swept, data::make(isolating_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    const std::string marker = "9" + random_digits(7);
    std::vector<std::string> args{build::run_bin(), "--driver", std::string(to_string(d)), "--base-dir",
                                  e.base.path.string(), "--timeout", "600", "--no-stdin"};
    if (d == driver::docker || d == driver::podman) args.insert(args.end(), {"--image", test_image()});
    if (::geteuid() == 0) args.insert(args.end(), {"--disk", "8M"});
    args.insert(args.end(), {"--", "sleep", marker});
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = -1;
    BOOST_REQUIRE(::posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) == 0);
    // The command itself, not sandbox-run, whose arguments name it too: killed between making
    // its work dir and settling its run record, it would leave a record being made, which a
    // sweep leaves alone for a minute.
    const auto command = [&] { return processes_matching("sleep " + marker, true); };
    BOOST_TEST(eventually([&] { return !command().empty() && !e.current_work_dir_name().empty(); }, 60s));
    const auto name = e.current_work_dir_name();
    ::kill(pid, SIGKILL);
    const auto killed = std::chrono::steady_clock::now();
    int status = 0;
    ::waitpid(pid, &status, 0);
    BOOST_TEST_REQUIRE(!name.empty());
    const bool gone = eventually([&] { return command().empty(); }, 5s);
    BOOST_TEST(gone, "the command outlived the process that started it by more than 5 s");
    BOOST_TEST_MESSAGE(to_string(d) << ": the command was gone "
                                    << std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count()
                                    << " s after the kill");

    // Any process that creates a runner sweeps too (other test programs may be running, and
    // may be killed in the middle of a sweep), so the record may be held by a sweep under
    // way: sweep until nothing is left, as the next runner would.
    bool swept_here = false;
    const auto record = detail::run_record_dir() / (name + ".run");
    const bool container = d == driver::docker || d == driver::podman;
    const bool clean = eventually([&] {
        const auto swept = detail::sweep_dead_runs(detail::run_record_dir());
        swept_here = swept_here || std::find(swept.begin(), swept.end(), name) != swept.end();
        return processes_matching("sleep " + marker).empty() && e.leftovers().empty() &&
               !mounted_anywhere_below(e.base.path) && detail::cgroup_limits::existing(name).dirs().empty() &&
               !std::filesystem::exists(record) && !(container && container_exists(d, name));
    }, 15s);
    BOOST_TEST_MESSAGE(to_string(d) << ": " << name << (swept_here ? " swept here" : " swept by another process"));
    BOOST_TEST(clean);
    BOOST_TEST(processes_matching("sleep " + marker).empty());
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
    BOOST_TEST(!mounted_anywhere_below(e.base.path));
    BOOST_TEST(detail::cgroup_limits::existing(name).dirs().empty());
    BOOST_TEST(!std::filesystem::exists(record));
    if (container) BOOST_TEST(!container_exists(d, name), name << " is still there");
}

BOOST_AUTO_TEST_CASE(a_live_run_is_never_swept)
{
    SANDBOX_REQUIRE_DRIVER(driver::bubblewrap);
    driver_env e(driver::bubblewrap);
    auto runner = e.runner();
    std::vector<std::string> swept;
    std::string live;
    const auto r = run_sync(*runner, {"sh", "-c", "echo ok; sleep 0.5"}, std::nullopt, [&](stream_kind, std::string_view) {
        live = e.current_work_dir_name();
        swept = detail::sweep_dead_runs(detail::run_record_dir());
    });
    BOOST_TEST_INFO(describe(r));
    BOOST_TEST(r.out == "ok\n");
    BOOST_TEST(!live.empty());
    BOOST_TEST((std::find(swept.begin(), swept.end(), live) == swept.end()), join(swept));
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
}

BOOST_AUTO_TEST_SUITE_END()
#endif
