// SPDX-License-Identifier: BSL-1.0
#include <sandbox/execution_policy.hpp>

#include "policy/json_util.hpp"

#include <boost/json/value.hpp>
#include <boost/json/value_from.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace sandbox {

namespace {

constexpr std::chrono::milliseconds min_timeout{1};
constexpr std::uint64_t mib = 1024 * 1024;

std::chrono::milliseconds clamp_timeout(std::chrono::milliseconds t) { return std::max(t, min_timeout); }
std::size_t clamp_cap(std::size_t n) { return std::max(n, execution_policy::min_output_cap); }

void validate_env(const env_list& env)
{
    for (const auto& [name, value] : env) {
        if (name.empty() || name.find('=') != std::string::npos || name.find('\0') != std::string::npos)
            throw std::invalid_argument("Invalid environment variable name: \"" + name +
                                        "\" (must be non-empty, without '=' or NUL)");
        if (value.find('\0') != std::string::npos)
            throw std::invalid_argument("Invalid value for environment variable " + name + ": it contains NUL");
    }
}

void validate_names(const std::vector<std::string>& names)
{
    for (const auto& name : names)
        if (name.empty() || name.find('=') != std::string::npos || name.find('\0') != std::string::npos)
            throw std::invalid_argument("Invalid environment variable name: \"" + name +
                                        "\" (must be non-empty, without '=' or NUL)");
}

}  // namespace

execution_policy::execution_policy() = default;

execution_policy execution_policy::in(std::filesystem::path base_dir)
{
    execution_policy p;
    p.base_dir_ = std::move(base_dir);
    return p;
}

execution_policy execution_policy::defaults() { return execution_policy{}; }

std::uint64_t execution_policy::memory_limit_bytes() const noexcept
{
    // memory_limit_ is always "<N>M" with N*1MiB representable (checked when normalized).
    return std::stoull(memory_limit_) * mib;
}

std::uint64_t execution_policy::disk_limit_bytes() const noexcept
{
    return disk_limit_ ? std::stoull(*disk_limit_) * mib : 0;
}

execution_policy execution_policy::with_disk_limit(std::optional<std::string_view> limit) const
{
    return with({.disk_limit = limit ? std::optional<std::string>(std::string(*limit)) : std::optional<std::string>()});
}

std::string execution_policy::normalize_memory_limit(std::string_view limit)
{
    auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
    while (!limit.empty() && is_space(limit.front())) limit.remove_prefix(1);
    while (!limit.empty() && is_space(limit.back())) limit.remove_suffix(1);
    std::string s(limit);
    std::transform(s.begin(), s.end(), s.begin(), [](char c) { return static_cast<char>(std::toupper(static_cast<unsigned char>(c))); });

    if (s == "-1") throw std::invalid_argument("Unbounded memory limit (-1) is not allowed");
    const std::invalid_argument bad("Invalid memory limit format");

    std::uint64_t multiplier = 1;
    std::string_view digits = s;
    if (!digits.empty()) {
        switch (digits.back()) {
        case 'K': multiplier = 1024; break;
        case 'M': multiplier = mib; break;
        case 'G': multiplier = mib * 1024; break;
        default: break;
        }
        if (multiplier != 1) digits.remove_suffix(1);
    }
    if (digits.empty()) throw bad;
    std::uint64_t value = 0;
    for (char c : digits) {
        if (c < '0' || c > '9') throw bad;
        const auto d = static_cast<std::uint64_t>(c - '0');
        if (value > (std::numeric_limits<std::uint64_t>::max() - d) / 10) throw bad;
        value = value * 10 + d;
    }
    if (value > std::numeric_limits<std::uint64_t>::max() / multiplier) throw bad;
    const std::uint64_t bytes = value * multiplier;
    return std::to_string(std::max<std::uint64_t>(1, bytes / mib)) + "M";
}

execution_policy execution_policy::with(const policy_changes& c) const
{
    execution_policy p = *this;
    if (c.base_dir) p.base_dir_ = *c.base_dir;
    if (c.timeout) p.timeout_ = clamp_timeout(*c.timeout);
    if (c.idle_timeout) {
        p.idle_timeout_ = *c.idle_timeout;
        if (p.idle_timeout_) p.idle_timeout_ = clamp_timeout(*p.idle_timeout_);
    }
    if (c.memory_limit) p.memory_limit_ = normalize_memory_limit(*c.memory_limit);
    if (c.readable_paths) p.readable_paths_ = *c.readable_paths;
    if (c.writable_paths) p.writable_paths_ = *c.writable_paths;
    if (c.env) {
        validate_env(*c.env);
        p.env_ = *c.env;
    }
    if (c.inherit_env) p.inherit_env_ = *c.inherit_env;
    if (c.network_enabled) p.network_enabled_ = *c.network_enabled;
    if (c.stdout_limit_bytes) p.stdout_limit_bytes_ = clamp_cap(*c.stdout_limit_bytes);
    if (c.stderr_limit_bytes) p.stderr_limit_bytes_ = clamp_cap(*c.stderr_limit_bytes);
    if (c.env_allowlist) p.env_allowlist_ = *c.env_allowlist;
    if (c.disk_limit) {
        p.disk_limit_ = *c.disk_limit;
        if (p.disk_limit_) p.disk_limit_ = normalize_memory_limit(*p.disk_limit_);
    }
    if (c.env_unblocked) {
        validate_names(*c.env_unblocked);
        p.env_unblocked_ = *c.env_unblocked;
    }
    return p;
}

execution_policy execution_policy::with_base_dir(std::filesystem::path dir) const { return with({.base_dir = std::move(dir)}); }
execution_policy execution_policy::with_timeout(std::chrono::milliseconds t) const { return with({.timeout = t}); }
execution_policy execution_policy::with_idle_timeout(std::optional<std::chrono::milliseconds> t) const
{
    return with({.idle_timeout = t});
}
execution_policy execution_policy::with_memory(std::string_view limit) const
{
    return with({.memory_limit = std::string(limit)});
}
execution_policy execution_policy::with_readable_paths(std::vector<std::filesystem::path> paths) const
{
    return with({.readable_paths = std::move(paths)});
}
execution_policy execution_policy::with_writable_paths(std::vector<std::filesystem::path> paths) const
{
    return with({.writable_paths = std::move(paths)});
}
execution_policy execution_policy::with_env(env_list env, std::optional<bool> inherit) const
{
    return with({.env = std::move(env), .inherit_env = inherit});
}
execution_policy execution_policy::inherit_environment(bool inherit) const { return with({.inherit_env = inherit}); }
execution_policy execution_policy::with_network(bool enabled) const { return with({.network_enabled = enabled}); }
execution_policy execution_policy::with_output_caps(std::size_t out, std::size_t err) const
{
    return with({.stdout_limit_bytes = out, .stderr_limit_bytes = err});
}
execution_policy execution_policy::with_env_allowlist(std::optional<std::vector<std::string>> names) const
{
    return with({.env_allowlist = std::move(names)});
}
execution_policy execution_policy::with_env_unblocked(std::vector<std::string> names) const
{
    return with({.env_unblocked = std::move(names)});
}

// ---- JSON ----------------------------------------------------------------------------------

namespace {

json::value seconds_to_json(std::chrono::milliseconds ms)
{
    if (ms.count() % 1000 == 0) return json::value(static_cast<std::int64_t>(ms.count() / 1000));
    return json::value(static_cast<double>(ms.count()) / 1000.0);
}

json::array paths_to_json(const std::vector<std::filesystem::path>& paths)
{
    json::array a;
    for (const auto& p : paths) a.emplace_back(p.string());
    return a;
}

constexpr std::string_view what = "execution_policy";

std::chrono::milliseconds json_to_timeout(const json::value& v, std::string_view key)
{
    const double s = detail::json_number(v, what, key);
    if (!std::isfinite(s) || std::fabs(s) > 1e12)
        throw std::invalid_argument(detail::json_key_error(what, key, "is out of range"));
    return std::chrono::milliseconds(std::llround(s * 1000.0));
}

std::vector<std::filesystem::path> json_to_paths(const json::value& v, std::string_view key)
{
    const auto& arr = detail::json_array(v, what, key);
    std::vector<std::filesystem::path> out;
    out.reserve(arr.size());
    for (const auto& item : arr) {
        if (!item.is_string())
            throw std::invalid_argument(detail::json_key_error(what, key, "must be an array of strings"));
        out.emplace_back(std::string(item.get_string()));
    }
    return out;
}

}  // namespace

void tag_invoke(const json::value_from_tag&, json::value& jv, const execution_policy& p)
{
    json::object o;
    o["base_dir"] = p.base_dir().string();
    o["timeout_seconds"] = p.timeout() == no_timeout ? json::value(nullptr) : seconds_to_json(p.timeout());
    o["idle_timeout_seconds"] = p.idle_timeout() ? seconds_to_json(*p.idle_timeout()) : json::value(nullptr);
    o["memory_limit"] = p.memory_limit();
    o["disk_limit"] = p.disk_limit() ? json::value(*p.disk_limit()) : json::value(nullptr);
    o["readable_paths"] = paths_to_json(p.readable_paths());
    o["writable_paths"] = paths_to_json(p.writable_paths());
    json::object env;
    for (const auto& [k, v] : p.env()) env[k] = v;
    o["env"] = std::move(env);
    o["inherit_env"] = p.inherit_env();
    o["network_enabled"] = p.network_enabled();
    o["stdout_limit_bytes"] = static_cast<std::uint64_t>(p.stdout_limit_bytes());
    o["stderr_limit_bytes"] = static_cast<std::uint64_t>(p.stderr_limit_bytes());
    if (p.env_allowlist()) {
        json::array names;
        for (const auto& n : *p.env_allowlist()) names.emplace_back(n);
        o["env_allowlist"] = std::move(names);
    }
    if (!p.env_unblocked().empty()) {
        json::array names;
        for (const auto& n : p.env_unblocked()) names.emplace_back(n);
        o["env_unblocked"] = std::move(names);
    }
    jv = std::move(o);
}

execution_policy apply_json(const execution_policy& base, const json::value& jv)
{
    const auto* obj = jv.if_object();
    if (!obj) throw std::invalid_argument("execution_policy: JSON must be an object");
    policy_changes c;
    for (const auto& [k, v] : *obj) {
        const std::string_view key = k;
        if (key == "base_dir") {
            c.base_dir = std::filesystem::path(std::string(detail::json_string(v, what, key)));
        } else if (key == "timeout_seconds") {
            c.timeout = v.is_null() ? no_timeout : json_to_timeout(v, key);
        } else if (key == "idle_timeout_seconds") {
            c.idle_timeout = v.is_null() ? no_idle_timeout : std::optional(json_to_timeout(v, key));
        } else if (key == "memory_limit") {
            const auto s = detail::json_string(v, what, key);
            try {
                c.memory_limit = execution_policy::normalize_memory_limit(s);
            } catch (const std::invalid_argument& e) {
                throw std::invalid_argument(detail::json_key_error(what, key, std::string("is invalid: ") + e.what()));
            }
        } else if (key == "disk_limit") {
            if (v.is_null()) {
                c.disk_limit = std::optional<std::string>{};
            } else {
                const auto s = detail::json_string(v, what, key);
                try {
                    c.disk_limit = std::optional<std::string>(execution_policy::normalize_memory_limit(s));
                } catch (const std::invalid_argument& e) {
                    throw std::invalid_argument(
                        detail::json_key_error(what, key, std::string("is invalid: ") + e.what()));
                }
            }
        } else if (key == "readable_paths") {
            c.readable_paths = json_to_paths(v, key);
        } else if (key == "writable_paths") {
            c.writable_paths = json_to_paths(v, key);
        } else if (key == "env") {
            const auto* env = v.if_object();
            if (!env) throw std::invalid_argument(detail::json_key_error(what, key, "must be an object of strings"));
            env_list list;
            for (const auto& [name, value] : *env) {
                if (!value.is_string())
                    throw std::invalid_argument(detail::json_key_error(
                        what, key, "must be an object of strings (\"" + std::string(name) + "\" is not a string)"));
                list.emplace_back(std::string(name), std::string(value.get_string()));
            }
            try {
                validate_env(list);
            } catch (const std::invalid_argument& e) {
                throw std::invalid_argument(detail::json_key_error(what, key, std::string("is invalid: ") + e.what()));
            }
            c.env = std::move(list);
        } else if (key == "inherit_env") {
            c.inherit_env = detail::json_bool(v, what, key);
        } else if (key == "network_enabled") {
            c.network_enabled = detail::json_bool(v, what, key);
        } else if (key == "stdout_limit_bytes") {
            c.stdout_limit_bytes = static_cast<std::size_t>(detail::json_unsigned(v, what, key));
        } else if (key == "stderr_limit_bytes") {
            c.stderr_limit_bytes = static_cast<std::size_t>(detail::json_unsigned(v, what, key));
        } else if (key == "env_allowlist") {
            if (v.is_null()) {
                c.env_allowlist = std::optional<std::vector<std::string>>{};
            } else {
                std::vector<std::string> names;
                for (const auto& item : detail::json_array(v, what, key)) {
                    if (!item.is_string())
                        throw std::invalid_argument(detail::json_key_error(what, key, "must be an array of strings"));
                    names.emplace_back(item.get_string());
                }
                c.env_allowlist = std::move(names);
            }
        } else if (key == "env_unblocked") {
            std::vector<std::string> names;
            for (const auto& item : detail::json_array(v, what, key)) {
                if (!item.is_string())
                    throw std::invalid_argument(detail::json_key_error(what, key, "must be an array of strings"));
                names.emplace_back(item.get_string());
            }
            try {
                validate_names(names);
            } catch (const std::invalid_argument& e) {
                throw std::invalid_argument(detail::json_key_error(what, key, std::string("is invalid: ") + e.what()));
            }
            c.env_unblocked = std::move(names);
        } else {
            throw std::invalid_argument(detail::json_key_error(what, key, "is not a known key"));
        }
    }
    return base.with(c);
}

execution_policy tag_invoke(const json::value_to_tag<execution_policy>&, const json::value& jv)
{
    return apply_json(execution_policy::defaults(), jv);
}

}  // namespace sandbox
