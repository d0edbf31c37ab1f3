// SPDX-License-Identifier: BSL-1.0
// sandbox-seccomp-exec setid PROGRAM [ARG...]: loads the filter that refuses to make set-id
// files (src/sys/seccomp_filter.hpp) and executes PROGRAM. firejail runs it inside the jail,
// before the command, where no_new_privs is already set: what lets a command write through
// an idmapped writable path (its files are the path's owner's, maybe root's) without leaving
// a set-id program on the host. firejail itself, which makes set-id directories of its own,
// runs unfiltered.
#include "sys/seccomp_filter.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>

int main(int argc, char** argv)
{
    if (argc < 3 || std::string_view(argv[1]) != "setid") {
        std::fprintf(stderr, "usage: sandbox-seccomp-exec setid PROGRAM [ARG...]\n");
        return 125;
    }
    if (const auto why = sandbox::detail::load_setid_filter(); !why.empty()) {
        std::fprintf(stderr, "sandbox: cannot load the set-id filter: %s\n", why.c_str());
        return 125;  // the command never ran
    }
    ::execvp(argv[2], argv + 2);
    const int err = errno;
    // What the runner turns into its one "Failed to start" line (src/drivers/start_failure.cpp).
    std::fprintf(stderr, "sandbox: cannot execute %s: %s\n", argv[2], std::strerror(err));
    return err == ENOENT ? 127 : 126;
}
