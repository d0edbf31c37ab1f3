// SPDX-License-Identifier: BSL-1.0
// exec_result: success(), combined_output(), and its JSON form (key order, values, errors).
#include <sandbox/sandbox.hpp>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <cctype>
#include <chrono>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

using namespace std::chrono_literals;
namespace json = boost::json;
using sandbox::exec_result;
using sandbox::timeout_reason;

namespace {

exec_result make(std::string out, std::string err, int code, std::chrono::nanoseconds duration, bool timed_out = false,
                 bool truncated_out = false, bool truncated_err = false)
{
    exec_result r;
    r.out = std::move(out);
    r.err = std::move(err);
    r.exit_code = code;
    r.duration = duration;
    r.timed_out = timed_out;
    r.truncated_out = truncated_out;
    r.truncated_err = truncated_err;
    return r;
}

exec_result full()
{
    exec_result r = make("out", "err", 124, 1500ms, true, true, false);
    r.timeout = timeout_reason::wall;
    r.term_signal = 9;
    r.usage.user_cpu = 250ms;
    r.usage.system_cpu = 125ms;
    r.usage.max_rss_bytes = 4096;
    return r;
}

std::vector<std::string> keys_of(const json::object& o)
{
    std::vector<std::string> keys;
    for (const auto& kv : o) keys.emplace_back(kv.key());
    return keys;
}

std::string error_for(std::string_view text)
{
    try {
        (void)json::value_to<exec_result>(json::parse(text));
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

bool contains(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

}  // namespace

BOOST_AUTO_TEST_SUITE(test_exec_result)

BOOST_AUTO_TEST_CASE(a_default_result_is_a_success_with_nothing_in_it)
{
    const exec_result r;
    BOOST_TEST(r.success());
    BOOST_TEST(r.out.empty());
    BOOST_TEST(r.err.empty());
    BOOST_TEST(r.exit_code == 0);
    BOOST_TEST(r.duration.count() == 0);
    BOOST_TEST(!r.timed_out);
    BOOST_TEST(!r.truncated_out);
    BOOST_TEST(!r.truncated_err);
    BOOST_TEST(!r.timeout.has_value());
    BOOST_TEST(r.term_signal == 0);
    BOOST_TEST(r.usage.user_cpu.count() == 0);
    BOOST_TEST(r.usage.system_cpu.count() == 0);
    BOOST_TEST(r.usage.max_rss_bytes == 0u);
}

BOOST_AUTO_TEST_CASE(success_requires_exit_zero_and_no_timeout)
{
    BOOST_TEST(make("ok", "", 0, 500ms).success());
    BOOST_TEST(!make("", "err", 1, 500ms).success());
    BOOST_TEST(!make("ok", "", 0, 5s, true).success());
    BOOST_TEST(!make("", "", 124, 5s, true).success());
    BOOST_TEST(!make("", "", 137, 1s).success());
    BOOST_TEST(!make("", "", -1, 1s).success());
    // Truncation is not failure.
    BOOST_TEST(make("x", "y", 0, 1s, false, true, true).success());
}

BOOST_AUTO_TEST_CASE(combined_output_joins_with_a_newline_only_when_both_are_non_empty)
{
    BOOST_TEST(make("out", "err", 0, 100ms).combined_output() == "out\nerr");
    BOOST_TEST(make("out", "", 0, 100ms).combined_output() == "out");
    BOOST_TEST(make("", "err", 1, 100ms).combined_output() == "err");
    BOOST_TEST(make("", "", 0, 100ms).combined_output() == "");
    BOOST_TEST(make("out\n", "err", 0, 100ms).combined_output() == "out\n\nerr");
    BOOST_TEST(make("out", "err\n", 0, 100ms).combined_output() == "out\nerr\n");
}

BOOST_AUTO_TEST_CASE(json_keys_come_in_the_documented_order)
{
    const json::value jv = json::value_from(full());
    const std::vector<std::string> expected{"stdout",           "stderr",  "exit_code",      "duration",
                                            "timed_out",        "truncated_stdout", "truncated_stderr",
                                            "success",          "timeout_reason",   "term_signal", "usage",
                                            "oom_killed",       "start_error",      "warm"};
    BOOST_TEST(keys_of(jv.as_object()) == expected, boost::test_tools::per_element());

    const std::vector<std::string> usage{"user_cpu_seconds", "system_cpu_seconds", "max_rss_bytes"};
    BOOST_TEST(keys_of(jv.at("usage").as_object()) == usage, boost::test_tools::per_element());

    // The order holds for a default result too, and in the text form.
    BOOST_TEST(keys_of(json::value_from(exec_result{}).as_object()) == expected, boost::test_tools::per_element());
    const auto text = sandbox::to_json(full());
    BOOST_TEST(text.rfind(R"({"stdout":"out","stderr":"err","exit_code":124,"duration":)", 0) == 0u, text);
    BOOST_TEST(keys_of(json::parse(text).as_object()) == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(json_values_have_the_documented_types)
{
    // The PHP toArray() case, plus the new keys.
    const exec_result r = make("out", "err", 42, 1500ms, true, true, false);
    const json::value jv = json::value_from(r);
    const json::object& o = jv.as_object();
    BOOST_TEST(o.at("stdout").as_string() == "out");
    BOOST_TEST(o.at("stderr").as_string() == "err");
    BOOST_TEST(o.at("exit_code").is_int64());
    BOOST_TEST(o.at("exit_code").as_int64() == 42);
    BOOST_TEST(o.at("duration").is_double());
    BOOST_TEST(o.at("duration").as_double() == 1.5);
    BOOST_TEST(o.at("timed_out").as_bool() == true);
    BOOST_TEST(o.at("truncated_stdout").as_bool() == true);
    BOOST_TEST(o.at("truncated_stderr").as_bool() == false);
    BOOST_TEST(o.at("success").as_bool() == false);
    BOOST_TEST(o.at("timeout_reason").is_null());
    BOOST_TEST(o.at("term_signal").to_number<int>() == 0);
    BOOST_TEST(o.at("usage").at("user_cpu_seconds").as_double() == 0.0);
    BOOST_TEST(o.at("usage").at("system_cpu_seconds").as_double() == 0.0);
    BOOST_TEST(o.at("usage").at("max_rss_bytes").to_number<std::uint64_t>() == 0u);
}

BOOST_AUTO_TEST_CASE(json_carries_signal_and_usage)
{
    const json::value jv = json::value_from(full());
    BOOST_TEST(jv.at("term_signal").to_number<int>() == 9);
    BOOST_TEST(jv.at("usage").at("user_cpu_seconds").as_double() == 0.25);
    BOOST_TEST(jv.at("usage").at("system_cpu_seconds").as_double() == 0.125);
    BOOST_TEST(jv.at("usage").at("max_rss_bytes").to_number<std::uint64_t>() == 4096u);
    BOOST_TEST(jv.at("success").as_bool() == false);
    BOOST_TEST(json::value_from(make("", "", 0, 0ns)).at("success").as_bool() == true);
}

BOOST_AUTO_TEST_CASE(json_usage_is_null_when_not_available_and_oom_killed_follows_it)
{
    exec_result r;
    BOOST_TEST(json::value_from(r).at("oom_killed").as_bool() == false);
    r.exit_code = 137;
    r.oom_killed = true;
    r.usage.available = false;
    const auto jv = json::value_from(r);
    BOOST_TEST(jv.at("usage").is_null());
    BOOST_TEST(jv.at("oom_killed").as_bool() == true);
    const auto text = sandbox::to_json(r);
    BOOST_TEST(text.find(R"("usage":null,"oom_killed":true,"start_error":null)") != std::string::npos, text);

    const auto back = json::value_to<exec_result>(json::parse(text));
    BOOST_TEST((back == r), text);
    BOOST_TEST(!back.usage.available);
    BOOST_TEST(back.oom_killed);
    // A usage object is an available one, whatever came before it.
    const auto avail = json::value_to<exec_result>(json::parse(R"({"usage": null, "usage": {"max_rss_bytes": 5}})"));
    BOOST_TEST(avail.usage.available);
    BOOST_TEST(avail.usage.max_rss_bytes == 5u);
    BOOST_TEST(json::value_to<exec_result>(json::parse("{}")).usage.available);
}

BOOST_AUTO_TEST_CASE(json_numbers_are_plain_decimals_that_read_back_the_same)
{
    exec_result r;
    r.duration = std::chrono::nanoseconds(2'500'000);  // 0.0025 s
    r.usage.user_cpu = std::chrono::nanoseconds(1);
    const auto text = sandbox::to_json(r);
    BOOST_TEST(text.find("\"duration\":0.0025,") != std::string::npos, text);
    BOOST_TEST(text.find("\"user_cpu_seconds\":0.000000001,") != std::string::npos, text);
    for (std::size_t i = 1; i < text.size(); ++i)  // no exponent anywhere
        BOOST_TEST(!(std::isdigit(static_cast<unsigned char>(text[i - 1])) && (text[i] == 'E' || text[i] == 'e')), text);
    BOOST_TEST((json::value_to<exec_result>(json::parse(text)) == r));

    BOOST_TEST(sandbox::serialize_json(json::parse(R"({"a":[1e-7,-2.5e3,1E21,0.1],"b":"x\"y","c":null})")) ==
               R"({"a":[0.0000001,-2500,1000000000000000000000,0.1],"b":"x\"y","c":null})");
    BOOST_TEST(sandbox::serialize_json(json::value(std::numeric_limits<double>::infinity())) == "null");
}

BOOST_AUTO_TEST_CASE(timeout_reason_is_null_wall_or_idle)
{
    exec_result r;
    BOOST_TEST(json::value_from(r).at("timeout_reason").is_null());
    r.timed_out = true;
    r.exit_code = 124;
    r.timeout = timeout_reason::wall;
    BOOST_TEST(json::value_from(r).at("timeout_reason").as_string() == "wall");
    r.timeout = timeout_reason::idle;
    BOOST_TEST(json::value_from(r).at("timeout_reason").as_string() == "idle");

    BOOST_TEST(sandbox::to_string(timeout_reason::wall) == "wall");
    BOOST_TEST(sandbox::to_string(timeout_reason::idle) == "idle");
}

BOOST_AUTO_TEST_CASE(bytes_that_are_not_utf8_become_replacement_characters)
{
    // A capped tail can start inside a character, and commands print any bytes: the JSON
    // must still be valid text.
    const auto r = make("ok \xff\xfe end", "\xa9tail", 0, 0ns);
    const auto text = sandbox::to_json(r);
    const auto parsed = json::parse(text);
    BOOST_TEST(parsed.at("stdout").as_string() == "ok \xEF\xBF\xBD\xEF\xBF\xBD end");
    BOOST_TEST(parsed.at("stderr").as_string() == "\xEF\xBF\xBDtail");
    std::string valid = "caf\xc3\xa9 \xf0\x9f\x98\x80";
    const auto before = valid;
    sandbox::make_valid_utf8(valid);
    BOOST_TEST(valid == before);
    std::string overlong = "\xc0\xaf \xed\xa0\x80";  // overlong '/' and a surrogate
    sandbox::make_valid_utf8(overlong);
    BOOST_TEST(overlong == "\xEF\xBF\xBD\xEF\xBF\xBD \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

BOOST_AUTO_TEST_CASE(value_to_reverses_value_from)
{
    exec_result oom = make("", "Killed", 137, 2s);
    oom.oom_killed = true;
    oom.usage.max_rss_bytes = 64u << 20;
    for (exec_result r : {full(), exec_result{}, make("a\nb", "caf\xc3\xa9\x01", 3, 123456789ns), oom}) {
        const auto back = json::value_to<exec_result>(json::value_from(r));
        BOOST_TEST((back == r), sandbox::to_json(r));
    }
    exec_result idle = full();
    idle.timeout = timeout_reason::idle;
    BOOST_TEST((json::value_to<exec_result>(json::value_from(idle)) == idle));
    BOOST_TEST((json::value_to<exec_result>(json::parse(sandbox::to_json(idle))) == idle));
}

BOOST_AUTO_TEST_CASE(value_to_takes_defaults_for_missing_keys_and_ignores_success)
{
    const auto r = json::value_to<exec_result>(json::parse(R"({"stdout": "x", "exit_code": 1, "success": true})"));
    BOOST_TEST(r.out == "x");
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(!r.success());
    BOOST_TEST(r.err.empty());
    BOOST_TEST(!r.timeout.has_value());

    BOOST_TEST((json::value_to<exec_result>(json::value(json::object{})) == exec_result{}));

    const auto d = json::value_to<exec_result>(json::parse(R"({"duration": 0.25, "timeout_reason": null})"));
    BOOST_TEST(d.duration.count() == 250'000'000);
    BOOST_TEST(!d.timeout.has_value());
}

BOOST_AUTO_TEST_CASE(value_to_names_the_bad_key)
{
    struct bad_case {
        const char* key;
        const char* text;
    };
    const bad_case cases[] = {
        {"bogus", R"({"bogus": 1})"},
        {"stdout", R"({"stdout": 5})"},
        {"stderr", R"({"stderr": null})"},
        {"exit_code", R"({"exit_code": "x"})"},
        {"exit_code", R"({"exit_code": 1.5})"},
        {"duration", R"({"duration": "1s"})"},
        {"duration", R"({"duration": -1})"},
        {"timed_out", R"({"timed_out": 1})"},
        {"truncated_stdout", R"({"truncated_stdout": "no"})"},
        {"truncated_stderr", R"({"truncated_stderr": null})"},
        {"success", R"({"success": "yes"})"},
        {"timeout_reason", R"({"timeout_reason": "sometimes"})"},
        {"timeout_reason", R"({"timeout_reason": 1})"},
        {"term_signal", R"({"term_signal": "KILL"})"},
        {"usage", R"({"usage": 5})"},
        {"usage", R"({"usage": false})"},
        {"oom_killed", R"({"oom_killed": 1})"},
        {"oom_killed", R"({"oom_killed": null})"},
        {"usage.cpu", R"({"usage": {"cpu": 1}})"},
        {"usage.max_rss_bytes", R"({"usage": {"max_rss_bytes": -1}})"},
        {"usage.user_cpu_seconds", R"({"usage": {"user_cpu_seconds": "1"}})"},
        {"usage.system_cpu_seconds", R"({"usage": {"system_cpu_seconds": -0.5}})"},
    };
    for (const auto& c : cases) {
        BOOST_TEST_CONTEXT(c.text)
        {
            const auto msg = error_for(c.text);
            BOOST_TEST(!msg.empty(), "no std::invalid_argument");
            BOOST_TEST(contains(msg, c.key), "message: " << msg);
        }
    }
    BOOST_CHECK_THROW((void)json::value_to<exec_result>(json::parse("[]")), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
