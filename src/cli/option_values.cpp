// SPDX-License-Identifier: BSL-1.0
// Value parsers of sandbox-run's flags: durations, sizes, --halt.
#include "option_values.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>

namespace sandbox::cli {

namespace {

std::string lower(std::string_view s)
{
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

}  // namespace

std::string squote(std::string_view s) { return "'" + std::string(s) + "'"; }

std::optional<std::chrono::milliseconds> limit_or_none(std::string_view flag, std::string_view v, std::string_view hint)
{
    const auto l = lower(v);
    if (l == "none" || l == "off") return std::nullopt;
    auto d = parse_duration(v);
    if (!d) throw usage_error(std::string(flag) + ": invalid duration " + squote(v) + " (" + std::string(hint) + ")");
    if (d->count() == 0) return std::nullopt;
    return d;
}

std::size_t size_value(std::string_view flag, std::string_view v)
{
    auto s = parse_size(v);
    if (!s || *s > std::numeric_limits<std::size_t>::max())
        throw usage_error(std::string(flag) + ": invalid size " + squote(v) + " (bytes, or with K, M or G: 64K, 1M)");
    return static_cast<std::size_t>(*s);
}

std::string_view non_empty(std::string_view flag, std::string_view v)
{
    if (v.empty()) throw usage_error(std::string(flag) + ": needs a non-empty value");
    return v;
}

// GNU parallel's spelling; "now" alone: the first failure.
halt_rule parse_halt(std::string_view flag, std::string_view v)
{
    const auto bad = [&] {
        return usage_error(std::string(flag) + ": expected never, now,fail=N or soon,fail=N (N >= 1), got " + squote(v));
    };
    halt_rule h;
    const auto comma = v.find(',');
    const auto when = v.substr(0, comma);
    if (when == "never" && comma == std::string_view::npos) return h;
    if (when == "now") h.at = halt_rule::when::now;
    else if (when == "soon") h.at = halt_rule::when::soon;
    else throw bad();
    h.failures = 1;
    if (comma == std::string_view::npos) return h;
    const auto rest = v.substr(comma + 1);
    if (!rest.starts_with("fail=")) throw bad();
    const auto num = rest.substr(5);
    auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), h.failures);
    if (ec != std::errc() || end != num.data() + num.size() || h.failures == 0) throw bad();
    return h;
}

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text)
{
    if (text.empty() || text.front() == '+' || text.front() == '-') return std::nullopt;
    double value = 0;
    const char* first = text.data();
    const char* last = text.data() + text.size();
    auto [end, ec] = std::from_chars(first, last, value, std::chars_format::fixed);
    if (ec != std::errc() || end == first) return std::nullopt;
    const auto unit = lower(std::string_view(end, static_cast<std::size_t>(last - end)));
    double scale = 1.0;  // to seconds
    if (unit.empty() || unit == "s") scale = 1.0;
    else if (unit == "ms") scale = 1e-3;
    else if (unit == "m") scale = 60.0;
    else if (unit == "h") scale = 3600.0;
    else return std::nullopt;
    const double seconds = value * scale;
    if (!std::isfinite(seconds) || seconds < 0 || seconds > 1e9) return std::nullopt;
    auto ms = std::llround(seconds * 1000.0);
    if (ms == 0 && seconds > 0) ms = 1;  // a sub-millisecond limit is the shortest one there is
    return std::chrono::milliseconds(ms);
}

std::optional<std::uint64_t> parse_size(std::string_view text)
{
    std::uint64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end == text.data()) return std::nullopt;
    const auto unit = lower(std::string_view(end, static_cast<std::size_t>(text.data() + text.size() - end)));
    std::uint64_t mult = 1;
    if (unit.empty() || unit == "b") mult = 1;
    else if (unit == "k" || unit == "kb" || unit == "kib") mult = 1ull << 10;
    else if (unit == "m" || unit == "mb" || unit == "mib") mult = 1ull << 20;
    else if (unit == "g" || unit == "gb" || unit == "gib") mult = 1ull << 30;
    else return std::nullopt;
    if (value > std::numeric_limits<std::uint64_t>::max() / mult) return std::nullopt;
    return value * mult;
}

}  // namespace sandbox::cli
