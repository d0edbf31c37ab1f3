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
    std::optional<std::filesystem::path> base_dir{};
    std::optional<std::chrono::milliseconds> timeout{};
    std::optional<std::optional<std::chrono::milliseconds>> idle_timeout{};
    std::optional<std::string> memory_limit{};
    std::optional<std::vector<std::filesystem::path>> readable_paths{};
    std::optional<std::vector<std::filesystem::path>> writable_paths{};
    std::optional<env_list> env{};
    std::optional<bool> inherit_env{};
    std::optional<bool> network_enabled{};
    std::optional<std::size_t> stdout_limit_bytes{};
    std::optional<std::size_t> stderr_limit_bytes{};
    /// Beyond the accessor table: the inherited-variable allowlist (see env_allowlist()).
    std::optional<std::optional<std::vector<std::string>>> env_allowlist{};
    /// The disk limit (see disk_limit()); `std::optional<std::string>{}` lifts it.
    std::optional<std::optional<std::string>> disk_limit{};
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
    static constexpr std::size_t min_output_cap = 1024;
    static constexpr std::size_t default_output_cap = 1048576;

    /// The default policy: base dir /tmp, 5 s, no idle timeout, 128M, no network, empty env.
    execution_policy();

    [[nodiscard]] static execution_policy in(std::filesystem::path base_dir);
    [[nodiscard]] static execution_policy defaults();

    const std::filesystem::path& base_dir() const noexcept { return base_dir_; }
    std::chrono::milliseconds timeout() const noexcept { return timeout_; }
    std::optional<std::chrono::milliseconds> idle_timeout() const noexcept { return idle_timeout_; }
    const std::string& memory_limit() const noexcept { return memory_limit_; }
    std::uint64_t memory_limit_bytes() const noexcept;
    const std::vector<std::filesystem::path>& readable_paths() const noexcept { return readable_paths_; }
    const std::vector<std::filesystem::path>& writable_paths() const noexcept { return writable_paths_; }
    const env_list& env() const noexcept { return env_; }
    bool inherit_env() const noexcept { return inherit_env_; }
    bool network_enabled() const noexcept { return network_enabled_; }
    std::size_t stdout_limit_bytes() const noexcept { return stdout_limit_bytes_; }
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

    [[nodiscard]] execution_policy with(const policy_changes& changes) const;
    [[nodiscard]] execution_policy with_base_dir(std::filesystem::path dir) const;
    [[nodiscard]] execution_policy with_timeout(std::chrono::milliseconds t) const;
    [[nodiscard]] execution_policy with_idle_timeout(std::optional<std::chrono::milliseconds> t) const;
    /// Throws std::invalid_argument for "-1" or a malformed or overflowing value.
    [[nodiscard]] execution_policy with_memory(std::string_view limit) const;
    [[nodiscard]] execution_policy with_readable_paths(std::vector<std::filesystem::path> paths) const;
    [[nodiscard]] execution_policy with_writable_paths(std::vector<std::filesystem::path> paths) const;
    /// Replaces the variables; `inherit` nullopt keeps the current inherit flag.
    /// Throws std::invalid_argument for a name that is empty or holds '=' or NUL.
    [[nodiscard]] execution_policy with_env(env_list env, std::optional<bool> inherit = std::nullopt) const;
    [[nodiscard]] execution_policy inherit_environment(bool inherit = true) const;
    [[nodiscard]] execution_policy with_network(bool enabled) const;
    [[nodiscard]] execution_policy with_output_caps(std::size_t out, std::size_t err) const;
    /// Limits inherited variables to `names`; nullopt lifts the limit.
    [[nodiscard]] execution_policy with_env_allowlist(std::optional<std::vector<std::string>> names) const;
    /// Sets or (nullopt) lifts the disk limit. Throws std::invalid_argument like with_memory.
    [[nodiscard]] execution_policy with_disk_limit(std::optional<std::string_view> limit) const;

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
};

// Boost.JSON conversions: value_from(policy) and value_to<execution_policy>(value).
// Keys: base_dir, timeout_seconds, idle_timeout_seconds, memory_limit, readable_paths,
// writable_paths, env, inherit_env, network_enabled, stdout_limit_bytes, stderr_limit_bytes,
// env_allowlist (an array of names, or null; written only when set) and disk_limit (a
// string such as "256M", or null).
// Missing keys take defaults; an unknown key or a wrong type throws std::invalid_argument
// naming the key.
SANDBOX_DECL void tag_invoke(const boost::json::value_from_tag&, boost::json::value& jv, const execution_policy& p);
SANDBOX_DECL execution_policy tag_invoke(const boost::json::value_to_tag<execution_policy>&,
                                         const boost::json::value& jv);

/// Applies the keys present in `jv` (an object) over `base`. Same errors as value_to.
[[nodiscard]] SANDBOX_DECL execution_policy apply_json(const execution_policy& base, const boost::json::value& jv);

}  // namespace sandbox

#endif
