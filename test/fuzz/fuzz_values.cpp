// SPDX-License-Identifier: BSL-1.0
// The size and duration strings of flags and policies ("512M", "1.5G", "1.5s", "64KiB",
// "none", "now,fail=3", "soon,fail=10%"), each checked against a small independent model of what it should accept.
#include "fuzz_support.hpp"

#include "option_values.hpp"
#include "options.hpp"

#include <sandbox/execution_policy.hpp>

#include <cctype>
#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace fz = sandbox::fuzz;
namespace cli = sandbox::cli;

namespace {

// Wide enough that the model never overflows where the parsers must notice they would.
__extension__ typedef unsigned __int128 u128;

std::string lower(std::string_view s)
{
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// Decimal digits as a 128-bit number; nullopt when there are none, a non-digit, or more than
// 38 of them (already far past any 64-bit value).
std::optional<u128> digits_value(std::string_view s)
{
    if (s.empty() || s.size() > 38) return std::nullopt;
    u128 v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + static_cast<unsigned>(c - '0');
    }
    return v;
}

constexpr u128 u64_max = std::numeric_limits<std::uint64_t>::max();

// parse_size: digits, an optional fraction of 1 to 9 digits (only before a unit), then "",
// b, k, kb, kib, m, ... t, tb, tib in any case; the whole bytes of it.
std::optional<std::uint64_t> model_size(std::string_view text)
{
    std::size_t n = 0;
    while (n < text.size() && text[n] >= '0' && text[n] <= '9') ++n;
    // Leading zeros do not count towards the 38 digits.
    std::size_t z = 0;
    while (z + 1 < n && text[z] == '0') ++z;
    const auto v = digits_value(text.substr(z, n - z));
    if (!v || *v > u64_max) return std::nullopt;
    std::size_t f = n;
    u128 frac = 0, scale = 1;
    if (f < text.size() && text[f] == '.') {
        ++f;
        while (f < text.size() && text[f] >= '0' && text[f] <= '9') ++f;
        const auto digits = text.substr(n + 1, f - n - 1);
        if (digits.empty() || digits.size() > 9) return std::nullopt;
        frac = *digits_value(digits);
        for (std::size_t i = 0; i < digits.size(); ++i) scale *= 10;
    }
    const auto unit = lower(text.substr(f));
    u128 mult = 0;
    if (unit.empty() || unit == "b") mult = 1;
    else if (unit == "k" || unit == "kb" || unit == "kib") mult = u128(1) << 10;
    else if (unit == "m" || unit == "mb" || unit == "mib") mult = u128(1) << 20;
    else if (unit == "g" || unit == "gb" || unit == "gib") mult = u128(1) << 30;
    else if (unit == "t" || unit == "tb" || unit == "tib") mult = u128(1) << 40;
    else return std::nullopt;
    if (f > n && mult == 1) return std::nullopt;  // a fraction of a byte
    const u128 bytes = *v * mult + frac * mult / scale;
    if (bytes > u64_max) return std::nullopt;
    return static_cast<std::uint64_t>(bytes);
}

// normalize_memory_limit: blanks around, digits, an optional K, M or G in any case; the
// result is whole MiB, at least 1.
std::optional<std::string> model_memory(std::string_view text)
{
    const auto blank = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
    while (!text.empty() && blank(text.front())) text.remove_prefix(1);
    while (!text.empty() && blank(text.back())) text.remove_suffix(1);
    u128 mult = 1;
    if (!text.empty()) {
        switch (std::toupper(static_cast<unsigned char>(text.back()))) {
        case 'K': mult = 1u << 10; break;
        case 'M': mult = 1u << 20; break;
        case 'G': mult = 1u << 30; break;
        default: break;
        }
        if (mult != 1) text.remove_suffix(1);
    }
    std::size_t z = 0;
    while (z + 1 < text.size() && text[z] == '0') ++z;
    const auto v = digits_value(text.substr(z));
    if (!v || *v > u64_max || *v * mult > u64_max) return std::nullopt;
    auto mib = static_cast<std::uint64_t>(*v * mult >> 20);
    if (mib == 0) mib = 1;
    return std::to_string(mib) + "M";
}

void check_duration(std::string_view text)
{
    const auto d = cli::parse_duration(text);
    if (!d) return;
    fz::check(d->count() >= 0 && d->count() <= 1'000'000'000'000, "duration out of range", text);
    // Only fixed notation with a known unit: "1e3" or "inf" are not durations.
    const auto l = lower(text);
    fz::check(l.find_first_not_of("0123456789.smhd") == std::string::npos, "duration with a stray character", text);
    // What reads back must be the same, said in milliseconds.
    const auto again = cli::parse_duration(std::to_string(d->count()) + "ms");
    fz::check(again && *again == *d, "duration does not read back in ms", text);
}

void check_size(std::string_view text)
{
    const auto got = cli::parse_size(text);
    const auto want = model_size(text);
    fz::check(got == want, "parse_size disagrees with the model", text);
    try {
        const auto n = cli::size_value("--stdout-cap", text);
        fz::check(got && n == *got, "size_value accepted what parse_size did not", text);
    } catch (const cli::usage_error&) {
        fz::check(!got || *got > std::numeric_limits<std::size_t>::max(), "size_value refused a size", text);
    }
}

void check_memory(std::string_view text)
{
    std::optional<std::string> got;
    try {
        got = sandbox::execution_policy::normalize_memory_limit(text);
    } catch (const std::invalid_argument&) {
    }
    const auto want = model_memory(text);
    fz::check(got == want, "normalize_memory_limit disagrees with the model: " + got.value_or("(refused)"), text);
    if (!got) return;
    fz::check(sandbox::execution_policy::normalize_memory_limit(*got) == *got, "memory limit not idempotent", text);
    // memory_limit_bytes() is noexcept and trusts the normalized form.
    const auto p = sandbox::execution_policy::defaults().with_memory(text).with_disk_limit(text);
    fz::check(p.memory_limit_bytes() % (1u << 20) == 0 && p.memory_limit_bytes() >= (1u << 20), "memory bytes", text);
    fz::check(p.disk_limit_bytes() == p.memory_limit_bytes(), "disk bytes", text);
}

void check_flags(std::string_view text)
{
    try {
        const auto d = cli::limit_or_none("--timeout", text, "seconds");
        if (d) fz::check(d->count() > 0, "a zero limit that is not none", text);
    } catch (const cli::usage_error&) {
        fz::check(!cli::parse_duration(text), "limit_or_none refused a duration", text);
    }
    try {
        const auto h = cli::parse_halt("--halt", text);
        fz::check((h.at == cli::halt_rule::when::never) == (h.failures == 0 && h.percent == 0),
                  "halt rule without failures", text);
        fz::check(h.failures == 0 || h.percent == 0, "halt rule with a count and a share", text);
        fz::check(h.percent >= 0 && h.percent <= 100, "halt share out of range", text);
        if (h.at != cli::halt_rule::when::never)
            fz::check(cli::parse_halt("--halt", cli::halt_text(h)).failures == h.failures, "halt rule does not read back",
                      text);
    } catch (const cli::usage_error&) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    check_duration(text);
    check_size(text);
    check_memory(text);
    check_flags(text);
    return 0;
}
