// SPDX-License-Identifier: BSL-1.0
// Controlling a batch and what it says: result times and attempts, --retries, --halt,
// --resume, -k, per-job driver and image, --lock-policy, --strict and its warnings, the
// line that says why a command ended, and outputs that would overwrite the jobs.
#include "cli_support.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <set>
#include <sstream>

using namespace sandbox;
using namespace sandbox::test;
namespace json = boost::json;

namespace {

std::string text_of(const json::value& v) { return std::string(v.as_string()); }

// An id as text: a string as it is, a number (the line's) in JSON.
std::string id_text(const json::value& v) { return v.is_string() ? text_of(v) : json::serialize(v); }

struct control_fixture {
    temp_dir dir;
    std::filesystem::path results = dir.path / "results.jsonl";
    std::filesystem::path jobs = dir.path / "jobs.jsonl";

    // The job file: one line each.
    void jobs_are(const std::vector<std::string>& lines) const
    {
        std::ostringstream file;
        for (const auto& l : lines) file << l << '\n';
        write_text(jobs, file.str());
    }

    cli_result run_jobs(std::vector<std::string> extra = {}) const
    {
        extra.insert(extra.begin(), {"--batch", jobs.string()});
        return run_cli(std::move(extra));
    }

    // A job that appends `name` to a log in the temp dir: the log says which jobs ran.
    std::string logged(const std::string& name, const std::string& then = "true") const
    {
        return job({"sh", "-c", "echo " + name + " >> " + (dir.path / "ran.log").string() + "; " + then},
                   "\"id\":\"" + name + "\"");
    }

    std::vector<std::string> ran() const
    {
        const auto log = dir.path / "ran.log";
        return std::filesystem::exists(log) ? lines_of(read_text(log)) : std::vector<std::string>{};
    }
};

// The summary: the stderr line with " jobs: " (or " job: ") in it (other lines may follow it).
std::string summary_in(const std::string& err)
{
    for (const auto& l : lines_of(err))
        if (l.find(" jobs: ") != std::string::npos || l.find(" job: ") != std::string::npos) return l;
    BOOST_TEST_REQUIRE(false, "no summary in: " << err);
    return {};
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Seconds since the epoch of an RFC 3339 UTC time with microseconds.
double epoch_seconds(const std::string& t)
{
    std::tm tm{};
    int micros = 0;
    BOOST_TEST_REQUIRE(std::sscanf(t.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%6dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                                   &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &micros) == 7,
                       t);
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return static_cast<double>(::timegm(&tm)) + micros / 1e6;
}

// The ids of the result lines, in the order written.
std::vector<std::string> ids_in(const std::string& text)
{
    std::vector<std::string> ids;
    for (const auto& o : json_lines(text)) ids.push_back(id_text(o.at("id")));
    return ids;
}

std::vector<std::int64_t> line_numbers_in(const std::string& text)
{
    std::vector<std::int64_t> lines;
    for (const auto& o : json_lines(text)) lines.push_back(o.at("line").to_number<std::int64_t>());
    return lines;
}

std::map<std::string, json::object> by_id(const std::string& text)
{
    std::map<std::string, json::object> m;
    for (auto& o : json_lines(text)) {
        const auto id = id_text(o.at("id"));
        BOOST_TEST(!m.count(id), "two results for " << id);
        m[id] = o;
    }
    return m;
}

// A job with a string id.
std::string named(const std::string& id, const std::vector<std::string>& argv, const std::string& extra = "")
{
    return job(argv, "\"id\":\"" + id + "\"" + (extra.empty() ? "" : "," + extra));
}

// Six jobs, -j2, stopped by SIGINT while the first two run; then the command the tool
// printed for resuming is run by a shell. The results of both runs, by id.
std::map<std::string, json::object> interrupt_and_resume(const control_fixture& f)
{
    // The jobs sleep as long as the file says: long while interrupted, not at all after.
    const auto marker = unique_seconds(44);
    const auto length = f.dir.path / "length";
    write_text(length, marker);
    std::vector<std::string> lines;
    for (int i = 1; i <= 6; ++i)
        lines.push_back(named("j" + std::to_string(i), {"sh", "-c", "sleep $(cat " + length.string() + ")"}));
    f.jobs_are(lines);
    bool sent = false;
    auto r = run_cli_and_signal({"--batch", f.jobs.string(), "-j", "2", "-o", f.results.string()},
                                [&] { return processes_matching("sleep " + marker).size() == 2; }, SIGINT, &sent);
    BOOST_TEST_REQUIRE(sent);
    BOOST_TEST(r.code == 130, r.err);
    const auto err_lines = lines_of(r.err);
    BOOST_TEST_REQUIRE(!err_lines.empty());
    const std::string prefix = "sandbox-run: to resume: ";
    const auto& last = err_lines.back();
    BOOST_TEST_REQUIRE(last.starts_with(prefix + "sandbox-run "), r.err);
    BOOST_TEST(has(last, "--resume " + f.results.string()), last);
    BOOST_TEST(eventually([&] { return processes_matching("sleep " + marker).empty(); }, 5s));

    write_text(length, "0");
    const auto tool_dir = std::filesystem::path(tool()).parent_path().string();
    auto runner = make_runner(tool_policy({{"PATH", tool_dir + ":/usr/bin:/bin"}}), driver::host);
    auto rest = run_sync(*runner, {"sh", "-c", last.substr(prefix.size())});
    BOOST_TEST(rest.exit_code == 0, rest.err);
    return by_id(read_text(f.results));
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(cli_batch_control, control_fixture)

// ---- result lines ------------------------------------------------------------------------

// "2026-12-02T20:31:40.123456Z": digits where the pattern has 'd', the rest as written.
// (By hand: std::regex trips g++ 12's maybe-uninitialized warning in optimised builds.)
bool is_rfc3339_micro(const std::string& s)
{
    const std::string pattern = "dddd-dd-ddTdd:dd:dd.ddddddZ";
    if (s.size() != pattern.size()) return false;
    for (std::size_t i = 0; i < s.size(); ++i)
        if (pattern[i] == 'd' ? !std::isdigit(static_cast<unsigned char>(s[i])) : s[i] != pattern[i]) return false;
    return true;
}

// A number written with an exponent: a digit, 'e' or 'E', an optional sign, a digit.
bool has_exponent(const std::string& s)
{
    const auto digit = [&](std::size_t i) { return i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); };
    for (std::size_t i = 1; i + 1 < s.size(); ++i) {
        if ((s[i] != 'e' && s[i] != 'E') || !digit(i - 1)) continue;
        const auto next = (s[i + 1] == '-' || s[i + 1] == '+') ? i + 2 : i + 1;
        if (digit(next)) return true;
    }
    return false;
}

BOOST_AUTO_TEST_CASE(result_lines_carry_rfc3339_times_that_span_the_run)
{
    jobs_are({named("slow", {"sleep", "0.3"}), named("quick", {"true"}), "not json"});
    auto r = run_jobs({"-j", "3"});
    BOOST_TEST(r.code == 1, r.err);  // the bad line
    auto results = by_id(r.out);
    BOOST_TEST_REQUIRE(results.size() == 3u);
    for (const auto& [id, o] : results) {
        BOOST_TEST_CONTEXT("id " << id)
        {
            std::vector<std::string> first;
            for (const auto& kv : o) first.emplace_back(kv.key());
            first.resize(5);
            const std::vector<std::string> expected{"id", "line", "attempts", "started_at", "ended_at"};
            BOOST_TEST(first == expected, boost::test_tools::per_element());
            const auto started = text_of(o.at("started_at"));
            const auto ended = text_of(o.at("ended_at"));
            BOOST_TEST(is_rfc3339_micro(started), started);
            BOOST_TEST(is_rfc3339_micro(ended), ended);
            BOOST_TEST(epoch_seconds(started) <= epoch_seconds(ended));
            // Within a minute of now: a UTC clock, not local time.
            BOOST_TEST(std::abs(epoch_seconds(ended) - static_cast<double>(std::time(nullptr))) < 60.0);
        }
    }
    const auto& slow = results["slow"];
    BOOST_TEST(epoch_seconds(text_of(slow.at("ended_at"))) - epoch_seconds(text_of(slow.at("started_at"))) >= 0.25);
    BOOST_TEST(results["quick"].at("attempts").to_number<int>() == 1);
    BOOST_TEST(results["null"].at("attempts").to_number<int>() == 0);  // a bad line never ran
    BOOST_TEST(results["null"].contains("error"));
}

BOOST_AUTO_TEST_CASE(numbers_are_plain_decimals_without_exponents)
{
    // Quick jobs have durations and CPU times of a few milliseconds, where a shortest
    // round-trip writer would say 2.5E-3.
    std::vector<std::string> lines;
    for (int i = 0; i < 20; ++i) lines.push_back(job({"true"}));
    jobs_are(lines);
    auto r = run_jobs({"-j", "4"});
    BOOST_TEST(r.code == 0, r.err);
    BOOST_TEST(json_lines(r.out).size() == 20u);
    BOOST_TEST(!has_exponent(r.out), r.out);
    auto single = run_cli({"--json", "--", "true"});
    BOOST_TEST(single.code == 0);
    BOOST_TEST(!has_exponent(single.out), single.out);
}

// ---- --retries ---------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(retries_run_a_failing_job_again_and_count_the_attempts)
{
    // Fails twice, then succeeds: the count file in the base dir remembers the attempts.
    const auto count = dir.path / "count";
    const auto flaky =
        named("flaky", {"sh", "-c", "n=$(cat count 2>/dev/null || echo 0); echo $((n+1)) > count; [ $n -ge 2 ]"});
    jobs_are({flaky, named("fine", {"true"})});

    auto enough = run_jobs({"--base-dir", dir.path.string(), "--retries", "3"});
    BOOST_TEST(enough.code == 0, enough.err);
    auto results = by_id(enough.out);
    BOOST_TEST(results["flaky"].at("attempts").to_number<int>() == 3);
    BOOST_TEST(results["flaky"].at("success").as_bool());
    BOOST_TEST(results["fine"].at("attempts").to_number<int>() == 1);  // a success is not run again
    BOOST_TEST(read_text(count) == "3\n");

    std::filesystem::remove(count);
    auto too_few = run_jobs({"--base-dir", dir.path.string(), "--retries", "1"});
    BOOST_TEST(too_few.code == 1, too_few.err);
    results = by_id(too_few.out);
    BOOST_TEST(results["flaky"].at("attempts").to_number<int>() == 2);
    BOOST_TEST(!results["flaky"].at("success").as_bool());
    BOOST_TEST(summary_in(too_few.err).find("1 failed") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_timed_out_job_is_retried_too)
{
    jobs_are({named("stuck", {"sleep", "5"}, R"("policy":{"timeout_seconds":0.2})")});
    auto r = run_jobs({"--retries", "2"});
    BOOST_TEST(r.code == 1);
    auto o = by_id(r.out)["stuck"];
    BOOST_TEST(o.at("attempts").to_number<int>() == 3);
    BOOST_TEST(o.at("timed_out").as_bool());
    // The times span every attempt.
    BOOST_TEST(epoch_seconds(text_of(o.at("ended_at"))) - epoch_seconds(text_of(o.at("started_at"))) >= 0.55);
}

BOOST_AUTO_TEST_CASE(retries_beyond_100_are_bad_usage)
{
    jobs_are({job({"true"})});
    auto r = run_jobs({"--retries", "101"});
    BOOST_TEST(r.code == 2);
    BOOST_TEST(has(r.err, "--retries"), r.err);
    BOOST_TEST(r.out.empty());
    BOOST_TEST(run_jobs({"--retries", "100"}).code == 0);
}

// ---- --halt ------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(halt_now_stops_at_the_first_failure)
{
    jobs_are({logged("bad", "false"), logged("next"), logged("last")});
    auto r = run_jobs({"-j", "1", "--halt", "now,fail=1"});
    BOOST_TEST(r.code == 1, r.err);
    BOOST_TEST(json_lines(r.out).size() == 1u);
    BOOST_TEST(ran() == std::vector<std::string>{"bad"});
    const auto s = summary_in(r.err);
    BOOST_TEST(has(s, "halted after 1 failure (--halt now,fail=1)"), s);
    BOOST_TEST(has(s, "2 not run"), s);
}

BOOST_AUTO_TEST_CASE(halt_soon_lets_the_running_jobs_finish_and_starts_no_more)
{
    jobs_are({named("bad", {"sh", "-c", "sleep 0.3; exit 1"}), named("running", {"sleep", "1"}), logged("later1"),
              logged("later2")});
    auto r = run_jobs({"-j", "2", "--halt", "soon,fail=1"});
    BOOST_TEST(r.code == 1, r.err);
    auto results = by_id(r.out);
    BOOST_TEST_REQUIRE(results.size() == 2u, r.out);
    BOOST_TEST(results["running"].at("success").as_bool());  // finished, not cancelled
    BOOST_TEST(!results["running"].contains("error"));
    BOOST_TEST(ran().empty());
    const auto s = summary_in(r.err);
    BOOST_TEST(has(s, "halted after 1 failure (--halt soon,fail=1)"), s);
    BOOST_TEST(has(s, "2 not run"), s);
    BOOST_TEST(has(s, "0 cancelled"), s);
}

// A stop that cuts a job's retries short leaves it for --resume, not failed for good.
BOOST_AUTO_TEST_CASE(halt_soon_leaves_a_job_whose_retries_it_cut_short_to_resume)
{
    const auto tried = dir.path / "tried";
    jobs_are({named("flaky", {"sh", "-c", "sleep 0.3; test -e " + tried.string() + " || { touch " + tried.string() +
                                              "; exit 1; }"}),
              named("bad", {"false"})});
    auto r = run_jobs({"-j", "2", "--retries", "2", "--halt", "soon,fail=1", "-o", results.string()});
    BOOST_TEST(r.code == 1, r.err);
    auto first = by_id(read_text(results));
    BOOST_TEST_REQUIRE(first.size() == 2u);
    const auto error = text_of(first["flaky"].at("error"));
    BOOST_TEST(error.starts_with("cancelled: "), error);
    BOOST_TEST(has(error, "attempt 1 of 3 did not succeed: exit 1"), error);
    BOOST_TEST(has(summary_in(r.err), "1 cancelled"), r.err);

    auto again = run_jobs({"--retries", "2", "--resume", results.string(), "-o", results.string()});
    BOOST_TEST(again.code == 0, again.err);  // "bad" failed for good and is skipped
    auto all = by_id(read_text(results));
    BOOST_TEST_REQUIRE(all.size() == 2u);
    BOOST_TEST(all["flaky"].at("success").as_bool(), all["flaky"]);
}

BOOST_AUTO_TEST_CASE(halt_now_cancels_the_running_jobs)
{
    const auto marker = unique_seconds(43);
    jobs_are({named("long", {"sleep", marker}), named("bad", {"sh", "-c", "sleep 0.3; exit 1"})});
    auto r = run_jobs({"-j", "2", "--halt", "now,fail=1"});
    BOOST_TEST(r.code == 1, r.err);
    BOOST_TEST(r.seconds < 20.0);
    auto results = by_id(r.out);
    BOOST_TEST_REQUIRE(results.size() == 2u, r.out);
    BOOST_TEST(text_of(results["long"].at("error")).starts_with("cancelled"), results["long"]);
    BOOST_TEST(has(text_of(results["long"].at("error")), "--halt now,fail=1"));
    BOOST_TEST(has(summary_in(r.err), "1 cancelled"));
    BOOST_TEST(eventually([&] { return processes_matching("sleep " + marker).empty(); }, 5s));
}

BOOST_AUTO_TEST_CASE(bad_halt_specs_are_bad_usage)
{
    jobs_are({job({"true"})});
    for (const char* spec : {"sometimes", "now,fail=0", "now,fail=", "soon,fails=1", "never,fail=1", ""}) {
        auto r = run_jobs({"--halt", spec});
        BOOST_TEST(r.code == 2, spec << ": " << r.err);
        BOOST_TEST(has(r.err, "--halt"), r.err);
    }
    for (const char* spec : {"never", "now", "soon,fail=3"}) BOOST_TEST(run_jobs({"--halt", spec}).code == 0, spec);
}

// ---- --resume ----------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(resume_into_the_same_file_skips_what_is_done_and_keeps_its_results)
{
    const auto flag = dir.path / "b-may-pass";
    jobs_are({logged("a"), logged("b", "test -e " + flag.string()), logged("c")});
    auto first = run_jobs({"-o", results.string()});
    BOOST_TEST(first.code == 1, first.err);
    BOOST_TEST(ran().size() == 3u);

    std::filesystem::remove(dir.path / "ran.log");
    auto again = run_jobs({"--resume", results.string(), "-o", results.string()});
    BOOST_TEST(ran().empty());
    BOOST_TEST(has(summary_in(again.err), "3 skipped (--resume: 1 failed in an earlier run)"), again.err);
    // The summary is the whole batch's (b failed in the earlier run); the status this run's.
    BOOST_TEST(has(summary_in(again.err), "3 jobs: 2 succeeded, 1 failed,"), again.err);
    BOOST_TEST(again.code == 0, again.err);
    BOOST_TEST(json_lines(read_text(results)).size() == 3u);

    write_text(flag, "");
    auto failed = run_jobs({"--resume", results.string(), "--resume-failed", "-o", results.string()});
    BOOST_TEST(failed.code == 0, failed.err);
    BOOST_TEST(ran() == std::vector<std::string>{"b"});
    BOOST_TEST(has(summary_in(failed.err), "2 skipped (--resume: succeeded in an earlier run)"), failed.err);
    BOOST_TEST(has(summary_in(failed.err), "3 jobs: 3 succeeded, 0 failed,"), failed.err);
    auto all = by_id(read_text(results));  // one line for each id
    BOOST_TEST(all.size() == 3u);
    BOOST_TEST(all["b"].at("success").as_bool());
    BOOST_TEST(all["a"].at("success").as_bool());
}

// SIGKILL leaves no time to rename the results into place: they stay under the temporary
// name beside it, and resuming into the same file takes them, once each, also when that
// resume is killed too.
BOOST_AUTO_TEST_CASE(a_killed_runs_results_are_taken_by_a_resume_into_the_same_file)
{
    std::vector<std::string> lines;
    for (int i = 1; i <= 12; ++i) lines.push_back(logged("k" + std::to_string(i), "sleep 0.2"));
    jobs_are(lines);
    const auto leftovers = [&] {
        std::vector<std::filesystem::path> found;
        for (const auto& e : std::filesystem::directory_iterator(dir.path))
            if (e.path().filename().string().starts_with(".results.jsonl.")) found.push_back(e.path());
        return found;
    };
    // One leftover, other than `before`, with `n` complete lines.
    const auto written = [&](std::size_t n, const std::filesystem::path& before) {
        return [&, n, before] {
            const auto found = leftovers();
            if (found.size() != 1 || found.front() == before) return false;
            const auto text = read_text(found.front());
            return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) >= n;
        };
    };
    const std::vector<std::string> run_args{"--batch", jobs.string(), "-j", "1", "-o", results.string()};
    bool sent = false;
    run_cli_and_signal(run_args, written(3, {}), SIGKILL, &sent);
    BOOST_TEST_REQUIRE(sent);
    BOOST_TEST(!std::filesystem::exists(results));  // never renamed
    BOOST_TEST_REQUIRE(leftovers().size() == 1u);
    const auto first = leftovers().front();
    const auto done = by_id(read_text(first)).size();
    BOOST_TEST_REQUIRE(done >= 3u);

    // A run that does not resume is only told where they are.
    jobs_are({logged("x")});
    auto told = run_jobs({"-o", results.string()});
    BOOST_TEST(told.code == 0, told.err);
    BOOST_TEST(has(told.err, first.string() + " holds the results of a run"), told.err);
    BOOST_TEST(leftovers() == std::vector<std::filesystem::path>{first});

    // A resume killed in its turn leaves one file with all it had: the first run's results,
    // "x" from the file and its own.
    jobs_are(lines);
    auto resume_args = run_args;
    resume_args.insert(resume_args.end(), {"--resume", results.string()});
    sent = false;
    run_cli_and_signal(resume_args, written(done + 3, first), SIGKILL, &sent);
    BOOST_TEST_REQUIRE(sent);
    BOOST_TEST_REQUIRE(leftovers().size() == 1u);
    const auto kept = by_id(read_text(leftovers().front()));
    const auto done_twice = kept.size();
    BOOST_TEST(done_twice >= done + 3);

    std::filesystem::remove(dir.path / "ran.log");
    auto last = run_cli(resume_args);
    BOOST_TEST(last.code == 0, last.err);
    BOOST_TEST(has(summary_in(last.err), std::to_string(done_twice - 1) + " skipped (--resume: succeeded in an earlier run)"), last.err);
    // The jobs without a result, each of them. (The kill leaves a job it interrupted running
    // on the host, which may still log its name once the log is gone: a set, not a count.)
    std::set<std::string> missing;
    for (int i = 1; i <= 12; ++i)
        if (!kept.count("k" + std::to_string(i))) missing.insert("k" + std::to_string(i));
    const auto ran_now = ran();
    BOOST_TEST((std::set<std::string>(ran_now.begin(), ran_now.end()) == missing));
    BOOST_TEST(leftovers().empty());
    auto all = by_id(read_text(results));  // one line for each id
    BOOST_TEST(all.size() == 13u);
}

// The line number stands in for a missing id, but not for a line that could not be read:
// its error result has a null id, so no job with that number as its id is taken for done.
BOOST_AUTO_TEST_CASE(an_unreadable_lines_result_has_no_id_a_job_could_be_taken_for)
{
    jobs_are({named("a", {"true"}), "oops", "[2]"});
    auto first = run_jobs({"-o", results.string()});
    BOOST_TEST(first.code == 1, first.err);
    auto by_number = by_line(json_lines(read_text(results)));
    BOOST_TEST_REQUIRE(by_number.size() == 3u);
    BOOST_TEST(by_number[2].at("id").is_null(), by_number[2]);
    BOOST_TEST(by_number[3].at("id").is_null(), by_number[3]);

    jobs_are({named("a", {"true"}), "oops", "[2]", job({"sh", "-c", "echo two >> " + (dir.path / "ran.log").string()},
                                                       "\"id\":2")});
    auto again = run_jobs({"--resume", results.string(), "-o", results.string()});
    BOOST_TEST(again.code == 1, again.err);  // the bad lines are bad again
    BOOST_TEST(ran() == std::vector<std::string>{"two"});
    const auto all = json_lines(read_text(results));
    BOOST_TEST(all.size() == 4u);  // the bad lines' results once each
}

BOOST_AUTO_TEST_CASE(resume_into_another_file_writes_only_what_ran)
{
    jobs_are({logged("a"), logged("b", "false")});
    BOOST_TEST(run_jobs({"-o", results.string()}).code == 1);
    const auto earlier = read_text(results);
    jobs_are({logged("a"), logged("b", "false"), logged("d")});
    std::filesystem::remove(dir.path / "ran.log");
    const auto fresh = dir.path / "fresh.jsonl";
    auto r = run_jobs({"--resume", results.string(), "-o", fresh.string()});
    BOOST_TEST(r.code == 0, r.err);
    BOOST_TEST(ran() == std::vector<std::string>{"d"});
    BOOST_TEST(ids_in(read_text(fresh)) == std::vector<std::string>{"d"});
    BOOST_TEST(read_text(results) == earlier);  // the earlier results are only read
}

BOOST_AUTO_TEST_CASE(duplicate_ids_are_refused_with_resume_and_reported_without)
{
    const auto empty = dir.path / "none-yet.jsonl";
    write_text(empty, "");
    jobs_are({logged("twice"), logged("twice"), logged("once")});
    auto resumed = run_jobs({"--resume", empty.string()});
    BOOST_TEST(resumed.code == 1, resumed.err);
    auto results = by_line(json_lines(resumed.out));
    BOOST_TEST_REQUIRE(results.size() == 3u);
    BOOST_TEST(results[1].at("success").as_bool());
    BOOST_TEST(has(text_of(results[2].at("error")), "unique"), results[2]);
    BOOST_TEST(results[2].at("attempts").to_number<int>() == 0);
    BOOST_TEST(results[3].at("success").as_bool());
    BOOST_TEST(ran().size() == 2u);

    std::filesystem::remove(dir.path / "ran.log");
    auto plain = run_jobs();
    BOOST_TEST(plain.code == 0, plain.err);
    BOOST_TEST(ran().size() == 3u);  // both run
    BOOST_TEST(json_lines(plain.out).size() == 3u);
    BOOST_TEST(has(plain.err, "\"twice\""), plain.err);
    BOOST_TEST(has(plain.err, "1 line has an id an earlier line has"), plain.err);
}

BOOST_AUTO_TEST_CASE(resume_into_a_file_that_does_not_exist_yet_is_a_first_run)
{
    // As GNU parallel's --resume: the same command line, run until the batch is done.
    jobs_are({logged("a"), logged("b")});
    const auto into = (dir.path / "new.jsonl").string();
    auto first = run_jobs({"--resume", into, "-o", into});
    BOOST_TEST(first.code == 0, first.err);
    BOOST_TEST(ran().size() == 2u);
    BOOST_TEST(by_id(read_text(into)).size() == 2u);
    std::filesystem::remove(dir.path / "ran.log");
    auto again = run_jobs({"--resume", into, "-o", into});
    BOOST_TEST(again.code == 0, again.err);
    BOOST_TEST(ran().empty());
    BOOST_TEST(has(summary_in(again.err), "2 jobs: 2 succeeded, 0 failed,"), again.err);
}

BOOST_AUTO_TEST_CASE(resume_failed_alone_and_a_missing_resume_file_are_bad_usage)
{
    jobs_are({logged("a")});
    auto alone = run_jobs({"--resume-failed"});
    BOOST_TEST(alone.code == 2);
    BOOST_TEST(has(alone.err, "--resume"), alone.err);
    const auto missing = (dir.path / "missing.jsonl").string();
    auto gone = run_jobs({"--resume", missing});
    BOOST_TEST(gone.code == 2);
    BOOST_TEST(has(gone.err, missing), gone.err);
    BOOST_TEST(ran().empty());
}

BOOST_AUTO_TEST_CASE(the_resume_command_printed_after_sigint_runs_the_rest)
{
    auto all = interrupt_and_resume(*this);
    BOOST_TEST(all.size() == 6u);
    for (int i = 1; i <= 6; ++i) BOOST_TEST(all.count("j" + std::to_string(i)) == 1u);
    for (int i = 3; i <= 6; ++i) BOOST_TEST(all["j" + std::to_string(i)].at("success").as_bool());
}

// A cancelled job has no result: the printed resume command runs it again, and its
// cancelled line gives way to the real result.
BOOST_AUTO_TEST_CASE(the_resume_command_printed_after_sigint_runs_the_cancelled_jobs_again)
{
    for (const auto& [id, o] : interrupt_and_resume(*this))
        BOOST_TEST(o.contains("success"), id << " kept its cancelled result: " << o);
}

// ---- -k / --keep-order -------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(keep_order_writes_results_in_input_order)
{
    jobs_are({named("1", {"sleep", "0.6"}), named("2", {"sleep", "0.4"}), named("3", {"sleep", "0.2"}),
              named("4", {"true"})});
    const std::vector<std::string> input_order{"1", "2", "3", "4"};
    auto kept = run_jobs({"-j", "4", "-k"});
    BOOST_TEST(kept.code == 0, kept.err);
    BOOST_TEST(ids_in(kept.out) == input_order, boost::test_tools::per_element());
    auto ended = run_jobs({"-j", "4"});
    BOOST_TEST(ended.code == 0, ended.err);
    const auto as_ended = ids_in(ended.out);
    BOOST_TEST_REQUIRE(as_ended.size() == 4u);
    BOOST_TEST(as_ended.front() == "4", ended.out);  // as they end
    auto long_form = run_jobs({"-j", "4", "--keep-order"});
    BOOST_TEST(ids_in(long_form.out) == input_order, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(keep_order_places_error_lines_and_skips_resumed_lines)
{
    write_text(results, R"({"id":"done","line":4,"success":true})"
                        "\n");
    jobs_are({named("s1", {"sleep", "0.5"}), "not json", named("s2", {"sleep", "0.2"}), named("done", {"true"}),
              R"({"id":"no-argv"})", named("last", {"true"})});
    auto r = run_jobs({"-j", "4", "-k", "--resume", results.string()});
    BOOST_TEST(r.code == 1, r.err);
    const std::vector<std::int64_t> expected{1, 2, 3, 5, 6};
    BOOST_TEST(line_numbers_in(r.out) == expected, boost::test_tools::per_element());
    BOOST_TEST(has(summary_in(r.err), "1 skipped (--resume: succeeded in an earlier run)"), r.err);
}

BOOST_AUTO_TEST_CASE(keep_order_holds_for_many_jobs)
{
    std::vector<std::string> lines;
    for (int i = 1; i <= 300; ++i) lines.push_back(job({"echo", std::to_string(i)}));
    jobs_are(lines);
    auto r = run_jobs({"-j", "8", "-k"});
    BOOST_TEST(r.code == 0, r.err);
    const auto numbers = line_numbers_in(r.out);
    BOOST_TEST_REQUIRE(numbers.size() == 300u);
    for (std::int64_t i = 0; i < 300; ++i) BOOST_TEST_REQUIRE(numbers[static_cast<std::size_t>(i)] == i + 1);
    const auto parsed = json_lines(r.out);
    BOOST_TEST(text_of(parsed.back().at("stdout")) == "300\n");
}

// ---- per-job driver and image ------------------------------------------------------------

BOOST_AUTO_TEST_CASE(a_job_may_name_its_driver_and_image)
{
    jobs_are({named("host", {"true"}, R"("driver":"host")"), named("nope", {"true"}, R"("driver":"nope")"),
              named("no-image", {"true"}, R"("image":"")"), named("image", {"true"}, R"("image":"alpine:3")")});
    auto r = run_jobs({"-j", "2"});
    BOOST_TEST(r.code == 1, r.err);
    auto results = by_id(r.out);
    BOOST_TEST_REQUIRE(results.size() == 4u);
    BOOST_TEST(results["host"].at("success").as_bool());
    BOOST_TEST(has(text_of(results["nope"].at("error")), "Unsupported sandbox driver"), results["nope"]);
    BOOST_TEST(results["no-image"].contains("error"), results["no-image"]);
    BOOST_TEST(results["image"].at("success").as_bool(), results["image"]);  // the host driver has no image
}

// ---- --lock-policy -----------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(lock_policy_lets_jobs_only_tighten_the_policy)
{
    jobs_are({
        named("longer", {"true"}, R"("policy":{"timeout_seconds":10})"),
        named("shorter", {"true"}, R"("policy":{"timeout_seconds":1})"),
        named("network", {"true"}, R"("policy":{"network_enabled":true})"),
        named("more-memory", {"true"}, R"("policy":{"memory_limit":"1G"})"),
        named("less-memory", {"true"}, R"("policy":{"memory_limit":"64M"})"),
        named("docker", {"true"}, R"("driver":"docker")"),
        named("read-etc", {"true"}, R"("policy":{"readable_paths":["/etc"]})"),
        named("inherit", {"true"}, R"("policy":{"inherit_env":true})"),
    });
    auto r = run_jobs({"--timeout", "5", "--lock-policy", "-j", "4"});
    BOOST_TEST(r.code == 1, r.err);
    auto results = by_id(r.out);
    BOOST_TEST_REQUIRE(results.size() == 8u);
    for (const char* id : {"shorter", "less-memory"})
        BOOST_TEST(results[id].at("success").as_bool(), id << ": " << results[id]);
    for (const char* id : {"longer", "network", "more-memory", "docker", "read-etc", "inherit"}) {
        BOOST_TEST_REQUIRE(results[id].contains("error"), id << ": " << results[id]);
        BOOST_TEST(has(text_of(results[id].at("error")), "--lock-policy"), id << ": " << results[id]);
        BOOST_TEST(results[id].at("attempts").to_number<int>() == 0);
    }

    // Without it, the same jobs run (all but docker, which is not tried here).
    jobs_are({named("longer", {"true"}, R"("policy":{"timeout_seconds":10})"),
              named("network", {"true"}, R"("policy":{"network_enabled":true})"),
              named("more-memory", {"true"}, R"("policy":{"memory_limit":"1G"})"),
              named("read-etc", {"true"}, R"("policy":{"readable_paths":["/etc"]})"),
              named("inherit", {"true"}, R"("policy":{"inherit_env":true})")});
    auto loose = run_jobs({"--timeout", "5", "-j", "4"});
    BOOST_TEST(loose.code == 0, loose.err);
    for (const auto& [id, o] : by_id(loose.out)) BOOST_TEST(o.at("success").as_bool(), id << ": " << o);
}

BOOST_AUTO_TEST_CASE(lock_policy_accepts_paths_within_the_command_lines_paths)
{
    jobs_are({named("etc", {"true"}, R"("policy":{"readable_paths":["/etc"]})"),
              named("etc-ssl", {"true"}, R"("policy":{"readable_paths":["/etc/ssl"]})"),
              named("usr", {"true"}, R"("policy":{"readable_paths":["/usr"]})")});
    auto r = run_jobs({"--ro", "/etc", "--lock-policy", "-j", "3"});
    BOOST_TEST(r.code == 1, r.err);
    auto results = by_id(r.out);
    BOOST_TEST(results["etc"].at("success").as_bool(), results["etc"]);
    BOOST_TEST(results["etc-ssl"].at("success").as_bool(), results["etc-ssl"]);
    BOOST_TEST(has(text_of(results["usr"].at("error")), "--lock-policy"), results["usr"]);
}

BOOST_AUTO_TEST_CASE(lock_policy_sees_through_path_tricks_and_keeps_every_limit_set)
{
    // A path is within /etc by its components, not by its spelling.
    jobs_are({named("dotdot", {"true"}, R"("policy":{"readable_paths":["/etc/../usr"]})"),
              named("prefix", {"true"}, R"("policy":{"readable_paths":["/etcetera"]})"),
              named("relative", {"true"}, R"("policy":{"readable_paths":["etc"]})"),
              named("write-etc", {"true"}, R"("policy":{"writable_paths":["/etc"]})"),
              named("idle-longer", {"true"}, R"("policy":{"idle_timeout_seconds":100})"),
              named("idle-off", {"true"}, R"("policy":{"idle_timeout_seconds":null})"),
              named("disk-off", {"true"}, R"("policy":{"disk_limit":null})"),
              named("disk-more", {"true"}, R"("policy":{"disk_limit":"1G"})"),
              named("no-timeout", {"true"}, R"("policy":{"timeout_seconds":null})"),
              named("more-output", {"true"}, R"("policy":{"stdout_limit_bytes":99999999})"),
              named("idle-shorter", {"true"}, R"("policy":{"idle_timeout_seconds":0.5})"),
              named("disk-less", {"true"}, R"("policy":{"disk_limit":"10M"})")});
    auto r = run_jobs({"--ro", "/etc", "--timeout", "5", "--idle-timeout", "1", "--disk", "100M", "--lock-policy", "-j", "4"});
    BOOST_TEST(r.code == 1, r.err);
    auto results = by_id(r.out);
    BOOST_TEST_REQUIRE(results.size() == 12u);
    for (auto& [id, o] : results) {
        const bool tighter = id == "idle-shorter" || id == "disk-less";
        BOOST_TEST(o.contains("error") == !tighter, id << ": " << o);
        if (!tighter) BOOST_TEST(has(text_of(o.at("error")), "--lock-policy"), id << ": " << o);
    }
}

// ---- --strict and warnings ---------------------------------------------------------------

BOOST_AUTO_TEST_CASE(an_unenforced_setting_warns_once_and_strict_refuses_it)
{
    const auto marker = dir.path / "ran";
    const std::vector<std::pair<std::vector<std::string>, std::string>> settings{
        {{"--memory", "64M"}, "sandbox-run: warning: --memory 64M is not enforced by the host driver"},
        {{"--no-network"}, "sandbox-run: warning: --no-network is not enforced by the host driver"},
        {{"--ro", "/etc"}, "sandbox-run: warning: --ro/--rw is not enforced by the host driver"},
    };
    for (const auto& [flags, warning] : settings) {
        BOOST_TEST_CONTEXT(flags.front())
        {
            std::vector<std::string> args = flags;
            args.insert(args.end(), {"--", "sh", "-c", "touch " + marker.string()});
            auto warned = run_cli(args);
            BOOST_TEST(warned.code == 0, warned.err);
            const auto err = lines_of(warned.err);
            BOOST_TEST_REQUIRE(err.size() == 1u, warned.err);
            BOOST_TEST(err.front().starts_with(warning), err.front());
            BOOST_TEST(std::filesystem::remove(marker));

            args.insert(args.begin(), "--strict");
            auto strict = run_cli(args);
            BOOST_TEST(strict.code == 125, strict.err);
            BOOST_TEST(has(strict.err, "--strict"), strict.err);
            BOOST_TEST(!has(strict.err, "warning"), strict.err);
            BOOST_TEST(!std::filesystem::exists(marker));  // nothing ran
        }
    }
    // Nothing asked for, nothing said.
    auto plain = run_cli({"--", "true"});
    BOOST_TEST(plain.code == 0);
    BOOST_TEST(plain.err.empty(), plain.err);
    BOOST_TEST(run_cli({"--strict", "--", "true"}).code == 0);
}

BOOST_AUTO_TEST_CASE(strict_batches_refuse_before_running_and_per_job)
{
    const auto marker = dir.path / "ran";
    jobs_are({job({"sh", "-c", "touch " + marker.string()})});
    auto refused = run_jobs({"--memory", "64M", "--strict"});
    BOOST_TEST(refused.code == 125, refused.err);
    BOOST_TEST(has(refused.err, "--strict"), refused.err);
    BOOST_TEST(refused.out.empty());
    BOOST_TEST(!std::filesystem::exists(marker));
    // A refused batch leaves an earlier -o file as it was, and nothing beside it.
    write_text(results, "{\"id\":\"earlier\"}\n");
    auto kept = run_jobs({"--memory", "64M", "--strict", "-o", results.string()});
    BOOST_TEST(kept.code == 125, kept.err);
    BOOST_TEST(read_text(results) == "{\"id\":\"earlier\"}\n");
    for (const auto& e : std::filesystem::directory_iterator(dir.path))
        BOOST_TEST(!e.path().filename().string().starts_with(".results.jsonl."), e.path());

    jobs_are({named("limited", {"true"}, R"("policy":{"memory_limit":"64M"})"), named("plain", {"true"}),
              named("timeout", {"true"}, R"("policy":{"timeout_seconds":2})")});
    auto per_job = run_jobs({"--strict"});
    BOOST_TEST(per_job.code == 1, per_job.err);
    auto results = by_id(per_job.out);
    BOOST_TEST(has(text_of(results["limited"].at("error")), "not enforced"), results["limited"]);
    BOOST_TEST(results["plain"].at("success").as_bool());
    BOOST_TEST(results["timeout"].at("success").as_bool());  // a timeout is enforced
}

// ---- why a command ended -----------------------------------------------------------------

BOOST_AUTO_TEST_CASE(a_timeout_says_which_setting_ended_the_command)
{
    auto wall = run_cli({"--timeout", "0.3", "--", "sleep", "5"});
    BOOST_TEST(wall.code == 124);
    BOOST_TEST(has(wall.err, "sandbox-run: timed out after 0.3 s (wall; --timeout)\n"), wall.err);

    auto idle = run_cli({"--idle-timeout", "0.3", "--", "sleep", "5"});
    BOOST_TEST(idle.code == 124);
    BOOST_TEST(has(idle.err, "sandbox-run: timed out after 0.3 s without output (idle; --idle-timeout)\n"), idle.err);

    const auto policy = dir.path / "policy.json";
    write_text(policy, R"({"timeout_seconds": 0.3})");
    auto from_file = run_cli({"--policy", policy.string(), "--", "sleep", "5"});
    BOOST_TEST(from_file.code == 124);
    BOOST_TEST(has(from_file.err, "sandbox-run: timed out after 0.3 s (wall; --policy timeout_seconds)\n"),
               from_file.err);
    // A flag beats the file, and says so.
    auto flag = run_cli({"--policy", policy.string(), "--timeout", "0.4", "--", "sleep", "5"});
    BOOST_TEST(has(flag.err, "(wall; --timeout)"), flag.err);
}

BOOST_AUTO_TEST_CASE(a_batch_has_no_timeout_unless_one_is_set)
{
    // As GNU parallel: a batch of builds must not die at one command's default 5 s.
    const auto batch_timeout = [&](std::vector<std::string> extra) {
        extra.insert(extra.begin(), {"--show-policy", "--batch", jobs.string()});
        auto r = run_cli(extra);
        BOOST_TEST_REQUIRE(r.code == 0, r.err);
        return json::parse(r.out).at("timeout_seconds");
    };
    jobs_are({job({"true"})});
    BOOST_TEST(batch_timeout({}).is_null());
    BOOST_TEST(batch_timeout({"--timeout", "2"}).to_number<double>() == 2.0);
    const auto policy = dir.path / "policy.json";
    write_text(policy, R"({"timeout_seconds": 3})");
    BOOST_TEST(batch_timeout({"--policy", policy.string()}).to_number<double>() == 3.0);
    // One command keeps the default.
    auto single = run_cli({"--show-policy"});
    BOOST_TEST(json::parse(single.out).at("timeout_seconds").to_number<double>() == 5.0);

    // A job runs past 5 s, and its own timeout is taken, even a long one under --lock-policy.
    jobs_are({named("long", {"sleep", "5.3"}), named("own", {"sleep", "5"}, R"("policy":{"timeout_seconds":0.2})"),
              named("longer", {"true"}, R"("policy":{"timeout_seconds":600})")});
    auto r = run_jobs({"-j", "3", "--lock-policy"});
    auto results = by_id(r.out);
    BOOST_TEST_REQUIRE(results.size() == 3u, r.out);
    BOOST_TEST(results["long"].at("success").as_bool(), results["long"]);
    BOOST_TEST(results["own"].at("timed_out").as_bool(), results["own"]);
    BOOST_TEST(results["longer"].at("success").as_bool(), results["longer"]);
    BOOST_TEST(r.code == 1, r.err);
}

BOOST_AUTO_TEST_CASE(timeout_zero_or_none_means_no_timeout)
{
    for (const char* off : {"0", "none"}) {
        BOOST_TEST_CONTEXT(off)
        {
            auto r = run_cli({"--timeout", off, "--json", "--", "sh", "-c", "sleep 0.2; echo done"});
            BOOST_TEST(r.code == 0, r.err);
            BOOST_TEST(r.err.empty(), r.err);
            BOOST_TEST(has(r.out, "\"timed_out\":false"), r.out);
            BOOST_TEST(run_cli({"--timeout", off, "--", "true"}).code == 0);
            auto shown = run_cli({"--timeout", off, "--show-policy"});
            BOOST_TEST(has(shown.out, "\"timeout_seconds\":null"), shown.out);
        }
    }
}

// ---- an output that is the job file ------------------------------------------------------

BOOST_AUTO_TEST_CASE(an_output_that_is_the_job_file_is_refused_by_relative_names_and_with_resume)
{
    jobs_are({logged("a")});
    const auto kept = read_text(jobs);
    write_text(results, "");
    const auto linked_dir = dir.path / "linked";
    std::filesystem::create_directory_symlink(dir.path, linked_dir);
    cli_options here;
    here.cwd = dir.path;
    const std::vector<std::string> names{"jobs.jsonl", "./jobs.jsonl", "linked/jobs.jsonl",
                                         (linked_dir / "jobs.jsonl").string()};
    for (const auto& out : names) {
        BOOST_TEST_CONTEXT(out)
        {
            auto plain = run_cli({"--batch", "jobs.jsonl", "-o", out}, here);
            BOOST_TEST(plain.code == 2, plain.err);
            BOOST_TEST(has(plain.err, "is the job file"), plain.err);
            auto resumed = run_cli(
                {"--batch", "jobs.jsonl", "-k", "--retries", "1", "--resume", results.string(), "-o", out}, here);
            BOOST_TEST(resumed.code == 2, resumed.err);
            BOOST_TEST(read_text(jobs) == kept);
        }
    }
    BOOST_TEST(ran().empty());
    BOOST_TEST(read_text(results).empty());
}

BOOST_AUTO_TEST_SUITE_END()
