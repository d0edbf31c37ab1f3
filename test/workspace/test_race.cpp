// SPDX-License-Identifier: BSL-1.0
// The workspace under concurrent change: a symlink flipped between an inside and an outside
// target (rename() over the link, atomically) while another thread goes through it. A
// check-then-open fence loses this race; openat2 resolves each open
// beneath the root in one step, so the outside is never reached. Also: const calls from
// several threads at once. Boost.Test is not thread-safe, so threads only count; the main
// thread asserts.
#include "support.hpp"

#include <sandbox/workspace.hpp>

#include <boost/test/unit_test.hpp>

#include <cstdio>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

using sandbox::dir_entry;
using sandbox::workspace;
using namespace sandbox::test;
using namespace std::chrono_literals;

namespace {

constexpr long min_iterations = 5000;
constexpr auto time_cap = 30s;

// Repoints `link` at each of `targets` in turn until `stop`, always by renaming a fresh
// symlink over it so the link never disappears. Counts the flips.
class flipper {
public:
    flipper(fs::path link, std::vector<fs::path> targets)
        : link_(std::move(link)), targets_(std::move(targets)), thread_([this] { run(); })
    {
    }
    ~flipper() { stop(); }
    flipper(const flipper&) = delete;
    flipper& operator=(const flipper&) = delete;

    void stop()
    {
        stop_ = true;
        if (thread_.joinable()) thread_.join();
    }
    long flips() const { return flips_; }
    long failures() const { return failures_; }

private:
    void run()
    {
        const fs::path tmp = link_.string() + ".tmp";
        for (std::size_t i = 0; !stop_; ++i) {
            std::error_code ec;
            fs::remove(tmp, ec);
            fs::create_symlink(targets_[i % targets_.size()], tmp, ec);
            if (!ec && std::rename(tmp.c_str(), link_.c_str()) == 0)
                ++flips_;
            else
                ++failures_;
        }
    }

    fs::path link_;
    std::vector<fs::path> targets_;
    std::atomic<bool> stop_{false};
    std::atomic<long> flips_{0};
    std::atomic<long> failures_{0};
    std::thread thread_;
};

struct read_counts {
    long inside = 0;
    long refused = 0;   // EXDEV from the kernel
    long leaked = 0;    // the outside secret came back
    long other = 0;     // anything else
    std::string first_other;
    long total() const { return inside + refused + leaked + other; }
};

// Calls `attempt` until it has seen both outcomes over at least min_iterations tries and
// the flipper has flipped as often, or the time cap passes.
read_counts hammer(const flipper& f, const std::function<std::string()>& attempt)
{
    read_counts c;
    const auto deadline = std::chrono::steady_clock::now() + time_cap;
    while (std::chrono::steady_clock::now() < deadline &&
           (c.total() < min_iterations || f.flips() < min_iterations || c.inside == 0 || c.refused == 0)) {
        try {
            const std::string data = attempt();
            if (contains(data, "TOP SECRET"))
                ++c.leaked;
            else if (data == "inside")
                ++c.inside;
            else
                ++c.other;
        } catch (const boost::system::system_error& e) {
            if (e.code() == std::errc::cross_device_link) {
                ++c.refused;
            } else {
                if (c.first_other.empty()) c.first_other = e.what();
                ++c.other;
            }
        }
    }
    return c;
}

void report(const read_counts& c, const flipper& f)
{
    BOOST_TEST_MESSAGE("inside " << c.inside << ", refused " << c.refused << ", leaked " << c.leaked << ", other "
                                 << c.other << ", flips " << f.flips());
    BOOST_TEST(c.leaked == 0);
    BOOST_TEST(c.other == 0, c.first_other);
    BOOST_TEST(c.inside > 0);
    BOOST_TEST(c.refused > 0);
    BOOST_TEST(c.total() >= min_iterations);
    BOOST_TEST(f.flips() >= min_iterations);
    BOOST_TEST(f.failures() == 0);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(test_race)

BOOST_FIXTURE_TEST_CASE(a_flipping_file_symlink_never_reads_outside, ws_fixture)
{
    host_write(root / "inside.txt", "inside");
    host_write(outside / "secret.txt", "TOP SECRET");
    fs::create_symlink("inside.txt", root / "link");
    flipper f(root / "link",
              {"inside.txt", outside / "secret.txt", "inside.txt", "../" + outside.filename().string() + "/secret.txt"});
    const auto c = hammer(f, [&] { return ws.read_file("link"); });
    f.stop();
    report(c, f);
}

BOOST_FIXTURE_TEST_CASE(a_flipping_directory_symlink_never_reads_outside, ws_fixture)
{
    fs::create_directory(root / "realdir");
    host_write(root / "realdir" / "secret.txt", "inside");
    host_write(outside / "secret.txt", "TOP SECRET");
    fs::create_directory_symlink("realdir", root / "dl");
    flipper f(root / "dl", {"realdir", outside, "realdir", "../" + outside.filename().string()});
    const auto c = hammer(f, [&] { return ws.read_file_limit("dl/secret.txt", 64).data; });
    f.stop();
    report(c, f);
}

BOOST_FIXTURE_TEST_CASE(a_flipping_symlink_never_writes_outside, ws_fixture)
{
    host_write(root / "inside.txt", "");
    host_write(outside / "victim.txt", "ORIGINAL");
    fs::create_symlink("inside.txt", root / "link");
    // An existing outside file, and a dangling one that O_CREAT would make.
    flipper f(root / "link",
              {"inside.txt", outside / "victim.txt", "inside.txt", "../" + outside.filename().string() + "/pwned.txt"});
    long i = 0;
    const auto c = hammer(f, [&] {
        if (++i % 2)
            ws.write_file("link", "x");
        else
            ws.append_file("link", "y");
        return std::string("inside");
    });
    f.stop();
    report(c, f);
    BOOST_TEST(host_read(outside / "victim.txt") == "ORIGINAL");
    BOOST_TEST(!host_exists(outside / "pwned.txt"));
}

BOOST_FIXTURE_TEST_CASE(a_flipping_parent_never_creates_or_removes_outside, ws_fixture)
{
    fs::create_directory(root / "realdir");
    host_write(outside / "victim.txt", "ORIGINAL");
    fs::create_directory_symlink("realdir", root / "dl");
    flipper f(root / "dl", {"realdir", outside});
    long i = 0;
    const auto c = hammer(f, [&] {
        switch (++i % 3) {
        case 0: ws.make_dir_all("dl/made"); break;
        case 1: ws.remove("dl/made"); break;
        default:
            // victim.txt exists only outside: removing it inside fails ENOENT, so count
            // that as a normal inside outcome.
            try {
                ws.remove("dl/victim.txt");
            } catch (const boost::system::system_error& e) {
                if (e.code() != std::errc::no_such_file_or_directory) throw;
            }
        }
        return std::string("inside");
    });
    f.stop();
    BOOST_TEST_MESSAGE("inside " << c.inside << ", refused " << c.refused << ", other " << c.other);
    BOOST_TEST(c.refused > 0);
    BOOST_TEST(c.inside > 0);
    // make_dir_all then remove inside can meet ENOENT/EEXIST-style outcomes; none reach out.
    BOOST_TEST(host_read(outside / "victim.txt") == "ORIGINAL");
    BOOST_TEST(!host_exists(outside / "made"));
}

BOOST_FIXTURE_TEST_CASE(const_calls_from_several_threads_agree, ws_fixture)
{
    ws.set_mount_alias("/workspace");
    ws.make_dir_all("d");
    ws.write_file("d/a.txt", "alpha");
    ws.write_file("d/b.txt", "bravo");
    const std::vector<dir_entry> listing{{"a.txt", false}, {"b.txt", false}};
    const workspace& shared = ws;

    std::atomic<long> ok{0}, wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&] {
            for (int n = 0; n < 2000; ++n) {
                try {
                    const bool good = shared.read_file("/workspace/d/a.txt") == "alpha" &&
                                      shared.read_file_limit("d/b.txt", 3).data == "bra" &&
                                      shared.list_dir("d") == listing && shared.rel_in_root("/workspace/d/../d") == "d";
                    ++(good ? ok : wrong);
                } catch (...) {
                    ++wrong;
                }
            }
        });
    }
    for (auto& t : threads) t.join();
    BOOST_TEST(wrong == 0);
    BOOST_TEST(ok == 4 * 2000);
}

BOOST_AUTO_TEST_SUITE_END()
