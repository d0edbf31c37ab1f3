// SPDX-License-Identifier: BSL-1.0
#include "run/offload.hpp"

#include <boost/asio/execution/context.hpp>
#include <boost/asio/query.hpp>
#include <boost/asio/thread_pool.hpp>

#include <unistd.h>

#include <vector>

namespace sandbox::detail {

asio::execution_context::id offload_service::id;

namespace {

// Two threads of each kind: two cores' worth of spawning (posix_spawn holds its thread
// 70-100 us a launch, so one thread alone already outruns the kernel's ~1,500 execs a second
// here), and removals that do not wait for each other.
constexpr std::size_t threads_per_kind = 2;

struct pools {
    pid_t owner;
    asio::thread_pool spawn{threads_per_kind};
    asio::thread_pool blocking{threads_per_kind};
};

asio::thread_pool& pool_for(worker w)
{
    static std::mutex mutex;
    static pools* current = nullptr;
    std::lock_guard lock(mutex);
    // Never destroyed: the threads must outlive every static that a job may touch. A forked
    // child has none of its parent's threads, so it gets its own (the old ones are leaked).
    if (!current || current->owner != ::getpid()) current = new pools{::getpid()};
    return w == worker::spawn ? current->spawn : current->blocking;
}

}  // namespace

void run_on(worker w, std::function<void()> job) { asio::post(pool_for(w), std::move(job)); }

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
