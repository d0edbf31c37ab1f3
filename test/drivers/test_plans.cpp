// SPDX-License-Identifier: BSL-1.0
// The launch plans as pure functions: the exact argv each isolating driver builds from a
// synthetic sandbox_setup. No engine is needed.
#include "driver_fixture.hpp"

#include "drivers/orphans.hpp"
#include "drivers/plans.hpp"
#include "drivers/run_record.hpp"
#include "drivers/seccomp_profile.hpp"
#include "sys/seccomp_filter.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <set>

#include <sys/wait.h>

using namespace sandbox;
using namespace sandbox::test;
using sandbox::detail::sandbox_setup;
using argv_t = std::vector<std::string>;

namespace {

constexpr const char* name = "sandbox-0123456789abcdef01234567";

sandbox_setup make_setup(const std::string& binary)
{
    sandbox_setup s;
    s.binary = binary;
    s.name = name;
    s.work_dir = std::string("/base/") + name;
    s.mounts = {{"/h/rw", "/mnt/rw0", "rw"}, {"/h/rw2", "/mnt/rw1", "rw"}, {"/h/ro", "/mnt/ro0", "ro"}};
    s.env = {{"A", "1"}, {"B", "two words"}, {"PATH", "/bin"}};
    s.uid = 65534;
    s.gid = 65534;
    return s;
}

sandbox_setup firejail_setup()
{
    auto s = make_setup("/usr/bin/firejail");
    s.mounts = {{"/tmp/w", "/tmp/w", "rw"}, {"/tmpfoo/x", "/tmpfoo/x", "rw"}, {"/srv/r", "/srv/r", "ro"},
                {"/tmp/r", "/tmp/r", "ro"}};
    return s;
}

const argv_t user_argv{"sh", "-c", "echo \"$0\"", "--rm", "-e", "X=1", "--"};

// Position of the first occurrence of `seq` as consecutive elements of `a`, or npos.
std::size_t find_seq(const argv_t& a, const argv_t& seq, std::size_t from = 0)
{
    if (seq.empty() || a.size() < seq.size()) return std::string::npos;
    for (std::size_t i = from; i + seq.size() <= a.size(); ++i)
        if (std::equal(seq.begin(), seq.end(), a.begin() + static_cast<std::ptrdiff_t>(i))) return i;
    return std::string::npos;
}

bool has(const argv_t& a, const argv_t& seq) { return find_seq(a, seq) != std::string::npos; }

bool has_prefix_arg(const argv_t& a, const std::string& prefix)
{
    return std::any_of(a.begin(), a.end(), [&](const std::string& s) { return s.rfind(prefix, 0) == 0; });
}

std::size_t count(const argv_t& a, const std::string& v) { return static_cast<std::size_t>(std::count(a.begin(), a.end(), v)); }

// The argv ends with "--" then exactly the user's argv (or, for containers, image then argv).
bool ends_with(const argv_t& a, const argv_t& tail)
{
    return a.size() >= tail.size() && std::equal(tail.begin(), tail.end(), a.end() - static_cast<std::ptrdiff_t>(tail.size()));
}

const execution_policy no_net = execution_policy::defaults().with_memory("64M");
const execution_policy with_net = no_net.with_network(true);

}  // namespace

BOOST_AUTO_TEST_SUITE(launch_plans)

// ------------------------------------------------------------------ docker and podman

BOOST_AUTO_TEST_CASE(container_argv_starts_a_removed_interactive_named_container_with_an_init)
{
    driver_options o;
    o.image = "img:tag";
    for (bool podman : {false, true}) {
        const auto a = detail::container_argv(make_setup("/usr/bin/engine"), no_net, o, podman, user_argv);
        BOOST_TEST_INFO("podman=" << podman << ": " << join(a));
        BOOST_TEST((find_seq(a, {"/usr/bin/engine", "run", "--rm", "-i", "--init", "--name", name}) == 0u));
        BOOST_TEST(count(a, "--rm") == 2u);  // one of ours, one in the user's argv after the image
    }
}

BOOST_AUTO_TEST_CASE(container_argv_confines_the_container)
{
    driver_options o;
    o.image = "img:tag";
    for (bool podman : {false, true}) {
        const auto a = detail::container_argv(make_setup("/usr/bin/engine"), no_net, o, podman, user_argv);
        BOOST_TEST_INFO("podman=" << podman << ": " << join(a));
        BOOST_TEST(has(a, {"--network=none"}));
        BOOST_TEST(has(a, {"--read-only"}));
        BOOST_TEST(has(a, {"--cap-drop=ALL"}));
        BOOST_TEST(has(a, {"--security-opt", "no-new-privileges"}));
        BOOST_TEST(has(a, {"-u", "65534:65534"}));
        BOOST_TEST(has(a, {"--memory", "64m"}));
        BOOST_TEST(has(a, {"--memory-swap", "64m"}));  // no swap beyond the limit
        BOOST_TEST(has(a, {"--pids-limit=256"}));
        BOOST_TEST(has(a, {"--log-driver", "none"}));  // no copy of the output on the engine's disk
        BOOST_TEST(has(a, {"--pull", "never"}));       // no network fetch behind the caller's back
        const auto tmpfs = find_seq(a, {"--tmpfs"});
        BOOST_REQUIRE(tmpfs != std::string::npos);
        BOOST_TEST(a[tmpfs + 1].rfind("/tmp:", 0) == 0u);
        BOOST_TEST(!has_prefix_arg(a, "--privileged"));
        BOOST_TEST(!has_prefix_arg(a, "--cap-add"));
        BOOST_TEST(!has(a, {"--network=host"}));
    }
}

BOOST_AUTO_TEST_CASE(container_argv_network_flag_follows_the_policy)
{
    driver_options o;
    const auto off = detail::container_argv(make_setup("/d"), no_net, o, false, user_argv);
    const auto on = detail::container_argv(make_setup("/d"), with_net, o, false, user_argv);
    BOOST_TEST(has(off, {"--network=none"}));
    BOOST_TEST(!has_prefix_arg(on, "--network"));
    BOOST_TEST(!has_prefix_arg(on, "--net="));
}

BOOST_AUTO_TEST_CASE(container_argv_limits_come_from_policy_and_options)
{
    driver_options o;
    o.pids_limit = 32;
    const auto a = detail::container_argv(make_setup("/d"), execution_policy::defaults().with_memory("1G"), o, true,
                                          user_argv);
    BOOST_TEST(has(a, {"--pids-limit=32"}));
    BOOST_TEST(has(a, {"--memory", "1024m"}));
    BOOST_TEST(has(a, {"--memory-swap", "1024m"}));
}

BOOST_AUTO_TEST_CASE(container_argv_mounts_work_dir_then_writable_then_readable)
{
    driver_options o;
    const auto a = detail::container_argv(make_setup("/d"), no_net, o, false, user_argv);
    const auto work = find_seq(a, {"-v", std::string("/base/") + name + ":/work:rw"});
    const auto rw0 = find_seq(a, {"-v", "/h/rw:/mnt/rw0:rw"});
    const auto rw1 = find_seq(a, {"-v", "/h/rw2:/mnt/rw1:rw"});
    const auto ro0 = find_seq(a, {"-v", "/h/ro:/mnt/ro0:ro"});
    BOOST_TEST_INFO(join(a));
    BOOST_REQUIRE(work != std::string::npos);
    BOOST_REQUIRE(rw0 != std::string::npos);
    BOOST_REQUIRE(rw1 != std::string::npos);
    BOOST_REQUIRE(ro0 != std::string::npos);
    BOOST_TEST(work < rw0);
    BOOST_TEST(rw0 < rw1);
    BOOST_TEST(rw1 < ro0);
    BOOST_TEST(count(a, "-v") == 4u);
    BOOST_TEST(!has_prefix_arg(a, "/h/rw:/mnt/rw0:rw,"));  // docker rejects "rw,bind"
}

// No value of the environment ever sits in argv, which every local user can read: the engine
// reads them from a 0600 file, and a value a line cannot hold from the client's environment.
BOOST_AUTO_TEST_CASE(container_argv_passes_the_environment_by_file_never_by_value)
{
    driver_options o;
    auto sd = make_setup("/d");
    sd.env_file = "/r/sandbox-x.run/env";
    sd.env_from_client = {"CERT"};
    auto sp = make_setup("/p");
    sp.env_file = "/r/sandbox-y.run/env";
    const auto d = detail::container_argv(sd, no_net, o, false, user_argv);
    const auto p = detail::container_argv(sp, no_net, o, true, user_argv);
    BOOST_TEST(has(d, {"--env-file", "/r/sandbox-x.run/env"}));
    BOOST_TEST(has(d, {"-e", "CERT"}));
    BOOST_TEST(has(p, {"--env-file", "/r/sandbox-y.run/env"}));
    for (const auto* a : {&d, &p})
        for (const auto& arg : *a)
            BOOST_TEST((arg.find("two words") == std::string::npos && arg != "A=1" && arg != "PATH=/bin"), arg);
    BOOST_TEST(!has(d, {"--unsetenv-all"}));
    const auto unset = find_seq(p, {"--unsetenv-all"});
    BOOST_REQUIRE(unset != std::string::npos);
    BOOST_TEST(unset < find_seq(p, {"--env-file", "/r/sandbox-y.run/env"}));
}

BOOST_AUTO_TEST_CASE(container_argv_ends_with_workdir_image_and_the_argv_verbatim)
{
    driver_options o;
    o.image = "sandbox-test/busybox:latest";
    const auto a = detail::container_argv(make_setup("/d"), no_net, o, false, user_argv);
    argv_t tail{"-w", "/work", "sandbox-test/busybox:latest"};
    tail.insert(tail.end(), user_argv.begin(), user_argv.end());
    BOOST_TEST_INFO(join(a));
    BOOST_TEST(ends_with(a, tail));
}

namespace {

std::string shell_quoted(const argv_t& a)
{
    std::string out;
    for (const auto& arg : a) {
        out += " '";
        for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
        out += "'";
    }
    return out;
}

// What the cid file holds when the cleanup runs: nothing there (the client never asked for
// a container), empty (docker's client asked and was killed before the answer), the id.
enum class cid { none, empty, written };

// Runs the cleanup command against a stand-in engine that logs its calls. The container
// exists from the engine's `appears_at`-th call on (0: never); `refusals` removals fail
// while it exists (nothing printed, as when one is already under way); a removal that
// works prints its name, as both engines do.
std::vector<std::string> cleanup_calls(bool podman, cid c, int appears_at, int refusals = 0, int wait_seconds = 20,
                                       const std::string& grace = {})
{
    temp_dir dir;
    const auto engine = dir.path / "engine";
    const auto log = dir.path / "calls";
    const auto gone = dir.path / "gone";
    {
        std::ofstream f(engine);
        f << "#!/bin/sh\nl='" << log.string() << "'\necho \"$*\" >> \"$l\"\n"
          << "k=$(wc -l < \"$l\"); r=$(grep -c '^rm' \"$l\")\n"
          << "there=0; [ " << appears_at << " -gt 0 ] && [ $k -ge " << appears_at << " ] && [ ! -e '"
          << gone.string() << "' ] && there=1\n"
          << "[ $there = 1 ] || exit 0\n"
          << "if [ \"$1\" = rm ]; then [ $r -gt " << refusals << " ] || exit 0; touch '" << gone.string()
          << "'; eval echo \\${$#}; fi\n"
          << "[ \"$1\" = ps ] && echo 0123abcd\nexit 0\n";
    }
    ::chmod(engine.c_str(), 0755);
    auto s = make_setup(engine.string());
    s.cid_file = (dir.path / "cid").string();
    if (c == cid::empty) std::ofstream{s.cid_file};
    if (c == cid::written) std::ofstream(s.cid_file) << "0123abcd\n";
    // It gives up (exit 1) only on a container asked for that never came.
    const int rc = std::system(shell_quoted(detail::container_cleanup_argv(s, podman, wait_seconds, grace)).c_str());
    BOOST_TEST(WEXITSTATUS(rc) == (c == cid::empty && appears_at == 0 ? 1 : 0));
    return split_lines(read_text(log));
}

}  // namespace

BOOST_AUTO_TEST_CASE(container_cleanup_kills_and_removes_by_name)
{
    const auto n = make_setup("/e").name;
    BOOST_TEST(cleanup_calls(false, cid::written, 1) == argv_t{"rm -f " + n}, boost::test_tools::per_element());
    BOOST_TEST(cleanup_calls(true, cid::written, 1) == argv_t{"rm -f -t 0 " + n}, boost::test_tools::per_element());
    // Already gone (its own --rm): one look, then done.
    const argv_t rm_then_look{"rm -f " + n, "ps -a -q --filter name=" + n};
    BOOST_TEST(cleanup_calls(false, cid::written, 0) == rm_then_look, boost::test_tools::per_element());
    // A removal the engine refused is tried again while the container is listed.
    const argv_t again{"rm -f " + n, "ps -a -q --filter name=" + n, "rm -f " + n};
    BOOST_TEST(cleanup_calls(false, cid::written, 1, 1) == again, boost::test_tools::per_element());
}

// docker's client is only ever SIGKILLed (on SIGTERM it deletes the empty cid file while the
// daemon goes on creating the container): the command's SIGTERM and grace come from here.
BOOST_AUTO_TEST_CASE(docker_cleanup_sends_the_command_sigterm_and_its_grace_first)
{
    const auto n = make_setup("/e").name;
    const auto start = std::chrono::steady_clock::now();
    BOOST_TEST(cleanup_calls(false, cid::written, 1, 0, 20, "0.300") == (argv_t{"kill --signal TERM " + n, "rm -f " + n}),
               boost::test_tools::per_element());
    BOOST_TEST((std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(300)));
    BOOST_TEST(detail::container_cleanup_argv(make_setup("/e"), true).back() == "0");  // podman: -t 0, no grace
}

BOOST_AUTO_TEST_CASE(container_cleanup_waits_for_a_container_still_being_created)
{
    // docker's client asked for the container and was killed before the answer: the engine
    // goes on and the container shows up later, however long that takes.
    const auto n = make_setup("/e").name;
    const std::string rm = "rm -f " + n, look = "ps -a -q --filter name=" + n;
    BOOST_TEST(cleanup_calls(false, cid::empty, 7) == (argv_t{rm, look, rm, look, rm, look, rm}),
               boost::test_tools::per_element());
    // Never created although asked for: it gives up at the bound.
    auto start = std::chrono::steady_clock::now();
    const auto never = cleanup_calls(false, cid::empty, 0, 0, 1);
    BOOST_TEST(never.size() >= 2u);
    BOOST_TEST((std::chrono::steady_clock::now() - start < std::chrono::seconds(5)));
    // The client never asked (no cid file), or podman's client, which creates the container
    // itself, is gone without one: one look, no wait.
    start = std::chrono::steady_clock::now();
    BOOST_TEST(cleanup_calls(false, cid::none, 0) == (argv_t{rm, look}), boost::test_tools::per_element());
    BOOST_TEST(cleanup_calls(true, cid::none, 0) == (argv_t{"rm -f -t 0 " + n, look}), boost::test_tools::per_element());
    BOOST_TEST((std::chrono::steady_clock::now() - start < std::chrono::seconds(5)));
}

BOOST_AUTO_TEST_CASE(containers_carry_their_machine_owner_and_deadline)
{
    auto s = make_setup("/e");
    s.deadline = 1700000000;
    const auto a = detail::container_argv(s, no_net, driver_options{}, false, user_argv);
    BOOST_TEST(has(a, {"--label", "sandbox.machine=" + detail::machine_label()}));
    BOOST_TEST(has(a, {"--label", "sandbox.owner=" + detail::owner_label()}));
    BOOST_TEST(has(a, {"--label", "sandbox.deadline=1700000000"}));
    BOOST_TEST(detail::owner_alive(detail::owner_label()));
    BOOST_TEST(!detail::owner_alive(std::to_string(::getpid()) + ".1"));  // a reused pid
    BOOST_TEST(!detail::owner_alive("2147483646.5"));
}

BOOST_AUTO_TEST_CASE(orphans_are_read_from_either_engines_listing)
{
    const auto& m = detail::machine_label();
    const auto docker = detail::parse_ps_line("sandbox-aa sandbox.deadline=1700000100,sandbox.machine=" + m +
                                              ",sandbox.owner=12.345,other=x");
    BOOST_TEST(docker.name == "sandbox-aa");
    BOOST_TEST(docker.deadline == 1700000100);
    BOOST_TEST(docker.owner == "12.345");
    BOOST_TEST(docker.machine == m);
    const auto podman = detail::parse_ps_line("sandbox-bb map[sandbox.deadline:0 sandbox.machine:" + m +
                                              " sandbox.owner:7.89]");
    BOOST_TEST(podman.name == "sandbox-bb");
    BOOST_TEST(podman.deadline == 0);
    BOOST_TEST(podman.owner == "7.89");
    BOOST_TEST(podman.machine == m);
    // Overdue, or its starter is gone: removed. Another machine's: never.
    BOOST_TEST(detail::is_orphan(docker, 1700000101, true));
    BOOST_TEST(!detail::is_orphan(docker, 1700000099, true));
    BOOST_TEST(detail::is_orphan(docker, 1700000099, false));
    BOOST_TEST(!detail::is_orphan(podman, 1900000000, true));  // no deadline, starter alive
    BOOST_TEST(detail::is_orphan(podman, 1900000000, false));
    auto elsewhere = docker;
    elsewhere.machine = "another-machine";
    BOOST_TEST(!detail::is_orphan(elsewhere, 1900000000, false));
    BOOST_TEST(detail::parse_ps_line("").name.empty());
    BOOST_TEST(detail::parse_ps_line("lonely").name.empty());
}

BOOST_AUTO_TEST_CASE(podman_containers_in_storage_only_are_ours_by_name_and_dead_once_old)
{
    const std::string ours = "sandbox-0123456789abcdef01234567";
    BOOST_TEST(detail::is_storage_leftover(ours + " Storage 1000", 1120, 120s));
    BOOST_TEST(!detail::is_storage_leftover(ours + " Storage 1000", 1119, 120s));  // may be under creation
    BOOST_TEST(!detail::is_storage_leftover(ours + " Created 1000", 9999, 120s));  // in the database: labelled
    for (const std::string& other : std::vector<std::string>{"sandbox-0123 Storage 1000", "build-working-container Storage 1000",
                                    "sandbox-0123456789abcdef0123456X Storage 1000", "sandbox-0123456789abcdef01234567",
                                    ours + " Storage", ours + " Storage x", ""})
        BOOST_TEST(!detail::is_storage_leftover(other, 9999, 120s), other);
}

// A runner in another pid namespace (a container, a CI job) or under hidepid is not in this
// process's /proc: its containers are judged by the record it holds, not by its pid.
BOOST_AUTO_TEST_CASE(a_container_is_judged_by_its_runs_record_not_by_a_pid)
{
    scratch_dir dir;
    const auto id = detail::directory_id(dir.path.string());
    BOOST_TEST(!id.empty());
    const auto held = detail::run_record::create(detail::random_sandbox_name(), {}, "docker");
    const auto held_id = detail::directory_id(held.dir().parent_path().string());
    BOOST_TEST(detail::record_held(held.dir().string(), held_id));  // its run holds the lock
    const auto free_record = dir.sub("sandbox-free.run", 0700);
    BOOST_TEST(!detail::record_held(free_record.string(), id));  // nobody holds it: a dead run
    BOOST_TEST(!detail::record_held((dir.path / "sandbox-gone.run").string(), id));  // removed with its run
    // Another directory at that path (another mount namespace's /tmp): not ours to judge.
    BOOST_TEST(detail::record_held(free_record.string(), "1:1"));
    BOOST_TEST(detail::record_held(free_record.string(), ""));

    const auto& m = detail::machine_label();
    // A pid this process cannot see, as from another pid namespace: alive by its record.
    auto c = detail::parse_ps_line("sandbox-cc sandbox.deadline=0,sandbox.machine=" + m +
                                   ",sandbox.owner=2147483646.5,sandbox.record=" + held.dir().string() +
                                   ",sandbox.records=" + held_id);
    BOOST_TEST(c.record == held.dir().string());
    BOOST_TEST(c.record_dir == held_id);
    BOOST_TEST(detail::starter_alive(c));
    BOOST_TEST(!detail::is_orphan(c, 1900000000, detail::starter_alive(c)));
    c.record = free_record.string();
    c.record_dir = id;
    BOOST_TEST(detail::is_orphan(c, 1900000000, detail::starter_alive(c)));
    // An older container with no record: by its owner's pid, as before.
    c.record.clear();
    BOOST_TEST(!detail::starter_alive(c));
    c.owner = detail::owner_label();
    BOOST_TEST(detail::starter_alive(c));

    // A Slurm job carries the same in its comment; a path may hold spaces.
    const auto comment = detail::run_comment(held.dir().string());
    const auto run = detail::parse_run_comment(comment);
    BOOST_TEST_REQUIRE(run.has_value(), comment);
    BOOST_TEST(run->machine == m);
    BOOST_TEST(run->record_dir == held_id);
    BOOST_TEST(run->record == held.dir().string());
    const auto spaced = detail::parse_run_comment("sandbox.run m 1:2 /tmp/a b/sandbox-x.run");
    BOOST_TEST_REQUIRE(spaced.has_value());
    BOOST_TEST(spaced->record == "/tmp/a b/sandbox-x.run");
    for (const char* bad : {"", "sandbox.run", "sandbox.run m", "sandbox.run m 1:2", "sandbox.run m 1:2 ", "other m 1:2 /x"})
        BOOST_TEST(!detail::parse_run_comment(bad).has_value(), bad);

    auto s = make_setup("/e");
    s.record = held.dir().string();
    const auto a = detail::container_argv(s, no_net, driver_options{}, false, user_argv);
    BOOST_TEST(has(a, {"--label", "sandbox.record=" + held.dir().string()}));
    BOOST_TEST(has(a, {"--label", "sandbox.records=" + held_id}));
}

// ------------------------------------------------------------------ bubblewrap

// bwrap is the program the spawn executes: what used to run in front of it (a shell joining
// the cgroups, setpriv, prlimit, a mount prelude) is the spawn's confinement now.
BOOST_AUTO_TEST_CASE(bubblewrap_is_the_program_started_and_its_confinement_is_empty_by_default)
{
    const auto s = make_setup("/usr/bin/bwrap");
    const auto a = detail::bubblewrap_argv(s, no_net, user_argv);
    BOOST_TEST_INFO(join(a));
    BOOST_TEST(a.front() == "/usr/bin/bwrap");
    BOOST_TEST(detail::bubblewrap_confinement(s).empty());
}

BOOST_AUTO_TEST_CASE(bubblewrap_drops_to_the_uid_joins_the_cgroups_and_limits_in_its_confinement)
{
    auto s = make_setup("/usr/bin/bwrap");
    s.drop_to_uid = true;
    s.uid = 1234;
    s.gid = 5678;
    s.cgroup_procs = {"/cg/memory/x/cgroup.procs", "/cg/pids/x/cgroup.procs"};
    s.rlimit_as = 1 << 20;
    const auto c = detail::bubblewrap_confinement(s);
    BOOST_TEST((c.user && c.user->first == 1234u && c.user->second == 5678u));
    BOOST_TEST(!c.setuid_program);
    BOOST_TEST(c.cgroup_procs == s.cgroup_procs);
    BOOST_TEST(c.rlimit_as == 1u << 20);
    BOOST_TEST(!c.private_mounts);  // nothing to bind
    BOOST_TEST(detail::bubblewrap_argv(s, no_net, user_argv).front() == "/usr/bin/bwrap");
}

BOOST_AUTO_TEST_CASE(bubblewrap_unshares_everything_and_drops_capabilities)
{
    const auto a = detail::bubblewrap_argv(make_setup("/usr/bin/bwrap"), no_net, user_argv);
    BOOST_TEST_INFO(join(a));
    for (const argv_t& flag : std::vector<argv_t>{{"--unshare-all"},
                                                  {"--unshare-user"},
                                                  {"--disable-userns"},
                                                  {"--die-with-parent"},
                                                  {"--new-session"},
                                                  {"--cap-drop", "ALL"},
                                                  {"--proc", "/proc"},
                                                  {"--ro-bind", "/proc/sys", "/proc/sys"},
                                                  {"--dev", "/dev"},
                                                  {"--tmpfs", "/tmp"},
                                                  {"--ro-bind", "/usr", "/usr"},
                                                  {"--remount-ro", "/"}})
        BOOST_TEST(has(a, flag), join(flag));
    BOOST_TEST(!has(a, {"--share-net"}));
    // Not the whole host root.
    BOOST_TEST(!has(a, {"--bind", "/", "/"}));
    BOOST_TEST(!has(a, {"--ro-bind", "/", "/"}));
    BOOST_TEST(!has(a, {"--dev-bind", "/", "/"}));
    BOOST_TEST(!has(a, {"--ro-bind", "/etc", "/etc"}));
    BOOST_TEST(!has(a, {"--ro-bind-try", "/etc/shadow", "/etc/shadow"}));
    // Resolver files only with the network.
    BOOST_TEST(!has(a, {"--ro-bind-try", "/etc/resolv.conf", "/etc/resolv.conf"}));
}

BOOST_AUTO_TEST_CASE(bubblewrap_shares_the_network_only_when_enabled)
{
    const auto a = detail::bubblewrap_argv(make_setup("/usr/bin/bwrap"), with_net, user_argv);
    BOOST_TEST(has(a, {"--unshare-all"}));
    BOOST_TEST(has(a, {"--share-net"}));
    BOOST_TEST(find_seq(a, {"--unshare-all"}) < find_seq(a, {"--share-net"}));
    BOOST_TEST(has(a, {"--ro-bind-try", "/etc/resolv.conf", "/etc/resolv.conf"}));
}

// bwrap hands the command its own environment: no value sits in its argv.
BOOST_AUTO_TEST_CASE(bubblewrap_puts_no_environment_value_in_its_argv)
{
    const auto a = detail::bubblewrap_argv(make_setup("/usr/bin/bwrap"), no_net, user_argv);
    BOOST_TEST(!has(a, {"--setenv"}));
    BOOST_TEST(!has(a, {"--clearenv"}));
    for (const auto& arg : a) BOOST_TEST(arg.find("two words") == std::string::npos, arg);
}

BOOST_AUTO_TEST_CASE(bubblewrap_binds_work_dir_then_mounts_then_chdirs_and_runs_the_argv)
{
    const auto a = detail::bubblewrap_argv(make_setup("/usr/bin/bwrap"), no_net, user_argv);
    BOOST_TEST_INFO(join(a));
    const auto work = find_seq(a, {"--bind", std::string("/base/") + name, "/work"});
    const auto rw0 = find_seq(a, {"--bind", "/h/rw", "/mnt/rw0"});
    const auto rw1 = find_seq(a, {"--bind", "/h/rw2", "/mnt/rw1"});
    const auto ro0 = find_seq(a, {"--ro-bind", "/h/ro", "/mnt/ro0"});
    const auto remount = find_seq(a, {"--remount-ro", "/"});
    BOOST_REQUIRE(work != std::string::npos);
    BOOST_TEST(work < rw0);
    BOOST_TEST(rw0 < rw1);
    BOOST_TEST(rw1 < ro0);
    BOOST_TEST(ro0 != std::string::npos);
    BOOST_TEST(ro0 < remount);
    BOOST_TEST(!has(a, {"--bind", "/h/ro", "/mnt/ro0"}));
    argv_t tail{"--chdir", "/work", "--"};
    tail.insert(tail.end(), user_argv.begin(), user_argv.end());
    BOOST_TEST(ends_with(a, tail));
}

// ------------------------------------------------------------------ firejail

BOOST_AUTO_TEST_CASE(firejail_argv_confines_and_makes_the_work_dir_the_private_home)
{
    const auto s = firejail_setup();
    const auto a = detail::firejail_argv(s, no_net, user_argv);
    BOOST_TEST_INFO(join(a));
    BOOST_TEST((find_seq(a, {"/usr/bin/firejail", "--quiet", "--noprofile"}) == 0u));
    for (const std::string& flag : argv_t{"--net=none", "--private=/base/" + std::string(name), "--private-cwd",
                                   "--private-dev", "--private-tmp", "--caps.drop=all", "--nonewprivs", "--seccomp",
                                   "--read-only=/", "--deterministic-exit-code"})
        BOOST_TEST(has(a, {flag}), flag);
    argv_t tail{"--"};
    tail.insert(tail.end(), user_argv.begin(), user_argv.end());
    BOOST_TEST(ends_with(a, tail));
    BOOST_TEST(!has_prefix_arg(a, "--rlimit-as"));
    BOOST_TEST(!has_prefix_arg(a, "--profile"));
}

BOOST_AUTO_TEST_CASE(firejail_network_flag_follows_the_policy)
{
    const auto a = detail::firejail_argv(firejail_setup(), with_net, user_argv);
    BOOST_TEST(!has_prefix_arg(a, "--net="));
    BOOST_TEST(has(detail::firejail_argv(firejail_setup(), no_net, user_argv), {"--net=none"}));
}

BOOST_AUTO_TEST_CASE(firejail_paths_keep_host_paths_and_tmp_ones_are_whitelisted)
{
    auto s = firejail_setup();
    s.host_writable_mounts = {"/run/netns", "/var/lib/docker"};
    const auto a = detail::firejail_argv(s, no_net, user_argv);
    BOOST_TEST_INFO(join(a));
    const auto rw = find_seq(a, {"--read-write=/tmp/w"});
    BOOST_REQUIRE(rw != std::string::npos);
    BOOST_TEST(has(a, {"--whitelist=/tmp/w"}));
    BOOST_TEST(has(a, {"--read-write=/tmpfoo/x"}));
    BOOST_TEST(!has(a, {"--whitelist=/tmpfoo/x"}));  // not under /tmp/
    BOOST_TEST(has(a, {"--read-only=/srv/r"}));
    BOOST_TEST(!has(a, {"--read-write=/srv/r"}));
    BOOST_TEST(!has(a, {"--whitelist=/srv/r"}));
    BOOST_TEST(has(a, {"--read-only=/tmp/r"}));
    BOOST_TEST(has(a, {"--whitelist=/tmp/r"}));
    BOOST_TEST(!has_prefix_arg(a, "--bind"));
    // Writable paths are opened after the host was made read-only, so they win.
    BOOST_TEST(find_seq(a, {"--read-only=/"}) < rw);
    for (const auto& m : s.host_writable_mounts) BOOST_TEST(find_seq(a, {"--read-only=" + m}) < rw, m);
}

BOOST_AUTO_TEST_CASE(firejail_under_a_root_caller_starts_unprivileged_with_writable_paths_bound_first)
{
    auto s = firejail_setup();
    s.drop_to_uid = true;
    s.uid = 999;
    s.gid = 995;
    s.hidden_base_dir = "/srv/base";
    const auto a = detail::firejail_argv(s, no_net, user_argv);
    BOOST_TEST_INFO(join(a));
    BOOST_TEST(a.at(0) == s.binary);
    const auto c = detail::firejail_confinement(s);
    BOOST_TEST((c.user && c.user->first == 999u && c.user->second == 995u));
    BOOST_TEST(c.setuid_program);  // firejail needs its capabilities
    BOOST_TEST(c.private_mounts);
    BOOST_REQUIRE(c.mounts.size() == 2u);
    BOOST_TEST((c.mounts[0].what == detail::mount_step::kind::bind && c.mounts[0].source == "/tmp/w" &&
                c.mounts[0].target == "/tmp/w"));
    BOOST_TEST((c.mounts[1].source == "/tmpfoo/x" && c.mounts[1].target == "/tmpfoo/x"));
    // Bound first (an idmapped mount shows the account as the owner, so firejail accepts
    // it), then opened again after --read-only=/, which remounts every submount read-only.
    BOOST_TEST(find_seq(a, {"--read-write=/tmp/w"}) > find_seq(a, {"--read-only=/"}));
    BOOST_TEST(has(a, {"--read-write=/tmpfoo/x"}));
    BOOST_TEST(has(a, {"--read-only=/srv/r"}));
    BOOST_TEST(has(a, {"--whitelist=/tmp/w"}));
    BOOST_TEST(has(a, {"--blacklist=/srv/base"}));
    BOOST_TEST(has(a, {"--protocol=inet,inet6,netlink"}));
    BOOST_TEST(has(a, {"--restrict-namespaces"}));
}

BOOST_AUTO_TEST_CASE(firejail_under_a_root_caller_starts_in_a_private_mount_namespace_even_without_binds)
{
    // Mounts made on the host while firejail sets up (a container starting) must not reach
    // the jail: firejail checks its remounts against the last line of mountinfo.
    auto s = firejail_setup();
    s.mounts.clear();
    s.drop_to_uid = true;
    const auto c = detail::firejail_confinement(s);
    BOOST_TEST(c.private_mounts);
    BOOST_TEST(c.mounts.empty());
    s.drop_to_uid = false;  // an unprivileged caller cannot make one; firejail is set-uid
    BOOST_TEST(!detail::firejail_confinement(s).private_mounts);
    BOOST_TEST(!detail::firejail_confinement(s).user);
}

BOOST_AUTO_TEST_CASE(firejail_binds_an_idmapped_writable_path_and_filters_the_command_in_the_jail)
{
    auto s = firejail_setup();
    s.drop_to_uid = true;
    s.idmapped_binds = {{"/tmp/r.run/rw0", "/tmp/w"}};
    s.seccomp_exec = "/tmp/b/sandbox-seccomp-exec";
    BOOST_TEST_REQUIRE(detail::parse_rules("io_uring,setid_files", s.syscall_rules));
    const auto a = detail::firejail_argv(s, no_net, user_argv);
    BOOST_TEST_INFO(join(a));
    const auto c = detail::firejail_confinement(s);
    BOOST_REQUIRE(c.mounts.size() == 2u);
    BOOST_TEST((c.mounts[0].source == "/tmp/r.run/rw0" && c.mounts[0].target == "/tmp/w"));
    BOOST_TEST((c.mounts[1].source == "/tmpfoo/x" && c.mounts[1].target == "/tmpfoo/x"));
    BOOST_TEST(has(a, {"--whitelist=/tmp/b/sandbox-seccomp-exec"}));  // --private-tmp would hide it
    // The filter is loaded in the jail, right before the command: firejail itself makes
    // set-id directories of its own.
    BOOST_TEST(find_seq(a, {"--", "/tmp/b/sandbox-seccomp-exec", "--refuse", "io_uring,setid_files", "--"}) ==
               a.size() - user_argv.size() - 5);
}

BOOST_AUTO_TEST_CASE(firejail_hides_a_base_dir_outside_tmp_unless_that_hides_a_mount)
{
    BOOST_TEST(detail::base_to_hide("/srv/base", {}) == "/srv/base");
    BOOST_TEST(detail::base_to_hide("/srv/base/", {}) == "/srv/base");
    BOOST_TEST(detail::base_to_hide("/tmp", {}).empty());
    BOOST_TEST(detail::base_to_hide("/tmp/sandboxes", {}).empty());
    BOOST_TEST(detail::base_to_hide("/", {}).empty());
    BOOST_TEST(detail::base_to_hide("/srv/base", {mount{"/srv/base/data", "/srv/base/data", "ro"}}).empty());
    BOOST_TEST(detail::base_to_hide("/srv/base", {mount{"/srv/basement", "/srv/basement", "ro"}}) == "/srv/base");
}

BOOST_AUTO_TEST_CASE(podmans_profile_loses_user_namespaces_and_keeps_the_rest)
{
    const std::string in = R"({"defaultAction":"SCMP_ACT_ERRNO","syscalls":[
        {"names":["read","clone","clone3","unshare","setns","write"],"action":"SCMP_ACT_ALLOW"},
        {"names":["setns"],"action":"SCMP_ACT_ALLOW","includes":{"caps":["CAP_SYS_ADMIN"]}},
        {"names":["kill"],"action":"SCMP_ACT_ERRNO","errnoRet":1}]})";
    const auto out = boost::json::parse(detail::without_user_namespaces(in)).as_object();
    const auto& calls = out.at("syscalls").as_array();
    BOOST_TEST(out.at("defaultAction").as_string() == "SCMP_ACT_ERRNO");
    BOOST_TEST(boost::json::serialize(calls.at(0).at("names")) == R"(["read","write"])");
    BOOST_TEST(boost::json::serialize(calls.at(1).at("names")) == R"(["setns"])");  // needs a capability none has
    BOOST_TEST(boost::json::serialize(calls.at(2)) == boost::json::serialize(boost::json::parse(
                   R"({"names":["kill"],"action":"SCMP_ACT_ERRNO","errnoRet":1})")));
    BOOST_REQUIRE(calls.size() == 6u);
    BOOST_TEST(calls.at(3).at("names").at(0).as_string() == "clone");
    BOOST_TEST(calls.at(3).at("args").at(0).at("op").as_string() == "SCMP_CMP_MASKED_EQ");
    BOOST_TEST(calls.at(3).at("args").at(0).at("value").to_number<std::uint64_t>() == 0x7E020000u);
    BOOST_TEST(calls.at(4).at("names").at(0).as_string() == "clone3");
    BOOST_TEST(calls.at(4).at("errnoRet").to_number<int>() == 38);
    BOOST_TEST(boost::json::serialize(calls.at(5).at("names")) == R"(["unshare","setns"])");
    BOOST_CHECK_THROW(detail::without_user_namespaces("{\"syscalls\": 3}"), std::exception);
    BOOST_CHECK_THROW(detail::without_user_namespaces("not json"), std::exception);
}

BOOST_AUTO_TEST_CASE(the_setid_profile_allows_file_calls_only_without_set_id_bits)
{
    const std::string in = R"({"defaultAction":"SCMP_ACT_ERRNO","syscalls":[
        {"names":["read","chmod","openat","openat2","write"],"action":"SCMP_ACT_ALLOW"}]})";
    const auto out = boost::json::parse(detail::without_setid_files(in)).as_object();
    const auto& calls = out.at("syscalls").as_array();
    BOOST_TEST(boost::json::serialize(calls.at(0).at("names")) == R"(["read","write"])");
    // For each call: what is allowed and what is refused, one comparison per argument.
    auto rules_for = [&](std::string_view name) {
        std::vector<boost::json::object> out;
        for (const auto& c : calls)
            if (c.at("names").at(0).as_string() == name) out.push_back(c.as_object());
        return out;
    };
    const auto chmod = rules_for("chmod");
    BOOST_REQUIRE(chmod.size() == 3u);
    BOOST_TEST(chmod.at(0).at("action").as_string() == "SCMP_ACT_ALLOW");
    BOOST_TEST(chmod.at(0).at("args").at(0).at("index").to_number<int>() == 1);
    BOOST_TEST(chmod.at(0).at("args").at(0).at("value").to_number<unsigned>() == 06000u);
    BOOST_TEST(chmod.at(0).at("args").at(0).at("valueTwo").to_number<unsigned>() == 0u);
    for (std::size_t i = 1; i < 3; ++i) {
        BOOST_TEST(chmod.at(i).at("action").as_string() == "SCMP_ACT_ERRNO");
        BOOST_TEST(chmod.at(i).at("errnoRet").to_number<int>() == 1);
    }
    // openat: mode in argument 3, flags in 2; refused only when creating with a set-id bit.
    const auto openat = rules_for("openat");
    BOOST_REQUIRE(openat.size() == 7u);
    int refused = 0;
    for (const auto& r : openat) {
        std::set<std::int64_t> indexes;
        for (const auto& a : r.at("args").as_array()) indexes.insert(a.at("index").to_number<std::int64_t>());
        BOOST_TEST(r.at("args").as_array().size() == indexes.size());
        if (r.at("action").as_string() == "SCMP_ACT_ERRNO") {
            ++refused;
            BOOST_TEST((indexes == std::set<std::int64_t>{2, 3}));
        }
    }
    BOOST_TEST(refused == 4);
    BOOST_TEST(rules_for("openat2").at(0).at("errnoRet").to_number<int>() == 38);
    BOOST_CHECK_THROW(detail::without_setid_files("not json"), std::exception);
}

BOOST_AUTO_TEST_CASE(podman_runs_with_the_derived_profile)
{
    auto s = make_setup("/usr/bin/podman");
    s.seccomp_profile = "/tmp/p.json";
    driver_options o;
    BOOST_TEST(has(detail::container_argv(s, no_net, o, true, user_argv), {"--security-opt", "seccomp=/tmp/p.json"}));
    BOOST_TEST(!has_prefix_arg(detail::container_argv(make_setup("/d"), no_net, o, false, user_argv), "seccomp="));
}

BOOST_AUTO_TEST_CASE(read_only_paths_stay_read_only_below_their_submounts)
{
    const std::vector<detail::host_mount> host{
        {"/", true}, {"/srv/data", true}, {"/srv/data/cache", true}, {"/srv/data-other", true}, {"/srv/out/mnt", true}};
    const std::vector<mount> asked{{"/srv/out", "/mnt/rw0", "rw"}, {"/srv/data", "/mnt/ro0", "ro"}};
    const auto got = detail::with_read_only_submounts(asked, host);
    BOOST_REQUIRE(got.size() == 3u);
    BOOST_TEST(got[2].host == "/srv/data/cache");
    BOOST_TEST(got[2].container == "/mnt/ro0/cache");
    BOOST_TEST(got[2].read_only());
    // A writable path below a read-only one, asked for, stays writable.
    const std::vector<mount> both{{"/srv/data", "/mnt/ro0", "ro"}, {"/srv/data/cache", "/mnt/rw0", "rw"}};
    BOOST_TEST(detail::with_read_only_submounts(both, host).size() == 2u);
    // The whole host read-only: every mount point below it too.
    const auto root = detail::with_read_only_submounts({{"/", "/host", "ro"}}, host);
    BOOST_TEST(root.size() == 5u);
    BOOST_TEST(root.back().container == "/host/srv/out/mnt");
}

BOOST_AUTO_TEST_CASE(firejail_is_given_plain_paths_only)
{
    BOOST_TEST(detail::firejail_path_problem("/tmp/sandbox-0a1b/work_dir-1.2+x@y=z%").empty());
    for (const char* bad : {"/tmp/d*", "/tmp/a?", "/tmp/[ab]", "/tmp/{a,b}", "/tmp/${HOME}", "/tmp/a b", "/tmp/a,b",
                            "/tmp/a\"b", "/tmp/a'b", "/tmp/a\\b", "/tmp/a\nb", "/tmp/~x"})
        BOOST_TEST(!detail::firejail_path_problem(bad).empty(), bad);
    BOOST_TEST(detail::firejail_path_problem("/tmp/d*").find("'*'") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(firejail_refuses_paths_its_jail_would_hide)
{
    for (const char* seen : {"/tmp/x", "/srv/data", "/var/lib/x", "/var/tmpx", "/devices", "/run/user/1000/x", "/opt"})
        BOOST_TEST(detail::firejail_hidden_place(seen, "/var/lib/sandbox-run").empty(), seen);
    for (const char* hidden : {"/var/tmp/x", "/var/tmp", "/dev/shm/y", "/run/lock/z", "/home/alice/p", "/root/x",
                               "/var/lib/sandbox-run/data", "/var/tmp/../tmp/x"})
        BOOST_TEST(!detail::firejail_hidden_place(hidden, "/var/lib/sandbox-run").empty(), hidden);
    BOOST_TEST(detail::firejail_hidden_place("/dev/shm/y", "").find("/dev") != std::string::npos);
    BOOST_TEST(detail::firejail_hidden_place("/srv/h/x", "/srv/h").find("home directory") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(firejail_joins_the_cgroups_before_it_starts_and_limits_memory_in_the_jail)
{
    auto s = firejail_setup();
    s.cgroup_procs = {"/cg/pids/x/cgroup.procs"};
    BOOST_TEST(detail::firejail_confinement(s).cgroup_procs == s.cgroup_procs);
    s.cgroup_procs.clear();
    s.rlimit_as = 64u << 20;
    const auto a = detail::firejail_argv(s, no_net, user_argv);
    BOOST_TEST(a.front() == "/usr/bin/firejail");
    BOOST_TEST(has(a, {"--rlimit-as=67108864"}));
    BOOST_TEST(find_seq(a, {"--rlimit-as=67108864"}) < find_seq(a, {"--"}));
    BOOST_TEST(detail::firejail_confinement(s).rlimit_as == 0u);  // in the jail, not on firejail
}

// ------------------------------------------------------------------ shared pieces

BOOST_AUTO_TEST_CASE(mounts_for_numbers_writable_then_readable_and_skips_unusable_paths)
{
    scratch_dir dir;
    const auto a = dir.sub("a"), b = dir.sub("b"), c = dir.sub("c"), colon = dir.sub("has:colon");
    std::filesystem::create_directory_symlink(c, dir.path / "link-to-c");
    std::filesystem::create_directory_symlink(dir.path, dir.path / "link-to-dir");
    // Links (the path's own or on the way) and `..` are skipped; "a/" and "./b" are plain.
    const auto policy = execution_policy::defaults()
                            .with_writable_paths({dir.path / "missing", a.string() + "/", colon, dir.path / "link-to-dir" / "a",
                                                  dir.path / "c" / ".." / "a", dir.path / "." / "b"})
                            .with_readable_paths({colon, dir.path / "link-to-c", dir.path / "missing2", c});
    const auto ra = std::filesystem::canonical(a).string(), rb = std::filesystem::canonical(b).string(),
               rc = std::filesystem::canonical(c).string();
    for (driver d : {driver::docker, driver::podman, driver::bubblewrap}) {
        const auto m = mounts_for(policy, d);
        BOOST_TEST_INFO(to_string(d));
        BOOST_TEST((m == std::vector<mount>{{ra, "/mnt/rw0", "rw"}, {rb, "/mnt/rw1", "rw"}, {rc, "/mnt/ro0", "ro"}}));
    }
    for (driver d : {driver::firejail, driver::host}) {
        const auto m = mounts_for(policy, d);
        BOOST_TEST_INFO(to_string(d));
        BOOST_TEST((m == std::vector<mount>{{ra, ra, "rw"}, {rb, rb, "rw"}, {rc, rc, "ro"}}));
    }
}

BOOST_AUTO_TEST_CASE(sandbox_names_are_unique_and_well_formed)
{
    std::set<std::string> seen;
    for (int i = 0; i < 1000; ++i) {
        auto n = detail::random_sandbox_name();
        BOOST_TEST(is_sandbox_name(n), n);
        seen.insert(std::move(n));
    }
    BOOST_TEST(seen.size() == 1000u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(disk_plans)

BOOST_AUTO_TEST_CASE(bubblewrap_bounds_tmp_and_makes_work_a_tmpfs_when_asked)
{
    auto s = make_setup("/usr/bin/bwrap");
    s.disk_bytes = 16u << 20;
    auto a = detail::bubblewrap_argv(s, no_net, user_argv);
    BOOST_TEST(has(a, {"--size", std::to_string(16u << 20), "--tmpfs", "/tmp"}));
    BOOST_TEST(has(a, {"--bind", s.work_dir.string(), "/work"}));
    s.work_tmpfs = true;
    a = detail::bubblewrap_argv(s, no_net, user_argv);
    BOOST_TEST(has(a, {"--size", std::to_string(16u << 20), "--perms", "0700", "--tmpfs", "/work"}));
    BOOST_TEST(!has(a, {"--bind", s.work_dir.string(), "/work"}));
}

BOOST_AUTO_TEST_CASE(bubblewrap_takes_the_work_dir_from_its_alias_over_a_private_base_dir)
{
    auto s = make_setup("/usr/bin/bwrap");
    s.drop_to_uid = true;
    s.work_alias = "/base";
    const auto a = detail::bubblewrap_argv(s, no_net, user_argv);
    BOOST_TEST(a.at(0) == "/usr/bin/bwrap");
    BOOST_TEST(has(a, {"--bind", "/base", "/work"}));
    const auto c = detail::bubblewrap_confinement(s);
    BOOST_TEST(c.private_mounts);
    BOOST_REQUIRE(c.mounts.size() == 1u);
    BOOST_TEST((c.mounts[0].source == s.work_dir.string() && c.mounts[0].target == "/base"));
}

BOOST_AUTO_TEST_CASE(bubblewrap_binds_idmapped_writable_paths_first_and_loads_the_seccomp_program)
{
    auto s = make_setup("/usr/bin/bwrap");
    s.drop_to_uid = true;
    s.idmapped_binds = {{"/tmp/r.run/rw0", "/data/a"}, {"/tmp/r.run/rw1", "/data/b"}};
    s.pass_fds = {17};
    const auto a = detail::bubblewrap_argv(s, no_net, user_argv);
    BOOST_TEST(a.at(0) == "/usr/bin/bwrap");
    // Both binds before bwrap starts unprivileged; the program is the launch's descriptor 3.
    const auto c = detail::bubblewrap_confinement(s);
    BOOST_TEST(c.private_mounts);
    BOOST_REQUIRE(c.mounts.size() == 2u);
    BOOST_TEST((c.mounts[0].source == "/tmp/r.run/rw0" && c.mounts[0].target == "/data/a"));
    BOOST_TEST((c.mounts[1].source == "/tmp/r.run/rw1" && c.mounts[1].target == "/data/b"));
    BOOST_TEST(has(a, {"--seccomp", "3"}));
    s.idmapped_binds.clear();
    BOOST_TEST(!detail::bubblewrap_confinement(s).private_mounts);
    BOOST_TEST(has(detail::bubblewrap_argv(s, no_net, user_argv), {"--seccomp", "3"}));
    s.pass_fds.clear();
    BOOST_TEST(!has(detail::bubblewrap_argv(s, no_net, user_argv), {"--seccomp"}));
}

// Each path held open since its check (its pin) is bound from that descriptor, which bwrap
// gets after the seccomp program; the prelude's binds onto a pinned path carry its identity.
BOOST_AUTO_TEST_CASE(bubblewrap_binds_pinned_paths_from_their_descriptors)
{
    auto s = make_setup("/usr/bin/bwrap");
    s.pins = {{10, 1, 20}, {11, 1, 21}, {12, 1, 22}};
    s.pass_fds = {9, 10, 11, 12};  // the seccomp program (3), then the pins
    const auto a = detail::bubblewrap_argv(s, no_net, user_argv);
    BOOST_TEST_INFO(join(a));
    BOOST_TEST(has(a, {"--bind-fd", "4", "/mnt/rw0"}));
    BOOST_TEST(has(a, {"--bind-fd", "5", "/mnt/rw1"}));
    BOOST_TEST(has(a, {"--ro-bind-fd", "6", "/mnt/ro0"}));
    BOOST_TEST(!has(a, {"--bind", "/h/rw", "/mnt/rw0"}));
    s.drop_to_uid = true;
    s.idmapped_binds = {{"/tmp/r.run/rw0", "/h/rw2"}};
    const auto c = detail::bubblewrap_confinement(s);
    BOOST_REQUIRE(c.mounts.size() == 1u);
    BOOST_TEST((c.mounts[0].dev == 1u && c.mounts[0].ino == 21u));
    // Without pins (a path by name), the prelude binds by name too.
    s.pins.clear();
    BOOST_TEST(detail::bubblewrap_confinement(s).mounts.at(0).ino == 0u);
}

BOOST_AUTO_TEST_CASE(containers_size_tmp_by_the_disk_limit)
{
    auto s = make_setup("/usr/bin/docker");
    s.disk_bytes = 8u << 20;
    auto a = detail::container_argv(s, no_net, driver_options{}, false, user_argv);
    BOOST_TEST(has(a, {"--tmpfs", "/tmp:rw,nosuid,nodev,size=" + std::to_string(8u << 20)}));
    s.work_tmpfs = true;
    a = detail::container_argv(s, no_net, driver_options{}, false, user_argv);
    BOOST_TEST(has_prefix_arg(a, "/work:rw,nosuid,nodev,mode=0700,size=" + std::to_string(8u << 20)));
    BOOST_TEST(!has_prefix_arg(a, s.work_dir.string() + ":/work"));
}

BOOST_AUTO_TEST_CASE(firejail_under_root_replaces_private_tmp_by_a_bounded_one)
{
    auto s = firejail_setup();
    s.work_dir = std::string("/tmp/") + name;
    s.drop_to_uid = true;
    s.disk_bytes = 8u << 20;
    const auto a = detail::firejail_argv(s, no_net, user_argv);
    // The work dir and the two paths below /tmp are kept in place over the new /tmp.
    const auto c = detail::firejail_confinement(s);
    BOOST_REQUIRE(!c.mounts.empty());
    BOOST_TEST((c.mounts[0].what == detail::mount_step::kind::tmp));
    BOOST_TEST(c.mounts[0].size == 8u << 20);
    BOOST_TEST(c.mounts[0].keep == (std::vector<std::string>{s.work_dir.string(), "/tmp/w", "/tmp/r"}));
    BOOST_TEST(count(a, "--private-tmp") == 0u);
    BOOST_TEST(!has_prefix_arg(a, "--whitelist=/tmp/"));
    s.disk_bytes = 0;
    const auto plain = detail::firejail_argv(s, no_net, user_argv);
    BOOST_TEST(count(plain, "--private-tmp") == 1u);
}

BOOST_AUTO_TEST_SUITE_END()
