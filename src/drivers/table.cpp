// SPDX-License-Identifier: BSL-1.0
// The drivers: a new one is a file with its row, and a line here.
#include "drivers/driver_spec.hpp"

#include <array>
#include <functional>
#include <stdexcept>
#include <string>

namespace sandbox::detail {

namespace {

constexpr std::array<std::reference_wrapper<const driver_spec>, 7> table{
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
