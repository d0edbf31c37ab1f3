// SPDX-License-Identifier: BSL-1.0
// Attacks by a command that wants out, with bubblewrap on the node (the same machine here,
// so the host's files and processes are the node's): read root-only files, write through a
// read-only path, reach the network, and leave a daemon running after the step.
#include "slurm_fixture.hpp"

#include <boost/test/unit_test.hpp>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

using namespace sandbox;
using namespace sandbox::test;

namespace {


// A file with `text` and `mode`, removed at the end of the scope.
struct planted_file {
    std::filesystem::path path;
    planted_file(std::filesystem::path p, const std::string& text, mode_t mode) : path(std::move(p))
    {
        { std::ofstream(path) << text; }
        ::chmod(path.c_str(), mode);
    }
    ~planted_file()
    {
        std::error_code ec;
        std::filesystem::remove(path, ec);
    }
    planted_file(const planted_file&) = delete;
    planted_file& operator=(const planted_file&) = delete;
};

// A TCP listener on every address of the host, on a port the kernel picks.
struct tcp_listener {
    int fd = -1;
    int port = 0;
    tcp_listener()
    {
        fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_ANY);
        socklen_t len = sizeof addr;
        if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 8) != 0 ||
            ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
            throw std::runtime_error("cannot listen on a TCP port");
        port = ntohs(addr.sin_port);
    }
    ~tcp_listener() { ::close(fd); }
    tcp_listener(const tcp_listener&) = delete;
    tcp_listener& operator=(const tcp_listener&) = delete;
    bool was_reached() const
    {
        const int c = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (c >= 0) ::close(c);
        return c >= 0;
    }
};

// The host's IPv4 addresses: loopback and the others.
std::vector<std::string> host_addresses()
{
    std::vector<std::string> out{"127.0.0.1"};
    ifaddrs* list = nullptr;
    if (::getifaddrs(&list) != 0) return out;
    for (auto* i = list; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
        char buf[INET_ADDRSTRLEN] = {};
        const auto* sin = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
        if (::inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof buf) && std::string(buf) != "127.0.0.1")
            out.emplace_back(buf);
    }
    ::freeifaddrs(list);
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(slurm_attacks)

BOOST_AUTO_TEST_CASE(root_only_files_stay_unreadable)
{
    SANDBOX_REQUIRE_SLURM(driver::bubblewrap);
    slurm_env e;
    const auto tag = random_digits(8);
    // Beside the base dir (its parent), in /root and in a directory every user can enter.
    shared_dir shared;
    std::vector<std::unique_ptr<planted_file>> secrets;
    secrets.push_back(std::make_unique<planted_file>(e.base.path.parent_path() / ("sandbox-slurm-secret-" + tag),
                                                     "top-secret-parent\n", 0600));
    secrets.push_back(std::make_unique<planted_file>(shared.path / "secret", "top-secret-shared\n", 0600));
    if (std::filesystem::is_directory("/root"))
        secrets.push_back(std::make_unique<planted_file>(std::filesystem::path("/root") / ("sandbox-slurm-secret-" + tag),
                                                         "top-secret-root\n", 0600));
    std::vector<std::string> args{"/etc/shadow"};
    for (const auto& s : secrets) args.push_back(s->path.string());
    const auto r = e.sh("for f in \"$@\"; do cat \"$f\" 2>&1; done; ls /root 2>/dev/null | sed 's/^/LS /'; echo done",
                        args);
    BOOST_TEST_INFO_SCOPE(describe(r));
    BOOST_TEST(r.out.find("top-secret") == std::string::npos);
    BOOST_TEST(r.out.find("LS sandbox-slurm-secret") == std::string::npos);  // not even listed in /root
    BOOST_TEST(r.out.find("root:") == std::string::npos);
    BOOST_TEST(r.out.find("done") != std::string::npos);
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
}

BOOST_AUTO_TEST_CASE(a_readable_path_cannot_be_written_through)
{
    SANDBOX_REQUIRE_SLURM(driver::bubblewrap);
    slurm_env e;
    shared_dir host("/var/lib");
    const auto ro = host.path / "ro";
    std::filesystem::create_directory(ro);
    ::chmod(ro.c_str(), 0777);  // writable by whatever uid the command has, were it mounted so
    planted_file data(ro / "data", "original\n", 0666);
    e.policy = e.policy.with_readable_paths({ro});
    const auto mounts = mounts_for(e.policy, driver::bubblewrap);
    BOOST_TEST_REQUIRE(mounts.size() == 1u);
    const auto inside = mounts.front().container;
    const auto r = e.sh("cat \"$1/data\"; (echo pwned > \"$1/data\") 2>/dev/null && echo WROTE; "
                        "(echo x > \"$1/new\") 2>/dev/null && echo CREATED; "
                        "rm -f \"$1/data\" 2>/dev/null; chmod 0777 \"$1/data\" 2>/dev/null; echo done",
                        {inside});
    BOOST_TEST_INFO_SCOPE(describe(r));
    BOOST_TEST(r.out.starts_with("original\n"));
    BOOST_TEST(r.out.find("WROTE") == std::string::npos);
    BOOST_TEST(r.out.find("CREATED") == std::string::npos);
    BOOST_TEST(r.out.find("done") != std::string::npos);
    BOOST_TEST(read_text(ro / "data") == "original\n");
    BOOST_TEST(!std::filesystem::exists(ro / "new"));
    struct stat st {};
    BOOST_TEST_REQUIRE(::stat((ro / "data").c_str(), &st) == 0);
    BOOST_TEST((st.st_mode & 07777) == 0666u);
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
}

BOOST_AUTO_TEST_CASE(the_network_is_off)
{
    SANDBOX_REQUIRE_SLURM(driver::bubblewrap);
    slurm_env e;
    tcp_listener service;
    const auto addresses = host_addresses();
    // Interfaces from /proc/net/dev (only lo), then a TCP connection to the host's listener on
    // each of its addresses (bash's /dev/tcp, where bash is there; python3's socket else).
    std::string script = "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sed 's/^/IF /'; port=$1; shift; "
                         "for a in \"$@\"; do "
                         "  if command -v bash >/dev/null; then "
                         "    bash -c 'exec 3<>/dev/tcp/$0/$1' \"$a\" \"$port\" 2>/dev/null && echo \"CONNECTED $a\"; "
                         "  elif command -v python3 >/dev/null; then "
                         "    python3 -c 'import socket,sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), 2)' "
                         "\"$a\" \"$port\" 2>/dev/null && echo \"CONNECTED $a\"; "
                         "  else echo NO-CLIENT; fi; "
                         "done; echo done";
    std::vector<std::string> args{std::to_string(service.port)};
    args.insert(args.end(), addresses.begin(), addresses.end());
    const auto r = e.sh(script, args);
    BOOST_TEST_INFO_SCOPE(describe(r) << "\naddresses: " << join(addresses));
    std::vector<std::string> interfaces;
    for (const auto& line : split_lines(r.out))
        if (line.starts_with("IF ")) interfaces.push_back(line.substr(3));
    BOOST_TEST(interfaces == std::vector<std::string>{"lo"}, boost::test_tools::per_element());
    BOOST_TEST(r.out.find("CONNECTED") == std::string::npos);
    BOOST_TEST(r.out.find("NO-CLIENT") == std::string::npos);  // the check really ran
    BOOST_TEST(r.out.find("done") != std::string::npos);
    BOOST_TEST(!service.was_reached());

    // With the network on, the same client reaches the listener: the check above can fail.
    e.policy = e.policy.with_network(true);
    const auto open = e.sh(script, args);
    BOOST_TEST_INFO_SCOPE(describe(open));
    BOOST_TEST(open.out.find("CONNECTED") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_daemon_started_by_the_command_does_not_outlive_the_step)
{
    SANDBOX_REQUIRE_SLURM(driver::bubblewrap);
    slurm_env e;
    const auto marker = "1234.7" + random_digits();
    // One that keeps the step's output open, and a double-forked one that lets go of it.
    const auto r = e.sh("setsid sh -c 'sleep " + marker + "' & "
                        "(setsid sh -c 'sleep " + marker + " & :' </dev/null >/dev/null 2>&1 &); "
                        "sleep 0.3; echo started");
    BOOST_TEST_INFO_SCOPE(describe(r));
    BOOST_TEST(r.success());
    BOOST_TEST(r.out == "started\n");
    BOOST_TEST((r.duration < 20s));
    BOOST_TEST(no_process_matching("sleep " + marker), "a daemon with '" << marker << "' is still running");
    BOOST_TEST(eventually([] { return queued(our_job_prefix()).empty(); }, 30s), join(queued(our_job_prefix()), "; "));
    BOOST_TEST(e.leftovers().empty(), join(e.leftovers()));
}

BOOST_AUTO_TEST_SUITE_END()
