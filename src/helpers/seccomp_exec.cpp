// SPDX-License-Identifier: BSL-1.0
// sandbox-seccomp-exec --refuse ROW[,ROW...] -- PROGRAM [ARG...]: loads the filter of those
// rows of the syscall table (src/sys/syscall_rules.hpp) and executes PROGRAM. firejail runs it
// inside the jail before every command, where no_new_privs is already set: firejail itself is
// set-uid, so no filter of ours can be loaded before it (it makes set-id directories of its
// own and needs calls the table refuses), and its own filter leaves io_uring and keyctl open.
#include "sys/seccomp_filter.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>

int main(int argc, char** argv)
{
    std::uint32_t rules = 0;
    if (argc < 5 || std::string_view(argv[1]) != "--refuse" || std::string_view(argv[3]) != "--" ||
        !sandbox::detail::parse_rules(argv[2], rules)) {
        std::fprintf(stderr, "usage: sandbox-seccomp-exec --refuse ROW[,ROW...] -- PROGRAM [ARG...]\n");
        return 125;
    }
    if (const auto why = sandbox::detail::load_filter(rules); !why.empty()) {
        std::fprintf(stderr, "sandbox: cannot load the seccomp filter: %s\n", why.c_str());
        return 125;  // the command never ran
    }
    ::execvp(argv[4], argv + 4);
    const int err = errno;
    // What the runner turns into its one "Failed to start" line (src/drivers/start_failure.cpp).
    std::fprintf(stderr, "sandbox: cannot execute %s: %s\n", argv[4], std::strerror(err));
    return err == ENOENT ? 127 : 126;
}
