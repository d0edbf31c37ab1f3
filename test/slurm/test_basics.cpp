// SPDX-License-Identifier: BSL-1.0
// One execution as one Slurm job step, against the real cluster: output and exit codes
// (srun's own notes and the node's report taken out of stderr), stdin, output caps, the
// environment, missing commands, refused launches, the memory limit, caps and sessions.
#include "slurm_fixture.hpp"

#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <map>
#include <set>

using namespace sandbox;
using namespace sandbox::test;
namespace data = boost::unit_test::data;

namespace {

std::map<std::string, std::string> parse_env(const std::string& out)
{
    std::map<std::string, std::string> env;
    for (const auto& line : split_lines(out)) {
        const auto eq = line.find('=');
        if (eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return env;
}

// Nothing of srun's or the node's own lines reached the command's stderr.
void expect_no_launcher_lines(const exec_result& r)
{
    BOOST_TEST(r.err.find("srun:") == std::string::npos, "srun's note in stderr: " << r.err);
    BOOST_TEST(r.err.find("slurmstepd") == std::string::npos, "slurmstepd's note in stderr: " << r.err);
    BOOST_TEST(r.err.find("sandbox-run slurm-step") == std::string::npos, "the node's report in stderr: " << r.err);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(slurm_basics)

BOOST_DATA_TEST_CASE(echo_exit_codes_and_signal_deaths, data::make(inner_drivers), inner)
{
    SANDBOX_REQUIRE_SLURM(inner);
    slurm_env e(inner);
    const auto echo = e.run({"echo", "hello", "two  spaces", "$HOME"});
    BOOST_TEST_INFO_SCOPE(describe(echo));
    BOOST_TEST(echo.success());
    BOOST_TEST(echo.out == "hello two  spaces $HOME\n");
    BOOST_TEST(echo.err.empty());
    BOOST_TEST(!echo.timed_out);
    BOOST_TEST(echo.term_signal == 0);
    BOOST_TEST(echo.duration.count() > 0);

    const auto three = e.sh("echo out; echo err >&2; exit 3");
    BOOST_TEST_INFO_SCOPE(describe(three));
    BOOST_TEST(three.exit_code == 3);
    BOOST_TEST(!three.success());
    BOOST_TEST(three.out == "out\n");
    BOOST_TEST(three.err == "err\n");
    expect_no_launcher_lines(three);

    const auto killed = e.sh("echo before; kill -9 $$");
    BOOST_TEST_INFO_SCOPE(describe(killed));
    BOOST_TEST(killed.exit_code == 137);
    BOOST_TEST(!killed.timed_out);
    BOOST_TEST(!killed.oom_killed);
    BOOST_TEST(killed.out == "before\n");
    expect_no_launcher_lines(killed);
    if (inner == driver::host) {
        BOOST_TEST(killed.term_signal == 9);
    } else {
        // What slurm reports is what its inner driver reports for the same command.
        auto direct = make_runner(e.policy, inner);
        const auto same = run_sync(*direct, {"sh", "-c", "echo before; kill -9 $$"});
        BOOST_TEST(killed.term_signal == same.term_signal,
                   "slurm term_signal " << killed.term_signal << ", " << to_string(inner) << " alone "
                                        << same.term_signal);
    }
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
}

BOOST_DATA_TEST_CASE(a_stderr_without_final_newline_keeps_exactly_its_bytes, data::make(inner_drivers), inner)
{
    SANDBOX_REQUIRE_SLURM(inner);
    slurm_env e(inner);
    const auto r = e.sh("printf out; printf err >&2; exit 3");
    BOOST_TEST_INFO_SCOPE(describe(r));
    BOOST_TEST(r.exit_code == 3);
    BOOST_TEST(r.out == "out");
    BOOST_TEST(r.err == "err");
    expect_no_launcher_lines(r);

    // The same on success, and with an unterminated line after complete ones.
    const auto ok = e.sh("echo line >&2; printf tail >&2");
    BOOST_TEST_INFO_SCOPE(describe(ok));
    BOOST_TEST(ok.success());
    BOOST_TEST(ok.err == "line\ntail");
    expect_no_launcher_lines(ok);
}

BOOST_AUTO_TEST_CASE(stdin_data_reaches_the_command)
{
    SANDBOX_REQUIRE_SLURM(driver::bubblewrap);
    slurm_env e;
    const auto small = e.run({"cat"}, std::string("line one\nline two\n"));
    BOOST_TEST_INFO_SCOPE(describe(small));
    BOOST_TEST(small.success());
    BOOST_TEST(small.out == "line one\nline two\n");

    // Larger than any pipe buffer, through srun's stdin forwarding.
    const std::string big(2 * 1024 * 1024 + 17, 'z');
    const auto counted = e.run({"wc", "-c"}, big);
    BOOST_TEST_INFO_SCOPE(describe(counted));
    BOOST_TEST(counted.success());
    BOOST_TEST(trim(counted.out) == std::to_string(big.size()));

    // No data: EOF at once, so cat ends instead of waiting for the timeout.
    const auto none = e.run({"cat"});
    BOOST_TEST_INFO_SCOPE(describe(none));
    BOOST_TEST(none.success());
    BOOST_TEST(none.out.empty());
    BOOST_TEST((none.duration < 15s));
}

BOOST_AUTO_TEST_CASE(output_beyond_the_caps_keeps_the_tail)
{
    SANDBOX_REQUIRE_SLURM(driver::bubblewrap);
    slurm_env e;
    e.policy = e.policy.with_output_caps(1024, 1024);
    std::size_t seen_out = 0;
    auto cb = [&](stream_kind k, std::string_view chunk) {
        if (k == stream_kind::out) seen_out += chunk.size();
    };
    const std::string out_line = "0123456789012345678901234567890123456789-line-";
    const std::string err_line = "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee-";
    std::string expected_out, expected_err;
    for (int i = 0; i < 100; ++i) expected_out += out_line + std::to_string(i) + "\n";
    expected_out += "END\n";
    for (int i = 0; i < 40; ++i) expected_err += err_line + std::to_string(i) + "\n";
    expected_err += "ERR-END\n";
    const std::string script = "i=0; while [ $i -lt 100 ]; do echo " + out_line +
                               "$i; i=$((i+1)); done; echo END; i=0; while [ $i -lt 40 ]; do echo " + err_line +
                               "$i >&2; i=$((i+1)); done; echo ERR-END >&2";
    const auto r = e.run({"sh", "-c", script}, std::nullopt, cb);
    BOOST_TEST_INFO_SCOPE("exit=" << r.exit_code << " err=" << r.err);
    BOOST_TEST(r.success());
    BOOST_TEST(r.truncated_out);
    BOOST_TEST(r.out == expected_out.substr(expected_out.size() - 1024));
    BOOST_TEST(seen_out == expected_out.size());
    // The node's report line comes after the command's stderr: the tail is still the command's.
    BOOST_TEST(r.truncated_err);
    BOOST_TEST(r.err == expected_err.substr(expected_err.size() - 1024));
}

BOOST_AUTO_TEST_CASE(the_environment_is_the_filtered_policy_env_only)
{
    SANDBOX_REQUIRE_SLURM(driver::bubblewrap);
    env_guard parent_var("SANDBOX_TEST_PARENT_ONLY", "from-parent");
    env_guard parent_allowed("SANDBOX_TEST_ALLOWED", "allowed-value");
    env_guard parent_secret("AWS_SECRET_ACCESS_KEY", "parent-secret");
    slurm_env e;
    e.policy = e.policy.with_env({{"SANDBOX_FOO", "bar, baz=1"},  // srun --export would split at the comma
                                  {"LD_PRELOAD", "/evil.so"},
                                  {"PYTHONPATH", "/p"}},
                                 false);
    exec_options o;
    o.env = {{"SANDBOX_EXTRA", "extra"}, {"LD_LIBRARY_PATH", "/evil"}};
    auto runner = e.runner();
    std::vector<std::string> argv{"env"};
    const auto r = execute_with(*runner, std::move(argv), std::move(o));
    BOOST_TEST_INFO_SCOPE(describe(r));
    BOOST_REQUIRE(r.success());
    const auto env = parse_env(r.out);
    BOOST_TEST(env.count("SANDBOX_FOO") == 1u);
    if (env.count("SANDBOX_FOO")) BOOST_TEST(env.at("SANDBOX_FOO") == "bar, baz=1");
    BOOST_TEST(env.count("SANDBOX_EXTRA") == 1u);
    for (const char* absent : {"LD_PRELOAD", "PYTHONPATH", "LD_LIBRARY_PATH", "AWS_SECRET_ACCESS_KEY",
                               "SANDBOX_TEST_PARENT_ONLY", "SANDBOX_TEST_ALLOWED"})
        BOOST_TEST(env.count(absent) == 0u, absent);
    for (const auto& [k, v] : env) {
        const bool expected = k == "SANDBOX_FOO" || k == "SANDBOX_EXTRA" || k == "PATH" || k == "PWD" ||
                              k == "SHLVL" || k == "_" || k == "OLDPWD";
        // Neither Slurm's SLURM_* nor the caller's variables get through.
        BOOST_TEST(expected, "unexpected variable on the node: " << k << "=" << v);
    }

    // Inheriting with an allowlist: only the allowed parent variable comes through.
    e.policy = e.policy.with_env({{"SANDBOX_FOO", "over"}}, true)
                   .with_env_allowlist(std::vector<std::string>{"SANDBOX_TEST_ALLOWED", "AWS_SECRET_ACCESS_KEY"});
    const auto inherited = e.run({"env"});
    BOOST_TEST_INFO_SCOPE(describe(inherited));
    BOOST_REQUIRE(inherited.success());
    const auto env2 = parse_env(inherited.out);
    BOOST_TEST(env2.count("SANDBOX_TEST_ALLOWED") == 1u);
    if (env2.count("SANDBOX_TEST_ALLOWED")) BOOST_TEST(env2.at("SANDBOX_TEST_ALLOWED") == "allowed-value");
    BOOST_TEST(env2.count("SANDBOX_TEST_PARENT_ONLY") == 0u);
    BOOST_TEST(env2.count("AWS_SECRET_ACCESS_KEY") == 0u);  // blocked, allowlisted or not
    if (env2.count("SANDBOX_FOO")) BOOST_TEST(env2.at("SANDBOX_FOO") == "over");
}

BOOST_DATA_TEST_CASE(a_missing_command_is_127_with_command_not_found, data::make(inner_drivers), inner)
{
    SANDBOX_REQUIRE_SLURM(inner);
    slurm_env e(inner);
    const auto r = e.run({"__sandbox_missing_command__"});
    BOOST_TEST_INFO_SCOPE(describe(r));
    BOOST_TEST(r.exit_code == exit_codes::command_not_found);
    BOOST_TEST((r.start_error == errc::command_not_found));
    BOOST_TEST(r.err.find("__sandbox_missing_command__") != std::string::npos);
    BOOST_TEST(r.err.find("sandbox-run slurm-step") == std::string::npos);
    BOOST_TEST(!r.timed_out);
}

BOOST_AUTO_TEST_CASE(a_refused_launch_throws_engine_failed_naming_the_partition)
{
    SANDBOX_REQUIRE_SLURM(driver::bubblewrap);
    slurm_env e;
    e.options.slurm.partition = "nope";
    auto runner = e.runner();
    job_name_catcher names;
    exec_options o;
    o.on_launch = names;
    std::vector<std::string> argv{"true"};
    const auto start = std::chrono::steady_clock::now();
    try {
        const auto r = execute_with(*runner, std::move(argv), std::move(o));
        BOOST_ERROR("no launch_error; got " << describe(r));
    } catch (const launch_error& err) {
        BOOST_TEST((err.code() == errc::engine_failed), err.code().message());
        BOOST_TEST(std::string(err.what()).find("nope") != std::string::npos, err.what());
        BOOST_TEST(std::string(err.what()).find("sandbox-run slurm-step") == std::string::npos, err.what());
    }
    BOOST_TEST(seconds_since(start) < 30.0);
    BOOST_TEST(names.name->starts_with(our_job_prefix()), *names.name);
    BOOST_TEST(queued(*names.name).empty(), join(queued(*names.name), "; "));
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
}

BOOST_DATA_TEST_CASE(the_memory_limit_kills_an_allocation_far_beyond_it, data::make(inner_drivers), inner)
{
    SANDBOX_REQUIRE_SLURM(inner);
    slurm_env e(inner);
    e.policy = e.policy.with_memory("64M");
    // ~300 MB held by the shell; the pause lets Slurm's sampling (each second) see it on host.
    const auto r = e.sh("x=$(head -c 300000000 /dev/zero | tr '\\0' a); sleep 3; echo survived ${#x}");
    BOOST_TEST_INFO_SCOPE(describe(r));
    BOOST_TEST(r.oom_killed);
    BOOST_TEST(!r.success());
    BOOST_TEST(r.exit_code == 137);
    BOOST_TEST(!r.timed_out);
    BOOST_TEST(r.out.find("survived") == std::string::npos);
    BOOST_TEST(r.err.find("slurmstepd") == std::string::npos, r.err);
    BOOST_TEST(r.err.find("srun:") == std::string::npos, r.err);

    // Below the limit the same kind of command is left alone.
    const auto small = e.sh("x=$(head -c 1000000 /dev/zero | tr '\\0' a); echo kept ${#x}");
    BOOST_TEST_INFO_SCOPE(describe(small));
    BOOST_TEST(small.success());
    BOOST_TEST(!small.oom_killed);
    BOOST_TEST(small.out == "kept 1000000\n");
}

BOOST_AUTO_TEST_CASE(caps_follow_the_inner_driver)
{
    // No cluster needed.
    slurm_env bw(driver::bubblewrap);
    BOOST_TEST((bw.runner()->caps() == capabilities{isolation::namespaces, true, true, true, true}));
    slurm_env host(driver::host);
    BOOST_TEST((host.runner()->caps() == capabilities{isolation::none, false, true, false, false}));
}

BOOST_AUTO_TEST_CASE(a_session_on_slurm_is_refused)
{
    slurm_env e;
    try {
        session s(e.policy, driver::slurm, e.options);
        BOOST_ERROR("a slurm session was created");
    } catch (const launch_error& err) {
        BOOST_TEST((err.code() == errc::driver_unavailable), err.code().message());
        BOOST_TEST(std::string(err.what()).find("slurm") != std::string::npos, err.what());
    }
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
}

BOOST_AUTO_TEST_SUITE_END()
