// SPDX-License-Identifier: BSL-1.0
// Options as a user types them: --help, --version, every flag's spelling, the --policy file
// (a byte order mark, where bad JSON is) and flags over it, and bad input (one line naming
// the flag, exit status 2).
#include "cli_support.hpp"

#include <sandbox/version.hpp>

#include <boost/json/parse.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

using namespace sandbox;
using namespace sandbox::test;
namespace json = boost::json;
namespace bdata = boost::unit_test::data;

namespace {

json::object show_policy(std::vector<std::string> args, cli_options o = {})
{
    args.insert(args.begin(), "--show-policy");
    auto r = run_cli(std::move(args), std::move(o));
    BOOST_TEST_REQUIRE(r.code == 0, "stderr: " << r.err);
    auto v = json::parse(r.out);
    BOOST_TEST_REQUIRE(v.is_object());
    return v.as_object();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cli_usage)

BOOST_AUTO_TEST_CASE(help_documents_every_flag_and_the_exit_codes)
{
    for (const char* h : {"--help", "-h"}) {
        auto r = run_cli({h});
        BOOST_TEST(r.code == 0);
        BOOST_TEST(r.err.empty());
        for (const char* flag :
             {"--driver", "--image", "--timeout", "--idle-timeout", "--memory", "--network", "--no-network", "--env",
              "--inherit-env", "--ro", "--rw", "--base-dir", "--stdout-cap", "--stderr-cap", "--policy", "--json",
              "--no-stdin", "--batch", "--jobs", "-j", "--output", "--progress", "--no-progress", "--max-line",
              "--show-policy", "--version", "host", "docker", "podman", "firejail", "bubblewrap", "124", "125", "126", "127", "128+N",
              "130", "Usage:"})
            BOOST_TEST(r.out.find(flag) != std::string::npos, "--help does not mention " << flag);
    }
    // Help wins over the rest of the line, but not over the command's own arguments.
    BOOST_TEST(run_cli({"--timeout", "3", "--help"}).code == 0);
    auto r = run_cli({"--", "sh", "-c", "echo $1", "x", "--help"});
    BOOST_TEST(r.code == 0);
    BOOST_TEST(r.out == "--help\n");
}

BOOST_AUTO_TEST_CASE(version_is_one_line)
{
    auto r = run_cli({"--version"});
    BOOST_TEST(r.code == 0);
    BOOST_TEST(r.out.starts_with("sandbox-run "));
    BOOST_TEST(lines_of(r.out).size() == 1u);
}

BOOST_AUTO_TEST_CASE(dash_V_is_version_and_says_the_library_s_version)
{
    BOOST_TEST(sandbox::version() == SANDBOX_VERSION_STRING);
    const auto want = "sandbox-run " + std::string(sandbox::version()) + "\n";
    for (const char* flag : {"-V", "--version"}) {
        auto r = run_cli({flag});
        BOOST_TEST(r.code == 0, flag << ": " << r.err);
        BOOST_TEST(r.out == want, flag);
        BOOST_TEST(r.err.empty());
    }
    BOOST_TEST(run_cli({"--help"}).out.find("-V, --version") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_command_may_follow_the_options_without_a_separator)
{
    auto r = run_cli({"--timeout", "5", "echo", "--json", "-j"});
    BOOST_TEST(r.code == 0, r.err);
    BOOST_TEST(r.out == "--json -j\n");
    r = run_cli({"--", "echo", "--timeout"});
    BOOST_TEST(r.out == "--timeout\n");
}

// Each bad invocation: exit 2, nothing on stdout, exactly one line on stderr that names it.
struct bad_case {
    std::vector<std::string> args;
    std::string names;  // what the line must contain
};

std::ostream& operator<<(std::ostream& os, const bad_case& c)
{
    for (const auto& a : c.args) os << a << ' ';
    return os;
}

const std::vector<bad_case> bad_cases{
    {{"--frobnicate", "--", "true"}, "--frobnicate"},
    {{"-x", "--", "true"}, "-x"},
    {{}, "no command"},
    {{"--timeout"}, "--timeout"},
    {{"--timeout", "abc", "--", "true"}, "--timeout"},
    {{"--timeout", "-1", "--", "true"}, "--timeout"},
    {{"--timeout=5x", "--", "true"}, "--timeout"},
    {{"--idle-timeout", "soon", "--", "true"}, "--idle-timeout"},
    {{"--memory", "12Q", "--", "true"}, "--memory"},
    {{"--memory", "-1", "--", "true"}, "--memory"},
    {{"--memory=", "--", "true"}, "--memory"},
    {{"--stdout-cap", "lots", "--", "true"}, "--stdout-cap"},
    {{"--stderr-cap", "1P", "--", "true"}, "--stderr-cap"},
    {{"--driver", "chroot", "--", "true"}, "--driver"},
    {{"--env", "=x", "--", "true"}, "--env"},
    {{"--env", "", "--", "true"}, "--env"},
    {{"--image", "", "--", "true"}, "--image"},
    {{"--base-dir", "/no/such/dir", "--", "true"}, "--base-dir"},
    {{"--ro", "", "--", "true"}, "--ro"},
    {{"--json=yes", "--", "true"}, "--json"},
    {{"--network=1", "--", "true"}, "--network"},
    {{"--policy", "/no/such/policy.json", "--", "true"}, "--policy"},
    {{"-j", "4", "--", "true"}, "--jobs"},
    {{"--output", "x.jsonl", "--", "true"}, "--output"},
    {{"--batch", "/no/such/jobs.jsonl"}, "--batch"},
    {{"--batch", "/tmp", "-j", "2"}, "--batch"},
    {{"--batch", "-", "-j", "10001"}, "-j"},
    {{"--batch", "-", "-j", "many"}, "-j"},
    {{"--batch", "-", "--jobs=-3x"}, "--jobs"},
    {{"--batch", "-", "--max-line", "0"}, "--max-line"},
    {{"--batch", "-", "--json"}, "--json"},
    {{"--batch", "-", "--", "echo", "hi"}, "--batch"},
    {{"--batch", "-", "--output", "/no/such/dir/out.jsonl"}, "--output"},
};

BOOST_DATA_TEST_CASE(bad_input_is_one_line_naming_it_and_exit_2, bdata::make(bad_cases), c)
{
    auto r = run_cli(c.args);
    BOOST_TEST(r.code == 2);
    BOOST_TEST(r.out.empty());
    const auto lines = lines_of(r.err);
    BOOST_TEST_REQUIRE(lines.size() == 1u, "stderr: " << r.err);
    BOOST_TEST(lines[0].starts_with("sandbox-run: "));
    BOOST_TEST(lines[0].find(c.names) != std::string::npos, lines[0]);
}

BOOST_AUTO_TEST_CASE(bad_policy_files_name_the_file_and_the_key)
{
    temp_dir dir;
    const auto bad_json = dir.path / "broken.json";
    write_text(bad_json, "{\"timeout_seconds\": ");
    auto r = run_cli({"--policy", bad_json.string(), "--", "true"});
    BOOST_TEST(r.code == 2);
    BOOST_TEST_REQUIRE(lines_of(r.err).size() == 1u);
    BOOST_TEST(r.err.find(bad_json.string()) != std::string::npos);
    BOOST_TEST(r.err.find("not valid JSON") != std::string::npos);

    const auto bad_key = dir.path / "key.json";
    write_text(bad_key, R"({"timeout_seconds": 2, "memroy_limit": "1G"})");
    r = run_cli({"--policy", bad_key.string(), "--", "true"});
    BOOST_TEST(r.code == 2);
    BOOST_TEST_REQUIRE(lines_of(r.err).size() == 1u);
    BOOST_TEST(r.err.find("memroy_limit") != std::string::npos, r.err);

    const auto bad_type = dir.path / "type.json";
    write_text(bad_type, R"({"network_enabled": "yes"})");
    r = run_cli({"--policy", bad_type.string(), "--", "true"});
    BOOST_TEST(r.code == 2);
    BOOST_TEST(r.err.find("network_enabled") != std::string::npos, r.err);
}

BOOST_AUTO_TEST_CASE(bad_policy_json_names_the_line_and_the_column)
{
    temp_dir dir;
    const auto file = dir.path / "policy.json";
    // A value missing: the parser stops at the brace on line 4.
    write_text(file, "{\n  \"timeout_seconds\": 2,\n  \"memory_limit\":\n}\n");
    auto r = run_cli({"--policy", file.string(), "--", "true"});
    BOOST_TEST(r.code == 2);
    BOOST_TEST_REQUIRE(lines_of(r.err).size() == 1u, r.err);
    BOOST_TEST(r.err.find("--policy " + file.string() + ": not valid JSON at line 4, column 1 (") != std::string::npos,
               r.err);
    // On the first line, after a byte order mark (not counted).
    write_text(file, "\xEF\xBB\xBF{\"timeout_seconds\": x}");
    r = run_cli({"--policy", file.string(), "--", "true"});
    BOOST_TEST(r.code == 2);
    BOOST_TEST(r.err.find("not valid JSON at line 1, column 21 (") != std::string::npos, r.err);
    // Cut short: where the text ends.
    write_text(file, "{\"timeout_seconds\": 2,\n");
    r = run_cli({"--policy", file.string(), "--", "true"});
    BOOST_TEST(r.err.find("not valid JSON at line 2, column 1 (") != std::string::npos, r.err);
    // Something after the object.
    write_text(file, "{} {}");
    r = run_cli({"--policy", file.string(), "--", "true"});
    BOOST_TEST(r.err.find("not valid JSON at line 1, column 4 (") != std::string::npos, r.err);
}

BOOST_AUTO_TEST_CASE(a_byte_order_mark_before_a_policy_or_the_jobs_is_skipped)
{
    temp_dir dir;
    const std::string bom = "\xEF\xBB\xBF";
    const auto policy = dir.path / "policy.json";
    write_text(policy, bom + R"({"timeout_seconds": 3, "env": {"WHO": "file"}})");
    BOOST_TEST(show_policy({"--policy", policy.string()}).at("timeout_seconds").to_number<double>() == 3.0);

    const auto jobs = dir.path / "jobs.jsonl";
    const std::string text = bom + job({"sh", "-c", "echo $WHO"}, R"("id":"first")") + "\n" + job({"echo", "two"}) + "\n";
    write_text(jobs, text);
    for (const bool from_stdin : {false, true}) {
        auto r = from_stdin ? run_cli({"--policy", policy.string(), "--batch", "-", "-k"}, text)
                            : run_cli({"--policy", policy.string(), "--batch", jobs.string(), "-k", "--progress"});
        BOOST_TEST(r.code == 0, r.err);
        const auto results = json_lines(r.out);
        BOOST_TEST_REQUIRE(results.size() == 2u, r.out);
        BOOST_TEST(results[0].at("id").as_string() == "first");
        BOOST_TEST(results[0].at("line").to_number<int>() == 1);
        BOOST_TEST(results[0].at("stdout").as_string() == "file\n");
        BOOST_TEST(results[1].at("line").to_number<int>() == 2);
        BOOST_TEST(r.err.find(" 2 jobs: 2 succeeded") != std::string::npos, r.err);
    }
    // A byte order mark alone on the first line: a blank line, not a job.
    write_text(jobs, bom + "\n" + job({"true"}) + "\n");
    auto r = run_cli({"--batch", jobs.string()});
    BOOST_TEST(r.code == 0, r.err);
    const auto results = json_lines(r.out);
    BOOST_TEST_REQUIRE(results.size() == 1u, r.out);
    BOOST_TEST(results[0].at("line").to_number<int>() == 2);
}

BOOST_AUTO_TEST_CASE(show_policy_reflects_every_policy_flag)
{
    temp_dir dir;
    // Paths that exist: one that does not is refused (it could not be mounted).
    const auto r1 = (dir.path / "r1").string(), r2 = (dir.path / "r2").string(), w1 = (dir.path / "w1").string();
    for (const auto& d : {r1, r2, w1}) std::filesystem::create_directory(d);
    auto p = show_policy({"--timeout", "2.5", "--idle-timeout", "0.75", "--memory", "1G", "--network", "--env",
                          "A=1", "--env", "B=x=y", "-e", "C=", "--inherit-env", "--ro", r1, "--ro", r2, "--rw", w1,
                          "--base-dir", dir.path.string(), "--stdout-cap", "64K", "--stderr-cap", "2048"});
    BOOST_TEST(p.at("timeout_seconds").to_number<double>() == 2.5);
    BOOST_TEST(p.at("idle_timeout_seconds").to_number<double>() == 0.75);
    BOOST_TEST(p.at("memory_limit").as_string() == "1024M");
    BOOST_TEST(p.at("network_enabled").as_bool() == true);
    BOOST_TEST(p.at("inherit_env").as_bool() == true);
    BOOST_TEST(json::serialize(p.at("env")) == R"({"A":"1","B":"x=y","C":""})");
    BOOST_TEST(json::serialize(p.at("readable_paths")) == json::serialize(json::array{r1.c_str(), r2.c_str()}));
    BOOST_TEST(json::serialize(p.at("writable_paths")) == json::serialize(json::array{w1.c_str()}));
    BOOST_TEST(p.at("base_dir").as_string() == dir.path.string());
    BOOST_TEST(p.at("stdout_limit_bytes").to_number<std::uint64_t>() == 65536u);
    BOOST_TEST(p.at("stderr_limit_bytes").to_number<std::uint64_t>() == 2048u);

    // The defaults, and the spellings that turn things off.
    auto d = show_policy({});
    BOOST_TEST(d.at("timeout_seconds").to_number<double>() == 5.0);
    BOOST_TEST(d.at("idle_timeout_seconds").is_null());
    BOOST_TEST(d.at("memory_limit").as_string() == "128M");
    BOOST_TEST(d.at("network_enabled").as_bool() == false);
    BOOST_TEST(d.at("inherit_env").as_bool() == false);
    auto off = show_policy({"--network", "--no-network", "--inherit-env", "--no-inherit-env", "--idle-timeout", "3",
                            "--idle-timeout", "none"});
    BOOST_TEST(off.at("network_enabled").as_bool() == false);
    BOOST_TEST(off.at("inherit_env").as_bool() == false);
    BOOST_TEST(off.at("idle_timeout_seconds").is_null());
    BOOST_TEST(show_policy({"--idle-timeout", "0"}).at("idle_timeout_seconds").is_null());
    BOOST_TEST(show_policy({"--timeout", "0"}).at("timeout_seconds").is_null());
    BOOST_TEST(show_policy({"--timeout=none"}).at("timeout_seconds").is_null());
}

BOOST_AUTO_TEST_CASE(values_take_either_spelling_and_units)
{
    auto a = show_policy({"--timeout=0.5", "--memory=512m", "--stdout-cap=1M"});
    BOOST_TEST(a.at("timeout_seconds").to_number<double>() == 0.5);
    BOOST_TEST(a.at("memory_limit").as_string() == "512M");
    BOOST_TEST(a.at("stdout_limit_bytes").to_number<std::uint64_t>() == 1048576u);
    BOOST_TEST(show_policy({"--timeout", "250ms"}).at("timeout_seconds").to_number<double>() == 0.25);
    BOOST_TEST(show_policy({"--timeout", "2m"}).at("timeout_seconds").to_number<double>() == 120.0);
    BOOST_TEST(show_policy({"--timeout", "1h"}).at("timeout_seconds").to_number<double>() == 3600.0);
}

BOOST_AUTO_TEST_CASE(env_name_alone_copies_the_value_from_our_environment)
{
    cli_options o;
    o.env = {{"CLI_TEST_FROM_PARENT", "inherited value"}};
    auto p = show_policy({"--env", "CLI_TEST_FROM_PARENT", "--env", "CLI_TEST_NOT_SET"}, o);
    BOOST_TEST(json::serialize(p.at("env")) == R"({"CLI_TEST_FROM_PARENT":"inherited value"})");
}

BOOST_AUTO_TEST_CASE(policy_file_is_loaded_first_and_flags_override_it)
{
    temp_dir dir;
    const auto file = dir.path / "policy.json";
    const auto from_file = (dir.path / "from-file").string(), from_flag = (dir.path / "from-flag").string();
    for (const auto& d : {from_file, from_flag}) std::filesystem::create_directory(d);
    write_text(file, R"({"timeout_seconds": 0.2, "memory_limit": "256M", "env": {"A": "file", "B": "file"},
                         "readable_paths": [")" + from_file + R"("], "network_enabled": true, "inherit_env": false})");
    // Position does not matter: the file is the base either way.
    auto p = show_policy({"--timeout", "3", "--policy", file.string(), "--env", "B=flag", "--ro", from_flag,
                          "--no-network"});
    BOOST_TEST(p.at("timeout_seconds").to_number<double>() == 3.0);
    BOOST_TEST(p.at("memory_limit").as_string() == "256M");  // from the file: no flag
    BOOST_TEST(json::serialize(p.at("env")) == R"({"A":"file","B":"flag"})");
    BOOST_TEST(json::serialize(p.at("readable_paths")) ==
               json::serialize(json::array{from_file.c_str(), from_flag.c_str()}));
    BOOST_TEST(p.at("network_enabled").as_bool() == false);

    // And for real: the file's 0.2 s would kill `sleep 0.6`, the flag's 5 s does not.
    auto killed = run_cli({"--policy", file.string(), "--", "sleep", "0.6"});
    BOOST_TEST(killed.code == 124);
    auto ok = run_cli({"--policy", file.string(), "--timeout", "5", "--", "sh", "-c", "sleep 0.6; echo $A$B"});
    BOOST_TEST(ok.code == 0, ok.err);
    BOOST_TEST(ok.out == "filefile\n");
}

BOOST_AUTO_TEST_SUITE_END()
