// SPDX-License-Identifier: BSL-1.0
// The values of flags as users of GNU tools type them: sizes with a fraction and any suffix,
// values below a flag's minimum refused, durations in days, -j as GNU parallel takes it, and
// --halt with a share of the jobs.
#include "cli_support.hpp"

#include <boost/json/parse.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <thread>

using namespace sandbox;
using namespace sandbox::test;
namespace json = boost::json;

namespace {

json::object show_policy(std::vector<std::string> args)
{
    args.insert(args.begin(), "--show-policy");
    auto r = run_cli(std::move(args));
    BOOST_TEST_REQUIRE(r.code == 0, "stderr: " << r.err);
    auto v = json::parse(r.out);
    BOOST_TEST_REQUIRE(v.is_object());
    return v.as_object();
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A refused invocation: exit 2, nothing on stdout, and its one line on stderr.
std::string refused(std::vector<std::string> args, std::string input = "")
{
    auto r = run_cli(std::move(args), std::move(input));
    BOOST_TEST(r.code == 2, "exit " << r.code << ", stderr: " << r.err);
    BOOST_TEST(r.out.empty());
    const auto lines = lines_of(r.err);
    BOOST_TEST_REQUIRE(lines.size() == 1u, "stderr: " << r.err);
    BOOST_TEST(lines[0].starts_with("sandbox-run: "), lines[0]);
    return lines[0];
}

std::string memory_of(const std::string& size) { return std::string(show_policy({"--memory", size}).at("memory_limit").as_string()); }

double timeout_of(const std::string& d) { return show_policy({"--timeout", d}).at("timeout_seconds").to_number<double>(); }

unsigned cpus()
{
    const unsigned n = std::thread::hardware_concurrency();
    return n > 0 ? n : 2;
}

// The summary: the stderr line with " jobs: " in it.
std::string summary_in(const std::string& err)
{
    for (const auto& l : lines_of(err))
        if (has(l, " jobs: ")) return l;
    BOOST_TEST_REQUIRE(false, "no summary in: " << err);
    return {};
}

// `n` job lines that each succeed only once all `n` run at the same time: each leaves a mark
// in `dir` and waits (up to 20 s) for the others' marks.
std::string rendezvous_jobs(const std::filesystem::path& dir, unsigned n)
{
    std::string text;
    const std::string script = "touch \"$0/$1\"; i=0; while [ \"$(ls \"$0\" | wc -l)\" -lt " + std::to_string(n) +
                               " ]; do i=$((i+1)); [ $i -gt 400 ] && exit 3; sleep 0.05; done";
    for (unsigned i = 0; i < n; ++i) text += job({"sh", "-c", script, dir.string(), "j" + std::to_string(i)}) + "\n";
    return text;
}

// Runs `n` rendezvous jobs with `jobs_flag` (e.g. "-j 0"): true when all of them succeeded.
bool all_ran_at_once(unsigned n, const std::vector<std::string>& jobs_flag)
{
    temp_dir dir;
    const auto marks = dir.path / "marks";
    std::filesystem::create_directory(marks);
    const auto file = dir.path / "jobs.jsonl";
    write_text(file, rendezvous_jobs(marks, n));
    std::vector<std::string> args{"--batch", file.string(), "--timeout", "60"};
    args.insert(args.end(), jobs_flag.begin(), jobs_flag.end());
    auto r = run_cli(args);
    BOOST_TEST(r.code == 0, "-j " << jobs_flag.back() << " with " << n << " jobs: " << r.err);
    BOOST_TEST(json_lines(r.out).size() == n);
    return r.code == 0;
}

// 20 job lines: the first three fail, the others succeed.
std::string three_failures_in_twenty()
{
    std::string text;
    for (int i = 1; i <= 20; ++i) text += job({i <= 3 ? "false" : "true"}, "\"id\":" + std::to_string(i)) + "\n";
    return text;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cli_values)

// ---- sizes -------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(a_size_below_the_minimum_is_refused_naming_the_flag_the_value_and_the_minimum)
{
    struct below {
        std::vector<std::string> args;
        std::string flag, minimum;
    };
    const std::vector<below> cases{
        {{"--memory", "0"}, "--memory", "1M"},
        {{"--memory", "512K"}, "--memory", "1M"},
        {{"--disk", "0"}, "--disk", "1M"},
        {{"--stdout-cap", "10"}, "--stdout-cap", "1K"},
        {{"--stderr-cap", "1023"}, "--stderr-cap", "1K"},
        {{"--stdout-cap", "0"}, "--stdout-cap", "1K"},
    };
    for (const auto& c : cases) {
        auto args = c.args;
        args.insert(args.end(), {"--", "true"});
        const auto line = refused(args);
        BOOST_TEST(has(line, c.flag), line);
        BOOST_TEST(has(line, "'" + c.args[1] + "'"), line);
        BOOST_TEST(has(line, "minimum of " + c.minimum), line);
    }
    const auto line = refused({"--batch", "-", "--max-line", "0"});
    BOOST_TEST(has(line, "--max-line"), line);
    BOOST_TEST(has(line, "minimum of 1 byte"), line);
    // At the minimum: taken as it is.
    BOOST_TEST(memory_of("1M") == "1M");
    BOOST_TEST(show_policy({"--stdout-cap", "1K"}).at("stdout_limit_bytes").to_number<std::uint64_t>() == 1024u);
    BOOST_TEST(show_policy({"--stderr-cap", "1024"}).at("stderr_limit_bytes").to_number<std::uint64_t>() == 1024u);
}

BOOST_AUTO_TEST_CASE(none_lifts_the_disk_limit_and_is_refused_for_the_memory_limit_saying_why)
{
    BOOST_TEST(show_policy({"--disk", "1G", "--disk", "none"}).at("disk_limit").is_null());
    BOOST_TEST(show_policy({"--disk", "1G", "--disk", "NONE"}).at("disk_limit").is_null());
    BOOST_TEST(show_policy({"--disk", "1G", "--disk", "off"}).at("disk_limit").is_null());
    for (const char* v : {"none", "off"}) {
        const auto line = refused({"--memory", v, "--", "true"});
        BOOST_TEST(has(line, "--memory"), line);
        BOOST_TEST(has(line, std::string("'") + v + "'"), line);
        BOOST_TEST(has(line, "always has a memory limit"), line);
    }
    for (const char* flag : {"--stdout-cap", "--stderr-cap"}) {
        const auto line = refused({flag, "none", "--", "true"});
        BOOST_TEST(has(line, flag), line);
    }
}

BOOST_AUTO_TEST_CASE(sizes_take_a_fraction_any_case_and_KB_MB_GB_TB_as_powers_of_1024)
{
    BOOST_TEST(memory_of("1.5G") == "1536M");
    BOOST_TEST(memory_of("512MB") == "512M");
    BOOST_TEST(memory_of("512MiB") == "512M");
    BOOST_TEST(memory_of("512mib") == "512M");
    BOOST_TEST(memory_of("1GB") == "1024M");
    BOOST_TEST(memory_of("1gb") == "1024M");
    BOOST_TEST(memory_of("2g") == "2048M");
    BOOST_TEST(memory_of("1T") == "1048576M");
    BOOST_TEST(memory_of("0.5TiB") == "524288M");
    BOOST_TEST(memory_of("1572864K") == "1536M");
    BOOST_TEST(memory_of("1500K") == "1M");  // whole MiB, rounded down
    BOOST_TEST(show_policy({"--disk", "0.25g"}).at("disk_limit").as_string() == "256M");
    BOOST_TEST(show_policy({"--stdout-cap", "1.5k"}).at("stdout_limit_bytes").to_number<std::uint64_t>() == 1536u);
    BOOST_TEST(show_policy({"--stderr-cap", "64KiB"}).at("stderr_limit_bytes").to_number<std::uint64_t>() == 65536u);
    BOOST_TEST(show_policy({"--stdout-cap", "2kb"}).at("stdout_limit_bytes").to_number<std::uint64_t>() == 2048u);

    for (const char* bad : {"1.5", "1.G", ".5G", "1.5Q", "1P", "1e3M", "1,5G", "1 G", "-1G", "0x10M",
                            "1.1234567891G"}) {
        const auto line = refused({"--memory", bad, "--", "true"});
        BOOST_TEST(has(line, "--memory: invalid size '" + std::string(bad) + "'"), line);
    }
}

// ---- durations ---------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(durations_take_days_as_gnu_timeout_does)
{
    BOOST_TEST(timeout_of("1d") == 86400.0);
    BOOST_TEST(timeout_of("1D") == 86400.0);
    BOOST_TEST(timeout_of("1.5d") == 129600.0);
    BOOST_TEST(timeout_of("1h") == 3600.0);
    BOOST_TEST(timeout_of("90m") == 5400.0);
    BOOST_TEST(timeout_of("1.5s") == 1.5);
    BOOST_TEST(timeout_of("500ms") == 0.5);
    BOOST_TEST(show_policy({"--idle-timeout", "2d"}).at("idle_timeout_seconds").to_number<double>() == 172800.0);
    for (const char* bad : {"1w", "1dd", "d", "1y"}) {
        const auto line = refused({"--timeout", bad, "--", "true"});
        BOOST_TEST(has(line, "--timeout"), line);
    }
}

// ---- -j ----------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(jobs_0_runs_every_job_of_the_file_at_once)
{
    BOOST_TEST(all_ran_at_once(cpus() + 3, {"-j", "0"}));
}

BOOST_AUTO_TEST_CASE(jobs_take_a_percentage_of_the_cpus_and_plus_or_minus_n)
{
    BOOST_TEST(all_ran_at_once(2 * cpus(), {"-j", "200%"}));
    BOOST_TEST(all_ran_at_once(cpus() + 2, {"--jobs=+2"}));
    BOOST_TEST(all_ran_at_once(1, {"-j", "-1"}));  // at least 1
    BOOST_TEST(all_ran_at_once(1, {"-j", "-1000"}));
    BOOST_TEST(all_ran_at_once(1, {"-j", "1%"}));

    for (const char* bad : {"%", "+", "-", "50%x", "1.5", "x%", "10001", "+10000", "many"}) {
        const auto line = refused({"--batch", "-", "-j", bad});
        BOOST_TEST(has(line, "-j"), line);
        BOOST_TEST(has(line, std::string("'") + bad + "'"), line);
    }
}

// ---- --halt fail=X% ----------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(halt_on_a_share_of_the_jobs_ended_so_far_once_ten_have_ended)
{
    temp_dir dir;
    const auto file = dir.path / "jobs.jsonl";
    write_text(file, three_failures_in_twenty());
    // 3 of the first 10 failed: 30%. Judged at the 10th (a success), not at the first failure.
    auto r = run_cli({"--batch", file.string(), "-j", "1", "--halt", "now,fail=25%"});
    BOOST_TEST(r.code == 1, r.err);
    BOOST_TEST(json_lines(r.out).size() == 10u, r.out);
    auto s = summary_in(r.err);
    BOOST_TEST(has(s, "halted after 3 failures in 10 jobs (--halt now,fail=25%)"), s);
    BOOST_TEST(has(s, "10 not run"), s);

    // The same from a stream, whose length is not known.
    r = run_cli({"--batch", "-", "-j", "1", "--halt", "soon,fail=25%"}, three_failures_in_twenty());
    BOOST_TEST(r.code == 1, r.err);
    BOOST_TEST(json_lines(r.out).size() == 10u, r.out);
    BOOST_TEST(has(summary_in(r.err), "halted after 3 failures in 10 jobs (--halt soon,fail=25%)"), r.err);

    // 30% is below 50%, and the share only falls after: every job runs.
    r = run_cli({"--batch", file.string(), "-j", "1", "--halt", "now,fail=50%"});
    BOOST_TEST(r.code == 1, r.err);
    BOOST_TEST(json_lines(r.out).size() == 20u);
    BOOST_TEST(!has(r.err, "halted"), r.err);
    BOOST_TEST(has(summary_in(r.err), "0 not run"), r.err);

    // A fraction.
    r = run_cli({"--batch", file.string(), "-j", "1", "--halt", "now,fail=12.5%"});
    BOOST_TEST(has(summary_in(r.err), "halted after 3 failures in 10 jobs (--halt now,fail=12.5%)"), r.err);
}

BOOST_AUTO_TEST_CASE(halt_shares_out_of_range_are_bad_usage_and_never_still_works)
{
    for (const char* spec : {"now,fail=0%", "now,fail=101%", "now,fail=%", "soon,fail=-5%", "soon,fail=1x%",
                             "now,fail=10%%", "never,fail=10%"}) {
        const auto line = refused({"--batch", "-", "--halt", spec});
        BOOST_TEST(has(line, "--halt"), line);
    }
    auto r = run_cli({"--batch", "-", "--halt", "never"}, three_failures_in_twenty());
    BOOST_TEST(r.code == 1, r.err);
    BOOST_TEST(json_lines(r.out).size() == 20u);
    BOOST_TEST(!has(r.err, "halted"), r.err);
    r = run_cli({"--batch", "-", "--halt", "now,fail=100%"}, job({"true"}) + "\n");
    BOOST_TEST(r.code == 0, r.err);
}

BOOST_AUTO_TEST_SUITE_END()
