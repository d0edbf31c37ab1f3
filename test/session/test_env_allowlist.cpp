// SPDX-License-Identifier: BSL-1.0
// The environment allowlist applies to executions, sessions and long-lived processes alike.
#include "driver_availability.hpp"

#include <boost/test/unit_test.hpp>

#include <cstdlib>

using namespace sandbox;
using namespace sandbox::test;

namespace {

struct secret_env {
    secret_env() { ::setenv("DRIVER_TEST_VALUE", "s3cret-value", 1); }
    ~secret_env() { ::unsetenv("DRIVER_TEST_VALUE"); }
};

bool has(const std::string& env, const std::string& entry) { return env.find(entry) != std::string::npos; }

}  // namespace

BOOST_FIXTURE_TEST_SUITE(test_env_allowlist, secret_env)

BOOST_AUTO_TEST_CASE(without_an_allowlist_everything_is_inherited)
{
    auto r = make_runner(execution_policy::defaults().inherit_environment(), driver::host);
    const auto env = run_sync(*r, {"env"}).out;
    BOOST_TEST(has(env, "DRIVER_TEST_VALUE=s3cret-value"));
}

BOOST_AUTO_TEST_CASE(an_allowlist_limits_inherited_variables_for_executions)
{
    const auto policy = execution_policy::defaults().inherit_environment().with_env_allowlist(
        std::vector<std::string>{"PATH", "HOME"});
    auto r = make_runner(policy, driver::host);
    const auto env = run_sync(*r, {"env"}).out;
    BOOST_TEST(!has(env, "DRIVER_TEST_VALUE="));
    BOOST_TEST(has(env, "PATH="));
    // Explicit variables are added on top of the filtered base.
    auto explicit_env = make_runner(policy.with_env({{"EXPLICIT_VAR", "yes"}}), driver::host);
    BOOST_TEST(has(run_sync(*explicit_env, {"env"}).out, "EXPLICIT_VAR=yes"));
    // An empty allowlist passes no inherited variable at all.
    auto none = make_runner(execution_policy::defaults().inherit_environment().with_env_allowlist(
                                std::vector<std::string>{}),
                            driver::host);
    BOOST_TEST(run_sync(*none, {"env"}).out.empty());
}

BOOST_AUTO_TEST_CASE(an_allowlist_applies_to_sessions_and_their_saved_state)
{
    temp_dir base;
    const auto policy = execution_policy::in(base.path).inherit_environment().with_env_allowlist(
        std::vector<std::string>{"PATH"});
    session s(policy, driver::host);
    asio::io_context ctx;
    auto r = run_coro(ctx, s.run("env; export MINE=1"));
    BOOST_TEST(!has(r.out, "DRIVER_TEST_VALUE="));
    BOOST_TEST(has(r.out, "PATH="));
    // Nor does the secret reach the state file the next command sources.
    auto next = run_coro(ctx, s.run("env"));
    BOOST_TEST(!has(next.out, "DRIVER_TEST_VALUE="));
    BOOST_TEST(has(next.out, "MINE=1"));
}

BOOST_AUTO_TEST_CASE(an_allowlist_applies_to_long_lived_processes)
{
    const auto policy = execution_policy::defaults().inherit_environment().with_env_allowlist(
        std::vector<std::string>{"PATH"});
    auto r = make_runner(policy, driver::host);
    asio::io_context ctx;
    auto p = r->start(ctx.get_executor(), {"env"});
    std::string all;
    run_coro(ctx, [&]() -> asio::awaitable<void> {
        while (auto line = co_await p.read_line()) all += *line + "\n";
    }());
    BOOST_TEST(!has(all, "DRIVER_TEST_VALUE="));
    BOOST_TEST(has(all, "PATH="));
}

BOOST_AUTO_TEST_CASE(the_allowlist_round_trips_through_json)
{
    const auto p = execution_policy::defaults().with_env_allowlist(std::vector<std::string>{"PATH", "HOME"});
    const auto back = json::value_to<execution_policy>(json::value_from(p));
    BOOST_TEST((back == p));
    BOOST_TEST((policy_from_json(R"({"env_allowlist": null})").env_allowlist() == std::nullopt));
    BOOST_CHECK_EXCEPTION(policy_from_json(R"({"env_allowlist": [1]})"), std::invalid_argument,
                          [](const std::invalid_argument& e) {
                              return std::string(e.what()).find("env_allowlist") != std::string::npos;
                          });
    // Absent from the JSON of a policy without one, as before.
    BOOST_TEST(to_json(execution_policy::defaults()).find("env_allowlist") == std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
