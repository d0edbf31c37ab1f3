// SPDX-License-Identifier: BSL-1.0
// Every driver runs through this one runner: it asks the driver's row for a launch plan and
// hands it to the process runner, which spawns, times, caps, kills and reaps.
#include "api/driver_runner.hpp"

#include "drivers/driver_spec.hpp"
#include "drivers/runner.hpp"
#include "drivers/support.hpp"
#include "drivers/warm_pool.hpp"
#include "run/exec_outcome.hpp"
#include "run/pending_handler.hpp"
#include "run/process_state.hpp"

#include <sandbox/errors.hpp>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <unistd.h>

#include <chrono>
#include <mutex>

namespace sandbox::detail {

namespace {

// How a fill ended, written by the pool's thread and read by the waiting coroutine: nothing
// is handed to the io_context from another thread, so the context may be destroyed at any
// time (the coroutine's timer goes with it).
struct fill_state {
    std::mutex mutex;
    bool done = false;
    std::exception_ptr error;
};

// Not in the coroutine: g++ 12 destroys a lambda's captures twice when the lambda is made in
// a coroutine body.
void start_fill(const std::shared_ptr<warm_pool>& pool, std::size_t count, std::chrono::seconds idle,
                const std::shared_ptr<fill_state>& state)
{
    pool->fill(count, idle, [state](std::exception_ptr e) {
        std::lock_guard lock(state->mutex);
        state->done = true;
        state->error = e;
    });
}

// Whether the fill ended; rethrows its error.
bool fill_ended(fill_state& state)
{
    std::lock_guard lock(state.mutex);
    if (state.error) std::rethrow_exception(state.error);
    return state.done;
}

class driver_runner final : public command_runner {
public:
    driver_runner(execution_policy policy, driver_options options, const driver_spec& spec,
                  std::optional<std::pair<uid_t, gid_t>> fixed_user)
        : policy_(std::move(policy)), options_(std::move(options)), spec_(spec), fixed_user_(fixed_user)
    {
        if (spec_.on_create) spec_.on_create(context());
    }

    ~driver_runner() override
    {
        if (auto pool = std::atomic_load(&pool_)) pool->close();
    }

    const execution_policy& policy() const override { return policy_; }

    capabilities caps() const override { return spec_.caps(context()); }

    void async_run(asio::any_io_executor ex, std::vector<std::string> args, exec_options o,
                     execute_handler h) override
    {
        launch_plan plan;
        try {
            if (auto warm = take_warm(args, o)) plan = std::move(*warm);
            else plan = spec_.plan(context(), std::move(args), o);
        } catch (const launch_error& e) {
            // A working directory that does not exist is the command's failure, as on the
            // host: a 127 result saying why, not an exception.
            if (e.code() != errc::bad_working_directory || o.cwd.empty())
                return complete_later(ex, std::move(h), std::current_exception());
            exec_result r;
            (void)start_failure(e.code(), e.what(), false, r);
            return complete_later(ex, std::move(h), std::move(r), std::move(o.on_output));
        } catch (...) {
            return complete_later(ex, std::move(h), std::current_exception());
        }
        plan.stdin_fd = o.stdin_fd;
        plan.on_launch = std::move(o.on_launch);
        // A streaming caller sees one "Failed to start" line on every driver, not each
        // launcher's own words first (launch_plan::report_prefixes).
        if (o.on_output && spec_.isolating) {
            plan.report_prefixes.assign({"sandbox: "});
            for (std::string_view p : spec_.report_prefixes)
                if (!p.empty()) plan.report_prefixes.push_back(p);
        }
        start_process(std::move(ex), std::move(plan), limits_for(policy_, options_, o), std::move(o.stdin_data),
                      std::move(o.on_output), std::move(h));
    }

    process start(asio::any_io_executor ex, std::vector<std::string> args, const exec_options& o) override
    {
        // Its lifetime is its owner's: no deadline after which its container counts as an orphan.
        exec_options lived = o;
        lived.timeout = no_timeout;
        return process(start_long_lived(std::move(ex), spec_.plan(context(), std::move(args), lived),
                                        limits_for(policy_, options_, o)));
    }

    asio::awaitable<void> prewarm(std::size_t count, std::chrono::seconds idle) override
    {
        if (!spec_.isolating) co_return;  // the host driver: nothing to start
        if (spec_.id == driver::slurm)
            throw launch_error(errc::driver_unavailable,
                               "Failed to start srun: the slurm driver cannot start sandboxes ahead: each command is a "
                               "job step the scheduler places when it is asked for");
        auto state = std::make_shared<fill_state>();
        start_fill(warm_pool_of_this(), count, idle, state);
        // A sandbox takes milliseconds to seconds to start: a look every 5 ms costs nothing.
        asio::steady_timer timer(co_await asio::this_coro::executor);
        while (!fill_ended(*state)) {
            timer.expires_after(std::chrono::milliseconds(5));
            co_await timer.async_wait(asio::use_awaitable);
        }
    }
    using command_runner::prewarm;

    launch_preview preview(std::vector<std::string> args, const exec_options& o) const override
    {
        auto plan = spec_.plan(context(), std::move(args), o);
        if (plan.cleanup) plan.cleanup();  // nothing ran: the work dir, cgroups and record go at once
        return {std::move(plan.argv), std::move(plan.env), std::move(plan.cwd)};
    }
    using command_runner::preview;

private:
    driver_context context() const { return {spec_, policy_, options_, ::geteuid() == 0, fixed_user_}; }

    // The pool prewarm() fills, made on first use. Not in the coroutine: g++ 12 mishandles
    // init-captures of lambdas made inside coroutine bodies.
    std::shared_ptr<warm_pool> warm_pool_of_this()
    {
        if (auto pool = std::atomic_load(&pool_)) return pool;
        // Its own copies: a sandbox may still be starting when the runner is gone.
        struct owned {
            execution_policy policy;
            driver_options options;
        };
        auto copy = std::make_shared<const owned>(owned{policy_, options_});
        const driver_spec* spec = &spec_;
        const bool root = ::geteuid() == 0;
        auto user = fixed_user_;
        auto made = std::make_shared<warm_pool>([copy, spec, root, user] {
            return start_warm({*spec, copy->policy, copy->options, root, user});
        });
        std::shared_ptr<warm_pool> none;
        return std::atomic_compare_exchange_strong(&pool_, &none, made) ? made : none;
    }

    // A sandbox started ahead for this execution, if one is ready and the execution can use it.
    std::optional<launch_plan> take_warm(const std::vector<std::string>& args, const exec_options& o)
    {
        auto pool = std::atomic_load(&pool_);
        if (!pool || o.stdin_fd >= 0 || args.empty()) return std::nullopt;  // the hand-off needs stdin
        auto w = pool->take();
        if (!w) return std::nullopt;
        try {
            return warm_launch(context(), *w, args, o);
        } catch (...) {
            std::vector<warm_sandbox> gone;
            gone.push_back(std::move(*w));
            discard_later(std::move(gone));
            throw;
        }
    }

    execution_policy policy_;
    driver_options options_;
    const driver_spec& spec_;
    std::optional<std::pair<uid_t, gid_t>> fixed_user_;
    std::shared_ptr<warm_pool> pool_;  // made by the first prewarm(); atomic: executions read it on any thread
};

}  // namespace

std::unique_ptr<command_runner> make_driver_runner(execution_policy policy, driver_options options, driver d,
                                                   std::optional<std::pair<uid_t, gid_t>> fixed_user)
{
    return std::make_unique<driver_runner>(std::move(policy), std::move(options), spec_of(d), fixed_user);
}

}  // namespace sandbox::detail
