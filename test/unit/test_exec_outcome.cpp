// SPDX-License-Identifier: BSL-1.0
// The runner's small steps that need no child: how a result is shaped, what a start failure
// becomes, which signal a cancellation sends, and how an output pipe is read (a plain pipe).
#include "run/exec_outcome.hpp"
#include "run/output_pipe.hpp"

#include <sandbox/errors.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <string>

using namespace std::chrono_literals;
namespace asio = boost::asio;
using namespace sandbox;
using namespace sandbox::detail;

BOOST_AUTO_TEST_SUITE(exec_outcome)

BOOST_AUTO_TEST_CASE(cancellation_types_map_to_signals_as_in_boost_process)
{
    BOOST_TEST(cancel_signal(asio::cancellation_type::terminal) == SIGKILL);
    BOOST_TEST(cancel_signal(asio::cancellation_type::partial) == SIGTERM);
    BOOST_TEST(cancel_signal(asio::cancellation_type::total) == SIGINT);
    // The strongest type asked for wins.
    BOOST_TEST(cancel_signal(asio::cancellation_type::terminal | asio::cancellation_type::partial) == SIGKILL);
    BOOST_TEST(cancel_signal(asio::cancellation_type::partial | asio::cancellation_type::total) == SIGTERM);
}

BOOST_AUTO_TEST_CASE(a_result_carries_the_tails_the_exit_and_the_timeout)
{
    tail_buffer out(4), err(16);
    out.append("abcdef");
    err.append("oops\n");
    const exit_info e{.exit_code = 137, .term_signal = SIGKILL, .usage = {.max_rss_bytes = 7}};
    auto r = ran_result(out, err, &e, std::nullopt, 1500ms);
    BOOST_TEST(r.out == "cdef");
    BOOST_TEST(r.truncated_out);
    BOOST_TEST(r.err == "oops\n");
    BOOST_TEST(!r.truncated_err);
    BOOST_TEST(r.exit_code == 137);
    BOOST_TEST(r.term_signal == SIGKILL);
    BOOST_TEST(r.usage.max_rss_bytes == 7u);
    BOOST_TEST(!r.timed_out);
    BOOST_TEST((r.duration == 1500ms));

    // A clock's end is 124 whatever the signal did; one we stopped waiting for is -1.
    r = ran_result(out, err, &e, timeout_reason::idle, 1s);
    BOOST_TEST(r.exit_code == exit_codes::timeout);
    BOOST_TEST(r.timed_out);
    BOOST_TEST((r.timeout == timeout_reason::idle));
    r = ran_result(out, err, nullptr, std::nullopt, 1s);
    BOOST_TEST(r.exit_code == -1);
}

BOOST_AUTO_TEST_CASE(a_command_that_cannot_start_is_a_127_or_126_result_on_the_host)
{
    exec_result r;
    BOOST_TEST(!start_failure(errc::command_not_found, "nope: No such file or directory", false, r));
    BOOST_TEST(r.exit_code == exit_codes::command_not_found);
    BOOST_TEST((r.start_error == errc::command_not_found));
    BOOST_TEST(r.err == "nope: No such file or directory");

    exec_result r2;
    BOOST_TEST(!start_failure(errc::command_not_executable, "x: Permission denied", false, r2));
    BOOST_TEST(r2.exit_code == exit_codes::cannot_execute);
}

BOOST_AUTO_TEST_CASE(a_driver_tool_that_cannot_start_is_a_launch_error_naming_the_driver)
{
    exec_result r;
    const auto ep = start_failure(errc::command_not_found, "Failed to start docker: not found", true, r);
    BOOST_TEST_REQUIRE(static_cast<bool>(ep));
    try {
        std::rethrow_exception(ep);
    } catch (const launch_error& e) {
        BOOST_TEST((e.code() == errc::driver_unavailable));
        BOOST_TEST(std::string(e.what()).find("Failed to start docker") != std::string::npos);
    }
    BOOST_TEST(r.exit_code == 0);  // untouched: there is no result
    BOOST_TEST(r.err.empty());
}

namespace {

struct pipe_pair {
    int r = -1, w = -1;
    pipe_pair()
    {
        int p[2];
        BOOST_TEST_REQUIRE(::pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0);
        r = p[0];
        w = p[1];
    }
    ~pipe_pair()
    {
        if (w >= 0) ::close(w);
    }
    void close_writer() { ::close(std::exchange(w, -1)); }
};

}  // namespace

BOOST_AUTO_TEST_CASE(an_output_pipe_reads_what_is_there_then_says_why_it_stopped)
{
    asio::io_context io;
    const strand_type s = asio::make_strand(io.get_executor());
    pipe_pair p;
    output_pipe pipe(s, 1 << 20);
    boost::system::error_code ec;
    BOOST_TEST_REQUIRE(!pipe.assign(p.r, ec));

    std::string got;
    auto keep = [&](std::string_view c) {
        got.append(c);
        return true;
    };
    BOOST_TEST((pipe.read(keep) == output_pipe::drained::empty));  // nothing written yet

    const std::string hello = "hello\n";
    BOOST_TEST(::write(p.w, hello.data(), hello.size()) == static_cast<ssize_t>(hello.size()));
    bool ready = false;
    pipe.wait([&] { ready = true; });
    pipe.wait([&] { BOOST_ERROR("a second wait is not queued while one is"); });
    io.run_for(2s);
    BOOST_TEST(ready);
    BOOST_TEST((pipe.read(keep) == output_pipe::drained::empty));
    BOOST_TEST(got == hello);

    // `deliver` asking to stop ends the turn at once.
    BOOST_TEST(::write(p.w, "x", 1) == 1);
    BOOST_TEST((pipe.read([](std::string_view) { return false; }) == output_pipe::drained::stopped));

    p.close_writer();
    BOOST_TEST((pipe.read(keep) == output_pipe::drained::closed));
    pipe.close();
    BOOST_TEST(!pipe.is_open());
    BOOST_TEST((pipe.read(keep) == output_pipe::drained::stopped));
}

BOOST_AUTO_TEST_CASE(a_fast_writer_gets_a_bounded_turn)
{
    asio::io_context io;
    const strand_type s = asio::make_strand(io.get_executor());
    pipe_pair p;
    BOOST_TEST_REQUIRE(::fcntl(p.w, F_SETPIPE_SZ, 1 << 20) >= (1 << 20));
    output_pipe pipe(s, 64);
    boost::system::error_code ec;
    BOOST_TEST_REQUIRE(!pipe.assign(p.r, ec));
    // A full 1 MiB pipe holds reads_per_turn reads of the 64 KiB scratch buffer.
    const std::string block(read_scratch().size(), 'a');
    std::size_t written = 0;
    for (ssize_t n; (n = ::write(p.w, block.data(), block.size())) > 0;) written += static_cast<std::size_t>(n);
    BOOST_TEST_REQUIRE(written >= output_pipe::reads_per_turn * block.size(), "the pipe took only " << written);
    int chunks = 0;
    BOOST_TEST((pipe.read([&](std::string_view) { return ++chunks, true; }) == output_pipe::drained::more));
    BOOST_TEST(chunks == output_pipe::reads_per_turn);
    BOOST_TEST((pipe.read([&](std::string_view) { return ++chunks, true; }) == output_pipe::drained::empty));
}

BOOST_AUTO_TEST_SUITE_END()
