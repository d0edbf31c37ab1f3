// SPDX-License-Identifier: BSL-1.0
// Engines failing under running executions: dockerd stopped (SIGTERM, as `pkill -x dockerd`
// does) while containers run and while one starts, and podman's monitor and the container's
// processes killed mid-run, or podman itself failing at start. These stop machine-wide
// services, so they are disabled by default and run by a ctest test of their own, alone
// (`--run_test=@engine_stop`).
#include "fault_support.hpp"

#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <sys/stat.h>

#include <fstream>

using namespace sandbox;
using namespace sandbox::test;

namespace {

namespace utf = boost::unit_test;

std::vector<std::string> cmdline_of(int pid)
{
    std::vector<std::string> out;
    const auto raw = file_contents("/proc/" + std::to_string(pid) + "/cmdline");
    std::size_t start = 0;
    while (start < raw.size()) {
        const auto end = raw.find('\0', start);
        out.push_back(raw.substr(start, end - start));
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return out;
}

std::string shell_quote(const std::string& s)
{
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

bool docker_answers() { return std::system("docker info >/dev/null 2>&1") == 0; }

// Stops dockerd for a scope and always starts it again as it was started before (its own
// command line, in a session of its own, appending to the log scripts/setup-engines.sh
// uses), waiting until `docker info` answers.
class dockerd_stopped {
public:
    dockerd_stopped()
    {
        const auto pids = named("dockerd", "dockerd");
        BOOST_REQUIRE_MESSAGE(pids.size() == 1, "expected one dockerd, found " << pids.size());
        pid_ = pids.front();
        argv_ = cmdline_of(pid_);
        BOOST_REQUIRE(!argv_.empty());
    }
    ~dockerd_stopped() { restart(); }
    dockerd_stopped(const dockerd_stopped&) = delete;
    dockerd_stopped& operator=(const dockerd_stopped&) = delete;

    void stop() { BOOST_REQUIRE_EQUAL(::kill(pid_, SIGTERM), 0); }

    /// Until the daemon has ended and its socket no longer answers.
    bool wait_down(std::chrono::milliseconds limit)
    {
        return eventually([&] { return ::kill(pid_, 0) != 0 && !docker_answers(); }, limit);
    }

    void restart()
    {
        if (restarted_) return;
        restarted_ = true;
        eventually([&] { return ::kill(pid_, 0) != 0; }, 60s);
        if (::kill(pid_, 0) == 0) ::kill(pid_, SIGKILL);
        std::string cmd = "setsid -f";
        for (const auto& a : argv_) cmd += " " + shell_quote(a);
        cmd += " >>/var/log/dockerd.log 2>&1 </dev/null";
        if (std::system(cmd.c_str()) != 0) BOOST_ERROR("cannot start dockerd again: " << cmd);
        if (!eventually(docker_answers, 90s)) BOOST_ERROR("dockerd does not answer after its restart");
    }

private:
    int pid_ = -1;
    std::vector<std::string> argv_;
    bool restarted_ = false;
};

// Records the container name of each launch.
struct launches {
    std::shared_ptr<std::vector<std::string>> names = std::make_shared<std::vector<std::string>>();
    exec_options options(std::chrono::milliseconds timeout) const
    {
        exec_options o;
        o.timeout = timeout;
        o.on_launch = [n = names](const launch_preview& p) {
            const auto it = std::find(p.argv.begin(), p.argv.end(), "--name");
            if (it != p.argv.end() && it + 1 != p.argv.end()) n->push_back(*(it + 1));
        };
        return o;
    }
    std::vector<std::string> left(driver d) const
    {
        std::vector<std::string> out;
        for (const auto& c : container_names(d))
            if (std::find(names->begin(), names->end(), c) != names->end()) out.push_back(c);
        return out;
    }
};

// An execution the engine's failure ended: a result (before its timeout, or, where the
// engine's client hangs on, its wall timeout), or a launch_error from the driver.
void check_clear_end(const outcome& o, const std::string& tool, bool timeout_allowed = false)
{
    BOOST_TEST_CONTEXT(o.message() << describe(o.result))
    {
        if (o.error) {
            BOOST_TEST(o.launch_failed());
            BOOST_TEST(mentions(o.message(), "Failed to start " + tool + ": "));
            BOOST_TEST((o.code() == errc::engine_failed || o.code() == make_error_code(errc::driver_unavailable)));
        } else if (o.result.timed_out) {
            BOOST_TEST(timeout_allowed);
            BOOST_TEST(o.result.exit_code == exit_codes::timeout);
            BOOST_TEST((o.result.timeout == timeout_reason::wall));
        } else {
            BOOST_TEST(!o.result.success());
        }
    }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(engine_stopped, *utf::label("engine_stop") * utf::disabled())

BOOST_AUTO_TEST_CASE(when_dockerd_stops_running_executions_end_new_ones_fail_fast_and_after_its_restart_all_works)
{
    SANDBOX_REQUIRE_DRIVER(driver::docker);
    driver_env env(driver::docker);
    auto runner = env.runner();
    asio::io_context ctx;
    run_coro(ctx, runner->execute({"true"}), 60s);
    const int fds = open_fd_count();
    const auto marker = unique_seconds(30);
    launches ours;
    std::vector<std::shared_ptr<outcome>> running;
    {
        dockerd_stopped daemon;
        for (int i = 0; i < 3; ++i) running.push_back(start_one(ctx, *runner, {"sleep", marker}, ours.options(20s)));
        BOOST_REQUIRE(run_until(ctx, [&] { return named("sleep", "sleep " + marker).size() >= 3; }, 60s));
        const auto stopped_at = std::chrono::steady_clock::now();
        daemon.stop();
        running.push_back(start_one(ctx, *runner, {"sleep", marker}, ours.options(20s)));  // starts as it goes down
        BOOST_TEST(run_until(ctx, [&] { return all_done(running); }, 30s), "executions hang after dockerd stopped");
        BOOST_TEST_MESSAGE("dockerd stopped: the runs ended within "
                           << seconds(std::chrono::steady_clock::now() - stopped_at) << " s");
        for (const auto& o : running) check_clear_end(*o, "docker");

        BOOST_REQUIRE(daemon.wait_down(60s));
        const auto started = std::chrono::steady_clock::now();
        auto down = start_one(ctx, *runner, {"sleep", marker}, ours.options(20s));
        BOOST_REQUIRE(run_until(ctx, [&] { return down->done; }, 30s));
        BOOST_TEST(seconds(std::chrono::steady_clock::now() - started) < 5.0);
        BOOST_TEST(down->launch_failed(), down->message() << describe(down->result));
        BOOST_TEST(down->code() == make_error_code(errc::engine_failed));
        BOOST_TEST(mentions(down->message(), "Failed to start docker: the Docker engine is not running"), down->message());
        daemon.restart();
    }
    auto r = run_coro(ctx, runner->execute({"sh", "-c", "echo back"}), 60s);
    BOOST_TEST(r.success(), describe(r));
    BOOST_TEST(r.out == "back\n");
    BOOST_TEST(eventually([&] { return ours.left(driver::docker).empty(); }, 60s),
               "containers left: " << join(ours.left(driver::docker)));
    check_nothing_left(marker, fds, env.base.path);
}

BOOST_AUTO_TEST_CASE(when_podmans_monitor_and_the_container_are_killed_mid_run_the_run_ends_and_no_container_is_left)
{
    SANDBOX_REQUIRE_DRIVER(driver::podman);
    driver_env env(driver::podman);
    auto runner = env.runner();
    asio::io_context ctx;
    run_coro(ctx, runner->execute({"true"}), 60s);
    const int fds = open_fd_count();
    const auto marker = unique_seconds(30);
    launches ours;
    // The client is not told that its container died with its monitor: it waits on, and the
    // wall timeout ends it (then the container is removed as after any timeout).
    auto o = start_one(ctx, *runner, {"sleep", marker}, ours.options(6s));
    BOOST_REQUIRE(run_until(ctx, [&] { return !named("sleep", "sleep " + marker).empty() && !ours.names->empty(); }, 60s));
    const auto monitors = named("conmon", ours.names->front());
    BOOST_TEST(monitors.size() == 1u);
    const auto killed_at = std::chrono::steady_clock::now();
    for (int pid : monitors) ::kill(pid, SIGKILL);
    for (int pid : processes_matching("sleep " + marker))
        if (comm_of(pid) != "podman") ::kill(pid, SIGKILL);  // the container's init and command
    BOOST_TEST(run_until(ctx, [&] { return o->done; }, 15s), "the run hangs after its monitor was killed");
    BOOST_TEST_MESSAGE("conmon killed: the run ended within " << seconds(std::chrono::steady_clock::now() - killed_at)
                                                              << " s: " << o->message() << describe(o->result));
    check_clear_end(*o, "podman", true);
    BOOST_TEST(eventually([&] { return ours.left(driver::podman).empty(); }, 30s),
               "containers left: " << join(ours.left(driver::podman)));

    auto r = run_coro(ctx, runner->execute({"sh", "-c", "echo back"}), 60s);
    BOOST_TEST(r.success(), describe(r));
    BOOST_TEST(r.out == "back\n");
    check_nothing_left(marker, fds, env.base.path);
}

BOOST_AUTO_TEST_CASE(a_podman_that_fails_at_start_is_a_launch_error_naming_its_reason_and_leaves_nothing)
{
    SANDBOX_REQUIRE_DRIVER(driver::podman);
    driver_env env(driver::podman);
    // The real podman, with storage it cannot use.
    scratch_dir bin;
    const auto wrapper = bin.path / "podman";
    {
        std::ofstream w(wrapper);
        w << "#!/bin/sh\nexec " << detail::find_on_path("podman") << " --root /proc/self/no-storage \"$@\"\n";
    }
    ::chmod(wrapper.c_str(), 0755);
    auto broken_options = env.options;
    broken_options.binary = wrapper.string();
    auto broken = make_runner(env.policy, driver::podman, broken_options);
    asio::io_context ctx;
    const int fds = settled_fd_count(ctx);
    const auto marker = unique_seconds(30);
    const auto started = std::chrono::steady_clock::now();
    auto o = start_one(ctx, *broken, {"sleep", marker});
    BOOST_REQUIRE(run_until(ctx, [&] { return o->done; }, 30s));
    BOOST_TEST(seconds(std::chrono::steady_clock::now() - started) < 10.0);
    BOOST_TEST(o->launch_failed(), o->message() << describe(o->result));
    BOOST_TEST(o->code() == make_error_code(errc::engine_failed));
    BOOST_TEST(mentions(o->message(), "Failed to start podman: "), o->message());
    BOOST_TEST(mentions(o->message(), "/proc/self/no-storage"), o->message());

    auto r = run_coro(ctx, env.runner()->execute({"sh", "-c", "echo back"}), 60s);
    BOOST_TEST(r.success(), describe(r));
    check_nothing_left(marker, fds, env.base.path);
}

BOOST_AUTO_TEST_SUITE_END()
