// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_EXECUTION_POLICY_HPP
#define SANDBOX_EXECUTION_POLICY_HPP

#include <sandbox/detail/config.hpp>
#include <sandbox/detail/export.hpp>

#include <boost/json/fwd.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sandbox {

/// Ordered environment variables: name, value.
using env_list = std::vector<std::pair<std::string, std::string>>;

/// Changes for execution_policy::with(). Every engaged member replaces the current value;
/// disengaged members keep it. Members are declared in accessor order, so designated
/// initializers work: `p.with({.timeout = 60s, .memory_limit = "512M"})`.
/// `idle_timeout` is doubly optional: `.idle_timeout = 10s` sets it,
/// `.idle_timeout = no_idle_timeout` clears it.
struct policy_changes {
    std::optional<std::filesystem::path> base_dir{};                         ///< execution_policy::base_dir()
    std::optional<std::chrono::milliseconds> timeout{};                      ///< execution_policy::timeout()
    std::optional<std::optional<std::chrono::milliseconds>> idle_timeout{};  ///< execution_policy::idle_timeout()
    std::optional<std::string> memory_limit{};                               ///< execution_policy::memory_limit()
    std::optional<std::vector<std::filesystem::path>> readable_paths{};      ///< execution_policy::readable_paths()
    std::optional<std::vector<std::filesystem::path>> writable_paths{};      ///< execution_policy::writable_paths()
    std::optional<env_list> env{};                                           ///< execution_policy::env()
    std::optional<bool> inherit_env{};                                       ///< execution_policy::inherit_env()
    std::optional<bool> network_enabled{};                                   ///< execution_policy::network_enabled()
    std::optional<std::size_t> stdout_limit_bytes{};                         ///< execution_policy::stdout_limit_bytes()
    std::optional<std::size_t> stderr_limit_bytes{};                         ///< execution_policy::stderr_limit_bytes()
    /// Beyond the accessor table: the inherited-variable allowlist (see env_allowlist()).
    std::optional<std::optional<std::vector<std::string>>> env_allowlist{};
    /// The disk limit (see disk_limit()); `std::optional<std::string>{}` lifts it.
    std::optional<std::optional<std::string>> disk_limit{};
    /// Blocked names passed on purpose (see env_unblocked()).
    std::optional<std::vector<std::string>> env_unblocked{};
};

/// A wall timeout that never fires: `with_timeout(sandbox::no_timeout)`, or
/// exec_options::timeout, for commands that must not be cut. JSON: "timeout_seconds": null.
inline constexpr std::chrono::milliseconds no_timeout = std::chrono::milliseconds::max();

/// Value for policy_changes::idle_timeout that disables the idle timeout.
inline const std::optional<std::chrono::milliseconds> no_idle_timeout{};

/// What a command may do and for how long. Immutable: every with_* returns a new policy.
///
/// Clamps: timeouts below 1 ms become 1 ms; output caps below 1024 bytes become 1024.
/// The memory limit is normalized to whole MiB ("1G" -> "1024M", "512k" -> "1M").
class SANDBOX_DECL execution_policy {
public:
    /// The smallest output cap: smaller ones are raised to it.
    static constexpr std::size_t min_output_cap = 1024;
    /// The output caps of a new policy (1 MiB each).
    static constexpr std::size_t default_output_cap = 1048576;

    /// The default policy: base dir /tmp, 5 s, no idle timeout, 128M, no network, empty env.
    execution_policy();

    /// The default policy with another base dir.
    [[nodiscard]] static execution_policy in(std::filesystem::path base_dir);
    /// The default policy, as the constructor makes it.
    [[nodiscard]] static execution_policy defaults();

    /// The host directory commands start in on the host driver, and under which the
    /// isolating drivers make each execution's private work dir (their /work).
    const std::filesystem::path& base_dir() const noexcept { return base_dir_; }
    /// The wall timeout, from the start of an execution; no_timeout for none.
    std::chrono::milliseconds timeout() const noexcept { return timeout_; }
    /// How long the command may go without output on stdout or stderr; nullopt: no limit.
    std::optional<std::chrono::milliseconds> idle_timeout() const noexcept { return idle_timeout_; }
    /// The memory limit, "<N>M". Enforced by the isolating drivers (as a hard limit where
    /// capabilities::memory_enforced says so), not by the host driver.
    const std::string& memory_limit() const noexcept { return memory_limit_; }
    /// memory_limit() in bytes.
    std::uint64_t memory_limit_bytes() const noexcept;
    /// Host paths the command may read, mounted read-only (see mounts_for()).
    const std::vector<std::filesystem::path>& readable_paths() const noexcept { return readable_paths_; }
    /// Host paths the command may write, mounted read-write (see mounts_for()).
    const std::vector<std::filesystem::path>& writable_paths() const noexcept { return writable_paths_; }
    /// Variables set for the command, over what it inherits (see child_environment()).
    const env_list& env() const noexcept { return env_; }
    /// Whether the command inherits this process's environment (false by default).
    bool inherit_env() const noexcept { return inherit_env_; }
    /// Whether the command may reach the network. Off, the isolating drivers leave it only
    /// loopback; the host driver cannot take the network away.
    bool network_enabled() const noexcept { return network_enabled_; }
    /// How much of stdout exec_result::out keeps: its last bytes. The output callback still
    /// sees every byte.
    std::size_t stdout_limit_bytes() const noexcept { return stdout_limit_bytes_; }
    /// How much of stderr exec_result::err keeps, as for stdout.
    std::size_t stderr_limit_bytes() const noexcept { return stderr_limit_bytes_; }
    /// When set, only these inherited variables reach the command (exact names); env() is
    /// still added and the blocked names are still removed. nullopt (the default): every
    /// inherited variable. Applies to executions, sessions and long-lived processes alike,
    /// and only matters when inherit_env() is true.
    const std::optional<std::vector<std::string>>& env_allowlist() const noexcept { return env_allowlist_; }
    /// How much the command may write to /work and to /tmp, each ("<N>M", normalised like
    /// the memory limit); nullopt (the default): no limit. Past it, writes fail with ENOSPC
    /// inside the sandbox and nothing more reaches the host's disk. Enforced by the
    /// isolating drivers (capabilities::disk_enforced), not by the host driver.
    const std::optional<std::string>& disk_limit() const noexcept { return disk_limit_; }
    /// disk_limit() in bytes; 0 when there is none.
    std::uint64_t disk_limit_bytes() const noexcept;
    /// Names the blocklist (blocked_env_patterns) would remove that reach the command anyway,
    /// because the caller means them to (exact names, e.g. "PYTHONUNBUFFERED"): from env()
    /// and, with inherit_env(), from this process's environment. Empty by default.
    const std::vector<std::string>& env_unblocked() const noexcept { return env_unblocked_; }

    /// A copy with the engaged members of `changes` applied, clamped and normalised as
    /// above. Throws std::invalid_argument as with_memory() and with_env() do.
    [[nodiscard]] execution_policy with(const policy_changes& changes) const;
    /// A copy with another base dir.
    [[nodiscard]] execution_policy with_base_dir(std::filesystem::path dir) const;
    /// A copy with another wall timeout (at least 1 ms; no_timeout for none).
    [[nodiscard]] execution_policy with_timeout(std::chrono::milliseconds t) const;
    /// A copy with another idle timeout (at least 1 ms); nullopt removes it.
    [[nodiscard]] execution_policy with_idle_timeout(std::optional<std::chrono::milliseconds> t) const;
    /// Throws std::invalid_argument for "-1" or a malformed or overflowing value.
    [[nodiscard]] execution_policy with_memory(std::string_view limit) const;
    /// A copy whose readable paths are `paths` (replacing the current ones).
    [[nodiscard]] execution_policy with_readable_paths(std::vector<std::filesystem::path> paths) const;
    /// A copy whose writable paths are `paths` (replacing the current ones).
    [[nodiscard]] execution_policy with_writable_paths(std::vector<std::filesystem::path> paths) const;
    /// Replaces the variables; `inherit` nullopt keeps the current inherit flag.
    /// Throws std::invalid_argument for a name that is empty or holds '=' or NUL, or a value
    /// that holds NUL.
    [[nodiscard]] execution_policy with_env(env_list env, std::optional<bool> inherit = std::nullopt) const;
    /// A copy that does (or does not) pass this process's environment on.
    [[nodiscard]] execution_policy inherit_environment(bool inherit = true) const;
    /// A copy with the network on or off.
    [[nodiscard]] execution_policy with_network(bool enabled) const;
    /// A copy with other stdout and stderr caps (each at least min_output_cap).
    [[nodiscard]] execution_policy with_output_caps(std::size_t out, std::size_t err) const;
    /// Limits inherited variables to `names`; nullopt lifts the limit.
    [[nodiscard]] execution_policy with_env_allowlist(std::optional<std::vector<std::string>> names) const;
    /// Sets or (nullopt) lifts the disk limit. Throws std::invalid_argument like with_memory.
    [[nodiscard]] execution_policy with_disk_limit(std::optional<std::string_view> limit) const;
    /// A copy that passes these blocked names on purpose (see env_unblocked()). Throws
    /// std::invalid_argument for a name that is empty or holds '=' or NUL.
    [[nodiscard]] execution_policy with_env_unblocked(std::vector<std::string> names) const;

    /// Equal when every setting is.
    friend bool operator==(const execution_policy&, const execution_policy&) = default;

    /// "<N>M" for a memory limit string, or throws std::invalid_argument.
    static std::string normalize_memory_limit(std::string_view limit);

private:
    std::filesystem::path base_dir_{"/tmp"};
    std::chrono::milliseconds timeout_{5000};
    std::optional<std::chrono::milliseconds> idle_timeout_;
    std::string memory_limit_{"128M"};
    std::vector<std::filesystem::path> readable_paths_;
    std::vector<std::filesystem::path> writable_paths_;
    env_list env_;
    bool inherit_env_ = false;
    bool network_enabled_ = false;
    std::size_t stdout_limit_bytes_ = default_output_cap;
    std::size_t stderr_limit_bytes_ = default_output_cap;
    std::optional<std::vector<std::string>> env_allowlist_;
    std::optional<std::string> disk_limit_;
    std::vector<std::string> env_unblocked_;
};

/// `boost::json::value_from(p)`: an object with the keys base_dir, timeout_seconds,
/// idle_timeout_seconds, memory_limit, readable_paths, writable_paths, env, inherit_env,
/// network_enabled, stdout_limit_bytes, stderr_limit_bytes, env_allowlist (an array of names,
/// or null; written only when set) and disk_limit (a string such as "256M", or null).
SANDBOX_DECL void tag_invoke(const boost::json::value_from_tag&, boost::json::value& jv, const execution_policy& p);
/// `boost::json::value_to<execution_policy>(jv)`: the keys above. Missing keys take
/// defaults; an unknown key or a wrong type throws std::invalid_argument naming the key.
SANDBOX_DECL execution_policy tag_invoke(const boost::json::value_to_tag<execution_policy>&,
                                         const boost::json::value& jv);

/// Applies the keys present in `jv` (an object) over `base`. Same errors as value_to.
[[nodiscard]] SANDBOX_DECL execution_policy apply_json(const execution_policy& base, const boost::json::value& jv);

}  // namespace sandbox

#endif
