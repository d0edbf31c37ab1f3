// SPDX-License-Identifier: BSL-1.0
#include "drivers/orphans.hpp"

#include "drivers/support.hpp"
#include "run/offload.hpp"
#include "run/spawn.hpp"
#include "sys/cgroup.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <map>
#include <mutex>
#include <sstream>

namespace sandbox::detail {

namespace {

// Field 22 of /proc/<pid>/stat: the start time, after the command name (which may hold
// spaces and parentheses, hence the last ')').
std::string start_time_of(const std::string& pid)
{
    // getline, not an istreambuf_iterator: reading a process that exits meanwhile fails
    // with ESRCH, which the stream buffer would throw.
    std::ifstream in("/proc/" + pid + "/stat");
    std::string stat;
    std::getline(in, stat);
    const auto close = stat.rfind(')');
    if (close == std::string::npos) return {};
    std::istringstream rest(stat.substr(close + 1));
    std::string field;
    for (int i = 3; i <= 22 && rest >> field; ++i) {
        if (i == 22) return field;
    }
    return {};
}

// The value after `key` and its separator ('=' for docker, ':' for podman), up to the next
// separator of entries.
std::string label_value(std::string_view labels, std::string_view key)
{
    for (std::size_t at = labels.find(key); at != std::string_view::npos; at = labels.find(key, at + 1)) {
        const bool starts = at == 0 || labels[at - 1] == ',' || labels[at - 1] == ' ' || labels[at - 1] == '[';
        const auto sep = at + key.size();
        if (!starts || sep >= labels.size() || (labels[sep] != '=' && labels[sep] != ':')) continue;
        const auto end = labels.find_first_of(", ]", sep + 1);
        return std::string(labels.substr(sep + 1, end == std::string_view::npos ? end : end - sep - 1));
    }
    return {};
}

}  // namespace

// A hung engine: the client is killed at `bound`, and the sweep gives up until next time.
std::optional<std::string> engine_output(const std::vector<std::string>& args, const std::vector<std::string>& env,
                                         std::chrono::milliseconds bound)
{
    spawn_request req{.argv = args, .env = env, .open_pidfd = false};
    child_pipes pipes;
    std::string what;
    if (prepare_spawn(req, pipes, what)) return std::nullopt;
    auto o = spawn_child(req, pipes);
    if (o.error) return std::nullopt;
    std::string out;
    char buf[4096];
    const auto deadline = std::chrono::steady_clock::now() + bound;
    bool hung = false;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        pollfd p{pipes.stdout_r.get(), POLLIN, 0};
        const int ready = left.count() > 0 ? ::poll(&p, 1, static_cast<int>(left.count())) : 0;
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) {
            hung = true;
            break;
        }
        const auto n = ::read(pipes.stdout_r.get(), buf, sizeof buf);
        if (n > 0) out.append(buf, static_cast<std::size_t>(n));
        else if (n == 0 || errno != EINTR) break;
    }
    // Its own process group: what the client started goes with it.
    if (hung) o.child.signal_tree(SIGKILL);
    (void)o.child.wait_and_reap();
    if (hung) return std::nullopt;
    return out;
}

bool is_storage_leftover(std::string_view line, std::int64_t now, std::chrono::seconds grace)
{
    // "sandbox-" and 24 hex digits: random_sandbox_name()'s.
    const auto a = line.find(' ');
    const auto b = a == std::string_view::npos ? a : line.find(' ', a + 1);
    if (b == std::string_view::npos) return false;
    const auto name = line.substr(0, a);
    const auto state = line.substr(a + 1, b - a - 1);
    if (name.size() != 32 || !name.starts_with("sandbox-") ||
        name.find_first_not_of("0123456789abcdef", 8) != std::string_view::npos)
        return false;
    if (state != "Storage" && state != "storage") return false;
    std::int64_t created = 0;
    const auto t = line.substr(b + 1);
    if (std::from_chars(t.data(), t.data() + t.size(), created).ec != std::errc{}) return false;
    return now - created >= grace.count();
}

std::vector<std::string> sweep_orphans(const std::string& binary, bool podman, const std::vector<std::string>& env,
                                       std::chrono::milliseconds bound, std::chrono::seconds storage_grace)
{
    const auto listed = engine_output({binary, "ps", "-a", "--filter", "label=sandbox.machine=" + machine_label(),
                                      "--format", "{{.Names}} {{.Labels}}"},
                                     env, bound);
    if (!listed) return {};
    const auto& listing = *listed;
    const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch()).count();
    std::vector<std::string> remove{binary, "rm", "-f"};
    if (podman) remove.insert(remove.end(), {"-t", "0"});
    const auto base = remove.size();
    std::istringstream lines(listing);
    for (std::string line; std::getline(lines, line);) {
        const auto c = parse_ps_line(line);
        if (!c.name.empty() && is_orphan(c, now, starter_alive(c))) remove.push_back(c.name);
    }
    // podman's client killed while it created the container can leave it in storage only,
    // which `ps` lists with --external alone, and `rm -f` removes.
    if (podman) {
        const auto external =
            engine_output({binary, "ps", "-a", "--external", "--format", "{{.Names}} {{.State}} {{.Created.Unix}}"}, env,
                          bound);
        std::istringstream ext(external.value_or(""));
        for (std::string line; std::getline(ext, line);) {
            if (!is_storage_leftover(line, now, storage_grace)) continue;
            auto name = line.substr(0, line.find(' '));
            if (std::find(remove.begin() + static_cast<std::ptrdiff_t>(base), remove.end(), name) == remove.end())
                remove.push_back(std::move(name));
        }
    }
    // The engine prints the name of what it removed. What it did not remove is tried once
    // more: podman's first removal of a container whose monitor died with its starter only
    // finds its state stale ("container state improper") and corrects it.
    std::vector<std::string> removed;
    for (int attempt = 0; attempt < 2 && remove.size() > base; ++attempt) {
        const auto out = engine_output(remove, env, bound);
        if (!out) break;
        std::istringstream printed(*out);
        for (std::string name; std::getline(printed, name);) {
            const auto at = std::find(remove.begin() + static_cast<std::ptrdiff_t>(base), remove.end(), name);
            if (at == remove.end()) continue;
            removed.push_back(name);
            remove.erase(at);
        }
    }
    for (const auto& name : removed) engine_cgroup::remove_left_by(name);  // their --cgroup-parent
    return removed;
}

const std::string& machine_label()
{
    // Never destroyed: a sweep may still run on its worker thread while the process exits.
    static const std::string* const m = new std::string([] {
        std::ifstream in("/etc/machine-id");
        std::string id;
        if (in >> id && !id.empty()) return id;
        char host[256] = {};
        ::gethostname(host, sizeof host - 1);
        return std::string(host);
    }());
    return *m;
}

const std::string& owner_label()
{
    // Per process: a forked child is an owner of its own.
    static thread_local std::string cached;
    static thread_local pid_t cached_for = -1;
    if (cached_for != ::getpid()) {
        cached_for = ::getpid();
        const auto pid = std::to_string(cached_for);
        cached = pid + "." + start_time_of(pid);
    }
    return cached;
}

bool owner_alive(std::string_view owner)
{
    const auto dot = owner.find('.');
    if (dot == std::string_view::npos || dot == 0) return true;  // not ours to judge
    const std::string pid(owner.substr(0, dot));
    const auto start = start_time_of(pid);
    return !start.empty() && start == owner.substr(dot + 1);
}

std::vector<std::string> container_labels(std::int64_t deadline, const std::string& record)
{
    std::vector<std::string> a{"--label", "sandbox.machine=" + machine_label(), "--label",
                               "sandbox.owner=" + owner_label(), "--label",
                               "sandbox.deadline=" + std::to_string(deadline)};
    if (!record.empty()) {
        const auto dir = std::filesystem::path(record).parent_path().string();
        a.insert(a.end(), {"--label", "sandbox.record=" + record, "--label", "sandbox.records=" + directory_id(dir)});
    }
    return a;
}

std::string directory_id(const std::string& dir)
{
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return {};
    return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
}

bool record_held(const std::string& record, const std::string& dir_id)
{
    const auto dir = std::filesystem::path(record).parent_path().string();
    if (dir_id.empty() || directory_id(dir) != dir_id) return true;  // not the directory it was made in
    const int fd = ::open(record.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    // Gone: its run ended (a run removes its container before its record) or was swept.
    if (fd < 0) return errno != ENOENT;
    const bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    ::close(fd);  // a lock we took goes with it: the record is sweep_dead_runs' to remove
    return held;
}

std::string run_comment(const std::string& record)
{
    return "sandbox.run " + machine_label() + " " +
           directory_id(std::filesystem::path(record).parent_path().string()) + " " + record;
}

std::optional<commented_run> parse_run_comment(std::string_view comment)
{
    constexpr std::string_view head = "sandbox.run ";
    if (!comment.starts_with(head)) return std::nullopt;
    comment.remove_prefix(head.size());
    commented_run r;
    const auto a = comment.find(' ');
    if (a == std::string_view::npos || a == 0) return std::nullopt;
    r.machine = std::string(comment.substr(0, a));
    const auto b = comment.find(' ', a + 1);
    if (b == std::string_view::npos || b == a + 1 || b + 1 >= comment.size()) return std::nullopt;
    r.record_dir = std::string(comment.substr(a + 1, b - a - 1));
    r.record = std::string(comment.substr(b + 1));  // a path may hold spaces: the rest
    return r;
}

void cancel_slurm_jobs_of_dead_runs(const std::vector<std::string>& env)
{
    const auto squeue = find_on_path("squeue"), scancel = find_on_path("scancel");
    if (squeue.empty() || scancel.empty()) return;
    const auto listed = engine_output({squeue, "--me", "-h", "-o", "%i %k"}, env, std::chrono::seconds(30));
    if (!listed) return;
    std::vector<std::string> cancel{scancel};
    std::istringstream lines(*listed);
    for (std::string line; std::getline(lines, line);) {
        const auto space = line.find(' ');
        if (space == std::string::npos) continue;
        const auto run = parse_run_comment(std::string_view(line).substr(space + 1));
        if (run && run->machine == machine_label() && !record_held(run->record, run->record_dir))
            cancel.push_back(line.substr(0, space));
    }
    if (cancel.size() > 1) (void)engine_output(cancel, env, std::chrono::seconds(30));
}

bool starter_alive(const labelled_container& c)
{
    return c.record.empty() ? owner_alive(c.owner) : record_held(c.record, c.record_dir);
}

labelled_container parse_ps_line(std::string_view line)
{
    labelled_container c;
    const auto space = line.find(' ');
    if (space == std::string_view::npos || space == 0) return c;
    c.name = std::string(line.substr(0, space));
    const auto labels = line.substr(space + 1);
    c.machine = label_value(labels, "sandbox.machine");
    c.owner = label_value(labels, "sandbox.owner");
    c.record = label_value(labels, "sandbox.record");
    c.record_dir = label_value(labels, "sandbox.records");
    const auto d = label_value(labels, "sandbox.deadline");
    if (std::from_chars(d.data(), d.data() + d.size(), c.deadline).ec != std::errc{}) c.deadline = 0;
    return c;
}

bool is_orphan(const labelled_container& c, std::int64_t now, bool owner_is_alive)
{
    if (c.machine.empty() || c.machine != machine_label()) return false;
    return !owner_is_alive || (c.deadline > 0 && now > c.deadline);
}

void sweep_orphans_when_due(const std::string& binary, bool podman, std::vector<std::string> env)
{
    // Never destroyed, as every static a library thread may touch (it outlives them).
    static auto& m = *new std::mutex;
    static auto& last = *new std::map<std::string, std::chrono::steady_clock::time_point>;
    {
        const auto now = std::chrono::steady_clock::now();
        std::lock_guard lock(m);
        const auto [at, first] = last.try_emplace(binary, now);
        if (!first && now - at->second < std::chrono::minutes(10)) return;
        at->second = now;
    }
    try {
        run_on(worker::engine, [binary, podman, env = std::move(env)] {
            try {
                (void)sweep_orphans(binary, podman, env);
            } catch (...) {  // best effort: the engine may be down
            }
        });
    } catch (...) {
    }
}

}  // namespace sandbox::detail
