// SPDX-License-Identifier: BSL-1.0
// execution_policy: defaults, clamps, memory normalisation, withers and with(policy_changes).
#include <sandbox/sandbox.hpp>

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using sandbox::env_list;
using sandbox::execution_policy;

namespace {

// "NAME=value;..." so a mismatch shows both lists.
std::string show(const env_list& env)
{
    std::string s;
    for (const auto& [k, v] : env) s += k + "=" + v + ";";
    return s;
}

std::vector<std::string> strings(const std::vector<std::filesystem::path>& paths)
{
    std::vector<std::string> out;
    for (const auto& p : paths) out.push_back(p.string());
    return out;
}

// The message of the std::invalid_argument thrown by with_memory(limit), or "" if none.
std::string memory_error(std::string_view limit)
{
    try {
        (void)execution_policy::defaults().with_memory(limit);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

std::string normalized(std::string_view limit) { return execution_policy::defaults().with_memory(limit).memory_limit(); }

}  // namespace

BOOST_AUTO_TEST_SUITE(test_execution_policy)

BOOST_AUTO_TEST_CASE(defaults_match_the_contract)
{
    for (const execution_policy& p : {execution_policy(), execution_policy::defaults()}) {
        BOOST_TEST(p.base_dir() == std::filesystem::path("/tmp"));
        BOOST_TEST(p.timeout().count() == 5000);
        BOOST_TEST(!p.idle_timeout().has_value());
        BOOST_TEST(p.memory_limit() == "128M");
        BOOST_TEST(p.memory_limit_bytes() == std::uint64_t{128} * 1024 * 1024);
        BOOST_TEST(p.readable_paths().empty());
        BOOST_TEST(p.writable_paths().empty());
        BOOST_TEST(p.env().empty());
        BOOST_TEST(!p.inherit_env());
        BOOST_TEST(!p.network_enabled());
        BOOST_TEST(p.stdout_limit_bytes() == 1048576u);
        BOOST_TEST(p.stderr_limit_bytes() == 1048576u);
    }
    BOOST_TEST((execution_policy() == execution_policy::defaults()));
}

BOOST_AUTO_TEST_CASE(in_sets_only_the_base_dir)
{
    const auto p = execution_policy::in("/srv/work");
    BOOST_TEST(p.base_dir() == std::filesystem::path("/srv/work"));
    BOOST_TEST((p.with_base_dir("/tmp") == execution_policy::defaults()));
}

BOOST_AUTO_TEST_CASE(timeout_below_one_millisecond_is_clamped_to_one_millisecond)
{
    const auto p = execution_policy::defaults();
    BOOST_TEST(p.with_timeout(0ms).timeout().count() == 1);
    BOOST_TEST(p.with_timeout(-5ms).timeout().count() == 1);
    BOOST_TEST(p.with_timeout(-5000ms).timeout().count() == 1);
    BOOST_TEST(p.with_timeout(1ms).timeout().count() == 1);
}

BOOST_AUTO_TEST_CASE(sub_second_timeouts_are_kept)
{
    const auto p = execution_policy::defaults();
    BOOST_TEST(p.with_timeout(250ms).timeout().count() == 250);
    BOOST_TEST(p.with_timeout(2ms).timeout().count() == 2);
    BOOST_TEST(p.with_timeout(std::chrono::minutes(2)).timeout().count() == 120000);
}

BOOST_AUTO_TEST_CASE(idle_timeout_below_one_millisecond_is_clamped_to_one_millisecond)
{
    const auto p = execution_policy::defaults();
    BOOST_TEST(p.with_idle_timeout(0ms).idle_timeout().value().count() == 1);
    BOOST_TEST(p.with_idle_timeout(-3ms).idle_timeout().value().count() == 1);
    BOOST_TEST(p.with_idle_timeout(750ms).idle_timeout().value().count() == 750);
    BOOST_TEST(p.with({.idle_timeout = 0ms}).idle_timeout().value().count() == 1);
}

BOOST_AUTO_TEST_CASE(output_caps_below_1024_are_clamped_to_1024)
{
    const auto p = execution_policy::defaults().with_output_caps(100, 50);
    BOOST_TEST(p.stdout_limit_bytes() == 1024u);
    BOOST_TEST(p.stderr_limit_bytes() == 1024u);

    const auto zero = execution_policy::defaults().with_output_caps(0, 0);
    BOOST_TEST(zero.stdout_limit_bytes() == 1024u);
    BOOST_TEST(zero.stderr_limit_bytes() == 1024u);

    const auto exact = execution_policy::defaults().with_output_caps(1024, 1023);
    BOOST_TEST(exact.stdout_limit_bytes() == 1024u);
    BOOST_TEST(exact.stderr_limit_bytes() == 1024u);

    const auto big = execution_policy::defaults().with_output_caps(4096, 1025);
    BOOST_TEST(big.stdout_limit_bytes() == 4096u);
    BOOST_TEST(big.stderr_limit_bytes() == 1025u);

    const auto via_with = execution_policy::defaults().with({.stdout_limit_bytes = 1, .stderr_limit_bytes = 2});
    BOOST_TEST(via_with.stdout_limit_bytes() == 1024u);
    BOOST_TEST(via_with.stderr_limit_bytes() == 1024u);
}

BOOST_AUTO_TEST_CASE(memory_limit_is_normalized_to_whole_mebibytes)
{
    BOOST_TEST(normalized("256M") == "256M");
    BOOST_TEST(normalized("1G") == "1024M");
    BOOST_TEST(normalized("512k") == "1M");
    BOOST_TEST(normalized("512K") == "1M");
    BOOST_TEST(normalized("65536K") == "64M");
    BOOST_TEST(normalized(" 256m ") == "256M");
    BOOST_TEST(normalized("\t64m\n") == "64M");
    BOOST_TEST(normalized("2G") == "2048M");
    BOOST_TEST(normalized("1025M") == "1025M");
    BOOST_TEST(normalized("134217728") == "128M");
    BOOST_TEST(normalized("1536K") == "1M");
    BOOST_TEST(normalized("1048575") == "1M");
    BOOST_TEST(normalized("1048576") == "1M");
    BOOST_TEST(normalized("0") == "1M");
    BOOST_TEST(normalized("0G") == "1M");
    BOOST_TEST(normalized("007M") == "7M");
    BOOST_TEST(execution_policy::normalize_memory_limit("1g") == "1024M");
}

BOOST_AUTO_TEST_CASE(memory_limit_has_no_one_gibibyte_ceiling)
{
    BOOST_TEST(normalized("2G") == "2048M");
    BOOST_TEST(normalized("64G") == "65536M");
    BOOST_TEST(normalized("4096G") == "4194304M");
    // The largest values whose byte count still fits in 64 bits.
    BOOST_TEST(normalized("17592186044415M") == "17592186044415M");
    BOOST_TEST(normalized("17179869183G") == "17592186043392M");
}

BOOST_AUTO_TEST_CASE(memory_limit_bytes_is_the_normalized_value_in_bytes)
{
    constexpr std::uint64_t mib = 1024 * 1024;
    const auto p = execution_policy::defaults();
    BOOST_TEST(p.memory_limit_bytes() == 128 * mib);
    BOOST_TEST(p.with_memory("1G").memory_limit_bytes() == 1024 * mib);
    BOOST_TEST(p.with_memory("2G").memory_limit_bytes() == std::uint64_t{2147483648});
    BOOST_TEST(p.with_memory("512k").memory_limit_bytes() == mib);
    BOOST_TEST(p.with_memory("0").memory_limit_bytes() == mib);
    BOOST_TEST(p.with_memory("1536K").memory_limit_bytes() == mib);
    BOOST_TEST(p.with_memory("134217728").memory_limit_bytes() == 128 * mib);
    BOOST_TEST(p.with_memory("4096G").memory_limit_bytes() == std::uint64_t{4096} * 1024 * mib);
    BOOST_TEST(p.with_memory("17592186044415M").memory_limit_bytes() == std::uint64_t{17592186044415} * mib);
}

BOOST_AUTO_TEST_CASE(unbounded_memory_limit_is_rejected_with_its_own_message)
{
    BOOST_TEST(memory_error("-1") == "Unbounded memory limit (-1) is not allowed");
    BOOST_TEST(memory_error(" -1 ") == "Unbounded memory limit (-1) is not allowed");
    BOOST_CHECK_THROW((void)execution_policy::normalize_memory_limit("-1"), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(malformed_memory_limits_are_rejected)
{
    for (const char* bad : {"abc", "1.5G", "256MB", "", "   ", "-5M", "+5M", "5 M", "M", "G", "1T", "0x10M", "5MM",
                            "-0", "1_000M"}) {
        BOOST_TEST_CONTEXT("limit \"" << bad << "\"")
        {
            BOOST_TEST(memory_error(bad) == "Invalid memory limit format");
        }
    }
}

BOOST_AUTO_TEST_CASE(memory_limits_overflowing_64_bits_are_rejected)
{
    for (const char* bad : {"99999999999999999999", "18446744073709551616", "18446744073709551615G",
                            "18446744073709551615K", "17592186044416M", "17179869184G"}) {
        BOOST_TEST_CONTEXT("limit \"" << bad << "\"")
        {
            BOOST_TEST(memory_error(bad) == "Invalid memory limit format");
        }
    }
    // 2^64 - 1 bytes fits: it is just under 16 EiB.
    BOOST_TEST(normalized("18446744073709551615") == "17592186044415M");
}

BOOST_AUTO_TEST_CASE(a_rejected_memory_limit_leaves_the_policy_unchanged)
{
    const auto p = execution_policy::defaults().with_memory("256M");
    BOOST_CHECK_THROW((void)p.with_memory("abc"), std::invalid_argument);
    BOOST_CHECK_THROW((void)p.with({.timeout = 9s, .memory_limit = "-1"}), std::invalid_argument);
    BOOST_TEST(p.memory_limit() == "256M");
    BOOST_TEST(p.timeout().count() == 5000);
}

BOOST_AUTO_TEST_CASE(withers_return_new_values_and_leave_the_original_unchanged)
{
    const auto original = execution_policy::in("/work");
    const auto a = original.with_timeout(10s).with_network(true);
    const auto b = a.with_memory("256M");

    BOOST_TEST(b.base_dir() == std::filesystem::path("/work"));
    BOOST_TEST(b.timeout().count() == 10000);
    BOOST_TEST(b.network_enabled());
    BOOST_TEST(b.memory_limit() == "256M");

    BOOST_TEST(a.memory_limit() == "128M");
    BOOST_TEST(a.timeout().count() == 10000);
    BOOST_TEST(a.network_enabled());
    BOOST_TEST((a != b));

    BOOST_TEST((original == execution_policy::in("/work")));
    BOOST_TEST(original.timeout().count() == 5000);
    BOOST_TEST(!original.network_enabled());

    // Every wither, applied to the same value, leaves it alone.
    const auto base = execution_policy::defaults();
    (void)base.with_base_dir("/elsewhere");
    (void)base.with_timeout(1s);
    (void)base.with_idle_timeout(1s);
    (void)base.with_memory("1G");
    (void)base.with_readable_paths({"/r"});
    (void)base.with_writable_paths({"/w"});
    (void)base.with_env({{"A", "1"}}, true);
    (void)base.inherit_environment();
    (void)base.with_network(true);
    (void)base.with_output_caps(2048, 2048);
    (void)base.with({.timeout = 60s, .memory_limit = "512M", .network_enabled = true});
    BOOST_TEST((base == execution_policy::defaults()));
}

BOOST_AUTO_TEST_CASE(each_wither_changes_only_its_own_field)
{
    const auto base = execution_policy::defaults();
    BOOST_TEST((base.with_network(true) == base.with({.network_enabled = true})));
    BOOST_TEST((base.with_network(true).with_network(false) == base));
    BOOST_TEST((base.inherit_environment() == base.with({.inherit_env = true})));
    BOOST_TEST((base.inherit_environment().inherit_environment(false) == base));
    BOOST_TEST((base.with_timeout(7s) == base.with({.timeout = 7s})));
    BOOST_TEST((base.with_base_dir("/x") == execution_policy::in("/x")));
}

BOOST_AUTO_TEST_CASE(readable_and_writable_paths_are_replaced_not_merged)
{
    const auto p = execution_policy::defaults().with_readable_paths({"/a", "/b"}).with_writable_paths({"/c"});
    BOOST_TEST(strings(p.readable_paths()) == (std::vector<std::string>{"/a", "/b"}), boost::test_tools::per_element());
    BOOST_TEST(strings(p.writable_paths()) == (std::vector<std::string>{"/c"}), boost::test_tools::per_element());

    const auto q = p.with_readable_paths({"/z"}).with_writable_paths({"/y", "/x"});
    BOOST_TEST(strings(q.readable_paths()) == (std::vector<std::string>{"/z"}), boost::test_tools::per_element());
    BOOST_TEST(strings(q.writable_paths()) == (std::vector<std::string>{"/y", "/x"}), boost::test_tools::per_element());

    const auto cleared = q.with_readable_paths({}).with_writable_paths({});
    BOOST_TEST(cleared.readable_paths().empty());
    BOOST_TEST(cleared.writable_paths().empty());

    // The original keeps its lists.
    BOOST_TEST(strings(p.readable_paths()) == (std::vector<std::string>{"/a", "/b"}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(with_env_replaces_the_variables_and_keeps_their_order)
{
    const auto p = execution_policy::defaults().with_env({{"ZED", "1"}, {"ALPHA", "2"}, {"MID", "3"}});
    BOOST_TEST(show(p.env()) == "ZED=1;ALPHA=2;MID=3;");

    const auto q = p.with_env({{"OTHER", "x"}});
    BOOST_TEST(show(q.env()) == "OTHER=x;");
    BOOST_TEST(show(p.env()) == "ZED=1;ALPHA=2;MID=3;");

    BOOST_TEST(q.with_env({}).env().empty());
}

BOOST_AUTO_TEST_CASE(with_env_without_inherit_keeps_the_inherit_flag)
{
    // PHP: preserves inheritEnv when applying withEnv without explicit inherit override.
    const auto p = execution_policy::in("/tmp").inherit_environment(true).with_env({{"FOO", "BAR"}});
    BOOST_TEST(p.inherit_env());
    BOOST_TEST(show(p.env()) == "FOO=BAR;");

    const auto q = execution_policy::in("/tmp").with_env({{"FOO", "BAR"}});
    BOOST_TEST(!q.inherit_env());
}

BOOST_AUTO_TEST_CASE(with_env_with_inherit_overrides_the_inherit_flag)
{
    // PHP: allows explicitly overriding inheritEnv in withEnv.
    const auto p = execution_policy::in("/tmp").inherit_environment(true).with_env({{"FOO", "BAR"}}, false);
    BOOST_TEST(!p.inherit_env());
    BOOST_TEST(show(p.env()) == "FOO=BAR;");

    const auto q = execution_policy::in("/tmp").with_env({{"FOO", "BAR"}}, true);
    BOOST_TEST(q.inherit_env());
}

BOOST_AUTO_TEST_CASE(inherit_environment_defaults_to_true)
{
    BOOST_TEST(execution_policy::defaults().inherit_environment().inherit_env());
    BOOST_TEST(!execution_policy::defaults().inherit_environment(false).inherit_env());
}

BOOST_AUTO_TEST_CASE(with_idle_timeout_nullopt_clears_a_set_idle_timeout)
{
    const auto set = execution_policy::defaults().with_idle_timeout(3s);
    BOOST_TEST(set.idle_timeout().value().count() == 3000);

    const auto cleared = set.with_idle_timeout(std::nullopt);
    BOOST_TEST(!cleared.idle_timeout().has_value());
    BOOST_TEST((cleared == execution_policy::defaults()));

    BOOST_TEST(!execution_policy::defaults().with_idle_timeout(std::nullopt).idle_timeout().has_value());
    BOOST_TEST(set.idle_timeout().has_value());
}

BOOST_AUTO_TEST_CASE(with_policy_changes_accepts_designated_initializers)
{
    const auto p = execution_policy::defaults().with({.timeout = 60s, .memory_limit = "512M", .network_enabled = true});
    BOOST_TEST(p.timeout().count() == 60000);
    BOOST_TEST(p.memory_limit() == "512M");
    BOOST_TEST(p.network_enabled());
    // Untouched fields keep their values.
    BOOST_TEST(p.base_dir() == std::filesystem::path("/tmp"));
    BOOST_TEST(!p.idle_timeout().has_value());
    BOOST_TEST(!p.inherit_env());
    BOOST_TEST(p.stdout_limit_bytes() == 1048576u);
}

BOOST_AUTO_TEST_CASE(with_policy_changes_sets_and_clears_the_idle_timeout)
{
    const auto set = execution_policy::defaults().with({.idle_timeout = 10s});
    BOOST_TEST(set.idle_timeout().value().count() == 10000);

    const auto kept = set.with({.timeout = 20s});
    BOOST_TEST(kept.idle_timeout().value().count() == 10000);

    const auto cleared = set.with({.idle_timeout = sandbox::no_idle_timeout});
    BOOST_TEST(!cleared.idle_timeout().has_value());
    BOOST_TEST(set.idle_timeout().has_value());
}

BOOST_AUTO_TEST_CASE(with_policy_changes_can_set_every_field)
{
    const auto p = execution_policy::defaults().with({
        .base_dir = "/srv",
        .timeout = 1500ms,
        .idle_timeout = 500ms,
        .memory_limit = "1g",
        .readable_paths = std::vector<std::filesystem::path>{"/r1", "/r2"},
        .writable_paths = std::vector<std::filesystem::path>{"/w"},
        .env = env_list{{"B", "2"}, {"A", "1"}},
        .inherit_env = true,
        .network_enabled = true,
        .stdout_limit_bytes = 2048,
        .stderr_limit_bytes = 10,
    });
    BOOST_TEST(p.base_dir() == std::filesystem::path("/srv"));
    BOOST_TEST(p.timeout().count() == 1500);
    BOOST_TEST(p.idle_timeout().value().count() == 500);
    BOOST_TEST(p.memory_limit() == "1024M");
    BOOST_TEST(strings(p.readable_paths()) == (std::vector<std::string>{"/r1", "/r2"}), boost::test_tools::per_element());
    BOOST_TEST(strings(p.writable_paths()) == (std::vector<std::string>{"/w"}), boost::test_tools::per_element());
    BOOST_TEST(show(p.env()) == "B=2;A=1;");
    BOOST_TEST(p.inherit_env());
    BOOST_TEST(p.network_enabled());
    BOOST_TEST(p.stdout_limit_bytes() == 2048u);
    BOOST_TEST(p.stderr_limit_bytes() == 1024u);

    // Empty changes change nothing.
    BOOST_TEST((p.with({}) == p));
}

BOOST_AUTO_TEST_CASE(invalid_env_names_throw_invalid_argument_naming_the_name)
{
    const auto p = execution_policy::defaults();
    try {
        (void)p.with_env({{"GOOD", "1"}, {"A=B", "x"}});
        BOOST_FAIL("expected std::invalid_argument for A=B");
    } catch (const std::invalid_argument& e) {
        BOOST_TEST(std::string(e.what()).find("A=B") != std::string::npos, "message: " << e.what());
    }
    try {
        (void)p.with_env({{"", "x"}});
        BOOST_FAIL("expected std::invalid_argument for an empty name");
    } catch (const std::invalid_argument& e) {
        BOOST_TEST(std::string(e.what()).find("\"\"") != std::string::npos, "message: " << e.what());
    }
    BOOST_CHECK_THROW((void)p.with({.env = env_list{{"A=B", "x"}}}), std::invalid_argument);
    BOOST_CHECK_THROW((void)p.with_env({{std::string("A\0B", 3), "x"}}), std::invalid_argument);
    // Values may hold '=' and be empty.
    BOOST_TEST(show(p.with_env({{"A", "b=c"}, {"E", ""}}).env()) == "A=b=c;E=;");
}

BOOST_AUTO_TEST_SUITE_END()
