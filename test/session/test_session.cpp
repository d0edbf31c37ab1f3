// SPDX-License-Identifier: BSL-1.0
// Sessions on every driver: the Go backend's session conformance cases, plus the state that
// backend lost (exit N), private state files and their removal.
#include "driver_availability.hpp"

#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>

using namespace sandbox;
using namespace sandbox::test;
namespace bdata = boost::unit_test::data;

namespace {

// Every driver: sessions and long-lived processes work on each.
const std::vector<driver>& session_drivers = every_driver;

struct session_fixture {
    temp_dir base;
    // Searchable by the uid bubblewrap runs as, as /tmp is.
    bool searchable = (std::filesystem::permissions(base.path, std::filesystem::perms::others_exec,
                                                    std::filesystem::perm_options::add),
                       true);
    asio::io_context ctx;

    execution_policy policy() const { return execution_policy::in(base.path).with_timeout(60s); }
    std::unique_ptr<session> open(driver d) { return std::make_unique<session>(policy(), d, test_options()); }

    exec_result sh(session& s, const std::string& script, std::optional<std::string> in = std::nullopt)
    {
        return run_coro(ctx, s.run(script, std::move(in)));
    }
    std::string out(session& s, const std::string& script)
    {
        auto r = sh(s, script);
        BOOST_TEST(r.exit_code == 0, "`" << script << "` failed: " << r.err);
        while (!r.out.empty() && (r.out.back() == '\n' || r.out.back() == ' ')) r.out.pop_back();
        return r.out;
    }
};

bool ends_with(const std::string& s, const std::string& suffix)
{
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::vector<std::string> entries(const std::filesystem::path& dir)
{
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
    return names;
}

mode_t mode_of(const std::filesystem::path& p)
{
    struct stat st {};
    ::lstat(p.c_str(), &st);
    return st.st_mode & 07777;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(test_session)

BOOST_DATA_TEST_CASE_F(session_fixture, cwd_persists_across_commands, bdata::make(session_drivers), d)
{
    if (!require_driver(d)) return;
    auto s = open(d);
    out(*s, "mkdir -p subdir && cd subdir");
    BOOST_TEST(ends_with(out(*s, "pwd"), "/subdir"));
}

BOOST_DATA_TEST_CASE_F(session_fixture, exported_variables_persist, bdata::make(session_drivers), d)
{
    if (!require_driver(d)) return;
    auto s = open(d);
    out(*s, "export GREETING=hello");
    BOOST_TEST(out(*s, "echo \"$GREETING\"") == "hello");
    // Values with spaces and quotes survive the round trip.
    out(*s, "export TRICKY=\"it's a \\\"test\\\" \\$HOME\"");
    BOOST_TEST(out(*s, "printf '%s' \"$TRICKY\"") == "it's a \"test\" $HOME");
}

BOOST_DATA_TEST_CASE_F(session_fixture, sessions_are_isolated, bdata::make(session_drivers), d)
{
    if (!require_driver(d)) return;
    auto a = open(d);
    auto b = open(d);
    out(*a, "export SECRET=in_a; mkdir -p only_a && cd only_a");
    BOOST_TEST(out(*b, "echo \"${SECRET:-unset}\"") == "unset");
    BOOST_TEST(!ends_with(out(*b, "pwd"), "/only_a"));
}

BOOST_DATA_TEST_CASE_F(session_fixture, a_non_shell_command_passes_through, bdata::make(session_drivers), d)
{
    if (!require_driver(d)) return;
    auto s = open(d);
    auto r = run_coro(ctx, s->execute({"echo", "raw"}));
    BOOST_TEST(r.exit_code == 0);
    BOOST_TEST(r.out == "raw\n");
}

BOOST_DATA_TEST_CASE_F(session_fixture, an_explicit_dir_overrides_the_saved_cwd, bdata::make(session_drivers), d)
{
    if (!require_driver(d)) return;
    auto s = open(d);
    out(*s, "mkdir -p a b && cd a");
    auto r = run_coro(ctx, s->run_in("b", "pwd"));
    BOOST_TEST(ends_with(r.out, "/b\n"), r.out);
    // The explicit dir becomes the session's directory.
    BOOST_TEST(ends_with(out(*s, "pwd"), "/b"));
    auto missing = run_coro(ctx, s->run_in("nowhere", "pwd"));
    BOOST_TEST(missing.exit_code != 0);
}

BOOST_DATA_TEST_CASE_F(session_fixture, a_non_zero_exit_is_a_result, bdata::make(session_drivers), d)
{
    if (!require_driver(d)) return;
    auto s = open(d);
    auto r = sh(*s, "exit 7");
    BOOST_TEST(r.exit_code == 7);
    BOOST_TEST(!r.timed_out);
}

BOOST_DATA_TEST_CASE_F(session_fixture, state_survives_exit_n, bdata::make(session_drivers), d)
{
    if (!require_driver(d)) return;
    auto s = open(d);
    auto r = sh(*s, "export KEPT=yes; mkdir -p deep && cd deep; exit 3");
    BOOST_TEST(r.exit_code == 3);
    BOOST_TEST(out(*s, "echo \"$KEPT\"") == "yes");
    BOOST_TEST(ends_with(out(*s, "pwd"), "/deep"));
}

BOOST_DATA_TEST_CASE_F(session_fixture, state_survives_a_failing_command, bdata::make(session_drivers), d)
{
    if (!require_driver(d)) return;
    auto s = open(d);
    auto r = sh(*s, "export AFTER_FAILURE=1; false");
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(out(*s, "echo \"$AFTER_FAILURE\"") == "1");
}

BOOST_DATA_TEST_CASE_F(session_fixture, files_and_stdin_work_in_a_session, bdata::make(session_drivers), d)
{
    if (!require_driver(d)) return;
    auto s = open(d);
    out(*s, "echo data > kept.txt");
    BOOST_TEST(out(*s, "cat kept.txt") == "data");
    BOOST_TEST(sh(*s, "cat", std::string("from stdin")).out == "from stdin");
}

BOOST_DATA_TEST_CASE_F(session_fixture, state_is_private_and_removed_on_close, bdata::make(session_drivers), d)
{
    if (!require_driver(d)) return;
    auto s = open(d);
    out(*s, "export PRIVATE=1; true");
    const auto dir = s->directory();
    BOOST_TEST(mode_of(dir) == 0700u);
    BOOST_TEST(mode_of(dir / "state") == 0700u);
    BOOST_TEST(mode_of(dir / "state" / "env") == 0600u);
    BOOST_TEST(mode_of(dir / "state" / "cwd") == 0600u);
    s->close();
    BOOST_TEST(!std::filesystem::exists(dir));
    s->close();  // idempotent
    BOOST_CHECK_THROW(sh(*s, "true"), std::logic_error);
    // The destructor closes too.
    std::filesystem::path other;
    {
        auto t = open(d);
        other = t->directory();
        out(*t, "true");
    }
    BOOST_TEST(!std::filesystem::exists(other));
}

BOOST_DATA_TEST_CASE_F(session_fixture, a_writable_path_appearing_later_does_not_move_the_state,
                       bdata::make(session_drivers), d)
{
    // A command while the path is missing is refused by name (the host mounts nothing);
    // once it appears, the session goes on, and its own state took no mount index.
    if (!require_driver(d)) return;
    const auto later = base.path / "later";
    auto p = policy().with_writable_paths({later});
    session s(p, d, test_options());
    if (d != driver::host) {
        try {
            out(s, "export A=0");
            BOOST_ERROR("no launch_error while " << later << " is missing");
        } catch (const launch_error& e) {
            BOOST_TEST(std::string(e.what()).find("writable path " + later.string() + " does not exist") !=
                           std::string::npos,
                       e.what());
        }
    }
    std::filesystem::create_directory(later);
    ::chmod(later.c_str(), 0777);
    out(s, "export A=1; mkdir -p sub && cd sub");
    BOOST_TEST(out(s, "echo \"$A\"") == "1");
    BOOST_TEST(ends_with(out(s, "pwd"), "/sub"));
    BOOST_TEST(std::filesystem::is_empty(later));
}

BOOST_AUTO_TEST_CASE(state_survives_a_changed_path_and_a_user_exit_trap)
{
    session_fixture f;
    auto s = f.open(driver::host);
    auto r = f.sh(*s, "export KEEP=1; mkdir -p deeper && cd deeper; export PATH=/nonexistent");
    BOOST_TEST(r.exit_code == 0);
    BOOST_TEST(r.err.empty(), r.err);
    BOOST_TEST(f.out(*s, "echo \"$KEEP\"; export PATH=/usr/bin:/bin") == "1");
    BOOST_TEST(ends_with(f.out(*s, "pwd"), "/deeper"));
    f.out(*s, "export TRAPPED=yes; trap 'true' EXIT; cd ..");
    BOOST_TEST(f.out(*s, "echo \"$TRAPPED\"") == "yes");
    BOOST_TEST(!ends_with(f.out(*s, "pwd"), "/deeper"));
}

BOOST_AUTO_TEST_CASE(bash_sessions_share_state_with_sh)
{
    session_fixture f;
    auto s = f.open(driver::host);
    auto r = run_coro(f.ctx, s->execute({"bash", "-c", "declare -a list=(1 2); export FROM_BASH=\"${list[1]}\""}));
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(f.out(*s, "echo \"$FROM_BASH\"") == "2");
}

BOOST_AUTO_TEST_CASE(the_body_is_never_spliced_into_the_wrapper)
{
    session_fixture f;
    auto s = f.open(driver::host);
    // Quotes and positional parameters in the body are just the body's.
    BOOST_TEST(f.out(*s, "echo \"$1|$2|$#\"; echo '\"; exit 9; \"'") == "||0\n\"; exit 9; \"");
}

BOOST_AUTO_TEST_CASE(a_session_on_a_missing_base_dir_fails_clearly)
{
    BOOST_CHECK_EXCEPTION(session(execution_policy::in("/nonexistent-base"), driver::host), launch_error,
                          [](const launch_error& e) {
                              return std::string(e.what()).find("/nonexistent-base") != std::string::npos;
                          });
}

BOOST_AUTO_TEST_CASE(a_host_session_keeps_its_state_out_of_the_workspace)
{
    // The natural port of a workspace API: base dir = the workspace root, which commands list
    // and clean. Exported secrets must not be found, listed or deleted there.
    session_fixture f;
    auto s = f.open(driver::host);
    f.out(*s, "export SECRET=s3cret; mkdir -p sub && cd sub");
    BOOST_TEST(f.out(*s, "ls -A ..") == "sub");
    BOOST_TEST(entries(f.base.path) == std::vector<std::string>{"sub"}, boost::test_tools::per_element());
    BOOST_TEST(f.out(*s, "grep -rl s3cret .. 2>/dev/null | wc -l") == "0");
    const auto dir = s->directory();
    BOOST_TEST(dir.parent_path() == std::filesystem::temp_directory_path());
    BOOST_TEST(f.out(*s, "echo $SECRET; pwd") == "s3cret\n" + (f.base.path / "sub").string());
    s->close();
    BOOST_TEST(!std::filesystem::exists(dir));
}

BOOST_AUTO_TEST_CASE(the_state_root_is_configurable_and_must_exist)
{
    session_fixture f;
    temp_dir root;
    {
        session s(f.policy(), driver::host, test_options(), session_options{.state_root = root.path});
        BOOST_TEST(s.directory().parent_path() == root.path);
        BOOST_TEST(f.out(s, "export A=1; true") == "");
        BOOST_TEST(f.out(s, "echo $A") == "1");
        BOOST_TEST(entries(root.path).size() == 1u);
    }
    BOOST_TEST(entries(root.path).empty());
    BOOST_CHECK_EXCEPTION(session(f.policy(), driver::host, test_options(), session_options{.state_root = "/nonexistent-root"}),
                          launch_error, [](const launch_error& e) {
                              return std::string(e.what()).find("/nonexistent-root") != std::string::npos;
                          });
}

BOOST_AUTO_TEST_SUITE_END()
