// SPDX-License-Identifier: BSL-1.0
// Idmapped bind mounts, the ground of writable paths for root callers: a root-owned 0755
// directory becomes writable by the sandbox uid through the mount, what it writes belongs to
// the owner, and nothing changes on the host.
#include "driver_fixture.hpp"

#include "sys/idmap.hpp"
#include "sys/mounts.hpp"

#include <boost/test/unit_test.hpp>

#include <fstream>

#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace sandbox;
using namespace sandbox::test;

BOOST_AUTO_TEST_SUITE(idmapped_mounts)

BOOST_AUTO_TEST_CASE(a_root_owned_directory_is_writable_by_the_sandbox_uid_through_it)
{
    if (::geteuid() != 0) {
        BOOST_TEST_MESSAGE("SKIPPED: idmapped mounts need a root caller");
        return;
    }
    scratch_dir host(0755);  // root-owned, 0755: not writable by uid 65534
    scratch_dir stage(0700);
    const auto target = stage.sub("rw0", 0755);
    std::string why;
    const auto pin = detail::open_pinned(host.path.string(), why);
    BOOST_TEST_REQUIRE(!!pin.fd, why);
    why = detail::attach_idmapped(pin.fd.get(), host.path.string(), target, {0, 0}, {65534, 65534});
    BOOST_TEST_REQUIRE(why.empty(), why);
    struct stat st {};
    BOOST_TEST(::stat(target.c_str(), &st) == 0);
    BOOST_TEST(st.st_uid == 65534u);
    // A process of uid 65534 already inside writes; the file is root's on the host.
    const auto out = host_output("cd '" + target.string() +
                                 "' && setpriv --reuid=65534 --regid=65534 --clear-groups -- sh -c 'echo hi > f && id -u' 2>&1");
    BOOST_TEST(trim(out) == "65534");
    BOOST_TEST(::stat((host.path / "f").c_str(), &st) == 0);
    BOOST_TEST(st.st_uid == 0u);
    BOOST_TEST(read_text(host.path / "f") == "hi\n");
    // The host directory itself is as it was.
    BOOST_TEST(::stat(host.path.c_str(), &st) == 0);
    BOOST_TEST(st.st_uid == 0u);
    BOOST_TEST((st.st_mode & 07777) == 0755u);
    BOOST_TEST(detail::detach_mount(target));
    BOOST_TEST(!detail::is_mount_root(target));
}

BOOST_AUTO_TEST_CASE(a_path_is_pinned_only_without_a_symbolic_link_on_its_way)
{
    scratch_dir dir(0755);
    const auto real = dir.sub("a", 0755);
    std::filesystem::create_directory(real / "b");
    std::string why;
    BOOST_TEST(!!detail::open_pinned((real / "b").string(), why).fd, why);
    std::filesystem::create_directory_symlink(real, dir.path / "link");
    const auto swapped = detail::open_pinned((dir.path / "link" / "b").string(), why);
    BOOST_TEST(!swapped.fd);
    BOOST_TEST(why.find("symbolic link") != std::string::npos, why);
    const auto missing = detail::open_pinned((dir.path / "missing").string(), why);
    BOOST_TEST(!missing.fd);
    BOOST_TEST(why.find("No such file") != std::string::npos, why);
}

// The race the pin closes: a middle component of the path replaced by a link to another
// directory after the check. What is mounted is still the directory that was checked.
BOOST_AUTO_TEST_CASE(a_component_swapped_after_the_pin_moves_no_mount)
{
    if (::geteuid() != 0) {
        BOOST_TEST_MESSAGE("SKIPPED: mounts need a root caller");
        return;
    }
    scratch_dir dir(0755), victim(0755), stage(0700);
    std::filesystem::create_directories(dir.path / "a" / "b");
    std::ofstream(dir.path / "a" / "b" / "which") << "checked\n";
    std::filesystem::create_directories(victim.path / "b");
    std::ofstream(victim.path / "b" / "which") << "victim\n";
    std::string why;
    const auto pin = detail::open_pinned((dir.path / "a" / "b").string(), why);
    BOOST_TEST_REQUIRE(!!pin.fd, why);
    std::filesystem::rename(dir.path / "a", dir.path / "moved");
    std::filesystem::create_directory_symlink(victim.path, dir.path / "a");
    for (const bool idmapped : {false, true}) {
        const auto target = stage.sub(idmapped ? "idmapped" : "clone", 0755);
        why = idmapped ? detail::attach_idmapped(pin.fd.get(), "b", target, {0, 0}, {65534, 65534})
                       : detail::attach_clone(pin.fd.get(), target, true);
        BOOST_TEST_REQUIRE(why.empty(), why);
        BOOST_TEST(read_text(target / "which") == "checked\n");
        BOOST_TEST(detail::detach_mount(target));
    }
}

BOOST_AUTO_TEST_SUITE_END()

#include "sys/seccomp_filter.hpp"

#include <fcntl.h>

BOOST_AUTO_TEST_SUITE(setid_filter)

// Loaded by bwrap (--seccomp FD): set-id modes are refused, everything else works.
BOOST_AUTO_TEST_CASE(set_id_modes_are_refused_and_plain_ones_are_not)
{
    SANDBOX_REQUIRE_DRIVER(driver::bubblewrap);
    scratch_dir dir(0777);
    const auto bpf = dir.path / "filter.bpf";
    {
        const int fd = ::open(bpf.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        BOOST_TEST_REQUIRE(fd >= 0);
        std::uint32_t rules = 0;
        BOOST_TEST_REQUIRE(detail::parse_rules("setid_files", rules));
        const auto why = detail::write_filter(fd, rules);
        ::close(fd);
        BOOST_TEST_REQUIRE(why.empty(), why);
    }
    const std::string script =
        "cd /w; cp /bin/sh a; chmod 755 a && echo plain=ok; chmod 4755 a || echo suid=refused; "
        "chmod 2755 a || echo sgid=refused; chmod u+s a || echo us=refused; ls -l a | cut -c1-10; "
        "(umask 0; : > b) && echo create=ok; python3 -c 'import os; os.open(\"c\", os.O_CREAT|os.O_WRONLY, 0o4755)' "
        "2>/dev/null || echo open_suid=refused";
    {
        std::ofstream f(dir.path / "t.sh");
        f << script << "\n";
    }
    const auto out = host_output(
        "exec 3<'" + bpf.string() + "'; setpriv --reuid=65534 --regid=65534 --clear-groups -- bwrap --unshare-all "
        "--ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64 --proc /proc "
        "--dev /dev --bind '" + dir.path.string() + "' /w --seccomp 3 -- sh /w/t.sh 2>&1");
    BOOST_TEST_INFO(out);
    BOOST_TEST(out.find("plain=ok") != std::string::npos);
    BOOST_TEST(out.find("suid=refused") != std::string::npos);
    BOOST_TEST(out.find("sgid=refused") != std::string::npos);
    BOOST_TEST(out.find("us=refused") != std::string::npos);
    BOOST_TEST(out.find("-rwxr-xr-x") != std::string::npos);
    BOOST_TEST(out.find("create=ok") != std::string::npos);
    BOOST_TEST(out.find("open_suid=refused") != std::string::npos);
    struct stat st {};
    if (::stat((dir.path / "c").c_str(), &st) == 0) BOOST_TEST(!(st.st_mode & (S_ISUID | S_ISGID)));
}

BOOST_AUTO_TEST_SUITE_END()

#include "drivers/plans.hpp"
#include "drivers/runner.hpp"
#include "drivers/run_record.hpp"

#include <boost/test/data/test_case.hpp>

BOOST_AUTO_TEST_SUITE(root_writable_paths)

namespace {

// Mount points below `dir`, from this process's mountinfo.
std::vector<std::string> mounts_below(const std::filesystem::path& dir)
{
    std::vector<std::string> out;
    for (const auto& line : split_lines(read_text("/proc/self/mountinfo"))) {
        std::istringstream fields(line);
        std::string id, parent, dev, root, point;
        fields >> id >> parent >> dev >> root >> point;
        if (point.rfind(dir.string() + "/", 0) == 0) out.push_back(point);
    }
    return out;
}

// Mounts left below the record of a run that has ended (nobody holds its lock). Runs of
// other test programs may be going on meanwhile, with their own idmapped mounts, and the
// records' directory is the system's temporary one, where other tests mount too (the fault
// tests' small tmpfs): only what is below a record counts.
std::vector<std::string> mounts_of_ended_runs()
{
    const auto records = detail::run_record_dir();
    std::vector<std::string> out;
    for (const auto& point : mounts_below(records)) {
        const auto rest = point.substr(records.string().size() + 1);
        const auto first = rest.substr(0, rest.find('/'));
        if (!first.ends_with(".run") && !first.ends_with(".run-new")) continue;
        const auto record = records / first;
        const int fd = ::open(record.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        const bool live = fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) != 0;
        if (fd >= 0) ::close(fd);
        if (!live) out.push_back(point);
    }
    return out;
}

}  // namespace

// As root, the command runs as an unprivileged uid; a writable path owned by someone else
// (here root, mode 0755) is still writable, what it creates stays the owner's, nothing of
// the path changes on the host, and no set-id file can be made through it.
BOOST_DATA_TEST_CASE(a_root_owned_writable_path_is_writable_by_the_command,
                     boost::unit_test::data::make(isolating_drivers), d)
{
    SANDBOX_REQUIRE_DRIVER(d);
    if (::geteuid() != 0) {
        BOOST_TEST_MESSAGE("NOTE: not root here: the command runs as this user, who owns the path");
        return;
    }
    driver_env e(d);
    scratch_dir host(0755);
    const auto rw = host.sub("rw", 0755);
    e.policy = e.policy.with_writable_paths({rw});
    if (d == driver::landlock) {
        // No mount namespace to show the path as the command's own: refused, naming it.
        try {
            const auto r = e.run({"true"});
            BOOST_ERROR("no launch_error; " << describe(r));
        } catch (const launch_error& err) {
            BOOST_TEST((err.code() == boost::system::errc::permission_denied), err.code().message());
            BOOST_TEST(std::string(err.what()).find("writable path " + rw.string() + " (uid 0, mode 0755) is not "
                                                    "writable by uid ") != std::string::npos, err.what());
        }
        BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
        return;
    }
    const auto inside = mounts_for(e.policy, d).at(0).container;
    const auto r = e.sh("cd \"$1\" && echo hi > made && mkdir sub && echo deep > sub/f && stat -c 'inside=%u' made; "
                        "chmod 4755 made 2>/dev/null || echo suid=refused; chmod g+s sub 2>/dev/null || echo sgid=refused; "
                        "(echo x > ../beside) 2>/dev/null || echo beside=refused; "
                        "[ -e /proc/self/fd/3 ] && echo fd3=open; id -u",
                        {inside});
    BOOST_TEST_INFO(describe(r));
    BOOST_TEST(r.exit_code == 0);
    const auto at = r.out.find("inside=");
    const auto inside_uid = at == std::string::npos ? std::string() : r.out.substr(at + 7, r.out.find('\n', at) - at - 7);
    BOOST_TEST((!inside_uid.empty() && is_command_uid(d, static_cast<uid_t>(std::stoul(inside_uid)))), inside_uid);
    BOOST_TEST(r.out.find("suid=refused") != std::string::npos);
    BOOST_TEST(r.out.find("sgid=refused") != std::string::npos);
    BOOST_TEST(r.out.find("beside=refused") != std::string::npos);  // nothing else of the host
    BOOST_TEST(!std::filesystem::exists(host.path / "beside"));
    BOOST_TEST(r.out.find("fd3=open") == std::string::npos);  // the tool's copy of the filter is not the command's
    struct stat st {};
    BOOST_TEST_REQUIRE(::stat((rw / "made").c_str(), &st) == 0);
    BOOST_TEST(st.st_uid == 0u);  // the path's owner, on the host
    BOOST_TEST(!(st.st_mode & (S_ISUID | S_ISGID)));
    BOOST_TEST(read_text(rw / "made") == "hi\n");
    BOOST_TEST(read_text(rw / "sub" / "f") == "deep\n");
    BOOST_TEST(::stat((rw / "sub").c_str(), &st) == 0);
    BOOST_TEST(!(st.st_mode & S_ISGID));
    BOOST_TEST(::stat(rw.c_str(), &st) == 0);
    BOOST_TEST(st.st_uid == 0u);
    BOOST_TEST((st.st_mode & 07777) == 0755u);
    // The staged mount went with the run.
    BOOST_TEST(mounts_of_ended_runs().empty(), join(mounts_of_ended_runs()));
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
}

// firejail loads the filter in the jail through sandbox-seccomp-exec: a missing command is
// still 127 with the one "Failed to start" line, and a missing helper is a launch_error.
BOOST_AUTO_TEST_CASE(firejail_behind_the_setid_filter_reports_like_without_it)
{
    SANDBOX_REQUIRE_DRIVER(driver::firejail);
    if (::geteuid() != 0) return;
    driver_env e(driver::firejail);
    scratch_dir host(0755);
    e.policy = e.policy.with_writable_paths({host.sub("rw", 0755)});
    const auto r = e.run({"no-such-command-4711"});
    BOOST_TEST_INFO(describe(r));
    BOOST_TEST(r.exit_code == 127);
    BOOST_TEST(r.err == "Failed to start firejail: no-such-command-4711: No such file or directory");
    BOOST_TEST((r.start_error == errc::command_not_found));

    env_guard missing("SANDBOX_SECCOMP_EXEC", "/nonexistent/sandbox-seccomp-exec");
    std::string message;
    boost::system::error_code code;
    try {
        (void)e.run({"true"});
    } catch (const launch_error& err) {
        message = err.what();
        code = err.code();
    }
    BOOST_TEST(message.find("sandbox-seccomp-exec") != std::string::npos, message);
    BOOST_TEST((code == errc::driver_unavailable), code.message());
    BOOST_TEST(mounts_of_ended_runs().empty(), join(mounts_of_ended_runs()));
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
}

// Only a directory can be shown writable this way; a file is refused with its name.
BOOST_AUTO_TEST_CASE(a_root_owned_writable_file_is_refused_by_name)
{
    SANDBOX_REQUIRE_DRIVER(driver::bubblewrap);
    if (::geteuid() != 0) return;
    driver_env e(driver::bubblewrap);
    scratch_dir host(0755);
    const auto file = host.path / "f";
    { std::ofstream(file) << "x\n"; }
    e.policy = e.policy.with_writable_paths({file});
    std::string message;
    try {
        const auto r = e.run({"true"});
        BOOST_ERROR("no launch_error; " << describe(r));
    } catch (const launch_error& err) {
        message = err.what();
    }
    BOOST_TEST(message.find("writable path " + file.string()) != std::string::npos, message);
    BOOST_TEST(mounts_of_ended_runs().empty(), join(mounts_of_ended_runs()));
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
}

BOOST_AUTO_TEST_SUITE_END()
