// SPDX-License-Identifier: BSL-1.0
// What every driver's run derives from its policy and options: timers, caps, environment
// strings, the account its commands run as.
#include "drivers/runner.hpp"

#include "drivers/driver_spec.hpp"
#include "drivers/support.hpp"

#include <unistd.h>

#include <chrono>

namespace sandbox::detail {

namespace {

// Milliseconds to nanoseconds without overflowing (a timeout of centuries is "never"), and
// never negative.
std::chrono::nanoseconds to_ns(std::chrono::milliseconds ms)
{
    constexpr auto max_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::nanoseconds::max());
    if (ms <= std::chrono::milliseconds::zero()) return std::chrono::nanoseconds::zero();
    if (ms >= max_ms) return std::chrono::nanoseconds::max();
    return ms;
}

}  // namespace

std::vector<std::string> env_strings(const env_list& env)
{
    std::vector<std::string> out;
    out.reserve(env.size());
    for (const auto& [name, value] : env) out.push_back(name + '=' + value);
    return out;
}

run_limits limits_for(const execution_policy& policy, const driver_options& options, const exec_options& o)
{
    run_limits limits;
    limits.timing.wall = to_ns(wall_timeout(policy, o).value_or(no_timeout));
    if (policy.idle_timeout()) limits.timing.idle = to_ns(*policy.idle_timeout());
    limits.timing.kill_grace = to_ns(options.kill_grace);
    limits.timing.drain = to_ns(options.drain_timeout);
    limits.timing.exit_watch_delay = std::chrono::milliseconds(50);
    limits.stdout_cap = policy.stdout_limit_bytes();
    limits.stderr_cap = policy.stderr_limit_bytes();
    return limits;
}

std::pair<uid_t, gid_t> command_ids(driver d, const driver_options& options)
{
    const auto& spec = spec_of(d);
    if (spec.user)
        if (auto user = spec.user(options, ::geteuid() == 0); user.problem.empty()) return {user.uid, user.gid};
    return {sandbox_uid(), sandbox_gid()};
}

}  // namespace sandbox::detail
