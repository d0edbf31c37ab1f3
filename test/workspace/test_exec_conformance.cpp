// SPDX-License-Identifier: BSL-1.0
// The Go backend's execution conformance cases (reference §5.1, §5.3), for a workspace and
// a host runner whose base dir is the workspace root: what the file API writes, commands
// see, and a working directory is fenced before it is used.
#include "support.hpp"

#include <sandbox/sandbox.hpp>

#include <boost/test/unit_test.hpp>

using namespace sandbox;
using namespace sandbox::test;

namespace {

struct exec_fixture {
    temp_dir dir;
    workspace ws{dir.path};
    std::unique_ptr<command_runner> runner = make_runner(execution_policy::in(ws.root()).with_timeout(10s), driver::host);

    exec_result sh(const std::string& script, std::optional<std::string> in = std::nullopt)
    {
        return run_sync(*runner, {"sh", "-c", script}, std::move(in));
    }
    static std::string trimmed(std::string s)
    {
        while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
        return s;
    }
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(test_exec_conformance, exec_fixture)

BOOST_AUTO_TEST_CASE(exec_echo_succeeds)
{
    const auto r = sh("echo hi");
    BOOST_TEST(r.exit_code == 0);
    BOOST_TEST(trimmed(r.out) == "hi");
}

BOOST_AUTO_TEST_CASE(non_zero_exit_is_result_not_error)
{
    const auto r = sh("exit 3");
    BOOST_TEST(r.exit_code == 3);
    BOOST_TEST(!r.timed_out);
}

BOOST_AUTO_TEST_CASE(timeout_sets_timed_out_and_returns_promptly)
{
    auto fast = make_runner(execution_policy::in(ws.root()).with_timeout(100ms), driver::host);
    const auto start = std::chrono::steady_clock::now();
    // The Go backend returned after 5 s here: the grandchild sleep held the pipe.
    const auto r = run_sync(*fast, {"sh", "-c", "sleep 5; true"});
    BOOST_TEST(r.timed_out);
    BOOST_TEST((std::chrono::steady_clock::now() - start < 2s));
}

BOOST_AUTO_TEST_CASE(exec_stdin_is_forwarded)
{
    BOOST_TEST(trimmed(run_sync(*runner, {"cat"}, std::string("piped-input")).out) == "piped-input");
}

BOOST_AUTO_TEST_CASE(exec_honors_working_dir)
{
    ws.write_file("marker.txt", "here");
    BOOST_TEST(trimmed(sh("cat marker.txt").out) == "here");
    // And the other way round: what a command writes, the file API reads.
    sh("mkdir -p out && echo from-command > out/result.txt");
    BOOST_TEST(ws.read_file("out/result.txt") == "from-command\n");
    BOOST_TEST((ws.list_dir("out") == std::vector<dir_entry>{{"result.txt", false}}));
}

BOOST_AUTO_TEST_CASE(exec_in_a_subdirectory_uses_the_fenced_path)
{
    ws.make_dir_all("sub/deeper");
    auto sub = make_runner(execution_policy::in(ws.root() / ws.rel_in_root("sub/deeper")), driver::host);
    BOOST_TEST(trimmed(run_sync(*sub, {"pwd"}).out) ==
               std::filesystem::canonical(dir.path / "sub" / "deeper").string());
}

BOOST_AUTO_TEST_CASE(exec_refuses_dir_escape)
{
    // A working directory goes through the fence before a runner is made for it.
    for (const char* escape : {"../..", "../escape"}) {
        BOOST_CHECK_EXCEPTION((void)ws.rel_in_root(escape), boost::system::system_error, [&](const boost::system::system_error& e) {
            return contains(e.what(), escape);
        });
    }
}

BOOST_AUTO_TEST_CASE(capabilities_advertised)
{
    const auto c = runner->caps();
    BOOST_TEST((c.level >= isolation::none));
    BOOST_TEST((c.level == isolation::none));
}

BOOST_AUTO_TEST_SUITE_END()
