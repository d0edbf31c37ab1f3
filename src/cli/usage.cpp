// SPDX-License-Identifier: BSL-1.0
// The --help text of sandbox-run.
#include "options.hpp"

#include <sandbox/driver.hpp>

#include <algorithm>
#include <cstddef>
#include <string>

namespace sandbox::cli {

namespace {

// "  name        summary", one line a driver, from the library's table (the bash completion
// reads the names back from here).
std::string driver_lines()
{
    std::string out;
    for (const auto& row : driver_table) {
        std::string line = "  " + std::string(row.name);
        line.resize(std::max<std::size_t>(line.size() + 2, 14), ' ');
        out += line + std::string(row.summary) + "\n";
    }
    return out;
}

}  // namespace

std::string usage_text()
{
    return R"(Usage: sandbox-run [OPTIONS] [--] COMMAND [ARG...]
       sandbox-run [OPTIONS] --batch JOBS.jsonl [-j N] [-o RESULTS.jsonl]
       sandbox-run report RESULTS.jsonl [-o REPORT.html]   (an HTML page; report --help)
       sandbox-run slurm-step ...   (what the slurm driver starts on a node; not by hand)

Runs a command under an execution policy (time, memory, network, environment, paths and
output limits), or a batch of commands from a file of JSON lines.

Policy (the --policy file is loaded first, then the flags override it):
  --policy FILE            the policy as a JSON object with any of the keys base_dir,
                           timeout_seconds, idle_timeout_seconds, memory_limit,
                           readable_paths, writable_paths, env, inherit_env,
                           network_enabled, stdout_limit_bytes, stderr_limit_bytes,
                           env_allowlist, disk_limit
  --driver NAME            where the command runs: host (the default) or another of
                           the drivers listed below
  --image IMAGE            container image for docker and podman (default alpine:3)
  --partition NAME         slurm: the partition (default: the cluster's default)
  --inner-driver NAME      slurm: what applies the policy on the node, bubblewrap
                           (default) or host
  --srun-arg ARG           slurm: one more argument for srun (repeatable), e.g.
                           --srun-arg=--account=ml
  --timeout DURATION       wall-clock limit for the whole command (default 5; a
                           batch's jobs: none); 0 or none: no limit
  --idle-timeout DURATION  stop the command after this long without any output;
                           0 or none turns it off (default off)
  --memory SIZE            memory limit, e.g. 512M or 1.5G (default 128M, at least 1M,
                           whole MiB; there is always one: no none); enforced by
                           the isolating drivers, not by host
  --disk SIZE              what the command may write to /work and to /tmp, each
                           (e.g. 256M, at least 1M; default none: no limit);
                           enforced by the isolating drivers
  --network, --no-network  allow or deny network access (default deny; not enforced by host)
  -e, --env NAME=VALUE     set a variable (repeatable; adds to the file's variables);
                           NAME alone copies its value from this environment; a blocked
                           name is refused (exit 2), naming the pattern that blocks it
  --unblock-env NAME       pass the blocked variable NAME on purpose (repeatable; from
                           --env, the policy file and, with --inherit-env, this
                           environment); policy JSON: "env_unblocked": [NAME, ...]
  --inherit-env, --no-inherit-env
                           start from this program's environment (default: only --env);
                           blocked names never pass: loader and interpreter hooks
                           (LD_PRELOAD, BASH_ENV, PYTHON*, NODE_OPTIONS, ...) and
                           credentials (AWS_SECRET_ACCESS_KEY, GCP_*, *_TOKEN,
                           *_API_KEY, *_SECRET, *_PASSWORD, SSH_AUTH_SOCK, ...;
                           all in include/sandbox/environment.hpp)
  --ro PATH                make PATH readable (repeatable; adds to the file's list)
  --rw PATH                make PATH writable (repeatable; adds to the file's list)
  --base-dir DIR           where commands run on host, and where the isolating drivers
                           make their work dirs (default /tmp)
  --stdout-cap SIZE        keep at most the last SIZE bytes of stdout in results
                           (default 1M, at least 1K: less is refused); streamed
                           output is never cut
  --stderr-cap SIZE        the same for stderr
  --show-policy            print the resulting policy as JSON and exit
  --dry-run                print what the driver would start (the real command line,
                           environment and working directory) and start nothing; as
                           one JSON object with --json
  -v, --verbose            print what starts on stderr first (each job's, in a batch)
  --strict                 a setting given that the driver does not enforce (--memory,
                           --disk, --no-network, --ro/--rw on host) is an error, exit 125;
                           without it, one warning line each on stderr

One command (the default mode):
  --json                   print the result as one JSON object (stdout, stderr, exit_code,
                           duration, timed_out, truncated_stdout, truncated_stderr,
                           success, timeout_reason, term_signal, usage, oom_killed,
                           start_error, driver, caps: what the driver enforces) instead
                           of streaming the output; bytes that are not UTF-8 show as U+FFFD
  --no-stdin               do not pass stdin on; otherwise, when stdin is not a terminal,
                           it is the command's stdin, read by the command as it comes
  The command's output is written to stdout and stderr as it comes. SIGINT, SIGTERM and
  SIGHUP stop the command (its whole process tree) and sandbox-run exits 128+signal.
  When sandbox-run ends the command (a timeout, the memory limit), one line on stderr
  says why and which setting did it.

Batch:
  --batch FILE             run the jobs in FILE ("-" for stdin), one JSON object a line:
                             {"id": "a1", "argv": ["cmd", "arg"], "stdin": "text",
                              "policy": {"timeout_seconds": 2}, "driver": "docker",
                              "image": "alpine:3"}
                           argv is required; id defaults to the line number; the keys of
                           policy override the command-line policy for that job, driver
                           and image its driver and image
  -j, --jobs N             run N jobs at a time (default: the number of CPUs); as with
                           GNU parallel, N% of the CPUs (200%), +N or -N CPUs (at
                           least 1), or 0: all the jobs at once, at most 256
  --warm N                 keep N sandboxes of the batch's driver and policy started
                           ahead, so a job finds its sandbox ready (isolating drivers
                           but slurm; jobs with a driver or policy of their own start
                           cold; default 0: none)
  -o, --output FILE        write the results to FILE instead of stdout
  --progress, --no-progress
                           show or hide the progress line on stderr (default: shown when
                           stderr is a terminal)
  --max-line SIZE          longest input line accepted (default 64M, at least 1)
  -k, --keep-order         write the results in input order (default: as jobs end); a
                           result waits for those before it, and while 16M of results
                           wait, no new job starts
  --retries N              run a job that failed to start or did not succeed up to N
                           more times (default 0); "attempts" in its result
  --halt WHEN              never (default), now,fail=N or soon,fail=N: after N failed
                           jobs start no more; now also cancels the running ones;
                           fail=X%: once 10 jobs or more have ended, when X% of the
                           jobs ended so far failed (cancelled ones not counted)
  --resume RESULTS         skip the jobs whose id has a result in RESULTS (the -o file
                           of an earlier run; a cancelled job has none and runs again);
                           with -o the same file, its results stay and the new ones are
                           added, and a file that does not exist yet is a first run; the
                           summary counts the whole batch, the exit status this run; ids
                           must be unique
  --resume-failed          with --resume: run again the jobs whose result failed
  --lock-policy            a job line may only tighten the policy (shorter timeouts,
                           less memory, disk or output, network off, fewer paths) and
                           may not change the driver or image
  One result line is written (and flushed) as each job ends, in the order they end:
    {"id": ..., "line": N, "attempts": A, "started_at": "...", "ended_at": "...",
     "stdout": ..., "exit_code": ..., ...}  (the keys of --json)
    {"id": ..., "line": N, ..., "error": "what is wrong"}   for a line that could not run
  started_at and ended_at are RFC 3339 UTC times with microseconds (first attempt's
  start, last attempt's end). Numbers are plain decimals.
  A slow reader of the results never holds up the running jobs; while 1M of results
  wait for it, no new job starts. Blank lines are skipped. At the end a summary goes to
  stderr: jobs, succeeded, failed, timed out, errors, cancelled, not run, wall time,
  jobs/s. As with GNU parallel, a first SIGTERM starts no more jobs and lets the
  running ones finish; Ctrl-C (SIGINT, SIGHUP, or SIGTERM again) also cancels the
  running ones (their results say "cancelled"). Either way sandbox-run reports the
  lines that were not run and the command that resumes; the results are still
  written, unless a signal comes again once no job is running. With -o FILE the results go to a temporary file beside FILE, renamed to
  FILE when the batch ends; a run killed outright leaves them there, and
  --resume FILE -o FILE takes them in. An -o that is the jobs file is refused.

Other:
  -h, --help               show this help and exit
  -V, --version            show the version and exit

Values: --name VALUE or --name=VALUE (and -jN, -oFILE). DURATION is in seconds with an
optional fraction (0.5, 2) or a unit (500ms, 1.5s, 90m, 1h, 1d), as GNU timeout takes
it. SIZE is in bytes or with K, M, G or T, in any case and with an optional fraction
(64k, 1.5G): all powers of 1024, so KB, MB, GB and TB mean KiB, MiB, GiB and TiB here
(as docker and systemd read them). A value below a flag's minimum is refused.

Drivers:
)" + driver_lines() + R"(
Exit status, one command:
  N        the command's own exit status
  124      the command timed out (wall or idle), as with GNU timeout
  125      the sandbox itself failed (e.g. the driver could not start)
  126      the command was found but could not be executed
  127      the command was not found
  128+N    the command was killed by signal N
  130, 143 sandbox-run was interrupted by SIGINT or SIGTERM (the command was stopped)
  2        bad usage: a bad option or value (one line on stderr names it)
Exit status, batch:
  0 every job succeeded, 1 some did not (or a line was bad, or --halt stopped it),
  2 bad usage, 125 --strict refused a setting of the command line,
  130 (143) stopped by SIGINT (SIGTERM).
)";
}

}  // namespace sandbox::cli
