// SPDX-License-Identifier: BSL-1.0
// The library's side of its spawn helper (src/helpers/spawn_helper.cpp): one helper process
// per library process, started on first use from one of the library's own threads (they
// live as long as the process: the helper's children see that thread as their parent's, as
// `bwrap --die-with-parent` and a parent-death signal watch it), restarted if it dies, and
// started again in a child of fork().
#ifndef SANDBOX_SRC_RUN_HELPER_SPAWN_HPP
#define SANDBOX_SRC_RUN_HELPER_SPAWN_HPP

#include "run/spawn.hpp"

#include <string>

namespace sandbox::detail {

/// Where the helper is: $SANDBOX_SPAWN_HELPER, else its installed path (never a build tree,
/// which others may write to). Empty when it is not there.
std::string spawn_helper_path();

/// Where sandbox-sweep is: $SANDBOX_SWEEP, else its installed path; empty when it is not there.
std::string sweeper_path();

/// The helper's pid in this process, -1 when none is running: a child of this process that
/// lives as long as it (as the library's threads do), which is not any command's.
pid_t spawn_helper_pid() noexcept;

/// Spawns `req` through the helper (see spawn_child). `available` is set false, with nothing
/// done, when the helper cannot be used from here (not installed, or this is not a thread of
/// the library's); any other failure is in the outcome.
spawn_outcome spawn_through_helper(const spawn_request& req, child_pipes& pipes, bool& available);

}  // namespace sandbox::detail

#endif
