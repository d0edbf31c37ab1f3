// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_MOUNT_HPP
#define SANDBOX_MOUNT_HPP

#include <sandbox/detail/export.hpp>
#include <sandbox/driver.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace sandbox {

class execution_policy;

/// A bind mount for container drivers.
struct mount {
    std::string host;       ///< the path on the host
    std::string container;  ///< where it appears to the command
    std::string options;    ///< "ro" or "rw"

    /// "host:container:options", the form of docker and podman `-v`.
    std::string to_volume_arg() const { return host + ':' + container + ':' + options; }

    /// True for "ro".
    bool read_only() const noexcept { return options == "ro"; }

    /// Equal when every member is.
    friend bool operator==(const mount&, const mount&) = default;
};

/// Where a policy's writable and readable paths appear to a command run by driver `d`.
/// Skipped (they take no index): paths that do not exist, paths holding ':', and, as the
/// reference package documents, paths with a `..` component or a symlink anywhere in them:
/// a link a command once planted in its writable workspace must never lead a later run's
/// mount elsewhere (`out -> /etc`). Pass the real path to mount what a link points to.
/// A launch on an isolating driver refuses such a path (launch_error, invalid_argument,
/// naming it) rather than run the command without it.
/// Writable ones first, as `/mnt/rw<i>` ("rw"), then readable ones as `/mnt/ro<i>` ("ro");
/// under firejail and on the host they keep their host paths.
SANDBOX_DECL std::vector<mount> mounts_for(const execution_policy& policy, driver d);

/// Why readable or writable path `p` cannot be mounted at its place ("does not exist",
/// "holds ':'", "is reached through a symbolic link or '..'"), or empty when it can: what
/// mounts_for skips and a launch refuses.
SANDBOX_DECL std::string mount_path_problem(const std::filesystem::path& p);

}  // namespace sandbox

#endif
