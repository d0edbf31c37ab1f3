// SPDX-License-Identifier: BSL-1.0
// Which host paths a run mounts, and where: the policy's readable and writable paths, and
// the host's mount points below them.
#include "drivers/support.hpp"

#include "drivers/driver_spec.hpp"
#include <sandbox/mount.hpp>

#include <fstream>
#include <sstream>
#include <system_error>

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

std::vector<host_mount> host_mounts()
{
    std::vector<host_mount> out;
    std::ifstream mi("/proc/self/mountinfo");
    for (std::string line; std::getline(mi, line);) {
        std::istringstream in(line);
        std::string id, parent, dev, root, point, options;
        in >> id >> parent >> dev >> root >> point >> options;
        out.push_back({decode_mountinfo(point), options.compare(0, 2, "rw") == 0});
    }
    return out;
}

std::vector<mount> with_read_only_submounts(std::vector<mount> mounts, const std::vector<host_mount>& host)
{
    const auto asked = mounts;
    for (const auto& m : asked) {
        if (!m.read_only()) continue;
        const std::string prefix = m.host == "/" ? "/" : m.host + "/";
        for (const auto& h : host) {
            if (h.point.size() <= prefix.size() || h.point.compare(0, prefix.size(), prefix) != 0) continue;
            mount sub{h.point, m.container + "/" + h.point.substr(prefix.size()), "ro"};
            // A path asked for on its own keeps what was asked.
            const bool taken = std::any_of(mounts.begin(), mounts.end(), [&](const mount& x) {
                return x.container == sub.container || x.host == sub.host;
            });
            if (!taken) mounts.push_back(std::move(sub));
        }
    }
    return mounts;
}

}  // namespace sandbox::detail

namespace sandbox {

std::vector<mount> mounts_for(const execution_policy& policy, driver d)
{
    const bool same_paths = detail::spec_of(d).host_paths;
    std::vector<mount> out;
    auto add = [&](const std::vector<std::filesystem::path>& paths, const char* prefix, const char* options) {
        std::size_t index = 0;
        for (const auto& p : paths) {
            if (!mount_path_problem(p).empty()) continue;
            // The path as named, which the check found to be its real path: resolving it
            // again would follow a link swapped in since (the launch pins it, refusing one).
            auto real = std::filesystem::absolute(p).lexically_normal();
            if (!real.has_filename() && real.has_parent_path() && real != "/") real = real.parent_path();  // "/a/"
            out.push_back({real.string(), same_paths ? real.string() : prefix + std::to_string(index), options});
            ++index;
        }
    };
    add(policy.writable_paths(), "/mnt/rw", "rw");
    add(policy.readable_paths(), "/mnt/ro", "ro");
    return out;
}

}  // namespace sandbox
