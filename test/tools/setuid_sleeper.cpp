// SPDX-License-Identifier: BSL-1.0
// Installed set-user-ID root by the test that uses it: it becomes root for good (real and
// saved ids too), so the unprivileged user who started it can no longer signal it, SIGKILL
// included. Says "root" on stdout once it is, then sleeps argv[1] seconds.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv)
{
    if (argc != 2 || ::setresuid(0, 0, 0) != 0) return 3;
    std::puts("root");
    std::fflush(stdout);
    ::sleep(static_cast<unsigned>(std::atoi(argv[1])));
    return 0;
}
