// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_ERRORS_HPP
#define SANDBOX_ERRORS_HPP

#include <sandbox/detail/export.hpp>

#include <boost/system/error_code.hpp>
#include <boost/system/system_error.hpp>

#include <string>
#include <string_view>
#include <type_traits>

namespace sandbox {

/// Why the library could not do what was asked, as Boost.System error codes (category
/// "sandbox"). Compare with `ec == sandbox::errc::command_not_found`.
enum class errc {
    driver_unavailable = 1,  ///< the tool or engine binary is missing or unusable
    engine_failed,           ///< the engine refused: daemon down, image not present, user refused
    command_not_found,       ///< the command does not exist (a shell's 127)
    command_not_executable,  ///< it exists but cannot be executed (a shell's 126)
    bad_working_directory,   ///< the working directory does not exist or cannot be entered
    outside_root,            ///< a path leaves the base dir or the workspace
    limit_not_enforced,      ///< a limit the caller required cannot be enforced by this driver
    callback_failed,         ///< the output callback threw (async_execute's error code for it)
};

/// The category of sandbox::errc; its name() is "sandbox".
SANDBOX_DECL const boost::system::error_category& sandbox_category() noexcept;

/// The error code of `e` in sandbox_category(); what lets an errc convert to an error_code
/// and compare with one.
inline boost::system::error_code make_error_code(errc e) noexcept
{
    return {static_cast<int>(e), sandbox_category()};
}

/// The enumerator's name, e.g. "command_not_found" (the JSON `start_error.code`).
SANDBOX_DECL std::string_view to_string(errc e) noexcept;

}  // namespace sandbox

/// \cond
template <>
struct boost::system::is_error_code_enum<sandbox::errc> : std::true_type {};
/// \endcond

namespace sandbox {

/// What the library throws when the system refuses something (the workspace's file
/// operations, a launch): a boost::system::system_error, so one `catch` covers them all,
/// whose what() is the message as written, without Boost's "[category:value]" suffix.
class SANDBOX_DECL system_error : public boost::system::system_error {
public:
    /// An error with its code and the whole message.
    system_error(boost::system::error_code code, const std::string& message)
        : boost::system::system_error(code, message), message_(message)
    {
    }

    /// The message alone, without the code's text appended.
    const char* what() const noexcept override { return message_.c_str(); }

private:
    std::string message_;
};

/// A driver could not launch the command: its binary is missing or unusable, its engine is
/// not running, or its work dir could not be made. code() says which kind (an errc, or the
/// system's errno when the OS refused); what() says which and why, e.g.
/// "Failed to start docker: /usr/bin/docker: No such file or directory".
class SANDBOX_DECL launch_error : public system_error {
public:
    /// A launch error with its kind and the whole message.
    launch_error(boost::system::error_code code, const std::string& message) : system_error(code, message) {}
    /// A launch error of kind errc::driver_unavailable.
    explicit launch_error(const std::string& message) : launch_error(errc::driver_unavailable, message) {}
};

}  // namespace sandbox

#endif
