// SPDX-License-Identifier: BSL-1.0
// Batch mode: result lines, malformed lines, per-job stdin and policy, -j, --output, the
// progress line, the summary, Ctrl-C, and thousands of jobs in bounded memory.
#include "cli_support.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/test/unit_test.hpp>

#include <cctype>
#include <set>
#include <thread>

using namespace sandbox;
using namespace sandbox::test;
namespace json = boost::json;

namespace {

struct batch_fixture {
    temp_dir dir;
    std::filesystem::path jobs = dir.path / "jobs.jsonl";

    void write_jobs(const std::vector<std::string>& lines)
    {
        std::string text;
        for (const auto& l : lines) text += l + "\n";
        write_text(jobs, text);
    }

    cli_result batch(std::vector<std::string> extra = {})
    {
        std::vector<std::string> args{"--batch", jobs.string()};
        args.insert(args.end(), extra.begin(), extra.end());
        return run_cli(std::move(args));
    }
};

// The number written just before `label` in `s` ("12 succeeded", "3+ not run").
std::string number_before(const std::string& s, const std::string& label)
{
    const auto pos = s.find(label);
    BOOST_TEST_REQUIRE(pos != std::string::npos, "no '" << label << "' in: " << s);
    auto end = pos;
    if (end > 0 && s[end - 1] == '+') --end;
    auto start = end;
    while (start > 0 && (std::isdigit(static_cast<unsigned char>(s[start - 1])) || s[start - 1] == '.')) --start;
    BOOST_TEST_REQUIRE(start < end, "no number before '" << label << "' in: " << s);
    return s.substr(start, end - start);
}

/// The summary line: the last one on stderr, or the one before the line that says how to
/// resume after a stop.
std::string summary_line(const std::string& err)
{
    auto lines = lines_of(err);
    if (!lines.empty() && lines.back().find(": to resume") != std::string::npos) lines.pop_back();
    BOOST_TEST_REQUIRE(!lines.empty());
    return lines.back();
}

/// The one summary line on stderr, parsed: "N jobs: a succeeded, b failed, ...", by the
/// labels' singular ("error" counts "1 error" and "2 errors").
std::map<std::string, std::uint64_t> summary_of(const std::string& err)
{
    std::map<std::string, std::uint64_t> m;
    const auto s = summary_line(err);
    BOOST_TEST_REQUIRE(s.starts_with("sandbox-run: "), s);
    m["jobs"] = std::stoull(number_before(s, " job"));  // "1 job:", "2 jobs:"
    for (const char* label : {"succeeded", "failed", "timed out", "error", "cancelled", "not run"})
        m[label] = std::stoull(number_before(s, std::string(" ") + label));
    BOOST_TEST(s.find("jobs/s") != std::string::npos, s);
    return m;
}

/// The wall time in the summary line.
double summary_seconds(const std::string& err) { return std::stod(number_before(summary_line(err), " s, ")); }

std::string str(const json::value& v) { return std::string(v.as_string()); }

}  // namespace

BOOST_FIXTURE_TEST_SUITE(cli_batch, batch_fixture)

BOOST_AUTO_TEST_CASE(on_one_terminal_the_progress_line_is_cleared_before_each_result)
{
    std::vector<std::string> lines;
    for (int i = 0; i < 40; ++i) lines.push_back(job({"sh", "-c", "sleep 0.0" + std::to_string(i % 10) + "; echo " + std::to_string(i)}));
    write_jobs(lines);
    // script(1) gives the tool a terminal for stdout and stderr both.
    auto r = run_cli({"script", "-qec", tool() + " --batch " + jobs.string() + " -j4 --progress", "/dev/null"});
    BOOST_TEST(r.code == 0, r.out << r.err);
    BOOST_TEST(r.out.find("running, ") != std::string::npos, "no progress line shown");
    BOOST_TEST(r.out.find(" succeeded, 0 failed, 0 timed out") != std::string::npos, r.out);
    int results = 0;
    for (auto line : lines_of(r.out)) {
        if (line.ends_with('\r')) line.pop_back();  // the terminal's newline is "\r\n"
        // What the terminal shows of the line: after the last carriage return, less the erasures.
        auto shown = line.substr(line.rfind('\r') == std::string::npos ? 0 : line.rfind('\r') + 1);
        for (auto pos = shown.find("\033[K"); pos != std::string::npos; pos = shown.find("\033[K"))
            shown.erase(pos, 3);
        if (shown.starts_with("{\"id\"")) ++results;
        else BOOST_TEST((shown.empty() || shown.starts_with("sandbox-run: ")), "a line mixes progress and results: " << line);
    }
    BOOST_TEST(results == 40);
}

BOOST_AUTO_TEST_CASE(each_job_gives_one_result_line_with_its_id_and_line)
{
    write_jobs({job({"echo", "one"}, R"("id":"first")"), job({"sh", "-c", "echo two >&2"}, R"("id":2)"),
                job({"printf", "three"})});
    auto r = batch();
    BOOST_TEST(r.code == 0, r.err);
    auto results = by_line(json_lines(r.out));
    BOOST_TEST_REQUIRE(results.size() == 3u);
    BOOST_TEST(results[1].at("id") == json::value("first"));
    BOOST_TEST(str(results[1].at("stdout")) == "one\n");
    BOOST_TEST(results[2].at("id") == json::value(2));
    BOOST_TEST(str(results[2].at("stderr")) == "two\n");
    BOOST_TEST(results[3].at("id").to_number<int>() == 3);  // no id: the line number
    BOOST_TEST(str(results[3].at("stdout")) == "three");
    for (auto& [line, o] : results) {
        // id, line, attempts and times first, then the keys of exec_result's JSON, in order.
        std::vector<std::string> keys;
        for (const auto& kv : o) keys.emplace_back(kv.key());
        const std::vector<std::string> expected{"id",       "line",        "attempts",       "started_at",
                                                "ended_at", "stdout",      "stderr",
                                                "exit_code", "duration",   "timed_out",      "truncated_stdout",
                                                "truncated_stderr", "success", "timeout_reason", "term_signal",
                                                "usage",    "oom_killed", "start_error", "warm"};
        BOOST_TEST(keys == expected, boost::test_tools::per_element());
        BOOST_TEST(o.at("success").as_bool());
    }
    auto s = summary_of(r.err);
    BOOST_TEST(s["jobs"] == 3u);
    BOOST_TEST(s["succeeded"] == 3u);
    BOOST_TEST(s["not run"] == 0u);
}

BOOST_AUTO_TEST_CASE(failures_and_timeouts_are_counted_and_exit_1)
{
    write_jobs({job({"true"}), job({"sh", "-c", "exit 4"}), job({"sleep", "5"}, R"("policy":{"timeout_seconds":0.2})"),
                job({"no-such-command-here"})});
    auto r = batch();
    BOOST_TEST(r.code == 1);
    auto results = by_line(json_lines(r.out));
    BOOST_TEST_REQUIRE(results.size() == 4u);
    BOOST_TEST(results[2].at("exit_code").to_number<int>() == 4);
    BOOST_TEST(results[3].at("timed_out").as_bool());
    BOOST_TEST(results[3].at("exit_code").to_number<int>() == 124);
    BOOST_TEST(results[4].at("exit_code").to_number<int>() == 127);
    auto s = summary_of(r.err);
    BOOST_TEST(s["jobs"] == 4u);
    BOOST_TEST(s["succeeded"] == 1u);
    BOOST_TEST(s["failed"] == 2u);
    BOOST_TEST(s["timed out"] == 1u);
    BOOST_TEST(s["error"] == 0u);
}

BOOST_AUTO_TEST_CASE(malformed_lines_give_error_results_and_the_rest_still_run)
{
    write_jobs({
        job({"echo", "a"}, R"("id":"ok-1")"),  // 1
        "this is not json",                    // 2
        "",                                    // 3: blank, skipped
        "[1, 2, 3]",                           // 4
        R"({"id":"no-argv"})",                 // 5
        R"({"id":"empty","argv":[]})",         // 6
        R"({"id":"types","argv":["echo", 5]})",                       // 7
        R"({"id":"stdin","argv":["cat"],"stdin":42})",                // 8
        R"({"id":"pol","argv":["true"],"policy":{"timeout_secs":1}})",  // 9
        R"({"id":"pol2","argv":["true"],"policy":"fast"})",            // 10
        R"({"id":"key","argv":["true"],"cwd":"/"})",                   // 11
        R"({"argv":["true"]} trailing)",                               // 12
        R"({"id":"cut","argv":["tr)",                                  // 13
        "   \t  ",                                                     // 14: blank
        job({"echo", "b"}, R"("id":"ok-2")"),                           // 15
    });
    auto r = batch({"-j", "3"});
    BOOST_TEST(r.code == 1);
    auto results = by_line(json_lines(r.out));
    BOOST_TEST(results.size() == 13u);
    BOOST_TEST(!results.count(3));
    BOOST_TEST(!results.count(14));
    BOOST_TEST(results[1].at("success").as_bool());
    BOOST_TEST(str(results[15].at("stdout")) == "b\n");
    // A line that cannot be read has no id (null), not its line number, which another job may
    // have as its id.
    const std::map<std::int64_t, std::pair<json::value, std::string>> expected{
        {2, {json::value(nullptr), "invalid JSON"}},
        {4, {json::value(nullptr), "must be a JSON object"}},
        {5, {json::value("no-argv"), "missing key \"argv\""}},
        {6, {json::value("empty"), "argv"}},
        {7, {json::value("types"), "item 1"}},
        {8, {json::value("stdin"), "stdin"}},
        {9, {json::value("pol"), "timeout_secs"}},
        {10, {json::value("pol2"), "policy"}},
        {11, {json::value("key"), "cwd"}},
        {12, {json::value(nullptr), "invalid JSON"}},
        {13, {json::value(nullptr), "invalid JSON"}},
    };
    for (const auto& [line, want] : expected) {
        BOOST_TEST_CONTEXT("line " << line)
        {
            BOOST_TEST_REQUIRE(results.count(line));
            const auto& o = results[line];
            BOOST_TEST(o.size() == 6u);  // id, line, attempts, started_at, ended_at, error
            BOOST_TEST(o.at("attempts").to_number<int>() == 0);
            BOOST_TEST(o.at("id") == want.first);
            BOOST_TEST(str(o.at("error")).find(want.second) != std::string::npos, str(o.at("error")));
        }
    }
    auto s = summary_of(r.err);
    BOOST_TEST(s["jobs"] == 13u);
    BOOST_TEST(s["succeeded"] == 2u);
    BOOST_TEST(s["error"] == 11u);
}

BOOST_AUTO_TEST_CASE(result_lines_stay_valid_json_for_binary_output)
{
    write_jobs({job({"head", "-c", "4096", "/dev/urandom"}), job({"sh", "-c", "head -c 3000 /dev/urandom >&2"})});
    auto r = batch({"--stdout-cap", "1K"});
    BOOST_TEST(r.code == 0, r.err);
    auto results = by_line(json_lines(r.out));  // json_lines parses strictly
    BOOST_TEST_REQUIRE(results.size() == 2u);
    BOOST_TEST(results[1].at("truncated_stdout").as_bool());
}

BOOST_AUTO_TEST_CASE(a_last_line_without_newline_and_crlf_lines_are_jobs)
{
    write_text(jobs, job({"echo", "crlf"}) + "\r\n" + job({"echo", "last"}));
    auto r = batch();
    BOOST_TEST(r.code == 0, r.err);
    auto results = by_line(json_lines(r.out));
    BOOST_TEST_REQUIRE(results.size() == 2u);
    BOOST_TEST(str(results[1].at("stdout")) == "crlf\n");
    BOOST_TEST(str(results[2].at("stdout")) == "last\n");
}

BOOST_AUTO_TEST_CASE(too_long_lines_are_errors_and_the_next_lines_still_run)
{
    write_jobs({job({"echo", std::string(5000, 'x')}), job({"echo", "short"})});
    auto r = batch({"--max-line", "1K"});
    BOOST_TEST(r.code == 1);
    auto results = by_line(json_lines(r.out));
    BOOST_TEST_REQUIRE(results.size() == 2u);
    BOOST_TEST(str(results[1].at("error")).find("--max-line") != std::string::npos);
    BOOST_TEST(str(results[2].at("stdout")) == "short\n");
}

BOOST_AUTO_TEST_CASE(per_job_stdin_and_policy_override_the_command_line)
{
    write_jobs({
        job({"tr", "a-z", "A-Z"}, R"("id":"in","stdin":"shout")"),
        job({"sh", "-c", "echo \"$WHO\""}, R"("id":"env-cli")"),
        job({"sh", "-c", "echo \"$WHO\""}, R"("id":"env-job","policy":{"env":{"WHO":"job"}})"),
        job({"sleep", "1"}, R"("id":"slow-ok")"),
        job({"sleep", "5"}, R"("id":"slow-killed","policy":{"timeout_seconds":0.3})"),
        job({"sh", "-c", "seq 1 5000"}, R"("id":"capped","policy":{"stdout_limit_bytes":1024})"),
    });
    auto r = batch({"--env", "WHO=cli", "--timeout", "10", "-j", "6"});
    BOOST_TEST(r.code == 1);  // the timed-out one
    std::map<std::string, json::object> byid;
    for (auto& o : json_lines(r.out)) byid[str(o.at("id"))] = o;
    BOOST_TEST_REQUIRE(byid.size() == 6u);
    BOOST_TEST(str(byid["in"].at("stdout")) == "SHOUT");
    BOOST_TEST(str(byid["env-cli"].at("stdout")) == "cli\n");
    BOOST_TEST(str(byid["env-job"].at("stdout")) == "job\n");
    BOOST_TEST(byid["slow-ok"].at("success").as_bool());
    BOOST_TEST(byid["slow-killed"].at("timed_out").as_bool());
    BOOST_TEST(byid["capped"].at("truncated_stdout").as_bool());
    BOOST_TEST(byid["capped"].at("stdout").as_string().size() == 1024u);
}

// As with --env and a policy file: a job's blocked variable is that job's error, by name,
// never a silent drop; the other jobs run.
BOOST_AUTO_TEST_CASE(a_jobs_blocked_variable_is_its_error_and_the_rest_run)
{
    write_jobs({job({"sh", "-c", "echo \"[$PYTHONPATH]\""}, R"("id":"blocked","policy":{"env":{"PYTHONPATH":"/x"}})"),
                job({"echo", "ran"}, R"("id":"fine")")});
    auto r = batch({});
    BOOST_TEST(r.code == 1);
    std::map<std::string, json::object> byid;
    for (auto& o : json_lines(r.out)) byid[str(o.at("id"))] = o;
    BOOST_TEST_REQUIRE(byid.size() == 2u);
    BOOST_TEST(str(byid["blocked"].at("error")).find("env PYTHONPATH: blocked by the pattern 'PYTHON*'") !=
               std::string::npos);
    BOOST_TEST(str(byid["fine"].at("stdout")) == "ran\n");
}

// A job may pass a blocked name on purpose; under --lock-policy only what the command line did.
BOOST_AUTO_TEST_CASE(a_job_may_unblock_a_name_unless_the_policy_is_locked)
{
    write_jobs({job({"sh", "-c", "echo \"[$PYTHONUNBUFFERED]\""},
                    R"("id":"own","policy":{"env":{"PYTHONUNBUFFERED":"1"},"env_unblocked":["PYTHONUNBUFFERED"]})")});
    auto r = batch({});
    BOOST_TEST(r.code == 0, r.err);
    auto results = json_lines(r.out);
    BOOST_TEST_REQUIRE(results.size() == 1u);
    BOOST_TEST(str(results[0].at("stdout")) == "[1]\n");
    auto locked = batch({"--lock-policy"});
    BOOST_TEST(locked.code == 1);
    results = json_lines(locked.out);
    BOOST_TEST_REQUIRE(results.size() == 1u);
    BOOST_TEST(str(results[0].at("error")).find("env_unblocked: PYTHONUNBUFFERED") != std::string::npos, locked.out);
    auto allowed = batch({"--lock-policy", "--unblock-env", "PYTHONUNBUFFERED"});
    BOOST_TEST(allowed.code == 0, allowed.out);
}

BOOST_AUTO_TEST_CASE(policy_file_applies_to_every_job)
{
    const auto policy = dir.path / "policy.json";
    write_text(policy, R"({"timeout_seconds": 0.3, "env": {"FROM": "file"}})");
    write_jobs({job({"sh", "-c", "echo $FROM"}), job({"sleep", "3"})});
    auto r = run_cli({"--policy", policy.string(), "--batch", jobs.string()});
    auto results = by_line(json_lines(r.out));
    BOOST_TEST_REQUIRE(results.size() == 2u);
    BOOST_TEST(str(results[1].at("stdout")) == "file\n");
    BOOST_TEST(results[2].at("timed_out").as_bool());
}

BOOST_AUTO_TEST_CASE(output_file_takes_the_results)
{
    write_jobs({job({"echo", "x"}), job({"echo", "y"})});
    const auto out = dir.path / "results.jsonl";
    for (auto flag : {"--output", "-o"}) {
        std::filesystem::remove(out);
        auto r = batch({flag, out.string()});
        BOOST_TEST(r.code == 0, r.err);
        BOOST_TEST(r.out.empty());
        BOOST_TEST(json_lines(read_text(out)).size() == 2u);
    }
    auto r = batch({"--output=" + out.string()});
    BOOST_TEST(json_lines(read_text(out)).size() == 2u);
}

BOOST_AUTO_TEST_CASE(an_output_that_is_the_job_file_is_refused_and_the_jobs_are_kept)
{
    write_jobs({job({"echo", "x"}), job({"echo", "y"})});
    const auto kept = read_text(jobs);
    const auto hard = dir.path / "hard.jsonl";
    const auto soft = dir.path / "soft.jsonl";
    std::filesystem::create_hard_link(jobs, hard);
    std::filesystem::create_symlink(jobs, soft);
    for (const auto& out : {jobs, hard, soft, dir.path / "." / "jobs.jsonl"}) {
        auto r = batch({"-o", out.string()});
        BOOST_TEST(r.code == 2, out << ": " << r.err);
        BOOST_TEST(r.err.find("--output " + out.string() + " is the job file") != std::string::npos, r.err);
        BOOST_TEST(read_text(jobs) == kept);
    }
    // Jobs on stdin, redirected from the same file.
    const auto cmd = "'" + tool() + "' --batch - -o '" + jobs.string() + "' < '" + jobs.string() + "' 2>/dev/null";
    const int status = std::system(cmd.c_str());
    BOOST_TEST((WIFEXITED(status) && WEXITSTATUS(status) == 2), "status " << status);
    BOOST_TEST(read_text(jobs) == kept);
}

BOOST_AUTO_TEST_CASE(old_results_stay_whole_until_the_batch_ends)
{
    const auto marker = unique_seconds(41);
    write_jobs({job({"echo", "done"}), job({"sleep", marker})});
    const auto out = dir.path / "results.jsonl";
    write_text(out, "old\n");
    ::chmod(out.c_str(), 0640);
    bool sent = false;
    auto r = run_cli_and_signal({"--batch", jobs.string(), "-j", "2", "-o", out.string()},
                                [&] { return processes_matching("sleep " + marker).size() == 1; }, SIGKILL, &sent);
    BOOST_TEST_REQUIRE(sent);
    BOOST_TEST(read_text(out) == "old\n");  // killed: the results it had went to a file beside it
    for (int pid : processes_matching("sleep " + marker)) ::kill(pid, SIGKILL);  // the host driver's job outlives it
    // A batch that ends replaces them, keeping the file's mode.
    write_jobs({job({"echo", "new"})});
    auto done = batch({"-o", out.string()});
    BOOST_TEST(done.code == 0, done.err);
    BOOST_TEST(json_lines(read_text(out)).size() == 1u);
    struct stat st {};
    BOOST_TEST(::stat(out.c_str(), &st) == 0);
    BOOST_TEST((st.st_mode & 07777) == 0640u);
}

BOOST_AUTO_TEST_CASE(jobs_read_from_stdin)
{
    cli_options o;
    o.input = job({"echo", "piped"}) + "\n" + job({"true"}) + "\n";
    auto r = run_cli({"--batch", "-", "-j", "2"}, o);
    BOOST_TEST(r.code == 0, r.err << r.out);
    auto results = by_line(json_lines(r.out));
    BOOST_TEST_REQUIRE(results.size() == 2u);
    BOOST_TEST(str(results[1].at("stdout")) == "piped\n");

    // Enough lines for many reads that end mid-line, taken by 8 workers at once.
    std::string many;
    const std::string pad(80, 'p');
    for (int i = 0; i < 1500; ++i) many += job({"true"}, "\"id\":\"" + std::to_string(i) + pad + "\"") + "\n";
    o.input = many;
    r = run_cli({"--batch", "-", "-j", "8"}, o);
    BOOST_TEST(r.code == 0, r.err);
    std::set<std::string> ids;
    for (const auto& res : json_lines(r.out)) {
        BOOST_TEST(!res.contains("error"));
        ids.insert(str(res.at("id")));
    }
    BOOST_TEST(ids.size() == 1500u);
}

BOOST_AUTO_TEST_CASE(results_are_written_as_jobs_finish)
{
    // A fast job after a slow one: its line comes out first, long before the slow one ends.
    write_jobs({job({"sleep", "2"}, R"("id":"slow")"), job({"echo", "quick"}, R"("id":"fast")")});
    const auto start = std::chrono::steady_clock::now();
    std::optional<double> first_at;
    std::string first;
    cli_options o;
    o.on_output = [&](stream_kind k, std::string_view chunk) {
        if (k == stream_kind::out && !first_at) {
            first_at = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            first = chunk;
        }
    };
    auto r = run_cli({"--batch", jobs.string(), "-j", "2"}, o);
    BOOST_TEST(r.code == 0, r.err);
    BOOST_TEST_REQUIRE(first_at.has_value());
    BOOST_TEST(*first_at < 1.5);
    BOOST_TEST(first.find("\"fast\"") != std::string::npos, first);
    BOOST_TEST(r.seconds >= 1.9);
}

BOOST_AUTO_TEST_CASE(concurrency_follows_j)
{
    std::vector<std::string> lines;
    for (int i = 0; i < 8; ++i) lines.push_back(job({"sleep", "0.5"}));
    write_jobs(lines);
    // 8 x 0.5 s: about 1 s with -j4, 0.5 s with -j8, 4 s with -j1 (loose bounds).
    auto j4 = batch({"-j", "4"});
    BOOST_TEST(j4.code == 0);
    BOOST_TEST(j4.seconds >= 0.95);
    BOOST_TEST(j4.seconds < 2.5);
    auto j8 = batch({"-j8"});
    BOOST_TEST(j8.seconds >= 0.45);
    BOOST_TEST(j8.seconds < 3.0);  // well under the 4 s of one at a time, even under ThreadSanitizer
    lines.resize(3);
    write_jobs(lines);
    auto j1 = batch({"--jobs=1"});
    BOOST_TEST(j1.seconds >= 1.45);
    BOOST_TEST(j1.seconds < 4.0);
    BOOST_TEST(json_lines(j1.out).size() == 3u);
}

BOOST_AUTO_TEST_CASE(progress_line_when_asked_and_never_by_default_off_a_terminal)
{
    std::vector<std::string> lines;
    for (int i = 0; i < 6; ++i) lines.push_back(job({"sleep", "0.2"}));
    write_jobs(lines);
    auto quiet = batch({"-j", "2"});
    BOOST_TEST(quiet.err.find('\r') == std::string::npos);
    BOOST_TEST(lines_of(quiet.err).size() == 1u);  // the summary only

    auto shown = batch({"-j", "2", "--progress"});
    BOOST_TEST(shown.code == 0);
    BOOST_TEST(shown.err.find('\r') != std::string::npos);
    BOOST_TEST(shown.err.find("/6") != std::string::npos, shown.err);  // done/total
    BOOST_TEST(shown.err.find("failed") != std::string::npos);
    BOOST_TEST(shown.err.find("jobs/s") != std::string::npos);
    BOOST_TEST(shown.err.find("ETA") != std::string::npos);
    // The summary still ends up on its own line.
    const auto cleared = shown.err.rfind("\r\033[K");  // the progress line is cleared first
    BOOST_TEST_REQUIRE(cleared != std::string::npos);
    BOOST_TEST(shown.err.substr(cleared + 4).starts_with("sandbox-run: "));
    auto s = summary_of(shown.err.substr(cleared + 4));
    BOOST_TEST(s["succeeded"] == 6u);

    auto none = batch({"-j", "2", "--progress", "--no-progress"});
    BOOST_TEST(none.err.find('\r') == std::string::npos);
}

BOOST_AUTO_TEST_CASE(one_job_and_one_error_are_said_in_the_singular)
{
    write_jobs({"{\"argv\": 1}"});
    auto r = batch();
    BOOST_TEST(r.code == 1, r.err);
    const auto s = summary_line(r.err);
    BOOST_TEST(
        s.starts_with("sandbox-run: 1 job: 0 succeeded, 0 failed, 0 timed out, 1 error, 0 cancelled, 0 not run;"), s);
    // The progress line, redrawn while a second job runs after the bad line.
    write_jobs({"{\"argv\": 1}", job({"sleep", "0.6"})});
    r = batch({"-j", "1", "--progress"});
    BOOST_TEST(r.code == 1, r.err);
    BOOST_TEST(r.err.find(", 1 error, ") != std::string::npos, r.err);
    BOOST_TEST(r.err.find("1 errors") == std::string::npos, r.err);
    BOOST_TEST(r.err.find(" 2 jobs: ") != std::string::npos, r.err);
}

BOOST_AUTO_TEST_CASE(progress_line_by_default_on_a_terminal)
{
    // util-linux `script` gives the tool a terminal for stdin, stdout and stderr.
    if (!std::filesystem::exists("/usr/bin/script")) {
        BOOST_TEST_MESSAGE("no /usr/bin/script: skipped");
        return;
    }
    std::vector<std::string> lines;
    for (int i = 0; i < 6; ++i) lines.push_back(job({"sleep", "0.2"}));
    write_jobs(lines);
    const auto out = (dir.path / "out.jsonl").string();
    auto tty = run_cli({"--", "script", "-qec", tool() + " --batch " + jobs.string() + " -j 2 -o " + out, "/dev/null"});
    BOOST_TEST(tty.code == 0, tty.out);
    BOOST_TEST(tty.out.find("\r[") != std::string::npos, tty.out);
    BOOST_TEST(tty.out.find("/6") != std::string::npos);
    auto off = run_cli({"--", "script", "-qec", tool() + " --batch " + jobs.string() + " -j 2 --no-progress -o " + out,
                        "/dev/null"});
    BOOST_TEST(off.code == 0);
    BOOST_TEST(off.out.find("\r[") == std::string::npos, off.out);
    BOOST_TEST(off.out.find("6 succeeded") != std::string::npos, off.out);
}

BOOST_AUTO_TEST_CASE(a_driver_that_cannot_start_fails_each_job_not_the_batch)
{
    write_jobs({job({"true"}), job({"echo", "x"})});
    cli_options o;
    o.env = {{"DOCKER_BIN", "/nonexistent/docker"}};
    auto r = run_cli({"--driver", "docker", "--batch", jobs.string()}, o);
    BOOST_TEST(r.code == 1);
    auto results = by_line(json_lines(r.out));
    BOOST_TEST_REQUIRE(results.size() == 2u);
    for (auto& [line, o2] : results) BOOST_TEST(str(o2.at("error")).starts_with("Failed to start docker"));
    BOOST_TEST(summary_of(r.err)["error"] == 2u);
}

BOOST_AUTO_TEST_CASE(sigint_cancels_running_jobs_and_reports_what_was_not_run)
{
    const auto marker = unique_seconds(37);
    std::vector<std::string> lines;
    for (int i = 1; i <= 20; ++i) lines.push_back(job({"sleep", marker}, "\"id\":\"job-" + std::to_string(i) + "\""));
    write_jobs(lines);
    const auto out = dir.path / "results.jsonl";
    bool sent = false;
    auto r = run_cli_and_signal({"--batch", jobs.string(), "-j", "4", "-o", out.string()},
                                [&] { return processes_matching("sleep " + marker).size() == 4; }, SIGINT, &sent);
    BOOST_TEST_REQUIRE(sent);
    BOOST_TEST(r.code == 130, r.err);
    BOOST_TEST(r.seconds < 15.0);
    // Every line written is valid JSON; the four running jobs say they were cancelled.
    auto results = json_lines(read_text(out));
    BOOST_TEST(results.size() == 4u);
    std::set<std::int64_t> cancelled_lines;
    for (const auto& o : results) {
        BOOST_TEST(str(o.at("error")).starts_with("cancelled"), str(o.at("error")));
        cancelled_lines.insert(o.at("line").to_number<std::int64_t>());
    }
    BOOST_TEST((cancelled_lines == std::set<std::int64_t>{1, 2, 3, 4}));
    auto s = summary_of(r.err);
    BOOST_TEST(s["jobs"] == 20u);
    BOOST_TEST(s["cancelled"] == 4u);
    BOOST_TEST(s["not run"] == 16u);
    BOOST_TEST(r.err.find("from line 5") != std::string::npos, r.err);
    BOOST_TEST(r.err.find("SIGINT") != std::string::npos);
    BOOST_TEST(eventually([&] { return processes_matching("sleep " + marker).empty(); }, 5s),
               "cancelled jobs left processes behind");
}

BOOST_AUTO_TEST_CASE(a_first_sigterm_lets_the_running_jobs_finish_and_starts_no_more)
{
    // As GNU parallel: the two running jobs (2 s each) end on their own and succeed.
    const auto marker = unique_seconds(2);
    std::vector<std::string> lines;
    for (int i = 0; i < 6; ++i) lines.push_back(job({"sleep", marker}));
    write_jobs(lines);
    bool sent = false;
    auto r = run_cli_and_signal({"--batch", jobs.string(), "-j", "2"},
                                [&] { return processes_matching("sleep " + marker).size() == 2; }, SIGTERM, &sent);
    BOOST_TEST_REQUIRE(sent);
    BOOST_TEST(r.code == 143, r.err);
    const auto results = json_lines(r.out);
    BOOST_TEST(results.size() == 2u);
    for (const auto& o : results) BOOST_TEST(o.at("exit_code").to_number<int>() == 0, json::serialize(o));
    auto s = summary_of(r.err);
    BOOST_TEST(s["succeeded"] == 2u);
    BOOST_TEST(s["cancelled"] == 0u);
    BOOST_TEST(s["not run"] == 4u);
    BOOST_TEST(r.err.find("SIGTERM: starting no more jobs; waiting for the 2 running ones") != std::string::npos, r.err);
    BOOST_TEST(summary_line(r.err).find("stopped by SIGTERM (the running jobs finished)") != std::string::npos, r.err);
    BOOST_TEST(r.err.find("to resume") != std::string::npos, r.err);
}

BOOST_AUTO_TEST_CASE(a_second_sigterm_cancels_the_running_jobs)
{
    const auto marker = unique_seconds(39);
    std::vector<std::string> lines;
    for (int i = 0; i < 6; ++i) lines.push_back(job({"sleep", marker}));
    write_jobs(lines);
    bool sent = false;
    auto r = run_cli_and_signal(
        {"--batch", jobs.string(), "-j", "2"}, [&] { return processes_matching("sleep " + marker).size() == 2; },
        SIGTERM, &sent, [](int pid) {
            std::this_thread::sleep_for(300ms);
            ::kill(pid, SIGTERM);
        });
    BOOST_TEST_REQUIRE(sent);
    BOOST_TEST(r.code == 143, r.err);
    BOOST_TEST(r.seconds < 15.0);
    BOOST_TEST(json_lines(r.out).size() == 2u);
    auto s = summary_of(r.err);
    BOOST_TEST(s["cancelled"] == 2u);
    BOOST_TEST(s["not run"] == 4u);
    BOOST_TEST(summary_line(r.err).find("interrupted by SIGTERM") != std::string::npos, r.err);
    BOOST_TEST(eventually([&] { return processes_matching("sleep " + marker).empty(); }, 5s));
}

BOOST_AUTO_TEST_CASE(sigint_while_jobs_still_come_from_a_pipe)
{
    // The writer keeps the pipe open for 4 s more and would then send a second job: the tool
    // must stop at once (cancel the read too), never run the second job, and say that the
    // rest of the input was not read.
    const auto marker = unique_seconds(38);
    const auto token = fresh_token();
    const auto script = "{ echo '" + job({"sleep", marker}) + "'; sleep 4; echo '" + job({"echo", "never"}) +
                        "'; } | " + tool() + " --env " + token + " --batch - -j 2; echo \"status=$?\"";
    bool sent = false;
    auto r = run_and_signal({"sh", "-c", script}, token,
                            [&] { return processes_matching("sleep " + marker).size() == 1; }, SIGINT, &sent);
    BOOST_TEST_REQUIRE(sent);
    const auto lines = lines_of(r.out);
    BOOST_TEST_REQUIRE(lines.size() == 2u, r.out);
    auto cancelled = json_lines(lines[0]);
    BOOST_TEST(str(cancelled.at(0).at("error")).starts_with("cancelled"));
    BOOST_TEST(lines[1] == "status=130");
    BOOST_TEST(r.out.find("never") == std::string::npos);
    // The shell waits for the writer; the tool's own clock says how soon it stopped.
    const auto summary = summary_line(r.err);
    BOOST_TEST(summary.find("the rest of the input was not read") != std::string::npos, summary);
    BOOST_TEST(summary_seconds(r.err) < 3.0, summary);
    BOOST_TEST(eventually([&] { return processes_matching("sleep " + marker).empty(); }, 5s));
}

BOOST_AUTO_TEST_CASE(a_slow_reader_of_the_results_does_not_hold_up_the_running_jobs)
{
    // A big result goes to a reader that takes nothing for 4 s; meanwhile the other job's 1 s
    // timeout must still end it after 1 s, not when the reader gets going.
    write_jobs({job({"sh", "-c", "head -c 300000 /dev/zero | tr '\\0' x"}, R"("id":"big")"),
                job({"sleep", "10"}, R"("id":"slow","policy":{"timeout_seconds":1})")});
    auto r = run_cli({"--timeout", "60", "sh", "-c", tool() + " --batch " + jobs.string() + " -j 2 | (sleep 4; cat)"});
    BOOST_TEST(r.code == 0, r.err);
    std::map<std::string, json::object> byid;
    for (auto& o : json_lines(r.out)) byid[str(o.at("id"))] = o;
    BOOST_TEST_REQUIRE(byid.size() == 2u, r.out.size() << " bytes: " << r.err);
    BOOST_TEST(byid["big"].at("stdout").as_string().size() == 300000u);
    BOOST_TEST(byid["slow"].at("timed_out").as_bool());
    const double slow_took = byid["slow"].at("duration").to_number<double>();
    BOOST_TEST(slow_took < 2.5, "the 1 s timeout took " << slow_took << " s");
    // Written in the order they finished.
    const auto lines = lines_of(r.out);
    BOOST_TEST(lines[0].find("\"big\"") != std::string::npos);
    auto s = summary_of(r.err);
    BOOST_TEST(s["succeeded"] == 1u);
    BOOST_TEST(s["timed out"] == 1u);
}

BOOST_AUTO_TEST_CASE(a_reader_that_falls_behind_stops_new_jobs_not_running_ones)
{
    // 40 jobs with 300 KB results into a reader that takes nothing for 3 s: the jobs go on
    // while the results fit in the tool's bounded queue, then no new job starts until the
    // reader catches up; in the end every result is there, in full.
    const auto log = dir.path / "started.log";
    const auto seen = dir.path / "seen";
    std::vector<std::string> lines;
    for (int i = 0; i < 40; ++i)
        lines.push_back(job({"sh", "-c", "echo x >> " + log.string() + "; head -c 300000 /dev/zero | tr '\\0' x"},
                            "\"id\":" + std::to_string(i)));
    write_jobs(lines);
    auto r = run_cli({"--timeout", "60", "sh", "-c",
                      tool() + " --batch " + jobs.string() + " -j 2 | (sleep 3; wc -l < " + log.string() + " > " +
                          seen.string() + "; cat)"});
    BOOST_TEST(r.code == 0, r.err);
    const auto started_while_stalled = std::stoi(read_text(seen));
    BOOST_TEST_MESSAGE("jobs started while the reader stalled: " << started_while_stalled);
    BOOST_TEST(started_while_stalled >= 3);   // more than -j: the jobs did not wait for the reader...
    BOOST_TEST(started_while_stalled <= 12);  // ...but the results waiting for it are bounded
    std::set<std::int64_t> ids;
    for (const auto& o : json_lines(r.out)) {
        BOOST_TEST(o.at("stdout").as_string().size() == 300000u);
        ids.insert(o.at("id").to_number<std::int64_t>());
    }
    BOOST_TEST(ids.size() == 40u);
    BOOST_TEST(summary_of(r.err)["succeeded"] == 40u);
}

BOOST_AUTO_TEST_CASE(a_signal_while_only_results_are_left_drops_them_and_stops)
{
    // Every job is done, but the reader takes nothing for 8 s: SIGINT then stops the tool at
    // once, and the summary says a result was not written.
    const auto marker = dir.path / "done";
    write_jobs({job({"sh", "-c", "head -c 300000 /dev/zero | tr '\\0' x; touch " + marker.string()})});
    const auto token = fresh_token();
    const auto script = "{ " + tool() + " --env " + token + " --batch " + jobs.string() +
                        "; echo \"status=$?\" >&2; } | (sleep 8; cat > /dev/null)";
    std::optional<std::chrono::steady_clock::time_point> done_at;
    bool sent = false;
    auto r = run_and_signal(
        {"sh", "-c", script}, token,
        [&] {
            if (!done_at && std::filesystem::exists(marker)) done_at = std::chrono::steady_clock::now();
            return done_at && std::chrono::steady_clock::now() - *done_at > 1s;  // the job is over
        },
        SIGINT, &sent);
    BOOST_TEST_REQUIRE(sent);
    BOOST_TEST(r.err.find("status=130") != std::string::npos, r.err);
    const auto summary = lines_of(r.err).at(lines_of(r.err).size() - 2);
    BOOST_TEST(summary.find("1 succeeded") != std::string::npos, summary);
    BOOST_TEST(summary.find("interrupted by SIGINT") != std::string::npos, summary);
    BOOST_TEST(summary.find("1 result not written") != std::string::npos, summary);
    BOOST_TEST(std::stod(number_before(summary, " s, ")) < 4.0, summary);
}

BOOST_AUTO_TEST_CASE(thousands_of_jobs_stream_through_bounded_memory)
{
    // The tool's peak RSS (from its own exec_result) must not grow with the number of jobs.
    auto run_n = [&](int n) {
        std::string text;
        for (int i = 0; i < n; ++i) text += job({"true"}, "\"id\":" + std::to_string(i)) + "\n";
        write_text(jobs, text);
        auto r = batch({"-j", "4", "-o", (dir.path / "out.jsonl").string()});
        BOOST_TEST(r.code == 0, r.err);
        auto results = json_lines(read_text(dir.path / "out.jsonl"));
        BOOST_TEST(results.size() == static_cast<std::size_t>(n));
        std::set<std::int64_t> ids;
        for (const auto& o : results) ids.insert(o.at("id").to_number<std::int64_t>());
        BOOST_TEST(ids.size() == static_cast<std::size_t>(n));
        return r.raw.usage.max_rss_bytes;
    };
    const auto small = run_n(200);
    const auto large = run_n(sanitized() ? 2000 : 4000);
    BOOST_TEST_MESSAGE("peak RSS: 200 jobs " << small / 1024 << " KiB, many jobs " << large / 1024 << " KiB");
    BOOST_TEST(large < small + (sanitized() ? 32u : 8u) * 1024 * 1024);
}

BOOST_AUTO_TEST_SUITE_END()
