// SPDX-License-Identifier: BSL-1.0
// fake_sandbox: canned answers, recorded calls and the output callback.
#include <sandbox/sandbox.hpp>

#include "test_support.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/test/unit_test.hpp>

#include <stdexcept>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using sandbox::exec_result;
using sandbox::execution_policy;
using sandbox::fake_sandbox;

namespace {

exec_result result(std::string out, std::string err = "", int code = 0)
{
    exec_result r;
    r.out = std::move(out);
    r.err = std::move(err);
    r.exit_code = code;
    return r;
}

// "a b|c d" for [[a, b], [c, d]].
std::string show(const std::vector<std::vector<std::string>>& calls)
{
    std::string s;
    for (std::size_t i = 0; i < calls.size(); ++i) {
        if (i != 0) s += '|';
        for (std::size_t j = 0; j < calls[i].size(); ++j) {
            if (j != 0) s += ',';
            s += calls[i][j];
        }
    }
    return s;
}

exec_result run(fake_sandbox& fake, std::vector<std::string> argv, std::optional<std::string> stdin_data = std::nullopt,
                sandbox::output_callback cb = {})
{
    return sandbox::run_sync(fake, std::move(argv), std::move(stdin_data), std::move(cb));
}

// what() of the std::runtime_error thrown by running argv, or "" if none.
std::string failure(fake_sandbox& fake, std::vector<std::string> argv)
{
    try {
        (void)run(fake, std::move(argv));
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(test_fake_sandbox)

BOOST_AUTO_TEST_CASE(queued_responses_are_returned_in_order)
{
    fake_sandbox fake(execution_policy::in("/tmp"), {{"echo hi", {result("hi"), result("hi again")}}});
    BOOST_TEST(run(fake, {"echo", "hi"}).out == "hi");
    BOOST_TEST(run(fake, {"echo", "hi"}).out == "hi again");
    // Used up, and there is no default.
    BOOST_TEST(failure(fake, {"echo", "hi"}) == "fake_sandbox has no response for command: echo hi");
}

BOOST_AUTO_TEST_CASE(queues_are_kept_per_key)
{
    fake_sandbox fake(execution_policy::defaults(),
                      {{"a", {result("a1"), result("a2")}}, {"b", {result("b1")}}, {"a x", {result("ax")}}});
    BOOST_TEST(run(fake, {"b"}).out == "b1");
    BOOST_TEST(run(fake, {"a"}).out == "a1");
    BOOST_TEST(run(fake, {"a", "x"}).out == "ax");
    BOOST_TEST(run(fake, {"a"}).out == "a2");
}

BOOST_AUTO_TEST_CASE(the_whole_result_is_returned_unchanged)
{
    exec_result canned = result("o", "e", 3);
    canned.duration = 1500ms;
    canned.timed_out = true;
    canned.truncated_err = true;
    canned.timeout = sandbox::timeout_reason::idle;
    canned.term_signal = 15;
    canned.usage.max_rss_bytes = 77;
    fake_sandbox fake(execution_policy::defaults(), {{"x", {canned}}});
    BOOST_TEST((run(fake, {"x"}) == canned));
}

BOOST_AUTO_TEST_CASE(the_default_response_is_returned_every_time_and_not_consumed)
{
    fake_sandbox fake(execution_policy::defaults(), {{"a", {result("queued")}}}, result("default", "", 7));
    BOOST_TEST(run(fake, {"a"}).out == "queued");
    BOOST_TEST(run(fake, {"a"}).out == "default");
    BOOST_TEST(run(fake, {"a"}).out == "default");
    const auto other = run(fake, {"anything", "else"});
    BOOST_TEST(other.out == "default");
    BOOST_TEST(other.exit_code == 7);
    BOOST_TEST(run(fake, {"b"}).out == "default");
    BOOST_TEST(fake.commands().size() == 5u);
}

BOOST_AUTO_TEST_CASE(a_missing_response_throws_and_the_call_is_still_recorded)
{
    fake_sandbox fake(execution_policy::in("/tmp"));
    BOOST_TEST(failure(fake, {"missing"}) == "fake_sandbox has no response for command: missing");
    BOOST_TEST(show(fake.commands()) == "missing");

    BOOST_CHECK_THROW((void)fake.respond({"missing"}, std::nullopt), std::runtime_error);
    BOOST_TEST(show(fake.commands()) == "missing|missing");
}

BOOST_AUTO_TEST_CASE(commands_records_argv_and_non_empty_stdin)
{
    fake_sandbox fake(execution_policy::defaults(), {}, result(""));
    (void)run(fake, {"cat"});
    (void)run(fake, {"cat"}, std::string{});
    (void)run(fake, {"cat", "-n"}, std::string("data"));
    (void)run(fake, {"wc", "-l"}, std::string("a\nb"));
    const auto calls = fake.commands();
    BOOST_TEST_REQUIRE(calls.size() == 4u);
    BOOST_TEST(calls[0] == (std::vector<std::string>{"cat"}), boost::test_tools::per_element());
    BOOST_TEST(calls[1] == (std::vector<std::string>{"cat"}), boost::test_tools::per_element());
    BOOST_TEST(calls[2] == (std::vector<std::string>{"cat", "-n", "[stdin=data]"}), boost::test_tools::per_element());
    BOOST_TEST(calls[3] == (std::vector<std::string>{"wc", "-l", "[stdin=a\nb]"}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(stdin_is_not_part_of_the_key)
{
    fake_sandbox fake(execution_policy::defaults(), {{"cat", {result("first"), result("second")}}});
    BOOST_TEST(run(fake, {"cat"}, std::string("one")).out == "first");
    BOOST_TEST(run(fake, {"cat"}, std::string("two")).out == "second");
}

BOOST_AUTO_TEST_CASE(the_key_is_argv_joined_by_spaces)
{
    // As in the reference: {"a b"} and {"a", "b"} share a key.
    fake_sandbox fake(execution_policy::defaults(), {{"a b", {result("1"), result("2")}}, {"", {result("empty")}}});
    BOOST_TEST(run(fake, {"a b"}).out == "1");
    BOOST_TEST(run(fake, {"a", "b"}).out == "2");
    BOOST_TEST(fake.respond({}, std::nullopt).out == "empty");
}

BOOST_AUTO_TEST_CASE(callback_gets_stdout_then_stderr)
{
    // PHP FakeSandbox: streams stdout and stderr.
    fake_sandbox fake(execution_policy::defaults(), {{"run", {result("out", "err")}}});
    std::vector<std::string> chunks;
    const auto r = run(fake, {"run"}, std::nullopt, [&](sandbox::stream_kind k, std::string_view chunk) {
        chunks.push_back(std::string(sandbox::to_string(k)) + ":" + std::string(chunk));
    });
    BOOST_TEST(r.success());
    BOOST_TEST(chunks == (std::vector<std::string>{"out:out", "err:err"}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(callback_skips_empty_streams)
{
    fake_sandbox fake(execution_policy::defaults(),
                      {{"out-only", {result("o")}}, {"err-only", {result("", "e", 1)}}, {"silent", {result("")}}});
    std::vector<std::string> chunks;
    const sandbox::output_callback cb = [&](sandbox::stream_kind k, std::string_view chunk) {
        chunks.push_back(std::string(sandbox::to_string(k)) + ":" + std::string(chunk));
    };
    (void)run(fake, {"out-only"}, std::nullopt, cb);
    BOOST_TEST(chunks == (std::vector<std::string>{"out:o"}), boost::test_tools::per_element());
    chunks.clear();
    (void)run(fake, {"err-only"}, std::nullopt, cb);
    BOOST_TEST(chunks == (std::vector<std::string>{"err:e"}), boost::test_tools::per_element());
    chunks.clear();
    (void)run(fake, {"silent"}, std::nullopt, cb);
    BOOST_TEST(chunks.empty());
}

BOOST_AUTO_TEST_CASE(from_responses_uses_the_default_policy)
{
    auto fake = fake_sandbox::from_responses({{"ls", {result("x")}}}, result("dflt"));
    BOOST_TEST((fake.policy() == execution_policy::defaults()));
    BOOST_TEST(run(fake, {"ls"}).out == "x");
    BOOST_TEST(run(fake, {"ls"}).out == "dflt");

    auto bare = fake_sandbox::from_responses({});
    BOOST_TEST((bare.policy() == execution_policy::defaults()));
    BOOST_CHECK_THROW((void)run(bare, {"ls"}), std::runtime_error);
}

BOOST_AUTO_TEST_CASE(policy_is_the_one_given)
{
    const auto policy = execution_policy::in("/srv").with_timeout(9s).with_network(true);
    fake_sandbox fake(policy);
    BOOST_TEST((fake.policy() == policy));
    const sandbox::command_runner& runner = fake;
    BOOST_TEST((runner.policy() == policy));
}

BOOST_AUTO_TEST_CASE(enqueue_appends_to_the_key_queue)
{
    fake_sandbox fake(execution_policy::defaults(), {{"ls -l", {result("preset")}}});
    fake.enqueue("ls -l", result("one"));
    fake.enqueue("ls -l", result("two"));
    fake.enqueue("pwd", result("/tmp"));
    BOOST_TEST(run(fake, {"ls", "-l"}).out == "preset");
    BOOST_TEST(run(fake, {"pwd"}).out == "/tmp");
    BOOST_TEST(run(fake, {"ls", "-l"}).out == "one");
    BOOST_TEST(run(fake, {"ls", "-l"}).out == "two");
    BOOST_TEST(failure(fake, {"ls", "-l"}) == "fake_sandbox has no response for command: ls -l");
    // A used-up key can be refilled.
    fake.enqueue("ls -l", result("three"));
    BOOST_TEST(run(fake, {"ls", "-l"}).out == "three");
}

BOOST_AUTO_TEST_CASE(execute_runs_through_asio)
{
    fake_sandbox fake(execution_policy::defaults(), {{"echo hi", {result("hi\n")}}});
    boost::asio::io_context ctx;
    std::vector<std::string> chunks;
    const auto r = sandbox::test::run_coro(ctx, [&]() -> boost::asio::awaitable<exec_result> {
        std::vector<std::string> argv{"echo", "hi"};
        sandbox::command_runner& runner = fake;
        co_return co_await runner.execute(std::move(argv), std::nullopt,
                                          [&](sandbox::stream_kind k, std::string_view chunk) {
                                              chunks.push_back(std::string(sandbox::to_string(k)) + ":" +
                                                               std::string(chunk));
                                          });
    }());
    BOOST_TEST(r.out == "hi\n");
    BOOST_TEST(chunks == (std::vector<std::string>{"out:hi\n"}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(execute_through_asio_propagates_the_missing_response_error)
{
    fake_sandbox fake(execution_policy::defaults());
    boost::asio::io_context ctx;
    try {
        (void)sandbox::test::run_coro(ctx, [&]() -> boost::asio::awaitable<exec_result> {
            std::vector<std::string> argv{"nope", "x"};
            co_return co_await fake.execute(std::move(argv), std::string("in"));
        }());
        BOOST_FAIL("expected std::runtime_error");
    } catch (const std::runtime_error& e) {
        BOOST_TEST(std::string(e.what()) == "fake_sandbox has no response for command: nope x");
    }
    BOOST_TEST(show(fake.commands()) == "nope,x,[stdin=in]");
}

BOOST_AUTO_TEST_CASE(run_sync_works_with_the_fake)
{
    fake_sandbox fake(execution_policy::defaults(), {}, result("ok"));
    sandbox::command_runner& runner = fake;
    const auto r = sandbox::run_sync(runner, {"anything"});
    BOOST_TEST(r.out == "ok");
    BOOST_TEST(r.success());
}

BOOST_AUTO_TEST_CASE(a_moved_fake_keeps_its_queues_and_records)
{
    fake_sandbox original(execution_policy::defaults(), {{"a", {result("1"), result("2")}}});
    BOOST_TEST(run(original, {"a"}).out == "1");
    fake_sandbox moved(std::move(original));
    BOOST_TEST(run(moved, {"a"}).out == "2");
    BOOST_TEST(show(moved.commands()) == "a|a");
}

BOOST_AUTO_TEST_SUITE_END()
