// SPDX-License-Identifier: BSL-1.0
// Containers whose starter is gone. A process that is SIGKILLed cannot remove the containers
// it started, and the engine keeps them running with no deadline. Every container carries
// labels naming this machine, the starting process and its deadline; a runner for a
// container driver removes, at its first launch and every ten minutes after (so a
// long-lived process also clears what a removal missed), off the caller's thread, those
// of this machine whose deadline has passed or whose starter no longer exists.
#ifndef SANDBOX_SRC_DRIVERS_ORPHANS_HPP
#define SANDBOX_SRC_DRIVERS_ORPHANS_HPP

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sandbox::detail {

/// This machine (/etc/machine-id, else the host name) and this process ("<pid>.<start time
/// in clock ticks since boot>", so a reused pid does not pass for it).
const std::string& machine_label();
const std::string& owner_label();
/// Whether an owner label names a process that still exists here.
bool owner_alive(std::string_view owner);

/// "--label k=v" arguments for a container whose deadline is `deadline` (seconds since the
/// epoch; 0: none).
std::vector<std::string> container_labels(std::int64_t deadline);

/// One line of `ps -a --format '{{.Names}} {{.Labels}}'`: docker writes the labels as
/// "k=v,k=v", podman as "map[k:v k:v]".
struct labelled_container {
    std::string name;
    std::string machine;
    std::string owner;
    std::int64_t deadline = 0;
};
labelled_container parse_ps_line(std::string_view line);

/// Whether a container of this machine is to be removed at `now` (seconds since the epoch).
bool is_orphan(const labelled_container& c, std::int64_t now, bool owner_is_alive);

/// Removes this machine's orphaned containers of `binary`'s engine now (blocking: never on
/// an io thread). Returns the names it removed.
std::vector<std::string> sweep_orphans(const std::string& binary, bool podman, const std::vector<std::string>& env);

/// Starts the sweep of `binary`'s engine on a blocking-work thread, unless one was started
/// in this process less than ten minutes ago. Never throws; the sweep's failures are
/// ignored (the engine may be down).
void sweep_orphans_when_due(const std::string& binary, bool podman, std::vector<std::string> env);

}  // namespace sandbox::detail

#endif
