// SPDX-License-Identifier: BSL-1.0
// `sandbox-run --driver slurm` as a user runs it: one command with its streams and exit
// code, stdin streamed to the node as it comes, a batch of 200 jobs, and the same inside a
// `salloc` allocation, where the command is a step of it.
#include "../cli/cli_support.hpp"

#include <boost/json/parse.hpp>
#include <boost/test/unit_test.hpp>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

using namespace sandbox;
using namespace sandbox::test;
namespace json = boost::json;

namespace {

// The tool's environment: the node program it starts is this build's.
env_list slurm_env_vars() { return {{"SANDBOX_RUN_BIN", tool()}}; }

cli_options slurm_cli_options(std::optional<std::string> input = std::nullopt)
{
    cli_options o;
    o.env = slurm_env_vars();
    o.input = std::move(input);
    return o;
}

// Whether the tool runs a command through the cluster here; a loud skip otherwise, a
// failure under CI=true.
bool cli_slurm_ready()
{
    static const std::optional<std::string> why = []() -> std::optional<std::string> {
        const auto r = run_cli({"--driver", "slurm", "--timeout", "60", "--", "true"}, slurm_cli_options());
        if (r.code == 0) return std::nullopt;
        return "sandbox-run --driver slurm -- true exited " + std::to_string(r.code) + ": " + r.err;
    }();
    if (!why) return true;
    if (running_in_ci()) BOOST_ERROR(*why << "; CI=true forbids skipping (scripts/setup-slurm.sh starts the cluster)");
    else BOOST_WARN_MESSAGE(false, "SKIPPED: slurm cannot run here: " << *why);
    return false;
}

#define SANDBOX_REQUIRE_CLI_SLURM()                                                                                    \
    do {                                                                                                               \
        if (!cli_slurm_ready()) return;                                                                                \
    } while (0)

std::string str(const json::value& v) { return std::string(v.as_string()); }

// What `squeue -h -j <id>` lists (empty once the job has left the queue).
std::string squeue_job(const std::string& id)
{
    auto runner = make_runner(tool_policy(), driver::host);
    return run_sync(*runner, {"squeue", "-h", "-j", id}).out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(slurm_cli)

BOOST_AUTO_TEST_CASE(one_command_keeps_its_streams_and_exit_code)
{
    SANDBOX_REQUIRE_CLI_SLURM();
    auto r = run_cli({"--driver", "slurm", "--", "sh", "-c", "echo out; echo err >&2; exit 3"}, slurm_cli_options());
    BOOST_TEST(r.code == 3, r.out << r.err);
    BOOST_TEST(r.out == "out\n");
    BOOST_TEST(r.err == "err\n");

    // A stderr without its final newline, as it is.
    r = run_cli({"--driver", "slurm", "--", "sh", "-c", "printf out; printf err >&2; exit 3"}, slurm_cli_options());
    BOOST_TEST(r.code == 3, r.out << r.err);
    BOOST_TEST(r.out == "out");
    BOOST_TEST(r.err == "err");

    // --json: the result as the library gives it, with the driver's name.
    r = run_cli({"--driver", "slurm", "--json", "--", "sh", "-c", "echo hi; kill -9 $$"}, slurm_cli_options());
    BOOST_TEST(r.code == 137, r.out << r.err);
    const auto o = json::parse(r.out).as_object();
    BOOST_TEST(str(o.at("stdout")) == "hi\n");
    BOOST_TEST(str(o.at("stderr")) == "");
    BOOST_TEST(o.at("exit_code").to_number<int>() == 137);
    BOOST_TEST(str(o.at("driver")) == "slurm");
    BOOST_TEST(o.at("caps").as_object().at("filesystem_confined").as_bool());
}

BOOST_AUTO_TEST_CASE(stdin_is_streamed_to_the_node_as_it_comes)
{
    SANDBOX_REQUIRE_CLI_SLURM();
    // All at once, larger than a pipe.
    std::string input;
    for (int i = 0; i < 20000; ++i) input += "line " + std::to_string(i) + "\n";
    auto counted = run_cli({"--driver", "slurm", "--", "sh", "-c", "wc -l; echo end"}, slurm_cli_options(input));
    BOOST_TEST(counted.code == 0, counted.err);
    BOOST_TEST(counted.out == "20000\nend\n");

    // As it comes: the second line is written only once the command has answered the first.
    temp_dir dir;
    const auto answered = dir.path / "answered";
    bool seen_one = false;
    cli_options o;
    o.env = slurm_env_vars();
    o.on_output = [&](stream_kind k, std::string_view chunk) {
        if (k != stream_kind::out || seen_one || chunk.find("got-one") == std::string_view::npos) return;
        seen_one = true;
        std::ofstream{answered} << "yes\n";
    };
    const std::string producer =
        "echo one; i=0; while [ ! -e \"$1\" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done; "
        "if [ -e \"$1\" ]; then echo released >&2; else echo gave-up >&2; fi; echo two";
    auto runner = make_runner(tool_policy(o.env), driver::host);
    const auto r = run_sync(*runner,
                            {"sh", "-c",
                             "{ " + producer + "; } | \"$0\" --driver slurm --timeout 60 -- "
                             "sh -c 'while read -r l; do echo got-$l; done'",
                             tool(), answered.string()},
                            std::nullopt, o.on_output);
    BOOST_TEST(r.exit_code == 0, r.out << r.err);
    BOOST_TEST(seen_one);
    BOOST_TEST(r.out == "got-one\ngot-two\n");
    BOOST_TEST(r.err == "released\n");
}

BOOST_AUTO_TEST_CASE(a_batch_of_200_jobs_gives_every_result)
{
    SANDBOX_REQUIRE_CLI_SLURM();
    temp_dir dir;
    const auto jobs = dir.path / "jobs.jsonl";
    const auto results_file = dir.path / "results.jsonl";
    constexpr int n = 200;
    std::string text;
    for (int i = 0; i < n; ++i)
        text += job({"sh", "-c", "echo out-$0; echo err-$0 >&2", std::to_string(i)},
                    "\"id\":\"j" + std::to_string(i) + "\"") +
                "\n";
    write_text(jobs, text);
    cli_options o = slurm_cli_options();
    o.timeout = 600s;
    const auto start = std::chrono::steady_clock::now();
    auto r = run_cli({"--batch", jobs.string(), "--driver", "slurm", "--timeout", "120", "-j", "16", "-o",
                      results_file.string()},
                     o);
    const auto took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    BOOST_TEST_MESSAGE("200 slurm jobs with -j 16 took " << took << " s");
    BOOST_TEST(r.code == 0, r.err.substr(r.err.size() > 2000 ? r.err.size() - 2000 : 0));
    const auto lines = json_lines(read_text(results_file));
    BOOST_TEST(lines.size() == std::size_t(n));
    std::set<std::string> ids;
    int good = 0;
    for (const auto& res : lines) {
        const auto id = str(res.at("id"));
        ids.insert(id);
        const auto i = id.substr(1);
        const bool ok = res.at("exit_code").to_number<int>() == 0 && str(res.at("stdout")) == "out-" + i + "\n" &&
                        str(res.at("stderr")) == "err-" + i + "\n" && !res.at("timed_out").as_bool();
        if (ok) ++good;
        else BOOST_ERROR("job " << id << ": " << json::serialize(res));
    }
    BOOST_TEST(ids.size() == std::size_t(n));
    BOOST_TEST(good == n);
    BOOST_TEST(r.err.find(std::to_string(n) + " succeeded") != std::string::npos, r.err);
}

namespace {

// A `sandbox-run --driver slurm --timeout none` of a long sleep, started by a shell that
// leaves it running (the host driver would end what its command leaves behind), and its job
// once RUNNING. This process's environment names the helpers just built.
struct left_job {
    temp_dir dir;
    int pid = 0;
    std::string id;
};

void start_left_job(left_job& j)
{
    auto shell = make_runner(tool_policy(), driver::host);
    const auto pid_file = j.dir.path / "pid";
    const auto started = "SANDBOX_RUN_BIN='" + tool() + "' '" + tool() + "' --driver slurm --timeout none -- sleep " +
                         unique_seconds(600) + " >'" + (j.dir.path / "log").string() + "' 2>&1 & echo $! > '" +
                         pid_file.string() + "'";
    BOOST_TEST_REQUIRE(std::system(started.c_str()) == 0);
    j.pid = std::stoi(read_text(pid_file));
    const auto prefix = "sbx-" + std::to_string(j.pid) + "-";
    const auto job_of_run = [&] {
        for (const auto& line : lines_of(run_sync(*shell, {"squeue", "-h", "-o", "%i %j %T"}).out))
            if (line.find(" " + prefix) != std::string::npos && line.find("RUNNING") != std::string::npos)
                return line.substr(0, line.find(' '));
        return std::string();
    };
    BOOST_TEST_REQUIRE(eventually([&] { return !(j.id = job_of_run()).empty(); }, 60s), read_text(j.dir.path / "log"));
}

// The spawn helpers whose parent is `pid`.
std::vector<int> spawn_helpers_of(int pid)
{
    std::vector<int> found;
    for (const auto& e : std::filesystem::directory_iterator("/proc")) {
        const auto name = e.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream stat(e.path() / "stat");
        std::string line;
        std::getline(stat, line);
        const auto close = line.rfind(')');
        if (close == std::string::npos || line.find("(sandbox-spawn)") == std::string::npos) continue;
        std::istringstream rest(line.substr(close + 2));
        std::string state;
        int ppid = 0;
        rest >> state >> ppid;
        if (ppid == pid) found.push_back(std::stoi(name));
    }
    return found;
}

}  // namespace

// A runner killed outright runs no cancel, but its spawn helper outlives it: it kills srun and
// runs the sweep, which cancels the job at once. A job without a timeout is bounded anyway.
BOOST_AUTO_TEST_CASE(a_job_left_by_a_killed_runner_is_cancelled_by_its_spawn_helper)
{
    SANDBOX_REQUIRE_CLI_SLURM();
    left_job j;
    start_left_job(j);
    auto shell = make_runner(tool_policy(), driver::host);
    const auto limit = run_sync(*shell, {"squeue", "-h", "-j", j.id, "-o", "%l"}).out;
    BOOST_TEST(limit == "1-00:00:00\n", "the time limit of a job without a timeout: " << limit);
    const auto t0 = std::chrono::steady_clock::now();
    ::kill(j.pid, SIGKILL);
    BOOST_TEST(eventually([&] { return squeue_job(j.id).empty(); }, 30s), squeue_job(j.id));
    BOOST_TEST_MESSAGE("the job left the queue "
                       << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count()
                       << " ms after its runner's SIGKILL");
}

// With its spawn helper killed too, nothing of that process cancels the job: the next
// process that launches on slurm does, judging the run dead by its record's free lock.
BOOST_AUTO_TEST_CASE(a_job_left_by_a_killed_runner_and_helper_is_cancelled_by_the_next_process)
{
    SANDBOX_REQUIRE_CLI_SLURM();
    left_job j;
    start_left_job(j);
    const auto helpers = spawn_helpers_of(j.pid);
    BOOST_TEST_REQUIRE(!helpers.empty());
    for (const int h : helpers) ::kill(h, SIGKILL);
    ::kill(j.pid, SIGKILL);
    std::this_thread::sleep_for(2s);
    BOOST_TEST(!squeue_job(j.id).empty());  // nothing cancelled it
    // Any later process's first slurm launch does.
    const auto r = run_cli({"--driver", "slurm", "--timeout", "60", "--", "true"}, slurm_cli_options());
    BOOST_TEST(r.code == 0, r.err);
    BOOST_TEST(eventually([&] { return squeue_job(j.id).empty(); }, 60s), squeue_job(j.id));
}

BOOST_AUTO_TEST_CASE(under_salloc_the_command_is_a_step_of_the_allocation)
{
    SANDBOX_REQUIRE_CLI_SLURM();
    // With host on the node, the command finds its step's variables in the environment of
    // the sandbox-run slurm-step above it (its own environment is the policy's).
    const std::string script =
        "p=$PPID; while [ \"$p\" -gt 1 ]; do "
        "  if tr '\\0' '\\n' < /proc/$p/environ 2>/dev/null | grep -q '^SLURM_STEP_ID='; then "
        "    tr '\\0' '\\n' < /proc/$p/environ | grep -E '^SLURM_(JOB|STEP)_ID=' | sort; break; fi; "
        "  p=$(cut -d' ' -f4 /proc/$p/stat); "
        "done; echo \"own=${SLURM_JOB_ID:-none}\"";
    const auto name = "sbx-cli-alloc-" + unique_seconds(1);
    auto runner = make_runner(tool_policy(slurm_env_vars()), driver::host);
    const auto r = run_sync(*runner, {"salloc", "-N1", "-n2", "--mem=1G", "--job-name=" + name, tool(), "--driver",
                                      "slurm", "--inner-driver", "host", "--timeout", "60", "--", "sh", "-c", script});
    BOOST_TEST_INFO_SCOPE(r.out << r.err);
    BOOST_TEST(r.exit_code == 0);
    const auto alloc = number_after(r.err, "Granted job allocation ");
    BOOST_TEST_REQUIRE(!alloc.empty());
    const auto lines = lines_of(r.out);
    BOOST_TEST_REQUIRE(lines.size() == 3u);
    BOOST_TEST(lines[0] == "SLURM_JOB_ID=" + alloc);
    BOOST_TEST((!number_after(lines[1], "SLURM_STEP_ID=").empty() &&
                lines[1] == "SLURM_STEP_ID=" + number_after(lines[1], "SLURM_STEP_ID=")),
               lines[1]);
    BOOST_TEST(lines[2] == "own=none");  // Slurm's variables stay out of the command's environment
    // salloc gave the allocation back when the command ended.
    BOOST_TEST(eventually([&] { return squeue_job(alloc).empty(); }), squeue_job(alloc));
}

BOOST_AUTO_TEST_SUITE_END()
