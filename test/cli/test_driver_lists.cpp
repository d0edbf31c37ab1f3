// SPDX-License-Identifier: BSL-1.0
// Every list of the drivers a user meets is sandbox::driver_table: `sandbox-run --help` (and
// so the bash completion, which reads its "Drivers:" section), the JSON schemas, the manual
// page and the README's table. A driver added to the table and forgotten in one of them fails
// here, naming the place.
#include "cli_support.hpp"

#include <build_paths.hpp>
#include <sandbox/driver.hpp>

#include <boost/json/parse.hpp>
#include <boost/test/unit_test.hpp>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace sandbox;
using namespace sandbox::test;
namespace json = boost::json;

namespace {

std::vector<std::string> table_names()
{
    std::vector<std::string> out;
    for (const auto& row : driver_table) out.emplace_back(row.name);
    return out;
}

std::string source_file(const std::string& rel)
{
    std::ifstream f(std::filesystem::path(build::source_dir()) / rel, std::ios::binary);
    BOOST_TEST_REQUIRE(f.good(), "cannot read " << rel);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// The "enum" of every property named "driver" in a JSON schema, wherever it is nested.
void driver_enums(const json::value& v, std::vector<std::vector<std::string>>& out)
{
    if (const auto* obj = v.if_object()) {
        for (const auto& [key, value] : *obj) {
            if (key == "driver" && value.is_object() && value.as_object().contains("enum")) {
                std::vector<std::string> names;
                for (const auto& n : value.as_object().at("enum").as_array()) names.emplace_back(n.as_string());
                out.push_back(std::move(names));
            }
            driver_enums(value, out);
        }
    } else if (const auto* arr = v.if_array()) {
        for (const auto& e : *arr) driver_enums(e, out);
    }
}

// Plain string scanning, not std::regex: g++ 12's <regex> trips -Wmaybe-uninitialized in
// optimised builds, and these formats are simple.
bool is_lower(char c) { return c >= 'a' && c <= 'z'; }

// The runs of lowercase letters in `line`.
std::vector<std::string> lower_words(const std::string& line)
{
    std::vector<std::string> words;
    for (std::size_t i = 0; i < line.size();) {
        if (!is_lower(line[i])) {
            ++i;
            continue;
        }
        std::size_t j = i;
        while (j < line.size() && is_lower(line[j])) ++j;
        words.push_back(line.substr(i, j - i));
        i = j;
    }
    return words;
}

// The words of `text` between the first line starting with `from` and the next line starting
// with `to`.
std::set<std::string> words_between(const std::string& text, const std::string& from, const std::string& to)
{
    std::set<std::string> words;
    std::istringstream in(text);
    std::string line;
    bool inside = false;
    while (std::getline(in, line)) {
        if (!inside) {
            inside = line.starts_with(from);
            continue;
        }
        if (line.starts_with(to)) break;
        for (auto& w : lower_words(line)) words.insert(std::move(w));
    }
    return words;
}

// "  name  summary": the name of a driver line of --help, or "" when the line is not one.
std::string help_driver_name(const std::string& line)
{
    if (!line.starts_with("  ") || line.size() < 3 || !is_lower(line[2])) return {};
    std::size_t end = 2;
    while (end < line.size() && is_lower(line[end])) ++end;
    const auto summary = line.find_first_not_of(' ', end);
    if (summary == std::string::npos || summary < end + 2) return {};
    return line.substr(2, end - 2);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(driver_lists)

BOOST_AUTO_TEST_CASE(the_table_names_every_driver_once_in_declaration_order)
{
    BOOST_TEST_REQUIRE(driver_table.size() == all_drivers.size());
    for (std::size_t i = 0; i < driver_table.size(); ++i) {
        BOOST_TEST(static_cast<std::size_t>(driver_table[i].id) == i);
        BOOST_TEST((all_drivers[i] == driver_table[i].id));
        BOOST_TEST(to_string(all_drivers[i]) == driver_table[i].name);
        BOOST_TEST((parse_driver(driver_table[i].name) == driver_table[i].id));
        BOOST_TEST(!driver_table[i].summary.empty());
    }
    const auto names = table_names();
    BOOST_TEST(std::set<std::string>(names.begin(), names.end()).size() == names.size());
}

BOOST_AUTO_TEST_CASE(help_lists_every_driver_in_the_tables_order)
{
    const auto r = run_cli({"--help"});
    BOOST_TEST_REQUIRE(r.code == 0);
    std::vector<std::string> listed;
    std::istringstream in(r.out);
    std::string line;
    bool inside = false;
    while (std::getline(in, line)) {
        if (line == "Drivers:") {
            inside = true;
            continue;
        }
        if (!inside) continue;
        auto name = help_driver_name(line);
        if (name.empty()) break;
        listed.push_back(std::move(name));
    }
    BOOST_TEST(listed == table_names(), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(the_schemas_allow_exactly_the_tables_drivers)
{
    for (const char* schema : {"share/sandbox/job.schema.json", "share/sandbox/result.schema.json"}) {
        BOOST_TEST_CONTEXT(schema)
        {
            std::vector<std::vector<std::string>> enums;
            driver_enums(json::parse(source_file(schema)), enums);
            BOOST_TEST_REQUIRE(!enums.empty(), "no \"driver\" enum");
            for (const auto& names : enums) BOOST_TEST(names == table_names(), boost::test_tools::per_element());
        }
    }
}

BOOST_AUTO_TEST_CASE(the_manual_page_names_every_driver)
{
    const auto page = source_file("doc/sandbox-run.1");
    const auto description = words_between(page, ".SH DESCRIPTION", ".PP");
    const auto option = words_between(page, ".BI \\-\\-driver ", ".TP");
    for (const auto& name : table_names()) {
        BOOST_TEST(description.count(name) == 1u, "doc/sandbox-run.1, DESCRIPTION, does not name " << name);
        BOOST_TEST(option.count(name) == 1u, "doc/sandbox-run.1, --driver, does not name " << name);
    }
}

BOOST_AUTO_TEST_CASE(the_readme_has_a_row_for_every_driver)
{
    const auto readme = source_file("README.md");
    const auto start = readme.find("\n## Drivers\n");
    BOOST_TEST_REQUIRE(start != std::string::npos, "README.md has no \"## Drivers\" section");
    const auto section = readme.substr(start, readme.find("\n## ", start + 1) - start);
    std::vector<std::string> rows;
    // A row starts "| `name` |".
    for (auto at = section.find("\n| `"); at != std::string::npos; at = section.find("\n| `", at + 1)) {
        const auto name_at = at + 4;
        std::size_t end = name_at;
        while (end < section.size() && is_lower(section[end])) ++end;
        if (end > name_at && section.compare(end, 3, "` |") == 0) rows.push_back(section.substr(name_at, end - name_at));
    }
    const auto names = table_names();
    BOOST_TEST(std::set<std::string>(rows.begin(), rows.end()) == std::set<std::string>(names.begin(), names.end()),
               boost::test_tools::per_element());
    BOOST_TEST(rows.size() == names.size(), "a driver has two rows in README.md's table");
}

BOOST_AUTO_TEST_SUITE_END()
