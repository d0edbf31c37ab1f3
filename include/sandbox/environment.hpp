// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_ENVIRONMENT_HPP
#define SANDBOX_ENVIRONMENT_HPP

#include <sandbox/detail/export.hpp>
#include <sandbox/execution_policy.hpp>

#include <array>
#include <string_view>

namespace sandbox {

/// Variables never passed to a command, whatever the policy says: loader and interpreter
/// hooks, and credentials. Matched case-insensitively; a trailing '*' matches any suffix (so
/// "RUBY*" blocks RUBY and RUBYOPT), a leading one any prefix ("*_TOKEN" blocks GITHUB_TOKEN).
inline constexpr auto blocked_env_patterns = std::to_array<std::string_view>({
    // the reference list
    "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES", "DYLD_LIBRARY_PATH",
    "DYLD_FRAMEWORK_PATH", "PHP_INI_SCAN_DIR", "PHPRC", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN", "GOOGLE_APPLICATION_CREDENTIALS", "GCP_*", "AZURE_CLIENT_ID", "AZURE_CLIENT_SECRET",
    "GEM_HOME", "GEM_PATH", "RUBY*", "NODE_OPTIONS", "NPM_*", "PYTHON*", "PIP_*",
    // hooks a shell runs, and the usual credentials
    "BASH_ENV", "*_TOKEN", "*_API_KEY", "*_SECRET", "*_SECRET_KEY", "*_ACCESS_KEY", "*_PASSWORD",
    "AWS_CONTAINER_CREDENTIALS_*", "AWS_WEB_IDENTITY_TOKEN_FILE", "SSH_AUTH_SOCK", "MUNGE_SOCKET", "KRB5CCNAME",
});

/// True when `name` matches one of blocked_env_patterns.
SANDBOX_DECL bool is_blocked_env_name(std::string_view name) noexcept;
/// The pattern of blocked_env_patterns that blocks `name`, empty when none does.
SANDBOX_DECL std::string_view blocking_env_pattern(std::string_view name) noexcept;

/// The environment a command gets under `policy`: the parent's environment when
/// inherit_env() (only the env_allowlist() names when one is set), overlaid by env() (a
/// name already present keeps its place), minus the blocked names.
SANDBOX_DECL env_list child_environment(const execution_policy& policy);

/// The parent's environment, in order.
SANDBOX_DECL env_list current_environment();

}  // namespace sandbox

#endif
