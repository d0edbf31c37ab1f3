// SPDX-License-Identifier: BSL-1.0
//
// `sandbox-run slurm-step`: what the slurm driver starts on a compute node through srun.
//
//   sandbox-run slurm-step --driver host|bubblewrap --tag TAG --policy JSON [--cwd DIR] -- COMMAND...
//
// Runs COMMAND under the policy with the given driver, streams its output as it comes, then
// writes one last line to stderr: TAG followed by the result as JSON (exit code, signal,
// usage, oom_killed, start_error; no output), or by {"error": {...}} when the driver could not
// start. The client takes the line out of the command's stderr again. Exits with the
// command's status, as a one-command sandbox-run does: srun loses a task's last output now
// and then (when the task ends while its stdin is still being fed), and the status is then
// what is left.
#include "slurm_step.hpp"

#include "io.hpp"
#include "single_run.hpp"

#include <sandbox/command_runner.hpp>
#include <sandbox/json.hpp>

#include <boost/system/system_error.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <tuple>

namespace sandbox::cli {

namespace {

struct step_args {
    driver inner = driver::bubblewrap;
    std::string tag;
    std::string policy;
    std::string cwd;
    std::vector<std::string> command;
};

step_args parse(const std::vector<std::string_view>& args)
{
    step_args s;
    std::size_t i = 0;
    auto value = [&](std::string_view flag) {
        if (i + 1 >= args.size()) throw usage_error("slurm-step: " + std::string(flag) + " needs a value");
        return std::string(args[++i]);
    };
    bool policy_seen = false;
    for (; i < args.size(); ++i) {
        const auto a = args[i];
        if (a == "--") {
            s.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
            break;
        }
        if (a == "--driver") {
            const auto name = value(a);
            try {
                s.inner = parse_driver(name);
            } catch (const std::invalid_argument& e) {
                throw usage_error(std::string("slurm-step: --driver: ") + e.what());
            }
            if (s.inner != driver::host && s.inner != driver::bubblewrap)
                throw usage_error("slurm-step: --driver must be host or bubblewrap, not " + name);
        } else if (a == "--tag") {
            s.tag = value(a);
        } else if (a == "--policy") {
            s.policy = value(a);
            policy_seen = true;
        } else if (a == "--cwd") {
            s.cwd = value(a);
        } else {
            throw usage_error("slurm-step: unknown option " + std::string(a));
        }
    }
    // The slurm driver hands both over in the environment (an argv is world-readable).
    for (auto [variable, into, seen] : {std::tuple{"SANDBOX_STEP_POLICY", &s.policy, &policy_seen},
                                        std::tuple{"SANDBOX_STEP_TAG", &s.tag, static_cast<bool*>(nullptr)}}) {
        if (const char* v = std::getenv(variable)) {
            if (into->empty()) *into = v;
            if (seen) *seen = true;
            ::unsetenv(variable);
        }
    }
    if (s.tag.empty() || !policy_seen || s.command.empty())
        throw usage_error("slurm-step: usage: sandbox-run slurm-step --driver D --tag TAG --policy JSON [--cwd DIR] -- COMMAND...");
    return s;
}

void report(const std::string& tag, const std::string& json) noexcept
{
    try {
        write_all(STDERR_FILENO, tag + json + "\n");
    } catch (...) {  // srun is gone: the client ended this run and expects nothing
    }
}

void report_error(const std::string& tag, boost::system::error_code code, const std::string& message)
{
    boost::json::object error{{"code", code.category() == sandbox_category()
                                           ? std::string(to_string(static_cast<errc>(code.value())))
                                           : code.message()},
                              {"message", message}};
    report(tag, serialize_json(boost::json::object{{"error", std::move(error)}}));
}

}  // namespace

int run_slurm_step(const std::vector<std::string_view>& args)
{
    const auto s = parse(args);
    std::unique_ptr<command_runner> runner;
    try {
        runner = make_runner(policy_from_json(s.policy), s.inner);
    } catch (const std::exception& e) {
        report_error(s.tag, errc::engine_failed, std::string("slurm-step: ") + e.what());
        return exit_status::sandbox_failed;
    }

    exec_options eo;
    eo.cwd = s.cwd;
    // srun's stdin: the client's data or its stream, read by the command as it comes.
    eo.stdin_fd = ::fcntl(STDIN_FILENO, F_GETFD) >= 0 ? STDIN_FILENO : -1;
    // scancel (or srun passing on a signal) stops the command and cleans up before the exit.
    auto [error, result, stopped_by] = run_until_stopped(*runner, s.command, std::move(eo), true);

    if (error) {
        try {
            std::rethrow_exception(error);
        } catch (const launch_error& e) {
            report_error(s.tag, e.code(), e.what());
        } catch (const boost::system::system_error& e) {
            if (e.code() == asio::error::operation_aborted && stopped_by) return 128 + stopped_by;
            report_error(s.tag, e.code(), e.what());
        } catch (const std::exception& e) {
            report_error(s.tag, errc::engine_failed, e.what());
        }
        return exit_status::sandbox_failed;
    }
    result.out.clear();
    // A start failure's stderr is the driver's message, which the stream did not show as such.
    if (!result.start_error) result.err.clear();
    report(s.tag, to_json(result));
    if (result.start_error == errc::command_not_found) return exit_codes::command_not_found;
    if (result.start_error == errc::command_not_executable) return exit_status::cannot_execute;
    if (result.start_error) return exit_status::sandbox_failed;
    return result.exit_code < 0 ? exit_status::sandbox_failed : result.exit_code;
}

}  // namespace sandbox::cli
