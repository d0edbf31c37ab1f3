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
    std::filesystem::path whole;   // the hierarchy's root, if it is mounted whole
};

// Where this process's memory, pids and cpuacct cgroups are, read once.
struct layout {
    std::optional<hierarchy> memory;
    std::optional<hierarchy> pids;
    std::optional<hierarchy> cpu;  // v1 cpuacct; v2: the memory one (cpu.stat is always there)
    std::vector<std::filesystem::path> wholes;  // every hierarchy mounted whole
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
            const std::filesystem::path whole = m.root == "/" ? std::filesystem::path(m.point) : std::filesystem::path();
            if (v2) {
                std::ifstream sc(dir / "cgroup.subtree_control");
                std::string enabled;
                std::getline(sc, enabled);
                const auto list = split(enabled, ' ');
                if (!l.memory && contains(list, "memory")) l.memory = hierarchy{dir, true, whole};
                if (!l.pids && contains(list, "pids")) l.pids = hierarchy{dir, true, whole};
            } else {
                if (!l.memory && contains(controllers, "memory") && contains(m.options, "memory"))
                    l.memory = hierarchy{dir, false, whole};
                if (!l.pids && contains(controllers, "pids") && contains(m.options, "pids"))
                    l.pids = hierarchy{dir, false, whole};
                if (!l.cpu && contains(controllers, "cpuacct") && contains(m.options, "cpuacct"))
                    l.cpu = hierarchy{dir, false, whole};
            }
        }
    }
    for (const auto& m : mounts)
        if (m.root == "/" && std::find(l.wholes.begin(), l.wholes.end(), m.point) == l.wholes.end())
            l.wholes.emplace_back(m.point);
    if (l.memory && l.memory->v2) l.cpu = l.memory;
    if (!l.memory) l.why_not = "no memory cgroup controller is mounted or delegated";
    return l;
}

const layout& cached_layout()
{
    static const auto& l = *new const layout(probe());  // never destroyed: library threads use it
    return l;
}

std::optional<std::uint64_t> read_number(const std::filesystem::path& p)
{
    std::ifstream f(p);
    std::uint64_t n = 0;
    if (f >> n) return n;
    return std::nullopt;
}

// The value of `key` in a flat-keyed file ("key value" lines: cpu.stat, memory.events, ...).
std::optional<std::uint64_t> read_key(const std::filesystem::path& p, std::string_view key)
{
    std::ifstream f(p);
    std::string k;
    for (std::uint64_t v = 0; f >> k >> v;)
        if (k == key) return v;
    return std::nullopt;
}

std::optional<cgroup_usage> read_usage(const std::filesystem::path& memory_dir, const std::filesystem::path& cpu_dir,
                                       bool v2, bool oom_kills_counted)
{
    cgroup_usage u;
    std::optional<std::uint64_t> user, system, peak;
    if (v2) {
        user = read_key(cpu_dir / "cpu.stat", "user_usec");
        system = read_key(cpu_dir / "cpu.stat", "system_usec");
        if (!user || !system) return std::nullopt;
        u.user_cpu = std::chrono::microseconds(*user);
        u.system_cpu = std::chrono::microseconds(*system);
        peak = read_number(memory_dir / "memory.peak");
        if (oom_kills_counted) u.oom_kills = read_key(memory_dir / "memory.events", "oom_kill");
    } else {
        user = read_number(cpu_dir / "cpuacct.usage_user");
        system = read_number(cpu_dir / "cpuacct.usage_sys");
        if (user && system) {
            u.user_cpu = std::chrono::nanoseconds(*user);
            u.system_cpu = std::chrono::nanoseconds(*system);
        } else {
            // Before Linux 4.7: clock ticks only.
            user = read_key(cpu_dir / "cpuacct.stat", "user");
            system = read_key(cpu_dir / "cpuacct.stat", "system");
            const long hz = ::sysconf(_SC_CLK_TCK);
            if (!user || !system || hz <= 0) return std::nullopt;
            u.user_cpu = std::chrono::nanoseconds(*user * (1'000'000'000 / hz));
            u.system_cpu = std::chrono::nanoseconds(*system * (1'000'000'000 / hz));
        }
        peak = read_number(memory_dir / "memory.max_usage_in_bytes");
        if (oom_kills_counted) u.oom_kills = read_key(memory_dir / "memory.oom_control", "oom_kill");
    }
    if (!peak) return std::nullopt;
    u.peak_bytes = *peak;
    return u;
}

// Whether a cgroup has child cgroups.
bool has_children(const std::filesystem::path& dir)
{
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->is_directory(ec)) return true;
    return false;
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
        // Co-mounted controllers ("cpu,cpuacct,memory") share one directory.
        if (std::find(limits.dirs_.begin(), limits.dirs_.end(), dir) != limits.dirs_.end()) return dir;
        if (::mkdir(dir.c_str(), 0755) != 0) {
            why = "cannot create cgroup " + dir.string() + ": " + std::error_code(errno, std::system_category()).message();
            return std::nullopt;
        }
        limits.dirs_.push_back(dir);
        return dir;
    };
    const auto mem = make(*l.memory);
    if (!mem) return std::nullopt;
    limits.memory_dir_ = *mem;
    limits.v2_ = l.memory->v2;
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
    // Only for usage(): without it the limits still hold.
    if (l.cpu)
        if (const auto cpu = make(*l.cpu)) limits.cpu_dir_ = *cpu;
    return std::optional<cgroup_limits>(std::move(limits));
}

cgroup_limits cgroup_limits::existing(const std::string& name)
{
    cgroup_limits found;
    const auto& l = cached_layout();
    for (const auto& h : {l.memory, l.pids, l.cpu}) {
        if (!h || name.empty() || name.find('/') != std::string::npos) continue;
        const auto dir = h->parent / name;
        struct stat st {};
        if (::lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) &&
            std::find(found.dirs_.begin(), found.dirs_.end(), dir) == found.dirs_.end())
            found.dirs_.push_back(dir);
    }
    return found;
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
    memory_dir_.clear();
    cpu_dir_.clear();
}

std::optional<cgroup_usage> cgroup_limits::usage() const
{
    if (memory_dir_.empty() || cpu_dir_.empty()) return std::nullopt;
    return read_usage(memory_dir_, cpu_dir_, v2_, true);  // the tree is in it, not below it
}

bool cgroup_usage::oom_seen(std::uint64_t limit_bytes) const noexcept
{
    if (oom_kills) return *oom_kills > 0;
    // An OOM kill comes once reclaim failed at the limit, less at most a charge batch or a
    // huge page.
    constexpr std::uint64_t slack = 4u << 20;
    return limit_bytes > 0 && peak_bytes + slack >= limit_bytes;
}

std::optional<engine_cgroup> engine_cgroup::plan(const std::string& name, std::string& why)
{
    const auto& l = cached_layout();
    if (::geteuid() != 0) {
        why = "not root: the engine's cgroups cannot be read and removed";
        return std::nullopt;
    }
    if (::access("/run/systemd/system", F_OK) == 0) {
        why = "systemd is running: the engine may use its systemd cgroup manager";
        return std::nullopt;
    }
    if (!l.memory || l.memory->whole.empty() || !l.cpu || l.cpu->whole.empty()) {
        why = "the memory and cpuacct cgroup hierarchies are not mounted whole";
        return std::nullopt;
    }
    return engine_cgroup(prefix + name);
}

std::optional<cgroup_usage> engine_cgroup::settle_and_read() const
{
    const auto& l = cached_layout();
    if (parent_.empty() || !l.memory || !l.cpu) return std::nullopt;
    const auto rel = std::filesystem::path(parent_).relative_path();
    const auto memory_dir = l.memory->whole / rel, cpu_dir = l.cpu->whole / rel;
    std::error_code ec;
    if (!std::filesystem::is_directory(memory_dir, ec)) return std::nullopt;  // the engine failed first
    // The client returns once the container is gone; its cgroup may go a moment later.
    for (int attempt = 0; has_children(memory_dir) || has_children(cpu_dir); ++attempt) {
        if (attempt == 400) return std::nullopt;  // 2 s: still running, so not measured
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    // A v1 parent does not count its children's OOM kills: oom_seen() infers them.
    return read_usage(memory_dir, cpu_dir, l.memory->v2, l.memory->v2);
}

void engine_cgroup::remove() noexcept
{
    if (parent_.empty()) return;
    try {
        // Whatever is still below a parent of ours is our run's: a container whose removal
        // raced its creation leaves the runtime's init waiting there forever. Kill it first.
        const auto rel = std::filesystem::path(parent_).relative_path();
        for (int attempt = 0; attempt < 20; ++attempt) {
            bool left = false;
            for (const auto& whole : cached_layout().wholes) {
                const auto dir = whole / rel;
                std::error_code ec;
                for (const auto& child : std::filesystem::directory_iterator(dir, ec)) {
                    if (!child.is_directory(ec)) continue;
                    std::ifstream procs(child.path() / "cgroup.procs");
                    for (pid_t pid; procs >> pid;) ::kill(pid, SIGKILL);
                    if (::rmdir(child.path().c_str()) != 0 && errno == EBUSY) left = true;
                }
                if (::rmdir(dir.c_str()) != 0 && errno == EBUSY) left = true;
            }
            if (!left) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
    } catch (...) {
    }
    parent_.clear();
}

}  // namespace sandbox::detail
