// SPDX-License-Identifier: BSL-1.0
// Pieces the drivers share: finding a tool (support.cpp), the environment inside
// (support.cpp), the private work dir (work_dir.cpp) and the host paths a run mounts
// (mount_list.cpp).
#ifndef SANDBOX_SRC_DRIVERS_SUPPORT_HPP
#define SANDBOX_SRC_DRIVERS_SUPPORT_HPP

#include <sandbox/errors.hpp>
#include <sandbox/exec_options.hpp>
#include <sandbox/exec_result.hpp>
#include <sandbox/execution_policy.hpp>
#include <sandbox/mount.hpp>

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sandbox::detail {

/// The message of errno `err`.
std::string errno_text(int err);

/// Throws launch_error "Failed to start <error_name>: <why>".
[[noreturn]] void fail_start(std::string_view error_name, const std::string& why,
                             boost::system::error_code code = errc::driver_unavailable);

/// PATH inside a sandbox when the policy does not set one.
inline constexpr std::string_view default_sandbox_path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// The driver's binary as an absolute path: `configured` when set, else the variable
/// `env_var` when set and non-empty, else `installed` when given (a helper of the
/// library's, never looked up on PATH), else `name` on PATH. Throws launch_error
/// "Failed to start <error_name>: <why>" when it is missing or not executable.
std::string resolve_binary(const std::string& configured, const char* env_var, std::string_view name,
                           std::string_view error_name, const char* installed = nullptr);

/// Looks `name` up on PATH (and the usual system directories); empty when not found.
std::string find_on_path(std::string_view name);

/// The environment inside a sandbox: child_environment(policy), plus PATH when missing.
env_list sandbox_environment(const execution_policy& policy);

/// `base` with `extra` laid over it: a name already present takes the new value in its
/// place, new names go at the end, blocked names (blocked_env_patterns) are dropped but for
/// those `policy` passes on purpose (execution_policy::env_unblocked()).
env_list with_extra_env(env_list base, const env_list& extra, const execution_policy& policy);

/// The wall timeout of one execution: its own, else its policy's; nullopt when it has none
/// (sandbox::no_timeout). A negative one is zero: the execution times out at once.
std::optional<std::chrono::milliseconds> wall_timeout(const execution_policy& policy, const exec_options& o);

/// exec_options::cwd checked against the directory commands start in (`root`, on the
/// host): `cwd` lexically normalised, relative, and naming a directory beneath `root`
/// without any symlink leading out. Returns it normalised ("" for `root` itself). Throws
/// launch_error errc::outside_root or errc::bad_working_directory, naming it; with
/// `missing_ok`, a directory that does not exist is returned for the spawn to report.
std::filesystem::path fenced_cwd(const std::filesystem::path& root, const std::filesystem::path& cwd,
                                 std::string_view error_name, bool missing_ok = false);

/// "sandbox-" followed by 24 random hex digits.
std::string random_sandbox_name();

/// A private work dir `<base>/<name>`, mode 0700; owned by owner:group unless owner is
/// -1. Throws launch_error "Failed to start <error_name>: ..." when it cannot be made.
std::filesystem::path create_work_dir(const std::filesystem::path& base, const std::string& name, uid_t owner,
                                      gid_t group, std::string_view error_name);

/// Removes a directory tree without ever following a symlink (links are unlinked, not
/// entered). Best effort; returns false when something could not be removed.
bool remove_tree(const std::filesystem::path& dir) noexcept;

/// The first directory on the way to `path` (itself included) that uid:gid may not search,
/// or empty when all may be searched.
std::filesystem::path first_unsearchable(const std::filesystem::path& path, uid_t uid, gid_t gid);

/// The uid the command runs as inside container and namespace sandboxes: 65534 (nobody)
/// when the library runs as root, else the caller's own uid.
uid_t sandbox_uid() noexcept;

/// When `r` is exactly the launcher's report that `command` (argv[0]) could not be executed,
/// makes it what the host driver gives: 127 (not found) or 126, "Failed to start <tool>:
/// <command>: <reason>" as stderr, and start_error. Returns false, changing nothing, for any
/// other result.
bool as_start_failure(exec_result& r, driver d, std::string_view tool, const std::string& command);

/// A mount point of this process's mount namespace, from /proc/self/mountinfo.
struct host_mount {
    std::string point;  ///< escapes decoded
    bool writable = false;
};
std::vector<host_mount> host_mounts();

/// `mounts` plus, for every read-only one, each host mount point below it, read-only at the
/// matching place: engines that bind non-recursively read-only (docker's and podman's -v
/// ...:ro) would otherwise leave a writable submount writable. Paths asked for on their own
/// keep what was asked.
std::vector<mount> with_read_only_submounts(std::vector<mount> mounts, const std::vector<host_mount>& host);
gid_t sandbox_gid() noexcept;

/// Sends `sig` to every descendant of `launcher` (read from /proc/<pid>/task/*/children) but
/// those whose name (/proc/<pid>/comm) is `launcher_name`: the command and what it started,
/// not the launcher's own processes. Quick and never blocking; a process that ends or
/// appears meanwhile may be missed.
void signal_descendants(pid_t launcher, std::string_view launcher_name, int sig) noexcept;

}  // namespace sandbox::detail

#endif
