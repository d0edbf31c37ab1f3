// SPDX-License-Identifier: BSL-1.0
// The JSON Schemas shipped in share/sandbox, checked against what sandbox-run really reads
// and writes: every kind of result line, the --json object, and good and bad job lines.
#include "cli_support.hpp"

#include <boost/test/unit_test.hpp>

using namespace sandbox;
using namespace sandbox::test;

namespace {

std::string schema(const char* name) { return std::string(build::source_dir()) + "/share/sandbox/" + name; }

// Runs the validator over the lines in `file`; an empty string when they are as `expect` says.
std::string validate(const std::string& schema_file, const std::filesystem::path& file, const char* expect = "valid")
{
    auto r = run_sync(*make_runner(tool_policy().with_timeout(60s), driver::host),
                      {"python3", std::string(build::source_dir()) + "/test/tools/validate_json.py", schema_file,
                       file.string(), expect});
    if (r.exit_code == 3) {
        if (running_in_ci()) BOOST_FAIL(r.out << "and CI=true forbids skipping");
        BOOST_TEST_MESSAGE("SKIPPED: " << r.out);
        return {};
    }
    return r.exit_code == 0 ? std::string() : r.out + r.err;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cli_schema)

BOOST_AUTO_TEST_CASE(every_kind_of_result_line_matches_the_result_schema)
{
    temp_dir dir;
    const auto jobs = dir.path / "jobs.jsonl";
    write_text(jobs, std::string(R"({"id":"ok","argv":["echo","hi"]})") + "\n" +
                         R"({"id":7,"argv":["sh","-c","echo err >&2; exit 3"]})" + "\n" +
                         R"({"id":["a",1],"argv":["sleep","5"],"policy":{"timeout_seconds":0.2}})" + "\n" +
                         R"({"argv":["sh","-c","kill -9 $$"]})" + "\n" +
                         R"({"argv":["/no/such/command"]})" + "\n" +
                         R"({"argv":["sh","-c","exit 1"]})" + "\n" +
                         R"({"argv":["printf","\\377"],"stdin":"x","driver":"host"})" + "\n" +
                         "{not json\n" + R"({"argv":[]})" + "\n" + R"({"argv":["true"],"cwd":"x"})" + "\n");
    const auto results = dir.path / "results.jsonl";
    auto r = run_cli({"--batch", jobs.string(), "-o", results.string(), "--retries", "1"});
    BOOST_TEST(r.code == 1, r.err);
    BOOST_TEST(validate(schema("result.schema.json"), results) == "");

    // The --json object of one command, a start failure included.
    for (std::vector<std::string> args : {std::vector<std::string>{"--json", "--", "echo", "x"},
                                          std::vector<std::string>{"--json", "--", "/no/such/command"},
                                          std::vector<std::string>{"--json", "--timeout", "0.2", "--", "sleep", "5"}}) {
        auto one = run_cli(args);
        const auto out = dir.path / "one.json";
        write_text(out, one.out);
        BOOST_TEST(validate(schema("result.schema.json"), out) == "", one.out);
    }
}

BOOST_AUTO_TEST_CASE(the_job_schema_accepts_what_runs_and_rejects_what_does_not)
{
    temp_dir dir;
    const auto good = dir.path / "good.jsonl";
    write_text(good, std::string(R"({"argv":["true"]})") + "\n" +
                         R"({"id":"a","argv":["cat"],"stdin":"x","driver":"docker","image":"alpine:3",)" +
                         R"("policy":{"timeout_seconds":2,"idle_timeout_seconds":null,"memory_limit":"64M",)" +
                         R"("disk_limit":null,"readable_paths":["/etc"],"writable_paths":[],"env":{"A":"1"},)" +
                         R"("inherit_env":false,"network_enabled":false,"stdout_limit_bytes":4096,)" +
                         R"("stderr_limit_bytes":4096,"env_allowlist":["PATH"],"base_dir":"/tmp"}})" + "\n");
    BOOST_TEST(validate(schema("job.schema.json"), good) == "");
    const auto bad = dir.path / "bad.jsonl";
    write_text(bad, std::string(R"({"argv":[]})") + "\n" + R"({"argv":[""]})" + "\n" + R"({"argv":["x"],"cwd":"y"})" +
                        "\n" + R"({"argv":["x"],"driver":"vm"})" + "\n" + R"({"argv":["x"],"policy":{"timeout":1}})" +
                        "\n" + R"({"argv":["x"],"image":""})" + "\n" + R"({"id":1})" + "\n" + R"(["x"])" + "\n");
    BOOST_TEST(validate(schema("job.schema.json"), bad, "invalid") == "");
    // ...and the tool refuses each of them too.
    auto r = run_cli({"--batch", bad.string()});
    const auto lines = lines_of(r.out);
    BOOST_TEST(lines.size() == 8u);
    for (const auto& l : lines) BOOST_TEST(l.find("\"error\":") != std::string::npos, l);
}

BOOST_AUTO_TEST_SUITE_END()
