// SPDX-License-Identifier: BSL-1.0
// The host driver: the command runs as a plain child in base_dir(), in its own process group,
// with the policy's environment. Nothing else is enforced (see caps()).
#include "drivers/runners.hpp"

#include "drivers/support.hpp"
#include "run/process_runner.hpp"
#include <sandbox/environment.hpp>

namespace sandbox::detail {

namespace {

class host_runner final : public command_runner {
public:
    host_runner(execution_policy policy, driver_options options)
        : policy_(std::move(policy)), options_(std::move(options))
    {
    }

    const execution_policy& policy() const override { return policy_; }

    capabilities caps() const override
    {
        return {.level = isolation::none, .network_isolated = false, .memory_enforced = false,
                .filesystem_confined = false};
    }

    void async_start(asio::any_io_executor ex, std::vector<std::string> argv, exec_options o,
                     execute_handler h) override
    {
        launch_plan plan;
        try {
            plan = make_plan(std::move(argv), o);
        } catch (...) {
            return complete_later(ex, std::move(h), std::current_exception());
        }
        plan.on_launch = std::move(o.on_launch);
        start_process(std::move(ex), std::move(plan), limits_for(policy_, options_, o), std::move(o.stdin_data),
                      std::move(o.on_output), std::move(h));
    }

    launch_preview preview(std::vector<std::string> argv, const exec_options& o) const override
    {
        auto plan = make_plan(std::move(argv), o);
        return {std::move(plan.argv), std::move(plan.env), std::move(plan.cwd)};
    }
    using command_runner::preview;

    process start(asio::any_io_executor ex, std::vector<std::string> argv, const exec_options& o) override
    {
        return start_long_lived(std::move(ex), make_plan(std::move(argv), o), limits_for(policy_, options_, o));
    }

private:
    launch_plan make_plan(std::vector<std::string> argv, const exec_options& o) const
    {
        // A missing directory is the command's start failure (start_error), like a missing
        // base dir; only a path that leaves the base dir is refused here.
        auto cwd = policy_.base_dir() / fenced_cwd(policy_.base_dir(), o.cwd, "host process", true);
        return launch_plan{.argv = std::move(argv), .env = env_strings(with_extra_env(child_environment(policy_), o.env)),
                           .cwd = std::move(cwd), .stdin_fd = o.stdin_fd};
    }

    execution_policy policy_;
    driver_options options_;
};

}  // namespace

std::vector<std::string> env_strings(const env_list& env)
{
    std::vector<std::string> out;
    out.reserve(env.size());
    for (const auto& [name, value] : env) out.push_back(name + '=' + value);
    return out;
}

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

run_limits limits_for(const execution_policy& policy, const driver_options& options, const exec_options& o)
{
    run_limits limits;
    limits.timing.wall = to_ns(o.timeout.value_or(policy.timeout()));
    if (policy.idle_timeout()) limits.timing.idle = to_ns(*policy.idle_timeout());
    limits.timing.kill_grace = to_ns(options.kill_grace);
    limits.timing.drain = to_ns(options.drain_timeout);
    limits.timing.exit_watch_delay = std::chrono::milliseconds(50);
    limits.stdout_cap = policy.stdout_limit_bytes();
    limits.stderr_cap = policy.stderr_limit_bytes();
    return limits;
}

std::unique_ptr<command_runner> make_host_runner(execution_policy policy, driver_options options)
{
    return std::make_unique<host_runner>(std::move(policy), std::move(options));
}

}  // namespace sandbox::detail
