// SPDX-License-Identifier: BSL-1.0
// Containers never outlive their purpose: none left behind by timeouts that race the engine's
// creation, and none kept running after the process that started them was killed.
#include "driver_fixture.hpp"

#include "drivers/orphans.hpp"
#include "drivers/support.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <future>
#include <thread>

using namespace sandbox;
using namespace sandbox::test;
namespace data = boost::unit_test::data;

namespace {

std::string engine_of(driver d) { return detail::find_on_path(d == driver::podman ? "podman" : "docker"); }

std::vector<std::string> this_environment()
{
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) env.emplace_back(*e);
    return env;
}

// Containers this process started (other test programs may be running containers too).
std::vector<std::string> containers_of_this_process(driver d)
{
    return split_lines(host_output("'" + engine_of(d) + "' ps -a --filter label=sandbox.machine=" +
                                   detail::machine_label() + " --filter label=sandbox.owner=" + detail::owner_label() +
                                   " --format '{{.Names}}' 2>/dev/null"));
}

int runs_for_this_suite()
{
    if (const char* v = std::getenv("SANDBOX_TEST_CONTAINER_RUNS"); v && *v) return std::atoi(v);
    return 40;
}

// A container started as if by another process (owner and deadline chosen), running `sleep`.
std::string start_labelled(driver d, const std::string& owner, std::int64_t deadline)
{
    const auto name = detail::random_sandbox_name();
    const auto id = host_output("'" + engine_of(d) + "' run -d --name " + name + " --label sandbox.machine=" +
                                detail::machine_label() + " --label sandbox.owner=" + owner +
                                " --label sandbox.deadline=" + std::to_string(deadline) + " '" + test_image() +
                                "' sleep 600 2>&1");
    BOOST_TEST_INFO(id);
    BOOST_REQUIRE(container_exists(d, name));
    return name;
}

// The labels of this process's running containers on d's engine.
std::string labels_of_ours(driver d)
{
    return host_output("'" + engine_of(d) + "' ps --filter label=sandbox.owner=" + detail::owner_label() +
                       " --format '{{.Labels}}' 2>/dev/null");
}

// What podman's database and storage say of `name`: "Created", "Storage" (storage only), or
// "" (nothing). Matched here, not with --filter: podman 4.3 lists every storage-only container
// whatever the name filter says.
std::string podman_state(const std::string& name)
{
    const auto out = host_output("'" + engine_of(driver::podman) +
                                 "' ps -a --external --format '{{.Names}} {{.State}}' 2>/dev/null");
    for (const auto& line : split_lines(out))
        if (line.starts_with(name + " ")) return line.substr(name.size() + 1);
    return {};
}

// A container left in podman's storage only: its client SIGKILLed after the storage was made
// and before the database had it. The moment is found by bisecting the delay of the kill
// between "nothing made" and "in the database"; it usually takes a few tries, but under a
// loaded machine the window can stay missed, and then buildah (which writes containers to the
// same storage and never to podman's database) makes the same leftover.
std::string storage_only_container()
{
    double lo = 0, hi = 0.5;
    std::mt19937 gen{std::random_device{}()};
    std::vector<std::string> tried;
    std::string found;
    for (int attempt = 0; attempt < 20 && found.empty(); ++attempt) {
        const double delay = std::uniform_real_distribution<double>(lo, hi)(gen);
        const auto name = detail::random_sandbox_name();
        const std::string bin = engine_of(driver::podman), image = test_image();
        std::vector<const char*> argv{bin.c_str(), "create", "--name", name.c_str(), image.c_str(), "true", nullptr};
        posix_spawnattr_t attr;
        ::posix_spawnattr_init(&attr);
        ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);  // its own group: what it starts goes too
        pid_t pid = -1;
        const int rc = ::posix_spawn(&pid, bin.c_str(), nullptr, &attr, const_cast<char* const*>(argv.data()), environ);
        ::posix_spawnattr_destroy(&attr);
        BOOST_REQUIRE(rc == 0);
        std::this_thread::sleep_for(std::chrono::duration<double>(delay));
        ::kill(-pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
        const auto state = podman_state(name);
        if (state == "Storage") found = name;
        else if (state.empty()) lo = delay;
        else hi = delay, tried.push_back(name);
        if (hi - lo < 0.002) lo = std::max(0.0, lo - 0.02), hi += 0.02;  // the moment moved (load)
    }
    if (!tried.empty()) (void)host_output("'" + engine_of(driver::podman) + "' rm -f -t 0 " + join(tried, " ") + " 2>&1");
    if (found.empty()) {
        BOOST_TEST_MESSAGE("no kill of podman create left a container in storage only in 20 tries; "
                           "making one with buildah");
        const auto name = detail::random_sandbox_name();
        const auto out = host_output("buildah from --pull-never --name " + name + " '" + test_image() + "' 2>&1");
        BOOST_TEST_INFO(out);
        BOOST_REQUIRE_MESSAGE(podman_state(name) == "Storage", "buildah did not leave " + name + " in storage only");
        found = name;
    }
    return found;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(orphaned_containers)

// A podman client killed mid-creation can leave a container that podman's database never got:
// no labels, and listed only by `ps --external`. The sweep finds it by its name once it has
// been in storage only for longer than a creation takes.
BOOST_AUTO_TEST_CASE(podman_containers_left_in_storage_only_are_swept)
{
    SANDBOX_REQUIRE_DRIVER(driver::podman);
    const auto name = storage_only_container();
    auto removed = detail::sweep_orphans(engine_of(driver::podman), true, this_environment(), 30s, 1h);
    BOOST_TEST((std::find(removed.begin(), removed.end(), name) == removed.end()));  // may be under creation
    BOOST_TEST(podman_state(name) == "Storage");
    // Two seconds: a concurrent test's creation under way is not touched.
    std::this_thread::sleep_for(2500ms);
    removed = detail::sweep_orphans(engine_of(driver::podman), true, this_environment(), 30s, 2s);
    BOOST_TEST((std::find(removed.begin(), removed.end(), name) != removed.end()), join(removed));
    BOOST_TEST(podman_state(name).empty());
}

BOOST_DATA_TEST_CASE(timeouts_racing_the_engines_creation_leave_no_container, data::make(container_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    const int runs = runs_for_this_suite();

    asio::io_context ctx;
    auto runner = e.runner();
    std::mt19937 gen{std::random_device{}()};
    std::uniform_int_distribution<int> ms(10, 500);
    // Eight in flight at a time, each with a random timeout, many of them shorter than the
    // engine takes to create the container.
    int timed_out = 0;
    for (int done = 0; done < runs;) {
        std::vector<std::future<exec_result>> batch;
        for (int i = 0; i < 8 && done + i < runs; ++i) {
            exec_options o;
            o.timeout = std::chrono::milliseconds(ms(gen));
            batch.push_back(async_execute(*runner, {"sleep", "5"}, std::move(o), asio::use_future));
        }
        ctx.restart();
        ctx.run();
        for (auto& f : batch) {
            const auto r = f.get();
            timed_out += r.timed_out ? 1 : 0;
            ++done;
        }
    }
    BOOST_TEST_MESSAGE(engine_of(d) << ": " << runs << " runs, " << timed_out << " timed out");
    BOOST_TEST(timed_out == runs);
    const auto after = containers_of_this_process(d);
    BOOST_TEST(after.empty(), "left behind: " << join(after));
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
    // Nothing of the engine's left in the cgroups the library made for these runs either.
    const auto strays = processes_of_ended_runs();
    BOOST_TEST(strays.empty(), join(strays, "\n"));
}

BOOST_DATA_TEST_CASE(the_sweep_removes_containers_whose_starter_died_or_that_are_overdue, data::make(container_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch()).count();
    const auto dead_owner = start_labelled(d, "2147483646.5", 0);           // SIGKILLed starter
    const auto overdue = start_labelled(d, detail::owner_label(), now - 5);  // deadline passed
    const auto live = start_labelled(d, detail::owner_label(), now + 600);   // still running for us
    const auto forever = start_labelled(d, detail::owner_label(), 0);        // no timeout, starter alive

    // The sweep takes any orphan of this machine: other test programs' too. And any process
    // that makes a runner sweeps once, so a concurrent test program's sweep (the same code)
    // may have taken an orphan first: gone, by this sweep or that one, is what counts.
    const auto removed = detail::sweep_orphans(engine_of(d), d == driver::podman, this_environment());
    const auto was_removed = [&](const std::string& n) { return std::count(removed.begin(), removed.end(), n) == 1; };
    BOOST_TEST_CONTEXT("removed: " << join(removed))
    {
        BOOST_TEST((was_removed(dead_owner) || !container_exists(d, dead_owner)));
        BOOST_TEST((was_removed(overdue) || !container_exists(d, overdue)));
        BOOST_TEST(!was_removed(live));
        BOOST_TEST(!was_removed(forever));
    }
    BOOST_TEST(!container_exists(d, dead_owner));
    BOOST_TEST(!container_exists(d, overdue));
    BOOST_TEST(container_exists(d, live));
    BOOST_TEST(container_exists(d, forever));
    (void)host_output("'" + engine_of(d) + "' rm -f " + (d == driver::podman ? "-t 0 " : "") + live + " " + forever +
                      " >/dev/null 2>&1");
}

#ifdef SANDBOX_HAVE_RUN_BIN
// A runner in another pid namespace (as in a container or a CI job) and one outside sweep
// each other's engine: neither takes the other's live container for an orphan, although
// neither can see the other's pid; once the inner one is SIGKILLed, its container goes.
BOOST_DATA_TEST_CASE(runners_in_two_pid_namespaces_never_sweep_each_others_live_containers, data::make(container_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    auto runner = e.runner();
    asio::io_context ctx;
    const auto outer_marker = "41." + random_digits();
    auto outer = async_execute(*runner, {"sleep", outer_marker}, exec_options{}, asio::use_future);
    std::thread drive([&] { ctx.run(); });
    const auto with_command = [&](const std::string& marker) {
        for (const auto& line : split_lines(host_output("'" + engine_of(d) + "' ps --no-trunc --format '{{.Names}} {{.Command}}' 2>/dev/null")))
            if (line.find(marker) != std::string::npos) return line.substr(0, line.find(' '));
        return std::string();
    };
    std::string outer_name, inner_name;
    BOOST_TEST(eventually([&] { return !(outer_name = with_command(outer_marker)).empty(); }, 60s));

    scratch_dir dir;
    const auto pid_file = dir.path / "pid";
    const auto inner_marker = "42." + random_digits();
    // --kill-child: when unshare is killed, so is the namespace's first process, and with it
    // everything in the namespace.
    (void)host_output("unshare --pid --fork --mount-proc --kill-child '" + std::string(build::run_bin()) +
                      "' --driver " + std::string(to_string(d)) + " --image '" + test_image() +
                      "' --timeout none -- sleep " + inner_marker + " >/dev/null 2>&1 & echo $! > '" +
                      pid_file.string() + "'");
    BOOST_TEST(eventually([&] { return !(inner_name = with_command(inner_marker)).empty(); }, 60s));
    // The inner runner swept at its first launch, on a thread of its own: give it time.
    std::this_thread::sleep_for(5s);
    BOOST_TEST(container_exists(d, outer_name), outer_name << " was swept by the runner in the other namespace");
    const auto removed = detail::sweep_orphans(engine_of(d), d == driver::podman, this_environment());
    BOOST_TEST(std::count(removed.begin(), removed.end(), inner_name) == 0, "removed: " << join(removed));
    BOOST_TEST(container_exists(d, inner_name));

    std::ifstream in(pid_file);
    pid_t unshare_pid = 0;
    in >> unshare_pid;
    BOOST_REQUIRE(unshare_pid > 0);
    ::kill(unshare_pid, SIGKILL);
    BOOST_TEST(eventually([&] { return processes_matching("--timeout none -- sleep " + inner_marker).empty(); }, 20s));
    // Its record's lock went with it: a dead run, whatever pid can be seen.
    BOOST_TEST(eventually([&] {
        (void)detail::sweep_orphans(engine_of(d), d == driver::podman, this_environment());
        return !container_exists(d, inner_name);
    }, 60s));
    BOOST_TEST(!container_exists(d, inner_name));
    BOOST_TEST(container_exists(d, outer_name));
    (void)host_output("'" + engine_of(d) + "' kill " + outer_name + " >/dev/null 2>&1");
    drive.join();
    (void)outer.get();
    BOOST_TEST(eventually([&] { return e.leftovers().empty(); }, 30s), join(e.leftovers()));
}
#endif

BOOST_DATA_TEST_CASE(a_runners_containers_carry_its_labels, data::make(container_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    auto runner = e.runner();
    asio::io_context ctx;
    std::string labels;
    auto f = async_execute(*runner, {"sleep", "3"}, exec_options{}, asio::use_future);
    std::thread look([&] {
        eventually([&] {
            labels = labels_of_ours(d);
            return !labels.empty();
        }, 20s);
    });
    ctx.run();
    look.join();
    BOOST_TEST(f.get().success());
    BOOST_TEST(labels.find("sandbox.machine") != std::string::npos, labels);
    BOOST_TEST(labels.find("sandbox.deadline") != std::string::npos, labels);
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
}

// A long-lived process has no timeout, so its container has no deadline a sweep could take
// for overdue while its owner still runs it.
BOOST_DATA_TEST_CASE(a_long_lived_process_container_has_no_deadline, data::make(container_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    auto runner = e.runner();  // the policy's timeout applies to executions only
    asio::io_context ctx;
    std::string labels;
    {
        auto p = runner->start(ctx.get_executor(), {"sleep", "30"});
        eventually([&] {
            labels = labels_of_ours(d);
            return !labels.empty();
        }, 20s);
        p.kill();
        ctx.run_for(std::chrono::seconds(10));
    }
    // docker lists a=b,c=d; podman map[a:b c:d]
    BOOST_TEST((labels.find("sandbox.deadline=0") != std::string::npos ||
                labels.find("sandbox.deadline:0") != std::string::npos),
               labels);
    BOOST_TEST(eventually([&] { return e.leftovers().empty(); }, 30s), join(e.leftovers()));
}

BOOST_AUTO_TEST_SUITE_END()
