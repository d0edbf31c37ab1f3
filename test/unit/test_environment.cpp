// SPDX-License-Identifier: BSL-1.0
// The blocked variable names and the environment a command gets.
#include <sandbox/sandbox.hpp>

#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

using sandbox::env_list;
using sandbox::execution_policy;
using sandbox::is_blocked_env_name;

namespace {

std::string show(const env_list& env)
{
    std::string s;
    for (const auto& [k, v] : env) s += k + "=" + v + ";";
    return s;
}

const std::string* find(const env_list& env, std::string_view name)
{
    for (const auto& [k, v] : env)
        if (k == name) return &v;
    return nullptr;
}

std::ptrdiff_t position(const env_list& env, std::string_view name)
{
    for (std::size_t i = 0; i < env.size(); ++i)
        if (env[i].first == name) return static_cast<std::ptrdiff_t>(i);
    return -1;
}

/// Sets a variable in this process for the scope, then removes it.
struct scoped_env {
    std::string name;
    scoped_env(std::string n, const std::string& value) : name(std::move(n))
    {
        BOOST_TEST_REQUIRE(::setenv(name.c_str(), value.c_str(), 1) == 0);
    }
    ~scoped_env() { ::unsetenv(name.c_str()); }
    scoped_env(const scoped_env&) = delete;
    scoped_env& operator=(const scoped_env&) = delete;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(test_environment)

BOOST_AUTO_TEST_CASE(the_blocked_list_is_the_reference_list_in_order)
{
    const std::vector<std::string_view> expected{
        "LD_PRELOAD",       "LD_LIBRARY_PATH",     "LD_AUDIT",
        "DYLD_INSERT_LIBRARIES", "DYLD_LIBRARY_PATH", "DYLD_FRAMEWORK_PATH",
        "PHP_INI_SCAN_DIR", "PHPRC",               "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "GOOGLE_APPLICATION_CREDENTIALS",
        "GCP_*",            "AZURE_CLIENT_ID",     "AZURE_CLIENT_SECRET",
        "GEM_HOME",         "GEM_PATH",            "RUBY*",
        "NODE_OPTIONS",     "NPM_*",               "PYTHON*",
        "PIP_*",
        // then hooks and credentials of our own
        "BASH_ENV", "*_TOKEN", "*_API_KEY", "*_SECRET", "*_SECRET_KEY", "*_ACCESS_KEY", "*_PASSWORD",
        "AWS_CONTAINER_CREDENTIALS_*", "AWS_WEB_IDENTITY_TOKEN_FILE", "SSH_AUTH_SOCK", "MUNGE_SOCKET", "KRB5CCNAME",
    };
    const std::vector<std::string_view> actual(sandbox::blocked_env_patterns.begin(),
                                               sandbox::blocked_env_patterns.end());
    BOOST_TEST(actual == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(every_pattern_blocks_its_names)
{
    for (std::string_view pattern : sandbox::blocked_env_patterns) {
        // A trailing wildcard blocks its bare prefix too ("RUBY*" blocks "RUBY"); a leading one
        // needs something before its suffix ("*_TOKEN" blocks "GITHUB_TOKEN", not "_TOKEN").
        const std::string name(pattern.back() == '*'    ? std::string(pattern.substr(0, pattern.size() - 1))
                               : pattern.front() == '*' ? "X" + std::string(pattern.substr(1))
                                                        : std::string(pattern));
        BOOST_TEST(is_blocked_env_name(name), name);
    }
    for (const char* name : {"GITHUB_TOKEN", "OPENAI_API_KEY", "AWS_SECURITY_TOKEN", "AWS_CONTAINER_AUTHORIZATION_TOKEN",
                             "SSH_AUTH_SOCK", "MUNGE_SOCKET", "BASH_ENV", "db_password", "Client_Secret"})
        BOOST_TEST(is_blocked_env_name(name), name);
    for (const char* name : {"HOME", "PATH", "TOKEN", "_TOKEN", "TOKENS", "SECRETARY", "LANG", "TERM"})
        BOOST_TEST(!is_blocked_env_name(name), name);
}

BOOST_AUTO_TEST_CASE(the_pattern_that_blocks_a_name_is_told)
{
    for (std::string_view pattern : sandbox::blocked_env_patterns) {
        if (pattern.front() == '*') continue;  // suffixes may overlap earlier patterns
        const std::string name(pattern.back() == '*' ? std::string(pattern.substr(0, pattern.size() - 1)) + "X" : pattern);
        BOOST_TEST(sandbox::blocking_env_pattern(name) == pattern, name);
    }
    BOOST_TEST(sandbox::blocking_env_pattern("ld_preload") == "LD_PRELOAD");
    BOOST_TEST(sandbox::blocking_env_pattern("HOME").empty());
}

BOOST_AUTO_TEST_CASE(blocked_names_are_matched_case_insensitively)
{
    for (const char* name : {"ld_preload", "Ld_Preload", "ld_library_path", "dyld_insert_libraries", "phprc",
                             "aws_secret_access_key", "Google_Application_Credentials", "node_options", "gem_home",
                             "azure_client_secret", "rubyopt", "npm_token", "Python_Path", "pip_index_url",
                             "gcp_project"}) {
        BOOST_TEST(is_blocked_env_name(name), name);
    }
}

BOOST_AUTO_TEST_CASE(wildcard_patterns_block_every_name_with_the_prefix)
{
    for (const char* name : {"RUBY", "RUBYOPT", "RUBYLIB", "RUBY_VERSION", "PYTHON", "PYTHONPATH", "PYTHONHOME",
                             "PYTHONSTARTUP", "NPM_", "NPM_TOKEN", "NPM_CONFIG", "NPM_CONFIG_PREFIX", "GCP_",
                             "GCP_X", "GCP_PROJECT", "PIP_", "PIP_INDEX_URL", "PIP_CONFIG_FILE", "RUBY/x"}) {
        BOOST_TEST(is_blocked_env_name(name), name);
    }
}

BOOST_AUTO_TEST_CASE(names_outside_the_list_are_not_blocked)
{
    for (const char* name : {"AWS_PROFILE", "AWS_DEFAULT_REGION", "AWS_REGION", "LD_DEBUG", "LD_BIND_NOW",
                             "DYLD_FALLBACK_LIBRARY_PATH", "AWS_CONFIG_FILE", "TOKEN", "PATH",
                             "HOME", "LANG", "NPM", "NPMX", "NPMRC", "GCP", "GCPX", "PIP", "PIPX", "PYTHO", "RUB",
                             "LD_PRELOAD_X", "XLD_PRELOAD", "LD_PRELOAD ", "_PYTHON", "MY_RUBY", "PHPRC2",
                             "AZURE_CLIENT", "GEM", "NODE_OPTION", "NODE_OPTIONSX", ""}) {
        BOOST_TEST(!is_blocked_env_name(name), "\"" << name << "\"");
    }
}

BOOST_AUTO_TEST_CASE(an_unblocked_name_passes_and_only_that_name)
{
    const auto p = execution_policy::in("/tmp").with_env({{"PYTHONUNBUFFERED", "1"}, {"PYTHONPATH", "/x"}});
    BOOST_TEST(show(sandbox::child_environment(p)) == "");
    const auto q = p.with_env_unblocked({"PYTHONUNBUFFERED"});
    BOOST_TEST(show(sandbox::child_environment(q)) == "PYTHONUNBUFFERED=1;");
    // Inherited too.
    scoped_env hook("PYTHONDONTWRITEBYTECODE", "1");
    const auto inherited = execution_policy::in("/tmp").inherit_environment().with_env_unblocked({"PYTHONDONTWRITEBYTECODE"});
    BOOST_TEST(find(sandbox::child_environment(inherited), "PYTHONDONTWRITEBYTECODE") != nullptr);
    // JSON both ways; a bad name is refused.
    const auto back = sandbox::policy_from_json(sandbox::to_json(q));
    BOOST_TEST((back.env_unblocked() == std::vector<std::string>{"PYTHONUNBUFFERED"}));
    BOOST_TEST((back == q));
    BOOST_CHECK_THROW((void)p.with_env_unblocked({"A=B"}), std::invalid_argument);
    BOOST_CHECK_THROW((void)sandbox::policy_from_json(R"({"env_unblocked": "PYTHONPATH"})"), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(explicit_env_only_keeps_its_order)
{
    // PHP EnvUtils: returns explicit env vars from policy.
    const auto p = execution_policy::in("/tmp").with_env({{"APP_ENV", "test"}, {"DEBUG", "1"}});
    BOOST_TEST(show(sandbox::child_environment(p)) == "APP_ENV=test;DEBUG=1;");

    const auto q = execution_policy::in("/tmp").with_env({{"Z", "1"}, {"A", "2"}, {"M", "3"}});
    BOOST_TEST(show(sandbox::child_environment(q)) == "Z=1;A=2;M=3;");
}

BOOST_AUTO_TEST_CASE(explicit_env_does_not_include_the_parent_environment)
{
    const scoped_env marker("SANDBOX_UNIT_ENV_NOT_INHERITED", "yes");
    const auto p = execution_policy::defaults().with_env({{"ONLY", "me"}});
    const auto env = sandbox::child_environment(p);
    BOOST_TEST(show(env) == "ONLY=me;");
    BOOST_TEST(find(env, "SANDBOX_UNIT_ENV_NOT_INHERITED") == nullptr);
}

BOOST_AUTO_TEST_CASE(blocked_names_are_removed_from_explicit_env)
{
    // PHP EnvUtils: filters out forbidden patterns.
    const auto p = execution_policy::defaults().with_env(
        {{"APP_ENV", "test"}, {"LD_PRELOAD", "/evil.so"}, {"AWS_ACCESS_KEY_ID", "secret"}});
    BOOST_TEST(show(sandbox::child_environment(p)) == "APP_ENV=test;");

    // PHP EnvUtils: filters using wildcard patterns.
    const auto q = execution_policy::defaults().with_env({{"NPM_TOKEN", "x"}, {"NPM_CONFIG", "y"}, {"SAFE_VAR", "z"}});
    BOOST_TEST(show(sandbox::child_environment(q)) == "SAFE_VAR=z;");

    const auto r = execution_policy::defaults().with_env(
        {{"ld_preload", "/evil.so"}, {"KEEP", "1"}, {"PythonPath", "/x"}, {"GITHUB_TOKEN", "t"}});
    BOOST_TEST(show(sandbox::child_environment(r)) == "KEEP=1;");
}

BOOST_AUTO_TEST_CASE(nothing_set_gives_an_empty_environment)
{
    // PHP EnvUtils: returns empty array when policy has no env and no inheritance.
    BOOST_TEST(sandbox::child_environment(execution_policy::defaults()).empty());
    BOOST_TEST(sandbox::child_environment(execution_policy::in("/tmp").with_env({})).empty());
    // Only blocked names: empty too.
    BOOST_TEST(sandbox::child_environment(execution_policy::defaults().with_env({{"LD_AUDIT", "x"}})).empty());
}

BOOST_AUTO_TEST_CASE(original_key_case_is_preserved)
{
    const auto p = execution_policy::defaults().with_env({{"MixedCase_Var", "1"}, {"foo", "2"}, {"FOO", "3"}});
    BOOST_TEST(show(sandbox::child_environment(p)) == "MixedCase_Var=1;foo=2;FOO=3;");
}

BOOST_AUTO_TEST_CASE(current_environment_reflects_this_process)
{
    const scoped_env a("SANDBOX_UNIT_ENV_CURRENT", "value=with=equals");
    const auto env = sandbox::current_environment();
    const auto* v = find(env, "SANDBOX_UNIT_ENV_CURRENT");
    BOOST_TEST_REQUIRE(v != nullptr);
    BOOST_TEST(*v == "value=with=equals");
}

BOOST_AUTO_TEST_CASE(inherit_without_env_gives_the_parent_environment_minus_blocked_names)
{
    const scoped_env plain("SANDBOX_UNIT_ENV_PLAIN", "1");
    const scoped_env blocked_wild("PYTHON_SANDBOX_UNIT_ENV", "2");
    const scoped_env blocked_lower("npm_sandbox_unit_env", "3");
    const scoped_env blocked_exact("GEM_PATH", "/gems");

    const auto env = sandbox::child_environment(execution_policy::defaults().inherit_environment());

    env_list expected;
    for (const auto& kv : sandbox::current_environment())
        if (!is_blocked_env_name(kv.first)) expected.push_back(kv);
    BOOST_TEST(show(env) == show(expected));

    BOOST_TEST(find(env, "SANDBOX_UNIT_ENV_PLAIN") != nullptr);
    BOOST_TEST(find(env, "PYTHON_SANDBOX_UNIT_ENV") == nullptr);
    BOOST_TEST(find(env, "npm_sandbox_unit_env") == nullptr);
    BOOST_TEST(find(env, "GEM_PATH") == nullptr);
    if (std::getenv("PATH")) BOOST_TEST(find(env, "PATH") != nullptr);
}

BOOST_AUTO_TEST_CASE(inherit_with_env_overlays_in_place_and_appends_new_names)
{
    const scoped_env first("SANDBOX_UNIT_ENV_FIRST", "old-first");
    const scoped_env second("SANDBOX_UNIT_ENV_SECOND", "old-second");

    const auto parent = sandbox::current_environment();
    const auto first_pos = position(parent, "SANDBOX_UNIT_ENV_FIRST");
    const auto second_pos = position(parent, "SANDBOX_UNIT_ENV_SECOND");
    BOOST_TEST_REQUIRE(first_pos >= 0);
    BOOST_TEST_REQUIRE(second_pos >= 0);

    const auto p = execution_policy::defaults().with_env(
        {{"SANDBOX_UNIT_ENV_NEW_B", "b"}, {"SANDBOX_UNIT_ENV_SECOND", "new-second"}, {"SANDBOX_UNIT_ENV_NEW_A", "a"}},
        true);
    const auto env = sandbox::child_environment(p);

    // Expected: the parent's list with the overridden value in place, then the new names in
    // the policy's order (nothing in this process is blocked by the test's names).
    env_list expected;
    for (const auto& kv : parent)
        if (!is_blocked_env_name(kv.first)) expected.push_back(kv);
    for (auto& kv : expected)
        if (kv.first == "SANDBOX_UNIT_ENV_SECOND") kv.second = "new-second";
    expected.emplace_back("SANDBOX_UNIT_ENV_NEW_B", "b");
    expected.emplace_back("SANDBOX_UNIT_ENV_NEW_A", "a");
    BOOST_TEST(show(env) == show(expected));

    BOOST_TEST(*find(env, "SANDBOX_UNIT_ENV_FIRST") == "old-first");
    BOOST_TEST(*find(env, "SANDBOX_UNIT_ENV_SECOND") == "new-second");
    // The overridden name keeps its inherited position relative to its neighbour.
    BOOST_TEST((position(env, "SANDBOX_UNIT_ENV_FIRST") < position(env, "SANDBOX_UNIT_ENV_SECOND")) ==
               (first_pos < second_pos));
    BOOST_TEST(position(env, "SANDBOX_UNIT_ENV_NEW_B") == static_cast<std::ptrdiff_t>(env.size()) - 2);
    BOOST_TEST(position(env, "SANDBOX_UNIT_ENV_NEW_A") == static_cast<std::ptrdiff_t>(env.size()) - 1);
}

BOOST_AUTO_TEST_CASE(inherit_removes_blocked_names_from_both_sources)
{
    const scoped_env inherited_blocked("RUBYOPT_SANDBOX_UNIT", "-rbad");
    const auto p = execution_policy::defaults().with_env(
        {{"SANDBOX_UNIT_ENV_KEPT", "1"}, {"PIP_SANDBOX_UNIT", "x"}, {"node_options", "--require=bad"}}, true);
    const auto env = sandbox::child_environment(p);
    BOOST_TEST(find(env, "RUBYOPT_SANDBOX_UNIT") == nullptr);
    BOOST_TEST(find(env, "PIP_SANDBOX_UNIT") == nullptr);
    BOOST_TEST(find(env, "node_options") == nullptr);
    BOOST_TEST_REQUIRE(find(env, "SANDBOX_UNIT_ENV_KEPT") != nullptr);
    for (const auto& [k, v] : env) BOOST_TEST(!is_blocked_env_name(k), k);
}

BOOST_AUTO_TEST_CASE(the_parent_environment_is_not_modified)
{
    const scoped_env a("SANDBOX_UNIT_ENV_UNTOUCHED", "orig");
    const auto before = sandbox::current_environment();
    (void)sandbox::child_environment(
        execution_policy::defaults().with_env({{"SANDBOX_UNIT_ENV_UNTOUCHED", "changed"}}, true));
    BOOST_TEST(show(sandbox::current_environment()) == show(before));
    BOOST_TEST(std::string(std::getenv("SANDBOX_UNIT_ENV_UNTOUCHED")) == "orig");
}

BOOST_AUTO_TEST_SUITE_END()
