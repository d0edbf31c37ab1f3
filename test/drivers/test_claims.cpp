// SPDX-License-Identifier: BSL-1.0
// The syscall table (src/sys/syscall_rules.hpp) against the real engines: under every
// isolating driver, each row the driver's launch applies is tried by a static probe inside the
// sandbox, which must see it refused. The rows come from the table itself, so a new row or a
// new driver cannot go untested; doc/isolation.md must list every row.
#include "driver_fixture.hpp"

#include "drivers/driver_spec.hpp"
#include "sys/mounts.hpp"
#include "sys/syscall_rules.hpp"

#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <thread>

using namespace sandbox;
using namespace sandbox::test;
namespace data = boost::unit_test::data;

namespace {

// The rows a run of `e`'s driver is refused, as the launch computes them.
std::vector<std::string> applied_rows(const driver_env& e)
{
    const detail::driver_context ctx{detail::spec_of(e.d), e.policy, e.options, ::geteuid() == 0};
    const auto bits = detail::command_rules(ctx);
    std::vector<std::string> rows;
    const auto all = detail::syscall_rules();
    for (std::size_t i = 0; i < all.size(); ++i)
        if (bits >> i & 1u) rows.emplace_back(all[i].id);
    return rows;
}

// The probe in a directory every sandbox user can read, given to the run as a readable path.
struct probe_dir {
    shared_dir dir;
    std::filesystem::path probe = dir.path / "probe";
    probe_dir()
    {
        std::filesystem::copy_file(build::syscall_probe(), probe);
        ::chmod(probe.c_str(), 0755);
    }
};

void expect_refused(const driver_env& base, bool network)
{
    driver_env e(base.d);
    e.policy = e.policy.with_network(network);
    probe_dir tools;
    e.policy = e.policy.with_readable_paths({tools.dir.path});
    const auto inside = std::filesystem::path(mounts_for(e.policy, e.d).at(0).container) / "probe";
    const auto rows = applied_rows(e);
    BOOST_TEST_REQUIRE(!rows.empty());
    std::vector<std::string> argv{inside.string()};
    argv.insert(argv.end(), rows.begin(), rows.end());
    const auto r = e.run(argv);
    BOOST_TEST_INFO(describe(r));
    BOOST_TEST(r.exit_code == 0);
    const auto lines = split_lines(r.out);
    for (const auto& row : rows) {
        const auto it = std::find_if(lines.begin(), lines.end(), [&](const std::string& l) { return l.rfind(row + " ", 0) == 0; });
        BOOST_TEST_REQUIRE((it != lines.end()), "no answer for row " << row);
        BOOST_TEST(it->rfind(row + " refused", 0) == 0, to_string(e.d) << ", network " << network << ": " << *it);
    }
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(syscall_table)

BOOST_DATA_TEST_CASE(every_row_the_launch_applies_is_refused_inside, data::make(isolating_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    expect_refused(e, false);
    expect_refused(e, true);
}

// Rows are applied by scope: a driver that sees the host's file system is refused unix
// sockets, one on the host's network every socket when the network is off.
BOOST_AUTO_TEST_CASE(the_scopes_follow_what_each_driver_shares_with_the_host)
{
    auto rows_of = [](driver d, bool network) {
        driver_env e(d);
        e.policy = e.policy.with_network(network);
        return join(applied_rows(e), ",");
    };
    const std::string common = "io_uring,keys,bpf,perf,userfaultfd,mounts,namespaces,setid_files,kernel";
    for (driver d : {driver::bubblewrap, driver::docker, driver::podman}) {
        BOOST_TEST(rows_of(d, false) == common, to_string(d));
        BOOST_TEST(rows_of(d, true) == common, to_string(d));
    }
    BOOST_TEST(rows_of(driver::firejail, false) == common + ",unix_sockets");
    BOOST_TEST(rows_of(driver::firejail, true) == common + ",unix_sockets");
    BOOST_TEST(rows_of(driver::landlock, false) == common + ",unix_sockets,sockets");
    BOOST_TEST(rows_of(driver::landlock, true) == common + ",unix_sockets");
}

// doc/isolation.md lists the table: every row by its id.
BOOST_AUTO_TEST_CASE(the_isolation_document_lists_every_row)
{
    const auto doc = read_text(std::filesystem::path(build::source_dir()) / "doc" / "isolation.md");
    BOOST_TEST_REQUIRE(!doc.empty());
    for (const auto& row : detail::syscall_rules())
        BOOST_TEST(doc.find("| `" + std::string(row.id) + "` |") != std::string::npos, "row " << row.id);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(secrets)

namespace {

// Every process's command line on the host that holds `needle`, as "pid: cmdline".
std::vector<std::string> command_lines_holding(const std::string& needle)
{
    std::vector<std::string> found;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
        const auto name = e.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        auto text = read_text(e.path() / "cmdline");
        if (text.find(needle) == std::string::npos) continue;
        std::replace(text.begin(), text.end(), '\0', ' ');
        found.push_back(name + ": " + text);
    }
    return found;
}

}  // namespace

// A value of the policy's environment and of the execution's reaches the command, and no
// process's command line on the host holds it while the run lasts (any local user can read
// them all), on every isolating driver.
BOOST_DATA_TEST_CASE(no_environment_value_is_in_any_command_line, data::make(isolating_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    const auto secret = "policy-secret-" + random_digits(12);
    const auto extra = "exec-secret-" + random_digits(12);
    const auto multi = "line one\nline-secret-" + random_digits(12);
    e.policy = e.policy.with_env({{"SANDBOX_PLANTED", secret}, {"SANDBOX_MULTI", multi}});
    auto runner = e.runner();
    exec_options o;
    o.env = {{"SANDBOX_EXTRA", extra}};
    std::vector<std::string> seen;
    bool scanned = false;
    o.on_output = [&](stream_kind, std::string_view chunk) {
        if (scanned || chunk.find("ready") == std::string_view::npos) return;
        scanned = true;
        for (const auto& needle : {secret, extra, multi.substr(9)})
            for (auto& line : command_lines_holding(needle)) seen.push_back(std::move(line));
    };
    std::vector<std::string> argv{"sh", "-c",
                                  "echo \"$SANDBOX_PLANTED $SANDBOX_EXTRA\" | md5sum; printf '%s' \"$SANDBOX_MULTI\" | md5sum; "
                                  "echo ready; sleep 1"};
    const auto r = run_sync(*runner, std::move(argv), std::move(o));
    BOOST_TEST_INFO(describe(r));
    BOOST_TEST(r.exit_code == 0);
    BOOST_TEST(scanned);
    BOOST_TEST(seen.empty(), join(seen, "\n"));
    // The command got the values: their checksums, computed here the same way.
    const auto expect = host_output("echo '" + secret + " " + extra + "' | md5sum; printf '%s' '" + multi + "' | md5sum");
    BOOST_TEST(r.out.substr(0, expect.size()) == expect);
}

BOOST_AUTO_TEST_SUITE_END()

// Readable and writable paths wherever they live: seen at their place and written, or, where a
// driver's sandbox would hide them, the launch refused naming the path. Never a silent miss.
BOOST_AUTO_TEST_SUITE(paths_the_policy_names)

BOOST_DATA_TEST_CASE(are_seen_and_written_under_var_tmp_dev_shm_and_tmp, data::make(isolating_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    for (const std::string parent : {"/var/tmp", "/dev/shm", "/tmp"}) {
        BOOST_TEST_CONTEXT(to_string(d) << " under " << parent)
        {
            shared_dir ro(parent), rw(parent);
            BOOST_TEST_REQUIRE(ro.path.parent_path() == std::filesystem::path(parent));
            { std::ofstream(ro.path / "data") << "readable\n"; }
            ::chmod((ro.path / "data").c_str(), 0644);
            ::chmod(rw.path.c_str(), 0777);
            driver_env e(d);
            e.policy = e.policy.with_readable_paths({ro.path}).with_writable_paths({rw.path});
            std::string ro_inside, rw_inside;
            for (const auto& m : mounts_for(e.policy, d))
                (m.read_only() ? ro_inside : rw_inside) = m.container;
            BOOST_TEST_REQUIRE((!ro_inside.empty() && !rw_inside.empty()));
            const std::string script = "cat \"$1/data\" && echo written > \"$2/out\" && echo WROTE";
            const bool hidden = d == driver::firejail && parent != "/tmp";
            try {
                const auto r = e.sh(script, {ro_inside, rw_inside});
                BOOST_TEST_INFO(describe(r));
                BOOST_TEST(!hidden, "firejail ran with a path its jail hides");
                BOOST_TEST(r.exit_code == 0);
                BOOST_TEST(r.out == "readable\nWROTE\n");
                std::ifstream in(rw.path / "out");
                std::string line;
                std::getline(in, line);
                BOOST_TEST(line == "written");
            } catch (const launch_error& err) {
                BOOST_TEST(hidden, err.what());
                const std::string what = err.what();
                BOOST_TEST(what.rfind("Failed to start firejail: ", 0) == 0u, what);
                BOOST_TEST((what.find(ro.path.string()) != std::string::npos ||
                            what.find(rw.path.string()) != std::string::npos), what);
            }
            BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
        }
    }
}

// Landlock governs no chmod, chown, utimensat or extended attribute: a file and directories
// the caller owns, inside a readable path and outside every path (at its host path, which
// landlock shows), keep their modes and times whatever the command tries, while the same
// calls work inside the writable path. Under a root caller the command's uid owns none of
// them; an unprivileged caller's landlock command sees every mount read-only but its
// writable paths; the other drivers show only the policy's paths, the readable ones read-only.
BOOST_DATA_TEST_CASE(modes_and_times_outside_the_writable_paths_stay, data::make(isolating_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    shared_dir ro, rw, outside;
    const auto file = ro.path / "data";
    { std::ofstream(file) << "private\n"; }
    ::chmod(file.c_str(), 0600);
    ::chmod(outside.path.c_str(), 0700);
    ::chmod(rw.path.c_str(), 0777);
    struct stat file_before {}, ro_before {}, outside_before {};
    BOOST_TEST_REQUIRE(::stat(file.c_str(), &file_before) == 0);
    BOOST_TEST_REQUIRE(::stat(ro.path.c_str(), &ro_before) == 0);
    BOOST_TEST_REQUIRE(::stat(outside.path.c_str(), &outside_before) == 0);
    driver_env e(d);
    e.policy = e.policy.with_readable_paths({ro.path}).with_writable_paths({rw.path});
    std::string ro_inside, rw_inside;
    for (const auto& m : mounts_for(e.policy, d))
        (m.read_only() ? ro_inside : rw_inside) = m.container;
    const auto r = e.sh("for t in \"$1/data\" \"$1\" \"$3\"; do "
                        "chmod 777 \"$t\" 2>/dev/null && echo \"mode changed: $t\"; "
                        "[ -e \"$t\" ] && touch -c -m -t 200001010000 \"$t\" 2>/dev/null && echo \"time changed: $t\"; done; "
                        "echo x > \"$2/mine\" && chmod 640 \"$2/mine\" && touch -m -t 200001010000 \"$2/mine\" && "
                        "echo inside=ok",
                        {ro_inside, rw_inside, outside.path.string()});
    BOOST_TEST_INFO(describe(r));
    BOOST_TEST(r.out == "inside=ok\n", to_string(d));
    auto same = [](const std::filesystem::path& p, const struct stat& before) {
        struct stat now {};
        return ::stat(p.c_str(), &now) == 0 && now.st_mode == before.st_mode && now.st_mtim.tv_sec == before.st_mtim.tv_sec &&
               now.st_mtim.tv_nsec == before.st_mtim.tv_nsec;
    };
    BOOST_TEST(same(file, file_before), to_string(d) << ": " << file);
    BOOST_TEST(same(ro.path, ro_before), to_string(d) << ": " << ro.path);
    BOOST_TEST(same(outside.path, outside_before), to_string(d) << ": " << outside.path);
    struct stat mine {};
    BOOST_TEST_REQUIRE(::stat((rw.path / "mine").c_str(), &mine) == 0);
    BOOST_TEST((mine.st_mode & 07777) == 0640u);
    BOOST_TEST(std::abs(mine.st_mtim.tv_sec - 946684800) <= 14 * 3600);  // 2000-01-01 00:00 in any time zone
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
}

BOOST_AUTO_TEST_CASE(firejail_refuses_a_writable_path_an_unprivileged_caller_does_not_own)
{
    SANDBOX_REQUIRE_DRIVER(driver::firejail);
    if (::geteuid() == 0) {
        BOOST_TEST_MESSAGE("NOTE: root caller: firejail's account is shown writable paths through idmapped mounts");
        return;
    }
    // /var/tmp: world-writable, owned by root.
    driver_env e(driver::firejail);
    e.policy = e.policy.with_writable_paths({"/var/tmp"});
    try {
        const auto r = e.run({"true"});
        BOOST_ERROR("no launch_error; " << describe(r));
    } catch (const launch_error& err) {
        const std::string what = err.what();
        BOOST_TEST(what.find("writable path /var/tmp belongs to uid 0") != std::string::npos, what);
    }
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
}

BOOST_AUTO_TEST_SUITE_END()

// Two runs at once cannot reach each other: a landlock command, which sees the host's file
// system and /proc, tries to read another run's 0600 file through its work dir's host path,
// to chmod that work dir, and to signal its command. Landlock refuses the read and scopes
// signals; the chmod fails under a root caller because each run has a uid of its own, under
// an unprivileged one (both runs are the caller's) because the landlock command sees every
// mount read-only but its own writable paths.
BOOST_AUTO_TEST_SUITE(runs_apart)

BOOST_DATA_TEST_CASE(a_landlock_command_cannot_read_chmod_or_signal_another_run, data::make(isolating_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    SANDBOX_REQUIRE_DRIVER(driver::landlock);
    if (const auto why = detail::unprivileged_user_namespaces(); ::geteuid() != 0 && !why.empty()) {
        BOOST_TEST_MESSAGE("NOTE: unprivileged caller without user namespaces (" << why
                                                                                << "): both runs are the caller's, "
                                                                                   "and landlock gets no read-only view");
        return;
    }
    driver_env victim(d);
    victim.policy = victim.policy.with_timeout(60s);
    const auto marker = "44." + random_digits();
    exec_result victim_result;
    std::thread victim_run([&] {
        victim_result = victim.sh("echo secret > s && chmod 600 s && sleep " + marker + "; true");
    });
    std::filesystem::path work;
    std::vector<int> pids;
    const bool started = eventually([&] {
        for (const auto& name : dir_entries(victim.base.path))
            if (name.rfind("sandbox-", 0) == 0 && std::filesystem::exists(victim.base.path / name / "s"))
                work = victim.base.path / name;
        pids = processes_matching("sleep " + marker, true);
        return !work.empty() && !pids.empty();
    }, 60s);
    BOOST_TEST(started, "the victim's run on " << to_string(d) << " did not start");
    if (started) {
        struct stat before {};
        ::stat(work.c_str(), &before);
        driver_env attacker(driver::landlock);
        const auto r = attacker.sh("cat \"$1/s\" 2>/dev/null; echo read=$?; chmod 777 \"$1\" 2>/dev/null; echo chmod=$?; "
                                   "chmod 644 \"$1/s\" 2>/dev/null; echo chmod_file=$?; kill -TERM \"$2\" 2>/dev/null; echo kill=$?",
                                   {work.string(), std::to_string(pids.front())});
        BOOST_TEST_INFO(describe(r));
        BOOST_TEST(r.out.find("secret") == std::string::npos);
        BOOST_TEST(r.out.find("read=0") == std::string::npos);
        BOOST_TEST(r.out.find("chmod=0") == std::string::npos);
        BOOST_TEST(r.out.find("chmod_file=0") == std::string::npos);
        BOOST_TEST(r.out.find("kill=0") == std::string::npos);
        struct stat after {};
        ::stat(work.c_str(), &after);
        BOOST_TEST(before.st_mode == after.st_mode);
        BOOST_TEST(!processes_matching("sleep " + marker, true).empty());  // still running
        BOOST_TEST(attacker.leftovers().empty(), join(attacker.leftovers()));
    }
    for (int pid : processes_matching("sleep " + marker, true)) ::kill(pid, SIGKILL);
    victim_run.join();
    BOOST_TEST(victim_result.exit_code == 0, describe(victim_result));
    BOOST_TEST(eventually([&] { return victim.leftovers().empty(); }, 30s), join(victim.leftovers()));
}

BOOST_AUTO_TEST_SUITE_END()
