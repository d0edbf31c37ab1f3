// SPDX-License-Identifier: BSL-1.0
#include <sandbox/environment.hpp>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <unordered_map>

extern char** environ;  // NOLINT: POSIX

namespace sandbox {

namespace {
bool iequal_prefix(std::string_view name, std::string_view upper_pattern) noexcept
{
    if (name.size() < upper_pattern.size()) return false;
    for (std::size_t i = 0; i < upper_pattern.size(); ++i)
        if (std::toupper(static_cast<unsigned char>(name[i])) != static_cast<unsigned char>(upper_pattern[i]))
            return false;
    return true;
}
}  // namespace

std::string_view blocking_env_pattern(std::string_view name) noexcept
{
    for (std::string_view pattern : blocked_env_patterns) {
        if (pattern.front() == '*') {
            const auto suffix = pattern.substr(1);
            if (name.size() > suffix.size() && iequal_prefix(name.substr(name.size() - suffix.size()), suffix))
                return pattern;
        } else if (pattern.back() == '*') {
            if (iequal_prefix(name, pattern.substr(0, pattern.size() - 1))) return pattern;
        } else if (name.size() == pattern.size() && iequal_prefix(name, pattern)) {
            return pattern;
        }
    }
    return {};
}

bool is_blocked_env_name(std::string_view name) noexcept { return !blocking_env_pattern(name).empty(); }

env_list current_environment()
{
    env_list env;
    for (char** e = environ; e && *e; ++e) {
        const char* eq = std::strchr(*e, '=');
        if (!eq || eq == *e) continue;
        env.emplace_back(std::string(*e, static_cast<std::size_t>(eq - *e)), std::string(eq + 1));
    }
    return env;
}

env_list child_environment(const execution_policy& policy)
{
    env_list env = policy.inherit_env() ? current_environment() : env_list{};
    if (const auto& allow = policy.env_allowlist()) {
        std::erase_if(env, [&](const auto& kv) {
            return std::find(allow->begin(), allow->end(), kv.first) == allow->end();
        });
    }
    if (!policy.env().empty()) {
        // Reserve first: the index holds views into the names, which must not move.
        env.reserve(env.size() + policy.env().size());
        std::unordered_map<std::string_view, std::size_t> index;
        for (std::size_t i = 0; i < env.size(); ++i) index.emplace(env[i].first, i);
        for (const auto& [name, value] : policy.env()) {
            if (auto it = index.find(name); it != index.end()) {
                env[it->second].second = value;
            } else {
                env.emplace_back(name, value);
                index.emplace(env.back().first, env.size() - 1);
            }
        }
    }
    const auto& unblocked = policy.env_unblocked();
    std::erase_if(env, [&](const auto& kv) {
        return is_blocked_env_name(kv.first) &&
               std::find(unblocked.begin(), unblocked.end(), kv.first) == unblocked.end();
    });
    return env;
}

}  // namespace sandbox
