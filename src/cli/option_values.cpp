// SPDX-License-Identifier: BSL-1.0
// Value parsers of sandbox-run's flags: durations, sizes, --jobs, --halt.
#include "option_values.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <system_error>
#include <thread>

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
        throw usage_error(std::string(flag) + ": invalid size " + squote(v) +
                          " (bytes, or with K, M, G or T, powers of 1024: 64K, 1.5G, 512MB)");
    return static_cast<std::size_t>(*s);
}

std::string size_text(std::uint64_t bytes)
{
    if (bytes != 0 && bytes % (1ull << 40) == 0) return std::to_string(bytes >> 40) + "T";
    if (bytes != 0 && bytes % (1ull << 30) == 0) return std::to_string(bytes >> 30) + "G";
    if (bytes != 0 && bytes % (1ull << 20) == 0) return std::to_string(bytes >> 20) + "M";
    if (bytes != 0 && bytes % (1ull << 10) == 0) return std::to_string(bytes >> 10) + "K";
    return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
}

std::size_t size_at_least(std::string_view flag, std::string_view v, std::uint64_t minimum)
{
    const auto n = size_value(flag, v);
    if (n < minimum)
        throw usage_error(std::string(flag) + ": " + squote(v) + " is below the minimum of " + size_text(minimum));
    return n;
}

bool means_none(std::string_view v)
{
    const auto l = lower(v);
    return l == "none" || l == "off";
}

unsigned cpu_count() noexcept
{
    const unsigned n = std::thread::hardware_concurrency();
    return n > 0 ? n : 2;
}

// GNU parallel's spellings: N, 0, N% of the CPUs, +N and -N CPUs.
unsigned parse_jobs(std::string_view flag, std::string_view v, unsigned cpus)
{
    const auto bad = [&] {
        return usage_error(std::string(flag) + ": expected a number of jobs from 0 to " + std::to_string(max_jobs) +
                           ", N% of the CPUs, +N or -N CPUs, got " + squote(v));
    };
    std::string_view digits = v;
    char how = 0;
    if (!digits.empty() && (digits.front() == '+' || digits.front() == '-')) {
        how = digits.front();
        digits.remove_prefix(1);
    } else if (!digits.empty() && digits.back() == '%') {
        how = '%';
        digits.remove_suffix(1);
    }
    std::uint64_t n = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || n > max_jobs * 100ull)
        throw bad();
    if (how == 0 && n > max_jobs) throw bad();
    std::uint64_t jobs = n;
    if (how == '+') jobs = cpus + n;
    else if (how == '-') jobs = n >= cpus ? 1 : cpus - n;
    else if (how == '%') jobs = std::max<std::uint64_t>(1, cpus * n / 100);
    if (jobs > max_jobs)
        throw usage_error(std::string(flag) + ": " + squote(v) + " makes " + std::to_string(jobs) +
                          " jobs at a time, more than the most, " + std::to_string(max_jobs));
    return static_cast<unsigned>(jobs);
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
        return usage_error(std::string(flag) +
                           ": expected never, now,fail=N or soon,fail=N (N >= 1 failed jobs, or a percentage of the "
                           "jobs ended, above 0 and at most 100: fail=10%), got " +
                           squote(v));
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
    auto num = rest.substr(5);
    if (num.ends_with('%')) {
        num.remove_suffix(1);
        double pct = 0;
        auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), pct, std::chars_format::fixed);
        if (num.empty() || num.front() == '-' || num.front() == '+' || ec != std::errc() ||
            end != num.data() + num.size() || !(pct > 0) || pct > 100)
            throw bad();
        h.failures = 0;
        h.percent = pct;
        return h;
    }
    auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), h.failures);
    if (ec != std::errc() || end != num.data() + num.size() || h.failures == 0) throw bad();
    return h;
}

std::string halt_text(const halt_rule& h)
{
    if (h.at == halt_rule::when::never) return "never";
    std::string s = h.at == halt_rule::when::now ? "now,fail=" : "soon,fail=";
    if (h.percent > 0) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g%%", h.percent);
        return s + buf;
    }
    return s + std::to_string(h.failures);
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
    else if (unit == "d") scale = 86400.0;
    else return std::nullopt;
    const double seconds = value * scale;
    if (!std::isfinite(seconds) || seconds < 0 || seconds > 1e9) return std::nullopt;
    auto ms = std::llround(seconds * 1000.0);
    if (ms == 0 && seconds > 0) ms = 1;  // a sub-millisecond limit is the shortest one there is
    return std::chrono::milliseconds(ms);
}

// Digits, an optional fraction (at most 9 digits, and only with a unit), and a unit in any
// case: B, K, KB, KiB, M, MB, MiB, G, GB, GiB, T, TB, TiB, all of them powers of 1024.
std::optional<std::uint64_t> parse_size(std::string_view text)
{
    const auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
    std::size_t i = 0;
    while (i < text.size() && is_digit(text[i])) ++i;
    const auto whole = text.substr(0, i);
    std::string_view fraction;
    if (i < text.size() && text[i] == '.') {
        const auto start = ++i;
        while (i < text.size() && is_digit(text[i])) ++i;
        fraction = text.substr(start, i - start);
        if (fraction.empty() || fraction.size() > 9) return std::nullopt;
    }
    if (whole.empty()) return std::nullopt;
    const auto unit = lower(text.substr(i));
    unsigned shift = 0;
    if (unit.empty() || unit == "b") shift = 0;
    else if (unit == "k" || unit == "kb" || unit == "kib") shift = 10;
    else if (unit == "m" || unit == "mb" || unit == "mib") shift = 20;
    else if (unit == "g" || unit == "gb" || unit == "gib") shift = 30;
    else if (unit == "t" || unit == "tb" || unit == "tib") shift = 40;
    else return std::nullopt;
    if (!fraction.empty() && shift == 0) return std::nullopt;  // no fraction of a byte

    std::uint64_t value = 0;
    auto [end, ec] = std::from_chars(whole.data(), whole.data() + whole.size(), value);
    if (ec != std::errc() || end != whole.data() + whole.size()) return std::nullopt;
    if (value > (std::numeric_limits<std::uint64_t>::max() >> shift)) return std::nullopt;
    value <<= shift;
    // The whole bytes of fraction * 2^shift, exactly: the decimal fraction doubled shift
    // times, each carry out of its first digit the next bit.
    std::string digits(fraction);
    std::uint64_t extra = 0;
    if (!digits.empty())
        for (unsigned k = 0; k < shift; ++k) {
            int carry = 0;
            for (auto d = digits.rbegin(); d != digits.rend(); ++d) {
                const int v = (*d - '0') * 2 + carry;
                *d = static_cast<char>('0' + v % 10);
                carry = v / 10;
            }
            extra = extra * 2 + static_cast<std::uint64_t>(carry);
        }
    if (extra > std::numeric_limits<std::uint64_t>::max() - value) return std::nullopt;
    return value + extra;
}

}  // namespace sandbox::cli
