// SPDX-License-Identifier: BSL-1.0
// The runner where pidfd_open fails with ENOSYS, as on old kernels and under strict seccomp
// profiles. A program of its own so the filter is installed while it is single-threaded
// (forking a threaded test process would not do under ThreadSanitizer).
// Usage: sandbox_no_pidfd poll|abandon. Exits 0 when the scenario behaves, else the step
// that failed.
#include "deny_syscall.hpp"
#include "run/process_runner.hpp"

#include <sandbox/sandbox.hpp>

#include <boost/asio/io_context.hpp>

#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <string>
#include <thread>

using namespace sandbox;
using namespace std::chrono_literals;

namespace {

bool has_children()
{
    siginfo_t info{};
    return ::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid != 0;
}

// The exit is seen by polling: a command that closes its outputs and goes on, and a timeout.
int poll_scenario()
{
    auto runner = make_runner(execution_policy::defaults(), driver::host);
    const auto ok = run_sync(*runner, {"sh", "-c", "sleep 0.1; echo done; exec >&- 2>&-; sleep 0.2; exit 3"});
    if (ok.out != "done\n") return 1;
    if (ok.exit_code != 3) return 2;
    auto quick = make_runner(execution_policy::defaults().with_timeout(100ms), driver::host);
    if (!run_sync(*quick, {"sleep", "5"}).timed_out) return 3;
    return has_children() ? 4 : 0;
}

// give_up = 0: the runner stops waiting the moment it sends SIGKILL, as it would for a command
// that SIGKILL cannot end; the command dies on its own time and must still be reaped, and
// its cleanup run, with no pidfd to say when.
int abandon_scenario()
{
    asio::io_context ctx;
    std::atomic<bool> cleaned{false};
    detail::launch_plan plan{.argv = {"sh", "-c", "trap '' TERM; echo ready; while :; do sleep 1; done"},
                             .env = {"PATH=/usr/bin:/bin"}};
    plan.cleanup = [&] { cleaned = true; };
    detail::run_limits limits;
    limits.timing.wall = 100ms;
    limits.timing.kill_grace = 10ms;
    limits.timing.give_up = 0ns;
    std::optional<exec_result> result;
    detail::start_process(ctx.get_executor(), std::move(plan), limits, std::nullopt, {},
                          [&](std::exception_ptr e, exec_result r) {
                              if (!e) result = std::move(r);
                          });
    ctx.run_for(10s);
    if (!result) return 11;
    if (!result->timed_out || result->exit_code != exit_codes::timeout) return 12;
    for (int i = 0; i < 500 && (!cleaned || has_children()); ++i) std::this_thread::sleep_for(10ms);
    if (!cleaned) return 13;
    return has_children() ? 14 : 0;
}

}  // namespace

int main(int argc, char** argv)
{
    const std::string scenario = argc > 1 ? argv[1] : "";
    if (!deny_syscall(SYS_pidfd_open, ENOSYS)) return 100;
    if (::syscall(SYS_pidfd_open, ::getpid(), 0) >= 0 || errno != ENOSYS) return 101;
    if (scenario == "poll") return poll_scenario();
    if (scenario == "abandon") return abandon_scenario();
    std::fprintf(stderr, "usage: %s poll|abandon\n", argv[0]);
    return 2;
}
