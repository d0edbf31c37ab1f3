// SPDX-License-Identifier: BSL-1.0
// A driver is a description the one runner (drivers/runner.cpp) executes: its name and tool,
// what it enforces, and how a policy and an argv become a launch plan. Each driver's row
// lives in its own file; drivers/table.cpp lists them.
#ifndef SANDBOX_SRC_DRIVERS_DRIVER_SPEC_HPP
#define SANDBOX_SRC_DRIVERS_DRIVER_SPEC_HPP

#include "run/process_runner.hpp"
#include <sandbox/capabilities.hpp>
#include <sandbox/driver.hpp>
#include <sandbox/driver_options.hpp>
#include <sandbox/errors.hpp>
#include <sandbox/exec_options.hpp>
#include <sandbox/exec_result.hpp>
#include <sandbox/execution_policy.hpp>

#include <sys/types.h>

#include <array>
#include <filesystem>
#include <optional>
#include <utility>

#include <string>
#include <string_view>
#include <vector>

namespace sandbox::detail {

struct sandbox_setup;
struct run_resources;
struct driver_spec;

/// A sandbox started ahead of its command (drivers/warm_pool.hpp): what its plan must know
/// to run the stub that waits for the command, and what the hand-off needs afterwards.
struct warm_setup {
    std::filesystem::path work_dir;  ///< on the host (out)
    std::string inside_work;  ///< where commands start as the sandbox sees it ("" : where the stub starts) (out)
    env_list env;             ///< the sandbox's environment, before an execution's additions (out)
    bool report = false;      ///< the stub reports the command's end (driver_spec::slow_shutdown) (out)
};

/// What a driver's steps see of the runner that calls them.
struct driver_context {
    const driver_spec& spec;
    const execution_policy& policy;
    const driver_options& options;
    bool root = false;  ///< the library runs as root: the command is made to run unprivileged
    /// The uid:gid every run of this runner takes (a session's: its work dir is theirs), in
    /// place of a uid of each run's own.
    std::optional<std::pair<uid_t, gid_t>> fixed_user = std::nullopt;
    /// Set: the plan is for a sandbox started ahead, whose command is the library's stub
    /// (`sandbox-spawn --await`); filled in by the plan.
    warm_setup* warm = nullptr;
};

/// The account a driver's commands run as, or why it cannot be used.
struct command_user {
    uid_t uid = 65534;
    gid_t gid = 65534;
    std::string problem;  ///< empty when usable
};

struct driver_spec {
    driver id = driver::host;
    std::string_view tool;                  ///< the program launched ("bwrap"); the command itself for the host
    const char* binary_variable = nullptr;  ///< the variable that may name its path ("BWRAP_BIN")
    const char* installed_binary = nullptr;  ///< a helper of the library's: its installed path, not PATH's
    bool isolating = false;      ///< a private work dir per run, shown as /work (the host runs in base_dir)
    bool container = false;      ///< an engine: image, --cidfile, its own cgroups, containers to sweep
    bool host_paths = false;     ///< mounts appear at their host paths, not /mnt/rw<i> and /mnt/ro<i>
    bool runs_unprivileged = false;      ///< under a root caller the tool itself starts as the command's uid
    /// Under a root caller each run gets a uid of its own (sys/dynamic_uid.hpp), so no two
    /// runs can reach each other's files or processes by a shared uid.
    bool dynamic_user = false;
    bool binds_work_dir_over_base = false;  ///< can reach a work dir below a base dir its uid cannot search
    bool makes_tmpfs = false;    ///< can mount /work and /tmp as bounded tmpfs for an unprivileged caller
    /// The command runs in the host's mount namespace: nothing can be mounted for it alone
    /// (no idmapped writable paths; a disk limit is a tmpfs over the work dir, by a root caller).
    bool host_mount_namespace = false;
    /// Its tool takes long to end after its command (an engine's teardown; firejail's 100 ms
    /// grace for what the command left running): a sandbox started ahead reports the
    /// command's end itself, and the tool ends in the background (warm_setup::report).
    bool slow_shutdown = false;

    capabilities (*caps)(const driver_context&) = nullptr;
    /// Once per runner, before its first run: sweeps what dead runs left behind.
    void (*on_create)(const driver_context&) = nullptr;
    /// The whole launch plan of one run (the isolating drivers share isolated_plan()).
    launch_plan (*plan)(const driver_context&, std::vector<std::string> args, const exec_options&) = nullptr;

    // The steps isolated_plan() calls; unused by the host.
    command_user (*user)(const driver_options&, bool root) = nullptr;
    /// After the shared preparation: what only this driver checks or needs (throws launch_error).
    void (*prepare)(const driver_context&, sandbox_setup&, run_resources&) = nullptr;
    /// The tool's command line, environment and cleanup command.
    launch_plan (*command_line)(const driver_context&, const sandbox_setup&, const std::vector<std::string>& args) =
        nullptr;
    /// The tool's own failures, told apart from the command's exit codes (throws launch_error).
    void (*check_result)(const driver_context&, const exec_result&, const run_resources&) = nullptr;
    /// The reason in the tool's report that `command` could not be executed (`line`, its
    /// whole stderr, with exit code `exit_code`); "" when it is something else.
    std::string (*start_failure)(int exit_code, const std::string& line, const std::string& command) = nullptr;
    /// How the tool's own reports on stderr begin ("bwrap: "), besides the library's
    /// "sandbox: ": streamed stderr that begins so is held back until the run's end says
    /// whether it was one (api/driver_runner.cpp).
    std::array<std::string_view, 3> report_prefixes{};
};

/// The rows, one per driver file.
extern const driver_spec host_driver;
extern const driver_spec docker_driver;
extern const driver_spec podman_driver;
extern const driver_spec bubblewrap_driver;
extern const driver_spec firejail_driver;
extern const driver_spec slurm_driver;
extern const driver_spec landlock_driver;

/// The row of `d` (drivers/table.cpp).
const driver_spec& spec_of(driver d);

/// The plan of an isolating driver: a private work dir, mounts, environment, limits and
/// cgroups prepared for the run, then the driver's command_line (drivers/isolation.cpp).
launch_plan isolated_plan(const driver_context& ctx, std::vector<std::string> args, const exec_options& o);

/// The rows of the syscall table (sys/syscall_rules.hpp) that apply to a command of this
/// driver under this policy.
std::uint32_t command_rules(const driver_context& ctx);

/// Whether cgroups can be made here (tried once).
bool cgroups_usable();

/// Throws launch_error "Failed to start <tool>: <why>".
[[noreturn]] void fail_launch(const driver_context& ctx, const std::string& why,
                              boost::system::error_code code = errc::engine_failed);

/// The line of a tool's stderr that says what went wrong.
std::string engine_error_line(const std::string& err);

}  // namespace sandbox::detail

#endif
