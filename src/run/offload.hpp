// SPDX-License-Identifier: BSL-1.0
// Blocking steps off the io threads: posix_spawn (which waits for the child's exec), removing
// a work dir of 100,000 files, a cgroup removal. They run on a few long-lived threads of the
// library and hand their result back to a strand of the io_context.
#ifndef SANDBOX_SRC_RUN_OFFLOAD_HPP
#define SANDBOX_SRC_RUN_OFFLOAD_HPP

#include "run/child.hpp"

#include <sandbox/detail/config.hpp>

#include <boost/asio/execution_context.hpp>
#include <boost/asio/post.hpp>

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>
#include <unordered_set>
#include <utility>

namespace sandbox::detail {

/// Which threads run a step: spawns must not queue behind a long removal, nor removals behind
/// sandboxes being started ahead (command_runner::prewarm), which wait for their tools, nor
/// anything behind an engine call that may hang (the sweep's `docker ps`).
enum class worker { spawn, blocking, warm, engine };

/// Runs `job` on a thread of `w`. The threads belong to the process, not to an io_context,
/// and never end: a launcher that dies with the thread that started it
/// (bwrap --die-with-parent watches its parent *thread*) lives as long as it should. After a
/// fork, the child process gets threads of its own on first use. Where no thread can be made
/// at all (the process limit is reached), `job` runs on the caller's thread.
void run_on(worker w, std::function<void()> job);

/// True on one of the threads run_on() uses: they live as long as the process.
bool on_library_thread() noexcept;

/// Per io_context, hands the results of offloaded steps back to the context, and makes sure
/// nothing is handed back, and nothing of the context is touched by a worker, once the
/// context is shutting down: the result is then destroyed on the worker (a spawned child
/// with it: child_process kills and reaps it).
class offload_service : public asio::execution_context::service {
public:
    using key_type = offload_service;
    static asio::execution_context::id id;

    explicit offload_service(asio::execution_context& ctx)
        : asio::execution_context::service(ctx), gate_(std::make_shared<gate>())
    {
    }

    /// Runs `work()` (which must use nothing of the io_context) on a `w` thread, then
    /// `then(result)` on `target`. `then` is destroyed without a call if the context shuts
    /// down first.
    template <typename Work, typename Then>
    void run(worker w, strand_type target, Work work, Then then)
    {
        using result_type = std::invoke_result_t<Work&>;
        auto o = std::make_shared<op<Work, Then, result_type>>(std::move(target), std::move(work), std::move(then));
        {
            std::lock_guard lock(gate_->mutex);
            if (gate_->closed) return;
            gate_->ops.insert(o.get());
        }
        run_on(w, [g = gate_, o] {
            o->work();
            std::lock_guard lock(g->mutex);
            g->ops.erase(o.get());
            if (!g->closed) o->complete();
        });
    }

private:
    struct op_base {
        virtual ~op_base() = default;
        // What belongs to the context (the strand, the continuation), moved out for
        // destruction while the context still exists.
        virtual std::shared_ptr<void> take_context() noexcept = 0;
    };

    template <typename Work, typename Then, typename Result>
    struct op final : op_base {
        op(strand_type s, Work w, Then t) : work_fn(std::move(w)), ctx(std::make_shared<context_part>(std::move(s), std::move(t))) {}
        struct context_part {
            context_part(strand_type s, Then t) : strand(std::move(s)), then(std::move(t)) {}
            strand_type strand;
            Then then;
        };
        void work() { result.emplace(work_fn()); }
        // Under the gate's lock, the context alive: posts the continuation.
        void complete()
        {
            auto c = std::move(ctx);
            asio::post(c->strand, [c, r = std::move(*result)]() mutable { c->then(std::move(r)); });
            result.reset();
        }
        std::shared_ptr<void> take_context() noexcept override { return std::move(ctx); }

        Work work_fn;
        std::optional<Result> result;
        std::shared_ptr<context_part> ctx;
    };

    struct gate {
        std::mutex mutex;
        bool closed = false;
        std::unordered_set<op_base*> ops;
    };

    void shutdown() override;

    std::shared_ptr<gate> gate_;
};

/// The io_context's offload_service, from an executor of it.
offload_service& offload_of(const strand_type& s);

}  // namespace sandbox::detail

#endif
