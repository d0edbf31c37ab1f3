// SPDX-License-Identifier: BSL-1.0
#include "io.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace sandbox::cli {

void write_all(int fd, std::string_view data)
{
    while (!data.empty()) {
        const ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            const int e = errno;
            throw write_error(e, std::system_category().message(e));
        }
        data.remove_prefix(static_cast<std::size_t>(n));
    }
}

std::string read_all(int fd)
{
    std::string out;
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n > 0) {
            out.append(buf, static_cast<std::size_t>(n));
            continue;
        }
        if (n == 0) return out;
        if (errno == EINTR) continue;
        throw std::system_error(errno, std::system_category(), "reading stdin");
    }
}

bool is_terminal(int fd) noexcept { return ::isatty(fd) == 1; }

void ensure_descriptor_limit(unsigned long wanted) noexcept
{
    rlimit rl{};
    if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < wanted) {
        rl.rlim_cur = (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > wanted) ? wanted : rl.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &rl);
    }
}

std::string shell_quote(std::string_view s)
{
    if (!s.empty() && s.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./=:,@%+-") ==
                          std::string_view::npos)
        return std::string(s);
    std::string out = "'";
    for (char c : s) {
        if (c == '\'') out += "'\\''";
        else out += c;
    }
    return out + "'";
}

std::string shell_command(const std::vector<std::string>& args)
{
    std::string s;
    for (const auto& a : args) {
        if (!s.empty()) s += ' ';  // appended, not "x" + string: g++ 12 -O3 warns (-Wrestrict) on that
        s += shell_quote(a);
    }
    return s;
}

std::string own_program_path()
{
    char buf[4096];
    const auto n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

}  // namespace sandbox::cli
