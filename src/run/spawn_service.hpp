// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_SRC_RUN_SPAWN_SERVICE_HPP
#define SANDBOX_SRC_RUN_SPAWN_SERVICE_HPP

#include <sandbox/detail/config.hpp>

#include <boost/asio/execution_context.hpp>

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace sandbox::detail {

/// A thread of an io_context's own that starts the launches whose program watches its
/// parent: a process spawned by a thread is that thread's child, and PR_SET_PDEATHSIG
/// (bwrap --die-with-parent) fires when that *thread* ends, which any thread of a pool may
/// do. This one lives as long as the io_context: its children die with the context, as
/// they should, and not before.
class spawn_service : public asio::execution_context::service {
public:
    using key_type = spawn_service;
    static asio::execution_context::id id;

    explicit spawn_service(asio::execution_context& ctx);
    ~spawn_service() override;

    /// Runs `job` on the service's thread (started on first use). False after shutdown.
    bool submit(std::function<void()> job);

private:
    void shutdown() override;
    void run();

    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<std::function<void()>> jobs_;
    std::thread thread_;
    bool stopping_ = false;
};

}  // namespace sandbox::detail

#endif
