// SPDX-License-Identifier: BSL-1.0
//
// Quickstart: three commands on the host driver from one coroutine.
//   1. output streamed line by line while the command runs;
//   2. a command that outlives its wall timeout (exit 124, the reason, the partial output);
//   3. a command whose output exceeds the cap (the tail is kept, the flag is set).
#include <sandbox/sandbox.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <iostream>

namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

void print(const std::string& title, const sandbox::exec_result& r)
{
    std::cout << "== " << title << "\n   exit " << r.exit_code << (r.success() ? " (success)" : "") << ", "
              << std::chrono::duration_cast<std::chrono::milliseconds>(r.duration).count() << " ms";
    if (r.timed_out) std::cout << ", timed out (" << sandbox::to_string(*r.timeout) << " clock)";
    if (r.truncated_out) std::cout << ", stdout over its cap: kept the last " << r.out.size() << " bytes";
    std::cout << "\n";
    // The last three lines of stdout.
    std::vector<std::string> lines;
    std::string line;
    for (char c : r.out) {
        if (c == '\n') {
            lines.push_back(line);
            line.clear();
        } else {
            line += c;
        }
    }
    if (!line.empty()) lines.push_back(line);
    if (lines.size() > 3) std::cout << "   | ...\n";
    for (std::size_t i = lines.size() > 3 ? lines.size() - 3 : 0; i < lines.size(); ++i)
        std::cout << "   | " << lines[i] << "\n";
    std::cout << "\n";
}

asio::awaitable<void> tour()
{
    using sandbox::execution_policy;
    const auto policy = execution_policy::defaults().with_timeout(5s);

    // 1. Streamed output: the callback sees each chunk as it is written.
    auto runner = sandbox::make_runner(policy, sandbox::driver::host);
    std::vector<std::string> ticks{"sh", "-c", "for i in 1 2 3; do echo tick $i; sleep 0.2; done"};
    auto streamed = co_await runner->execute(std::move(ticks), std::nullopt,
                                             [](sandbox::stream_kind kind, std::string_view chunk) {
                                                 std::cout << "   [" << sandbox::to_string(kind) << "] " << chunk;
                                             });
    print("streamed output", streamed);

    // 2. A wall timeout: the whole process tree is ended, exit 124.
    auto hurried = sandbox::make_runner(policy.with_timeout(300ms), sandbox::driver::host);
    std::vector<std::string> slow{"sh", "-c", "echo started; sleep 10; echo never"};
    print("timed out after 300 ms", co_await hurried->execute(std::move(slow)));

    // 3. An output cap: the last 1 KiB is kept, the callback would still see everything.
    auto capped = sandbox::make_runner(policy.with_output_caps(1024, 1024), sandbox::driver::host);
    std::vector<std::string> chatty{"sh", "-c", "seq 1 100000"};
    print("over its 1 KiB output cap", co_await capped->execute(std::move(chatty)));

    // The same, as JSON.
    std::vector<std::string> hello{"echo", "hello"};
    std::cout << "== as JSON\n   " << sandbox::to_json(co_await runner->execute(std::move(hello))) << "\n";
}

}  // namespace

int main()
{
    asio::io_context ctx;
    asio::co_spawn(ctx, tour(), [](std::exception_ptr e) {
        if (e) std::rethrow_exception(e);
    });
    ctx.run();
}
