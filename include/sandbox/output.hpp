// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_OUTPUT_HPP
#define SANDBOX_OUTPUT_HPP

#include <sandbox/detail/export.hpp>

#include <functional>
#include <string_view>

namespace sandbox {

/// Which output stream a chunk came from.
enum class stream_kind { out, err };

/// "out" or "err".
SANDBOX_DECL std::string_view to_string(stream_kind k) noexcept;

/// Receives every chunk of output as it is read, also beyond the output caps and after the
/// command exits. Called on the execution's strand: never concurrently for one execution.
/// The view is valid only during the call. An exception thrown from it ends the execution
/// (the process tree is killed and reaped) and is rethrown to the awaiting coroutine.
using output_callback = std::function<void(stream_kind, std::string_view chunk)>;

}  // namespace sandbox

#endif
