// SPDX-License-Identifier: BSL-1.0
// `sandbox-run report`: the numbers on the page, escaping, nothing external, one timeline row
// per slot, bad input and files, results without start and end times, many jobs in a bounded
// page, and a real browser drawing the charts (its screenshot's pixels are counted).
#include "cli_support.hpp"

#include <boost/json/serialize.hpp>
#include <boost/test/unit_test.hpp>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <unistd.h>

using namespace sandbox;
using namespace sandbox::test;
namespace json = boost::json;

namespace {

// The colours of the timeline bars (src/cli/report_data.hpp).
constexpr const char* green = "2e9d4a";
constexpr const char* red = "d1352b";
constexpr const char* amber = "e08a00";

// "2026-12-02T20:00:00.000000Z" plus `s` seconds.
std::string stamp(double s)
{
    const auto us = static_cast<long long>(std::llround(s * 1e6));
    const long long total_s = us / 1000000;
    char buf[64];
    std::snprintf(buf, sizeof buf, "2026-12-02T%02lld:%02lld:%02lld.%06lldZ", 20 + total_s / 3600, total_s / 60 % 60,
                  total_s % 60, us % 1000000);
    return buf;
}

enum class kind { ok, fail, timeout, error, cancelled };

/// A result line as the batch writes it, run from `start` to `end` seconds.
std::string result(const json::value& id, int line, double start, double end, kind k,
                   const std::string& stderr_text = "", bool times = true)
{
    json::object o;
    o["id"] = id;
    o["line"] = line;
    if (k == kind::error || k == kind::cancelled) {
        o["error"] = k == kind::error ? "cannot start: <b>no</b> such command"
                                      : "cancelled: sandbox-run was interrupted by SIGINT";
    } else {
        o["stdout"] = std::string(200, 'x');
        o["stderr"] = stderr_text;
        o["exit_code"] = k == kind::ok ? 0 : k == kind::fail ? 3 : 124;
        o["duration"] = end - start;
        o["timed_out"] = k == kind::timeout;
        o["success"] = k == kind::ok;
        o["timeout_reason"] = k == kind::timeout ? json::value("wall") : json::value(nullptr);
        o["term_signal"] = 0;
        o["oom_killed"] = false;
        o["start_error"] = nullptr;
    }
    if (times) {
        o["started_at"] = stamp(start);
        o["ended_at"] = stamp(end);
        o["attempts"] = 1;
    }
    return json::serialize(o);
}

/// Six jobs at most three at once: a [0,1] ok, b [0.5,2] failed, c [0.8,1.2] timed out,
/// d [1,3] ok (in a's slot), e at 1.5 an error, f [2.5,2.6] cancelled.
std::vector<std::string> six_jobs(const std::string& first_id = "a")
{
    return {result(json::string(first_id), 1, 0, 1, kind::ok),
            result("b", 2, 0.5, 2, kind::fail, "warming up\nlast <b>line</b> & more\n"),
            result("c", 3, 0.8, 1.2, kind::timeout),
            result(4, 4, 1, 3, kind::ok),
            result("e", 5, 1.5, 1.5, kind::error),
            result("f", 6, 2.5, 2.6, kind::cancelled)};
}

/// The value in the summary row named `name`.
std::string summary(const std::string& html, const std::string& name)
{
    const std::string head = "<tr><th>" + name + "</th><td>";
    const auto pos = html.find(head);
    BOOST_TEST_REQUIRE(pos != std::string::npos, "no summary row " << name);
    const auto start = pos + head.size();
    return html.substr(start, html.find('<', start) - start);
}

std::size_t count(const std::string& s, const std::string& what)
{
    std::size_t n = 0;
    for (auto pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + what.size())) ++n;
    return n;
}

std::string lower(std::string s)
{
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

/// Nothing that a browser would fetch or run.
void check_self_contained(const std::string& html)
{
    const auto l = lower(html);
    for (const char* bad : {"http://", "https://", "<script", "<link", "<img", "<iframe", "<object", "<embed",
                            " src=", " href=", "url(", "@import", "javascript:", "//fonts"})
        BOOST_TEST(l.find(bad) == std::string::npos, "the page has " << bad);
}

struct report_fixture {
    temp_dir dir;
    std::filesystem::path results = dir.path / "results.jsonl";
    std::filesystem::path page = dir.path / "report.html";

    void write_results(const std::vector<std::string>& lines)
    {
        std::string text;
        for (const auto& l : lines) text += l + "\n";
        write_text(results, text);
    }

    /// The report on `results` into `page`; fails the test unless it exits 0.
    std::string report(std::vector<std::string> extra = {})
    {
        std::vector<std::string> args{"report", results.string(), "-o", page.string()};
        args.insert(args.end(), extra.begin(), extra.end());
        auto r = run_cli(std::move(args));
        BOOST_TEST_REQUIRE(r.code == 0, r.err);
        last_err = r.err;
        return read_text(page);
    }

    /// Files in the directory besides the results and the page (a temporary left behind).
    std::vector<std::string> leftovers() const
    {
        std::vector<std::string> out;
        for (const auto& e : std::filesystem::directory_iterator(dir.path))
            if (e.path() != results && e.path() != page) out.push_back(e.path().filename().string());
        return out;
    }

    std::string last_err;
};

/// Where a program is on PATH, or empty.
std::string on_path(const std::string& name)
{
    const char* path = std::getenv("PATH");
    std::string_view rest = path ? path : "/usr/bin:/bin";
    while (!rest.empty()) {
        const auto colon = rest.find(':');
        const std::filesystem::path candidate = std::filesystem::path(rest.substr(0, colon)) / name;
        if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
        rest.remove_prefix(colon == std::string_view::npos ? rest.size() : colon + 1);
    }
    return {};
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(cli_report, report_fixture)

BOOST_AUTO_TEST_CASE(summary_counts_times_and_one_row_per_slot)
{
    write_results(six_jobs());
    const auto html = report();
    BOOST_TEST(last_err.empty(), last_err);
    BOOST_TEST(html.starts_with("<!DOCTYPE html>"));
    BOOST_TEST(html.find("</html>") != std::string::npos);
    // Only the jobs that ran to their end have durations: 0.4, 1, 1.5 and 2 s.
    const std::vector<std::pair<std::string, std::string>> expected{
        {"jobs", "6"},           {"succeeded", "2"},          {"failed", "1"},      {"timed out", "1"},
        {"errors", "1"},         {"cancelled", "1"},          {"wall time", "3.000 s"}, {"jobs/s", "2.0"},
        {"total duration", "4.900 s"}, {"mean", "1.225 s"},   {"median", "1.000 s"}, {"p95", "2.000 s"},
        {"most at once", "3"}};
    for (const auto& [name, value] : expected) BOOST_TEST(summary(html, name) == value, name);
    BOOST_TEST(count(html, "<g class=\"slot\">") == 3u);
    // Every job has a bar with a tooltip; a failure's tooltip says how it ended.
    BOOST_TEST(count(html, "<rect class=\"bar o") >= 6u);
    BOOST_TEST(html.find("<title>b (line 2): 1.500 s, exit 3; from 0.500 s</title>") != std::string::npos);
    BOOST_TEST(html.find("timed out (wall)") != std::string::npos);
    // The failed jobs with their error or the last line of stderr, escaped.
    BOOST_TEST(html.find("last &lt;b&gt;line&lt;/b&gt; &amp; more") != std::string::npos);
    BOOST_TEST(html.find("cannot start: &lt;b&gt;no&lt;/b&gt; such command") != std::string::npos);
    BOOST_TEST(html.find("warming up") == std::string::npos);
    BOOST_TEST(html.find("linear bins") != std::string::npos);
    BOOST_TEST(html.find("Slowest jobs") != std::string::npos);
    check_self_contained(html);
    BOOST_TEST(leftovers().empty());
}

BOOST_AUTO_TEST_CASE(failures_come_first_grouped_by_how_they_ended_largest_first)
{
    auto error = [](const std::string& id, int line, const std::string& text) {
        json::object o;
        o["id"] = id;
        o["line"] = line;
        o["error"] = text;
        return json::serialize(o);
    };
    std::vector<std::string> lines{result("ok", 1, 0, 1, kind::ok),
                                   result("t1", 2, 0, 1, kind::timeout),
                                   result("f1", 3, 0, 1, kind::fail, "one\n"),
                                   error("e1", 4, "Failed to start docker: no such image"),
                                   result("f2", 5, 0, 1, kind::fail, "two\n"),
                                   error("e2", 6, "Failed to start docker: no such file"),
                                   result("f3", 7, 0, 1, kind::fail, "three\n")};
    write_results(lines);
    const auto html = report();
    const auto failures = html.find("<h2>Failures</h2>");
    BOOST_TEST_REQUIRE(failures != std::string::npos);
    BOOST_TEST(failures < html.find("<h2>Timeline"));
    BOOST_TEST(failures < html.find("<h2>Slowest jobs</h2>"));
    BOOST_TEST(html.find("6 jobs did not succeed, in 3 groups") != std::string::npos);
    // exit 3 (three jobs), then the docker start failures (two), then the timeout (one).
    const auto exit3 = html.find("</i>exit 3 <span class=\"sub\">failed, 3 jobs (");
    const auto docker = html.find("</i>Failed to start docker <span class=\"sub\">error, 2 jobs (");
    const auto late = html.find("</i>timed out (wall) <span class=\"sub\">timed out, 1 job (");
    BOOST_TEST_REQUIRE(exit3 != std::string::npos, html);
    BOOST_TEST_REQUIRE(docker != std::string::npos);
    BOOST_TEST_REQUIRE(late != std::string::npos);
    BOOST_TEST(exit3 < docker);
    BOOST_TEST(docker < late);
    // Each job under its group, in file order, with its own detail.
    BOOST_TEST(html.find("one</td>") > exit3);
    BOOST_TEST(html.find("one</td>") < html.find("three</td>"));
    BOOST_TEST(html.find("three</td>") < docker);
    BOOST_TEST(html.find("no such image</td>") > docker);
    BOOST_TEST(html.find("no such file</td>") < late);
    check_self_contained(html);
}

BOOST_AUTO_TEST_CASE(slots_are_the_most_jobs_at_once)
{
    // Twelve jobs one after another in a single slot, then five that overlap at 20.5 s, and
    // jobs that start exactly when another ends reuse its slot.
    std::vector<std::string> lines;
    for (int i = 0; i < 12; ++i) lines.push_back(result(i, i + 1, i, i + 1, kind::ok));
    for (int i = 0; i < 5; ++i) lines.push_back(result(100 + i, 13 + i, 20 + 0.1 * i, 21 + 0.1 * i, kind::ok));
    write_results(lines);
    const auto html = report();
    BOOST_TEST(summary(html, "most at once") == "5");
    BOOST_TEST(count(html, "<g class=\"slot\">") == 5u);

    // Beyond 100 slots, the rest are left out, and the page says so.
    lines.clear();
    for (int i = 0; i < 150; ++i) lines.push_back(result(i, i + 1, 0.01 * i, 10, kind::ok));
    write_results(lines);
    const auto crowded = report();
    BOOST_TEST(summary(crowded, "most at once") == "150");
    BOOST_TEST(count(crowded, "<g class=\"slot\">") == 100u);
    BOOST_TEST(crowded.find("Only the first 100 of 150 slots are drawn: 50 jobs") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(every_text_from_the_input_is_escaped)
{
    auto lines = six_jobs("<script>alert(1)</script>");
    lines.push_back(result("\"><svg onload=alert(2)>", 7, 0, 0.5, kind::fail, "</td></tr></table><h1>x</h1>\n"));
    write_results(lines);
    const auto html = report({"--title", "<i>title</i> & co"});
    BOOST_TEST(html.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
    BOOST_TEST(html.find("&quot;&gt;&lt;svg onload=alert(2)&gt;") != std::string::npos);
    BOOST_TEST(html.find("&lt;/td&gt;&lt;/tr&gt;&lt;/table&gt;&lt;h1&gt;x&lt;/h1&gt;") != std::string::npos);
    BOOST_TEST(html.find("<title>&lt;i&gt;title&lt;/i&gt; &amp; co</title>") != std::string::npos);
    BOOST_TEST(html.find("<i>title") == std::string::npos);
    BOOST_TEST(html.find("<svg onload") == std::string::npos);
    BOOST_TEST(count(html, "<h1>") == 1u);
    check_self_contained(html);
}

BOOST_AUTO_TEST_CASE(bad_lines_are_skipped_counted_and_named)
{
    write_text(results, result("a", 1, 0, 1, kind::ok) + "\nnot json\n[1,2]\n\n{\"foo\":1}\n" +
                            result("b", 6, 0, 2, kind::fail) + "\n");
    const auto html = report();
    const auto warnings = lines_of(last_err);
    BOOST_TEST_REQUIRE(warnings.size() == 3u, last_err);
    BOOST_TEST(warnings[0].starts_with("sandbox-run report: " + results.string() + ":2: not JSON"), warnings[0]);
    BOOST_TEST(warnings[1].starts_with("sandbox-run report: " + results.string() + ":3: not a JSON object"));
    BOOST_TEST(warnings[2].starts_with("sandbox-run report: " + results.string() + ":5: not a result line"));
    BOOST_TEST(summary(html, "jobs") == "2");
    BOOST_TEST(html.find("3 lines skipped") != std::string::npos);
}

// `--resume R >> R` appends the rerun of a cancelled job after its cancellation: one job,
// counted by its last result.
BOOST_AUTO_TEST_CASE(each_id_counts_once_by_its_last_result)
{
    write_results({result("a", 1, 0, 1, kind::ok), result("b", 2, 0, 1, kind::cancelled),
                   result("c", 3, 0, 1, kind::fail), result("b", 2, 2, 3, kind::ok), result("c", 3, 2, 4, kind::ok)});
    const auto html = report();
    BOOST_TEST(last_err.empty(), last_err);
    BOOST_TEST(summary(html, "jobs") == "3");
    BOOST_TEST(summary(html, "succeeded") == "3");
    BOOST_TEST(summary(html, "cancelled") == "0");
    BOOST_TEST(summary(html, "failed") == "0");
    BOOST_TEST(html.find("2 earlier results of an id replaced by its last") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(an_empty_file_gives_a_page_saying_no_jobs)
{
    write_text(results, "");
    const auto html = report();
    BOOST_TEST(summary(html, "jobs") == "0");
    BOOST_TEST(html.find("No jobs") != std::string::npos);
    BOOST_TEST(html.find("</html>") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(results_without_times_are_placed_by_duration_only)
{
    write_results({result("a", 1, 0, 1, kind::ok, "", false), result("b", 2, 0, 3, kind::fail, "oops\n", false)});
    const auto html = report();
    BOOST_TEST(summary(html, "jobs") == "2");
    BOOST_TEST(summary(html, "wall time") == "?");
    BOOST_TEST(html.find("No timeline: it needs <code>started_at</code> and <code>ended_at</code>") !=
               std::string::npos);
    BOOST_TEST(count(html, "<g class=\"slot\">") == 0u);
    BOOST_TEST(summary(html, "median") == "1.000 s");
    BOOST_TEST(html.find("<td>b</td><td class=\"num\">2</td><td class=\"num\">3.000 s</td>") != std::string::npos);

    // Old lines beside new ones: the new ones make the timeline, the page counts the others.
    write_results({result("a", 1, 0, 1, kind::ok, "", false), result("b", 2, 0, 3, kind::fail, "oops\n", false),
                   result("c", 3, 0, 2, kind::ok)});
    const auto mixed = report();
    BOOST_TEST(summary(mixed, "jobs") == "3");
    BOOST_TEST(summary(mixed, "wall time") == "2.000 s");
    BOOST_TEST(count(mixed, "<g class=\"slot\">") == 1u);
    BOOST_TEST(mixed.find("2 jobs have no started_at/ended_at and are not on the timeline") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(one_job_is_counted_as_one_job_not_one_jobs)
{
    // One timed result, one without times, one line that is not a result: each count is 1.
    write_results({result("a", 1, 0, 1, kind::ok), result("b", 2, 0, 3, kind::fail, "", false), "not a result"});
    const auto html = report();
    BOOST_TEST(html.find(": 2 jobs, 1 line skipped as not result lines") != std::string::npos);
    BOOST_TEST(html.find("1 job has no started_at/ended_at and is not on the timeline") != std::string::npos);
    write_results({result("a", 1, 0, 1, kind::ok)});
    const auto one = report();
    BOOST_TEST(one.find(": 1 job.</p>") != std::string::npos);
    BOOST_TEST(one.find(">1 job in ") != std::string::npos);  // the histogram's caption
    BOOST_TEST(one.find(": 1 job, 1 succeeded") != std::string::npos);  // its bar
    BOOST_TEST(one.find("1 jobs") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_results_of_a_real_batch)
{
    write_text(dir.path / "jobs.jsonl",
               job({"echo", "hi"}, R"("id":"a")") + "\n" + job({"sh", "-c", "echo bad >&2; exit 3"}) + "\n" + "{}\n");
    const auto b = run_cli({"--batch", (dir.path / "jobs.jsonl").string(), "-o", results.string()});
    BOOST_TEST_REQUIRE(b.code == 1, b.err);
    const auto html = report();
    BOOST_TEST(last_err.empty(), last_err);
    BOOST_TEST(summary(html, "jobs") == "3");
    BOOST_TEST(summary(html, "succeeded") == "1");
    BOOST_TEST(summary(html, "failed") == "1");
    BOOST_TEST(summary(html, "errors") == "1");
    BOOST_TEST(html.find("<td class=\"text\">bad</td>") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(output_to_stdout_a_file_or_a_device)
{
    write_results(six_jobs());
    for (const std::vector<std::string>& args : {std::vector<std::string>{"report", results.string()},
                                                 {"report", results.string(), "-o", "-"},
                                                 {"report", "-", "--title=From stdin"}}) {
        cli_options o;
        if (args[1] == "-") o.input = read_text(results);
        auto r = run_cli(args, std::move(o));
        BOOST_TEST(r.code == 0, r.err);
        BOOST_TEST(r.out.starts_with("<!DOCTYPE html>"));
        BOOST_TEST(summary(r.out, "jobs") == "6");
    }
    BOOST_TEST(run_cli({"report", "-", "--title=From stdin"}, read_text(results)).out.find("<h1>From stdin</h1>") !=
               std::string::npos);
    for (const auto& flag : {std::string("--output=") + page.string(), "-o" + page.string()}) {
        std::filesystem::remove(page);
        auto r = run_cli({"report", results.string(), flag});
        BOOST_TEST(r.code == 0, r.err);
        BOOST_TEST(r.out.empty());
        BOOST_TEST(summary(read_text(page), "jobs") == "6");
    }
    BOOST_TEST(run_cli({"report", results.string(), "-o", "/dev/null"}).code == 0);
    BOOST_TEST(leftovers().empty());
}

BOOST_AUTO_TEST_CASE(bad_usage_and_unreadable_files_exit_2)
{
    write_results(six_jobs());
    const auto missing = (dir.path / "missing.jsonl").string();
    struct bad {
        std::vector<std::string> args;
        std::string says;
    };
    for (const auto& b : std::vector<bad>{
             {{"report", missing}, missing + ": cannot open it"},
             {{"report", dir.path.string()}, dir.path.string() + ": is a directory"},
             {{"report"}, "no results file"},
             {{"report", results.string(), results.string()}, "one results file only"},
             {{"report", results.string(), "--bogus"}, "unknown option --bogus"},
             {{"report", results.string(), "-o"}, "-o needs a value"},
             {{"report", results.string(), "-o", (dir.path / "no/such/dir/r.html").string()}, "cannot create a file"},
             {{"report", results.string(), "-o", dir.path.string()}, "cannot write it"},
             {{"report", results.string(), "-o", results.string()}, "is the results file"},
         }) {
        auto r = run_cli(b.args);
        BOOST_TEST(r.code == 2, b.says << ": " << r.err);
        BOOST_TEST(r.out.empty());
        BOOST_TEST(lines_of(r.err).size() == 1u, r.err);
        BOOST_TEST(r.err.starts_with("sandbox-run report: "), r.err);
        BOOST_TEST(r.err.find(b.says) != std::string::npos, r.err);
    }
    BOOST_TEST(!std::filesystem::exists(page));
    BOOST_TEST(leftovers().empty());

    auto h = run_cli({"report", "--help"});
    BOOST_TEST(h.code == 0);
    BOOST_TEST(h.out.starts_with("Usage: sandbox-run report"));
    for (const char* flag : {"--output", "--title", "started_at", "ended_at"})
        BOOST_TEST(h.out.find(flag) != std::string::npos, flag);
    BOOST_TEST(run_cli({"report", "-h"}).out == h.out);
}

BOOST_AUTO_TEST_CASE(many_jobs_make_a_bounded_page)
{
    // 20,000 jobs in 8 slots: most are merged into strips, the page stays small.
    std::string text;
    std::vector<double> free_at(8, 0);
    for (int i = 0; i < 20000; ++i) {
        auto& slot = free_at[static_cast<std::size_t>(i % 8)];
        const double d = i % 97 == 0 ? 2.0 : 0.01 + 0.001 * (i % 13);
        text += result(i, i + 1, slot, slot + d, i % 10 == 3 ? kind::fail : kind::ok, "boom\n") + "\n";
        slot += d;
    }
    write_text(results, text);
    const auto started = std::chrono::steady_clock::now();
    const auto html = report();
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    BOOST_TEST(summary(html, "jobs") == "20000");
    BOOST_TEST(summary(html, "failed") == "2000");
    BOOST_TEST(summary(html, "most at once") == "8");
    BOOST_TEST(count(html, "<g class=\"slot\">") == 8u);
    BOOST_TEST(html.size() < 3u * 1024 * 1024, html.size());
    BOOST_TEST(count(html, "<rect class=\"bar o") < 12000u);
    BOOST_TEST(html.find("are merged into strips") != std::string::npos);
    // The 2,000 failures are one group (exit 3) with its first ten jobs listed.
    BOOST_TEST(html.find("2000 jobs did not succeed, in 1 group") != std::string::npos);
    BOOST_TEST(html.find("and 1990 more") != std::string::npos);
    BOOST_TEST(count(html, "<td class=\"text\">boom</td>") == 10u);
    // The 2 s jobs are far above the others' 10-22 ms.
    std::size_t long_ones = 0;
    for (int i = 0; i < 20000; ++i) long_ones += i % 97 == 0;
    BOOST_TEST(summary(html, "outliers") == std::to_string(long_ones) + " ");
    BOOST_TEST(count(html, "<tr class=\"outlier\">") == 20u);
    BOOST_TEST(took < (sanitized() ? 60 : 20), took);
    check_self_contained(html);
}

BOOST_AUTO_TEST_CASE(a_browser_draws_the_timeline, *boost::unit_test::timeout(600))
{
    std::string browser;
    for (const char* name : {"chromium", "chromium-browser", "google-chrome"})
        if (browser = on_path(name); !browser.empty()) break;
    if (browser.empty()) {
        const char* why = "no chromium on PATH (scripts/install-deps.sh installs it)";
        if (running_in_ci()) BOOST_FAIL(why << ", and CI=true forbids skipping");
        BOOST_TEST_MESSAGE("SKIPPED: " << why);
        BOOST_WARN_MESSAGE(false, "SKIPPED: " << why);
        return;
    }
    write_results(six_jobs());
    report();
    const auto shot = dir.path / "shot.png";
    auto runner = make_runner(tool_policy({{"HOME", dir.path.string()}}).with_timeout(300s), driver::host);
    // --no-sandbox: the tests may run as root, where Chromium's own sandbox refuses to start.
    const auto r = run_sync(*runner, {browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                                      "--force-device-scale-factor=1",
                                      "--user-data-dir=" + (dir.path / "profile").string(), "--window-size=1200,2400",
                                      "--screenshot=" + shot.string(), "file://" + page.string()});
    BOOST_TEST_REQUIRE(std::filesystem::exists(shot), "no screenshot; exit " << r.exit_code << ": " << r.err);

    auto py = run_sync(*make_runner(tool_policy(), driver::host),
                       {"python3", std::string(build::source_dir()) + "/test/tools/png_colours.py", shot.string(), green,
                        red, amber});
    BOOST_TEST_REQUIRE(py.exit_code == 0, py.err);
    std::map<std::string, long> pixels;
    for (const auto& line : lines_of(py.out)) {
        const auto space = line.find(' ');
        if (line.starts_with("size")) BOOST_TEST(line == "size 1200x2400");
        else pixels[line.substr(0, space)] = std::stol(line.substr(space + 1));
    }
    // The timeline is 1000 px for 3 s, rows 16 px high: a and d (3 s of green) make about
    // 16,000 px, b (1.5 s red) 8,000, c 2,100; the histogram adds at most 5,600 per job.
    BOOST_TEST(pixels[green] > 20000, pixels[green]);
    BOOST_TEST(pixels[red] > 10000, pixels[red]);
    BOOST_TEST(pixels[amber] > 6500, pixels[amber]);
}

BOOST_AUTO_TEST_SUITE_END()
