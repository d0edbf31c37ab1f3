// SPDX-License-Identifier: BSL-1.0
// The report's text: numbers and times as the page writes them, and HTML escaping.
#ifndef SANDBOX_CLI_REPORT_TEXT_HPP
#define SANDBOX_CLI_REPORT_TEXT_HPP

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sandbox::cli {

/// At most `max` bytes, cut at a character boundary, with an ellipsis when cut.
std::string shorten(std::string_view s, std::size_t max);

/// `s` appended to `out` as HTML text.
void escape_into(std::string& out, std::string_view s);
std::string esc(std::string_view s);

std::string fixed(double v, int decimals);
/// A coordinate: one decimal is finer than any screen.
std::string px(double v);
/// A duration in seconds in the unit that suits it ("?" when negative: unknown).
std::string seconds_text(double s);
/// An axis label: as few digits as the step between ticks needs.
std::string tick_text(double t, double step);
std::string count_text(std::uint64_t n);
/// count_text(n) and the noun that goes with it: "1 job", "2,000 jobs".
inline std::string count_of(std::uint64_t n, std::string_view one, std::string_view many)
{
    return count_text(n) + " " + std::string(n == 1 ? one : many);
}
/// " (12.5%)", or nothing when `whole` is 0.
std::string percent(std::uint64_t part, std::uint64_t whole);

}  // namespace sandbox::cli

#endif
