// SPDX-License-Identifier: BSL-1.0
// Whether a readable or writable path can be mounted at its place: a pure check of the path,
// shared by the launch (which refuses such a path) and the command line (which says so first).
#include <sandbox/mount.hpp>

#include <filesystem>
#include <string>
#include <system_error>

namespace sandbox {

namespace {

// No `..` component, and no symlink on the way: the path, made absolute, is its real path.
bool is_plain_path(const std::filesystem::path& p, const std::filesystem::path& real)
{
    for (const auto& part : p)
        if (part == "..") return false;
    std::error_code ec;
    auto normal = std::filesystem::absolute(p, ec).lexically_normal();
    if (ec) return false;
    if (!normal.has_filename() && normal.has_parent_path() && normal != "/") normal = normal.parent_path();  // "/a/"
    return normal == real;
}

}  // namespace

std::string mount_path_problem(const std::filesystem::path& p)
{
    std::error_code ec;
    const auto real = std::filesystem::canonical(p, ec);
    if (ec) return ec == std::errc::no_such_file_or_directory ? "does not exist" : "cannot be reached: " + ec.message();
    if (real.native().find(':') != std::string::npos) return "holds ':', which the engines' mount options cannot carry";
    if (!is_plain_path(p, real))
        return "is reached through a symbolic link or '..' (its real path is " + real.string() +
               "): name the real path, so a link planted later cannot move the mount";
    return {};
}

}  // namespace sandbox
