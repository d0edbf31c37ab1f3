// SPDX-License-Identifier: BSL-1.0
// Helpers for the workspace tests: host-side file access that bypasses the workspace (to
// plant and inspect files), and capturing a boost::system::system_error.
#ifndef SANDBOX_TEST_WORKSPACE_SUPPORT_HPP
#define SANDBOX_TEST_WORKSPACE_SUPPORT_HPP

#include <sandbox/workspace.hpp>

#include <test_support.hpp>

#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <system_error>

namespace sandbox::test {

namespace fs = std::filesystem;

inline bool contains(std::string_view haystack, std::string_view needle)
{
    return haystack.find(needle) != std::string_view::npos;
}

/// Writes a file on the host, outside the workspace API.
inline void host_write(const fs::path& p, std::string_view data)
{
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!f) throw std::runtime_error("host_write failed: " + p.string());
}

/// Reads a file on the host, outside the workspace API.
inline std::string host_read(const fs::path& p)
{
    std::ifstream f(p, std::ios::binary);
    if (!f) throw std::runtime_error("host_read failed: " + p.string());
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

/// True if `p` exists as any kind of entry, a dangling symlink included.
inline bool host_exists(const fs::path& p)
{
    std::error_code ec;
    return fs::exists(fs::symlink_status(p, ec));
}

/// What a workspace operation threw: its code and its whole message.
struct caught_error {
    boost::system::error_code ec;
    std::string message;
    const boost::system::error_code& code() const { return ec; }
    const char* what() const { return message.c_str(); }
};

/// What `fn` threw, or nullopt if it returned normally. Anything other than a
/// boost::system::system_error propagates and fails the test.
inline std::optional<caught_error> error_of(const std::function<void()>& fn)
{
    try {
        fn();
    } catch (const boost::system::system_error& e) {
        return caught_error{e.code(), e.what()};
    }
    return std::nullopt;
}

/// A workspace on a fresh mkdtemp directory, plus a second fresh directory outside it.
struct ws_fixture {
    temp_dir dir;
    temp_dir outside_dir;
    fs::path root = dir.path;
    fs::path outside = outside_dir.path;
    workspace ws{dir.path};
};

}  // namespace sandbox::test

namespace sandbox {
// Lets BOOST_TEST print entries and vectors of them.
inline std::ostream& boost_test_print_type(std::ostream& os, const dir_entry& e)
{
    return os << '{' << e.name << (e.is_dir ? ", dir}" : ", file}");
}
}  // namespace sandbox

/// Checks that `expr` throws a boost::system::system_error with `want_code` whose message names
/// `want_path` in quotes.
#define SANDBOX_CHECK_REFUSED(expr, want_code, want_path)                                                    \
    do {                                                                                                     \
        const auto sandbox_err_ = ::sandbox::test::error_of([&] { (void)(expr); });                          \
        BOOST_TEST_REQUIRE(sandbox_err_.has_value(), #expr " did not throw");                                \
        BOOST_TEST((sandbox_err_->code() == (want_code)), #expr ": " << sandbox_err_->what());               \
        BOOST_TEST(::sandbox::test::contains(sandbox_err_->what(), std::string("\"") + (want_path) + "\""),  \
                   #expr ": " << sandbox_err_->what());                                                      \
    } while (0)

#endif
