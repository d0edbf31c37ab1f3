// SPDX-License-Identifier: BSL-1.0
// The slurm driver's launch plan, read through preview(): nothing is submitted, so these run
// without a cluster (the real one is exercised by test/slurm).
#include "driver_fixture.hpp"

#include <sandbox/sandbox.hpp>

#include <boost/json/parse.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <string>
#include <vector>

using namespace sandbox;
using namespace sandbox::test;
using namespace std::chrono_literals;

namespace {

using argv_t = std::vector<std::string>;

driver_options on_slurm(driver inner = driver::bubblewrap)
{
    driver_options o;
    o.binary = "/bin/true";  // stands for srun: it is only named, never started
    o.slurm.node_program = "/opt/sandbox/bin/sandbox-run";
    o.slurm.inner = inner;
    return o;
}

argv_t preview(const execution_policy& p, const driver_options& o, argv_t args, const exec_options& eo = {})
{
    return make_runner(p, driver::slurm, o)->preview(std::move(args), eo).argv;
}

// srun's environment: the node's policy and report tag travel there, not in the argv.
std::string step_variable(const execution_policy& p, const driver_options& o, const std::string& name,
                          const exec_options& eo = {})
{
    for (const auto& kv : make_runner(p, driver::slurm, o)->preview({"true"}, eo).env)
        if (kv.rfind(name + "=", 0) == 0) return kv.substr(name.size() + 1);
    return {};
}

// The srun part: everything before the first "--".
argv_t srun_part(const argv_t& a) { return {a.begin(), std::find(a.begin(), a.end(), "--")}; }

bool has(const argv_t& a, const std::string& v) { return std::find(a.begin(), a.end(), v) != a.end(); }

std::string value_after(const argv_t& a, const std::string& flag)
{
    auto it = std::find(a.begin(), a.end(), flag);
    return it == a.end() || it + 1 == a.end() ? std::string() : *(it + 1);
}

const auto policy = execution_policy::defaults().with_memory("128M").with_timeout(5s);

}  // namespace

BOOST_AUTO_TEST_SUITE(slurm_plan)

BOOST_AUTO_TEST_CASE(srun_starts_one_task_with_memory_a_backstop_time_and_no_environment)
{
    env_guard no_job("SLURM_JOB_ID", std::nullopt);
    const auto a = preview(policy, on_slurm(), {"echo", "hi"});
    const auto s = srun_part(a);
    BOOST_TEST(s.front() == "/bin/true");
    for (const char* flag : {"--ntasks=1", "--nodes=1", "--quiet", "--unbuffered", "--chdir=/"})
        BOOST_TEST(has(s, flag), flag);
    {
        // The step's variables, and where the helpers are when named here (the tests name
        // the ones just built): the node runs this same program.
        env_guard no_landlock("SANDBOX_LANDLOCK_EXEC", std::nullopt);
        env_guard helper("SANDBOX_SPAWN_HELPER", "/opt/x/sandbox-spawn");
        env_guard seccomp("SANDBOX_SECCOMP_EXEC", "/opt/a,b/sandbox-seccomp-exec");  // a comma cannot be exported
        env_guard sweep("SANDBOX_SWEEP", "/opt/x/sandbox-sweep");
        BOOST_TEST(has(srun_part(preview(policy, on_slurm(), {"true"})),
                       "--export=SANDBOX_STEP_POLICY,SANDBOX_STEP_TAG,SANDBOX_SPAWN_HELPER,SANDBOX_SWEEP"));
    }
    BOOST_TEST(has(s, "--mem=192M"));  // the limit, and room for sandbox-run and bwrap beside it
    BOOST_TEST(has(s, "--time=2"));    // minutes: 5 s rounded up, and one more
    BOOST_TEST(!has(s, "--exact"));    // outside an allocation: a job of its own
    const auto name = std::find_if(s.begin(), s.end(), [](const std::string& v) { return v.starts_with("--job-name=sbx-"); });
    BOOST_TEST_REQUIRE((name != s.end()));
    BOOST_TEST(name->find(std::to_string(::getpid())) != std::string::npos);
    // Every run has a name of its own: it is what a cancel finds it by.
    const auto b = srun_part(preview(policy, on_slurm(), {"echo", "hi"}));
    BOOST_TEST(!has(b, *name));
}

BOOST_AUTO_TEST_CASE(no_timeout_means_a_day_and_long_ones_round_up)
{
    auto time_flag = [](const argv_t& a) {
        const auto s = srun_part(a);
        auto it = std::find_if(s.begin(), s.end(), [](const std::string& v) { return v.starts_with("--time="); });
        return it == s.end() ? std::string() : *it;
    };
    // Without a timeout, a bound all the same (a job nothing cancels ends), unless set to none.
    BOOST_TEST(time_flag(preview(policy.with_timeout(no_timeout), on_slurm(), {"true"})) == "--time=1440");
    auto unbounded = on_slurm();
    unbounded.slurm.time_limit_without_timeout = std::chrono::minutes(0);
    BOOST_TEST(time_flag(preview(policy.with_timeout(no_timeout), unbounded, {"true"})) == "");
    BOOST_TEST(time_flag(preview(policy.with_timeout(120s), on_slurm(), {"true"})) == "--time=3");
    BOOST_TEST(time_flag(preview(policy.with_timeout(121s), on_slurm(), {"true"})) == "--time=4");
    exec_options eo;
    eo.timeout = 3600s;  // the execution's own timeout counts, not the policy's
    BOOST_TEST(time_flag(preview(policy, on_slurm(), {"true"}, eo)) == "--time=61");
}

BOOST_AUTO_TEST_CASE(partition_and_extra_args_go_to_srun_before_the_command)
{
    auto o = on_slurm();
    o.slurm.partition = "gpu";
    o.slurm.extra_args = {"--account=ml", "--gres=gpu:1"};
    const auto s = srun_part(preview(policy, o, {"true"}));
    BOOST_TEST(has(s, "--partition=gpu"));
    const auto at = std::find(s.begin(), s.end(), "--account=ml");
    BOOST_TEST_REQUIRE((at != s.end()));
    BOOST_TEST(*(at + 1) == "--gres=gpu:1");
    BOOST_TEST(s.back() == "--gres=gpu:1");  // after the driver's own flags: they may override them
}

BOOST_AUTO_TEST_CASE(inside_an_allocation_each_run_is_an_exact_step)
{
    env_guard job("SLURM_JOB_ID", std::string("4242"));
    BOOST_TEST(has(srun_part(preview(policy, on_slurm(), {"true"})), "--exact"));
}

BOOST_AUTO_TEST_CASE(the_node_runs_sandbox_run_with_the_inner_driver_the_policy_and_the_argv_verbatim)
{
    exec_options eo;
    eo.cwd = "sub/dir";
    const argv_t args{"sh", "-c", "echo \"$1\"", "--", "a b"};
    const auto a = preview(policy, on_slurm(), args, eo);
    const auto node = std::find(a.begin(), a.end(), "/opt/sandbox/bin/sandbox-run");
    BOOST_TEST_REQUIRE((node != a.end()));
    BOOST_TEST(*(node - 1) == "--");
    BOOST_TEST(*(node + 1) == "slurm-step");
    const argv_t rest(node, a.end());
    BOOST_TEST(value_after(rest, "--driver") == "bubblewrap");
    BOOST_TEST(value_after(rest, "--cwd") == "sub/dir");
    BOOST_TEST(!has(rest, "--tag"));
    BOOST_TEST(!has(rest, "--policy"));
    BOOST_TEST(step_variable(policy, on_slurm(), "SANDBOX_STEP_TAG").starts_with("sandbox-run slurm-step "));
    BOOST_TEST(argv_t(a.end() - static_cast<std::ptrdiff_t>(args.size()) - 1, a.end() - static_cast<std::ptrdiff_t>(args.size())) ==
               argv_t{"--"}, boost::test_tools::per_element());
    BOOST_TEST(argv_t(a.end() - static_cast<std::ptrdiff_t>(args.size()), a.end()) == args, boost::test_tools::per_element());
    BOOST_TEST(value_after(preview(policy, on_slurm(driver::host), {"true"}), "--driver") == "host");
    BOOST_TEST(has(srun_part(preview(policy, on_slurm(driver::host), {"true"})), "--mem=144M"));
}

BOOST_AUTO_TEST_CASE(the_node_gets_the_environment_made_here_and_the_wall_timer_as_a_backstop)
{
    env_guard parent("SANDBOX_PLAN_PARENT_ONLY", std::string("x"));
    const auto p = policy.with_env({{"LIST", "a,b,c"}, {"LD_PRELOAD", "/evil.so"}});
    exec_options eo;
    eo.env = {{"EXTRA", "1"}};
    const auto node_policy = policy_from_json(step_variable(p, on_slurm(), "SANDBOX_STEP_POLICY", eo));
    BOOST_TEST(!node_policy.inherit_env());
    BOOST_TEST(!node_policy.idle_timeout().has_value());  // the idle timer runs here
    BOOST_TEST((node_policy.timeout() == 10s));            // 5 s, and 5 more: ours end it first
    const auto& env = node_policy.env();
    auto value = [&](const std::string& name) {
        auto it = std::find_if(env.begin(), env.end(), [&](const auto& kv) { return kv.first == name; });
        return it == env.end() ? std::string("<unset>") : it->second;
    };
    BOOST_TEST(value("LIST") == "a,b,c");  // srun --export would have split it at the commas
    BOOST_TEST(value("EXTRA") == "1");
    BOOST_TEST(value("LD_PRELOAD") == "<unset>");
    BOOST_TEST(value("SANDBOX_PLAN_PARENT_ONLY") == "<unset>");
    BOOST_TEST(value("PATH") != "<unset>");
}

BOOST_AUTO_TEST_CASE(an_inner_driver_other_than_host_or_bubblewrap_is_refused_by_name)
{
    try {
        (void)preview(policy, on_slurm(driver::docker), {"true"});
        BOOST_FAIL("expected launch_error");
    } catch (const launch_error& e) {
        BOOST_TEST((e.code() == errc::driver_unavailable));
        BOOST_TEST(std::string(e.what()).find("inner is docker") != std::string::npos, e.what());
    }
}

BOOST_AUTO_TEST_CASE(caps_are_the_inner_drivers_with_memory_bounded_by_slurm)
{
    BOOST_TEST((make_runner(policy, driver::slurm, on_slurm())->caps() ==
                capabilities{isolation::namespaces, true, true, true, true}));
    BOOST_TEST((make_runner(policy, driver::slurm, on_slurm(driver::host))->caps() ==
                capabilities{isolation::none, false, true, false, false}));
}

BOOST_AUTO_TEST_SUITE_END()
