// SPDX-License-Identifier: BSL-1.0
// remove_tree: what a command leaves in its work dir goes, whatever it did, and nothing
// outside does.
#include "drivers/support.hpp"

#include "test_support.hpp"

#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

using namespace sandbox;
using namespace sandbox::test;
namespace fs = std::filesystem;

BOOST_AUTO_TEST_SUITE(test_remove_tree)

BOOST_AUTO_TEST_CASE(a_tree_deeper_than_the_descriptor_limit_is_removed)
{
    temp_dir base;
    const auto top = base.path / "work";
    fs::create_directory(top);
    // Built with *at calls: the path gets longer than PATH_MAX.
    int fd = ::open(top.c_str(), O_RDONLY | O_DIRECTORY);
    for (int i = 0; i < 1500; ++i) {
        BOOST_REQUIRE(::mkdirat(fd, "d", 0755) == 0);
        const int next = ::openat(fd, "d", O_RDONLY | O_DIRECTORY);
        ::close(fd);
        fd = next;
    }
    ::close(::openat(fd, "leaf", O_CREAT | O_WRONLY, 0644));
    ::close(fd);
    rlimit old{};
    ::getrlimit(RLIMIT_NOFILE, &old);
    rlimit low = old;
    low.rlim_cur = 128;
    ::setrlimit(RLIMIT_NOFILE, &low);
    const bool ok = detail::remove_tree(top);
    ::setrlimit(RLIMIT_NOFILE, &old);
    BOOST_TEST(ok);
    BOOST_TEST(!fs::exists(top));
}

BOOST_AUTO_TEST_CASE(links_are_removed_never_followed)
{
    temp_dir base;
    const auto top = base.path / "work";
    const auto outside = base.path / "outside";
    fs::create_directories(top / "sub");
    fs::create_directories(outside / "keep");
    std::ofstream(outside / "keep" / "file") << "precious";
    fs::create_directory_symlink(outside, top / "link-to-dir");
    fs::create_directory_symlink(outside, top / "sub" / "nested-link");
    fs::create_symlink(outside / "keep" / "file", top / "link-to-file");
    BOOST_TEST(detail::remove_tree(top));
    BOOST_TEST(!fs::exists(top));
    BOOST_TEST(fs::exists(outside / "keep" / "file"));
    // The work dir itself being a link: the link goes, its target stays.
    fs::create_directory_symlink(outside, base.path / "work-link");
    BOOST_TEST(detail::remove_tree(base.path / "work-link"));
    BOOST_TEST(fs::exists(outside / "keep" / "file"));
}

BOOST_AUTO_TEST_CASE(directories_a_command_locked_are_removed_too)
{
    // As an unprivileged user (root ignores permissions): a command that chmod'ed parts of
    // its work dir to 000 or 500 must not leave them behind.
    temp_dir base;
    const auto top = base.path / "work";
    fs::create_directories(top / "locked" / "inner");
    std::ofstream(top / "locked" / "inner" / "f") << "x";
    fs::create_directories(top / "readonly");
    std::ofstream(top / "readonly" / "g") << "y";
    if (::geteuid() == 0) {
        ::chmod(base.path.c_str(), 0755);
        for (auto& p : fs::recursive_directory_iterator(top)) ::lchown(p.path().c_str(), 65534, 65534);
        ::chown(top.c_str(), 65534, 65534);
    }
    ::chmod((top / "locked").c_str(), 0);
    ::chmod((top / "readonly").c_str(), 0500);
    const pid_t pid = ::fork();
    if (pid == 0) {
        if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(3);
        // The parent of the work dir must be writable for its final rmdir: it is the base
        // dir, owned by the caller; here the caller is uid 65534 only for the contents.
        ::_exit(detail::remove_tree(top) || !fs::exists(top / "locked") ? 0 : 1);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    BOOST_TEST(WIFEXITED(status));
    BOOST_TEST(!fs::exists(top / "locked"));
    BOOST_TEST(!fs::exists(top / "readonly"));
}

BOOST_AUTO_TEST_SUITE_END()
