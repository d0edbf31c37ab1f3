// SPDX-License-Identifier: BSL-1.0
//
// batch_dir: runs a command over every file of a directory, N at a time, under one policy.
// Each file is the command's stdin (so the command never needs the host path, and the same
// code works with the isolating drivers). One line per file as it finishes, then a summary.
//
// Usage: batch_dir [DIR] [-j N] [-- COMMAND ARGS...]
//   DIR      defaults to a temporary directory with a few generated inputs (removed after)
//   -j N     commands at a time (default 4)
//   COMMAND  defaults to `wc -w` (count the words of each file)
// Exits 0 when every command succeeded.
//
// The shape is the one sandbox-run --batch uses: a fixed number of worker coroutines on one
// io_context, each taking the next input, running it, reporting, and taking another.
#include <sandbox/sandbox.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

struct shared_state {
    std::vector<fs::path> files;  // sorted; workers take them in order
    std::size_t next = 0;
    std::vector<std::string> command;
    int succeeded = 0;
    int failed = 0;
};

std::string read_file(const fs::path& p)
{
    std::ifstream in(p, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return std::move(ss).str();
}

std::string first_line(const std::string& s)
{
    auto line = s.substr(0, s.find('\n'));
    line.erase(0, line.find_first_not_of(' '));
    return line;
}

asio::awaitable<void> worker(sandbox::command_runner& runner, shared_state& st)
{
    while (st.next < st.files.size()) {
        const fs::path file = st.files[st.next++];
        auto argv = st.command;
        auto r = co_await runner.execute(std::move(argv), read_file(file));
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(r.duration).count();
        std::printf("%-24s exit %3d %5lld ms  %s\n", file.filename().c_str(), r.exit_code, static_cast<long long>(ms),
                    r.success() ? first_line(r.out).c_str() : first_line(r.combined_output()).c_str());
        (r.success() ? st.succeeded : st.failed) += 1;
    }
}

// A directory with a few inputs of different sizes.
fs::path make_sample_inputs()
{
    std::string tmpl = (fs::temp_directory_path() / "batch-dir-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    const fs::path dir = tmpl;
    for (int i = 1; i <= 12; ++i) {
        std::ofstream out(dir / ("input-" + std::string(i < 10 ? "0" : "") + std::to_string(i) + ".txt"));
        for (int w = 0; w < i * 100; ++w) out << "word" << w << (w % 10 == 9 ? '\n' : ' ');
    }
    return dir;
}

}  // namespace

int main(int argc, char** argv)
{
    std::optional<fs::path> dir;
    unsigned jobs = 4;
    std::vector<std::string> command;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--") {
            command.assign(argv + i + 1, argv + argc);
            break;
        }
        if (arg == "-j" && i + 1 < argc) jobs = static_cast<unsigned>(std::max(1, std::atoi(argv[++i])));
        else if (!arg.starts_with('-') && !dir) dir = arg;
        else {
            std::cerr << "usage: batch_dir [DIR] [-j N] [-- COMMAND ARGS...]\n";
            return 2;
        }
    }
    if (command.empty()) command = {"wc", "-w"};

    const bool temporary = !dir;
    if (temporary) dir = make_sample_inputs();

    shared_state st;
    st.command = command;
    for (const auto& e : fs::directory_iterator(*dir))
        if (e.is_regular_file()) st.files.push_back(e.path());
    std::sort(st.files.begin(), st.files.end());

    std::cout << "running `" << command.front() << "` over " << st.files.size() << " files in " << dir->string()
              << ", " << jobs << " at a time\n";
    const auto policy = sandbox::execution_policy::defaults().with_timeout(10s).with_output_caps(64 * 1024, 64 * 1024);
    auto runner = sandbox::make_runner(policy, sandbox::driver::host);

    asio::io_context ctx;
    const auto start = std::chrono::steady_clock::now();
    std::exception_ptr error;
    for (unsigned i = 0; i < std::min<std::size_t>(jobs, std::max<std::size_t>(st.files.size(), 1)); ++i)
        asio::co_spawn(ctx, worker(*runner, st), [&](std::exception_ptr e) {
            if (e && !error) error = e;
        });
    ctx.run();
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    if (temporary) fs::remove_all(*dir);
    if (error) {
        try {
            std::rethrow_exception(error);
        } catch (const std::exception& e) {
            std::cerr << "batch_dir: " << e.what() << "\n";
            return 1;
        }
    }
    std::printf("%d succeeded, %d failed, %.2f s\n", st.succeeded, st.failed, took);
    return st.failed == 0 ? 0 : 1;
}
