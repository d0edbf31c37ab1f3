// SPDX-License-Identifier: BSL-1.0
#include "sys/cgroup.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <algorithm>
#include <fstream>
#include <sstream>
#include <system_error>
#include <thread>

namespace sandbox::detail {

namespace {

struct hierarchy {
    std::filesystem::path parent;  // where our cgroups are created
    bool v2 = false;
};

// Where this process's memory and pids cgroups are, read once.
struct layout {
    std::optional<hierarchy> memory;
    std::optional<hierarchy> pids;
    std::string why_not;
};

std::vector<std::string> split(const std::string& s, char sep)
{
    std::vector<std::string> out;
    std::string item;
    std::istringstream in(s);
    while (std::getline(in, item, sep)) out.push_back(item);
    return out;
}

bool contains(const std::vector<std::string>& v, const std::string& x)
{
    return std::find(v.begin(), v.end(), x) != v.end();
}

layout probe()
{
    layout l;
    // mount point and root of each cgroup hierarchy
    struct mount_info {
        std::string root, point;
        std::vector<std::string> options;
        bool v2;
    };
    std::vector<mount_info> mounts;
    std::ifstream mi("/proc/self/mountinfo");
    for (std::string line; std::getline(mi, line);) {
        // id parent major:minor root mount-point options [optional...] - fstype source super-options
        const auto dash = line.find(" - ");
        if (dash == std::string::npos) continue;
        auto left = split(line.substr(0, dash), ' ');
        auto right = split(line.substr(dash + 3), ' ');
        if (left.size() < 5 || right.size() < 3) continue;
        if (right[0] == "cgroup") mounts.push_back({left[3], left[4], split(right[2], ','), false});
        else if (right[0] == "cgroup2") mounts.push_back({left[3], left[4], {}, true});
    }
    std::ifstream cg("/proc/self/cgroup");
    for (std::string line; std::getline(cg, line);) {
        const auto first = line.find(':'), second = line.find(':', first + 1);
        if (first == std::string::npos || second == std::string::npos) continue;
        const auto controllers = split(line.substr(first + 1, second - first - 1), ',');
        const std::string path = line.substr(second + 1);
        for (const auto& m : mounts) {
            const bool v2 = line.compare(0, 3, "0::") == 0;
            if (m.v2 != v2) continue;
            // Our cgroup path relative to the mount's root.
            std::string rel = path;
            if (m.root != "/" && rel.compare(0, m.root.size(), m.root) == 0) rel = rel.substr(m.root.size());
            const std::filesystem::path dir = std::filesystem::path(m.point) / std::filesystem::path(rel).relative_path();
            if (v2) {
                std::ifstream sc(dir / "cgroup.subtree_control");
                std::string enabled;
                std::getline(sc, enabled);
                const auto list = split(enabled, ' ');
                if (!l.memory && contains(list, "memory")) l.memory = hierarchy{dir, true};
                if (!l.pids && contains(list, "pids")) l.pids = hierarchy{dir, true};
            } else {
                if (!l.memory && contains(controllers, "memory") && contains(m.options, "memory"))
                    l.memory = hierarchy{dir, false};
                if (!l.pids && contains(controllers, "pids") && contains(m.options, "pids"))
                    l.pids = hierarchy{dir, false};
            }
        }
    }
    if (!l.memory) l.why_not = "no memory cgroup controller is mounted or delegated";
    return l;
}

const layout& cached_layout()
{
    static const layout l = probe();
    return l;
}

bool write_file(const std::filesystem::path& p, const std::string& value)
{
    std::ofstream f(p);
    f << value;
    f.flush();
    return static_cast<bool>(f);
}

}  // namespace

std::optional<cgroup_limits> cgroup_limits::create(const std::string& name, std::uint64_t memory_bytes, int pids_max,
                                                   std::string& why)
{
    const auto& l = cached_layout();
    if (!l.memory) {
        why = l.why_not;
        return std::nullopt;
    }
    cgroup_limits limits;
    auto make = [&](const hierarchy& h) -> std::optional<std::filesystem::path> {
        auto dir = h.parent / name;
        if (::mkdir(dir.c_str(), 0755) != 0) {
            why = "cannot create cgroup " + dir.string() + ": " + std::error_code(errno, std::system_category()).message();
            return std::nullopt;
        }
        limits.dirs_.push_back(dir);
        return dir;
    };
    const auto mem = make(*l.memory);
    if (!mem) return std::nullopt;
    const std::string bytes = std::to_string(memory_bytes);
    if (l.memory->v2) {
        if (!write_file(*mem / "memory.max", bytes)) {
            why = "cannot set memory.max in " + mem->string();
            return std::nullopt;
        }
        (void)write_file(*mem / "memory.swap.max", "0");
    } else {
        if (!write_file(*mem / "memory.limit_in_bytes", bytes)) {
            why = "cannot set memory.limit_in_bytes in " + mem->string();
            return std::nullopt;
        }
        // Memory plus swap: no swapping past the limit (absent without swap accounting).
        if (std::filesystem::exists(*mem / "memory.memsw.limit_in_bytes"))
            (void)write_file(*mem / "memory.memsw.limit_in_bytes", bytes);
    }
    if (l.pids && pids_max > 0) {
        std::filesystem::path pids_dir = *mem;
        if (!(l.pids->v2 && l.memory->v2 && l.pids->parent == l.memory->parent)) {
            const auto d = make(*l.pids);
            if (!d) return std::nullopt;
            pids_dir = *d;
        }
        if (!write_file(pids_dir / "pids.max", std::to_string(pids_max))) {
            why = "cannot set pids.max in " + pids_dir.string();
            return std::nullopt;
        }
    }
    return std::optional<cgroup_limits>(std::move(limits));
}

cgroup_limits cgroup_limits::existing(const std::string& name)
{
    cgroup_limits found;
    const auto& l = cached_layout();
    for (const auto& h : {l.memory, l.pids}) {
        if (!h || name.empty() || name.find('/') != std::string::npos) continue;
        const auto dir = h->parent / name;
        struct stat st {};
        if (::lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) &&
            std::find(found.dirs_.begin(), found.dirs_.end(), dir) == found.dirs_.end())
            found.dirs_.push_back(dir);
    }
    return found;
}

std::vector<std::string> cgroup_limits::join_prefix() const
{
    // The shell writes its own pid into each cgroup.procs, then becomes the command.
    std::vector<std::string> argv{"/bin/sh", "-c",
                                  "while [ \"$1\" != -- ]; do echo $$ > \"$1\" || exit 125; shift; done; shift; "
                                  "exec \"$@\"",
                                  "sandbox-cgroup"};
    for (const auto& d : dirs_) argv.push_back((d / "cgroup.procs").string());
    argv.push_back("--");
    return argv;
}

void cgroup_limits::remove() noexcept
{
    for (const auto& dir : dirs_) {
        // Normally empty by now: the command's tree was killed and reaped.
        if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) continue;
        // Something escaped the tree kill: kill what is inside, then retry briefly.
        for (int attempt = 0; attempt < 20; ++attempt) {
            std::ifstream procs(dir / "cgroup.procs");
            for (pid_t pid; procs >> pid;) ::kill(pid, SIGKILL);
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            if (::rmdir(dir.c_str()) == 0 || errno != EBUSY) break;
        }
    }
    dirs_.clear();
}

}  // namespace sandbox::detail
