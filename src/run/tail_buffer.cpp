// SPDX-License-Identifier: BSL-1.0
#include "run/tail_buffer.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

namespace sandbox::detail {

void tail_buffer::append(std::string_view chunk)
{
    total_ += chunk.size();
    const std::size_t len = chunk.size();
    if (len >= cap_) {
        data_.assign(chunk.substr(len - cap_));
        start_ = 0;
        return;
    }
    if (data_.size() < cap_) {
        if (data_.size() + len <= cap_) {
            data_.append(chunk);
            return;
        }
        // First overflow: keep the newest bytes, then run as a ring from here on.
        data_.erase(0, data_.size() + len - cap_);
        data_.append(chunk);
        start_ = 0;
        return;
    }
    // Ring: overwrite the oldest bytes.
    const std::size_t first = std::min(len, cap_ - start_);
    std::memcpy(data_.data() + start_, chunk.data(), first);
    std::memcpy(data_.data(), chunk.data() + first, len - first);
    start_ = (start_ + len) % cap_;
}

std::string tail_buffer::take()
{
    std::rotate(data_.begin(), data_.begin() + static_cast<std::ptrdiff_t>(start_), data_.end());
    start_ = 0;
    return std::move(data_);
}

std::span<char> read_scratch()
{
    constexpr std::size_t size = 64 * 1024;
    thread_local std::unique_ptr<char[]> buf(new char[size]);
    return {buf.get(), size};
}

}  // namespace sandbox::detail
