// SPDX-License-Identifier: BSL-1.0
// The batch counters' bookkeeping for one job (the tool's own header, no process): each job
// is counted once and leaves `running` once, whatever throws around its result line.
#include "../../src/cli/progress.hpp"

#include <boost/test/unit_test.hpp>

#include <stdexcept>

using sandbox::cli::batch_counts;
using sandbox::cli::job_outcome;
using sandbox::cli::running_job;

BOOST_AUTO_TEST_SUITE(cli_batch_counts)

BOOST_AUTO_TEST_CASE(a_job_counts_as_running_until_finished_and_then_once)
{
    batch_counts c;
    {
        running_job j(c);
        BOOST_TEST(c.running == 1u);
        BOOST_TEST(c.finished() == 0u);
        j.finish(job_outcome::timed_out);
        BOOST_TEST(c.running == 0u);
        j.finish(job_outcome::succeeded);  // only the first outcome counts
    }
    BOOST_TEST(c.running == 0u);
    BOOST_TEST(c.timed_out == 1u);
    BOOST_TEST(c.finished() == 1u);
}

BOOST_AUTO_TEST_CASE(an_exception_after_finish_does_not_count_the_job_again)
{
    // As when a job's result line cannot be made or written after its outcome was counted:
    // `running` must come down once (it used to come down twice, wrapping round below zero
    // and counting the job both as succeeded and as an error).
    batch_counts c;
    running_job other(c);  // another job, still running
    try {
        running_job j(c);
        j.finish(job_outcome::succeeded);
        throw std::runtime_error("cannot make the result line");
    } catch (const std::runtime_error&) {
    }
    BOOST_TEST(c.running == 1u);
    BOOST_TEST(c.succeeded == 1u);
    BOOST_TEST(c.errors == 0u);
    BOOST_TEST(c.finished() == 1u);
}

BOOST_AUTO_TEST_CASE(an_exception_before_finish_counts_an_error_and_leaves_running_once)
{
    batch_counts c;
    try {
        running_job j(c);
        running_job k(c);
        BOOST_TEST(c.running == 2u);
        k.finish(job_outcome::failed);
        throw std::runtime_error("while running");
    } catch (const std::runtime_error&) {
    }
    BOOST_TEST(c.running == 0u);  // not wrapped round below zero
    BOOST_TEST(c.failed == 1u);
    BOOST_TEST(c.errors == 1u);
    BOOST_TEST(c.finished() == 2u);
}

BOOST_AUTO_TEST_SUITE_END()
