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
#include <regex>
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

// The words of `text` between the first line matching `from` and the next line matching `to`.
std::set<std::string> words_between(const std::string& text, const std::regex& from, const std::regex& to)
{
    std::set<std::string> words;
    std::istringstream in(text);
    std::string line;
    bool inside = false;
    while (std::getline(in, line)) {
        if (!inside) {
            inside = std::regex_search(line, from);
            continue;
        }
        if (std::regex_search(line, to)) break;
        static const std::regex word("[a-z]+");
        for (std::sregex_iterator it(line.begin(), line.end(), word), end; it != end; ++it) words.insert(it->str());
    }
    return words;
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
        std::smatch m;
        if (!std::regex_search(line, m, std::regex("^  ([a-z]+)  +\\S"))) break;
        listed.push_back(m[1]);
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
    const auto description = words_between(page, std::regex("^\\.SH DESCRIPTION"), std::regex("^\\.PP"));
    const auto option = words_between(page, std::regex("^\\.BI \\\\-\\\\-driver "), std::regex("^\\.TP"));
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
    static const std::regex row("\\n\\| `([a-z]+)` \\|");
    for (std::sregex_iterator it(section.begin(), section.end(), row), end; it != end; ++it) rows.push_back((*it)[1]);
    const auto names = table_names();
    BOOST_TEST(std::set<std::string>(rows.begin(), rows.end()) == std::set<std::string>(names.begin(), names.end()),
               boost::test_tools::per_element());
    BOOST_TEST(rows.size() == names.size(), "a driver has two rows in README.md's table");
}

BOOST_AUTO_TEST_SUITE_END()
