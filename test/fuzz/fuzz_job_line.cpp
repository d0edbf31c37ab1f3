// SPDX-License-Identifier: BSL-1.0
// One line of a sandbox-run jobs file: parse_job never throws (a bad line is an error
// result, not the end of the batch), an accepted job is runnable, and the error line written
// for any job is one valid JSON object. --lock-policy's comparison and --strict's reading of
// the policy keys run on whatever the line gives.
#include "fuzz_support.hpp"

#include "enforcement.hpp"
#include "job.hpp"

#include <sandbox/json.hpp>

#include <boost/json/parse.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

using namespace std::chrono_literals;
namespace fz = sandbox::fuzz;

namespace {

// A tight base, as under --lock-policy, so that every branch of loosened_setting is reached.
const sandbox::execution_policy& tight_base()
{
    static const auto base = sandbox::execution_policy::in("/srv/jobs").with({
        .timeout = 2s,
        .idle_timeout = 500ms,
        .memory_limit = "64M",
        .readable_paths = std::vector<std::filesystem::path>{"/usr", "/srv/data/"},
        .writable_paths = std::vector<std::filesystem::path>{"/srv/jobs/out"},
        .env_allowlist = std::vector<std::string>{"PATH"},
        .disk_limit = std::optional<std::string>("128M"),
    });
    return base;
}

// The id goes out as it came in, numbers as plain decimals: 2.0 may come back as 2, and a
// double written with many digits (1.5e150 has 151) may read back one unit in the last place
// off (Boost.JSON 1.81 parses long numbers imprecisely). A number too large for a double
// (1.5e350) reads as infinity, which serialize_json writes as null.
bool same_id(const boost::json::value& a, const boost::json::value& b)
{
    if (a.is_null() && b.is_double() && !std::isfinite(b.get_double())) return true;
    if (a.is_number() && b.is_number()) {
        const double x = a.to_number<double>(), y = b.to_number<double>();
        return x == y || std::fabs(x - y) <= 1e-12 * std::max(std::fabs(x), std::fabs(y));
    }
    if (a.kind() != b.kind()) return false;
    if (a.is_array()) {
        const auto &x = a.get_array(), &y = b.get_array();
        return x.size() == y.size() && std::equal(x.begin(), x.end(), y.begin(), same_id);
    }
    if (a.is_object()) {
        const auto &x = a.get_object(), &y = b.get_object();
        if (x.size() != y.size()) return false;
        for (auto i = x.begin(), k = y.begin(); i != x.end(); ++i, ++k)
            if (i->key() != k->key() || !same_id(i->value(), k->value())) return false;
        return true;
    }
    return a == b;
}

void check_job(const sandbox::cli::job& j, const sandbox::execution_policy& base, std::string_view input)
{
    if (j.error.empty()) {
        fz::check(!j.argv.empty() && !j.argv.front().empty(), "accepted job without a command", input);
        if (j.image) fz::check(!j.image->empty(), "accepted an empty image", input);
    }
    if (j.policy) {
        (void)sandbox::cli::loosened_setting(base, *j.policy);
        (void)sandbox::cli::loosened_setting(*j.policy, base);
        fz::check(sandbox::cli::loosened_setting(*j.policy, *j.policy).empty(), "a policy looser than itself", input);
    }
    (void)sandbox::cli::asked_by(j.policy_keys);

    // The error line carries the id as given and the error text whatever its bytes.
    const sandbox::cli::run_times t{1, std::chrono::system_clock::time_point{},
                                    std::chrono::system_clock::time_point{} + 1500ms};
    const auto line = sandbox::cli::error_line(j.id, 7, t, j.error.empty() ? std::string(input) : j.error);
    fz::check(!line.empty() && line.back() == '\n', "error line without its newline", input);
    boost::system::error_code ec;
    const auto v = boost::json::parse(std::string_view(line).substr(0, line.size() - 1), ec);
    fz::check(!ec && v.is_object(), "error line is not one JSON object: " + line, input);
    const auto& o = v.get_object();
    fz::check(o.contains("id") && o.contains("error"), "error line without id or error", input);
    fz::check(same_id(o.at("id"), j.id), "id changed in the error line: " + line, input);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    // Documented never to throw: an exception here escapes and is reported.
    static const auto defaults = sandbox::execution_policy::defaults();
    for (const auto* base : {&defaults, &tight_base()}) {
        const auto j = sandbox::cli::parse_job(text, 3, *base);
        check_job(j, *base, text);
    }
    return 0;
}
