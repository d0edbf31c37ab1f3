// SPDX-License-Identifier: BSL-1.0
// firejail 0.9.72: it has no --chdir and cannot create mount points, so the work dir is the
// jail's home and cwd, and extra paths keep their host paths. It refuses to run as an
// unprivileged system user, so under a root caller the command is root without
// capabilities, with no-new-privileges, seccomp and a read-only host.
#include "drivers/plans.hpp"

#include <cctype>
#include <fstream>
#include <sstream>

namespace sandbox::detail {

namespace {

// mountinfo writes space, tab, newline and backslash as octal escapes (\040 ...).
std::string decode_mountinfo(const std::string& field)
{
    std::string out;
    for (std::size_t i = 0; i < field.size(); ++i) {
        if (field[i] == '\\' && i + 3 < field.size() &&
            std::isdigit(static_cast<unsigned char>(field[i + 1])) && std::isdigit(static_cast<unsigned char>(field[i + 2])) &&
            std::isdigit(static_cast<unsigned char>(field[i + 3]))) {
            out += static_cast<char>((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 + (field[i + 3] - '0'));
            i += 3;
        } else {
            out += field[i];
        }
    }
    return out;
}

}  // namespace

std::string firejail_path_problem(const std::string& path)
{
    for (unsigned char c : path) {
        const bool plain = std::isalnum(c) || c == '/' || c == '.' || c == '_' || c == '-' || c == '+' ||
                           c == '@' || c == '=' || c == '%';
        if (!plain) {
            std::string shown = c >= 0x20 && c < 0x7f ? std::string(1, static_cast<char>(c)) : "\\x" + std::to_string(c);
            return "it holds '" + shown + "', which firejail would expand or reject";
        }
    }
    return {};
}

std::vector<std::string> writable_host_mounts()
{
    std::vector<std::string> out;
    std::ifstream mi("/proc/self/mountinfo");
    for (std::string line; std::getline(mi, line);) {
        std::istringstream in(line);
        std::string id, parent, dev, root, point, options;
        in >> id >> parent >> dev >> root >> point >> options;
        point = decode_mountinfo(point);
        if (point == "/" || options.compare(0, 2, "rw") != 0) continue;
        // firejail builds its own /proc, /sys, /dev and /tmp, and owns /run/firejail.
        bool skip = false;
        for (const char* own : {"/proc", "/sys", "/dev", "/tmp", "/run/firejail"}) {
            const std::string o = own;
            if (point == o || point.compare(0, o.size() + 1, o + "/") == 0) skip = true;
        }
        if (!skip) out.push_back(point);
    }
    return out;
}

std::vector<std::string> firejail_argv(const sandbox_setup& s, const execution_policy& policy,
                                       const std::vector<std::string>& argv)
{
    std::vector<std::string> a = s.limit_prefix;
    a.insert(a.end(), {s.binary,
                       "--quiet",      // else it prints its own messages on the command's stdout
                       "--noprofile",  // predictable: no default profile for root
                       });
    if (!policy.network_enabled()) a.push_back("--net=none");
    a.insert(a.end(), {"--private=" + s.work_dir.string(), "--private-cwd", "--private-dev", "--private-tmp",
                       "--caps.drop=all", "--nonewprivs", "--seccomp", "--read-only=/"});
    for (const auto& m : s.host_writable_mounts) a.push_back("--read-only=" + m);
    for (const auto& m : s.mounts) {
        a.push_back((m.read_only() ? "--read-only=" : "--read-write=") + m.host);
        if (m.host.rfind("/tmp/", 0) == 0) a.push_back("--whitelist=" + m.host);  // --private-tmp hides it
    }
    if (s.rlimit_as) a.push_back("--rlimit-as=" + std::to_string(s.rlimit_as));
    // The command's own exit code, and orphans killed when it ends rather than waited for.
    a.insert(a.end(), {"--deterministic-exit-code", "--deterministic-shutdown"});
    // The environment inside is firejail's own, which the plan sets to s.env.
    a.push_back("--");
    // firejail has no --chdir: coreutils' env moves from the jail's home, the work dir.
    if (!s.cwd.empty()) a.insert(a.end(), {"env", "-C", s.cwd.string(), "--"});
    a.insert(a.end(), argv.begin(), argv.end());
    return a;
}

}  // namespace sandbox::detail
