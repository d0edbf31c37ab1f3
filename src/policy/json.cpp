// SPDX-License-Identifier: BSL-1.0
#include <sandbox/json.hpp>

#include <charconv>
#include <cmath>

namespace sandbox {

namespace {

void write_plain(const json::value& v, std::string& out)
{
    switch (v.kind()) {
    case json::kind::double_: {
        const double d = v.get_double();
        if (!std::isfinite(d)) {
            out += "null";
            return;
        }
        // Fixed notation with the fewest digits that read back as the same double.
        char buf[400];
        const auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::fixed);
        out.append(buf, r.ptr);
        return;
    }
    case json::kind::array: {
        out += '[';
        bool first = true;
        for (const auto& item : v.get_array()) {
            if (!first) out += ',';
            first = false;
            write_plain(item, out);
        }
        out += ']';
        return;
    }
    case json::kind::object: {
        out += '{';
        bool first = true;
        for (const auto& [key, item] : v.get_object()) {
            if (!first) out += ',';
            first = false;
            out += json::serialize(json::string_view(key));
            out += ':';
            write_plain(item, out);
        }
        out += '}';
        return;
    }
    default: out += json::serialize(v);
    }
}

}  // namespace

std::string serialize_json(const json::value& v)
{
    std::string out;
    write_plain(v, out);
    return out;
}

std::string to_json(const exec_result& r) { return serialize_json(json::value_from(r)); }
std::string to_json(const execution_policy& p) { return serialize_json(json::value_from(p)); }
execution_policy policy_from_json(std::string_view text)
{
    // to_json writes paths and environment values byte for byte, and those need not be
    // UTF-8 (a file name, a variable's value): what it writes must read back the same.
    json::parse_options opts;
    opts.allow_invalid_utf8 = true;
    return json::value_to<execution_policy>(json::parse(text, {}, opts));
}

}  // namespace sandbox
