// SPDX-License-Identifier: BSL-1.0
// Where the spawn helper looks for a command, as execvp would. The list once held views of a
// temporary copy of the PATH, which allocations made while building it could overwrite: a
// command on the PATH was then, now and then, "No such file or directory".
#include "run/spawn_wire.hpp"

#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

using sandbox::detail::wire::exec_candidates;
using strings = std::vector<std::string>;

BOOST_AUTO_TEST_SUITE(exec_candidates_of_a_name)

BOOST_AUTO_TEST_CASE(a_name_with_a_slash_is_itself)
{
    BOOST_TEST(exec_candidates("/bin/true", "/a:/b") == strings{"/bin/true"}, boost::test_tools::per_element());
    BOOST_TEST(exec_candidates("./run", "/a") == strings{"./run"}, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(each_directory_of_the_path_in_order)
{
    BOOST_TEST(exec_candidates("sleep", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin") ==
                   (strings{"/usr/local/sbin/sleep", "/usr/local/bin/sleep", "/usr/sbin/sleep", "/usr/bin/sleep",
                            "/sbin/sleep", "/bin/sleep"}),
               boost::test_tools::per_element());
    // An empty entry is the current directory, as for execvp.
    BOOST_TEST(exec_candidates("x", "/a::/b:") == (strings{"/a/x", "./x", "/b/x", "./x"}), boost::test_tools::per_element());
    BOOST_TEST(exec_candidates("x", "") == (strings{"/usr/local/bin/x", "/usr/bin/x", "/bin/x"}),
               boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(the_path_may_be_a_temporary_and_long)
{
    // Every candidate is its own string: nothing refers to the argument once it has returned.
    std::string path;
    for (int i = 0; i < 200; ++i) path += (i ? ":" : "") + std::string("/dir") + std::to_string(i) + std::string(40, 'p');
    const auto got = exec_candidates("cmd", std::string(path));
    BOOST_TEST_REQUIRE(got.size() == 200u);
    BOOST_TEST(got.front() == "/dir0" + std::string(40, 'p') + "/cmd");
    BOOST_TEST(got.back() == "/dir199" + std::string(40, 'p') + "/cmd");
}

BOOST_AUTO_TEST_SUITE_END()
