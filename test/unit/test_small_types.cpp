// SPDX-License-Identifier: BSL-1.0
// Small value types: driver names, make_runner by name, exit codes, argv, command_spec, mount,
// isolation, and the to_string functions.
#include <sandbox/sandbox.hpp>

#include <boost/test/unit_test.hpp>

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

using sandbox::driver;

namespace {

constexpr const char* allowed = ". Allowed: host, docker, podman, firejail, bubblewrap, slurm, landlock";

// what() of the std::invalid_argument from parse_driver(name), or "" if none.
std::string parse_error(std::string_view name)
{
    try {
        (void)sandbox::parse_driver(name);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(test_small_types)

BOOST_AUTO_TEST_CASE(driver_names_round_trip_for_every_driver)
{
    const std::pair<driver, const char*> names[] = {
        {driver::host, "host"},         {driver::docker, "docker"},         {driver::podman, "podman"},
        {driver::firejail, "firejail"}, {driver::bubblewrap, "bubblewrap"}, {driver::slurm, "slurm"},
    };
    for (const auto& [d, name] : names) {
        BOOST_TEST(sandbox::to_string(d) == name);
        BOOST_TEST((sandbox::parse_driver(name) == d), name);
    }
    BOOST_TEST(sandbox::all_drivers.size() == 7u);
}

BOOST_AUTO_TEST_CASE(parse_driver_rejects_unknown_names_with_the_exact_message)
{
    BOOST_TEST(parse_error("not-a-driver") ==
               "Unsupported sandbox driver: not-a-driver. Allowed: host, docker, podman, firejail, bubblewrap, slurm, landlock");
    BOOST_TEST(parse_error("") == std::string("Unsupported sandbox driver: ") + allowed);
}

BOOST_AUTO_TEST_CASE(parse_driver_is_exact_and_case_sensitive)
{
    for (const char* name : {"Docker", "HOST", "Podman", "bwrap", "firejail ", " host", "bubble-wrap", "dock"}) {
        BOOST_TEST_CONTEXT("name \"" << name << "\"")
        {
            BOOST_TEST(parse_error(name) == std::string("Unsupported sandbox driver: ") + name + allowed);
        }
    }
}

BOOST_AUTO_TEST_CASE(make_runner_by_bad_name_throws_the_parse_driver_message)
{
    try {
        (void)sandbox::make_runner(sandbox::execution_policy::defaults(), "not-a-driver");
        BOOST_FAIL("expected std::invalid_argument");
    } catch (const std::invalid_argument& e) {
        BOOST_TEST(std::string(e.what()) ==
                   "Unsupported sandbox driver: not-a-driver. Allowed: host, docker, podman, firejail, bubblewrap, slurm, landlock");
    }
    BOOST_CHECK_THROW((void)sandbox::make_runner(sandbox::execution_policy::defaults(), "bwrap"), std::invalid_argument);
    BOOST_CHECK_THROW((void)sandbox::make_runner(sandbox::execution_policy::defaults(), "Docker"), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(make_runner_constructs_every_driver_even_with_a_missing_binary)
{
    const auto policy = sandbox::execution_policy::in("/tmp").with_timeout(std::chrono::seconds(3));
    sandbox::driver_options options;
    options.binary = "/definitely-not-a-real-binary";
    for (driver d : sandbox::all_drivers) {
        BOOST_TEST_CONTEXT("driver " << sandbox::to_string(d))
        {
            std::unique_ptr<sandbox::command_runner> by_enum;
            BOOST_CHECK_NO_THROW(by_enum = sandbox::make_runner(policy, d, options));
            BOOST_TEST_REQUIRE(static_cast<bool>(by_enum));
            BOOST_TEST((by_enum->policy() == policy));

            std::unique_ptr<sandbox::command_runner> by_name;
            BOOST_CHECK_NO_THROW(by_name = sandbox::make_runner(policy, sandbox::to_string(d), options));
            BOOST_TEST_REQUIRE(static_cast<bool>(by_name));
            BOOST_TEST((by_name->policy() == policy));

            std::unique_ptr<sandbox::command_runner> with_defaults;
            BOOST_CHECK_NO_THROW(with_defaults = sandbox::make_runner(policy, d));
            BOOST_TEST(static_cast<bool>(with_defaults));
        }
    }
}

BOOST_AUTO_TEST_CASE(driver_options_defaults)
{
    const sandbox::driver_options o;
    BOOST_TEST(o.image == "alpine:3");
    BOOST_TEST(o.binary.empty());
}

BOOST_AUTO_TEST_CASE(exit_codes_have_the_conventional_values)
{
    static_assert(sandbox::exit_codes::timeout == 124);
    static_assert(sandbox::exit_codes::command_not_found == 127);
    BOOST_TEST(sandbox::exit_codes::timeout == 124);
    BOOST_TEST(sandbox::exit_codes::command_not_found == 127);
}

BOOST_AUTO_TEST_CASE(argv_of_keeps_the_items_in_order)
{
    const auto a = sandbox::argv::of({"php", "-v"});
    BOOST_TEST(a.to_vector() == (std::vector<std::string>{"php", "-v"}), boost::test_tools::per_element());
    BOOST_TEST(a.size() == 2u);
    BOOST_TEST(!a.empty());

    const std::vector<std::string> items{"ls", "-l", "/tmp"};
    BOOST_TEST(sandbox::argv::of(items).to_vector() == items, boost::test_tools::per_element());

    BOOST_TEST(sandbox::argv().empty());
    BOOST_TEST(sandbox::argv::of(std::vector<std::string>{}).to_vector().empty());
}

BOOST_AUTO_TEST_CASE(argv_with_returns_a_new_argv_and_leaves_the_original_unchanged)
{
    const auto a = sandbox::argv::of({"echo"});
    const auto b = a.with("hello");
    const auto c = b.with("world");
    BOOST_TEST(a.to_vector() == (std::vector<std::string>{"echo"}), boost::test_tools::per_element());
    BOOST_TEST(b.to_vector() == (std::vector<std::string>{"echo", "hello"}), boost::test_tools::per_element());
    BOOST_TEST(c.to_vector() == (std::vector<std::string>{"echo", "hello", "world"}), boost::test_tools::per_element());
    BOOST_TEST((a != b));
    BOOST_TEST((b == sandbox::argv::of({"echo", "hello"})));
    // Items are kept verbatim: no splitting on spaces.
    BOOST_TEST(a.with("a b").size() == 2u);
}

BOOST_AUTO_TEST_CASE(command_spec_holds_argv_and_optional_stdin)
{
    const sandbox::command_spec plain{sandbox::argv::of({"cat"}), std::nullopt};
    BOOST_TEST(plain.argv.to_vector() == (std::vector<std::string>{"cat"}), boost::test_tools::per_element());
    BOOST_TEST(!plain.stdin.has_value());

    const sandbox::command_spec fed{sandbox::argv::of({"cat", "-n"}), "hello\n"};
    BOOST_TEST(fed.argv.size() == 2u);
    BOOST_TEST(fed.stdin.value() == "hello\n");

    const sandbox::command_spec defaulted{sandbox::argv::of({"true"}), {}};
    BOOST_TEST(!defaulted.stdin.has_value());
    BOOST_TEST((defaulted == sandbox::command_spec{sandbox::argv::of({"true"}), std::nullopt}));
    BOOST_TEST((plain != fed));
}

BOOST_AUTO_TEST_CASE(mount_to_volume_arg_joins_with_colons)
{
    const sandbox::mount ro{"/host/data", "/container/data", "ro"};
    BOOST_TEST(ro.to_volume_arg() == "/host/data:/container/data:ro");

    const sandbox::mount rw{"/src", "/dest", "rw"};
    BOOST_TEST(rw.host == "/src");
    BOOST_TEST(rw.container == "/dest");
    BOOST_TEST(rw.options == "rw");
    BOOST_TEST(rw.to_volume_arg() == "/src:/dest:rw");
}

BOOST_AUTO_TEST_CASE(isolation_levels_are_ordered_weakest_first)
{
    using sandbox::isolation;
    static_assert(isolation::none < isolation::namespaces);
    static_assert(isolation::namespaces < isolation::container);
    BOOST_TEST((isolation::none < isolation::namespaces));
    BOOST_TEST((isolation::namespaces < isolation::container));
    BOOST_TEST((isolation::none < isolation::container));
    BOOST_TEST((isolation::container >= isolation::namespaces));
}

BOOST_AUTO_TEST_CASE(capabilities_default_to_no_isolation)
{
    const sandbox::capabilities c;
    BOOST_TEST(sandbox::to_string(c.level) == "none");
    BOOST_TEST(!c.network_isolated);
    BOOST_TEST(!c.memory_enforced);
    BOOST_TEST(!c.filesystem_confined);
}

BOOST_AUTO_TEST_CASE(to_string_names_the_enumerators)
{
    BOOST_TEST(sandbox::to_string(sandbox::timeout_reason::wall) == "wall");
    BOOST_TEST(sandbox::to_string(sandbox::timeout_reason::idle) == "idle");
    BOOST_TEST(sandbox::to_string(sandbox::stream_kind::out) == "out");
    BOOST_TEST(sandbox::to_string(sandbox::stream_kind::err) == "err");
    BOOST_TEST(sandbox::to_string(sandbox::isolation::none) == "none");
    BOOST_TEST(sandbox::to_string(sandbox::isolation::namespaces) == "namespaces");
    BOOST_TEST(sandbox::to_string(sandbox::isolation::container) == "container");
}

BOOST_AUTO_TEST_SUITE_END()
