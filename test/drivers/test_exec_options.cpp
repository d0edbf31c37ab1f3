// SPDX-License-Identifier: BSL-1.0
// exec_options on the isolating drivers: extra environment, a working directory fenced to
// /work, a per-execution timeout, and the error codes of refusals.
#include "driver_fixture.hpp"

#include "drivers/plans.hpp"
#include "drivers/runner.hpp"

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>

using namespace sandbox;
using namespace sandbox::test;
namespace data = boost::unit_test::data;

namespace {

exec_result run_with(const driver_env& e, std::vector<std::string> argv, exec_options o)
{
    auto r = e.runner();
    return async_execute(*r, std::move(argv), std::move(o), asio::use_future).get();
}

boost::system::error_code launch_code(const driver_env& e, exec_options o)
{
    try {
        const auto r = run_with(e, {"true"}, std::move(o));
        BOOST_ERROR("no error; " << describe(r));
    } catch (const boost::system::system_error& err) {
        return err.code();
    }
    return {};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(exec_options_on_isolating_drivers)

BOOST_DATA_TEST_CASE(preview_is_the_real_command_line_and_leaves_nothing, data::make(isolating_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    const auto r = e.runner();
    const auto p = r->preview({"sh", "-c", "echo previewed"});
    BOOST_TEST_REQUIRE(p.argv.size() >= 3u);
    BOOST_TEST((std::vector<std::string>(p.argv.end() - 3, p.argv.end()) ==
                std::vector<std::string>{"sh", "-c", "echo previewed"}));
    // landlock with cgroups starts the command itself, confined by the spawn: nothing before it.
    if (!(d == driver::landlock && cgroups_usable_here()))
        BOOST_TEST(join(p.argv).find(to_string(d) == "bubblewrap" ? "bwrap" : std::string(to_string(d))) != std::string::npos,
                   join(p.argv));
    else
        BOOST_TEST(p.argv.size() == 3u, join(p.argv));
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));  // the work dir made for it is gone

    // on_launch sees the command line that is started.
    std::vector<std::string> started;
    exec_options o;
    o.on_launch = [&](const launch_preview& l) { started = l.argv; };
    const auto res = run_with(e, {"sh", "-c", "echo previewed"}, std::move(o));
    BOOST_TEST(res.out == "previewed\n", describe(res));
    // firejail makes each writable host mount read-only, and a container starting or ending
    // on this host between the two calls changes that list: the rest must match in length.
    const auto without_host_mounts = [](const std::vector<std::string>& argv) {
        return std::count_if(argv.begin(), argv.end(),
                             [](const std::string& a) { return a.rfind("--read-only=", 0) != 0; });
    };
    BOOST_TEST(without_host_mounts(started) == without_host_mounts(p.argv), join(started));
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
}

BOOST_DATA_TEST_CASE(env_is_added_inside_and_blocked_names_still_removed, data::make(isolating_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    exec_options o;
    o.env = {{"EXTRA", "yes"}, {"LD_PRELOAD", "/evil.so"}};
    const auto r = run_with(e, {"sh", "-c", "echo $EXTRA ${LD_PRELOAD:-none}"}, std::move(o));
    BOOST_TEST(r.out == "yes none\n", describe(r));
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
}

BOOST_DATA_TEST_CASE(a_cwd_that_leaves_work_or_is_missing_is_refused_with_its_code, data::make(isolating_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    for (const char* out : {"..", "../x", "/etc", "a/../../b"}) {
        exec_options o;
        o.cwd = out;
        const auto code = launch_code(e, std::move(o));
        BOOST_TEST((code == errc::outside_root), out << ": " << code.message());
    }
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
}

// As on the host: a working directory that does not exist is a 127 result whose stderr says
// why (and the callback sees it), not an exception, and nothing is left.
BOOST_DATA_TEST_CASE(a_missing_cwd_is_a_127_result_on_every_driver, data::make(every_driver), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    exec_options missing;
    missing.cwd = "not-there";  // a fresh /work is empty; the host's base dir has no such entry
    std::string seen;
    missing.on_output = [&](stream_kind k, std::string_view text) {
        if (k == stream_kind::err) seen += text;
    };
    const auto r = run_with(e, {"true"}, std::move(missing));
    BOOST_TEST_INFO(describe(r));
    BOOST_TEST(r.exit_code == 127);
    BOOST_TEST(!r.success());
    BOOST_TEST((r.start_error == errc::bad_working_directory), r.start_error.message());
    BOOST_TEST(r.err.starts_with("Failed to start"), r.err);
    BOOST_TEST(r.err.find("not-there") != std::string::npos, r.err);
    BOOST_TEST(seen == r.err);
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
}

BOOST_DATA_TEST_CASE(a_cwd_in_a_kept_work_dir_is_where_the_command_starts, data::make(isolating_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    // A work dir kept between runs, as sessions keep theirs.
    const auto work = e.base.path / "kept";
    std::filesystem::create_directories(work / "sub" / "deeper");
    for (const auto& p : {work, work / "sub", work / "sub" / "deeper"}) ::chmod(p.c_str(), 0777);
    // firejail takes only a work dir owned by the user it runs as.
    if (d == driver::firejail && ::geteuid() == 0) {
        const auto [uid, gid] = detail::command_ids(d, e.options);
        BOOST_REQUIRE(::chown(work.c_str(), uid, gid) == 0);
    }
    std::filesystem::create_directory_symlink("/etc", work / "escape");
    e.options.work_dir = work;
    exec_options o;
    o.cwd = "sub/deeper";
    const auto r = run_with(e, {"pwd"}, o);
    BOOST_TEST(r.success(), describe(r));
    BOOST_TEST(r.out.ends_with("/sub/deeper\n"), describe(r));
    o.cwd = "escape";
    const auto code = launch_code(e, o);
    BOOST_TEST((code == errc::outside_root), code.message());
}

BOOST_DATA_TEST_CASE(the_timeout_option_replaces_the_policys, data::make(isolating_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    exec_options o;
    o.timeout = std::chrono::milliseconds(300);
    const auto r = run_with(e, {"sleep", "20"}, std::move(o));
    BOOST_TEST(r.timed_out, describe(r));
    BOOST_TEST(r.exit_code == exit_codes::timeout);
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
}

BOOST_AUTO_TEST_SUITE_END()
