// SPDX-License-Identifier: BSL-1.0
// Typed access to JSON members with errors that name the key.
#ifndef SANDBOX_SRC_POLICY_JSON_UTIL_HPP
#define SANDBOX_SRC_POLICY_JSON_UTIL_HPP

#include <sandbox/detail/config.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace sandbox::detail {

std::string json_key_error(std::string_view what, std::string_view key, std::string_view problem);
std::string_view json_kind_name(const json::value& v) noexcept;
double json_number(const json::value& v, std::string_view what, std::string_view key);
std::uint64_t json_unsigned(const json::value& v, std::string_view what, std::string_view key);
std::int64_t json_integer(const json::value& v, std::string_view what, std::string_view key);
bool json_bool(const json::value& v, std::string_view what, std::string_view key);
std::string_view json_string(const json::value& v, std::string_view what, std::string_view key);
const json::array& json_array(const json::value& v, std::string_view what, std::string_view key);

}  // namespace sandbox::detail

#endif
