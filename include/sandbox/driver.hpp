// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_DRIVER_HPP
#define SANDBOX_DRIVER_HPP

#include <sandbox/detail/export.hpp>

#include <array>
#include <cstddef>
#include <string_view>

namespace sandbox {

/// Where a command runs. `slurm` sends each execution to a Slurm cluster as a job step,
/// where another driver (driver_options::slurm.inner) applies the policy on the node.
/// `landlock` confines the command on the host with the kernel's Landlock and seccomp,
/// without namespaces.
enum class driver { host, docker, podman, firejail, bubblewrap, slurm, landlock };

/// One row of driver_table.
struct driver_info {
    driver id;                 ///< the enumerator
    std::string_view name;     ///< what to_string() gives and parse_driver() takes
    std::string_view summary;  ///< what it is, in a few words (sandbox-run --help lists them)
};

/// Every driver, in declaration order (host first), with its name: the one list that
/// to_string(), parse_driver() and its "Allowed:" message, `sandbox-run --help` and its
/// bash completion are made from, and that the tests check the JSON schemas, the manual and
/// the README against.
inline constexpr std::array<driver_info, 7> driver_table{{
    {driver::host, "host", "a plain child process, no isolation (the default)"},
    {driver::docker, "docker", "one container per command, by the docker engine (--image)"},
    {driver::podman, "podman", "one container per command, by podman (--image)"},
    {driver::firejail, "firejail", "firejail's namespaces, with the library's seccomp table"},
    {driver::bubblewrap, "bubblewrap", "bwrap's namespaces, with the library's seccomp table"},
    {driver::slurm, "slurm", "each command a Slurm job step on a cluster node (--inner-driver)"},
    {driver::landlock, "landlock", "Landlock and seccomp on the host, no namespaces"},
}};

namespace detail {
constexpr std::array<driver, driver_table.size()> ids_of_table()
{
    std::array<driver, driver_table.size()> ids{};
    for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = driver_table[i].id;
    return ids;
}
}  // namespace detail

/// Every driver, in declaration order (host first), for loops over them.
inline constexpr std::array<driver, driver_table.size()> all_drivers = detail::ids_of_table();

/// The driver's name, as parse_driver() and `sandbox-run --driver` take it: "host", "docker",
/// "podman", "firejail", "bubblewrap", "slurm" or "landlock".
SANDBOX_DECL std::string_view to_string(driver d) noexcept;

/// Exact, lower-case names. Anything else throws std::invalid_argument
/// "Unsupported sandbox driver: <name>. Allowed: " and every name of driver_table, in its
/// order, separated by ", ".
SANDBOX_DECL driver parse_driver(std::string_view name);

}  // namespace sandbox

#endif
