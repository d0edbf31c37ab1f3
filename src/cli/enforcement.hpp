// SPDX-License-Identifier: BSL-1.0
// Which of the settings a user asked for the chosen driver does not enforce: said on stderr,
// or refused with --strict, never left for the user to find out.
#ifndef SANDBOX_CLI_ENFORCEMENT_HPP
#define SANDBOX_CLI_ENFORCEMENT_HPP

#include "options.hpp"

#include <sandbox/sandbox.hpp>

#include <boost/json/object.hpp>

#include <string>
#include <vector>

namespace sandbox::cli {

/// The settings given explicitly, each named as the user gave it ("--memory", or the policy
/// key "memory_limit"); empty when not given.
struct asked_settings {
    std::string memory;
    std::string disk;
    std::string network_off;
    std::string paths;
};

/// From the flags and the keys of the --policy file.
asked_settings asked_by(const options& o);
/// From the keys of a job line's "policy" object.
asked_settings asked_by(const boost::json::object& policy_keys);

/// Where a limit came from: `flag` when given as one, "--policy KEY" when the policy file
/// sets it, else "default FLAG".
std::string limit_origin(const options& o, bool flag_given, std::string_view flag, std::string_view key);

/// `{"level":"none","network_isolated":false,...}`
std::string caps_json(const capabilities& c);

/// One text per asked setting that `caps` does not enforce: "--memory 64M is not enforced
/// by the host driver".
std::vector<std::string> unenforced_settings(const asked_settings& asked, const execution_policy& p,
                                             const capabilities& caps, driver d);

}  // namespace sandbox::cli

#endif
