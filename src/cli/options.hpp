// SPDX-License-Identifier: BSL-1.0
// Command-line options of sandbox-run: parsed by hand, `--name value` and `--name=value`.
#ifndef SANDBOX_CLI_OPTIONS_HPP
#define SANDBOX_CLI_OPTIONS_HPP

#include <sandbox/sandbox.hpp>
#include <sandbox/version.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace sandbox::cli {

inline constexpr std::string_view program_name = "sandbox-run";
#ifdef SANDBOX_RUN_VERSION
inline constexpr std::string_view program_version = SANDBOX_RUN_VERSION;
#else
inline constexpr std::string_view program_version = SANDBOX_VERSION_STRING;
#endif

/// Exit statuses of the tool itself (the command's own status is passed through).
namespace exit_status {
inline constexpr int ok = 0;
inline constexpr int some_failed = 1;     ///< batch: at least one job did not succeed
inline constexpr int usage = 2;           ///< bad option or value
inline constexpr int sandbox_failed = 125;  ///< the sandbox (driver) could not run the command
inline constexpr int cannot_execute = 126;  ///< found, but could not be executed
}  // namespace exit_status

/// A bad flag or value: printed as one line, exit status 2.
class usage_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

enum class run_mode { single, batch, help, version, show_policy };

/// --halt: when failures stop a batch. `now` cancels the running jobs, `soon` lets them end.
struct halt_rule {
    enum class when { never, soon, now } at = when::never;
    std::uint64_t failures = 0;  ///< this many failed jobs (failed, timed out or errors) halt it
    /// Instead of `failures` when above 0: this percentage of the jobs ended so far failed,
    /// once at least halt_percent_min_jobs have ended.
    double percent = 0;
};

/// --halt fail=X%: the jobs that must have ended before a percentage is judged.
inline constexpr std::uint64_t halt_percent_min_jobs = 10;

struct options {
    run_mode mode = run_mode::single;

    // Policy: the file is loaded first, then every flag that was given overrides it.
    std::optional<std::filesystem::path> policy_file;
    sandbox::driver driver = sandbox::driver::host;
    std::optional<std::string> image;
    slurm_options slurm;  // --partition, --inner-driver, --srun-arg
    std::optional<std::chrono::milliseconds> timeout;  // sandbox::no_timeout: none
    std::optional<std::optional<std::chrono::milliseconds>> idle_timeout;  // inner nullopt: disabled
    std::optional<std::string> memory;                                     // normalized
    std::optional<std::optional<std::string>> disk;                        // normalized; inner nullopt: none
    std::optional<bool> network;
    env_list env;  // added to (and overriding by name) the file's variables
    std::vector<std::string> unblocked_env;  // --unblock-env: blocked names passed on purpose
    std::optional<bool> inherit_env;
    std::vector<std::filesystem::path> readable;  // appended to the file's lists
    std::vector<std::filesystem::path> writable;
    std::optional<std::filesystem::path> base_dir;
    std::optional<std::size_t> stdout_cap;
    std::optional<std::size_t> stderr_cap;

    // Single command.
    std::vector<std::string> command;
    bool json = false;
    bool no_stdin = false;

    // Batch.
    std::optional<std::string> batch_file;  // "-" is stdin
    std::optional<unsigned> jobs;  // 0: as many at once as there are jobs (up to all_at_once_jobs)
    unsigned warm = 0;  // --warm: sandboxes the batch keeps started ahead
    std::optional<std::string> output_file;
    std::optional<bool> progress;  // nullopt: when stderr is a terminal
    std::size_t max_line = 64u << 20;
    std::optional<std::string> resume_file;  // skip the jobs whose id has a result there
    bool resume_failed = false;              // ... unless that result is a failure
    unsigned retries = 0;
    halt_rule halt;
    bool keep_order = false;
    bool lock_policy = false;  // job lines may only tighten the policy

    bool strict = false;   // a setting the driver does not enforce is an error, not a warning
    bool dry_run = false;  // print what would start, start nothing
    bool verbose = false;  // print what starts on stderr
    std::vector<std::string> args;  // as given, for the command line that resumes a batch
};

/// Parses argv (without the program name). Throws usage_error with one line naming the flag.
options parse_options(const std::vector<std::string_view>& args);

/// The policy file (if any) with the flags applied over it. Throws usage_error.
execution_policy effective_policy(const options& o);

/// The driver options the flags make (image, slurm settings; the nodes start this program).
driver_options driver_options_for(const options& o);

/// The --help text.
std::string usage_text();

// Value parsers, exposed for the batch runner and tests of the tool.
/// Seconds with an optional fraction and unit (ms, s, m, h, d): "0.5", "2", "500ms", "1m", "1.5d".
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);
/// Bytes with an optional K, M, G or T suffix in any case, powers of 1024 ("KiB" and "KB"
/// mean the same, as do "B" and none); with a suffix, a fraction of up to 9 digits ("1.5G").
std::optional<std::uint64_t> parse_size(std::string_view text);

}  // namespace sandbox::cli

#endif
