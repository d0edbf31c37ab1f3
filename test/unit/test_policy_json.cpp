// SPDX-License-Identifier: BSL-1.0
// execution_policy <-> JSON: round trip, defaults, overlays and errors that name the key.
#include <sandbox/sandbox.hpp>

#include <boost/json.hpp>
#include <boost/system/system_error.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

using namespace std::chrono_literals;
namespace json = boost::json;
using sandbox::env_list;
using sandbox::execution_policy;

namespace {

std::string show(const env_list& env)
{
    std::string s;
    for (const auto& [k, v] : env) s += k + "=" + v + ";";
    return s;
}

execution_policy from(const json::value& jv) { return json::value_to<execution_policy>(jv); }
execution_policy from_text(std::string_view text) { return from(json::parse(text)); }

// what() of the std::invalid_argument that value_to throws for `text`, or "" if none.
std::string error_for(std::string_view text)
{
    try {
        (void)from_text(text);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

bool contains(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

execution_policy customised()
{
    return execution_policy::in("/srv/sandbox")
        .with_timeout(2500ms)
        .with_idle_timeout(750ms)
        .with_memory("2G")
        .with_readable_paths({"/opt/data", "/etc/hosts"})
        .with_writable_paths({"/var/cache/x"})
        .with_env({{"ZED", "last"}, {"APP_ENV", "test"}, {"EMPTY", ""}}, true)
        .with_network(true)
        .with_output_caps(4096, 8192);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(test_policy_json)

BOOST_AUTO_TEST_CASE(a_fully_customised_policy_survives_a_round_trip)
{
    const auto p = customised();
    const json::value jv = json::value_from(p);
    const auto back = from(jv);
    BOOST_TEST((back == p));
    BOOST_TEST(back.base_dir() == std::filesystem::path("/srv/sandbox"));
    BOOST_TEST(back.timeout().count() == 2500);
    BOOST_TEST(back.idle_timeout().value().count() == 750);
    BOOST_TEST(back.memory_limit() == "2048M");
    BOOST_TEST(show(back.env()) == "ZED=last;APP_ENV=test;EMPTY=;");
    BOOST_TEST(back.inherit_env());
    BOOST_TEST(back.network_enabled());
    BOOST_TEST(back.stdout_limit_bytes() == 4096u);
    BOOST_TEST(back.stderr_limit_bytes() == 8192u);

    // Through text as well.
    BOOST_TEST((sandbox::policy_from_json(sandbox::to_json(p)) == p));
}

BOOST_AUTO_TEST_CASE(the_default_policy_survives_a_round_trip)
{
    const auto p = execution_policy::defaults();
    BOOST_TEST((from(json::value_from(p)) == p));
}

BOOST_AUTO_TEST_CASE(value_from_writes_every_documented_key)
{
    const json::value jv = json::value_from(customised());
    const json::object& o = jv.as_object();
    std::vector<std::string> keys;
    for (const auto& kv : o) keys.emplace_back(kv.key());
    const std::vector<std::string> expected{"base_dir",         "timeout_seconds", "idle_timeout_seconds",
                                            "memory_limit",     "disk_limit",      "readable_paths",
                                            "writable_paths",
                                            "env",              "inherit_env",     "network_enabled",
                                            "stdout_limit_bytes", "stderr_limit_bytes"};
    BOOST_TEST(keys == expected, boost::test_tools::per_element());

    BOOST_TEST(o.at("base_dir").as_string() == "/srv/sandbox");
    BOOST_TEST(o.at("timeout_seconds").to_number<double>() == 2.5);
    BOOST_TEST(o.at("idle_timeout_seconds").to_number<double>() == 0.75);
    BOOST_TEST(o.at("memory_limit").as_string() == "2048M");
    BOOST_TEST(o.at("disk_limit").is_null());
    BOOST_TEST(o.at("readable_paths").as_array().size() == 2u);
    BOOST_TEST(o.at("readable_paths").as_array()[0].as_string() == "/opt/data");
    BOOST_TEST(o.at("writable_paths").as_array()[0].as_string() == "/var/cache/x");
    BOOST_TEST(o.at("inherit_env").as_bool());
    BOOST_TEST(o.at("network_enabled").as_bool());
    BOOST_TEST(o.at("stdout_limit_bytes").to_number<std::uint64_t>() == 4096u);
    BOOST_TEST(o.at("stderr_limit_bytes").to_number<std::uint64_t>() == 8192u);
}

BOOST_AUTO_TEST_CASE(value_from_writes_env_as_an_object_in_insertion_order)
{
    const json::value jv = json::value_from(customised());
    std::vector<std::string> names;
    for (const auto& kv : jv.at("env").as_object()) {
        names.emplace_back(kv.key());
        BOOST_TEST(kv.value().is_string());
    }
    BOOST_TEST(names == (std::vector<std::string>{"ZED", "APP_ENV", "EMPTY"}), boost::test_tools::per_element());
    BOOST_TEST(jv.at("env").at("ZED").as_string() == "last");
}

BOOST_AUTO_TEST_CASE(value_from_writes_a_missing_idle_timeout_as_null)
{
    const json::value jv = json::value_from(execution_policy::defaults());
    BOOST_TEST(jv.at("idle_timeout_seconds").is_null());
    BOOST_TEST(jv.at("timeout_seconds").to_number<double>() == 5.0);
    BOOST_TEST(jv.at("memory_limit").as_string() == "128M");
    BOOST_TEST(jv.at("env").as_object().empty());
}

BOOST_AUTO_TEST_CASE(fractional_timeout_seconds_become_milliseconds)
{
    BOOST_TEST(from_text(R"({"timeout_seconds": 0.25})").timeout().count() == 250);
    BOOST_TEST(from_text(R"({"timeout_seconds": 1.5})").timeout().count() == 1500);
    BOOST_TEST(from_text(R"({"timeout_seconds": 60})").timeout().count() == 60000);
    BOOST_TEST(from_text(R"({"idle_timeout_seconds": 0.1})").idle_timeout().value().count() == 100);
    // The clamp still applies.
    BOOST_TEST(from_text(R"({"timeout_seconds": 0})").timeout().count() == 1);
    BOOST_TEST(from_text(R"({"timeout_seconds": -3})").timeout().count() == 1);
}

BOOST_AUTO_TEST_CASE(idle_timeout_seconds_may_be_null_or_a_number)
{
    BOOST_TEST(!from_text(R"({"idle_timeout_seconds": null})").idle_timeout().has_value());
    BOOST_TEST(from_text(R"({"idle_timeout_seconds": 2})").idle_timeout().value().count() == 2000);
    BOOST_TEST(from_text(R"({"idle_timeout_seconds": 0.5})").idle_timeout().value().count() == 500);
}

BOOST_AUTO_TEST_CASE(missing_keys_take_defaults)
{
    BOOST_TEST((from_text("{}") == execution_policy::defaults()));

    const auto p = from_text(R"({"network_enabled": true})");
    BOOST_TEST((p == execution_policy::defaults().with_network(true)));

    const auto q = from_text(R"({"base_dir": "/var/tmp", "memory_limit": "1g"})");
    BOOST_TEST((q == execution_policy::in("/var/tmp").with_memory("1024M")));
}

BOOST_AUTO_TEST_CASE(env_object_keeps_insertion_order)
{
    const auto p = from_text(R"({"env": {"Z": "1", "A": "2", "M": "3", "b": "4"}})");
    BOOST_TEST(show(p.env()) == "Z=1;A=2;M=3;b=4;");
    BOOST_TEST(!p.inherit_env());
}

BOOST_AUTO_TEST_CASE(memory_limit_is_normalized_when_read)
{
    BOOST_TEST(from_text(R"({"memory_limit": " 512k "})").memory_limit() == "1M");
    BOOST_TEST(from_text(R"({"memory_limit": "65536K"})").memory_limit() == "64M");
    BOOST_TEST(from_text(R"({"memory_limit": "134217728"})").memory_limit() == "128M");
}

BOOST_AUTO_TEST_CASE(output_caps_are_clamped_when_read)
{
    const auto p = from_text(R"({"stdout_limit_bytes": 10, "stderr_limit_bytes": 0})");
    BOOST_TEST(p.stdout_limit_bytes() == 1024u);
    BOOST_TEST(p.stderr_limit_bytes() == 1024u);
}

BOOST_AUTO_TEST_CASE(an_unknown_key_throws_naming_the_key)
{
    const auto msg = error_for(R"({"timeout_seconds": 1, "no_such_key": true})");
    BOOST_TEST(contains(msg, "no_such_key"), "message: " << msg);
    const auto msg2 = error_for(R"({"timeout": 1})");
    BOOST_TEST(contains(msg2, "timeout"), "message: " << msg2);
}

BOOST_AUTO_TEST_CASE(a_wrong_type_for_any_key_throws_naming_the_key)
{
    struct bad_case {
        const char* key;
        const char* text;
    };
    const bad_case cases[] = {
        {"base_dir", R"({"base_dir": 5})"},
        {"base_dir", R"({"base_dir": null})"},
        {"timeout_seconds", R"({"timeout_seconds": "5"})"},
        {"timeout_seconds", R"({"timeout_seconds": true})"},
        {"idle_timeout_seconds", R"({"idle_timeout_seconds": "1"})"},
        {"idle_timeout_seconds", R"({"idle_timeout_seconds": false})"},
        {"idle_timeout_seconds", R"({"idle_timeout_seconds": [1]})"},
        {"memory_limit", R"({"memory_limit": 128})"},
        {"memory_limit", R"({"memory_limit": null})"},
        {"readable_paths", R"({"readable_paths": "/a"})"},
        {"readable_paths", R"({"readable_paths": [1]})"},
        {"readable_paths", R"({"readable_paths": {"a": "b"}})"},
        {"writable_paths", R"({"writable_paths": {}})"},
        {"writable_paths", R"({"writable_paths": ["/ok", true]})"},
        {"env", R"({"env": []})"},
        {"env", R"({"env": "A=B"})"},
        {"env", R"({"env": {"A": 1}})"},
        {"env", R"({"env": {"A": null}})"},
        {"inherit_env", R"({"inherit_env": "true"})"},
        {"inherit_env", R"({"inherit_env": 1})"},
        {"network_enabled", R"({"network_enabled": 0})"},
        {"network_enabled", R"({"network_enabled": null})"},
        {"stdout_limit_bytes", R"({"stdout_limit_bytes": "1024"})"},
        {"stdout_limit_bytes", R"({"stdout_limit_bytes": -1})"},
        {"stdout_limit_bytes", R"({"stdout_limit_bytes": 1.5})"},
        {"stderr_limit_bytes", R"({"stderr_limit_bytes": true})"},
        {"stderr_limit_bytes", R"({"stderr_limit_bytes": [2048]})"},
    };
    for (const auto& c : cases) {
        BOOST_TEST_CONTEXT(c.text)
        {
            const auto msg = error_for(c.text);
            BOOST_TEST(!msg.empty(), "no std::invalid_argument");
            BOOST_TEST(contains(msg, c.key), "message: " << msg);
        }
    }
}

BOOST_AUTO_TEST_CASE(a_null_timeout_means_no_timeout)
{
    const auto p = boost::json::value_to<execution_policy>(boost::json::parse(R"({"timeout_seconds": null})"));
    BOOST_TEST((p.timeout() == sandbox::no_timeout));
    // And back: null, not a huge number of seconds.
    BOOST_TEST(boost::json::value_from(p).as_object().at("timeout_seconds").is_null());
    BOOST_TEST((boost::json::value_to<execution_policy>(boost::json::value_from(p)).timeout() == sandbox::no_timeout));
}

BOOST_AUTO_TEST_CASE(an_invalid_env_name_throws_naming_the_env_key)
{
    const auto msg = error_for(R"({"env": {"A=B": "x"}})");
    BOOST_TEST(contains(msg, "env"), "message: " << msg);
    BOOST_TEST(contains(msg, "A=B"), "message: " << msg);
    const auto empty = error_for(R"({"env": {"": "x"}})");
    BOOST_TEST(contains(empty, "env"), "message: " << empty);
}

BOOST_AUTO_TEST_CASE(a_bad_memory_limit_throws_naming_the_key_and_the_problem)
{
    for (const char* text : {R"({"memory_limit": "abc"})", R"({"memory_limit": "1.5G"})", R"({"memory_limit": ""})",
                             R"({"memory_limit": "99999999999999999999"})"}) {
        BOOST_TEST_CONTEXT(text)
        {
            const auto msg = error_for(text);
            BOOST_TEST(contains(msg, "memory_limit"), "message: " << msg);
            BOOST_TEST(contains(msg, "Invalid memory limit format"), "message: " << msg);
        }
    }
    const auto unbounded = error_for(R"({"memory_limit": "-1"})");
    BOOST_TEST(contains(unbounded, "memory_limit"), "message: " << unbounded);
    BOOST_TEST(contains(unbounded, "Unbounded memory limit (-1) is not allowed"), "message: " << unbounded);
}

BOOST_AUTO_TEST_CASE(apply_json_overlays_the_present_keys_on_a_base_policy)
{
    const auto base = customised();
    const auto p = sandbox::apply_json(base, json::parse(R"({"timeout_seconds": 10, "network_enabled": false})"));
    BOOST_TEST(p.timeout().count() == 10000);
    BOOST_TEST(!p.network_enabled());
    BOOST_TEST((p == base.with_timeout(10s).with_network(false)));

    BOOST_TEST((sandbox::apply_json(base, json::object{}) == base));

    const auto cleared = sandbox::apply_json(base, json::parse(R"({"idle_timeout_seconds": null})"));
    BOOST_TEST(!cleared.idle_timeout().has_value());

    const auto env = sandbox::apply_json(base, json::parse(R"({"env": {"ONLY": "1"}})"));
    BOOST_TEST(show(env.env()) == "ONLY=1;");
    BOOST_TEST(env.inherit_env());  // not in the overlay: kept
}

BOOST_AUTO_TEST_CASE(apply_json_reports_errors_like_value_to_and_leaves_the_base_alone)
{
    const auto base = customised();
    try {
        (void)sandbox::apply_json(base, json::parse(R"({"inherit_env": "yes"})"));
        BOOST_FAIL("expected std::invalid_argument");
    } catch (const std::invalid_argument& e) {
        BOOST_TEST(contains(e.what(), "inherit_env"), "message: " << e.what());
    }
    BOOST_CHECK_THROW((void)sandbox::apply_json(base, json::parse("[]")), std::invalid_argument);
    BOOST_TEST((base == customised()));
}

BOOST_AUTO_TEST_CASE(policy_from_json_rejects_non_object_text)
{
    BOOST_CHECK_THROW((void)sandbox::policy_from_json("[1, 2]"), std::invalid_argument);
    BOOST_CHECK_THROW((void)sandbox::policy_from_json("\"text\""), std::invalid_argument);
    BOOST_CHECK_THROW((void)sandbox::policy_from_json("42"), std::invalid_argument);
    BOOST_CHECK_THROW((void)sandbox::policy_from_json("null"), std::invalid_argument);
    BOOST_CHECK_THROW((void)sandbox::policy_from_json("{not json"), boost::system::system_error);
    BOOST_CHECK_THROW((void)sandbox::policy_from_json(""), boost::system::system_error);
}

BOOST_AUTO_TEST_CASE(policy_from_json_reads_text)
{
    const auto p = sandbox::policy_from_json(R"({"timeout_seconds": 0.25, "memory_limit": "1G", "inherit_env": true})");
    BOOST_TEST(p.timeout().count() == 250);
    BOOST_TEST(p.memory_limit() == "1024M");
    BOOST_TEST(p.inherit_env());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_CASE(disk_limit_is_normalised_written_and_read_back)
{
    const auto p = execution_policy::defaults().with_disk_limit("1G");
    BOOST_TEST(p.disk_limit().value() == "1024M");
    BOOST_TEST(p.disk_limit_bytes() == 1024ull << 20);
    BOOST_TEST(execution_policy::defaults().disk_limit_bytes() == 0u);
    const json::value jv = json::value_from(p);
    BOOST_TEST(jv.at("disk_limit").as_string() == "1024M");
    BOOST_TEST((json::value_to<execution_policy>(jv) == p));
    BOOST_TEST(!apply_json(p, json::parse(R"({"disk_limit": null})")).disk_limit());
    BOOST_TEST(apply_json(p, json::parse(R"({"disk_limit": "512k"})")).disk_limit().value() == "1M");
    BOOST_TEST(!p.with_disk_limit(std::nullopt).disk_limit());
    for (const char* text : {R"({"disk_limit": 5})", R"({"disk_limit": "lots"})", R"({"disk_limit": "-1"})"}) {
        try {
            (void)apply_json(p, json::parse(text));
            BOOST_ERROR("accepted " << text);
        } catch (const std::invalid_argument& e) {
            BOOST_TEST(std::string(e.what()).find("disk_limit") != std::string::npos, e.what());
        }
    }
}
