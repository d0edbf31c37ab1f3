// SPDX-License-Identifier: BSL-1.0
// The base dir on a small tmpfs, filled up: out of inodes, a work dir or a session cannot be
// made (an error naming the path and ENOSPC, nothing half-made); out of blocks, a command
// writing into its work dir gets its own ENOSPC while the run reports normally. Once space
// is freed, the next run works.
#include "fault_support.hpp"

#include <boost/test/unit_test.hpp>

using namespace sandbox;
using namespace sandbox::test;

namespace {

constexpr const char* fs_options = "size=256k,nr_inodes=64,mode=0755";
const std::string no_space = "No space left on device";
// 192 KiB: fits the empty 256 KiB tmpfs, not a full one; dd names what it cannot write.
const std::string write_big = "dd if=/dev/zero of=big bs=4096 count=48 && echo written";

bool only_fillers(const std::filesystem::path& dir, const std::vector<std::string>& fillers)
{
    auto sorted = fillers;
    std::sort(sorted.begin(), sorted.end());
    return dir_entries(dir) == sorted;
}

void check_work_dir_refused(const outcome& o, const std::string& tool, const std::filesystem::path& base)
{
    BOOST_TEST_CONTEXT(o.message() << describe(o.result))
    {
        BOOST_TEST(o.launch_failed());
        BOOST_TEST(o.code() == system_code(ENOSPC));
        BOOST_TEST(mentions(o.message(), "Failed to start " + tool + ": cannot create work dir " + base.string() + "/sandbox-"));
        BOOST_TEST(mentions(o.message(), no_space));
    }
}

std::vector<driver> disk_drivers()
{
    std::vector<driver> out;
    for (auto d : {driver::bubblewrap, driver::docker})
        if (driver_ready(d)) out.push_back(d);
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(full_filesystem)

BOOST_AUTO_TEST_CASE(out_of_inodes_no_work_dir_can_be_made_and_the_error_names_the_path_and_enospc)
{
    small_tmpfs fs(fs_options);
    asio::io_context ctx;
    const int fds = settled_fd_count(ctx);
    const auto fillers = fs.use_up_inodes();
    for (auto d : disk_drivers()) {
        BOOST_TEST_CONTEXT(to_string(d))
        {
            auto runner = make_runner(execution_policy::in(fs.path()).with_timeout(30s), d, options_for(d));
            auto o = start_one(ctx, *runner, {"true"});
            BOOST_REQUIRE(run_until(ctx, [&] { return o->done; }, 30s));
            check_work_dir_refused(*o, d == driver::docker ? "docker" : "bwrap", fs.path());
            BOOST_TEST(only_fillers(fs.path(), fillers), join(dir_entries(fs.path())));
        }
    }
    // One inode back: the work dir can be made again, and the run works.
    std::filesystem::remove(fs.path() / fillers.back());
    for (auto d : disk_drivers()) {
        BOOST_TEST_CONTEXT(to_string(d))
        {
            auto runner = make_runner(execution_policy::in(fs.path()).with_timeout(30s), d, options_for(d));
            auto r = run_coro(ctx, runner->execute({"sh", "-c", "echo ok"}), 60s);
            BOOST_TEST(r.success(), describe(r));
            BOOST_TEST(r.out == "ok\n");
            BOOST_TEST(run_dirs_in(fs.path()).empty(), join(run_dirs_in(fs.path())));
        }
    }
    check_nothing_left("sandbox-faults-none", fds, fs.path());
}

BOOST_AUTO_TEST_CASE(out_of_inodes_a_session_is_refused_with_enospc_naming_its_directory_and_nothing_half_made)
{
    small_tmpfs fs(fs_options);
    auto fillers = fs.use_up_inodes();
    const auto policy = execution_policy::in(fs.path()).with_timeout(30s);
    session_options host_settings;
    host_settings.state_root = fs.path();  // the host driver keeps its state there

    auto refused = [&](driver d, const session_options& settings) {
        BOOST_TEST_CONTEXT(to_string(d) << ", " << fillers.size() << " inodes filled")
        {
            try {
                session s(policy, d, options_for(d), settings);
                BOOST_ERROR("the session was made on a full filesystem");
            } catch (const launch_error& e) {
                BOOST_TEST(e.code() == system_code(ENOSPC), e.what());
                BOOST_TEST(mentions(e.what(), "Failed to start session: cannot create " + fs.path().string() + "/sandbox-session-"), e.what());
                BOOST_TEST(mentions(e.what(), no_space), e.what());
            }
            BOOST_TEST(only_fillers(fs.path(), fillers), join(dir_entries(fs.path())));
        }
    };
    const bool bwrap = driver_ready(driver::bubblewrap);
    refused(driver::host, host_settings);
    if (bwrap) refused(driver::bubblewrap, {});
    // Room for the session's own directory but not for what goes inside it: the directory
    // that was made is removed again.
    std::filesystem::remove(fs.path() / fillers.back());
    fillers.pop_back();
    refused(driver::host, host_settings);
    if (bwrap) refused(driver::bubblewrap, {});

    // Space again: a session works, and leaves nothing once closed.
    for (const auto& f : fillers) std::filesystem::remove(fs.path() / f);
    fillers.clear();
    asio::io_context ctx;
    for (auto d : {driver::host, driver::bubblewrap}) {
        if (d == driver::bubblewrap && !bwrap) continue;
        BOOST_TEST_CONTEXT(to_string(d))
        {
            session s(policy, d, options_for(d), d == driver::host ? host_settings : session_options{});
            run_coro(ctx, [&]() -> asio::awaitable<void> {
                auto r1 = co_await s.run("mkdir sub && cd sub && export V=kept");
                BOOST_TEST(r1.success(), describe(r1));
                auto r2 = co_await s.run("echo \"$(basename \"$PWD\") $V\"");
                BOOST_TEST(r2.out == "sub kept\n", describe(r2));
            }());
            s.close();
            BOOST_TEST(run_dirs_in(fs.path()).empty(), join(dir_entries(fs.path())));
        }
    }
    // (The host session's commands ran in the base dir itself: what they made is theirs.)
}

BOOST_AUTO_TEST_CASE(a_workspace_write_on_a_full_filesystem_fails_with_enospc_naming_the_path)
{
    small_tmpfs fs(fs_options);
    workspace ws(fs.path());
    fs.use_up_blocks();
    try {
        ws.write_file("notes.txt", std::string(8192, 'x'));
        BOOST_ERROR("a write on a full filesystem succeeded");
    } catch (const boost::system::system_error& e) {
        BOOST_TEST(e.code().value() == ENOSPC, e.what());
        BOOST_TEST(mentions(e.what(), "notes.txt"), e.what());
    }
    fs.clear();
    fs.use_up_inodes();
    try {
        ws.make_dir_all("a/b");
        BOOST_ERROR("a directory was made without a free inode");
    } catch (const boost::system::system_error& e) {
        BOOST_TEST(e.code().value() == ENOSPC, e.what());
        BOOST_TEST(mentions(e.what(), "a"), e.what());
    }
    fs.clear();
    ws.write_file("notes.txt", "fits\n");
    BOOST_TEST(ws.read_file("notes.txt") == "fits\n");
}

BOOST_AUTO_TEST_CASE(out_of_blocks_a_command_writing_into_its_work_dir_gets_its_own_enospc_and_the_run_reports_normally)
{
    small_tmpfs fs(fs_options);
    asio::io_context ctx;
    fs.use_up_blocks();
    for (auto d : disk_drivers()) {
        BOOST_TEST_CONTEXT(to_string(d))
        {
            auto runner = make_runner(execution_policy::in(fs.path()).with_timeout(30s), d, options_for(d));
            auto r = run_coro(ctx, runner->execute({"sh", "-c", write_big}), 60s);
            BOOST_TEST(r.exit_code == 1, describe(r));
            BOOST_TEST(!r.timed_out);
            BOOST_TEST(!r.start_error);
            BOOST_TEST(r.out.empty());
            BOOST_TEST(mentions(r.err, no_space), describe(r));
            BOOST_TEST(run_dirs_in(fs.path()).empty(), join(run_dirs_in(fs.path())));
        }
    }
    // The same in a session, whose work dir lives on: the command's error, and the session
    // goes on.
    if (driver_ready(driver::bubblewrap)) {
        session s(execution_policy::in(fs.path()).with_timeout(30s), driver::bubblewrap, options_for(driver::bubblewrap));
        auto r = run_coro(ctx, s.run(write_big), 60s);
        BOOST_TEST(r.exit_code == 1, describe(r));
        BOOST_TEST(mentions(r.err, no_space), describe(r));
        std::filesystem::remove(fs.path() / "blocks");
        auto again = run_coro(ctx, s.run("rm -f big; " + write_big), 60s);
        BOOST_TEST(again.success(), describe(again));
        BOOST_TEST(again.out == "written\n");
        s.close();
        fs.use_up_blocks();
    }
    std::filesystem::remove(fs.path() / "blocks");
    for (auto d : disk_drivers()) {
        BOOST_TEST_CONTEXT(to_string(d))
        {
            auto runner = make_runner(execution_policy::in(fs.path()).with_timeout(30s), d, options_for(d));
            auto r = run_coro(ctx, runner->execute({"sh", "-c", write_big}), 60s);
            BOOST_TEST(r.success(), describe(r));
            BOOST_TEST(r.out == "written\n");
        }
    }
    BOOST_TEST(dir_entries(fs.path()).empty(), join(dir_entries(fs.path())));
}

BOOST_AUTO_TEST_SUITE_END()
