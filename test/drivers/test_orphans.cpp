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

#include <future>

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

}  // namespace

BOOST_AUTO_TEST_SUITE(orphaned_containers)

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

    // The sweep takes any orphan of this machine: other test programs' too.
    const auto removed = detail::sweep_orphans(engine_of(d), d == driver::podman, this_environment());
    const auto was_removed = [&](const std::string& n) { return std::count(removed.begin(), removed.end(), n) == 1; };
    BOOST_TEST_CONTEXT("removed: " << join(removed))
    {
        BOOST_TEST(was_removed(dead_owner));
        BOOST_TEST(was_removed(overdue));
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
