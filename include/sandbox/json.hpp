// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_JSON_HPP
#define SANDBOX_JSON_HPP

// Boost.JSON conversions of the value types, and text shortcuts.
#include <sandbox/detail/export.hpp>
#include <sandbox/exec_result.hpp>
#include <sandbox/execution_policy.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <string>
#include <string_view>

namespace sandbox {

/// One line of JSON, keys in the documented order (see tag_invoke() for exec_result).
SANDBOX_DECL std::string to_json(const exec_result& r);
/// One line of JSON with the policy's keys (see tag_invoke() for execution_policy).
SANDBOX_DECL std::string to_json(const execution_policy& p);

/// `boost::json::serialize(v)`, but numbers are written as plain decimals (`0.0025`, never
/// `2.5E-3`): the form every reader and every person reads alike. A double that is not
/// finite is written as null.
SANDBOX_DECL std::string serialize_json(const boost::json::value& v);

/// Replaces every byte that is not part of well-formed UTF-8 with U+FFFD, in place. JSON
/// carries text, commands print bytes (and a capped tail may start inside a character):
/// the JSON of an exec_result goes through this. Valid text is checked in one pass and left
/// untouched.
SANDBOX_DECL void make_valid_utf8(std::string& s);

/// Parses a policy from JSON text. Throws std::invalid_argument naming a bad key, or
/// boost::system::system_error for text that is not JSON.
SANDBOX_DECL execution_policy policy_from_json(std::string_view text);

}  // namespace sandbox

#endif
