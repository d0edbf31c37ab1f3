// SPDX-License-Identifier: BSL-1.0
// What one run of an isolating driver owns on the host.
#ifndef SANDBOX_SRC_DRIVERS_RESOURCES_HPP
#define SANDBOX_SRC_DRIVERS_RESOURCES_HPP

#include "drivers/run_record.hpp"
#include "sys/cgroup.hpp"
#include "sys/dynamic_uid.hpp"
#include <sandbox/detail/unique_fd.hpp>

#include <filesystem>
#include <optional>
#include <vector>

namespace sandbox::detail {

/// Released exactly once, after the run or on a failed launch; the destructor releases too.
struct run_resources {
    std::filesystem::path work_dir;  ///< empty when the caller provided it
    bool work_dir_mounted = false;   ///< the disk limit's tmpfs is over it
    std::optional<cgroup_limits> cgroup;
    std::optional<engine_cgroup> container_cgroup;  ///< docker and podman: --cgroup-parent
    std::optional<cgroup_usage> usage;  ///< the command's tree, read before its cgroup goes
    std::filesystem::path cid_file;     ///< docker and podman write the container id here
    bool container_created = false;
    int idmapped = 0;   ///< paths staged below the record (idmapped, or copies of their mounts)
    std::vector<unique_fd> fds;  ///< handed to the launched program (a Landlock ruleset, a seccomp program)
    std::optional<run_uid> uid;  ///< the run's own uid, held until everything of the run is gone
    run_record record;  ///< for a later sweep, should this process die before release()

    void release() noexcept;
    ~run_resources() { release(); }
};

}  // namespace sandbox::detail

#endif
