// SPDX-License-Identifier: BSL-1.0
#include <sandbox/version.hpp>

namespace sandbox {

std::string_view version() noexcept { return SANDBOX_VERSION_STRING; }

}  // namespace sandbox
