// SPDX-License-Identifier: BSL-1.0
// Containers whose starter is gone. A process that is SIGKILLed cannot remove the containers
// it started, and the engine keeps them running with no deadline. Every container carries
// labels naming this machine, the starting process, its run's record and its deadline; a runner for a
// container driver removes, at its first launch and every ten minutes after (so a
// long-lived process also clears what a removal missed), off the caller's thread, those
// of this machine whose deadline has passed or whose starter no longer exists.
#ifndef SANDBOX_SRC_DRIVERS_ORPHANS_HPP
#define SANDBOX_SRC_DRIVERS_ORPHANS_HPP

#include <chrono>
#include <cstdint>
#include <optional>
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
/// epoch; 0: none) and whose run holds the record `record` (empty: none).
std::vector<std::string> container_labels(std::int64_t deadline, const std::string& record = {});

/// The identity of directory `dir` ("<device>:<inode>"; empty when it cannot be read): a
/// record is judged only by a process that sees the directory it was made in, not another
/// mount namespace's /tmp at the same path.
std::string directory_id(const std::string& dir);

/// Whether the run holding record `record` (made in the directory of identity `dir_id`)
/// still runs, judged by what it holds rather than by a pid this process may not see (a
/// runner in another pid namespace, or under hidepid): a record whose lock is free, or that
/// is gone, belongs to a run that ended. Where the record cannot be judged (another
/// directory at that path, another user's), the run is taken to be alive.
bool record_held(const std::string& record, const std::string& dir_id);

/// One line of `ps -a --format '{{.Names}} {{.Labels}}'`: docker writes the labels as
/// "k=v,k=v", podman as "map[k:v k:v]".
struct labelled_container {
    std::string name;
    std::string machine;
    std::string owner;
    std::string record;     ///< the run's record, when the container carries one
    std::string record_dir;  ///< directory_id of the record's directory
    std::int64_t deadline = 0;
};
labelled_container parse_ps_line(std::string_view line);

/// Whether a container of this machine is to be removed at `now` (seconds since the epoch).
bool is_orphan(const labelled_container& c, std::int64_t now, bool owner_is_alive);
/// Whether the run that started `c` still runs: by its record when it has one, else (a
/// container of an older release) by its owner's pid.
bool starter_alive(const labelled_container& c);

/// A Slurm job's comment naming its run: "sandbox.run <machine> <directory_id> <record>".
/// A later process cancels the job of a run that died (a SIGKILLed runner runs no cancel).
std::string run_comment(const std::string& record);
struct commented_run {
    std::string machine;
    std::string record_dir;  ///< directory_id of the record's directory
    std::string record;
};
/// The run a comment names, or nullopt when it is not one of run_comment's.
std::optional<commented_run> parse_run_comment(std::string_view comment);

/// Cancels the Slurm jobs of this machine's runs that died without cancelling them: `squeue
/// --me` (tools found on PATH) lists the user's jobs with their comments, and a job whose
/// record nobody holds is `scancel`led. Jobs of other machines, and records this process
/// cannot judge, are left alone. Each call is bounded to 30 s. Blocking: never on an io thread.
void cancel_slurm_jobs_of_dead_runs(const std::vector<std::string>& env);

/// The output of an engine's client (`args`, environment `env`), or nullopt when it could
/// not start or did not end within `bound` (it is killed then, with what it started).
/// Blocking: never on an io thread.
std::optional<std::string> engine_output(const std::vector<std::string>& args, const std::vector<std::string>& env,
                                         std::chrono::milliseconds bound);

/// A line of `podman ps -a --external --format "{{.Names}} {{.State}} {{.Created.Unix}}"`
/// naming a container of ours that podman's database never got: its client was killed while
/// it was created. Such a container has no labels; it is the library's by its name, and dead
/// once it has been in storage only for `grace` (a creation takes milliseconds there).
bool is_storage_leftover(std::string_view line, std::int64_t now, std::chrono::seconds grace);

/// Removes this machine's orphaned containers of `binary`'s engine now (blocking: never on
/// an io thread; each engine call is bounded by `bound`, after which the client is killed
/// and the sweep gives up), and on podman the containers left in storage only for
/// `storage_grace`. Returns the names the engine says it removed.
std::vector<std::string> sweep_orphans(const std::string& binary, bool podman, const std::vector<std::string>& env,
                                       std::chrono::milliseconds bound = std::chrono::seconds(30),
                                       std::chrono::seconds storage_grace = std::chrono::minutes(2));

/// Starts the sweep of `binary`'s engine on an engine-call thread (a hung engine delays no
/// one else's cleanup), unless one was started
/// in this process less than ten minutes ago. Never throws; the sweep's failures are
/// ignored (the engine may be down).
void sweep_orphans_when_due(const std::string& binary, bool podman, std::vector<std::string> env);

}  // namespace sandbox::detail

#endif
