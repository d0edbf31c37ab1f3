// SPDX-License-Identifier: BSL-1.0
// sandbox::errc as Boost.System codes, launch_error, and start_error in JSON.
#include <sandbox/errors.hpp>
#include <sandbox/exec_result.hpp>
#include <sandbox/json.hpp>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <cerrno>
#include <stdexcept>

using namespace sandbox;

BOOST_AUTO_TEST_SUITE(errors)

BOOST_AUTO_TEST_CASE(errc_is_a_boost_system_error_code_enum)
{
    static_assert(boost::system::is_error_code_enum<errc>::value);
    const boost::system::error_code ec = errc::command_not_found;
    BOOST_TEST(ec.category().name() == std::string("sandbox"));
    BOOST_TEST(ec.message() == "command not found");
    BOOST_TEST((ec == errc::command_not_found));
    BOOST_TEST((ec != errc::command_not_executable));
    BOOST_TEST(static_cast<bool>(ec));
    BOOST_TEST((make_error_code(errc::outside_root) == errc::outside_root));
    for (int e = 1; e <= static_cast<int>(errc::callback_failed); ++e) {
        const auto code = static_cast<errc>(e);
        BOOST_TEST(!to_string(code).empty());
        BOOST_TEST(make_error_code(code).message().find("unknown") == std::string::npos);
    }
    BOOST_TEST(to_string(errc::engine_failed) == "engine_failed");
}

BOOST_AUTO_TEST_CASE(launch_error_is_a_system_error_with_the_message_unchanged)
{
    const launch_error e(errc::engine_failed, "Failed to start docker: the Docker engine is not running");
    BOOST_TEST(e.what() == std::string("Failed to start docker: the Docker engine is not running"));
    BOOST_TEST((e.code() == errc::engine_failed));
    try {
        throw launch_error("Failed to start bwrap: bwrap not found on PATH (is it installed?)");
    } catch (const boost::system::system_error& caught) {  // catchable as any system_error
        BOOST_TEST((caught.code() == errc::driver_unavailable));
    }
    const launch_error sys(boost::system::error_code(EMFILE, boost::system::system_category()), "Failed to start x: y");
    BOOST_TEST((sys.code() == boost::system::errc::too_many_files_open));
}

BOOST_AUTO_TEST_CASE(start_error_round_trips_through_json)
{
    exec_result r;
    BOOST_TEST(boost::json::value_from(r).as_object().at("start_error").is_null());
    r.exit_code = 127;
    r.start_error = errc::command_not_found;
    auto jv = boost::json::value_from(r);
    const auto& se = jv.as_object().at("start_error").as_object();
    BOOST_TEST(se.at("code").as_string() == "command_not_found");
    BOOST_TEST(se.at("message").as_string() == "command not found");
    // After usage, followed only by `warm`.
    BOOST_TEST(jv.as_object().begin()[jv.as_object().size() - 2].key() == "start_error");
    BOOST_TEST(jv.as_object().begin()[jv.as_object().size() - 1].key() == "warm");
    BOOST_TEST((boost::json::value_to<exec_result>(jv) == r));

    r.start_error = boost::system::error_code(EMFILE, boost::system::system_category());
    jv = boost::json::value_from(r);
    BOOST_TEST(jv.as_object().at("start_error").as_object().at("code").as_string() == "system:24");
    BOOST_TEST((boost::json::value_to<exec_result>(jv) == r));

    jv.as_object()["start_error"] = boost::json::object{{"code", "no_such_code"}};
    BOOST_CHECK_THROW(boost::json::value_to<exec_result>(jv), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
