// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_MOUNT_HPP
#define SANDBOX_MOUNT_HPP

#include <string>

namespace sandbox {

/// A bind mount for container drivers.
struct mount {
    std::string host;
    std::string container;
    std::string options;  ///< "ro" or "rw"

    /// "host:container:options", the form of docker and podman `-v`.
    std::string to_volume_arg() const { return host + ':' + container + ':' + options; }

    friend bool operator==(const mount&, const mount&) = default;
};

}  // namespace sandbox

#endif
