// SPDX-License-Identifier: BSL-1.0
#include "policy/json_util.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace sandbox::detail {

std::string json_key_error(std::string_view what, std::string_view key, std::string_view problem)
{
    std::string s(what);
    s += ": key \"";
    s += key;
    s += "\" ";
    s += problem;
    return s;
}

std::string_view json_kind_name(const json::value& v) noexcept
{
    switch (v.kind()) {
    case json::kind::null: return "null";
    case json::kind::bool_: return "a boolean";
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_: return "a number";
    case json::kind::string: return "a string";
    case json::kind::array: return "an array";
    case json::kind::object: return "an object";
    }
    return "unknown";
}

namespace {
[[noreturn]] void wrong_type(const json::value& v, std::string_view what, std::string_view key, std::string_view want)
{
    throw std::invalid_argument(
        json_key_error(what, key, "must be " + std::string(want) + ", not " + std::string(json_kind_name(v))));
}
}  // namespace

double json_number(const json::value& v, std::string_view what, std::string_view key)
{
    if (v.is_int64()) return static_cast<double>(v.get_int64());
    if (v.is_uint64()) return static_cast<double>(v.get_uint64());
    if (v.is_double()) return v.get_double();
    wrong_type(v, what, key, "a number");
}

std::uint64_t json_unsigned(const json::value& v, std::string_view what, std::string_view key)
{
    if (v.is_uint64()) return v.get_uint64();
    if (v.is_int64() && v.get_int64() >= 0) return static_cast<std::uint64_t>(v.get_int64());
    if (v.is_double() && v.get_double() >= 0 && std::floor(v.get_double()) == v.get_double() &&
        v.get_double() < 1.8e19)
        return static_cast<std::uint64_t>(v.get_double());
    wrong_type(v, what, key, "a non-negative integer");
}

std::int64_t json_integer(const json::value& v, std::string_view what, std::string_view key)
{
    if (v.is_int64()) return v.get_int64();
    if (v.is_uint64() && v.get_uint64() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        return static_cast<std::int64_t>(v.get_uint64());
    if (v.is_double() && std::floor(v.get_double()) == v.get_double() && std::fabs(v.get_double()) < 9e18)
        return static_cast<std::int64_t>(v.get_double());
    wrong_type(v, what, key, "an integer");
}

bool json_bool(const json::value& v, std::string_view what, std::string_view key)
{
    if (v.is_bool()) return v.get_bool();
    wrong_type(v, what, key, "a boolean");
}

std::string_view json_string(const json::value& v, std::string_view what, std::string_view key)
{
    if (v.is_string()) return v.get_string();
    wrong_type(v, what, key, "a string");
}

const json::array& json_array(const json::value& v, std::string_view what, std::string_view key)
{
    if (v.is_array()) return v.get_array();
    wrong_type(v, what, key, "an array");
}

}  // namespace sandbox::detail
