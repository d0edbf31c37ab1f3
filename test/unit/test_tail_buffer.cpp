// SPDX-License-Identifier: BSL-1.0
// tail_buffer: keeps the last `cap` bytes of a stream (the reference's StreamAggregator).
#include "run/tail_buffer.hpp"

#include <boost/test/unit_test.hpp>

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>

using sandbox::detail::tail_buffer;

namespace {

/// The obvious implementation: append everything, then cut to the last `cap` bytes.
struct naive_tail {
    std::size_t cap;
    std::string data;
    std::uint64_t total = 0;

    void append(const std::string& chunk)
    {
        total += chunk.size();
        data += chunk;
        if (data.size() > cap) data.erase(0, data.size() - cap);
    }
    bool truncated() const { return total > cap; }
};

/// The retained bytes without consuming `b`.
std::string contents(const tail_buffer& b)
{
    tail_buffer copy = b;
    return copy.take();
}

std::string bytes(std::mt19937& rng, std::size_t n, std::uint64_t& counter)
{
    // Distinct, position-dependent bytes so a misplaced byte shows.
    std::string s(n, '\0');
    for (auto& c : s) c = static_cast<char>('!' + (counter++ * 7 + rng() % 3) % 90);
    return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(test_tail_buffer)

BOOST_AUTO_TEST_CASE(chunks_below_the_cap_are_concatenated)
{
    // PHP StreamAggregator: caps (1024, 1024), "hello " + "world".
    tail_buffer out(1024);
    tail_buffer err(1024);
    out.append("hello ");
    out.append("world");
    err.append("warning");
    BOOST_TEST(contents(out) == "hello world");
    BOOST_TEST(contents(err) == "warning");
    BOOST_TEST(!out.truncated());
    BOOST_TEST(!err.truncated());
    BOOST_TEST(out.total_bytes() == 11u);
    BOOST_TEST(out.size() == 11u);
}

BOOST_AUTO_TEST_CASE(exactly_cap_bytes_is_not_truncation)
{
    tail_buffer b(10);
    b.append("abcdefghij");
    BOOST_TEST(!b.truncated());
    BOOST_TEST(contents(b) == "abcdefghij");
    b.append("k");
    BOOST_TEST(b.truncated());
    BOOST_TEST(contents(b) == "bcdefghijk");
    BOOST_TEST(b.total_bytes() == 11u);
    BOOST_TEST(b.size() == 10u);
}

BOOST_AUTO_TEST_CASE(a_single_chunk_over_the_cap_keeps_its_tail)
{
    // PHP: caps (1024, 5), appendErr("12345678").
    tail_buffer b(5);
    b.append("12345678");
    BOOST_TEST(b.truncated());
    BOOST_TEST(contents(b) == "45678");
}

BOOST_AUTO_TEST_CASE(accumulation_continues_after_truncation)
{
    // PHP: caps (5, 1024), "abcdef" then "ghij".
    tail_buffer b(5);
    b.append("abcdef");
    BOOST_TEST(b.truncated());
    b.append("ghij");
    BOOST_TEST(contents(b) == "fghij");
    BOOST_TEST(b.truncated());
    b.append("k");
    BOOST_TEST(contents(b) == "ghijk");
}

BOOST_AUTO_TEST_CASE(a_chunk_larger_than_the_cap_replaces_everything)
{
    tail_buffer b(4);
    b.append("ab");
    b.append("0123456789");
    BOOST_TEST(contents(b) == "6789");
    b.append("x");  // now in ring mode
    b.append("ABCDEFGH");
    BOOST_TEST(contents(b) == "EFGH");
    b.append("yz");
    BOOST_TEST(contents(b) == "GHyz");
    BOOST_TEST(b.total_bytes() == 23u);
}

BOOST_AUTO_TEST_CASE(a_chunk_of_exactly_the_cap_after_data_replaces_everything)
{
    tail_buffer b(4);
    b.append("abc");
    b.append("WXYZ");
    BOOST_TEST(contents(b) == "WXYZ");
    BOOST_TEST(b.truncated());
}

BOOST_AUTO_TEST_CASE(empty_chunks_change_nothing)
{
    tail_buffer b(3);
    b.append("");
    BOOST_TEST(b.size() == 0u);
    BOOST_TEST(!b.truncated());
    b.append("abcd");
    b.append("");
    BOOST_TEST(contents(b) == "bcd");
    BOOST_TEST(b.total_bytes() == 4u);
}

BOOST_AUTO_TEST_CASE(ring_wrap_around_with_many_small_appends)
{
    tail_buffer b(7);
    naive_tail ref{7, {}};
    for (int i = 0; i < 100; ++i) {
        const std::string chunk(1, static_cast<char>('a' + i % 26));
        b.append(chunk);
        ref.append(chunk);
        BOOST_TEST_REQUIRE(contents(b) == ref.data, "after append " << i);
    }
    BOOST_TEST(b.truncated());
}

BOOST_AUTO_TEST_CASE(randomised_appends_match_a_naive_reference)
{
    std::mt19937 rng(12345);
    for (std::size_t cap : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{7}, std::size_t{16},
                            std::size_t{64}, std::size_t{1000}, std::size_t{1024}, std::size_t{4096}}) {
        for (int round = 0; round < 4; ++round) {
            tail_buffer b(cap);
            naive_tail ref{cap, {}};
            std::uint64_t counter = 0;
            for (int step = 0; step < 300; ++step) {
                // Mostly small chunks, sometimes around or beyond the cap.
                std::size_t n = 0;
                switch (rng() % 6) {
                case 0: n = 0; break;
                case 1: n = rng() % 2 + 1; break;
                case 2: n = rng() % (cap + 1); break;
                case 3: n = cap; break;
                case 4: n = cap + rng() % (cap + 2); break;
                default: n = rng() % 17; break;
                }
                const auto chunk = bytes(rng, n, counter);
                b.append(chunk);
                ref.append(chunk);
                BOOST_TEST_CONTEXT("cap " << cap << " round " << round << " step " << step << " chunk " << n)
                {
                    BOOST_TEST_REQUIRE(b.size() == ref.data.size());
                    BOOST_TEST_REQUIRE(b.total_bytes() == ref.total);
                    BOOST_TEST_REQUIRE(b.truncated() == ref.truncated());
                    if (step % 7 == 0) BOOST_TEST_REQUIRE(contents(b) == ref.data);
                }
            }
            BOOST_TEST_CONTEXT("cap " << cap << " round " << round)
            {
                BOOST_TEST(b.take() == ref.data);
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(take_returns_the_tail_and_leaves_the_buffer_empty)
{
    tail_buffer b(4);
    b.append("abcdef");
    b.append("gh");
    BOOST_TEST(b.take() == "efgh");
    BOOST_TEST(b.size() == 0u);
    // The counts describe everything appended.
    BOOST_TEST(b.total_bytes() == 8u);
    BOOST_TEST(b.truncated());
}

BOOST_AUTO_TEST_CASE(capacity_limit_is_the_cap_and_zero_becomes_one)
{
    BOOST_TEST(tail_buffer(1024).capacity_limit() == 1024u);
    tail_buffer zero(0);
    BOOST_TEST(zero.capacity_limit() == 1u);
    zero.append("xyz");
    BOOST_TEST(contents(zero) == "z");
}

BOOST_AUTO_TEST_CASE(bytes_are_kept_verbatim_including_nul_and_split_multibyte)
{
    tail_buffer b(3);
    b.append(std::string("a\0b", 3));
    BOOST_TEST(contents(b) == std::string("a\0b", 3));
    b.append("\xc3\xa9");  // "é": the cut may split it
    BOOST_TEST(contents(b) == std::string("b\xc3\xa9"));
    b.append("z");
    BOOST_TEST(contents(b) == std::string("\xc3\xa9z"));
    b.append("q");
    BOOST_TEST(contents(b) == std::string("\xa9zq"));
}

BOOST_AUTO_TEST_SUITE_END()
