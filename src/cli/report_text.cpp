// SPDX-License-Identifier: BSL-1.0
// Numbers, times and escaped text as the report writes them.
#include "report_text.hpp"

#include <cmath>
#include <cstdio>

namespace sandbox::cli {

std::string shorten(std::string_view s, std::size_t max)
{
    if (s.size() <= max) return std::string(s);
    std::size_t n = max;
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
    return std::string(s.substr(0, n)) + "\u2026";
}

void escape_into(std::string& out, std::string_view s)
{
    for (const char c : s) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default:
            // Other control characters are not allowed in HTML text.
            if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') out += "\uFFFD";
            else out += c;
        }
    }
}

std::string esc(std::string_view s)
{
    std::string out;
    out.reserve(s.size() + 8);
    escape_into(out, s);
    return out;
}

std::string fixed(double v, int decimals)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string px(double v) { return fixed(std::round(v * 10) / 10, 1); }

std::string seconds_text(double s)
{
    if (s < 0) return "?";
    if (s == 0) return "0 s";
    if (s < 1e-3) return fixed(s * 1e6, 0) + " \u00b5s";
    if (s < 1) return fixed(s * 1e3, s < 0.01 ? 2 : 1) + " ms";
    if (s < 100) return fixed(s, 3) + " s";
    return fixed(s, 1) + " s";
}

std::string tick_text(double t, double step)
{
    int decimals = 0;
    while (decimals < 6 && step * std::pow(10.0, decimals) < 0.999) ++decimals;
    return fixed(t, decimals);
}

std::string count_text(std::uint64_t n) { return std::to_string(n); }

std::string percent(std::uint64_t part, std::uint64_t whole)
{
    if (whole == 0) return "";
    return " (" + fixed(100.0 * static_cast<double>(part) / static_cast<double>(whole), 1) + "%)";
}

}  // namespace sandbox::cli
