// SPDX-License-Identifier: BSL-1.0
// The workspace fence: `..`, absolute and dangling symlinks, /proc magic links, NUL and the
// mount alias. Ports local_test.go (RemoveRefusesOutsideRoot, FenceRefusesEscape,
// MountAliasStillFences) and the conformance cases FenceRefuses{Read,Write}Escape and
// FenceRefusesSymlink{Read,Write}Escape, plus the holes of a check-then-open fence.
#include "support.hpp"

#include <sandbox/workspace.hpp>

#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>

#include <functional>
#include <initializer_list>
#include <string>
#include <system_error>

using sandbox::workspace;
using namespace sandbox::test;

namespace {

// "../<name of outside>/<rest>": a relative path from the root to the sibling directory.
std::string sibling(const fs::path& outside, const std::string& rest = "")
{
    return "../" + outside.filename().string() + (rest.empty() ? "" : "/" + rest);
}

// Makes openat2 fail with `err` in this process from now on, as an old kernel (ENOSYS) or
// an old container seccomp profile (EPERM) would.
bool deny_openat2(int err)
{
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (static_cast<unsigned>(err) & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog prog{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
    return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

// Runs `body` in a forked child (the filter must not touch this process) and returns what
// it wrote to its pipe, or "" if it died.
std::string in_child(const std::function<std::string()>& body)
{
    int p[2];
    BOOST_TEST_REQUIRE(::pipe2(p, O_CLOEXEC) == 0);
    const pid_t pid = ::fork();
    BOOST_TEST_REQUIRE(pid >= 0);
    if (pid == 0) {
        ::close(p[0]);
        std::string out;
        try {
            out = body();
        } catch (...) {
            out = "unexpected exception";
        }
        (void)!::write(p[1], out.data(), out.size());
        ::_exit(0);
    }
    ::close(p[1]);
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = ::read(p[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
    ::close(p[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(test_fence)

// local_test.go TestRemoveRefusesOutsideRoot
BOOST_FIXTURE_TEST_CASE(remove_refuses_outside_root, ws_fixture)
{
    host_write(outside / "victim.txt", "keep");
    SANDBOX_CHECK_REFUSED(ws.remove("../outside"), std::errc::permission_denied, "../outside");
    const auto p = sibling(outside, "victim.txt");
    SANDBOX_CHECK_REFUSED(ws.remove(p), std::errc::permission_denied, p);
    BOOST_TEST(host_read(outside / "victim.txt") == "keep");
}

// local_test.go TestFenceRefusesEscape
BOOST_FIXTURE_TEST_CASE(fence_refuses_escape, ws_fixture)
{
    for (const std::string p : {"../escape.txt", "../../etc/passwd", "a/../../x", "/..", "/../etc/passwd", ".."}) {
        SANDBOX_CHECK_REFUSED(ws.read_file(p), std::errc::permission_denied, p);
        const auto err = error_of([&] { (void)ws.read_file(p); });
        BOOST_TEST(contains(err->what(), "leaves the workspace root " + root.string()), err->what());
    }
    // Lexically back inside, but it climbed out on the way: refused, unlike a lexical fence.
    const std::string back_in = "../" + root.filename().string() + "/x";
    SANDBOX_CHECK_REFUSED(ws.read_file(back_in), std::errc::permission_denied, back_in);
    // A ".." that stays inside is fine.
    ws.write_file("b", "bee");
    BOOST_TEST(ws.read_file("a/../b") == "bee");
}

// conformance FenceRefusesReadEscape
BOOST_FIXTURE_TEST_CASE(fence_refuses_read_escape, ws_fixture)
{
    SANDBOX_CHECK_REFUSED(ws.read_file("../escape.txt"), std::errc::permission_denied, "../escape.txt");
    SANDBOX_CHECK_REFUSED(ws.read_file("../../etc/passwd"), std::errc::permission_denied, "../../etc/passwd");
    const auto p = sibling(outside, "secret.txt");
    host_write(outside / "secret.txt", "TOP SECRET");
    SANDBOX_CHECK_REFUSED(ws.read_file(p), std::errc::permission_denied, p);
    SANDBOX_CHECK_REFUSED(ws.read_file_limit(p, 3), std::errc::permission_denied, p);
    SANDBOX_CHECK_REFUSED(ws.list_dir(sibling(outside)), std::errc::permission_denied, sibling(outside));
}

// conformance FenceRefusesWriteEscape
BOOST_FIXTURE_TEST_CASE(fence_refuses_write_escape, ws_fixture)
{
    SANDBOX_CHECK_REFUSED(ws.write_file("../escape.txt", "x"), std::errc::permission_denied, "../escape.txt");
    const auto p = sibling(outside, "pwned.txt");
    SANDBOX_CHECK_REFUSED(ws.write_file(p, "x"), std::errc::permission_denied, p);
    SANDBOX_CHECK_REFUSED(ws.append_file(p, "x"), std::errc::permission_denied, p);
    const auto d = sibling(outside, "newdir");
    SANDBOX_CHECK_REFUSED(ws.make_dir_all(d), std::errc::permission_denied, d);
    BOOST_TEST(!host_exists(outside / "pwned.txt"));
    BOOST_TEST(!host_exists(outside / "newdir"));
}

// conformance FenceRefusesSymlinkReadEscape
BOOST_FIXTURE_TEST_CASE(fence_refuses_symlink_read_escape, ws_fixture)
{
    host_write(outside / "secret.txt", "TOP SECRET");
    fs::create_symlink(outside / "secret.txt", root / "leak");
    fs::create_symlink(sibling(outside, "secret.txt"), root / "rel-leak");
    for (const std::string p : {"leak", "rel-leak", "./leak", "/leak"}) {
        SANDBOX_CHECK_REFUSED(ws.read_file(p), std::errc::cross_device_link, p);
        SANDBOX_CHECK_REFUSED(ws.read_file_limit(p, 100), std::errc::cross_device_link, p);
        const auto err = error_of([&] { (void)ws.read_file(p); });
        BOOST_TEST(contains(err->what(), "leads outside the workspace root " + root.string()), err->what());
        BOOST_TEST(!contains(err->what(), "TOP SECRET"), err->what());
    }
}

// conformance FenceRefusesSymlinkWriteEscape, made strict: the write must be refused.
BOOST_FIXTURE_TEST_CASE(fence_refuses_symlink_write_escape, ws_fixture)
{
    fs::create_directory_symlink(outside, root / "escape-dir");
    SANDBOX_CHECK_REFUSED(ws.write_file("escape-dir/pwned.txt", "x"), std::errc::cross_device_link,
                          "escape-dir/pwned.txt");
    SANDBOX_CHECK_REFUSED(ws.append_file("escape-dir/pwned.txt", "x"), std::errc::cross_device_link,
                          "escape-dir/pwned.txt");
    BOOST_TEST(!host_exists(outside / "pwned.txt"));
}

BOOST_FIXTURE_TEST_CASE(an_escaping_directory_symlink_is_refused_by_every_operation, ws_fixture)
{
    host_write(outside / "victim.txt", "keep");
    fs::create_directory_symlink(outside, root / "esc");
    fs::create_directory(root / "sub");
    fs::create_directory_symlink("../" + sibling(outside), root / "sub" / "up");  // relative, via ".."
    for (const std::string d : {"esc", "sub/up"}) {
        const auto f = d + "/victim.txt";
        SANDBOX_CHECK_REFUSED(ws.read_file(f), std::errc::cross_device_link, f);
        SANDBOX_CHECK_REFUSED(ws.read_file_limit(f, 2), std::errc::cross_device_link, f);
        SANDBOX_CHECK_REFUSED(ws.write_file(f, "x"), std::errc::cross_device_link, f);
        SANDBOX_CHECK_REFUSED(ws.append_file(f, "x"), std::errc::cross_device_link, f);
        SANDBOX_CHECK_REFUSED(ws.remove(f), std::errc::cross_device_link, f);
        SANDBOX_CHECK_REFUSED(ws.list_dir(d), std::errc::cross_device_link, d);
        SANDBOX_CHECK_REFUSED(ws.make_dir_all(d + "/new/deeper"), std::errc::cross_device_link, d + "/new/deeper");
        SANDBOX_CHECK_REFUSED(ws.rel_in_root(f), std::errc::cross_device_link, f);
    }
    BOOST_TEST(host_read(outside / "victim.txt") == "keep");
    BOOST_TEST(!host_exists(outside / "new"));
}

BOOST_FIXTURE_TEST_CASE(a_dangling_symlink_to_outside_is_refused_and_creates_nothing, ws_fixture)
{
    // A check-then-open fence follows these with O_CREAT and creates the outside file.
    fs::create_symlink(outside / "new", root / "d");
    fs::create_symlink(sibling(outside, "new"), root / "r");
    for (const std::string p : {"d", "r"}) {
        SANDBOX_CHECK_REFUSED(ws.write_file(p, "pwned"), std::errc::cross_device_link, p);
        SANDBOX_CHECK_REFUSED(ws.append_file(p, "pwned"), std::errc::cross_device_link, p);
        SANDBOX_CHECK_REFUSED(ws.make_dir_all(p), std::errc::cross_device_link, p);
        SANDBOX_CHECK_REFUSED(ws.make_dir_all(p + "/sub"), std::errc::cross_device_link, p + "/sub");
        SANDBOX_CHECK_REFUSED(ws.rel_in_root(p), std::errc::cross_device_link, p);
        BOOST_TEST(!host_exists(outside / "new"));
    }
    BOOST_TEST(fs::is_empty(outside));
    // The links themselves are still there and can be removed.
    ws.remove("d");
    ws.remove("r");
    BOOST_TEST(ws.list_dir(".").empty());
}

BOOST_FIXTURE_TEST_CASE(an_absolute_symlink_is_refused_even_into_the_root, ws_fixture)
{
    ws.write_file("target.txt", "inside");
    fs::create_symlink(root / "target.txt", root / "abs");
    SANDBOX_CHECK_REFUSED(ws.read_file("abs"), std::errc::cross_device_link, "abs");
    SANDBOX_CHECK_REFUSED(ws.write_file("abs", "x"), std::errc::cross_device_link, "abs");
    BOOST_TEST(ws.read_file("target.txt") == "inside");
}

BOOST_FIXTURE_TEST_CASE(proc_self_root_is_refused, ws_fixture)
{
    host_write(outside / "secret.txt", "TOP SECRET");
    const std::string via_proc = "/proc/self/root" + (outside / "secret.txt").string();

    // As a symlink in the workspace: absolute, so refused before /proc is reached.
    fs::create_symlink(via_proc, root / "p");
    SANDBOX_CHECK_REFUSED(ws.read_file("p"), std::errc::cross_device_link, "p");
    SANDBOX_CHECK_REFUSED(ws.write_file("p", "x"), std::errc::cross_device_link, "p");
    fs::create_directory_symlink("/proc/self/root", root / "proot");
    const auto through = "proot" + (outside / "secret.txt").string();
    SANDBOX_CHECK_REFUSED(ws.read_file(through), std::errc::cross_device_link, through);

    // Climbing to /proc with "..".
    std::string climb;
    for (auto it = root.begin(); it != root.end(); ++it) climb += "../";
    climb += via_proc.substr(1);
    SANDBOX_CHECK_REFUSED(ws.read_file(climb), std::errc::permission_denied, climb);

    // As an absolute path it means <root>/proc/self/root/...: missing, nothing read.
    auto err = error_of([&] { (void)ws.read_file(via_proc); });
    BOOST_TEST_REQUIRE(err.has_value());
    BOOST_TEST((err->code() == std::errc::no_such_file_or_directory), err->what());
    BOOST_TEST(contains(err->what(), "\"" + via_proc + "\""), err->what());
    BOOST_TEST(host_read(outside / "secret.txt") == "TOP SECRET");
}

BOOST_FIXTURE_TEST_CASE(a_root_of_slash_works_and_still_refuses_magic_links, ws_fixture)
{
    host_write(outside / "secret.txt", "TOP SECRET");
    workspace slash("/");
    BOOST_TEST(slash.root() == "/");
    BOOST_TEST(slash.read_file((outside / "secret.txt").string()) == "TOP SECRET");
    BOOST_TEST(slash.rel_in_root((outside / "secret.txt").string()) == (outside / "secret.txt").relative_path());
    BOOST_TEST(!slash.list_dir("/").empty());

    // /proc/self is an ordinary symlink; /proc/self/root and /proc/self/fd/N are magic.
    const std::string via_root = "/proc/self/root" + (outside / "secret.txt").string();
    SANDBOX_CHECK_REFUSED(slash.read_file(via_root), std::errc::too_many_symbolic_link_levels, via_root);
    SANDBOX_CHECK_REFUSED(slash.rel_in_root("/proc/self/root"), std::errc::too_many_symbolic_link_levels,
                          "/proc/self/root");
    const int fd = ::open((outside / "secret.txt").c_str(), O_RDONLY | O_CLOEXEC);
    BOOST_TEST_REQUIRE(fd >= 0);
    const std::string via_fd = "/proc/self/fd/" + std::to_string(fd);
    SANDBOX_CHECK_REFUSED(slash.read_file(via_fd), std::errc::too_many_symbolic_link_levels, via_fd);
    SANDBOX_CHECK_REFUSED(slash.write_file(via_fd, "x"), std::errc::too_many_symbolic_link_levels, via_fd);
    ::close(fd);
    const auto err = error_of([&] { (void)slash.read_file(via_root); });
    BOOST_TEST(contains(err->what(), "magic link"), err->what());
    BOOST_TEST(host_read(outside / "secret.txt") == "TOP SECRET");
}

// local_test.go TestMountAliasStillFences
BOOST_FIXTURE_TEST_CASE(mount_alias_still_fences, ws_fixture)
{
    host_write(root / "f.txt", "hi");
    ws.set_mount_alias("/workspace");
    SANDBOX_CHECK_REFUSED(ws.read_file("/workspace/../escape.txt"), std::errc::permission_denied,
                          "/workspace/../escape.txt");
    SANDBOX_CHECK_REFUSED(ws.write_file("/workspace/../escape.txt", "x"), std::errc::permission_denied,
                          "/workspace/../escape.txt");
    // Not the alias: taken relative to the root, where they do not exist.
    for (const std::string p : {"/etc/passwd", "/workspaceX/f.txt"}) {
        auto err = error_of([&] { (void)ws.read_file(p); });
        BOOST_TEST_REQUIRE(err.has_value(), p);
        BOOST_TEST((err->code() == std::errc::no_such_file_or_directory), err->what());
        BOOST_TEST(contains(err->what(), "\"" + p + "\""), err->what());
    }
    // Without an alias, /workspace/f.txt is <root>/workspace/f.txt.
    workspace plain(root);
    auto err = error_of([&] { (void)plain.read_file("/workspace/f.txt"); });
    BOOST_TEST_REQUIRE(err.has_value());
    BOOST_TEST((err->code() == std::errc::no_such_file_or_directory), err->what());
    // And the alias fences symlinks like any other path.
    fs::create_symlink(outside, root / "leak");
    SANDBOX_CHECK_REFUSED(ws.read_file("/workspace/leak/x"), std::errc::cross_device_link, "/workspace/leak/x");
}

BOOST_FIXTURE_TEST_CASE(a_path_with_nul_is_refused, ws_fixture)
{
    ws.write_file("a", "short name");
    const std::string p("a\0/../../etc/passwd", 19);
    for (auto fn : std::initializer_list<std::function<void()>>{
             [&] { (void)ws.read_file(p); }, [&] { (void)ws.read_file_limit(p, 5); },
             [&] { ws.write_file(p, "x"); }, [&] { ws.append_file(p, "x"); }, [&] { (void)ws.list_dir(p); },
             [&] { ws.make_dir_all(p); }, [&] { ws.remove(p); }, [&] { (void)ws.rel_in_root(p); }}) {
        const auto err = error_of(fn);
        BOOST_TEST_REQUIRE(err.has_value());
        BOOST_TEST((err->code() == std::errc::invalid_argument), err->what());
        BOOST_TEST(contains(err->what(), "refused \"a\\x00/../../etc/passwd\": it contains a NUL byte"), err->what());
    }
    BOOST_TEST(host_read(root / "a") == "short name");
}

BOOST_FIXTURE_TEST_CASE(a_symlink_loop_fails_with_eloop, ws_fixture)
{
    fs::create_symlink("loop2", root / "loop1");
    fs::create_symlink("loop1", root / "loop2");
    SANDBOX_CHECK_REFUSED(ws.read_file("loop1"), std::errc::too_many_symbolic_link_levels, "loop1");
    SANDBOX_CHECK_REFUSED(ws.write_file("loop1", "x"), std::errc::too_many_symbolic_link_levels, "loop1");
    ws.remove("loop1");  // the link itself can go
    BOOST_TEST(!host_exists(root / "loop1"));
}

BOOST_FIXTURE_TEST_CASE(messages_escape_control_characters, ws_fixture)
{
    const std::string p = "../new\nline\"q\"";
    const auto err = error_of([&] { (void)ws.read_file(p); });
    BOOST_TEST_REQUIRE(err.has_value());
    BOOST_TEST(contains(err->what(), "refused \"../new\\x0aline\\\"q\\\"\""), err->what());
}

BOOST_FIXTURE_TEST_CASE(without_openat2_it_fails_closed, ws_fixture)
{
    ws.write_file("f.txt", "data");
    const auto secret = (outside / "secret.txt").string();
    host_write(secret, "TOP SECRET");
    fs::create_symlink(secret, root / "leak");

    for (int err : {ENOSYS, EPERM}) {
        // Constructing refuses to start.
        const auto ctor = in_child([&]() -> std::string {
            if (!deny_openat2(err)) return "no seccomp";
            try {
                workspace w(root);
                return "constructed";
            } catch (const boost::system::system_error& e) {
                return std::to_string(e.code().value()) + " " + e.what();
            }
        });
        if (ctor == "no seccomp") {
            BOOST_TEST_MESSAGE("seccomp filters are not available here; skipped");
            return;
        }
        BOOST_TEST(ctor.rfind(std::to_string(err) + " ", 0) == 0u, ctor);
        BOOST_TEST(contains(ctor, "workspace: root \"" + root.string() + "\": openat2 is unavailable"), ctor);
        BOOST_TEST(contains(ctor, "refusing to resolve paths without it"), ctor);
    }

    // A workspace made before openat2 went away does not fall back to a plain open.
    const auto op = in_child([&]() -> std::string {
        if (!deny_openat2(ENOSYS)) return "no seccomp";
        std::string out;
        for (const char* p : {"f.txt", "leak"}) {
            try {
                out += "read " + ws.read_file(p) + ";";
            } catch (const boost::system::system_error& e) {
                out += std::to_string(e.code().value()) + " " + e.what() + ";";
            }
        }
        return out;
    });
    BOOST_TEST(!contains(op, "TOP SECRET"), op);
    BOOST_TEST(!contains(op, "read "), op);
    BOOST_TEST(contains(op, std::to_string(ENOSYS) + " workspace: read_file \"f.txt\": openat2 is unavailable"), op);
    BOOST_TEST(contains(op, std::to_string(ENOSYS) + " workspace: read_file \"leak\": openat2 is unavailable"), op);
}

BOOST_AUTO_TEST_SUITE_END()
