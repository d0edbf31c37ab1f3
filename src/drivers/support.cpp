// SPDX-License-Identifier: BSL-1.0
// Finding a driver's tool, and the environment and ids its commands get.
#include "drivers/support.hpp"

#include <sandbox/environment.hpp>
#include <sandbox/errors.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <cerrno>
#include <cstdlib>
#include <system_error>

namespace sandbox::detail {

std::string errno_text(int err) { return std::error_code(err, std::system_category()).message(); }

void fail_start(std::string_view error_name, const std::string& why, boost::system::error_code code)
{
    throw launch_error(code, "Failed to start " + std::string(error_name) + ": " + why);
}

namespace {

std::string not_executable(const std::string& path)
{
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return path + ": " + errno_text(errno);
    if (S_ISDIR(st.st_mode)) return path + ": is a directory";
    if (::access(path.c_str(), X_OK) != 0) return path + ": " + errno_text(errno);
    return {};
}

}  // namespace

std::string find_on_path(std::string_view name)
{
    std::string dirs;
    if (const char* p = std::getenv("PATH")) dirs = p;
    dirs += ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    std::size_t start = 0;
    while (start <= dirs.size()) {
        const auto end = std::min(dirs.find(':', start), dirs.size());
        std::string dir = dirs.substr(start, end - start);
        start = end + 1;
        if (dir.empty()) continue;
        std::string candidate = dir + "/" + std::string(name);
        // Absolute: the launch runs in the work dir, where a relative path means nothing.
        if (not_executable(candidate).empty()) return std::filesystem::absolute(candidate).lexically_normal().string();
    }
    return {};
}

std::string resolve_binary(const std::string& configured, const char* env_var, std::string_view name,
                           std::string_view error_name, const char* installed)
{
    std::string chosen = configured;
    std::string source = "driver_options::binary";
    if (chosen.empty()) {
        if (const char* v = std::getenv(env_var); v && *v) {
            chosen = v;
            source = env_var;
        } else if (installed) {
            chosen = installed;
            source = "where the library installed it";
        }
    }
    if (chosen.empty()) {
        std::string found = find_on_path(name);
        if (found.empty()) fail_start(error_name, std::string(name) + " not found on PATH (is it installed?)");
        return found;
    }
    if (chosen.find('/') == std::string::npos) {
        std::string found = find_on_path(chosen);
        if (found.empty()) fail_start(error_name, chosen + " (from " + source + ") not found on PATH");
        return found;
    }
    if (auto why = not_executable(chosen); !why.empty()) fail_start(error_name, why + " (from " + source + ")");
    return std::filesystem::absolute(chosen).lexically_normal().string();
}

env_list sandbox_environment(const execution_policy& policy)
{
    env_list env = child_environment(policy);
    const bool has_path = std::any_of(env.begin(), env.end(), [](const auto& kv) { return kv.first == "PATH"; });
    if (!has_path) env.emplace_back("PATH", std::string(default_sandbox_path));
    return env;
}

uid_t sandbox_uid() noexcept { return ::geteuid() == 0 ? 65534 : ::geteuid(); }
gid_t sandbox_gid() noexcept { return ::geteuid() == 0 ? 65534 : ::getegid(); }

std::optional<std::chrono::milliseconds> wall_timeout(const execution_policy& policy, const exec_options& o)
{
    const auto wall = o.timeout.value_or(policy.timeout());
    if (wall == no_timeout) return std::nullopt;
    return std::max(wall, std::chrono::milliseconds::zero());
}

env_list with_extra_env(env_list base, const env_list& extra, const execution_policy& policy)
{
    const auto& unblocked = policy.env_unblocked();
    for (const auto& [name, value] : extra) {
        if (is_blocked_env_name(name) && std::find(unblocked.begin(), unblocked.end(), name) == unblocked.end()) continue;
        auto it = std::find_if(base.begin(), base.end(), [&n = name](const auto& kv) { return kv.first == n; });
        if (it != base.end()) it->second = value;
        else base.emplace_back(name, value);
    }
    return base;
}

void signal_descendants(pid_t launcher, std::string_view launcher_name, int sig) noexcept
{
    try {
        const auto read = [](const std::string& path) {
            std::ifstream in(path);
            std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            return text;
        };
        std::vector<pid_t> todo{launcher};
        for (std::size_t seen = 0; seen < todo.size() && seen < 4096; ++seen) {
            const auto pid = todo[seen];
            const auto dir = "/proc/" + std::to_string(pid);
            if (pid != launcher) {
                auto name = read(dir + "/comm");
                if (!name.empty() && name.back() == '\n') name.pop_back();
                if (name != launcher_name) ::kill(pid, sig);
            }
            std::error_code ec;
            for (const auto& task : std::filesystem::directory_iterator(dir + "/task", ec)) {
                std::istringstream children(read(task.path().string() + "/children"));
                for (pid_t child = 0; children >> child;) todo.push_back(child);
            }
        }
    } catch (...) {  // out of memory: the grace's SIGKILL follows anyway
    }
}

}  // namespace sandbox::detail
