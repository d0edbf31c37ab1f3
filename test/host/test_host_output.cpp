// SPDX-License-Identifier: BSL-1.0
// Output caps, tails and the streaming callback.
#include "host_fixture.hpp"

#include <boost/test/unit_test.hpp>

using namespace sandbox;
using namespace sandbox::test;

BOOST_FIXTURE_TEST_SUITE(test_host_output, host_fixture)

BOOST_AUTO_TEST_CASE(cap_keeps_the_final_tail)
{
    policy = policy.with_output_caps(1024, 1024);
    const auto r = run(child_args({"spam", "2048", "FINAL_TAIL"}));
    BOOST_TEST(r.success());
    BOOST_TEST(r.truncated_out);
    BOOST_TEST(!r.truncated_err);
    BOOST_TEST(r.out.size() == 1024u);
    BOOST_TEST(r.out.substr(r.out.size() - 10) == "FINAL_TAIL");
    BOOST_TEST(r.out.substr(0, 1014) == std::string(1014, 'x'));
}

BOOST_AUTO_TEST_CASE(exactly_cap_is_not_truncated)
{
    policy = policy.with_output_caps(1024, 1024);
    const auto r = run(child_args({"spam", "1024"}));
    BOOST_TEST(!r.truncated_out);
    BOOST_TEST(r.out == std::string(1024, 'x'));
    const auto over = run(child_args({"spam", "1025"}));
    BOOST_TEST(over.truncated_out);
    BOOST_TEST(over.out.size() == 1024u);
}

BOOST_AUTO_TEST_CASE(stderr_has_its_own_cap)
{
    policy = policy.with_output_caps(1 << 20, 2000);
    const auto r = sh("i=0; while [ $i -lt 500 ]; do echo err-line-$i >&2; i=$((i+1)); done; echo done");
    BOOST_TEST(r.out == "done\n");
    BOOST_TEST(r.truncated_err);
    BOOST_TEST(r.err.size() == 2000u);
    BOOST_TEST(r.err.substr(r.err.size() - 13) == "err-line-499\n");
}

BOOST_AUTO_TEST_CASE(callback_sees_every_byte_of_a_large_output)
{
    constexpr std::size_t total = 3'000'000;
    policy = policy.with_output_caps(1024, 1024);
    std::string seen;
    std::size_t calls = 0;
    const auto r = run(child_args({"pattern", std::to_string(total)}), std::nullopt,
                       [&](stream_kind k, std::string_view chunk) {
                           BOOST_TEST((k == stream_kind::out));
                           seen.append(chunk);
                           ++calls;
                       });
    BOOST_TEST(r.success());
    BOOST_TEST(r.truncated_out);
    BOOST_REQUIRE(seen.size() == total);
    bool pattern_ok = true;
    for (std::size_t i = 0; i < total && pattern_ok; ++i) pattern_ok = seen[i] == static_cast<char>(i % 251);
    BOOST_TEST(pattern_ok);
    // The retained tail is the last 1024 bytes of what the callback saw.
    BOOST_TEST(r.out == seen.substr(total - 1024));
    BOOST_TEST(calls > 1u);
}

BOOST_AUTO_TEST_CASE(callback_gets_output_written_right_before_exit)
{
    std::string out, err;
    const auto r = run({"sh", "-c", "echo first; sleep 0.05; printf last-out; printf last-err >&2"}, std::nullopt,
                       [&](stream_kind k, std::string_view chunk) { (k == stream_kind::out ? out : err) += chunk; });
    BOOST_TEST(out == "first\nlast-out");
    BOOST_TEST(err == "last-err");
    BOOST_TEST(r.out == out);
    BOOST_TEST(r.err == err);
}

BOOST_AUTO_TEST_CASE(callback_chunks_arrive_while_the_command_runs)
{
    std::vector<std::chrono::steady_clock::time_point> stamps;
    const auto start = std::chrono::steady_clock::now();
    const auto r = run(child_args({"trickle", "3", "200"}), std::nullopt,
                       [&](stream_kind, std::string_view) { stamps.push_back(std::chrono::steady_clock::now()); });
    BOOST_TEST(r.out == "tick 0\ntick 1\ntick 2\n");
    BOOST_REQUIRE(stamps.size() == 3u);
    // Loose: the first tick comes at once, long before the last (the sanitizers and a loaded
    // machine can delay the start by a few hundred ms).
    BOOST_TEST((stamps.front() - start < std::chrono::seconds(2)));
    BOOST_TEST((stamps.back() - stamps.front() >= std::chrono::milliseconds(350)));
}

BOOST_AUTO_TEST_CASE(a_throwing_callback_ends_the_command_and_rethrows)
{
    const auto before = open_fd_count();
    BOOST_CHECK_EXCEPTION(run({"sh", "-c", "echo go; exec sleep 30"}, std::nullopt,
                              [](stream_kind, std::string_view) { throw std::logic_error("callback refused"); }),
                          std::logic_error,
                          [](const std::logic_error& e) { return std::string(e.what()) == "callback refused"; });
    BOOST_TEST(!has_children());
    BOOST_TEST(open_fd_count() == before);
}

BOOST_AUTO_TEST_SUITE_END()
