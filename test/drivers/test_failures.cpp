// SPDX-License-Identifier: BSL-1.0
// Failures are clear: a missing or unusable driver binary, the binary settings that choose
// it (DOCKER_BIN, PODMAN_BIN, FIREJAIL_BIN, BWRAP_BIN, driver_options::binary), and an
// engine that is installed but not running.
#include "driver_fixture.hpp"

#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <sys/mount.h>

#include <atomic>
#include <fstream>
#include <thread>

using namespace sandbox;
using namespace sandbox::test;
namespace data = boost::unit_test::data;

namespace {

std::string tool_name(driver d)
{
    switch (d) {
    case driver::docker: return "docker";
    case driver::podman: return "podman";
    case driver::firejail: return "firejail";
    case driver::bubblewrap: return "bwrap";
    case driver::slurm: return "srun";
    case driver::landlock: return "sandbox-landlock-exec";
    case driver::host: break;
    }
    return "host";
}

std::string variable_of(driver d)
{
    switch (d) {
    case driver::docker: return "DOCKER_BIN";
    case driver::podman: return "PODMAN_BIN";
    case driver::firejail: return "FIREJAIL_BIN";
    case driver::landlock: return "SANDBOX_LANDLOCK_EXEC";
    default: return "BWRAP_BIN";
    }
}

// The launch_error message of running `true`, or "" when nothing was thrown; its code in
// `code` when asked.
std::string launch_error_of(const driver_env& e, boost::system::error_code* code = nullptr)
{
    try {
        const auto r = e.run({"true"});
        BOOST_ERROR("no launch_error; " << describe(r));
    } catch (const launch_error& err) {
        if (code) *code = err.code();
        return err.what();
    }
    return {};
}

// An executable script that prints its name and arguments instead of sandboxing anything.
std::filesystem::path fake_tool(const scratch_dir& dir, const std::string& label)
{
    const auto path = dir.path / label;
    std::ofstream(path) << "#!/bin/sh\necho \"" << label << " $*\"\n";
    ::chmod(path.c_str(), 0755);
    return path;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(failures_are_clear)

BOOST_DATA_TEST_CASE(a_missing_binary_named_by_the_variable_is_a_launch_error, data::make(isolating_drivers), d)
{
    driver_env e(d);
    const std::string missing = "/nonexistent-dir/" + tool_name(d);
    env_guard var(variable_of(d), missing);
    auto runner = e.runner();  // constructing never throws
    boost::system::error_code code;
    const auto what = launch_error_of(e, &code);
    BOOST_TEST((code == errc::driver_unavailable), code.message());
    BOOST_TEST(what.rfind("Failed to start " + tool_name(d) + ": ", 0) == 0u, what);
    BOOST_TEST(what.find(missing) != std::string::npos, what);
    BOOST_TEST(what.find("No such file or directory") != std::string::npos, what);
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
}

// A readable or writable path that cannot be mounted at its place is refused by name: skipped
// in silence, the command would find an empty place, or another path's data at /mnt/ro0.
BOOST_DATA_TEST_CASE(a_path_the_policy_names_that_cannot_be_mounted_is_refused_by_name, data::make(isolating_drivers), d)
{
    driver_env e(d);
    scratch_dir dir;
    const auto real = dir.sub("real", 0755);
    const auto colon = dir.sub("with:colon", 0755);
    std::filesystem::create_directory_symlink(real, dir.path / "link");
    const auto base = e.policy;
    struct bad {
        std::filesystem::path path;
        bool writable;
        std::string why;
    };
    for (const auto& [path, writable, why] :
         {bad{dir.path / "missing", true, "does not exist"}, bad{dir.path / "missing", false, "does not exist"},
          bad{colon, false, "holds ':'"}, bad{dir.path / "link", true, "symbolic link"},
          bad{dir.path / "real" / ".." / "real", false, "its real path is " + real.string()}}) {
        e.policy = writable ? base.with_writable_paths({real, path}) : base.with_readable_paths({real, path});
        boost::system::error_code code;
        const auto what = launch_error_of(e, &code);
        BOOST_TEST_INFO(what);
        BOOST_TEST((code == boost::system::errc::invalid_argument), code.message());
        BOOST_TEST(what.rfind("Failed to start " + tool_name(d) + ": ", 0) == 0u);
        BOOST_TEST(what.find((writable ? "writable path " : "readable path ") + path.string()) != std::string::npos);
        BOOST_TEST(what.find(why) != std::string::npos);
    }
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
}

BOOST_DATA_TEST_CASE(a_missing_or_unusable_binary_in_the_options_is_a_launch_error, data::make(isolating_drivers), d)
{
    driver_env e(d);
    scratch_dir dir;
    e.options.binary = (dir.path / "missing-tool").string();
    boost::system::error_code code;
    auto what = launch_error_of(e, &code);
    BOOST_TEST((code == errc::driver_unavailable), code.message());
    BOOST_TEST(what.rfind("Failed to start " + tool_name(d) + ": ", 0) == 0u, what);
    BOOST_TEST(what.find(e.options.binary) != std::string::npos, what);

    // Not executable.
    const auto plain = dir.path / "not-executable";
    std::ofstream(plain) << "#!/bin/sh\nexit 0\n";
    ::chmod(plain.c_str(), 0644);
    e.options.binary = plain.string();
    what = launch_error_of(e, &code);
    BOOST_TEST((code == errc::driver_unavailable), code.message());
    BOOST_TEST(what.rfind("Failed to start " + tool_name(d) + ": ", 0) == 0u, what);
    BOOST_TEST(what.find("Permission denied") != std::string::npos, what);

    // A directory.
    e.options.binary = dir.path.string();
    what = launch_error_of(e);
    BOOST_TEST(what.rfind("Failed to start " + tool_name(d) + ": ", 0) == 0u, what);
    BOOST_TEST(what.find("directory") != std::string::npos, what);

    // A bare name that is not on PATH.
    e.options.binary = "no-such-tool-on-path-" + random_digits();
    what = launch_error_of(e);
    BOOST_TEST(what.rfind("Failed to start " + tool_name(d) + ": ", 0) == 0u, what);
    BOOST_TEST(what.find(e.options.binary) != std::string::npos, what);
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
}

BOOST_DATA_TEST_CASE(the_variable_and_the_option_choose_the_binary_option_first, data::make(isolating_drivers), d)
{
    driver_env e(d);
    scratch_dir dir;
    const auto from_var = fake_tool(dir, "fake-from-variable");
    const auto from_option = fake_tool(dir, "fake-from-option");
    env_guard var(variable_of(d), from_var.string());

    auto r = e.run({"true"});
    BOOST_TEST_INFO(describe(r));
    BOOST_TEST(r.success());
    if (d == driver::landlock && cgroups_usable_here()) {
        // With cgroups the command is confined by the spawn itself: the launcher, which the
        // variable and the option name, runs only without them.
        BOOST_TEST(r.out.empty());
        return;
    }
    BOOST_TEST(r.out.rfind("fake-from-variable ", 0) == 0u);
    // The fake tool got the driver's command line.
    switch (d) {
    case driver::docker:
    case driver::podman: BOOST_TEST(r.out.find("run --rm -i --init --name sandbox-") != std::string::npos); break;
    case driver::bubblewrap: BOOST_TEST(r.out.find("--unshare-all") != std::string::npos); break;
    case driver::landlock: BOOST_TEST(r.out.find(" -- true\n") != std::string::npos); break;
    default: BOOST_TEST(r.out.find("--quiet --noprofile") != std::string::npos); break;
    }
    BOOST_TEST(r.out.find(" true\n") != std::string::npos);

    e.options.binary = from_option.string();
    r = e.run({"true"});
    BOOST_TEST_INFO(describe(r));
    BOOST_TEST(r.out.rfind("fake-from-option ", 0) == 0u);
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
}

BOOST_AUTO_TEST_CASE(an_installed_docker_engine_that_is_not_running_says_so)
{
    SANDBOX_REQUIRE_DRIVER(driver::docker);
    driver_env e(driver::docker);
    std::string what;
    {
        env_guard host("DOCKER_HOST", "unix:///nonexistent.sock");
        boost::system::error_code code;
        what = launch_error_of(e, &code);
        BOOST_TEST((code == errc::engine_failed), code.message());
    }
    BOOST_TEST(what.rfind("Failed to start docker: the Docker engine is not running", 0) == 0u, what);
    // The reason in parentheses is docker's own: which daemon it could not reach.
    BOOST_TEST((what.find("Cannot connect") != std::string::npos || what.find("nonexistent.sock") != std::string::npos),
               "the reason does not say which engine is unreachable: " << what);
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
    // With the variable restored, the same runner settings work again.
    const auto r = e.run({"true"});
    BOOST_TEST(r.success(), describe(r));
}

BOOST_DATA_TEST_CASE(a_missing_image_is_a_launch_error_naming_it, data::make(container_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    e.options.image = "sandbox-test/missing-" + random_digits() + ":latest";
    boost::system::error_code code;
    const auto what = launch_error_of(e, &code);
    BOOST_TEST((code == errc::engine_failed), code.message());
    BOOST_TEST(what.rfind("Failed to start " + tool_name(d) + ": ", 0) == 0u, what);
    BOOST_TEST(what.find(e.options.image) != std::string::npos, "the message does not name the image: " << what);
    // Never fetched behind the caller's back: the message says how to get it instead.
    BOOST_TEST(what.find(tool_name(d) + " pull " + e.options.image) != std::string::npos, what);
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
}

BOOST_DATA_TEST_CASE(a_command_that_cannot_start_is_reported_alike_on_every_driver, data::make(every_driver), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    const std::string who = d == driver::host ? "host process" : tool_name(d);
    for (const std::string missing : {"__sandbox_missing_command__", "/nonexistent/program"}) {
        const auto r = e.run({missing, "arg"});
        BOOST_TEST_INFO(describe(r));
        BOOST_TEST(r.exit_code == exit_codes::command_not_found);
        BOOST_TEST(r.err == "Failed to start " + who + ": " + missing + ": No such file or directory");
        BOOST_TEST((r.start_error == errc::command_not_found));
    }
    // Present but not executable (/etc/passwd exists in every sandbox, the test image too).
    const auto r = e.run({"/etc/passwd"});
    BOOST_TEST_INFO(describe(r));
    BOOST_TEST(r.exit_code == exit_codes::cannot_execute);
    BOOST_TEST(r.err == "Failed to start " + who + ": /etc/passwd: Permission denied");
    BOOST_TEST((r.start_error == errc::command_not_executable));
    // The command's own "not found" is its result, untouched.
    const auto own = e.sh("echo \"sh: 1: x: not found\" >&2; exit 127");
    BOOST_TEST(own.err == "sh: 1: x: not found\n", describe(own));
    BOOST_TEST(!own.start_error.failed());
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
}

BOOST_AUTO_TEST_CASE(only_the_launchers_exact_report_becomes_a_start_failure)
{
    exec_result r;
    r.exit_code = 127;
    r.err = "[FATAL tini (7)] exec prog failed: No such file or directory\n";
    auto copy = r;
    BOOST_TEST(detail::as_start_failure(copy, driver::docker, "docker", "prog"));
    BOOST_TEST(copy.err == "Failed to start docker: prog: No such file or directory");
    copy = r;
    BOOST_TEST(!detail::as_start_failure(copy, driver::docker, "docker", "other"));  // another command's
    copy = r;
    copy.out = "some output";
    BOOST_TEST(!detail::as_start_failure(copy, driver::docker, "docker", "prog"));  // it ran
    copy = r;
    copy.err += "more\n";
    BOOST_TEST(!detail::as_start_failure(copy, driver::podman, "podman", "prog"));
    copy = r;
    copy.exit_code = 3;
    BOOST_TEST(!detail::as_start_failure(copy, driver::docker, "docker", "prog"));
    BOOST_TEST(copy.err == r.err);
    exec_result fj;
    fj.exit_code = 127;
    fj.err = "env: 'prog': No such file or directory\n";  // firejail with a cwd runs env -C
    BOOST_TEST(detail::as_start_failure(fj, driver::firejail, "firejail", "prog"));
    BOOST_TEST(fj.exit_code == 127);
}

BOOST_DATA_TEST_CASE(a_command_exiting_125_with_an_error_message_is_a_result, data::make(container_drivers), d)
{
    // The container was created: 125 and "Error: ..." are the command's own, not the engine's.
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    const auto r = e.sh("echo 'Error: input.csv line 3 is malformed' >&2; exit 125");
    BOOST_TEST(r.exit_code == 125, describe(r));
    BOOST_TEST(r.err == "Error: input.csv line 3 is malformed\n");
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
}

BOOST_AUTO_TEST_CASE(firejail_refuses_paths_it_would_expand)
{
    // firejail globs its path options: "d*" would also open "dsecret" for writing.
    SANDBOX_REQUIRE_DRIVER(driver::firejail);
    driver_env e(driver::firejail);
    const auto literal = e.base.sub("d*");
    const auto secret = e.base.sub("dsecret");
    e.policy = e.policy.with_writable_paths({literal});
    const auto what = launch_error_of(e);
    BOOST_TEST(what.rfind("Failed to start firejail: writable path " + literal.string(), 0) == 0u, what);
    BOOST_TEST(what.find("'*'") != std::string::npos, what);
    BOOST_TEST(std::filesystem::is_empty(secret));
    BOOST_TEST(e.leftovers() == (std::vector<std::string>{"d*", "dsecret"}), join(e.leftovers()));
}

// bubblewrap and firejail copy the caller's mount namespace; a container engine mounting
// its layers on a shared tree meanwhile made firejail fail its own remount check ("invalid
// read-only mount", exit 1) about one launch in twenty. The engines build theirs apart.
BOOST_DATA_TEST_CASE(mounts_made_on_the_host_during_launches_do_not_fail_them,
                     data::make({driver::bubblewrap, driver::firejail}), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    if (::geteuid() != 0) {
        BOOST_TEST_MESSAGE("NOTE: not root here: no mount can be made on the host to race the launch");
        return;
    }
    driver_env e(d);
    // A shared mount, as /var/lib/docker is, with a tmpfs mounted and unmounted below it.
    scratch_dir tree(0755);
    const auto churn = tree.path / "m";
    std::filesystem::create_directory(churn);
    BOOST_REQUIRE(::mount(tree.path.c_str(), tree.path.c_str(), nullptr, MS_BIND, nullptr) == 0);
    BOOST_REQUIRE(::mount(nullptr, tree.path.c_str(), nullptr, MS_SHARED, nullptr) == 0);
    std::atomic<bool> stop{false};
    std::atomic<int> mounts{0};
    std::thread mounter([&] {
        while (!stop) {
            if (::mount("sandbox-churn", churn.c_str(), "tmpfs", 0, "size=64k") == 0) {
                ++mounts;
                ::umount2(churn.c_str(), 0);
            }
        }
    });
    struct undo {
        std::atomic<bool>& stop;
        std::thread& mounter;
        std::filesystem::path tree;
        ~undo()
        {
            stop = true;
            mounter.join();
            ::umount2(tree.c_str(), MNT_DETACH);
        }
    };
    int failed = 0;
    std::string first;
    {
        const undo guard{stop, mounter, tree.path};
        for (int i = 0; i < 30; ++i) {
            const auto r = e.run({"echo", "ok"});
            if ((r.exit_code != 0 || r.out != "ok\n") && failed++ == 0) first = describe(r);
        }
    }
    BOOST_TEST(mounts > 30, "the mounter made " << mounts << " mounts");
    BOOST_TEST(failed == 0, failed << " of 30 launches failed; the first: " << first);
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
}

BOOST_AUTO_TEST_SUITE_END()
