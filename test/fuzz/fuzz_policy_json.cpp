// SPDX-License-Identifier: BSL-1.0
// Policy JSON (a --policy file, a job line's "policy" object): policy_from_json and
// apply_json may only throw what they document (std::invalid_argument, or
// boost::system::system_error for text that is not JSON), and an accepted policy survives
// to_json and back unchanged.
#include "fuzz_support.hpp"

#include <sandbox/json.hpp>

#include <boost/json/parse.hpp>
#include <boost/system/system_error.hpp>

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

using namespace std::chrono_literals;
namespace fz = sandbox::fuzz;

namespace {

// The invariants the rest of the library relies on without checking again.
void check_policy(const sandbox::execution_policy& p, std::string_view input)
{
    fz::check(p.timeout() >= 1ms, "timeout below 1 ms", input);
    fz::check(!p.idle_timeout() || *p.idle_timeout() >= 1ms, "idle timeout below 1 ms", input);
    fz::check(p.memory_limit_bytes() >= 1024 * 1024, "memory limit below 1 MiB", input);
    fz::check(p.memory_limit() == std::to_string(p.memory_limit_bytes() >> 20) + "M", "memory limit not <N>M", input);
    if (p.disk_limit()) fz::check(*p.disk_limit() == std::to_string(p.disk_limit_bytes() >> 20) + "M", "disk limit", input);
    fz::check(p.stdout_limit_bytes() >= sandbox::execution_policy::min_output_cap, "stdout cap", input);
    fz::check(p.stderr_limit_bytes() >= sandbox::execution_policy::min_output_cap, "stderr cap", input);
}

void round_trip(const sandbox::execution_policy& p, std::string_view input)
{
    check_policy(p, input);
    const auto text = sandbox::to_json(p);
    sandbox::execution_policy again;
    try {
        again = sandbox::policy_from_json(text);
    } catch (const std::exception& e) {
        fz::fail(std::string("to_json output not accepted back: ") + e.what() + " in " + text, input);
    }
    fz::check(again == p, "policy changed through to_json and back: " + text, input);
    fz::check(sandbox::to_json(again) == text, "to_json not stable: " + text, input);
}

// A base that sets every key, so that apply_json's overrides are seen against non-defaults.
const sandbox::execution_policy& full_base()
{
    static const auto base = sandbox::execution_policy::in("/srv/w").with({
        .timeout = 2500ms,
        .idle_timeout = 700ms,
        .memory_limit = "1G",
        .readable_paths = std::vector<std::filesystem::path>{"/usr", "/opt/x"},
        .writable_paths = std::vector<std::filesystem::path>{"/srv/w/out"},
        .env = sandbox::env_list{{"A", "1"}, {"LANG", "C"}},
        .inherit_env = true,
        .network_enabled = true,
        .stdout_limit_bytes = 4096,
        .stderr_limit_bytes = 8192,
        .env_allowlist = std::vector<std::string>{"PATH", "HOME"},
        .disk_limit = std::optional<std::string>("2G"),
    });
    return base;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);

    try {
        round_trip(sandbox::policy_from_json(text), text);
    } catch (const std::invalid_argument&) {
    } catch (const boost::system::system_error&) {
    }

    boost::system::error_code ec;
    const auto jv = boost::json::parse(text, ec);
    if (ec) return 0;
    try {
        round_trip(sandbox::apply_json(full_base(), jv), text);
    } catch (const std::invalid_argument&) {
    }
    return 0;
}
