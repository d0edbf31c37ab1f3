// SPDX-License-Identifier: BSL-1.0
//
// What happens after the reap: the engine's own removal of what its killed client left, then
// the driver's cleanup (work dirs, cgroups), which may take long and so runs on a
// blocking-work thread, never on an io thread.
#include "run/offload.hpp"
#include "run/process_runner.hpp"
#include "run/spawn.hpp"

#include <boost/asio/bind_executor.hpp>

namespace sandbox::detail {

void clean_up_async(const strand_type& s, launch_plan& plan, bool ended_by_us, std::function<void()> done)
{
    auto remove_then_done = [s, cleanup = std::exchange(plan.cleanup, nullptr), done = std::move(done)]() mutable {
        if (!cleanup) return done();
        offload_of(s).run(
            worker::blocking, s,
            [cleanup = std::move(cleanup)]() noexcept {
                try {
                    cleanup();
                } catch (...) {  // best effort: must not lose the result
                }
                return true;
            },
            [done = std::move(done)](bool) { done(); });
    };
    if (!ended_by_us || plan.cleanup_argv.empty()) return remove_then_done();
    // The engine does not stop what its killed client launched: its own removal, as an
    // execution of its own.
    launch_plan removal{.argv = std::exchange(plan.cleanup_argv, {}), .env = plan.env,
                        .failure_prefix = plan.failure_prefix};
    run_limits limits;
    limits.timing.wall = std::chrono::seconds(60);
    start_process(s, std::move(removal), limits, std::nullopt, {},
                  asio::bind_executor(s, [next = std::move(remove_then_done)](std::exception_ptr, exec_result) mutable {
                      next();
                  }));
}

void clean_up_now(launch_plan& plan, bool ended_by_us) noexcept
{
    if (ended_by_us && !plan.cleanup_argv.empty()) {
        spawn_request req{.argv = std::exchange(plan.cleanup_argv, {}), .env = plan.env};
        child_pipes pipes;
        std::string what;
        if (!prepare_spawn(req, pipes, what)) {
            auto o = spawn_child(req, pipes);  // its output is a line: the pipes hold it
            if (!o.error) (void)o.child.wait_and_reap();
        }
    }
    if (auto cleanup = std::exchange(plan.cleanup, nullptr)) {
        try {
            cleanup();
        } catch (...) {
        }
    }
}

}  // namespace sandbox::detail
