// SPDX-License-Identifier: BSL-1.0
//
// sandbox-run: runs one command under an execution policy, or a batch of them from a file of
// JSON lines. See `sandbox-run --help`; the parts live in options (flags and the policy they
// make), single_run, batch (+ line_source, job, progress) and signals.
#include "batch.hpp"
#include "io.hpp"
#include "options.hpp"
#include "report.hpp"
#include "single_run.hpp"
#include "slurm_step.hpp"

#include <csignal>
#include <exception>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

namespace {

void say(const std::string& line) noexcept
{
    try {
        sandbox::cli::write_all(STDERR_FILENO, std::string(sandbox::cli::program_name) + ": " + line + "\n");
    } catch (...) {
    }
}

}  // namespace

int main(int argc, char** argv)
{
    using namespace sandbox::cli;
    // A reader that goes away must show up as EPIPE from write(), so that the running
    // commands are stopped rather than orphaned. The commands get SIGPIPE back (the library
    // resets it to the default in every child).
    std::signal(SIGPIPE, SIG_IGN);

    std::vector<std::string_view> args(argv + 1, argv + argc);
    try {
        if (!args.empty() && args.front() == "report") return run_report({args.begin() + 1, args.end()});
        if (!args.empty() && args.front() == "slurm-step") return run_slurm_step({args.begin() + 1, args.end()});
        const auto o = parse_options(args);
        switch (o.mode) {
        case run_mode::help: write_all(STDOUT_FILENO, usage_text()); return exit_status::ok;
        case run_mode::version:
            write_all(STDOUT_FILENO, std::string(program_name) + " " + std::string(program_version) + "\n");
            return exit_status::ok;
        case run_mode::show_policy:
            write_all(STDOUT_FILENO, sandbox::to_json(effective_policy(o)) + "\n");
            return exit_status::ok;
        case run_mode::batch: return run_batch(o, effective_policy(o));
        case run_mode::single: return run_single(o, effective_policy(o));
        }
    } catch (const usage_error& e) {
        say(e.what());
        return exit_status::usage;
    } catch (const std::exception& e) {
        say(e.what());
        return exit_status::sandbox_failed;
    }
    return exit_status::sandbox_failed;
}
