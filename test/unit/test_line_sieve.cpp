// SPDX-License-Identifier: BSL-1.0
// The sieve that takes a launcher's own lines (srun's notes, the node's report) out of a
// command's stderr: what passes, what is held back, what is taken, however the stream is cut.
#include "run/line_sieve.hpp"

#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

using sandbox::detail::line_sieve;

namespace {

line_sieve slurm_like() { return line_sieve({"srun: ", "TAG "}, {"srun: error: ", "slurmstepd: "}); }

struct sifted {
    std::string passed;
    std::vector<std::string> taken;
};

// Feeds `text` in pieces of `step` bytes (0: at once), then ends the stream.
sifted sift(std::string_view text, std::size_t step = 0)
{
    auto s = slurm_like();
    sifted out;
    if (step == 0) step = text.size() ? text.size() : 1;
    for (std::size_t at = 0; at < text.size(); at += step) out.passed += s.feed(text.substr(at, step));
    out.passed += s.finish();
    out.taken.assign(s.taken().begin(), s.taken().end());
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(line_sieve_cases)

BOOST_AUTO_TEST_CASE(plain_output_passes_untouched_in_every_cut)
{
    const std::string text = "hello\nsr is not srun\nthe end, no newline";
    for (std::size_t step : {0, 1, 2, 3, 7}) {
        BOOST_TEST_CONTEXT("step " << step)
        {
            const auto r = sift(text, step);
            BOOST_TEST(r.passed == text);
            BOOST_TEST(r.taken.empty());
        }
    }
}

BOOST_AUTO_TEST_CASE(lines_starting_with_a_prefix_are_taken_whole)
{
    const std::string text = "out 1\nsrun: error: vm: task 0: Exited with exit code 3\nout 2\nTAG {\"exit_code\":3}\n";
    for (std::size_t step : {0, 1, 4, 5}) {
        BOOST_TEST_CONTEXT("step " << step)
        {
            const auto r = sift(text, step);
            BOOST_TEST(r.passed == "out 1\nout 2\n");
            BOOST_TEST(r.taken == (std::vector<std::string>{"srun: error: vm: task 0: Exited with exit code 3",
                                                            "TAG {\"exit_code\":3}"}),
                       boost::test_tools::per_element());
        }
    }
}

BOOST_AUTO_TEST_CASE(a_prefix_inside_a_line_is_not_taken_but_a_marker_is)
{
    // "srun: " only counts at a line's start; "srun: error: " also after a command's
    // unterminated line, and the text before it keeps its bytes exactly.
    for (std::size_t step : {0, 1, 3}) {
        BOOST_TEST_CONTEXT("step " << step)
        {
            auto r = sift("say srun: hi\n", step);
            BOOST_TEST(r.passed == "say srun: hi\n");
            BOOST_TEST(r.taken.empty());
            r = sift("partialsrun: error: vm: task 0: Exited with exit code 3\n", step);
            BOOST_TEST(r.passed == "partial");
            BOOST_TEST(r.taken == std::vector<std::string>{"srun: error: vm: task 0: Exited with exit code 3"},
                       boost::test_tools::per_element());
        }
    }
}

BOOST_AUTO_TEST_CASE(an_unfinished_prefix_is_held_then_passed_when_it_turns_out_not_to_be_one)
{
    auto s = slurm_like();
    BOOST_TEST(s.feed("sru") == "");  // may still become "srun: "
    BOOST_TEST(s.feed("b\n") == "srub\n");
    BOOST_TEST(s.feed("x sru") == "x ");  // may still become "srun: error: "
    BOOST_TEST(s.feed("m\n") == "srum\n");
    BOOST_TEST(s.feed("TA") == "");
    BOOST_TEST(s.finish() == "TA");  // the stream ended: what was held passes
    BOOST_TEST(s.taken().empty());
}

BOOST_AUTO_TEST_CASE(a_line_to_take_that_never_ends_is_taken_at_the_end)
{
    const auto r = sift("a\nTAG {\"x\":1}", 2);
    BOOST_TEST(r.passed == "a\n");
    BOOST_TEST(r.taken == std::vector<std::string>{"TAG {\"x\":1}"}, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(taken_lines_are_bounded_in_number_and_length)
{
    line_sieve s({"N "}, {}, 2, 8);
    BOOST_TEST(s.feed("N one\nN two\nN three and more\nkept\n") == "kept\n");
    BOOST_TEST(s.taken() == (std::deque<std::string>{"N two", "N three "}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()
