// SPDX-License-Identifier: BSL-1.0
// What each isolating driver enforces, observed from inside the sandbox: the private work
// dir, /tmp, a read-only root, the network, memory and process limits, capabilities and the
// user, and each driver's own layout (bubblewrap's minimal root, firejail's home).
#include "driver_fixture.hpp"

#include "drivers/plans.hpp"
#include "drivers/runner.hpp"

#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <pwd.h>
#include <sys/stat.h>

#include <fstream>
#include <set>

using namespace sandbox;
using namespace sandbox::test;
namespace data = boost::unit_test::data;

namespace {

void expect_clean(const driver_env& e) { BOOST_TEST(e.leftovers().empty(), "left in the base dir: " << join(e.leftovers())); }

// "key=value" lines of a probe script.
std::map<std::string, std::string> keyed(const std::string& out)
{
    std::map<std::string, std::string> m;
    for (const auto& line : split_lines(out)) {
        const auto eq = line.find('=');
        if (eq != std::string::npos) m[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return m;
}

std::set<std::string> words(const std::string& s)
{
    std::set<std::string> out;
    std::istringstream in(s);
    for (std::string w; in >> w;) out.insert(w);
    return out;
}

// firejail's jail home: the home of the user it runs as (the sandbox-run account under root).
std::string home_of_caller()
{
    const auto uid = detail::command_ids(driver::firejail, {}).first;
    if (const passwd* pw = ::getpwuid(uid)) return pw->pw_dir;
    return "/root";
}

// The directory the command sees as its work dir.
std::string inside_work_dir(driver d) { return d == driver::firejail ? home_of_caller() : "/work"; }

const std::set<std::string> interfaces_script_lo{"lo"};
const std::string interfaces_script = "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '";

}  // namespace

BOOST_AUTO_TEST_SUITE(confinement)

BOOST_DATA_TEST_CASE(the_work_dir_is_a_private_writable_cwd_removed_afterwards, data::make(isolating_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    const auto token = random_digits();
    // The command writes into its cwd, then waits until the host answers through the same dir.
    const std::string script =
        "echo probe-$1 > probe && echo ready; i=0; while [ ! -e go ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); "
        "done; echo cwd=$(pwd); echo files=$(ls -A | tr '\\n' ' '); [ -e go ] && echo saw-go";
    std::string name, probe, mode_text;
    std::vector<std::string> entries_during;
    struct stat st {};
    bool stat_ok = false;
    auto cb = [&](stream_kind k, std::string_view chunk) {
        if (k != stream_kind::out || chunk.find("ready") == std::string_view::npos || !name.empty()) return;
        entries_during = e.leftovers();
        name = e.current_work_dir_name();
        if (name.empty()) return;
        const auto dir = e.base.path / name;
        stat_ok = ::stat(dir.c_str(), &st) == 0;
        std::ifstream(dir / "probe") >> probe;
        std::ofstream(dir / "go") << "go\n";
    };
    const auto r = e.run({"sh", "-c", script, "sh", token}, std::nullopt, cb);
    BOOST_TEST_INFO(describe(r));
    BOOST_TEST(r.success());
    BOOST_TEST(entries_during.size() == 1u, join(entries_during));
    BOOST_TEST(is_sandbox_name(name), name);
    BOOST_TEST(probe == "probe-" + token);
    BOOST_TEST(stat_ok);
    BOOST_TEST((st.st_mode & 07777) == 0700u);
    BOOST_TEST(is_command_uid(d, st.st_uid), st.st_uid);  // the command's user
    auto out = keyed(r.out);
    // landlock: no mount namespace, the work dir keeps its host path.
    BOOST_TEST(out["cwd"] == (d == driver::landlock ? (e.base.path / name).string() : inside_work_dir(d)));
    // Only what the command and the host put there: not the caller's real home under firejail
    // (which copies its skeleton shell files into a --private home).
    auto files = words(out["files"]);
    if (d == driver::firejail)
        for (const char* skel : {".bashrc", ".inputrc", ".zshrc", ".cshrc"}) files.erase(skel);
    if (d == driver::landlock) BOOST_TEST(files.erase(".tmp") == 1u);  // its TMPDIR
    BOOST_TEST(files == (std::set<std::string>{"go", "probe"}));
    BOOST_TEST(r.out.find("saw-go") != std::string::npos);
    expect_clean(e);
}

BOOST_DATA_TEST_CASE(tmp_is_private_and_writable_and_the_root_is_read_only, data::make(isolating_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    const auto token = random_digits(8);
    const auto host_file = std::filesystem::temp_directory_path() / ("sandbox-host-visible-" + token);
    { std::ofstream(host_file) << "host\n"; }
    // landlock shares the host's /tmp, where the command can neither read nor write: its
    // own is TMPDIR, in its work dir.
    const std::string own_tmp = d == driver::landlock ? "$TMPDIR" : "/tmp";
    const std::string script =
        "cat /tmp/sandbox-host-visible-$1 2>/dev/null && echo HOST-TMP-VISIBLE; "
        "echo tmpdata > " + own_tmp + "/own-$1 && cat " + own_tmp + "/own-$1; "
        "for p in / /etc /usr /bin /sbin /lib" + std::string(d == driver::landlock ? " /tmp" : "") +
        "; do touch $p/sandbox-probe-$1 2>/dev/null && echo WRITABLE:$p; done; "
        "echo end";
    const auto r = e.sh(script, {token});
    std::filesystem::remove(host_file);
    BOOST_TEST_INFO(describe(r));
    BOOST_TEST(r.success());
    BOOST_TEST(r.out == "tmpdata\nend\n");
    BOOST_TEST(!std::filesystem::exists(std::filesystem::temp_directory_path() / ("own-" + token)));
    for (const char* p : {"/", "/etc", "/usr", "/bin", "/sbin", "/lib"})
        BOOST_TEST(!std::filesystem::exists(std::filesystem::path(p) / ("sandbox-probe-" + token)), p);
    expect_clean(e);
}

BOOST_DATA_TEST_CASE(only_loopback_unless_the_network_is_enabled, data::make(isolating_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    if (d == driver::landlock) {
        // No network namespace: the host's interfaces are there, but no socket can be made
        // (TCP bind and connect are refused by Landlock besides).
        const std::string script = "python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
                                   "print(\"INET\")' 2>&1 | tail -1; python3 -c 'import socket; "
                                   "socket.create_connection((\"127.0.0.1\", 1), 1)' 2>&1 | tail -1";
        const auto off = e.sh(script);
        BOOST_TEST_INFO(describe(off));
        BOOST_TEST(off.out.find("INET") == std::string::npos);
        BOOST_TEST(off.out.find("PermissionError") != std::string::npos);
        e.policy = e.policy.with_network(true);
        const auto on = e.sh(script);
        BOOST_TEST_INFO(describe(on));
        BOOST_TEST(on.out.find("INET") != std::string::npos);
        BOOST_TEST(on.out.find("ConnectionRefusedError") != std::string::npos);  // reached the host's port 1
        expect_clean(e);
        return;
    }
    const auto off = e.sh(interfaces_script);
    BOOST_TEST_INFO(describe(off));
    BOOST_TEST(off.success());
    BOOST_TEST(words(off.out) == interfaces_script_lo);

    e.policy = e.policy.with_network(true);
    const auto on = e.sh(interfaces_script);
    BOOST_TEST_INFO(describe(on));
    BOOST_TEST(on.success());
    if (d == driver::docker) {
        // dockerd runs with --bridge=none here: the enabled network has only lo too. The flag
        // itself is covered by the launch plan tests.
        BOOST_TEST(words(on.out).count("lo") == 1u);
    } else {
        auto names = words(on.out);
        names.erase("lo");
        BOOST_TEST(!names.empty(), "no interface but lo with the network enabled");
    }
    expect_clean(e);
}

BOOST_DATA_TEST_CASE(memory_beyond_the_limit_is_refused_and_below_it_works, data::make(isolating_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    e.policy = e.policy.with_memory("64M");
    const auto small = e.sh("dd if=/dev/zero of=/dev/null bs=8M count=1 2>/dev/null && echo small-ok");
    BOOST_TEST_INFO(describe(small));
    BOOST_TEST(small.success());
    BOOST_TEST(small.out == "small-ok\n");

    // A 256 MiB buffer: four times the limit.
    const auto big = e.sh("dd if=/dev/zero of=/dev/null bs=256M count=1 2>/dev/null; echo big=$?");
    BOOST_TEST_INFO(describe(big));
    BOOST_TEST(!big.timed_out);
    if (big.exit_code != 137) {
        auto k = keyed(big.out);
        BOOST_REQUIRE(k.count("big") == 1u);
        BOOST_TEST(k.at("big") != "0", "a 256 MiB allocation succeeded under a 64M limit");
    }
    expect_clean(e);
}

BOOST_DATA_TEST_CASE(the_pids_limit_stops_a_fork_storm, data::make(isolating_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    const std::string storm =
        "i=0; while [ $i -lt 40 ]; do sleep 0.5 & i=$((i+1)); done; wait; echo all-started";
    if (!cgroups_usable_here() && !is_container(d)) {
        // The pids limit is a cgroup's; an unprivileged caller on a cgroup v1 host has none
        // (nor a memory limit, which the driver says).
        BOOST_TEST(!e.runner()->caps().memory_enforced);
        BOOST_TEST_MESSAGE("NOTE: " << to_string(d) << " has no pids cgroup here (not root on cgroup v1)");
        return;
    }
    e.options.pids_limit = 16;
    const auto limited = e.sh(storm);
    BOOST_TEST_INFO(describe(limited));
    BOOST_TEST(!limited.success());
    BOOST_TEST(limited.out.find("all-started") == std::string::npos);
    BOOST_TEST(limited.err.find("fork") != std::string::npos);

    e.options.pids_limit = 256;
    const auto roomy = e.sh(storm);
    BOOST_TEST_INFO(describe(roomy));
    BOOST_TEST(roomy.success());
    BOOST_TEST(roomy.out == "all-started\n");
    expect_clean(e);
}

BOOST_DATA_TEST_CASE(capabilities_are_dropped_with_no_new_privileges_and_no_root, data::make(isolating_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    const auto r = e.sh("grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):' /proc/self/status | "
                        "tr -d ' \\t' | tr ':' '='; echo uid=$(id -u); echo gid=$(id -g)");
    BOOST_TEST_INFO(describe(r));
    BOOST_REQUIRE(r.success());
    auto k = keyed(r.out);
    for (const char* cap : {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"}) {
        // An unprivileged caller cannot empty its own bounding set (no namespace to do it
        // in); with no_new_privs nothing it holds can be gained.
        if (d == driver::landlock && ::geteuid() != 0 && std::string_view(cap) == "CapBnd") continue;
        BOOST_TEST((k.count(cap) && k.at(cap) == "0000000000000000"), cap);
    }
    BOOST_TEST((k.count("NoNewPrivs") && k.at("NoNewPrivs") == "1"));
    if (d == driver::firejail) {
        BOOST_TEST((k.count("Seccomp") && k.at("Seccomp") == "2"));
        // Never root: under a root caller, the unprivileged account firejail starts as.
        BOOST_TEST(k["uid"] != "0");
        BOOST_TEST(k["gid"] != "0");
        BOOST_TEST(k["uid"] == std::to_string(detail::command_ids(d, {}).first));
    } else {
        BOOST_TEST(k["uid"] != "0");
        BOOST_TEST(k["gid"] != "0");
        // Under a root caller a uid of the run's own, and the gid of the same number.
        BOOST_TEST(is_command_uid(d, static_cast<uid_t>(std::stoul(k["uid"]))), k["uid"]);
        if (::geteuid() == 0) BOOST_TEST(k["gid"] == k["uid"]);
    }
    expect_clean(e);
}

BOOST_DATA_TEST_CASE(containers_have_a_read_only_root_and_a_real_init, data::make(container_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    driver_env e(d);
    const auto r = e.sh("touch /bin/x 2>&1; echo pid=$$; echo init=$(cat /proc/1/cmdline | tr '\\0' ' ')");
    BOOST_TEST_INFO(describe(r));
    BOOST_TEST(r.success());
    BOOST_TEST(r.out.find("Read-only file system") != std::string::npos);
    auto k = keyed(r.out);
    BOOST_TEST(k["pid"] != "1");  // --init: the command is not PID 1
    BOOST_TEST(k["init"].find("init") != std::string::npos);
    expect_clean(e);
}

BOOST_AUTO_TEST_CASE(bubblewrap_has_its_own_pid_namespace_proc_dev_and_a_minimal_read_only_root)
{
    SANDBOX_REQUIRE_DRIVER(driver::bubblewrap);
    driver_env e(driver::bubblewrap);
    const std::string script =
        "echo pid=$$; echo procs=$(ls /proc | grep -c '^[0-9]'); echo init=$(cat /proc/1/comm); "
        "echo x > /dev/null && echo devnull=ok; echo urandom=$(head -c 8 /dev/urandom | wc -c); "
        "echo dev=$(ls /dev | tr '\\n' ' '); echo root=$(ls / | tr '\\n' ' '); echo etc=$(ls /etc | tr '\\n' ' '); "
        "test -e /etc/shadow && echo SHADOW-VISIBLE; "
        "(echo 1 > /proc/sys/kernel/ns_last_pid) 2>/dev/null && echo PROC-SYS-WRITABLE; "
        "ls /usr/bin/sh >/dev/null && echo usr=ok; echo end";
    const auto r = e.sh(script);
    BOOST_TEST_INFO(describe(r));
    BOOST_TEST(r.success());
    auto k = keyed(r.out);
    BOOST_TEST(std::atoi(k["pid"].c_str()) > 0);
    BOOST_TEST(std::atoi(k["pid"].c_str()) < 10);  // numbered inside its own namespace
    BOOST_TEST(std::atoi(k["procs"].c_str()) < 10);  // no host process is visible
    BOOST_TEST(k["init"] == "bwrap");
    BOOST_TEST(k["devnull"] == "ok");
    BOOST_TEST(k["urandom"] == "8");
    BOOST_TEST(k["usr"] == "ok");
    const std::set<std::string> dev_allowed{"core", "fd",  "full",   "mqueue", "null",   "ptmx",    "pts", "random",
                                            "shm",  "stderr", "stdin", "stdout", "tty", "urandom", "zero"};
    for (const auto& dev : words(k["dev"])) BOOST_TEST(dev_allowed.count(dev) == 1u, "/dev/" << dev);
    const std::set<std::string> root_allowed{"bin", "dev",  "etc",    "lib",  "lib32", "lib64", "libx32",
                                             "mnt", "proc", "sbin",   "tmp",  "usr",   "work"};
    const auto root = words(k["root"]);
    for (const auto& entry : root) BOOST_TEST(root_allowed.count(entry) == 1u, "/" << entry);
    for (const char* needed : {"usr", "bin", "proc", "dev", "tmp", "work", "etc"})
        BOOST_TEST(root.count(needed) == 1u, needed);
    const std::set<std::string> etc_allowed{"ld.so.cache", "alternatives", "passwd", "group", "localtime"};
    for (const auto& entry : words(k["etc"])) BOOST_TEST(etc_allowed.count(entry) == 1u, "/etc/" << entry);
    BOOST_TEST(r.out.find("SHADOW-VISIBLE") == std::string::npos);
    BOOST_TEST(r.out.find("PROC-SYS-WRITABLE") == std::string::npos);
    expect_clean(e);
}

BOOST_AUTO_TEST_CASE(firejail_uses_the_work_dir_as_home_and_keeps_host_paths)
{
    SANDBOX_REQUIRE_DRIVER(driver::firejail);
    driver_env e(driver::firejail);
    scratch_dir outside;
    const auto rw = outside.sub("rw", 0777);
    const auto ro = outside.sub("ro", 0755);
    { std::ofstream(ro / "data") << "ro-data\n"; }
    e.policy = e.policy.with_writable_paths({rw}).with_readable_paths({ro});
    const auto mounts = mounts_for(e.policy, driver::firejail);
    BOOST_REQUIRE(mounts.size() == 2u);
    BOOST_TEST(mounts[0].container == std::filesystem::canonical(rw).string());
    BOOST_TEST(mounts[1].container == std::filesystem::canonical(ro).string());
    const auto r = e.sh("echo cwd=$(pwd); echo x > in-home && echo home=writable; echo w > \"$1/f\" && echo rw=ok; "
                        "echo ro=$(cat \"$2/data\"); (echo y > \"$2/g\") 2>/dev/null && echo RO-WRITABLE; "
                        "echo dev=$(ls /dev | tr '\\n' ' ')",
                        {mounts[0].container, mounts[1].container});
    BOOST_TEST_INFO(describe(r));
    BOOST_TEST(r.success());
    auto k = keyed(r.out);
    BOOST_TEST(k["cwd"] == home_of_caller());
    BOOST_TEST(k["home"] == "writable");
    BOOST_TEST(k["rw"] == "ok");
    BOOST_TEST(k["ro"] == "ro-data");
    BOOST_TEST(r.out.find("RO-WRITABLE") == std::string::npos);
    BOOST_TEST(!std::filesystem::exists(ro / "g"));
    BOOST_TEST(std::filesystem::exists(rw / "f"));
    // --private-dev: no disks or memory devices.
    for (const auto& dev : words(k["dev"]))
        BOOST_TEST((dev.rfind("sd", 0) != 0 && dev.rfind("nvme", 0) != 0 && dev != "mem" && dev != "kmsg"), dev);
    // The caller's real home is untouched.
    BOOST_TEST(!std::filesystem::exists(std::filesystem::path(home_of_caller()) / "in-home"));
    expect_clean(e);
}

BOOST_AUTO_TEST_SUITE_END()
