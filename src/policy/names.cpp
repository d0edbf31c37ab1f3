// SPDX-License-Identifier: BSL-1.0
#include <sandbox/capabilities.hpp>
#include <sandbox/driver.hpp>
#include <sandbox/output.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace sandbox {

// Each enumerator at its own index: to_string() is an index, and a row out of place fails
// the build here rather than naming the wrong driver.
static_assert([] {
    for (std::size_t i = 0; i < driver_table.size(); ++i)
        if (static_cast<std::size_t>(driver_table[i].id) != i) return false;
    return true;
}());
// A switch with no default, so that an enumerator added without a row is a -Wswitch
// warning here (an error in our builds) as well as an out-of-range index below.
constexpr bool in_table(driver d)
{
    switch (d) {
    case driver::host:
    case driver::docker:
    case driver::podman:
    case driver::firejail:
    case driver::bubblewrap:
    case driver::slurm:
    case driver::landlock: return static_cast<std::size_t>(d) < driver_table.size();
    }
    return false;
}
static_assert(in_table(driver::landlock));

std::string_view to_string(driver d) noexcept
{
    const auto i = static_cast<std::size_t>(d);
    return i < driver_table.size() ? driver_table[i].name : "unknown";
}

driver parse_driver(std::string_view name)
{
    std::string allowed;
    for (const auto& row : driver_table) {
        if (row.name == name) return row.id;
        allowed += (allowed.empty() ? "" : ", ") + std::string(row.name);
    }
    throw std::invalid_argument("Unsupported sandbox driver: " + std::string(name) + ". Allowed: " + allowed);
}

std::string_view to_string(stream_kind k) noexcept { return k == stream_kind::out ? "out" : "err"; }

std::string_view to_string(isolation i) noexcept
{
    switch (i) {
    case isolation::none: return "none";
    case isolation::confined: return "confined";
    case isolation::namespaces: return "namespaces";
    case isolation::container: return "container";
    }
    return "unknown";
}

}  // namespace sandbox
