// SPDX-License-Identifier: BSL-1.0
// Many threads launching at the same moment in a fresh process, where the library's spawner
// threads and per-context services do not exist yet: one io_context run by 8 threads, and 8
// io_contexts of one thread each, each thread starting its commands behind one barrier.
// Exits 0 when every command ran and printed what it was given, and no child is left.
#include <sandbox/sandbox.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <sys/wait.h>

#include <atomic>
#include <barrier>
#include <cerrno>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;

namespace {

constexpr int threads = 8;
constexpr int per_thread = 16;

std::atomic<int> failures{0};
std::atomic<int> remaining{0};

asio::awaitable<void> one(sandbox::command_runner& runner, int i)
{
    std::vector<std::string> argv{"echo", std::to_string(i)};
    const auto r = co_await runner.execute(std::move(argv));
    if (r.exit_code != 0 || r.out != std::to_string(i) + "\n") {
        std::fprintf(stderr, "command %d: exit %d, out '%s', err '%s'\n", i, r.exit_code, r.out.c_str(), r.err.c_str());
        ++failures;
    }
}

template <typename Done>
void start_batch(asio::io_context& ctx, sandbox::command_runner& runner, int first, Done done)
{
    for (int i = first; i < first + per_thread; ++i)
        asio::co_spawn(ctx, one(runner, i), [done](std::exception_ptr e) {
            if (e) ++failures;
            done();
        });
}

}  // namespace

int main()
{
    auto runner = sandbox::make_runner(sandbox::execution_policy::defaults(), sandbox::driver::host);
    {
        // One io_context, many threads: each posts its batch at the same moment.
        asio::io_context ctx(threads);
        remaining = threads * per_thread;
        auto done = [&ctx] {
            if (--remaining == 0) ctx.stop();
        };
        std::barrier sync(threads);
        std::vector<std::thread> pool;
        for (int t = 0; t < threads; ++t)
            pool.emplace_back([&, t] {
                auto work = asio::make_work_guard(ctx);  // until every batch is done
                sync.arrive_and_wait();
                start_batch(ctx, *runner, t * per_thread, done);
                ctx.run_for(std::chrono::seconds(60));
            });
        for (auto& t : pool) t.join();
        if (remaining != 0) {
            std::fprintf(stderr, "%d commands did not complete\n", remaining.load());
            ++failures;
        }
    }
    {
        // An io_context per thread.
        std::barrier sync(threads);
        std::vector<std::thread> pool;
        for (int t = 0; t < threads; ++t)
            pool.emplace_back([&, t] {
                asio::io_context ctx;
                sync.arrive_and_wait();
                start_batch(ctx, *runner, 1000 + t * per_thread, [] {});
                ctx.run_for(std::chrono::seconds(60));
            });
        for (auto& t : pool) t.join();
    }
    int status = 0;
    const bool leftover = ::waitpid(-1, &status, WNOHANG) > 0 || errno != ECHILD;
    if (leftover) std::fprintf(stderr, "a child was left behind\n");
    std::printf("%d commands from %d threads, %d failures\n", 2 * threads * per_thread, threads, failures.load());
    return failures == 0 && !leftover ? 0 : 1;
}
