// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_DRIVER_HPP
#define SANDBOX_DRIVER_HPP

#include <sandbox/detail/export.hpp>

#include <array>
#include <string_view>

namespace sandbox {

/// Where a command runs. `slurm` sends each execution to a Slurm cluster as a job step,
/// where another driver (driver_options::slurm.inner) applies the policy on the node.
/// `landlock` confines the command on the host with the kernel's Landlock and seccomp,
/// without namespaces.
enum class driver { host, docker, podman, firejail, bubblewrap, slurm, landlock };

/// Every driver, in declaration order (host first), for loops over them.
inline constexpr std::array<driver, 7> all_drivers{driver::host,       driver::docker, driver::podman,
                                                   driver::firejail,   driver::bubblewrap,
                                                   driver::slurm,      driver::landlock};

/// The driver's name, as parse_driver() and `sandbox-run --driver` take it: "host", "docker",
/// "podman", "firejail", "bubblewrap", "slurm" or "landlock".
SANDBOX_DECL std::string_view to_string(driver d) noexcept;

/// Exact, lower-case names. Anything else throws std::invalid_argument
/// "Unsupported sandbox driver: <name>. Allowed: host, docker, podman, firejail, bubblewrap, slurm, landlock".
SANDBOX_DECL driver parse_driver(std::string_view name);

}  // namespace sandbox

#endif
