// SPDX-License-Identifier: BSL-1.0
#include <sandbox/errors.hpp>

namespace sandbox {

namespace {

class category final : public boost::system::error_category {
public:
    // A fixed id, so that two copies of the library in one program (static and shared)
    // still compare their codes equal.
    constexpr category() noexcept : boost::system::error_category(0x5a4db0c1e3f2a901ULL) {}
    const char* name() const noexcept override { return "sandbox"; }
    std::string message(int ev) const override
    {
        switch (static_cast<errc>(ev)) {
        case errc::driver_unavailable: return "the sandbox driver's tool is missing or unusable";
        case errc::engine_failed: return "the sandbox engine refused to run the command";
        case errc::command_not_found: return "command not found";
        case errc::command_not_executable: return "command cannot be executed";
        case errc::bad_working_directory: return "the working directory does not exist or cannot be entered";
        case errc::outside_root: return "the path leaves the directory it must stay in";
        case errc::limit_not_enforced: return "a required limit cannot be enforced by this driver";
        case errc::callback_failed: return "the output callback threw an exception";
        }
        return "unknown sandbox error " + std::to_string(ev);
    }
};

}  // namespace

const boost::system::error_category& sandbox_category() noexcept
{
    static const category instance;
    return instance;
}

std::string_view to_string(errc e) noexcept
{
    switch (e) {
    case errc::driver_unavailable: return "driver_unavailable";
    case errc::engine_failed: return "engine_failed";
    case errc::command_not_found: return "command_not_found";
    case errc::command_not_executable: return "command_not_executable";
    case errc::bad_working_directory: return "bad_working_directory";
    case errc::outside_root: return "outside_root";
    case errc::limit_not_enforced: return "limit_not_enforced";
    case errc::callback_failed: return "callback_failed";
    }
    return "unknown";
}

}  // namespace sandbox
