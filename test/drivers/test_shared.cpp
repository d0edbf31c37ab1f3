// SPDX-License-Identifier: BSL-1.0
// The behaviour every driver shares, run against all five: output, exit codes, stdin,
// output caps, wall and idle timeouts, the environment, mounts, and many runs at once.
// Isolating drivers must also leave no work dir behind after any of it.
#include "driver_fixture.hpp"

#include <boost/asio/detached.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <map>
#include <set>

using namespace sandbox;
using namespace sandbox::test;
namespace data = boost::unit_test::data;

namespace {

// Work dirs of isolating drivers are removed after every run.
void expect_clean(const driver_env& e)
{
    if (e.d == driver::host) return;
    BOOST_TEST(e.leftovers().empty(), "left in the base dir: " << join(e.leftovers()));
}

std::map<std::string, std::string> parse_env(const std::string& out)
{
    std::map<std::string, std::string> env;
    for (const auto& line : split_lines(out)) {
        const auto eq = line.find('=');
        if (eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return env;
}

// Variables an engine or a shell adds by itself (never copied from the parent).
bool engine_added(driver d, const std::string& name)
{
    static const std::set<std::string> shell{"PWD", "OLDPWD", "SHLVL", "_"};
    static const std::set<std::string> container{"HOSTNAME", "HOME"};
    // firejail 0.9.72 always sets these in the jail (--rmenv does not remove them).
    static const std::set<std::string> firejail{"container",      "FIREJAIL_QUIET", "SHELL",
                                                "QT_X11_NO_MITSHM", "QML_DISABLE_DISK_CACHE", "KDE_FORK_SLAVES",
                                                "PROMPT_COMMAND"};
    if (shell.count(name)) return true;
    if (is_container(d)) return container.count(name) > 0;
    if (d == driver::firejail) return firejail.count(name) > 0;
    if (d == driver::landlock) return name == "TMPDIR";  // the execution's own, in its work dir
    return false;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(shared_behaviour)

BOOST_DATA_TEST_CASE(echo_prints_and_succeeds, data::make(every_driver), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    const auto r = e.run({"echo", "hello", "two  spaces", "$HOME"});
    BOOST_TEST_INFO(describe(r));
    BOOST_TEST(r.success());
    BOOST_TEST(r.exit_code == 0);
    BOOST_TEST(r.out == "hello two  spaces $HOME\n");
    BOOST_TEST(r.err.empty());
    BOOST_TEST(!r.timed_out);
    BOOST_TEST(!r.timeout.has_value());
    BOOST_TEST(!r.truncated_out);
    BOOST_TEST(r.duration.count() > 0);
    expect_clean(e);
}

BOOST_DATA_TEST_CASE(exit_codes_signal_deaths_and_missing_commands_are_reported, data::make(every_driver), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    const auto seven = e.sh("echo out; echo err >&2; exit 7");
    BOOST_TEST_INFO(describe(seven));
    BOOST_TEST(seven.exit_code == 7);
    BOOST_TEST(!seven.success());
    BOOST_TEST(seven.out == "out\n");
    BOOST_TEST(seven.err == "err\n");

    const auto killed = e.sh("kill -9 $$");
    BOOST_TEST_INFO(describe(killed));
    BOOST_TEST(killed.exit_code == 137);
    BOOST_TEST(!killed.timed_out);

    const auto missing = e.run({"__sandbox_missing_command__"});
    BOOST_TEST_INFO(describe(missing));
    BOOST_TEST(missing.exit_code == exit_codes::command_not_found);
    BOOST_TEST(missing.err.find("__sandbox_missing_command__") != std::string::npos);
    expect_clean(e);
}

BOOST_DATA_TEST_CASE(stdin_reaches_the_command_and_ends_with_eof, data::make(every_driver), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    const auto small = e.run({"cat"}, std::string("line one\nline two\n"));
    BOOST_TEST_INFO(describe(small));
    BOOST_TEST(small.success());
    BOOST_TEST(small.out == "line one\nline two\n");

    // Larger than any pipe buffer, written while the output is read.
    const std::string big(3 * 1024 * 1024 + 17, 'z');
    const auto counted = e.run({"wc", "-c"}, big);
    BOOST_TEST_INFO(describe(counted));
    BOOST_TEST(counted.success());
    BOOST_TEST(trim(counted.out) == std::to_string(big.size()));

    // No data: EOF at once, so cat ends instead of waiting for the timeout.
    const auto none = e.run({"cat"});
    BOOST_TEST(none.success());
    BOOST_TEST(none.out.empty());
    BOOST_TEST(!none.timed_out);
    BOOST_TEST((none.duration < 10s));
    expect_clean(e);
}

BOOST_DATA_TEST_CASE(output_beyond_the_caps_keeps_the_tail, data::make(every_driver), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    e.policy = e.policy.with_output_caps(1024, 1024);
    std::size_t seen_out = 0, seen_err = 0;
    auto cb = [&](stream_kind k, std::string_view chunk) { (k == stream_kind::out ? seen_out : seen_err) += chunk.size(); };
    // 100 numbered lines then "END" on stdout, 40 then "ERR-END" on stderr: several KiB each.
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
    BOOST_TEST_INFO("exit=" << r.exit_code << " err tail=" << r.err.substr(r.err.size() > 200 ? r.err.size() - 200 : 0));
    BOOST_TEST(r.success());
    BOOST_TEST(r.truncated_out);
    BOOST_TEST(r.truncated_err);
    BOOST_TEST(r.out == expected_out.substr(expected_out.size() - 1024));
    BOOST_TEST(r.err == expected_err.substr(expected_err.size() - 1024));
    // The callback saw every byte.
    BOOST_TEST(seen_out == expected_out.size());
    BOOST_TEST(seen_err == expected_err.size());
    expect_clean(e);
}

BOOST_DATA_TEST_CASE(a_wall_timeout_ends_the_command_with_124, data::make(every_driver), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    // An engine's start counts against the wall time: under a loaded CI, Docker alone has
    // taken more than 2 s before the command's first line.
    const bool engine = d == driver::docker || d == driver::podman || d == driver::slurm;
    const auto limit = engine ? 8s : 2s;
    e.policy = e.policy.with_timeout(limit);
    const auto marker = "31." + random_digits();
    const auto start = std::chrono::steady_clock::now();
    const auto r = e.sh("echo started; sleep " + marker + "; echo never");
    const auto took = std::chrono::steady_clock::now() - start;
    BOOST_TEST_INFO(describe(r));
    BOOST_TEST(r.timed_out);
    BOOST_TEST(r.exit_code == exit_codes::timeout);
    BOOST_TEST((r.timeout == timeout_reason::wall));
    BOOST_TEST(!r.success());
    BOOST_TEST(r.out == "started\n");
    BOOST_TEST((took >= limit));
    BOOST_TEST((took < limit + 8s));
    BOOST_TEST(no_process_matching("sleep " + marker));
    expect_clean(e);
}

// A timeout asks first: the command's TERM trap runs within the kill grace, on every driver
// (bubblewrap included: the signal goes to the command inside, not to bwrap, which would die
// of it and take the command down with SIGKILL).
BOOST_DATA_TEST_CASE(a_timeout_runs_the_commands_term_trap, data::make(every_driver), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    const bool engine = d == driver::docker || d == driver::podman || d == driver::slurm;
    e.policy = e.policy.with_timeout(engine ? 8s : 2s);
    e.options.kill_grace = 3s;
    // The trap leaves its mark in a writable path: docker's client, which only ever gets
    // SIGKILL, is gone by then, and so is the rest of the command's output.
    shared_dir host("/var/lib");  // firejail hides /var/tmp
    ::chmod(host.path.c_str(), 0777);
    e.policy = e.policy.with_writable_paths({host.path});
    const auto inside = d == driver::slurm ? host.path.string() : mounts_for(e.policy, d).at(0).container;
    const auto r = e.sh("trap 'echo trapped > \"$1/mark\"; exit 0' TERM; echo started; while :; do sleep 0.05; done",
                        {inside});
    BOOST_TEST_INFO(describe(r));
    BOOST_TEST(r.timed_out);
    BOOST_TEST(r.out.rfind("started\n", 0) == 0u);
    BOOST_TEST(eventually([&] { return read_text(host.path / "mark") == "trapped\n"; }, 5s));
    expect_clean(e);
}

BOOST_DATA_TEST_CASE(an_idle_timeout_ends_a_silent_command_but_not_a_chatty_one, data::make(every_driver), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    // Containers take a few hundred ms before the first output, and more than five seconds
    // on a loaded machine (a sanitizer build next to other tests): the idle limit allows that.
    e.policy = e.policy.with_timeout(40s).with_idle_timeout(10s);
    const auto marker = "32." + random_digits();
    const auto silent = e.sh("echo hello; sleep " + marker);
    BOOST_TEST_INFO(describe(silent));
    BOOST_TEST(silent.timed_out);
    BOOST_TEST(silent.exit_code == exit_codes::timeout);
    BOOST_TEST((silent.timeout == timeout_reason::idle));
    BOOST_TEST(silent.out == "hello\n");
    BOOST_TEST((silent.duration < 25s));
    BOOST_TEST(no_process_matching("sleep " + marker));

    // Longer in all than the idle limit, never silent for as long.
    const auto chatty = e.sh("for i in 1 2 3 4 5 6; do echo $i; sleep 2; done");
    BOOST_TEST_INFO(describe(chatty));
    BOOST_TEST(chatty.success());
    BOOST_TEST(!chatty.timed_out);
    BOOST_TEST(chatty.out == "1\n2\n3\n4\n5\n6\n");
    expect_clean(e);
}

BOOST_DATA_TEST_CASE(the_environment_is_the_filtered_policy_env_only, data::make(every_driver), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    env_guard parent_var("SANDBOX_TEST_PARENT_ONLY", "from-parent");
    env_guard parent_secret("AWS_SECRET_ACCESS_KEY", "parent-secret");
    driver_env e(d);
    e.policy = e.policy.with_env({{"SANDBOX_FOO", "bar baz"},
                                  {"LD_PRELOAD", "/evil.so"},
                                  {"npm_config_token", "t"},  // NPM_*, case-insensitive
                                  {"PYTHONPATH", "/p"},
                                  {"EMPTY", ""}},
                                 false);
    const auto r = e.run({"env"});
    BOOST_TEST_INFO(describe(r));
    BOOST_REQUIRE(r.success());  // argv[0] resolves: PATH is supplied
    const auto env = parse_env(r.out);
    BOOST_TEST(env.count("SANDBOX_FOO") == 1u);
    if (env.count("SANDBOX_FOO")) BOOST_TEST(env.at("SANDBOX_FOO") == "bar baz");
    BOOST_TEST(env.count("EMPTY") == 1u);
    for (const char* blocked : {"LD_PRELOAD", "npm_config_token", "PYTHONPATH", "AWS_SECRET_ACCESS_KEY"})
        BOOST_TEST(env.count(blocked) == 0u, blocked);
    BOOST_TEST(env.count("SANDBOX_TEST_PARENT_ONLY") == 0u);
    if (d != driver::host) {
        BOOST_TEST(env.count("PATH") == 1u);
        if (env.count("PATH")) BOOST_TEST(env.at("PATH") == std::string(detail::default_sandbox_path));
    }
    for (const auto& [k, v] : env) {
        const bool expected = k == "SANDBOX_FOO" || k == "EMPTY" || k == "PATH" || engine_added(d, k);
        BOOST_TEST(expected, "unexpected variable inside " << to_string(d) << ": " << k << "=" << v);
    }

    // Inheriting: the parent's variables come through, the blocked ones still do not, and a
    // policy PATH wins.
    e.policy = e.policy.with_env({{"SANDBOX_FOO", "over"}, {"PATH", "/usr/bin:/bin"}}, true);
    const auto inherited = e.run({"env"});
    BOOST_TEST_INFO(describe(inherited));
    BOOST_REQUIRE(inherited.success());
    const auto env2 = parse_env(inherited.out);
    BOOST_TEST(env2.count("SANDBOX_TEST_PARENT_ONLY") == 1u);
    BOOST_TEST(env2.count("AWS_SECRET_ACCESS_KEY") == 0u);
    if (env2.count("SANDBOX_FOO")) BOOST_TEST(env2.at("SANDBOX_FOO") == "over");
    if (env2.count("PATH")) BOOST_TEST(env2.at("PATH") == "/usr/bin:/bin");
    expect_clean(e);
}

BOOST_DATA_TEST_CASE(writable_and_readable_paths_appear_where_mounts_for_says, data::make(every_driver), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    scratch_dir outside;
    const auto rw = outside.sub("rw", 0777);
    const auto ro = outside.sub("ro", 0755);
    const auto colon = outside.sub("with:colon", 0777);
    {
        std::ofstream(ro / "data") << "read me\n";
    }
    ::chmod((ro / "data").c_str(), 0644);
    // mounts_for skips a missing path and a path with ':', which take no index (a launch
    // refuses them: test_failures).
    const auto mounts = mounts_for(e.policy.with_writable_paths({outside.path / "missing", colon, rw}).with_readable_paths({ro}), d);
    e.policy = e.policy.with_writable_paths({rw}).with_readable_paths({ro});
    BOOST_REQUIRE(mounts.size() == 2u);
    BOOST_TEST(mounts[0].options == "rw");
    BOOST_TEST(mounts[1].options == "ro");
    if (d == driver::docker || d == driver::podman || d == driver::bubblewrap) {
        BOOST_TEST(mounts[0].container == "/mnt/rw0");
        BOOST_TEST(mounts[1].container == "/mnt/ro0");
    } else {
        BOOST_TEST(mounts[0].container == std::filesystem::canonical(rw).string());
        BOOST_TEST(mounts[1].container == std::filesystem::canonical(ro).string());
    }
    const auto r = e.sh("echo written > \"$1/new\" && cat \"$1/new\" && cat \"$2/data\" && "
                        "if (echo x > \"$2/intruder\") 2>/dev/null; then echo RO-WRITABLE; fi; ls \"$1\"",
                        {mounts[0].container, mounts[1].container});
    BOOST_TEST_INFO(describe(r));
    BOOST_TEST(r.success());
    if (d == driver::host) {
        BOOST_TEST(r.out.rfind("written\nread me\n", 0) == 0u);  // the host enforces nothing
    } else {
        BOOST_TEST(r.out == "written\nread me\nnew\n");
        BOOST_TEST(!std::filesystem::exists(ro / "intruder"));
    }
    std::ifstream written(rw / "new");
    std::string line;
    std::getline(written, line);
    BOOST_TEST(line == "written");
    expect_clean(e);
}

BOOST_DATA_TEST_CASE(several_runs_at_once_on_one_io_context, data::make(every_driver), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    constexpr int n = 4;
    // The runs meet in a shared directory: each marks its arrival and waits for all the
    // others, so they finish only if all n ran at the same time (one after another, the first
    // would wait until its timeout). No clock is involved: an engine slow to start a container
    // under load delays the meeting, it does not fail it.
    scratch_dir meeting;
    const auto dir = meeting.sub("meet", 0777);
    e.policy = e.policy.with_writable_paths({dir}).with_timeout(60s);
    const auto in_sandbox = mounts_for(e.policy, d).at(0).container;
    auto runner = e.runner();
    asio::io_context ctx;
    std::vector<std::optional<exec_result>> results(n);
    int errors = 0;
    for (int i = 0; i < n; ++i) {
        asio::co_spawn(
            ctx,
            [&, i]() -> asio::awaitable<void> {
                std::vector<std::string> argv{
                    "sh", "-c",
                    "read x; echo job-$0-$x; : > \"$1/$0\"; "
                    "while [ \"$(ls \"$1\" | wc -l)\" -lt $2 ]; do sleep 0.05; done; echo done-$0 >&2",
                    std::to_string(i), in_sandbox, std::to_string(n)};
                results[static_cast<std::size_t>(i)] =
                    co_await runner->execute(std::move(argv), "in" + std::to_string(i) + "\n");
            },
            [&](std::exception_ptr ep) {
                if (ep) ++errors;
            });
    }
    ctx.run_for(120s);
    BOOST_TEST(errors == 0);
    for (int i = 0; i < n; ++i) {
        const auto& r = results[static_cast<std::size_t>(i)];
        BOOST_REQUIRE(r.has_value());
        BOOST_TEST_INFO(describe(*r));
        BOOST_TEST(r->success());
        BOOST_TEST(!r->timed_out);
        BOOST_TEST(r->out == "job-" + std::to_string(i) + "-in" + std::to_string(i) + "\n");
        BOOST_TEST(r->err == "done-" + std::to_string(i) + "\n");
    }
    BOOST_TEST(dir_entries(dir).size() == static_cast<std::size_t>(n));
    BOOST_TEST(!has_children());
    expect_clean(e);
}

BOOST_DATA_TEST_CASE(caps_report_what_the_driver_enforces, data::make(every_driver), d)
{
    driver_env e(d);
    const auto caps = e.runner()->caps();  // no engine needed
    switch (d) {
    case driver::host: BOOST_TEST((caps == capabilities{isolation::none, false, false, false})); break;
    case driver::docker:
    case driver::podman: BOOST_TEST((caps == capabilities{isolation::container, true, true, true, true})); break;
    case driver::bubblewrap:
        BOOST_TEST((caps == capabilities{isolation::namespaces, true, cgroups_usable_here(), true, true}));
        break;
    case driver::firejail:
        BOOST_TEST((caps == capabilities{isolation::namespaces, true, cgroups_usable_here(), false, ::geteuid() == 0}));
        break;
    case driver::landlock:
        BOOST_TEST((caps == capabilities{isolation::confined, true, cgroups_usable_here(), true, ::geteuid() == 0}));
        break;
    case driver::slurm: break;  // test/slurm
    }
    // A runner whose binary is missing still constructs and reports its caps.
    e.options.binary = "/nonexistent/engine";
    BOOST_CHECK_NO_THROW((void)e.runner()->caps());
}

BOOST_AUTO_TEST_SUITE_END()
