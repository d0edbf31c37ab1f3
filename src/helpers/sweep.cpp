// SPDX-License-Identifier: BSL-1.0
// sandbox-sweep: run by the spawn helper once the library's process has ended, however it
// ended. A SIGKILLed process runs no destructor, and what its runs left goes on without it:
// a firejail command (set-id, so without a parent-death signal), a container the engine
// runs. Their run records are no longer locked, so this is the sweep a later runner would
// make, made at once: it kills what is left in the dead runs' cgroups, removes their work
// dirs, removes their containers on docker and podman and cancels their Slurm jobs (each
// engine call bounded).
#include "drivers/orphans.hpp"
#include "drivers/run_record.hpp"
#include "drivers/support.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <exception>
#include <string>
#include <tuple>
#include <vector>

int main()
{
    namespace d = sandbox::detail;
    try {
        if (d::sweep_dead_runs(d::run_record_dir()).empty()) return 0;  // nothing of a dead run
        std::vector<std::string> env;
        for (char** e = environ; *e; ++e) env.emplace_back(*e);
        for (const auto& [tool, variable, podman] :
             {std::tuple{"docker", "DOCKER_BIN", false}, std::tuple{"podman", "PODMAN_BIN", true}}) {
            const char* named = std::getenv(variable);
            std::string binary = named && *named ? std::string(named) : d::find_on_path(tool);
            if (!binary.empty() && binary.find('/') == std::string::npos) binary = d::find_on_path(binary);
            if (!binary.empty() && ::access(binary.c_str(), X_OK) == 0)
                (void)d::sweep_orphans(binary, podman, env, std::chrono::seconds(20));
        }
        d::cancel_slurm_jobs_of_dead_runs(env);
    } catch (const std::exception&) {
        return 1;  // best effort: the next runner's sweep finishes the job
    }
    return 0;
}
