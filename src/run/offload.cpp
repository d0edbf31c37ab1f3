// SPDX-License-Identifier: BSL-1.0
#include "run/offload.hpp"

#include <boost/asio/execution/context.hpp>
#include <boost/asio/query.hpp>
#include <boost/asio/thread_pool.hpp>

#include <unistd.h>

#include <new>
#include <thread>
#include <vector>

namespace sandbox::detail {

asio::execution_context::id offload_service::id;

namespace {

thread_local bool library_thread = false;

// Two threads of each kind: two cores' worth of spawning (posix_spawn holds its thread
// 70-100 us a launch, so one thread alone already outruns the kernel's ~1,500 execs a second
// here), and removals that do not wait for each other.
constexpr int threads_per_kind = 2;

// A pool whose threads are made one by one, outside Asio's constructor: when no thread can
// be made (the pids cgroup or RLIMIT_NPROC is full) the pool keeps what it has and tries
// again on the next job, where a thread_pool(n) would throw from its constructor and then
// wait forever in its destructor for the threads it did make.
struct kind_pool {
    asio::thread_pool pool{0};
    int threads = 0;

    asio::thread_pool* grown() noexcept
    {
        for (; threads < threads_per_kind; ++threads) {
            try {
                std::thread([p = &pool] {
                    library_thread = true;
                    p->attach();
                }).detach();
            } catch (...) {
                break;
            }
        }
        return threads > 0 ? &pool : nullptr;
    }
};

struct pools {
    pid_t owner;
    kind_pool spawn;
    kind_pool blocking;
    kind_pool warm;
    kind_pool engine;
};

asio::thread_pool* pool_for(worker w) noexcept
{
    static std::mutex mutex;
    static pools* current = nullptr;
    std::lock_guard lock(mutex);
    // Never destroyed: the threads must outlive every static that a job may touch. A forked
    // child has none of its parent's threads, so it gets its own (the old ones are leaked).
    if (!current || current->owner != ::getpid()) {
        auto* made = new (std::nothrow) pools{::getpid(), {}, {}, {}, {}};
        if (!made) return nullptr;
        current = made;
    }
    switch (w) {
    case worker::spawn: return current->spawn.grown();
    case worker::blocking: return current->blocking.grown();
    case worker::warm: return current->warm.grown();
    case worker::engine: return current->engine.grown();
    }
    return nullptr;
}

}  // namespace

bool on_library_thread() noexcept { return library_thread; }

void run_on(worker w, std::function<void()> job)
{
    if (auto* pool = pool_for(w)) return asio::post(*pool, std::move(job));
    // No thread could be made: run it here rather than lose it. It blocks the caller, but a
    // spawn then fails at once for the same reason, and a removal is what frees the system.
    job();
}

void offload_service::shutdown()
{
    std::vector<std::shared_ptr<void>> dropped;
    {
        std::lock_guard lock(gate_->mutex);
        gate_->closed = true;
        for (auto* o : gate_->ops) dropped.push_back(o->take_context());
        gate_->ops.clear();
    }
    // `dropped` goes here, outside the lock: a continuation may own an execution, whose
    // destructor kills and reaps what it started.
}

offload_service& offload_of(const strand_type& s)
{
    return asio::use_service<offload_service>(asio::query(s.get_inner_executor(), asio::execution::context));
}

}  // namespace sandbox::detail
