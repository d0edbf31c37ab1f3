// SPDX-License-Identifier: BSL-1.0
#include <sandbox/json.hpp>

namespace sandbox {

std::string to_json(const exec_result& r) { return json::serialize(json::value_from(r)); }
std::string to_json(const execution_policy& p) { return json::serialize(json::value_from(p)); }
execution_policy policy_from_json(std::string_view text) { return json::value_to<execution_policy>(json::parse(text)); }

}  // namespace sandbox
