// SPDX-License-Identifier: BSL-1.0
#include <sandbox/json.hpp>

#include <cstddef>

namespace sandbox {

namespace {

// Length of the well-formed sequence starting at s[i] (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF), or 0 when there is none.
std::size_t sequence_length(const std::string& s, std::size_t i)
{
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = byte(i);
    if (c < 0x80) return 1;
    std::size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // range of the second byte
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c == 0xE0) len = 3, lo = 0xA0;
    else if (c >= 0xE1 && c <= 0xEC) len = 3;
    else if (c == 0xED) len = 3, hi = 0x9F;
    else if (c >= 0xEE && c <= 0xEF) len = 3;
    else if (c == 0xF0) len = 4, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3) len = 4;
    else if (c == 0xF4) len = 4, hi = 0x8F;
    else return 0;
    if (i + len > s.size()) return 0;
    if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
    for (std::size_t k = 2; k < len; ++k)
        if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
    return len;
}

}  // namespace

void make_valid_utf8(std::string& s)
{
    std::size_t i = 0;
    while (i < s.size()) {  // fast path: find the first bad byte, if any
        const auto n = sequence_length(s, i);
        if (n == 0) break;
        i += n;
    }
    if (i == s.size()) return;

    std::string out;
    out.reserve(s.size() + 16);
    out.append(s, 0, i);
    while (i < s.size()) {
        const auto n = sequence_length(s, i);
        if (n == 0) {
            out += "\xEF\xBF\xBD";
            ++i;
        } else {
            out.append(s, i, n);
            i += n;
        }
    }
    s = std::move(out);
}

}  // namespace sandbox
