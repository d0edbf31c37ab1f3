// SPDX-License-Identifier: BSL-1.0
#include "job.hpp"

#include <sandbox/environment.hpp>
#include <sandbox/json.hpp>

#include <boost/json/serialize.hpp>
#include <boost/json/stream_parser.hpp>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <iterator>

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

std::string head(const json::value& id, std::uint64_t line_number, const run_times& t)
{
    std::string s = "{\"id\":";
    s += serialize_json(id);
    s += ",\"line\":";
    s += std::to_string(line_number);
    s += ",\"attempts\":";
    s += std::to_string(t.attempts);
    s += ",\"started_at\":\"";
    s += rfc3339(t.started_at);
    s += "\",\"ended_at\":\"";
    s += rfc3339(t.ended_at);
    s += '"';
    return s;
}

bool is_under(const std::filesystem::path& p, const std::vector<std::filesystem::path>& dirs)
{
    const auto n = p.lexically_normal();
    for (const auto& d : dirs) {
        const auto dn = d.lexically_normal();
        auto [a, b] = std::mismatch(dn.begin(), dn.end(), n.begin(), n.end());
        if (a == dn.end() || (std::next(a) == dn.end() && a->empty())) return true;
    }
    return false;
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
        j.id = nullptr;  // none could be read: not the line number, which another job may use as its id
        j.error = "invalid JSON at column " + std::to_string(used + 1) + ": " + ec.message();
        return j;
    }
    const json::value v = parser.release();
    const auto* obj = v.if_object();
    if (!obj) {
        j.id = nullptr;
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
            j.policy_keys = value.get_object();
            try {
                j.policy = apply_json(base, value);
            } catch (const std::exception& e) {
                j.error = std::string("key \"policy\": ") + e.what();
                return j;
            }
            // As for --env: a blocked name is an error, not a silent drop.
            if (const auto* env = value.get_object().if_contains("env"); env && env->is_object()) {
                const auto& unblocked = j.policy->env_unblocked();
                for (const auto& [name, ignored] : env->get_object()) {
                    const auto pattern = blocking_env_pattern(name);
                    if (!pattern.empty() &&
                        std::find(unblocked.begin(), unblocked.end(), std::string_view(name)) == unblocked.end()) {
                        j.error = "key \"policy\": env " + std::string(name) + ": blocked by the pattern '" +
                                  std::string(pattern) + "' (never passed to a command unless the policy's env_unblocked names it)";
                        return j;
                    }
                }
            }
        } else if (key == "driver") {
            if (!value.is_string()) {
                j.error = "key \"driver\" must be a string, not " + std::string(kind_name(value));
                return j;
            }
            try {
                j.driver = parse_driver(value.get_string());
            } catch (const std::invalid_argument& e) {
                j.error = std::string("key \"driver\": ") + e.what();
                return j;
            }
        } else if (key == "image") {
            if (!value.is_string() || value.get_string().empty()) {
                j.error = "key \"image\" must be a non-empty string, not " +
                          std::string(value.is_string() ? "an empty one" : kind_name(value));
                return j;
            }
            j.image = std::string(value.get_string());
        } else {
            j.error = "unknown key \"" + std::string(key) + "\" (a job has id, argv, stdin, policy, driver and image)";
            return j;
        }
    }
    if (!have_argv) j.error = "missing key \"argv\"";
    return j;
}

std::string loosened_setting(const execution_policy& base, const execution_policy& job)
{
    if (job.timeout() > base.timeout())
        return "timeout_seconds: " + seconds_text(job.timeout()) + " is longer than " + seconds_text(base.timeout());
    if (base.idle_timeout() && (!job.idle_timeout() || *job.idle_timeout() > *base.idle_timeout()))
        return "idle_timeout_seconds: " + (job.idle_timeout() ? seconds_text(*job.idle_timeout()) : std::string("none")) +
               " is longer than " + seconds_text(*base.idle_timeout());
    if (job.memory_limit_bytes() > base.memory_limit_bytes())
        return "memory_limit: " + job.memory_limit() + " is more than " + base.memory_limit();
    if (base.disk_limit() && (!job.disk_limit() || job.disk_limit_bytes() > base.disk_limit_bytes()))
        return "disk_limit: " + job.disk_limit().value_or("none") + " is more than " + *base.disk_limit();
    if (job.network_enabled() && !base.network_enabled()) return "network_enabled: the network is off";
    if (job.inherit_env() && !base.inherit_env()) return "inherit_env: the caller's environment is not passed on";
    for (const auto& name : job.env_unblocked())
        if (std::find(base.env_unblocked().begin(), base.env_unblocked().end(), name) == base.env_unblocked().end())
            return "env_unblocked: " + name + " is blocked on the command line";
    if (base.env_allowlist()) {
        if (!job.env_allowlist()) return "env_allowlist: it cannot be removed";
        for (const auto& name : *job.env_allowlist())
            if (std::find(base.env_allowlist()->begin(), base.env_allowlist()->end(), name) == base.env_allowlist()->end())
                return "env_allowlist: " + name + " is not in it";
    }
    if (job.stdout_limit_bytes() > base.stdout_limit_bytes()) return "stdout_limit_bytes: more than the command line's";
    if (job.stderr_limit_bytes() > base.stderr_limit_bytes()) return "stderr_limit_bytes: more than the command line's";
    if (job.base_dir().lexically_normal() != base.base_dir().lexically_normal())
        return "base_dir: " + job.base_dir().string() + " is not " + base.base_dir().string();
    for (const auto& p : job.writable_paths())
        if (!is_under(p, base.writable_paths())) return "writable_paths: " + p.string() + " is not writable";
    for (const auto& p : job.readable_paths())
        if (!is_under(p, base.readable_paths()) && !is_under(p, base.writable_paths()))
            return "readable_paths: " + p.string() + " is not readable";
    return {};
}

std::string seconds_text(std::chrono::milliseconds d)
{
    if (d == no_timeout) return "none";
    return serialize_json(json::value(std::chrono::duration<double>(d).count())) + " s";
}

std::string rfc3339(std::chrono::system_clock::time_point t)
{
    const auto us = std::chrono::floor<std::chrono::microseconds>(t);
    const auto secs = std::chrono::floor<std::chrono::seconds>(us);
    const std::time_t tt = std::chrono::system_clock::to_time_t(secs);
    std::tm tm{};
    ::gmtime_r(&tt, &tm);
    char buf[40];
    const auto n = std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
                                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                                 static_cast<long long>((us - secs).count()));
    return std::string(buf, static_cast<std::size_t>(n));
}

std::string result_json(exec_result r) { return to_json(r); }  // valid UTF-8 whatever the bytes

std::string result_line(const json::value& id, std::uint64_t line_number, const run_times& t, exec_result r)
{
    auto s = head(id, line_number, t);
    const auto body = result_json(std::move(r));  // "{...}" with the documented keys
    s += ',';
    s.append(body, 1);
    s += '\n';
    return s;
}

std::string error_line(const json::value& id, std::uint64_t line_number, const run_times& t,
                       std::string_view error)
{
    auto s = head(id, line_number, t);
    s += ",\"error\":";
    std::string text(error);
    make_valid_utf8(text);
    s += json::serialize(json::string(text));
    s += "}\n";
    return s;
}

}  // namespace sandbox::cli
