// SPDX-License-Identifier: BSL-1.0
// The syscall table (sys/syscall_rules.hpp) compiled to a seccomp BPF program, which the
// library loads itself or hands to a tool (bwrap --seccomp). The containers' engines load
// the same rows through their own profiles (src/drivers/seccomp_profile.hpp).
#ifndef SANDBOX_SRC_SYS_SECCOMP_FILTER_HPP
#define SANDBOX_SRC_SYS_SECCOMP_FILTER_HPP

#include "sys/syscall_rules.hpp"

#include <sandbox/detail/unique_fd.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace sandbox::detail {

/// Writes the filter of the rows in `rules` (bit i: syscall_rules()[i]; see applicable_rules())
/// as a BPF program (what `bwrap --seccomp FD` and seccomp(2) take) to `fd`, for this machine's
/// architecture; calls of another architecture kill the caller; every other call is allowed.
/// Returns why not, or empty.
std::string write_filter(int fd, std::uint32_t rules);

/// The same program in memory, made once per process and rule set; empty with `why` when it
/// cannot be made.
const std::string& filter_program(std::uint32_t rules, std::string& why);

/// The same program in a sealed memory file (close-on-exec), to hand to a launched program
/// as a descriptor; unset with `why` when it cannot be made.
unique_fd sealed_program(std::uint32_t rules, std::string& why);

/// Loads the filter into this process (and what it executes), setting no_new_privs. Returns
/// why not, or empty.
std::string load_filter(std::uint32_t rules);

/// The rule set as row ids joined by commas ("io_uring,keys,..."), and back; parse_rules
/// returns false on an unknown id. How sandbox-seccomp-exec is told which rows to load.
std::string rules_to_names(std::uint32_t rules);
bool parse_rules(std::string_view names, std::uint32_t& rules);

}  // namespace sandbox::detail

#endif
