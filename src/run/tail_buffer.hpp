// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_SRC_RUN_TAIL_BUFFER_HPP
#define SANDBOX_SRC_RUN_TAIL_BUFFER_HPP

#include <cstddef>
#include <cstdint>
#include <string>
#include <span>
#include <string_view>

namespace sandbox::detail {

/// Keeps the last `cap` bytes of a stream. Memory grows with the output up to `cap` and then
/// stays there: a ring, so appending never moves the retained bytes after the first overflow.
class tail_buffer {
public:
    explicit tail_buffer(std::size_t cap) noexcept : cap_(cap == 0 ? 1 : cap) {}

    void append(std::string_view chunk);

    /// More than `cap` bytes were appended in total (exactly `cap` is not truncation).
    bool truncated() const noexcept { return total_ > cap_; }
    std::uint64_t total_bytes() const noexcept { return total_; }
    std::size_t size() const noexcept { return data_.size(); }
    std::size_t capacity_limit() const noexcept { return cap_; }

    /// The retained bytes in order; leaves the buffer empty.
    std::string take();

private:
    std::size_t cap_;
    std::string data_;       // linear until full, then a ring of exactly cap_ bytes
    std::size_t start_ = 0;  // ring: index of the oldest byte
    std::uint64_t total_ = 0;
};

/// Where pipe reads land before their bytes go to a tail_buffer: one buffer per thread
/// instead of one per execution, so a thousand quiet commands cost no read buffers. Its
/// bytes must be handed on before the reading handler returns.
std::span<char> read_scratch();

}  // namespace sandbox::detail

#endif
