// SPDX-License-Identifier: BSL-1.0
#include "job.hpp"

#include <sandbox/json.hpp>

#include <boost/json/serialize.hpp>
#include <boost/json/stream_parser.hpp>

namespace sandbox::cli {

namespace json = boost::json;

namespace {

std::string_view kind_name(const json::value& v)
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
    return "a value";
}

std::string head(const json::value& id, std::uint64_t line_number)
{
    std::string s = "{\"id\":";
    s += serialize_json(id);
    s += ",\"line\":";
    s += std::to_string(line_number);
    return s;
}

}  // namespace

job parse_job(std::string_view text, std::uint64_t line_number, const execution_policy& base)
{
    job j;
    j.id = static_cast<std::uint64_t>(line_number);

    json::stream_parser parser;
    boost::system::error_code ec;
    const auto used = parser.write(text.data(), text.size(), ec);
    if (!ec) parser.finish(ec);
    if (ec) {
        j.error = "invalid JSON at column " + std::to_string(used + 1) + ": " + ec.message();
        return j;
    }
    const json::value v = parser.release();
    const auto* obj = v.if_object();
    if (!obj) {
        j.error = "a job must be a JSON object, not " + std::string(kind_name(v));
        return j;
    }
    if (const auto* id = obj->if_contains("id")) j.id = *id;

    bool have_argv = false;
    for (const auto& [key, value] : *obj) {
        if (key == "id") continue;
        if (key == "argv") {
            const auto* arr = value.if_array();
            if (!arr || arr->empty()) {
                j.error = "key \"argv\" must be a non-empty array of strings, not " +
                          std::string(arr ? "an empty array" : kind_name(value));
                return j;
            }
            j.argv.reserve(arr->size());
            for (std::size_t i = 0; i < arr->size(); ++i) {
                const auto& item = (*arr)[i];
                if (!item.is_string()) {
                    j.error = "key \"argv\" must be an array of strings (item " + std::to_string(i) + " is " +
                              std::string(kind_name(item)) + ")";
                    return j;
                }
                j.argv.emplace_back(item.get_string());
            }
            if (j.argv.front().empty()) {
                j.error = "key \"argv\": the command name is empty";
                return j;
            }
            have_argv = true;
        } else if (key == "stdin") {
            if (value.is_string()) j.stdin_data = std::string(value.get_string());
            else if (!value.is_null()) {
                j.error = "key \"stdin\" must be a string, not " + std::string(kind_name(value));
                return j;
            }
        } else if (key == "policy") {
            if (!value.is_object()) {
                j.error = "key \"policy\" must be an object, not " + std::string(kind_name(value));
                return j;
            }
            try {
                j.policy = apply_json(base, value);
            } catch (const std::exception& e) {
                j.error = std::string("key \"policy\": ") + e.what();
                return j;
            }
        } else {
            j.error = "unknown key \"" + std::string(key) + "\" (a job has id, argv, stdin and policy)";
            return j;
        }
    }
    if (!have_argv) j.error = "missing key \"argv\"";
    return j;
}

std::string result_json(exec_result r) { return to_json(r); }  // valid UTF-8 whatever the bytes

std::string result_line(const json::value& id, std::uint64_t line_number, exec_result r)
{
    auto s = head(id, line_number);
    const auto body = result_json(std::move(r));  // "{...}" with the documented keys
    s += ',';
    s.append(body, 1);
    s += '\n';
    return s;
}

std::string error_line(const json::value& id, std::uint64_t line_number, std::string_view error)
{
    auto s = head(id, line_number);
    s += ",\"error\":";
    std::string text(error);
    make_valid_utf8(text);
    s += json::serialize(json::string(text));
    s += "}\n";
    return s;
}

}  // namespace sandbox::cli
