// SPDX-License-Identifier: BSL-1.0
// Seccomp profiles for the containers: the library's syscall table (sys/syscall_rules.hpp)
// applied to the engines' default profile.
#ifndef SANDBOX_SRC_DRIVERS_SECCOMP_PROFILE_HPP
#define SANDBOX_SRC_DRIVERS_SECCOMP_PROFILE_HPP

#include "sys/syscall_rules.hpp"

#include <sandbox/detail/config.hpp>

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

namespace sandbox::detail {

/// An OCI seccomp profile (JSON) with clone, clone3, unshare and setns taken out of its
/// unconditional allow lists: clone is allowed without namespace flags, clone3 fails with
/// ENOSYS (the C library then uses clone), unshare and setns with EPERM. Throws on JSON
/// that is not a profile.
std::string without_user_namespaces(std::string_view profile_json);

/// The profile with every call that can make a set-id file allowed only without set-id
/// mode bits (EPERM with them): chmod, fchmod, fchmodat, mknod, mknodat, creat, and open and
/// openat when they create (O_CREAT, O_TMPFILE); openat2, whose mode a filter cannot read,
/// fails with ENOSYS. What makes an idmapped writable path safe when its owner is root.
std::string without_setid_files(std::string_view profile_json);

/// The profile with `calls` taken out of every rule and refused with `error`.
std::string refusing(std::string_view profile_json, std::span<const std::string_view> calls, int error);

/// The profile with the rows in `rules` of the syscall table applied (only rows a container
/// can take: those of shape calls, namespace_flags and setid_modes; others throw).
std::string with_syscall_rules(std::string_view profile_json, std::uint32_t rules);

/// The containers' default profile (/etc/containers, then /usr/share/containers, as podman
/// uses it) with `rules` applied, written once per process and rule set to a file only this
/// user can change. docker takes it too. Empty, with `why`, when it cannot be made.
std::filesystem::path seccomp_profile_file(std::uint32_t rules, std::string& why);

}  // namespace sandbox::detail

#endif
