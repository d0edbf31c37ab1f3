// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_SRC_SYS_CGROUP_HPP
#define SANDBOX_SRC_SYS_CGROUP_HPP

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace sandbox::detail {

/// Memory and process limits for a whole process tree through cgroups: the v1 memory and
/// pids controllers, or cgroup v2 when its controllers are delegated to us. Unlike rlimits,
/// a cgroup counts the tree, not each process, and its OOM killer ends the command (137)
/// rather than failing allocations the program may not expect.
class cgroup_limits {
public:
    /// Creates `name` under this process's cgroups with the limits; nullopt, with the reason
    /// in `why`, when the machine offers no cgroup we can write.
    static std::optional<cgroup_limits> create(const std::string& name, std::uint64_t memory_bytes, int pids_max,
                                               std::string& why);

    cgroup_limits(cgroup_limits&& o) noexcept : dirs_(std::move(o.dirs_)) { o.dirs_.clear(); }
    cgroup_limits& operator=(cgroup_limits&&) = delete;
    cgroup_limits(const cgroup_limits&) = delete;
    ~cgroup_limits() { remove(); }

    /// A launch prefix that moves itself into the cgroups, then execs the rest of the argv:
    /// the command is inside before it can fork.
    std::vector<std::string> join_prefix() const;

    /// The cgroups named `name` that exist (left by a run whose process died), to remove().
    static cgroup_limits existing(const std::string& name);

    /// Kills whatever is still inside and removes the cgroups. Idempotent.
    void remove() noexcept;

    const std::vector<std::filesystem::path>& dirs() const noexcept { return dirs_; }

private:
    cgroup_limits() = default;
    std::vector<std::filesystem::path> dirs_;
};

}  // namespace sandbox::detail

#endif
