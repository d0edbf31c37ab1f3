// SPDX-License-Identifier: BSL-1.0
#include <sandbox/errors.hpp>
#include <sandbox/exec_result.hpp>
#include <sandbox/json.hpp>

#include "policy/json_util.hpp"

#include <boost/json/value.hpp>

#include <charconv>
#include <cmath>
#include <stdexcept>

namespace sandbox {

std::string_view to_string(timeout_reason r) noexcept { return r == timeout_reason::wall ? "wall" : "idle"; }

std::string exec_result::combined_output() const
{
    std::string s = out;
    if (!out.empty() && !err.empty()) s += '\n';
    s += err;
    return s;
}

namespace {

double to_seconds(std::chrono::nanoseconds ns) { return std::chrono::duration<double>(ns).count(); }

std::chrono::nanoseconds from_seconds(const json::value& v, std::string_view what, std::string_view key)
{
    const double s = detail::json_number(v, what, key);
    if (!std::isfinite(s) || s < 0 || s > 1e9)
        throw std::invalid_argument(detail::json_key_error(what, key, "must be a number of seconds >= 0"));
    return std::chrono::nanoseconds(std::llround(s * 1e9));
}

json::value start_error_to_json(const boost::system::error_code& ec)
{
    if (!ec) return nullptr;
    std::string code = ec.category() == sandbox_category() ? std::string(to_string(static_cast<errc>(ec.value())))
                                                            : std::string(ec.category().name()) + ":" + std::to_string(ec.value());
    return json::object{{"code", std::move(code)}, {"message", ec.message()}};
}

// The inverse for the codes the library produces: sandbox names and system values.
boost::system::error_code start_error_from_json(const json::value& v, std::string_view what)
{
    if (v.is_null()) return {};
    const auto* o = v.if_object();
    const auto* code = o ? o->if_contains("code") : nullptr;
    if (!code || !code->is_string())
        throw std::invalid_argument(detail::json_key_error(what, "start_error", "must be null or an object with a string \"code\""));
    const std::string_view name = code->get_string();
    for (int e = static_cast<int>(errc::driver_unavailable); e <= static_cast<int>(errc::callback_failed); ++e)
        if (to_string(static_cast<errc>(e)) == name) return static_cast<errc>(e);
    for (const auto* cat : {&boost::system::system_category(), &boost::system::generic_category()}) {
        const std::string prefix = std::string(cat->name()) + ":";
        if (name.starts_with(prefix)) {
            const auto digits = name.substr(prefix.size());
            int value = 0;
            const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
            if (ec == std::errc() && end == digits.data() + digits.size() && value > 0) return {value, *cat};
        }
    }
    throw std::invalid_argument(detail::json_key_error(what, "start_error.code", "is not a known error code"));
}

}  // namespace

void tag_invoke(const json::value_from_tag&, json::value& jv, const exec_result& r)
{
    json::object o;
    std::string out = r.out, err = r.err;
    make_valid_utf8(out);
    make_valid_utf8(err);
    o["stdout"] = std::move(out);
    o["stderr"] = std::move(err);
    o["exit_code"] = r.exit_code;
    o["duration"] = to_seconds(r.duration);
    o["timed_out"] = r.timed_out;
    o["truncated_stdout"] = r.truncated_out;
    o["truncated_stderr"] = r.truncated_err;
    o["success"] = r.success();
    o["timeout_reason"] = r.timeout ? json::value(to_string(*r.timeout)) : json::value(nullptr);
    o["term_signal"] = r.term_signal;
    if (r.usage.available)
        o["usage"] = json::object{
            {"user_cpu_seconds", to_seconds(r.usage.user_cpu)},
            {"system_cpu_seconds", to_seconds(r.usage.system_cpu)},
            {"max_rss_bytes", r.usage.max_rss_bytes},
        };
    else
        o["usage"] = nullptr;
    o["oom_killed"] = r.oom_killed;
    o["start_error"] = start_error_to_json(r.start_error);
    o["warm"] = r.warm;
    jv = std::move(o);
}

exec_result tag_invoke(const json::value_to_tag<exec_result>&, const json::value& jv)
{
    constexpr std::string_view what = "exec_result";
    const auto* obj = jv.if_object();
    if (!obj) throw std::invalid_argument("exec_result: JSON must be an object");
    exec_result r;
    for (const auto& [k, v] : *obj) {
        const std::string_view key = k;
        if (key == "stdout") r.out = detail::json_string(v, what, key);
        else if (key == "stderr") r.err = detail::json_string(v, what, key);
        else if (key == "exit_code") r.exit_code = static_cast<int>(detail::json_integer(v, what, key));
        else if (key == "duration") r.duration = from_seconds(v, what, key);
        else if (key == "timed_out") r.timed_out = detail::json_bool(v, what, key);
        else if (key == "truncated_stdout") r.truncated_out = detail::json_bool(v, what, key);
        else if (key == "truncated_stderr") r.truncated_err = detail::json_bool(v, what, key);
        else if (key == "success") (void)detail::json_bool(v, what, key);  // derived
        else if (key == "timeout_reason") {
            if (v.is_null()) r.timeout.reset();
            else {
                const auto s = detail::json_string(v, what, key);
                if (s == "wall") r.timeout = timeout_reason::wall;
                else if (s == "idle") r.timeout = timeout_reason::idle;
                else throw std::invalid_argument(detail::json_key_error(what, key, "must be null, \"wall\" or \"idle\""));
            }
        } else if (key == "term_signal") r.term_signal = static_cast<int>(detail::json_integer(v, what, key));
        else if (key == "usage") {
            if (v.is_null()) {
                r.usage = resource_usage{.available = false};
                continue;
            }
            const auto* u = v.if_object();
            if (!u) throw std::invalid_argument(detail::json_key_error(what, key, "must be an object or null"));
            r.usage.available = true;
            for (const auto& [uk, uv] : *u) {
                if (uk == "user_cpu_seconds") r.usage.user_cpu = from_seconds(uv, what, "usage.user_cpu_seconds");
                else if (uk == "system_cpu_seconds") r.usage.system_cpu = from_seconds(uv, what, "usage.system_cpu_seconds");
                else if (uk == "max_rss_bytes") r.usage.max_rss_bytes = detail::json_unsigned(uv, what, "usage.max_rss_bytes");
                else throw std::invalid_argument(detail::json_key_error(what, "usage." + std::string(uk), "is not a known key"));
            }
        } else if (key == "oom_killed") {
            r.oom_killed = detail::json_bool(v, what, key);
        } else if (key == "start_error") {
            r.start_error = start_error_from_json(v, what);
        } else if (key == "warm") {
            r.warm = detail::json_bool(v, what, key);
        } else {
            throw std::invalid_argument(detail::json_key_error(what, key, "is not a known key"));
        }
    }
    return r;
}

}  // namespace sandbox
