// SPDX-License-Identifier: BSL-1.0
// workspace: the file API on a fresh root per case. Ports local_test.go (ReadAndList,
// AppendFile, ReadFileLimit, WriteRoundTrip, MountAliasTranslatesToRoot,
// WorkdirReportsRootThenAlias) and the conformance cases WriteReadRoundTrip and
// ListDirSeesWrites, plus what a plain path check never catches.
#include "support.hpp"

#include <sandbox/errors.hpp>
#include <sandbox/workspace.hpp>

#include <boost/test/unit_test.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

using sandbox::dir_entry;
using sandbox::limited_read;
using sandbox::workspace;
using namespace sandbox::test;

namespace {

// Bytes this process has asked read() for and got, from /proc/self/io; nullopt if hidden.
std::optional<std::uint64_t> rchar()
{
    std::ifstream f("/proc/self/io");
    std::string key;
    std::uint64_t value = 0;
    while (f >> key >> value)
        if (key == "rchar:") return value;
    return std::nullopt;
}

// Reading /proc/self/io itself shows up in rchar; this is more than that text.
constexpr std::uint64_t rchar_slack = 1024;

std::string pattern(std::size_t n)
{
    std::string s(n, '\0');
    std::uint32_t x = 2463534242u;
    for (auto& c : s) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        c = static_cast<char>(x);
    }
    return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(test_workspace)

BOOST_AUTO_TEST_CASE(constructor_requires_an_existing_directory)
{
    temp_dir dir;
    const auto missing = dir.path / "missing";
    auto err = error_of([&] { workspace ws(missing); });
    BOOST_TEST_REQUIRE(err.has_value());
    BOOST_TEST((err->code() == std::errc::no_such_file_or_directory), err->what());
    BOOST_TEST(contains(err->what(), missing.string()), err->what());

    host_write(dir.path / "file", "x");
    err = error_of([&] { workspace ws(dir.path / "file"); });
    BOOST_TEST_REQUIRE(err.has_value());
    BOOST_TEST((err->code() == std::errc::not_a_directory), err->what());
    BOOST_TEST(contains(err->what(), (dir.path / "file").string()), err->what());
    BOOST_TEST(contains(err->what(), "not a directory"), err->what());
}

BOOST_AUTO_TEST_CASE(root_is_absolute_and_lexically_normal)
{
    temp_dir dir;
    fs::create_directory(dir.path / "sub");
    workspace ws(dir.path.string() + "/./sub/..//");
    BOOST_TEST(ws.root() == dir.path);
    BOOST_TEST(ws.root().is_absolute());
    BOOST_TEST(ws.workdir() == dir.path);
}

BOOST_AUTO_TEST_CASE(real_root_resolves_symlinks)
{
    temp_dir dir;
    fs::create_directory(dir.path / "real");
    fs::create_directory_symlink("real", dir.path / "link");
    host_write(dir.path / "real" / "f.txt", "via link");
    workspace ws(dir.path / "link");
    BOOST_TEST(ws.root() == dir.path / "link");
    BOOST_TEST(ws.real_root() == fs::canonical(dir.path / "real"));
    BOOST_TEST(ws.read_file("f.txt") == "via link");
}

// local_test.go TestReadAndList
BOOST_FIXTURE_TEST_CASE(read_and_list, ws_fixture)
{
    host_write(root / "hello.txt", "hi");
    BOOST_TEST(ws.read_file("hello.txt") == "hi");
    const std::vector<dir_entry> expected{{"hello.txt", false}};
    BOOST_TEST(ws.list_dir(".") == expected, boost::test_tools::per_element());
    BOOST_TEST(ws.list_dir("") == expected, boost::test_tools::per_element());
}

// local_test.go TestAppendFile
BOOST_FIXTURE_TEST_CASE(append_file, ws_fixture)
{
    ws.append_file("log.txt", "one\n");
    ws.append_file("log.txt", "two\n");
    BOOST_TEST(host_read(root / "log.txt") == "one\ntwo\n");
    SANDBOX_CHECK_REFUSED(ws.append_file("../escape.txt", "x"), std::errc::permission_denied, "../escape.txt");
    BOOST_TEST(!host_exists(root.parent_path() / "escape.txt"));
}

BOOST_FIXTURE_TEST_CASE(append_file_never_reads_existing_content, ws_fixture)
{
    // Write-only: a file we may not read can still be appended to.
    host_write(root / "wo.txt", "start|");
    fs::permissions(root / "wo.txt", fs::perms::owner_write);
    ws.append_file("wo.txt", "end");
    fs::permissions(root / "wo.txt", fs::perms::owner_read | fs::perms::owner_write);
    BOOST_TEST(host_read(root / "wo.txt") == "start|end");
}

// local_test.go TestReadFileLimit
BOOST_FIXTURE_TEST_CASE(read_file_limit, ws_fixture)
{
    host_write(root / "big.txt", "0123456789");
    BOOST_TEST((ws.read_file_limit("big.txt", 100) == limited_read{"0123456789", false}));
    BOOST_TEST((ws.read_file_limit("big.txt", 4) == limited_read{"0123", true}));
    BOOST_TEST((ws.read_file_limit("big.txt", 10) == limited_read{"0123456789", false}));  // max == size
    BOOST_TEST((ws.read_file_limit("big.txt", 9) == limited_read{"012345678", true}));
    BOOST_TEST((ws.read_file_limit("big.txt", 11) == limited_read{"0123456789", false}));
    BOOST_TEST((ws.read_file_limit("big.txt", 0) == limited_read{"0123456789", false}));  // no limit
    BOOST_TEST((ws.read_file_limit("big.txt", UINT64_MAX) == limited_read{"0123456789", false}));
    SANDBOX_CHECK_REFUSED(ws.read_file_limit("../escape.txt", 10), std::errc::permission_denied, "../escape.txt");

    host_write(root / "empty.txt", "");
    BOOST_TEST((ws.read_file_limit("empty.txt", 1) == limited_read{"", false}));
}

BOOST_FIXTURE_TEST_CASE(read_file_limit_reads_at_most_max_plus_one_bytes, ws_fixture)
{
    const std::string data = pattern(100u << 20);
    host_write(root / "big.bin", data);
    const std::uint64_t max = 1000;

    const auto before = rchar();
    const auto r = ws.read_file_limit("big.bin", max);
    const auto after = rchar();
    BOOST_TEST(r.truncated);
    BOOST_TEST_REQUIRE(r.data.size() == max);
    BOOST_TEST((r.data == data.substr(0, max)));
    if (!before || !after) {
        BOOST_TEST_MESSAGE("/proc/self/io is not readable; the byte count was not checked");
        return;
    }
    BOOST_TEST(*after - *before <= max + 1 + rchar_slack);

    // The counter does see a whole read, so the bound above means something.
    const auto before_all = rchar();
    BOOST_TEST(ws.read_file("big.bin").size() == data.size());
    BOOST_TEST(*rchar() - *before_all >= data.size());
}

BOOST_FIXTURE_TEST_CASE(read_file_limit_on_a_huge_sparse_file, ws_fixture)
{
    // Reading it whole would need 64 GiB; the limit must stop long before.
    host_write(root / "sparse.bin", "");
    std::uint64_t size = std::uint64_t{64} << 30;
    if (::truncate((root / "sparse.bin").c_str(), static_cast<off_t>(size)) != 0) {
        size = std::uint64_t{1} << 30;
        BOOST_TEST_REQUIRE(::truncate((root / "sparse.bin").c_str(), static_cast<off_t>(size)) == 0);
    }
    const auto start = std::chrono::steady_clock::now();
    const auto before = rchar();
    const auto r = ws.read_file_limit("sparse.bin", 1u << 20);
    const auto after = rchar();
    BOOST_TEST(r.truncated);
    BOOST_TEST((r.data == std::string(1u << 20, '\0')));
    if (before && after) BOOST_TEST(*after - *before <= (1u << 20) + 1 + rchar_slack);
    BOOST_TEST((std::chrono::steady_clock::now() - start < std::chrono::seconds(5)));
}

// local_test.go TestWriteRoundTrip
BOOST_FIXTURE_TEST_CASE(write_round_trip, ws_fixture)
{
    ws.write_file("data.txt", "x");
    BOOST_TEST(ws.read_file("data.txt") == "x");
}

// conformance WriteReadRoundTrip
BOOST_FIXTURE_TEST_CASE(write_read_round_trip, ws_fixture)
{
    ws.write_file("data.txt", "payload");
    BOOST_TEST(ws.read_file("data.txt") == "payload");
    BOOST_TEST(host_read(root / "data.txt") == "payload");
}

// conformance ListDirSeesWrites
BOOST_FIXTURE_TEST_CASE(list_dir_sees_writes, ws_fixture)
{
    ws.write_file("a.txt", "x");
    const auto entries = ws.list_dir(".");
    BOOST_TEST((std::find(entries.begin(), entries.end(), dir_entry{"a.txt", false}) != entries.end()));
}

BOOST_FIXTURE_TEST_CASE(list_dir_sorts_and_reports_kinds, ws_fixture)
{
    ws.write_file("b.txt", "");
    ws.make_dir_all("c");
    ws.write_file("a.txt", "");
    fs::create_directory_symlink("c", root / "dlink");
    fs::create_symlink("/nowhere", root / "dangling");
    const std::vector<dir_entry> expected{
        {"a.txt", false}, {"b.txt", false}, {"c", true}, {"dangling", false}, {"dlink", false}};
    BOOST_TEST(ws.list_dir(".") == expected, boost::test_tools::per_element());
    BOOST_TEST(ws.list_dir("c").empty());

    auto err = error_of([&] { (void)ws.list_dir("a.txt"); });
    BOOST_TEST_REQUIRE(err.has_value());
    BOOST_TEST((err->code() == std::errc::not_a_directory), err->what());
    BOOST_TEST(contains(err->what(), "list_dir \"a.txt\""), err->what());
}

BOOST_FIXTURE_TEST_CASE(write_file_truncates_and_applies_mode_on_create, ws_fixture)
{
    const mode_t old = ::umask(022);
    ws.write_file("secret.txt", "long content", 0600);
    ws.write_file("open.txt", "", 0777);
    ws.write_file("secret.txt", "short", 0644);  // existing: truncated, mode kept
    ::umask(old);
    BOOST_TEST(host_read(root / "secret.txt") == "short");
    BOOST_TEST((fs::status(root / "secret.txt").permissions() == (fs::perms::owner_read | fs::perms::owner_write)));
    BOOST_TEST((fs::status(root / "open.txt").permissions() ==
                (fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                 fs::perms::others_exec)));
}

BOOST_FIXTURE_TEST_CASE(write_file_needs_an_existing_parent, ws_fixture)
{
    auto err = error_of([&] { ws.write_file("no/such/dir/f.txt", "x"); });
    BOOST_TEST_REQUIRE(err.has_value());
    BOOST_TEST((err->code() == std::errc::no_such_file_or_directory), err->what());
    BOOST_TEST(contains(err->what(), "write_file \"no/such/dir/f.txt\""), err->what());
    BOOST_TEST(!host_exists(root / "no"));
}

BOOST_FIXTURE_TEST_CASE(read_missing_file_names_operation_and_path, ws_fixture)
{
    auto err = error_of([&] { (void)ws.read_file("missing.txt"); });
    BOOST_TEST_REQUIRE(err.has_value());
    BOOST_TEST((err->code() == std::errc::no_such_file_or_directory), err->what());
    BOOST_TEST(std::string(err->what()) == "workspace: read_file \"missing.txt\": No such file or directory");

    err = error_of([&] { (void)ws.read_file_limit("missing.txt", 5); });
    BOOST_TEST_REQUIRE(err.has_value());
    BOOST_TEST(contains(err->what(), "read_file_limit \"missing.txt\""), err->what());
}

BOOST_FIXTURE_TEST_CASE(reading_a_directory_is_an_error, ws_fixture)
{
    ws.make_dir_all("d");
    for (const char* p : {"d", ".", ""}) {
        auto err = error_of([&] { (void)ws.read_file(p); });
        BOOST_TEST_REQUIRE(err.has_value());
        BOOST_TEST((err->code() == std::errc::is_a_directory), err->what());
        BOOST_TEST(contains(err->what(), std::string("\"") + p + "\""), err->what());
    }
    auto err = error_of([&] { ws.write_file("d", "x"); });
    BOOST_TEST_REQUIRE(err.has_value());
    BOOST_TEST((err->code() == std::errc::is_a_directory), err->what());
}

BOOST_FIXTURE_TEST_CASE(a_fifo_is_refused_without_blocking, ws_fixture)
{
    BOOST_TEST_REQUIRE(::mkfifo((root / "fifo").c_str(), 0644) == 0);
    auto err = error_of([&] { (void)ws.read_file("fifo"); });
    BOOST_TEST_REQUIRE(err.has_value());
    BOOST_TEST((err->code() == std::errc::invalid_argument), err->what());
    BOOST_TEST(contains(err->what(), "read_file \"fifo\": not a regular file"), err->what());
    // No reader: the non-blocking open fails instead of waiting for one.
    err = error_of([&] { ws.append_file("fifo", "x"); });
    BOOST_TEST_REQUIRE(err.has_value());
    BOOST_TEST(contains(err->what(), "append_file \"fifo\""), err->what());
}

BOOST_FIXTURE_TEST_CASE(make_dir_all_creates_nested_directories, ws_fixture)
{
    const mode_t old = ::umask(022);
    ws.make_dir_all("a/b/c", 0700);
    ::umask(old);
    BOOST_TEST(fs::is_directory(root / "a" / "b" / "c"));
    BOOST_TEST((fs::status(root / "a" / "b" / "c").permissions() == fs::perms::owner_all));
    ws.make_dir_all("a/b/c");  // exists: fine
    ws.make_dir_all("a//b/./d/");
    BOOST_TEST(fs::is_directory(root / "a" / "b" / "d"));
    ws.make_dir_all(".");
    ws.make_dir_all("");
    ws.write_file("a/b/c/f.txt", "deep");
    BOOST_TEST(ws.read_file("a/b/c/f.txt") == "deep");
}

BOOST_FIXTURE_TEST_CASE(make_dir_all_through_a_file_fails, ws_fixture)
{
    ws.write_file("f", "x");
    auto err = error_of([&] { ws.make_dir_all("f/sub"); });
    BOOST_TEST_REQUIRE(err.has_value());
    BOOST_TEST((err->code() == std::errc::not_a_directory), err->what());
    BOOST_TEST(contains(err->what(), "make_dir_all \"f/sub\""), err->what());
    err = error_of([&] { ws.make_dir_all("f"); });
    BOOST_TEST_REQUIRE(err.has_value());
    BOOST_TEST((err->code() == std::errc::not_a_directory), err->what());
}

BOOST_FIXTURE_TEST_CASE(make_dir_all_on_a_dangling_inside_symlink_fails, ws_fixture)
{
    fs::create_symlink("missing/target", root / "dl");
    auto err = error_of([&] { ws.make_dir_all("dl"); });
    BOOST_TEST_REQUIRE(err.has_value());
    BOOST_TEST((err->code() == std::errc::file_exists), err->what());
    BOOST_TEST(contains(err->what(), "\"dl\""), err->what());
}

BOOST_FIXTURE_TEST_CASE(remove_file_symlink_and_empty_directory, ws_fixture)
{
    ws.write_file("f.txt", "x");
    ws.make_dir_all("d/e");
    fs::create_symlink("f.txt", root / "link");
    ws.remove("link");
    BOOST_TEST(!host_exists(root / "link"));
    BOOST_TEST(host_exists(root / "f.txt"));  // the target stays
    ws.remove("f.txt");
    BOOST_TEST(!host_exists(root / "f.txt"));
    ws.remove("d/e");
    BOOST_TEST(!host_exists(root / "d" / "e"));
    ws.remove("d/");
    BOOST_TEST(!host_exists(root / "d"));
    BOOST_TEST(ws.list_dir(".").empty());

    auto err = error_of([&] { ws.remove("gone.txt"); });
    BOOST_TEST_REQUIRE(err.has_value());
    BOOST_TEST((err->code() == std::errc::no_such_file_or_directory), err->what());
    BOOST_TEST(contains(err->what(), "remove \"gone.txt\""), err->what());
}

BOOST_FIXTURE_TEST_CASE(remove_of_a_non_empty_directory_fails_and_keeps_content, ws_fixture)
{
    ws.make_dir_all("d/sub");
    ws.write_file("d/keep.txt", "kept");
    auto err = error_of([&] { ws.remove("d"); });
    BOOST_TEST_REQUIRE(err.has_value());
    BOOST_TEST((err->code() == std::errc::directory_not_empty), err->what());
    BOOST_TEST(contains(err->what(), "remove \"d\""), err->what());
    BOOST_TEST(ws.read_file("d/keep.txt") == "kept");
    BOOST_TEST(fs::is_directory(root / "d" / "sub"));
}

BOOST_FIXTURE_TEST_CASE(remove_refuses_the_root, ws_fixture)
{
    ws.set_mount_alias("/workspace");
    for (const char* p : {".", "", "/", "./", "a/..", "/workspace", "/workspace/"}) {
        auto err = error_of([&] { ws.remove(p); });
        BOOST_TEST_REQUIRE(err.has_value(), p);
        BOOST_TEST((err->code() == std::errc::permission_denied), err->what());
        BOOST_TEST(contains(err->what(), std::string("refused \"") + p + "\""), err->what());
        BOOST_TEST(contains(err->what(), "cannot be removed"), err->what());
        BOOST_TEST(fs::is_directory(root));
    }
}

BOOST_FIXTURE_TEST_CASE(remove_of_a_symlink_to_outside_removes_only_the_link, ws_fixture)
{
    host_write(outside / "secret.txt", "TOP SECRET");
    fs::create_symlink(outside / "secret.txt", root / "leak");
    fs::create_directory_symlink(outside, root / "leakdir");
    ws.remove("leak");
    ws.remove("leakdir");
    BOOST_TEST(!host_exists(root / "leak"));
    BOOST_TEST(!host_exists(root / "leakdir"));
    BOOST_TEST(host_read(outside / "secret.txt") == "TOP SECRET");
    BOOST_TEST(fs::is_directory(outside));
}

BOOST_FIXTURE_TEST_CASE(in_root_relative_symlinks_keep_working, ws_fixture)
{
    ws.make_dir_all("real");
    ws.make_dir_all("sub");
    ws.write_file("real/f.txt", "inner");
    fs::create_directory_symlink("real", root / "link");
    fs::create_symlink("real/f.txt", root / "flink");
    fs::create_symlink("../real/f.txt", root / "sub" / "up");  // ".." that stays inside
    fs::create_symlink("real/created.txt", root / "pending");  // dangling, inside

    BOOST_TEST(ws.read_file("link/f.txt") == "inner");
    BOOST_TEST(ws.read_file("flink") == "inner");
    BOOST_TEST(ws.read_file("sub/up") == "inner");
    ws.write_file("link/new.txt", "n");
    BOOST_TEST(host_read(root / "real" / "new.txt") == "n");
    ws.append_file("flink", "+");
    BOOST_TEST(host_read(root / "real" / "f.txt") == "inner+");
    ws.write_file("pending", "made");
    BOOST_TEST(host_read(root / "real" / "created.txt") == "made");
    const std::vector<dir_entry> expected{{"created.txt", false}, {"f.txt", false}, {"new.txt", false}};
    BOOST_TEST(ws.list_dir("link") == expected, boost::test_tools::per_element());
    ws.make_dir_all("link/a/b");
    BOOST_TEST(fs::is_directory(root / "real" / "a" / "b"));
    ws.remove("link/a/b");
    BOOST_TEST(!host_exists(root / "real" / "a" / "b"));
    BOOST_TEST(ws.rel_in_root("link/f.txt") == "link/f.txt");
}

BOOST_FIXTURE_TEST_CASE(a_100_mb_file_round_trips, ws_fixture)
{
    const std::string data = pattern(100u << 20);
    ws.write_file("big.bin", data);
    BOOST_TEST(fs::file_size(root / "big.bin") == data.size());
    const std::string back = ws.read_file("big.bin");
    BOOST_TEST_REQUIRE(back.size() == data.size());
    BOOST_TEST((back.compare(0, 4096, data, 0, 4096) == 0));
    BOOST_TEST((back.compare(back.size() - 4096, 4096, data, data.size() - 4096, 4096) == 0));
    BOOST_TEST((back == data));  // every byte, without printing 100 MB on failure

    ws.append_file("big.bin", "tail");
    const auto limited = ws.read_file_limit("big.bin", data.size() + 4);
    BOOST_TEST(!limited.truncated);
    BOOST_TEST(limited.data.size() == data.size() + 4);
    BOOST_TEST(limited.data.substr(data.size()) == "tail");
}

BOOST_FIXTURE_TEST_CASE(rel_in_root_cleans_and_fences, ws_fixture)
{
    BOOST_TEST(ws.rel_in_root(".") == ".");
    BOOST_TEST(ws.rel_in_root("") == ".");
    BOOST_TEST(ws.rel_in_root("a/../b") == "b");
    BOOST_TEST(ws.rel_in_root("./x//y/") == "x/y");
    BOOST_TEST(ws.rel_in_root("x/y/..") == "x");
    BOOST_TEST(ws.rel_in_root("/abs/p") == "abs/p");
    BOOST_TEST(ws.rel_in_root("new/dir/not/there") == "new/dir/not/there");
    ws.write_file("file.txt", "");
    BOOST_TEST(ws.rel_in_root("file.txt") == "file.txt");
    BOOST_TEST(ws.rel_in_root("file.txt/x") == "file.txt/x");  // not an escape; ops will fail

    SANDBOX_CHECK_REFUSED(ws.rel_in_root(".."), std::errc::permission_denied, "..");
    SANDBOX_CHECK_REFUSED(ws.rel_in_root("../escape"), std::errc::permission_denied, "../escape");
    SANDBOX_CHECK_REFUSED(ws.rel_in_root("a/../../x"), std::errc::permission_denied, "a/../../x");
    SANDBOX_CHECK_REFUSED(ws.rel_in_root("/.."), std::errc::permission_denied, "/..");

    fs::create_directory_symlink(outside, root / "leak");
    SANDBOX_CHECK_REFUSED(ws.rel_in_root("leak"), std::errc::cross_device_link, "leak");
    SANDBOX_CHECK_REFUSED(ws.rel_in_root("leak/deeper/x"), std::errc::cross_device_link, "leak/deeper/x");

    ws.set_mount_alias("/workspace");
    BOOST_TEST(ws.rel_in_root("/workspace") == ".");
    BOOST_TEST(ws.rel_in_root("/workspace/") == ".");
    BOOST_TEST(ws.rel_in_root("/workspace/sub/f") == "sub/f");
    BOOST_TEST(ws.rel_in_root("/workspaceX/f") == "workspaceX/f");
    BOOST_TEST(ws.rel_in_root("workspace/f") == "workspace/f");
    SANDBOX_CHECK_REFUSED(ws.rel_in_root("/workspace/../x"), std::errc::permission_denied, "/workspace/../x");
}

BOOST_FIXTURE_TEST_CASE(absolute_paths_are_taken_relative_to_the_root, ws_fixture)
{
    // "/etc/passwd" is <root>/etc/passwd, as for a command that sees the workspace as "/".
    auto err = error_of([&] { (void)ws.read_file("/etc/passwd"); });
    BOOST_TEST_REQUIRE(err.has_value());
    BOOST_TEST((err->code() == std::errc::no_such_file_or_directory), err->what());
    BOOST_TEST(contains(err->what(), "read_file \"/etc/passwd\""), err->what());

    ws.make_dir_all("/etc");
    ws.write_file("/etc/passwd", "inside passwd");
    BOOST_TEST(host_read(root / "etc" / "passwd") == "inside passwd");
    BOOST_TEST(ws.read_file("/etc/passwd") == "inside passwd");
    BOOST_TEST(ws.read_file("//etc///passwd") == "inside passwd");
    BOOST_TEST(ws.list_dir("/").size() == 1u);
}

// local_test.go TestMountAliasTranslatesToRoot
BOOST_FIXTURE_TEST_CASE(mount_alias_translates_to_root, ws_fixture)
{
    ws.set_mount_alias("/workspace");
    host_write(root / "f.txt", "hi");
    BOOST_TEST(ws.read_file("/workspace/f.txt") == "hi");
    ws.write_file("/workspace/g.txt", "x");
    BOOST_TEST(ws.read_file("g.txt") == "x");
    const std::vector<dir_entry> expected{{"f.txt", false}, {"g.txt", false}};
    BOOST_TEST(ws.list_dir("/workspace") == expected, boost::test_tools::per_element());
    BOOST_TEST(ws.list_dir("/workspace/") == expected, boost::test_tools::per_element());
    ws.make_dir_all("/workspace/d/e");
    BOOST_TEST(fs::is_directory(root / "d" / "e"));
    ws.append_file("/workspace/d/e/log", "1");
    BOOST_TEST(ws.read_file_limit("/workspace/d/e/log", 5).data == "1");
    ws.remove("/workspace/d/e/log");
    BOOST_TEST(!host_exists(root / "d" / "e" / "log"));
}

// local_test.go TestWorkdirReportsRootThenAlias
BOOST_FIXTURE_TEST_CASE(workdir_reports_root_then_alias, ws_fixture)
{
    BOOST_TEST(ws.workdir().is_absolute());
    BOOST_TEST(fs::canonical(ws.workdir()) == fs::canonical(root));
    ws.set_mount_alias("/workspace/");
    BOOST_TEST(ws.workdir() == "/workspace");
    BOOST_TEST(ws.mount_alias() == "/workspace");
    ws.set_mount_alias("");
    BOOST_TEST(ws.workdir() == root);
    ws.set_mount_alias("/");  // trims to "": disabled
    BOOST_TEST(ws.mount_alias().empty());
    BOOST_TEST(ws.workdir() == root);
}

BOOST_FIXTURE_TEST_CASE(set_mount_alias_needs_an_absolute_prefix, ws_fixture)
{
    BOOST_CHECK_THROW(ws.set_mount_alias("workspace"), std::invalid_argument);
    BOOST_CHECK_THROW(ws.set_mount_alias(std::string("/work\0space", 11)), std::invalid_argument);
    try {
        ws.set_mount_alias("rel/dir");
    } catch (const std::invalid_argument& e) {
        BOOST_TEST(contains(e.what(), "\"rel/dir\""), e.what());
        BOOST_TEST(contains(e.what(), "absolute"), e.what());
    }
    BOOST_TEST(ws.mount_alias().empty());
}

BOOST_AUTO_TEST_CASE(a_moved_workspace_keeps_working)
{
    temp_dir dir;
    workspace a(dir.path);
    a.write_file("f", "moved");
    workspace b(std::move(a));
    BOOST_TEST(b.read_file("f") == "moved");
    BOOST_TEST(b.root() == dir.path);
    temp_dir other;
    workspace c(other.path);
    c = std::move(b);
    BOOST_TEST(c.read_file("f") == "moved");
}

BOOST_AUTO_TEST_CASE(the_root_descriptor_outlives_a_rename_of_the_root)
{
    // The fence is the descriptor, not the string: renaming the root does not redirect it.
    temp_dir dir;
    fs::create_directory(dir.path / "a");
    workspace ws(dir.path / "a");
    ws.write_file("f", "in a");
    fs::rename(dir.path / "a", dir.path / "b");
    fs::create_directory(dir.path / "a");
    BOOST_TEST(ws.read_file("f") == "in a");
    ws.write_file("g", "still b");
    BOOST_TEST(host_read(dir.path / "b" / "g") == "still b");
    BOOST_TEST(!host_exists(dir.path / "a" / "g"));
}

// One family: a workspace refusal and a driver's launch failure are caught by one handler.
BOOST_FIXTURE_TEST_CASE(one_catch_covers_workspace_and_launch_errors, ws_fixture)
{
    const auto caught = [](auto&& fn) {
        try {
            fn();
        } catch (const boost::system::system_error& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    BOOST_TEST(contains(caught([&] { (void)ws.read_file("../x"); }), "refused \"../x\""));
    BOOST_TEST(contains(caught([&] { workspace w(root / "missing"); }), "missing"));
    BOOST_TEST(contains(caught([] { throw sandbox::launch_error(sandbox::errc::driver_unavailable, "Failed to start x"); }),
                        "Failed to start x"));
}

// The error_code overloads give the throwing form's code, clear it on success, never throw.
BOOST_FIXTURE_TEST_CASE(error_code_overloads_report_what_the_throwing_forms_throw, ws_fixture)
{
    boost::system::error_code ec = make_error_code(boost::system::errc::io_error);
    ws.write_file("f", "data", ec);
    BOOST_TEST(!ec);
    BOOST_TEST(ws.read_file("f", ec) == "data");
    BOOST_TEST(!ec);
    ws.append_file("f", "+", 0600, ec);
    BOOST_TEST((ws.read_file_limit("f", 3, ec) == limited_read{"dat", true}));
    BOOST_TEST(!ec);

    BOOST_TEST(ws.read_file("missing", ec).empty());
    BOOST_TEST((ec == boost::system::errc::no_such_file_or_directory), ec.message());
    BOOST_TEST(ws.read_file_limit("../f", 3, ec).data.empty());
    BOOST_TEST((ec == boost::system::errc::permission_denied), ec.message());
    ws.write_file("no/parent", "x", ec);
    BOOST_TEST((ec == boost::system::errc::no_such_file_or_directory), ec.message());
    ws.append_file("../f", "x", ec);
    BOOST_TEST((ec == boost::system::errc::permission_denied), ec.message());

    ws.make_dir_all("a/b", ec);
    BOOST_TEST(!ec);
    ws.make_dir_all("f/sub", 0700, ec);
    BOOST_TEST((ec == boost::system::errc::not_a_directory), ec.message());
    BOOST_TEST(ws.list_dir("a", ec) == (std::vector<dir_entry>{{"b", true}}));
    BOOST_TEST(!ec);
    BOOST_TEST(ws.list_dir("nope", ec).empty());
    BOOST_TEST(ec.failed());
    ws.remove("", ec);
    BOOST_TEST((ec == boost::system::errc::permission_denied), ec.message());
    ws.remove("a/b", ec);
    BOOST_TEST(!ec);
    BOOST_TEST(ws.rel_in_root("/a/./x", ec) == "a/x");
    BOOST_TEST(!ec);
    BOOST_TEST(ws.rel_in_root("../../etc", ec).empty());
    BOOST_TEST((ec == boost::system::errc::permission_denied), ec.message());

    fs::create_symlink(outside, root / "out");
    BOOST_TEST(ws.read_file("out/x", ec).empty());
    BOOST_TEST(ec.value() == EXDEV, ec.message());

    auto opened = workspace::open(root, ec);
    BOOST_TEST_REQUIRE(opened.has_value());
    BOOST_TEST(!ec);
    BOOST_TEST(opened->read_file("f") == "data+");
    BOOST_TEST(!workspace::open(root / "f", ec).has_value());
    BOOST_TEST((ec == boost::system::errc::not_a_directory), ec.message());
}

BOOST_AUTO_TEST_SUITE_END()
