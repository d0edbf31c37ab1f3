// SPDX-License-Identifier: BSL-1.0
#include "run/line_sieve.hpp"

#include <utility>

namespace sandbox::detail {

line_sieve::line_sieve(std::vector<std::string> prefixes, std::vector<std::string> markers, std::size_t max_taken,
                       std::size_t max_line)
    : prefixes_(std::move(prefixes)), markers_(std::move(markers)), max_taken_(max_taken == 0 ? 1 : max_taken),
      max_line_(max_line)
{
}

std::size_t line_sieve::match(std::string_view text) const noexcept
{
    if (!line_passed_)
        for (const auto& p : prefixes_)
            if (text.starts_with(p)) return 0;
    std::size_t best = std::string_view::npos;
    for (const auto& m : markers_)
        if (const auto at = text.find(m); at < best) best = at;
    return best;
}

std::size_t line_sieve::partial_match(std::string_view text) const noexcept
{
    auto unfinished = [&](std::string_view tail, const std::vector<std::string>& candidates) {
        for (const auto& c : candidates)
            if (tail.size() < c.size() && std::string_view(c).starts_with(tail)) return true;
        return false;
    };
    if (!line_passed_ && unfinished(text, prefixes_)) return 0;
    std::size_t longest = 0;
    for (const auto& m : markers_) longest = std::max(longest, m.size());
    for (std::size_t at = text.size() > longest ? text.size() - longest : 0; at < text.size(); ++at)
        if (unfinished(text.substr(at), markers_)) return at;
    return std::string_view::npos;
}

void line_sieve::take(std::string line)
{
    if (line.size() > max_line_) line.resize(max_line_);
    if (taken_.size() == max_taken_) taken_.pop_front();
    taken_.push_back(std::move(line));
}

std::string line_sieve::feed(std::string_view chunk)
{
    std::string out;
    while (!chunk.empty()) {
        const auto nl = chunk.find('\n');
        const auto segment = chunk.substr(0, nl == std::string_view::npos ? chunk.size() : nl + 1);
        chunk.remove_prefix(segment.size());
        const bool line_ends = segment.back() == '\n';
        if (matched_) {  // the rest of a line to take
            if (held_.size() < max_line_) held_ += segment.substr(0, max_line_ - held_.size());
        } else {
            // What is held is short (an unfinished start), so this copy is too, but for the
            // segment itself, which passes at once when nothing in it is to be taken.
            std::string text = std::move(held_);
            text += segment;
            held_.clear();
            const std::string_view body = line_ends ? std::string_view(text).substr(0, text.size() - 1) : text;
            auto at = match(body);
            if (at == std::string_view::npos) {
                at = line_ends ? std::string_view::npos : partial_match(body);
                out.append(text, 0, at == std::string_view::npos ? text.size() : at);
                if (at != std::string_view::npos) held_.assign(text, at);
                line_passed_ = !line_ends && (at == std::string_view::npos || at > 0 || line_passed_);
                continue;
            }
            out.append(text, 0, at);
            held_.assign(body.substr(at, max_line_));
            matched_ = true;
        }
        if (line_ends) {
            if (!held_.empty() && held_.back() == '\n') held_.pop_back();
            take(std::exchange(held_, {}));
            matched_ = false;
            line_passed_ = false;
        }
    }
    return out;
}

std::string line_sieve::finish()
{
    std::string out;
    if (matched_) take(std::move(held_));
    else out = std::move(held_);
    held_.clear();
    matched_ = line_passed_ = false;
    return out;
}

}  // namespace sandbox::detail
