// SPDX-License-Identifier: BSL-1.0
// A launch request as the spawn helper reads it: what the library wrote, field for field, and
// a truncated body refused rather than read as a shorter request.
#include "run/spawn_wire.hpp"

#include <boost/test/unit_test.hpp>

#include <string>

using namespace sandbox::detail;

BOOST_AUTO_TEST_SUITE(spawn_wire)

BOOST_AUTO_TEST_CASE(a_request_reads_back_as_it_was_written)
{
    wire::launch l;
    l.cwd = "/srv/work/sandbox-1/sub";
    l.argv = {"sh", "-c", "true"};
    l.env = {"PATH=/usr/bin"};
    l.targets = {0, 1, 2};
    l.library_pid = 4242;
    l.limits.cgroup_procs = {"/sys/fs/cgroup/x/cgroup.procs"};
    l.limits.rlimit_nproc = 64;
    l.limits.no_new_privs = true;
    l.limits.landlock_ruleset = 3;
    l.limits.read_only_view = true;
    l.limits.writable.push_back({.source = "/home/u/rw", .target = "/home/u/rw", .dev = 7, .ino = 99});
    l.limits.writable.push_back({.source = "/srv/work/sandbox-1", .target = "/srv/work/sandbox-1"});
    const auto body = wire::encode(l);

    wire::launch back;
    BOOST_TEST_REQUIRE(wire::decode(body, back));
    BOOST_TEST(back.cwd == l.cwd);
    BOOST_TEST(back.argv == l.argv);
    BOOST_TEST(back.library_pid == 4242u);
    BOOST_TEST(back.limits.rlimit_nproc == 64u);
    BOOST_TEST(back.limits.landlock_ruleset == 3);
    BOOST_TEST(back.limits.read_only_view);
    BOOST_TEST_REQUIRE(back.limits.writable.size() == 2u);
    BOOST_TEST(back.limits.writable[0].target == "/home/u/rw");
    BOOST_TEST(back.limits.writable[0].dev == 7u);
    BOOST_TEST(back.limits.writable[0].ino == 99u);
    BOOST_TEST(back.limits.writable[1].target == "/srv/work/sandbox-1");
    BOOST_TEST(back.limits.writable[1].ino == 0u);
    BOOST_TEST(!back.limits.empty());

    for (std::size_t cut = 0; cut < body.size(); ++cut) {
        wire::launch part;
        BOOST_TEST(!wire::decode(std::string_view(body).substr(0, cut), part), "decoded " << cut << " bytes");
    }
}

BOOST_AUTO_TEST_SUITE_END()
