// SPDX-License-Identifier: BSL-1.0
#include <sandbox/capabilities.hpp>
#include <sandbox/driver.hpp>
#include <sandbox/output.hpp>

#include <stdexcept>
#include <string>

namespace sandbox {

std::string_view to_string(driver d) noexcept
{
    switch (d) {
    case driver::host: return "host";
    case driver::docker: return "docker";
    case driver::podman: return "podman";
    case driver::firejail: return "firejail";
    case driver::bubblewrap: return "bubblewrap";
    case driver::slurm: return "slurm";
    case driver::landlock: return "landlock";
    }
    return "unknown";
}

driver parse_driver(std::string_view name)
{
    for (driver d : all_drivers)
        if (to_string(d) == name) return d;
    throw std::invalid_argument("Unsupported sandbox driver: " + std::string(name) +
                                ". Allowed: host, docker, podman, firejail, bubblewrap, slurm, landlock");
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
