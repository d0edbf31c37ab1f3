// SPDX-License-Identifier: BSL-1.0
// The drivers: a new one is a file with its spec, and a line here (the array is as long as
// sandbox::driver_table, so a missing line does not build).
#include "drivers/driver_spec.hpp"

#include <array>
#include <functional>
#include <stdexcept>
#include <string>

namespace sandbox::detail {

namespace {

constexpr std::array<std::reference_wrapper<const driver_spec>, all_drivers.size()> table{
    host_driver, docker_driver, podman_driver, bubblewrap_driver, firejail_driver, slurm_driver, landlock_driver,
};

}  // namespace

const driver_spec& spec_of(driver d)
{
    for (const driver_spec& spec : table)
        if (spec.id == d) return spec;
    throw std::invalid_argument("Unsupported sandbox driver: " + std::to_string(static_cast<int>(d)));
}

}  // namespace sandbox::detail
