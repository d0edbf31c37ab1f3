// SPDX-License-Identifier: BSL-1.0
#include "run/spawn_service.hpp"

namespace sandbox::detail {

asio::execution_context::id spawn_service::id;

spawn_service::spawn_service(asio::execution_context& ctx) : asio::execution_context::service(ctx) {}

spawn_service::~spawn_service() { shutdown(); }

bool spawn_service::submit(std::function<void()> job)
{
    std::lock_guard lock(mutex_);
    if (stopping_) return false;
    if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
    jobs_.push_back(std::move(job));
    wake_.notify_one();
    return true;
}

void spawn_service::run()
{
    std::unique_lock lock(mutex_);
    for (;;) {
        wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
        if (stopping_) return;
        auto job = std::move(jobs_.front());
        jobs_.pop_front();
        lock.unlock();
        job();
        job = nullptr;  // let go of what it holds before sleeping
        lock.lock();
    }
}

void spawn_service::shutdown()
{
    std::deque<std::function<void()>> dropped;
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        dropped.swap(jobs_);
        wake_.notify_all();
    }
    if (thread_.joinable()) thread_.join();
    // `dropped` goes here, outside the lock: a job owns an execution.
}

}  // namespace sandbox::detail
