// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_CAPABILITIES_HPP
#define SANDBOX_CAPABILITIES_HPP

#include <sandbox/detail/export.hpp>

#include <string_view>

namespace sandbox {

/// How strongly a driver separates the command from the host, weakest first, so policy
/// code can compare with >=. `confined`: the command sees the host's paths and processes,
/// but the kernel (Landlock, seccomp) limits what it may open, reach and signal.
enum class isolation { none, confined, namespaces, container };

/// The enumerator's name: "none", "confined", "namespaces" or "container".
SANDBOX_DECL std::string_view to_string(isolation i) noexcept;

/// What a runner really enforces, as opposed to what its policy asks for.
struct capabilities {
    isolation level = isolation::none;  ///< how the command is separated from the host
    bool network_isolated = false;     ///< network off unless the policy enables it
    bool memory_enforced = false;      ///< memory_limit() is a hard limit
    bool filesystem_confined = false;  ///< only /work, /tmp and the policy's paths are writable
    bool disk_enforced = false;        ///< disk_limit() bounds what /work and /tmp can hold

    /// Equal when every member is.
    friend bool operator==(const capabilities&, const capabilities&) = default;
};

}  // namespace sandbox

#endif
