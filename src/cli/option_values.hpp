// SPDX-License-Identifier: BSL-1.0
// The values of sandbox-run's flags, parsed and checked, with errors that name the flag.
#ifndef SANDBOX_CLI_OPTION_VALUES_HPP
#define SANDBOX_CLI_OPTION_VALUES_HPP

#include "options.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sandbox::cli {

/// `s` in single quotes, for messages.
std::string squote(std::string_view s);

/// A duration, or nullopt for none: "0", "none" or "off". Throws usage_error naming `flag`,
/// with `hint` saying what is expected.
std::optional<std::chrono::milliseconds> limit_or_none(std::string_view flag, std::string_view v,
                                                       std::string_view hint);

/// A size in bytes (parse_size) that fits a size_t. Throws usage_error naming `flag`.
std::size_t size_value(std::string_view flag, std::string_view v);

/// size_value, and at least `minimum`: a smaller one throws usage_error naming `flag`, the
/// value and the minimum.
std::size_t size_at_least(std::string_view flag, std::string_view v, std::uint64_t minimum);

/// `bytes` as the flags write it: "1K", "64M", "1.5G" is "1536M", "10 bytes".
std::string size_text(std::uint64_t bytes);

/// True for "none" and "off", in any case.
bool means_none(std::string_view v);

/// `v`, unless it is empty. Throws usage_error naming `flag`.
std::string_view non_empty(std::string_view flag, std::string_view v);

/// The most jobs a batch runs at once (-j), and the most sandboxes it keeps started (--warm).
inline constexpr unsigned max_jobs = 10000;
/// -j 0: as many jobs at once as there are, but no more than this (GNU parallel's -j 0 is
/// likewise held back by the descriptors it may open).
inline constexpr unsigned all_at_once_jobs = 256;

/// The CPUs a batch runs on by default: std::thread::hardware_concurrency(), or 2 when unknown.
unsigned cpu_count() noexcept;

/// -j: N (0 to max_jobs; 0 is "as many as there are jobs", resolved by the batch), N% of
/// `cpus` (at least 1), +N (`cpus` + N) or -N (`cpus` - N, at least 1). Throws usage_error
/// naming `flag`.
unsigned parse_jobs(std::string_view flag, std::string_view v, unsigned cpus);

/// --halt: "never", "now", "soon", "now,fail=N", "soon,fail=N" or either with "fail=X%".
/// Throws usage_error naming `flag`.
halt_rule parse_halt(std::string_view flag, std::string_view v);

/// The rule as --halt spells it: "soon,fail=3", "now,fail=12.5%".
std::string halt_text(const halt_rule& h);

}  // namespace sandbox::cli

#endif
