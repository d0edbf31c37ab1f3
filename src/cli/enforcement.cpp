// SPDX-License-Identifier: BSL-1.0
#include "enforcement.hpp"

#include "io.hpp"

#include <boost/json/parse.hpp>

#include <fcntl.h>
#include <unistd.h>

namespace sandbox::cli {

namespace {

// The keys of the --policy file (already read and checked once by effective_policy).
boost::json::object policy_file_keys(const options& o)
{
    if (!o.policy_file) return {};
    const int fd = ::open(o.policy_file->c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return {};
    std::string text;
    try {
        text = read_all(fd);
    } catch (...) {
    }
    ::close(fd);
    boost::system::error_code ec;
    auto v = boost::json::parse(text, ec);
    if (ec || !v.is_object()) return {};
    return std::move(v.get_object());
}

}  // namespace

asked_settings asked_by(const boost::json::object& keys)
{
    asked_settings a;
    if (const auto* v = keys.if_contains("memory_limit"); v && !v->is_null()) a.memory = "memory_limit";
    if (const auto* v = keys.if_contains("disk_limit"); v && !v->is_null()) a.disk = "disk_limit";
    if (const auto* v = keys.if_contains("network_enabled"); v && v->is_bool() && !v->get_bool())
        a.network_off = "network_enabled false";
    const auto non_empty = [&](const char* key) {
        const auto* v = keys.if_contains(key);
        return v && v->is_array() && !v->get_array().empty();
    };
    if (non_empty("readable_paths") || non_empty("writable_paths")) a.paths = "readable_paths/writable_paths";
    return a;
}

asked_settings asked_by(const options& o)
{
    asked_settings a = asked_by(policy_file_keys(o));
    if (a.memory == "memory_limit") a.memory = "--policy memory_limit";
    if (a.disk == "disk_limit") a.disk = "--policy disk_limit";
    if (!a.network_off.empty()) a.network_off = "--policy network_enabled false";
    if (!a.paths.empty()) a.paths = "--policy readable_paths/writable_paths";
    if (o.memory) a.memory = "--memory";
    if (o.disk && *o.disk) a.disk = "--disk";
    if (o.network && !*o.network) a.network_off = "--no-network";
    if (!o.readable.empty() || !o.writable.empty()) a.paths = "--ro/--rw";
    return a;
}

std::string limit_origin(const options& o, bool flag_given, std::string_view flag, std::string_view key)
{
    if (flag_given) return std::string(flag);
    if (policy_file_keys(o).contains(key)) return "--policy " + std::string(key);
    return "default " + std::string(flag);
}

std::string caps_json(const capabilities& c)
{
    const auto b = [](bool v) { return v ? "true" : "false"; };
    return std::string("{\"level\":\"") + std::string(to_string(c.level)) + "\",\"network_isolated\":" +
           b(c.network_isolated) + ",\"memory_enforced\":" + b(c.memory_enforced) +
           ",\"filesystem_confined\":" + b(c.filesystem_confined) + ",\"disk_enforced\":" + b(c.disk_enforced) + "}";
}

std::vector<std::string> unenforced_settings(const asked_settings& a, const execution_policy& p,
                                             const capabilities& caps, driver d)
{
    std::vector<std::string> out;
    const std::string by = " is not enforced by the " + std::string(to_string(d)) + " driver";
    if (!a.memory.empty() && !caps.memory_enforced) out.push_back(a.memory + " " + p.memory_limit() + by);
    if (!a.disk.empty() && p.disk_limit() && !caps.disk_enforced) out.push_back(a.disk + " " + *p.disk_limit() + by);
    if (!a.network_off.empty() && !p.network_enabled() && !caps.network_isolated)
        out.push_back(a.network_off + by + " (the command has the network)");
    // The process limit comes with the memory limit's cgroup: without one (an unprivileged
    // caller with no delegated cgroup) nothing bounds how many processes a command starts.
    if (caps.level != isolation::none && caps.level != isolation::container && !caps.memory_enforced)
        out.push_back("the process limit" + by + " (no cgroup can be made here: the command's processes count only "
                      "against this user's own RLIMIT_NPROC)");
    if (!a.paths.empty() && caps.level == isolation::none)
        out.push_back(a.paths + by + " (the command can read and write what this user can)");
    return out;
}

}  // namespace sandbox::cli
