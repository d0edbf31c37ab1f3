// SPDX-License-Identifier: BSL-1.0
// Shared by the fuzz targets: a failed property aborts (libFuzzer then saves the input), and
// a reader that turns the input into small structured choices.
#ifndef SANDBOX_TEST_FUZZ_SUPPORT_HPP
#define SANDBOX_TEST_FUZZ_SUPPORT_HPP

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace sandbox::fuzz {

// Printed with the input's bytes escaped, so the report says what broke on which text.
[[noreturn]] inline void fail(std::string_view what, std::string_view input = {})
{
    std::string shown;
    for (unsigned char c : input.substr(0, 400)) {
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            shown += static_cast<char>(c);
        } else {
            char buf[5];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            shown += buf;
        }
    }
    std::fprintf(stderr, "fuzz property failed: %.*s\n  input: \"%s\"\n", static_cast<int>(what.size()), what.data(),
                 shown.c_str());
    std::abort();
}

inline void check(bool ok, std::string_view what, std::string_view input = {})
{
    if (!ok) fail(what, input);
}

// Reads the input front to back; past the end every read gives zeros, so any input is a
// complete script.
class reader {
public:
    reader(const std::uint8_t* data, std::size_t size) : p_(data), end_(data + size) {}

    bool empty() const noexcept { return p_ == end_; }
    std::uint8_t byte() noexcept { return p_ == end_ ? 0 : *p_++; }
    // A number below `n` (n > 0).
    std::size_t pick(std::size_t n) noexcept { return byte() % n; }
    std::string bytes(std::size_t n)
    {
        std::string s;
        while (n-- > 0 && p_ != end_) s += static_cast<char>(*p_++);
        return s;
    }

private:
    const std::uint8_t* p_;
    const std::uint8_t* end_;
};

}  // namespace sandbox::fuzz

#endif
