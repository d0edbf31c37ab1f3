// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_SRC_SYS_CGROUP_HPP
#define SANDBOX_SRC_SYS_CGROUP_HPP

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sandbox::detail {

/// What a cgroup counted for every process that ran in it or below it.
struct cgroup_usage {
    std::chrono::nanoseconds user_cpu{0};
    std::chrono::nanoseconds system_cpu{0};
    std::uint64_t peak_bytes = 0;  ///< peak memory, page cache included
    /// OOM kills; nullopt where the kernel does not count them for this cgroup (before 4.13,
    /// or below a v1 cgroup, whose counter is not hierarchical).
    std::optional<std::uint64_t> oom_kills;

    /// Whether the OOM killer of a limit of `limit_bytes` acted: counted, or else inferred
    /// from the peak reaching the limit.
    bool oom_seen(std::uint64_t limit_bytes) const noexcept;
};

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

    cgroup_limits(cgroup_limits&& o) noexcept
        : dirs_(std::exchange(o.dirs_, {})), memory_dir_(std::exchange(o.memory_dir_, {})),
          cpu_dir_(std::exchange(o.cpu_dir_, {})), v2_(o.v2_)
    {
    }
    cgroup_limits& operator=(cgroup_limits&&) = delete;
    cgroup_limits(const cgroup_limits&) = delete;
    ~cgroup_limits() { remove(); }

    /// The cgroups named `name` that exist (left by a run whose process died), to remove().
    static cgroup_limits existing(const std::string& name);

    /// Kills whatever is still inside and removes the cgroups. Idempotent.
    void remove() noexcept;

    /// What the tree used so far; nullopt when the kernel does not say (no cpuacct cgroup,
    /// no memory.peak before Linux 5.19) or after remove().
    std::optional<cgroup_usage> usage() const;

    const std::vector<std::filesystem::path>& dirs() const noexcept { return dirs_; }

private:
    cgroup_limits() = default;
    std::vector<std::filesystem::path> dirs_;
    std::filesystem::path memory_dir_, cpu_dir_;  // among dirs_ (cpu_dir_ empty: no cpuacct)
    bool v2_ = false;
};

/// The parent cgroup a container engine with the cgroupfs manager puts a container under
/// (--cgroup-parent): the engine creates it in every hierarchy and removes only the
/// container's own cgroup below it; the library reads the container's usage from it (the v1
/// and v2 counters of a parent survive the child), then removes it.
class engine_cgroup {
public:
    /// nullopt, with the reason in `why`, when the library cannot read and remove such a
    /// cgroup (not root, no whole memory hierarchy mounted) or the engine may use the
    /// systemd manager (systemd is running), which takes a slice name instead of a path.
    static std::optional<engine_cgroup> plan(const std::string& name, std::string& why);

    engine_cgroup(engine_cgroup&& o) noexcept : parent_(std::move(o.parent_)) { o.parent_.clear(); }
    engine_cgroup& operator=(engine_cgroup&&) = delete;
    engine_cgroup(const engine_cgroup&) = delete;
    ~engine_cgroup() { remove(); }

    /// The --cgroup-parent argument: "/sandbox/<name>".
    const std::string& parent() const noexcept { return parent_; }

    /// Waits a little for the engine to remove the container's cgroup (blocking: never on an
    /// io thread), then reads the parent; nullopt if it never existed or the container's
    /// cgroup is still there.
    std::optional<cgroup_usage> settle_and_read() const;

    /// Removes the parent from every hierarchy; leaves it where the engine still has a
    /// container below it. Idempotent.
    void remove() noexcept;

    /// The same for the container `name` whose starter died before it could.
    static void remove_left_by(const std::string& name) noexcept { engine_cgroup(prefix + name).remove(); }

private:
    static constexpr const char* prefix = "/sandbox/";
    explicit engine_cgroup(std::string parent) : parent_(std::move(parent)) {}
    std::string parent_;
};

}  // namespace sandbox::detail

#endif
