// SPDX-License-Identifier: BSL-1.0
// Idmapped bind mounts, the ground of writable paths for root callers: a root-owned 0755
// directory becomes writable by the sandbox uid through the mount, what it writes belongs to
// the owner, and nothing changes on the host.
#include "driver_fixture.hpp"

#include "sys/idmap.hpp"
#include "sys/mounts.hpp"

#include <boost/test/unit_test.hpp>

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
    const auto why = detail::attach_idmapped(host.path, target, {0, 0}, {65534, 65534});
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

BOOST_AUTO_TEST_CASE(a_missing_source_is_named)
{
    if (::geteuid() != 0) return;
    scratch_dir stage(0700);
    const auto why = detail::attach_idmapped(stage.path / "missing", stage.sub("t"), {0, 0}, {65534, 65534});
    BOOST_TEST(why.find(stage.path.string() + "/missing") != std::string::npos, why);
}

BOOST_AUTO_TEST_SUITE_END()
