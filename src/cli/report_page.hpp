// SPDX-License-Identifier: BSL-1.0
// The report's HTML page, built as one string, and the sections drawn in files of their own.
#ifndef SANDBOX_CLI_REPORT_PAGE_HPP
#define SANDBOX_CLI_REPORT_PAGE_HPP

#include "report_data.hpp"
#include "report_text.hpp"

#include <string>
#include <string_view>

namespace sandbox::cli {

struct page {
    std::string html;

    void add(std::string_view s) { html += s; }
    void text(std::string_view s) { escape_into(html, s); }
};

/// The "Timeline" section: one SVG row per slot.
void add_timeline(page& p, const report_data& d, const timeline& t);

/// The whole page about `d`.
std::string make_page(const report_data& d, const std::string& input_name, const std::string& title);

}  // namespace sandbox::cli

#endif
