// SPDX-License-Identifier: BSL-1.0
// The host driver: the command runs as a plain child in base_dir(), in its own process group,
// with the policy's environment. Nothing else is enforced (see caps()).
#include "drivers/driver_spec.hpp"

#include "drivers/runner.hpp"
#include "drivers/support.hpp"
#include <sandbox/environment.hpp>

namespace sandbox::detail {

namespace {

launch_plan plan(const driver_context& ctx, std::vector<std::string> args, const exec_options& o)
{
    // A missing directory is the command's start failure (start_error), like a missing
    // base dir; only a path that leaves the base dir is refused here.
    const auto& base = ctx.policy.base_dir();
    auto p = launch_plan{.argv = std::move(args), .env = env_strings(with_extra_env(child_environment(ctx.policy), o.env, ctx.policy)),
                         .cwd = base / fenced_cwd(base, o.cwd, "host process", true), .stdin_fd = o.stdin_fd};
    p.through_helper = ctx.options.spawn_helper;
    return p;
}

capabilities caps(const driver_context&)
{
    return {.level = isolation::none, .network_isolated = false, .memory_enforced = false,
            .filesystem_confined = false};
}

}  // namespace

constinit const driver_spec host_driver{.id = driver::host, .host_paths = true, .caps = caps, .plan = plan};

}  // namespace sandbox::detail
