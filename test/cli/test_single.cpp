// SPDX-License-Identifier: BSL-1.0
// One command: exit codes, live output, stdin, --json, and every policy flag doing its job.
#include "cli_support.hpp"
#include "driver_availability.hpp"

#include <boost/json/parse.hpp>
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

using namespace sandbox;
using namespace sandbox::test;
namespace json = boost::json;

namespace {

json::object parse_object(const std::string& text)
{
    boost::system::error_code ec;
    auto v = json::parse(text, ec);
    BOOST_TEST_REQUIRE(!ec, "not JSON: " << text);
    BOOST_TEST_REQUIRE(v.is_object());
    return v.as_object();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cli_single)

BOOST_AUTO_TEST_CASE(exits_with_the_commands_status_and_passes_its_output)
{
    auto r = run_cli({"--", "sh", "-c", "echo to-out; echo to-err >&2; exit 7"});
    BOOST_TEST(r.code == 7);
    BOOST_TEST(r.out == "to-out\n");
    BOOST_TEST(r.err == "to-err\n");
    BOOST_TEST(run_cli({"true"}).code == 0);
    BOOST_TEST(run_cli({"false"}).code == 1);
    BOOST_TEST(run_cli({"sh", "-c", "exit 255"}).code == 255);
}

BOOST_AUTO_TEST_CASE(timeout_exits_124_like_gnu_timeout)
{
    auto r = run_cli({"--timeout", "0.3", "--", "sh", "-c", "echo started; sleep 10"});
    BOOST_TEST(r.code == 124);
    BOOST_TEST(r.out == "started\n");
    BOOST_TEST(r.seconds < 5.0);
}

BOOST_AUTO_TEST_CASE(idle_timeout_ends_a_silent_command)
{
    auto r = run_cli({"--timeout", "20", "--idle-timeout", "0.3", "--json", "--", "sh", "-c", "echo hi; sleep 10"});
    BOOST_TEST(r.code == 124);
    auto o = parse_object(r.out);
    BOOST_TEST(o.at("timed_out").as_bool());
    BOOST_TEST(o.at("timeout_reason").as_string() == "idle");
    BOOST_TEST(o.at("stdout").as_string() == "hi\n");
    BOOST_TEST(r.seconds < 5.0);
    // Output keeps it alive.
    auto busy = run_cli({"--idle-timeout", "0.4", "--", "sh", "-c", "for i in 1 2 3 4 5; do echo $i; sleep 0.15; done"});
    BOOST_TEST(busy.code == 0, busy.err);
}

BOOST_AUTO_TEST_CASE(killed_by_a_signal_is_128_plus_the_signal)
{
    BOOST_TEST(run_cli({"sh", "-c", "kill -9 $$"}).code == 128 + 9);
    BOOST_TEST(run_cli({"sh", "-c", "kill -TERM $$"}).code == 128 + 15);
}

BOOST_AUTO_TEST_CASE(not_found_is_127_and_not_executable_is_126)
{
    auto r = run_cli({"--", "no-such-command-for-sure"});
    BOOST_TEST(r.code == 127);
    BOOST_TEST(r.err.find("no-such-command-for-sure") != std::string::npos);
    BOOST_TEST(r.err.ends_with("\n"));

    temp_dir dir;
    const auto script = dir.path / "not-executable.sh";
    write_text(script, "#!/bin/sh\necho hi\n");
    ::chmod(script.c_str(), 0644);
    r = run_cli({"--", script.string()});
    BOOST_TEST(r.code == 126, r.err);
    BOOST_TEST(run_cli({"--", dir.path.string()}).code == 126);
}

BOOST_AUTO_TEST_CASE(relative_commands_are_found_or_not_in_the_base_dir_not_where_the_tool_started)
{
    // The command runs in the base dir: `cd here && sandbox-run --base-dir there -- ./x` is
    // about there/x, whatever here/x is.
    temp_dir here, there;
    write_text(here.path / "only-here", "#!/bin/sh\necho hi\n");
    ::chmod((here.path / "only-here").c_str(), 0755);
    write_text(there.path / "not-executable", "#!/bin/sh\necho hi\n");
    ::chmod((there.path / "not-executable").c_str(), 0644);
    std::filesystem::create_directory(here.path / "sub");
    write_text(here.path / "sub" / "not-executable", "#!/bin/sh\necho hi\n");
    ::chmod((here.path / "sub" / "not-executable").c_str(), 0644);

    cli_options o;
    o.cwd = here.path;
    auto r = run_cli({"--base-dir", there.path.string(), "--", "./only-here"}, o);
    BOOST_TEST(r.code == 127, r.err);  // not in the base dir: not found
    r = run_cli({"--base-dir", there.path.string(), "--", "./not-executable"}, o);
    BOOST_TEST(r.code == 126, r.err);  // in the base dir, not executable
    // A relative base dir is taken from where the tool started, as the driver does.
    r = run_cli({"--base-dir", "sub", "--", "./not-executable"}, o);
    BOOST_TEST(r.code == 126, r.err);
    r = run_cli({"--base-dir", "sub", "--", "./only-here"}, o);
    BOOST_TEST(r.code == 127, r.err);
    // Without --base-dir the commands run in the policy's default base dir (not here) too.
    r = run_cli({"--", "./only-here"}, o);
    BOOST_TEST(r.code == 127, r.err);
    // An absolute path is itself wherever the command runs.
    r = run_cli({"--base-dir", here.path.string(), "--", (there.path / "not-executable").string()}, o);
    BOOST_TEST(r.code == 126, r.err);
}

BOOST_AUTO_TEST_CASE(output_is_streamed_while_the_command_runs)
{
    // The first line must reach us long before the command ends.
    const auto start = std::chrono::steady_clock::now();
    std::optional<double> first_at;
    std::string first_chunk;
    cli_options o;
    o.on_output = [&](stream_kind k, std::string_view chunk) {
        if (k == stream_kind::out && !first_at) {
            first_at = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            first_chunk = chunk;
        }
    };
    auto r = run_cli({"--", "sh", "-c", "echo first; sleep 1.5; echo second"}, o);
    BOOST_TEST(r.code == 0);
    BOOST_TEST(r.out == "first\nsecond\n");
    BOOST_TEST_REQUIRE(first_at.has_value());
    BOOST_TEST(first_chunk == "first\n");
    BOOST_TEST(*first_at < 1.2, "first output after " << *first_at << " s");
    BOOST_TEST(r.seconds >= 1.4);
}

BOOST_AUTO_TEST_CASE(stderr_is_streamed_too_and_output_is_not_cut_by_the_caps)
{
    // 200 000 bytes on each stream, caps of 1 KiB: the caps bound what --json keeps, never
    // what is streamed.
    auto r = run_cli({"--stdout-cap", "1K", "--stderr-cap", "1K", "--", "sh", "-c",
                      "head -c 200000 /dev/zero | tr '\\0' o; head -c 200000 /dev/zero | tr '\\0' e >&2"});
    BOOST_TEST(r.code == 0);
    BOOST_TEST(r.out.size() == 200000u);
    BOOST_TEST(r.err.size() == 200000u);
}

BOOST_AUTO_TEST_CASE(json_prints_one_object_with_the_documented_keys)
{
    auto r = run_cli({"--json", "--", "sh", "-c", "echo out; echo err >&2; exit 3"});
    BOOST_TEST(r.code == 3);
    BOOST_TEST(r.err.empty(), r.err);  // nothing streamed
    const auto lines = lines_of(r.out);
    BOOST_TEST_REQUIRE(lines.size() == 1u);
    auto o = parse_object(lines[0]);
    std::vector<std::string> keys;
    for (const auto& kv : o) keys.emplace_back(kv.key());
    const std::vector<std::string> expected{"stdout",           "stderr",           "exit_code", "duration",
                                            "timed_out",        "truncated_stdout", "truncated_stderr",
                                            "success",          "timeout_reason",   "term_signal", "usage",
                                            "oom_killed",       "start_error",      "warm", "driver", "caps"};
    BOOST_TEST(keys == expected, boost::test_tools::per_element());
    BOOST_TEST(o.at("driver").as_string() == "host");
    BOOST_TEST(o.at("caps").at("level").as_string() == "none");
    BOOST_TEST(o.at("caps").at("memory_enforced").as_bool() == false);
    BOOST_TEST(o.at("stdout").as_string() == "out\n");
    BOOST_TEST(o.at("stderr").as_string() == "err\n");
    BOOST_TEST(o.at("exit_code").to_number<int>() == 3);
    BOOST_TEST(o.at("success").as_bool() == false);
    BOOST_TEST(o.at("timeout_reason").is_null());
    BOOST_TEST(o.at("duration").to_number<double>() > 0);
    const auto& usage = o.at("usage").as_object();
    for (const char* k : {"user_cpu_seconds", "system_cpu_seconds", "max_rss_bytes"}) BOOST_TEST(usage.contains(k));

    auto ok = run_cli({"--json", "--", "echo", "fine"});
    BOOST_TEST(ok.code == 0);
    BOOST_TEST(parse_object(ok.out).at("success").as_bool());
}

BOOST_AUTO_TEST_CASE(json_reports_timeouts_and_truncation)
{
    auto r = run_cli({"--json", "--timeout", "0.3", "--", "sh", "-c", "echo partial; sleep 10"});
    BOOST_TEST(r.code == 124);
    auto o = parse_object(r.out);
    BOOST_TEST(o.at("timed_out").as_bool());
    BOOST_TEST(o.at("timeout_reason").as_string() == "wall");
    BOOST_TEST(o.at("exit_code").to_number<int>() == 124);
    BOOST_TEST(o.at("stdout").as_string() == "partial\n");

    auto t = run_cli({"--json", "--stdout-cap", "1024", "--", "sh", "-c", "seq 1 10000"});
    BOOST_TEST(t.code == 0);
    auto to = parse_object(t.out);
    BOOST_TEST(to.at("truncated_stdout").as_bool());
    BOOST_TEST(to.at("stdout").as_string().size() == 1024u);
    BOOST_TEST(std::string(to.at("stdout").as_string()).ends_with("9999\n10000\n"));
    BOOST_TEST(to.at("truncated_stderr").as_bool() == false);

    auto e = run_cli({"--json", "--stderr-cap", "1K", "--", "sh", "-c", "seq 1 10000 >&2"});
    BOOST_TEST(parse_object(e.out).at("truncated_stderr").as_bool());
}

BOOST_AUTO_TEST_CASE(json_stays_valid_whatever_bytes_the_command_writes)
{
    // Not UTF-8 (a lone 0xFF, a cut 3-byte sequence): replaced by U+FFFD in the JSON, so that
    // any strict parser reads it; valid text, also multi-byte, passes unchanged.
    auto r = run_cli({"--json", "--", "printf", "a\\377b \\342\\202 \\303\\251t\\303\\251"});
    BOOST_TEST(r.code == 0, r.err);
    auto o = parse_object(r.out);  // Boost.JSON rejects invalid UTF-8
    BOOST_TEST(std::string(o.at("stdout").as_string()) == "a\xEF\xBF\xBD" "b \xEF\xBF\xBD\xEF\xBF\xBD \xC3\xA9t\xC3\xA9");
    // Streaming passes the bytes unchanged.
    auto raw = run_cli({"--", "printf", "a\\377b"});
    BOOST_TEST(raw.out == "a\xFF" "b");
}

BOOST_AUTO_TEST_CASE(stdin_is_passed_through_unless_no_stdin)
{
    auto r = run_cli({"--", "sh", "-c", "tr a-z A-Z"}, std::string("hello\nworld\n"));
    BOOST_TEST(r.code == 0);
    BOOST_TEST(r.out == "HELLO\nWORLD\n");

    // Binary data passes unchanged.
    std::string binary;
    for (int i = 0; i < 70000; ++i) binary += static_cast<char>(i % 256);
    auto b = run_cli({"--", "cat"}, binary);
    BOOST_TEST(b.out.size() == binary.size());
    BOOST_TEST((b.out == binary));

    auto n = run_cli({"--no-stdin", "--", "sh", "-c", "wc -c"}, std::string("ignored"));
    BOOST_TEST(n.code == 0);
    BOOST_TEST(n.out.find('0') != std::string::npos);
    BOOST_TEST(n.out.find('7') == std::string::npos);

    // The command sees EOF when there is no input at all.
    auto e = run_cli({"--timeout", "5", "--", "cat"});
    BOOST_TEST(e.code == 0);
    BOOST_TEST(e.out.empty());
}

BOOST_AUTO_TEST_CASE(stdin_streams_as_it_comes_and_the_timeout_runs_from_the_start)
{
    temp_dir dir;
    // A writer that says one line and then stays: the command reads the line and ends, and
    // so does the tool, long before the writer would close.
    const auto script = "mkfifo f; (echo first; sleep 6) > f & w=$!; s=$(date +%s%N); " + tool() +
                        " -- head -1 < f; echo status=$?; e=$(date +%s%N); echo ms=$(( (e - s) / 1000000 )); kill $w";
    cli_options o;
    o.cwd = dir.path;
    auto r = run_cli({"sh", "-c", script}, o);
    const auto lines = lines_of(r.out);
    BOOST_TEST_REQUIRE(lines.size() == 3u, r.out << r.err);
    BOOST_TEST(lines[0] == "first");
    BOOST_TEST(lines[1] == "status=0");
    BOOST_TEST(std::stoi(lines[2].substr(3)) < 4000, lines[2]);

    // The timeout counts from the start, not from the end of the input.
    const auto timed = "mkfifo g; (sleep 6; echo late) > g & w=$!; " + tool() +
                       " --timeout 0.5 -- cat < g; echo status=$?; kill $w";
    r = run_cli({"sh", "-c", timed}, o);
    BOOST_TEST(r.out == "status=124\n", r.out << r.err);
    BOOST_TEST(r.err.find("timed out after 0.5 s (wall; --timeout)") != std::string::npos, r.err);

    // An endless writer: memory stays bounded, the command ends, the tool too.
    r = run_cli({"sh", "-c", "yes | " + tool() + " -- head -c 5; echo; echo status=$?"});
    BOOST_TEST(r.out == "y\ny\ny\nstatus=0\n", r.out << r.err);
}

BOOST_AUTO_TEST_CASE(dry_run_prints_what_would_start_and_starts_nothing)
{
    temp_dir dir;
    const auto marker = dir.path / "ran";
    auto r = run_cli({"--dry-run", "-e", "GREETING=hi there", "--", "sh", "-c", "touch " + marker.string()});
    BOOST_TEST(r.code == 0, r.err);
    BOOST_TEST(!std::filesystem::exists(marker));
    BOOST_TEST(r.out.find("the host driver would start this (nothing was started)") != std::string::npos, r.out);
    BOOST_TEST(r.out.find("env:  'GREETING=hi there'\n") != std::string::npos, r.out);
    BOOST_TEST(r.out.find("argv: sh -c 'touch " + marker.string() + "'\n") != std::string::npos, r.out);

    r = run_cli({"--dry-run", "--json", "--", "echo", "a b"});
    BOOST_TEST(r.code == 0, r.err);
    auto o = parse_object(lines_of(r.out).at(0));
    BOOST_TEST(o.at("driver").as_string() == "host");
    BOOST_TEST(json::serialize(o.at("argv")) == R"(["echo","a b"])");
    BOOST_TEST(o.at("env").is_array());
    BOOST_TEST(o.at("cwd").is_string());

    // A batch prints what each job starts with -v; --dry-run is for one command.
    r = run_cli({"--dry-run", "--batch", "-"}, std::string("{\"argv\":[\"true\"]}\n"));
    BOOST_TEST(r.code == 2);
}

BOOST_AUTO_TEST_CASE(verbose_prints_what_starts_before_it_runs)
{
    auto r = run_cli({"-v", "--", "echo", "a b"});
    BOOST_TEST(r.code == 0);
    BOOST_TEST(r.out == "a b\n");
    BOOST_TEST(r.err.find("sandbox-run: starting (host driver, in ") != std::string::npos, r.err);
    BOOST_TEST(r.err.find("): echo 'a b'\n") != std::string::npos, r.err);
    r = run_cli({"-v", "--batch", "-"}, std::string("{\"argv\":[\"echo\",\"x y\"]}\n"));
    BOOST_TEST(r.code == 0);
    BOOST_TEST(r.err.find("sandbox-run: line 1: starting: echo 'x y'\n") != std::string::npos, r.err);
}

BOOST_AUTO_TEST_CASE(env_flags_set_the_commands_environment)
{
    cli_options o;
    o.env = {{"CLI_TEST_PARENT", "from-parent"}};
    // Default: only what --env says.
    auto r = run_cli({"--env", "ONE=1", "-e", "TWO=2=two", "--", "sh", "-c", "echo \"$ONE|$TWO|$CLI_TEST_PARENT\""}, o);
    BOOST_TEST(r.out == "1|2=two|\n");
    // --inherit-env starts from our environment.
    r = run_cli({"--inherit-env", "--env", "ONE=1", "--", "sh", "-c", "echo \"$ONE|$CLI_TEST_PARENT\""}, o);
    BOOST_TEST(r.out == "1|from-parent\n");
    // NAME alone copies one variable.
    r = run_cli({"--env", "CLI_TEST_PARENT", "--", "sh", "-c", "echo \"$CLI_TEST_PARENT\""}, o);
    BOOST_TEST(r.out == "from-parent\n");
    // A blocked name is refused, naming the pattern, rather than silently dropped.
    r = run_cli({"--env", "LD_PRELOAD=/x.so", "--", "sh", "-c", "echo \"[$LD_PRELOAD]\""});
    BOOST_TEST(r.code == 2);
    BOOST_TEST(r.out.empty());
    BOOST_TEST(r.err.find("--env LD_PRELOAD: blocked by the pattern 'LD_PRELOAD'") != std::string::npos, r.err);
    r = run_cli({"-e", "pythonpath=/x", "--", "true"});
    BOOST_TEST(r.code == 2);
    BOOST_TEST(r.err.find("'PYTHON*'") != std::string::npos, r.err);
    // A policy file's blocked name is refused the same way, naming the file.
    {
        temp_dir dir;
        const auto policy = dir.path / "policy.json";
        std::ofstream(policy) << R"({"env": {"OK": "1", "PYTHONPATH": "/x"}})";
        r = run_cli({"--policy", policy.string(), "--", "true"});
        BOOST_TEST(r.code == 2);
        BOOST_TEST(r.err.find("--policy " + policy.string() + ": env PYTHONPATH: blocked by the pattern 'PYTHON*'") !=
                       std::string::npos,
                   r.err);
    }
    // In this program's own environment they are removed, as the library always does.
    o.env = {{"PYTHONPATH", "/x"}};
    r = run_cli({"--inherit-env", "--", "sh", "-c", "echo \"[$PYTHONPATH]\""}, o);
    BOOST_TEST(r.out == "[]\n");
}

BOOST_AUTO_TEST_CASE(a_blocked_name_passes_on_purpose_with_unblock_env)
{
    // From --env, in either order, and from this environment with --inherit-env.
    auto r = run_cli({"-e", "PYTHONUNBUFFERED=1", "--unblock-env", "PYTHONUNBUFFERED", "--", "sh", "-c",
                      "echo \"[$PYTHONUNBUFFERED]\""});
    BOOST_TEST(r.code == 0, r.err);
    BOOST_TEST(r.out == "[1]\n");
    r = run_cli({"--unblock-env", "PYTHONUNBUFFERED", "-e", "PYTHONUNBUFFERED=2", "--", "sh", "-c",
                 "echo \"[$PYTHONUNBUFFERED]\""});
    BOOST_TEST(r.out == "[2]\n");
    cli_options o;
    o.env = {{"PYTHONUNBUFFERED", "3"}, {"PYTHONPATH", "/x"}};
    r = run_cli({"--inherit-env", "--unblock-env", "PYTHONUNBUFFERED", "--", "sh", "-c",
                 "echo \"[$PYTHONUNBUFFERED|$PYTHONPATH]\""}, o);
    BOOST_TEST(r.out == "[3|]\n");  // only the name unblocked, not its pattern
    // The refusal says how to pass it on purpose.
    r = run_cli({"-e", "PYTHONUNBUFFERED=1", "--", "true"});
    BOOST_TEST(r.code == 2);
    BOOST_TEST(r.err.find("--unblock-env PYTHONUNBUFFERED passes it on purpose") != std::string::npos, r.err);
    // A policy file may unblock it too, and the policy shows it.
    temp_dir dir;
    const auto policy = dir.path / "policy.json";
    std::ofstream(policy) << R"({"env": {"PYTHONUNBUFFERED": "4"}, "env_unblocked": ["PYTHONUNBUFFERED"]})";
    r = run_cli({"--policy", policy.string(), "--", "sh", "-c", "echo \"[$PYTHONUNBUFFERED]\""});
    BOOST_TEST(r.out == "[4]\n", r.err);
    r = run_cli({"--policy", policy.string(), "--show-policy"});
    BOOST_TEST(json::parse(r.out).at("env_unblocked").as_array().size() == 1u, r.out);
    // A name no pattern blocks, or a NAME=VALUE, is bad usage.
    BOOST_TEST(run_cli({"--unblock-env", "HOME", "--", "true"}).code == 2);
    BOOST_TEST(run_cli({"--unblock-env", "PYTHONPATH=/x", "--", "true"}).code == 2);
}

BOOST_AUTO_TEST_CASE(base_dir_is_the_working_directory_on_host)
{
    temp_dir dir;
    auto r = run_cli({"--base-dir", dir.path.string(), "--", "pwd"});
    BOOST_TEST(r.code == 0);
    BOOST_TEST(r.out == dir.path.string() + "\n");
}

BOOST_AUTO_TEST_CASE(path_memory_network_and_image_flags_are_accepted_by_host)
{
    // The host driver does not enforce these (see caps()); it must still run the command.
    temp_dir dir;
    auto r = run_cli({"--memory", "64M", "--network", "--ro", dir.path.string(), "--rw", dir.path.string(),
                      "--image", "busybox:latest", "--", "echo", "ran"});
    BOOST_TEST(r.code == 0, r.err);
    BOOST_TEST(r.out == "ran\n");
    BOOST_TEST(run_cli({"--no-network", "--driver", "host", "--", "true"}).code == 0);
}

BOOST_AUTO_TEST_CASE(a_path_that_cannot_be_seen_at_its_place_is_refused_by_name)
{
    // As bwrap --bind does: an error before anything starts, never a surprise in the sandbox.
    temp_dir dir;
    const auto missing = (dir.path / "missing").string();
    for (const char* flag : {"--ro", "--rw"}) {
        const auto r = run_cli({flag, missing, "--", "echo", "ran"});
        BOOST_TEST(r.code == 2);
        BOOST_TEST(r.out.empty());
        BOOST_TEST(r.err.find(std::string(flag) + " " + missing + ": does not exist") != std::string::npos, r.err);
    }
    std::filesystem::create_directory_symlink(dir.path, dir.path / "link");
    auto r = run_cli({"--ro", (dir.path / "link").string(), "--", "true"});
    BOOST_TEST(r.code == 2);
    BOOST_TEST(r.err.find("symbolic link") != std::string::npos, r.err);
    // The same in a policy file, which names itself and the key.
    const auto policy = dir.path / "policy.json";
    std::ofstream(policy) << R"({"readable_paths": [")" << missing << R"("]})";
    r = run_cli({"--policy", policy.string(), "--", "true"});
    BOOST_TEST(r.code == 2);
    BOOST_TEST(r.err.find("--policy " + policy.string() + ": readable_paths " + missing + ": does not exist") !=
                   std::string::npos,
               r.err);
    // Slurm's paths are the nodes': checked there.
    r = run_cli({"--driver", "slurm", "--dry-run", "--ro", missing, "--", "true"});
    BOOST_TEST(r.code == 0, r.err);
}

BOOST_AUTO_TEST_CASE(a_driver_that_cannot_start_is_one_line_and_exit_125)
{
    // A driver binary that does not exist: the library throws launch_error.
    cli_options o;
    o.env = {{"DOCKER_BIN", "/nonexistent/docker"}, {"FIREJAIL_BIN", "/nonexistent/firejail"}};
    for (const std::string d : {"docker", "firejail"}) {
        auto r = run_cli({"--driver", d, "--", "true"}, o);
        BOOST_TEST(r.code == 125, d << ": " << r.err);
        BOOST_TEST(r.out.empty());
        const auto lines = lines_of(r.err);
        BOOST_TEST_REQUIRE(!lines.empty());
        BOOST_TEST(lines.back().starts_with("sandbox-run: Failed to start " + d), lines.back());
    }
}

BOOST_AUTO_TEST_CASE(a_missing_command_streams_one_failed_to_start_line_on_every_driver)
{
    // Streamed, each launcher's own report ("bwrap: execvp ...", "[FATAL tini (7)] ...",
    // "sandbox: cannot execute ...") is held back and replaced by the one line --json has.
    const std::string missing = "no-such-command-" + unique_seconds(3);
    for (const auto d : every_driver) {
        BOOST_TEST_CONTEXT(to_string(d))
        {
            if (!driver_ready(d)) continue;
            std::vector<std::string> args{"--driver", std::string(to_string(d)), "--timeout", "60"};
            if (is_container(d)) args.insert(args.end(), {"--image", test_image()});
            args.insert(args.end(), {"--", missing});
            const auto r = run_cli(args);
            BOOST_TEST(r.code == 127, r.err);
            BOOST_TEST(r.out.empty(), r.out);
            BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1, r.err);
            BOOST_TEST(r.err.starts_with("Failed to start "), r.err);
            BOOST_TEST(r.err.ends_with(": " + missing + ": No such file or directory\n"), r.err);
        }
    }
    // An image that is not there: our line only, with the engine's words inside it.
    for (const auto d : container_drivers) {
        BOOST_TEST_CONTEXT(to_string(d))
        {
            if (!driver_ready(d)) continue;
            const auto r = run_cli({"--driver", std::string(to_string(d)), "--image", "sandbox-test/none:missing", "--", "true"});
            BOOST_TEST(r.code == 125, r.err);
            BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1, r.err);
            BOOST_TEST(r.err.starts_with("sandbox-run: Failed to start " + std::string(to_string(d)) + ": image "), r.err);
        }
    }
    // A command's own stderr that looks like a report is streamed whole and in order.
    if (driver_ready(driver::bubblewrap)) {
        const auto r = run_cli({"--driver", "bubblewrap", "--", "sh", "-c",
                                "echo 'bwrap: not bwrap' >&2; sleep 0.2; echo out; echo 'sandbox: nor us' >&2"});
        BOOST_TEST(r.code == 0, r.err);
        BOOST_TEST(r.out == "out\n");
        BOOST_TEST(r.err == "bwrap: not bwrap\nsandbox: nor us\n");
    }
}

BOOST_AUTO_TEST_CASE(sigterm_and_sigint_stop_the_command_and_exit_128_plus_signal)
{
    for (int sig : {SIGTERM, SIGINT}) {
        const auto marker = unique_seconds(31);
        bool sent = false;
        auto r = run_cli_and_signal({"--timeout", "60", "--", "sh", "-c", "sleep $0 & sleep $0", marker},
                                    [&] { return processes_matching("sleep " + marker).size() == 2; }, sig, &sent);
        BOOST_TEST_REQUIRE(sent);
        BOOST_TEST(r.code == 128 + sig, "signal " << sig << ": " << r.err);
        BOOST_TEST(r.seconds < 10.0);
        BOOST_TEST(r.err.find("stopped the command") != std::string::npos, r.err);
        BOOST_TEST(eventually([&] { return processes_matching("sleep " + marker).empty(); }, 5s),
                   "the command's processes were left running");
    }
}

BOOST_AUTO_TEST_CASE(a_closed_stdout_stops_the_command)
{
    // `sandbox-run -- yes | head -1`: when the reader goes away, the command is stopped and
    // the tool ends as if by SIGPIPE.
    auto r = run_cli({"sh", "-c", tool() + " --timeout 30 -- yes | head -n 1; echo \"status=${?}\""});
    BOOST_TEST(r.code == 0);
    BOOST_TEST(r.out == "y\nstatus=0\n");
    BOOST_TEST(r.seconds < 20.0);
    auto s = run_cli({"bash", "-c", tool() + " --timeout 30 -- yes | head -n 1 >/dev/null; echo ${PIPESTATUS[0]}"});
    BOOST_TEST(s.out == "141\n");
}

BOOST_AUTO_TEST_SUITE_END()
