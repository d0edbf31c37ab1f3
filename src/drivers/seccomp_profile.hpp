// SPDX-License-Identifier: BSL-1.0
// A seccomp profile for podman without user namespaces inside the container.
#ifndef SANDBOX_SRC_DRIVERS_SECCOMP_PROFILE_HPP
#define SANDBOX_SRC_DRIVERS_SECCOMP_PROFILE_HPP

#include <sandbox/detail/config.hpp>

#include <filesystem>
#include <string>
#include <string_view>

namespace sandbox::detail {

/// An OCI seccomp profile (JSON) with clone, clone3, unshare and setns taken out of its
/// unconditional allow lists: clone is allowed without namespace flags, clone3 fails with
/// ENOSYS (the C library then uses clone), unshare and setns with EPERM. Throws on JSON
/// that is not a profile.
std::string without_user_namespaces(std::string_view profile_json);

/// podman's default profile (/etc/containers, then /usr/share/containers) made so, written
/// once per process to a file only this user can change. Empty, with `why`, when it
/// cannot be made.
std::filesystem::path podman_seccomp_profile(std::string& why);

}  // namespace sandbox::detail

#endif
