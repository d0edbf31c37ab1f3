// SPDX-License-Identifier: BSL-1.0
// A child process with predictable behaviour for the runner tests.
//
//   exit N                  exit with status N
//   sleep MS                sleep, then exit 0
//   spam N TAIL             write N 'x' bytes, then TAIL
//   pattern N               write N bytes of a repeating 0..250 pattern in 64 KiB writes
//   trickle COUNT MS        print "tick <i>" COUNT times, MS apart
//   ignore-term MS          ignore SIGTERM, print "ready", sleep MS
//   stdin-count             read stdin to EOF, print the byte count
//   print-fds               print the open descriptor numbers, space separated
//   print-env               print the environment, one NAME=value per line
//   print-cwd               print the working directory
//   print-signals           print the blocked and ignored signal masks (hex)
//   alloc MB                allocate and touch MB mebibytes, print "allocated"
#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

extern char** environ;

namespace {

void write_all(int fd, const char* p, std::size_t n)
{
    while (n > 0) {
        ssize_t w = ::write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            std::exit(3);
        }
        p += w;
        n -= static_cast<std::size_t>(w);
    }
}

void sleep_ms(long ms)
{
    timespec ts{ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

long arg(int argc, char** argv, int i, long def = 0) { return argc > i ? std::atol(argv[i]) : def; }

}  // namespace

int main(int argc, char** argv)
{
    if (argc < 2) return 2;
    const std::string mode = argv[1];
    if (mode == "exit") return static_cast<int>(arg(argc, argv, 2));
    if (mode == "sleep") {
        sleep_ms(arg(argc, argv, 2));
        return 0;
    }
    if (mode == "spam") {
        std::string s(static_cast<std::size_t>(arg(argc, argv, 2)), 'x');
        if (argc > 3) s += argv[3];
        write_all(1, s.data(), s.size());
        return 0;
    }
    if (mode == "pattern") {
        long long left = std::atoll(argv[2]);
        std::vector<char> block(65536);
        long long offset = 0;
        while (left > 0) {
            const auto n = static_cast<std::size_t>(std::min<long long>(left, static_cast<long long>(block.size())));
            for (std::size_t i = 0; i < n; ++i) block[i] = static_cast<char>((offset + static_cast<long long>(i)) % 251);
            write_all(1, block.data(), n);
            left -= static_cast<long long>(n);
            offset += static_cast<long long>(n);
        }
        return 0;
    }
    if (mode == "trickle") {
        const long count = arg(argc, argv, 2), ms = arg(argc, argv, 3);
        for (long i = 0; i < count; ++i) {
            const std::string line = "tick " + std::to_string(i) + "\n";
            write_all(1, line.data(), line.size());
            if (i + 1 < count) sleep_ms(ms);
        }
        return 0;
    }
    if (mode == "ignore-term") {
        signal(SIGTERM, SIG_IGN);
        write_all(1, "ready\n", 6);
        sleep_ms(arg(argc, argv, 2, 60000));
        return 0;
    }
    if (mode == "stdin-count") {
        std::vector<char> buf(65536);
        long long total = 0;
        for (;;) {
            ssize_t n = ::read(0, buf.data(), buf.size());
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            total += n;
        }
        const std::string s = std::to_string(total) + "\n";
        write_all(1, s.data(), s.size());
        return 0;
    }
    if (mode == "print-fds") {
        DIR* d = opendir("/proc/self/fd");
        if (!d) return 4;
        const int self = dirfd(d);
        std::string out;
        while (dirent* e = readdir(d)) {
            if (e->d_name[0] == '.') continue;
            if (std::atoi(e->d_name) == self) continue;
            if (!out.empty()) out += ' ';
            out += e->d_name;
        }
        closedir(d);
        out += '\n';
        write_all(1, out.data(), out.size());
        return 0;
    }
    if (mode == "print-env") {
        for (char** e = environ; *e; ++e) {
            write_all(1, *e, std::strlen(*e));
            write_all(1, "\n", 1);
        }
        return 0;
    }
    if (mode == "print-cwd") {
        char buf[4096];
        if (!getcwd(buf, sizeof buf)) return 4;
        std::string s = std::string(buf) + "\n";
        write_all(1, s.data(), s.size());
        return 0;
    }
    if (mode == "print-signals") {
        std::ifstream status("/proc/self/status");
        std::string line, out;
        while (std::getline(status, line))
            if (line.rfind("SigBlk:", 0) == 0 || line.rfind("SigIgn:", 0) == 0) out += line + "\n";
        write_all(1, out.data(), out.size());
        return 0;
    }
    if (mode == "alloc") {
        const std::size_t bytes = static_cast<std::size_t>(arg(argc, argv, 2)) << 20;
        auto* p = static_cast<char*>(std::malloc(bytes));
        if (!p) return 5;
        for (std::size_t i = 0; i < bytes; i += 4096) p[i] = 1;
        write_all(1, "allocated\n", 10);
        std::free(p);
        return 0;
    }
    return 2;
}
