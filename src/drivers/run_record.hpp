// SPDX-License-Identifier: BSL-1.0
// What a run of an isolating driver leaves on the host while it lasts (its work dir, the
// disk limit's mount over it, its cgroups, the container id file), recorded so that another
// process can clean up after one that was SIGKILLed. Each run owns a directory
// `<tmp>/<name>.run`, mode 0700, locked with flock for as long as the run lasts and holding a
// link to the work dir; a record nobody holds the lock of belongs to a dead run.
#ifndef SANDBOX_SRC_DRIVERS_RUN_RECORD_HPP
#define SANDBOX_SRC_DRIVERS_RUN_RECORD_HPP

#include <filesystem>
#include <string>
#include <vector>

namespace sandbox::detail {

class run_record {
public:
    run_record() = default;
    /// Creates and locks the record of run `name` (the work dir's and cgroups' name), whose
    /// work dir is `work_dir` (empty: none of its own). Throws launch_error naming the
    /// directory when it cannot be made.
    static run_record create(const std::string& name, const std::filesystem::path& work_dir,
                             std::string_view error_name);

    run_record(run_record&& o) noexcept : dir_(std::move(o.dir_)), fd_(o.fd_) { o.fd_ = -1; o.dir_.clear(); }
    run_record& operator=(run_record&& o) noexcept;
    run_record(const run_record&) = delete;
    run_record& operator=(const run_record&) = delete;
    ~run_record() { release(); }

    /// The record's directory (0700, ours): a place for files of the run only we may reach,
    /// and for mounts directly below it (detached when the record goes, never descended into).
    const std::filesystem::path& dir() const noexcept { return dir_; }

    /// Removes the record and drops the lock. Call after everything it names is gone.
    void release() noexcept;

    /// Drops the lock but keeps the record, for what could not be removed now (descriptors
    /// ran out): the next sweep, which this asks for, finishes the job.
    void abandon() noexcept;

private:
    std::filesystem::path dir_;
    int fd_ = -1;  // holds the lock
};

/// The directory records are kept in: the temporary directory (TMPDIR, else /tmp).
std::filesystem::path run_record_dir();

/// Cleans up after every dead run recorded in `records` (blocking: never on an io thread):
/// kills what is left in its cgroups and removes them, detaches a mount over its work dir,
/// removes the work dir and the record. Returns the names of the runs it cleaned up.
std::vector<std::string> sweep_dead_runs(const std::filesystem::path& records);

/// sweep_dead_runs(run_record_dir()) on a blocking-work thread: once per process, and again
/// after a run of this process abandoned its record. Cheap when there is nothing to do.
void sweep_dead_runs_once();

}  // namespace sandbox::detail

#endif
