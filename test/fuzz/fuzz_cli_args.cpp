// SPDX-License-Identifier: BSL-1.0
// sandbox-run's command line: the input is split at NUL bytes into argv words and parsed
// without running anything. A refusal must be a usage_error (one line, exit status 2); what
// is accepted must make a consistent mode, and the policy the flags make must be valid.
#include "fuzz_support.hpp"

#include "options.hpp"

#include <sandbox/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fz = sandbox::fuzz;
namespace cli = sandbox::cli;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    std::vector<std::string_view> args;
    for (std::size_t start = 0; start <= text.size();) {
        const auto nul = text.find('\0', start);
        const auto end = nul == std::string_view::npos ? text.size() : nul;
        args.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    if (!text.empty() && text.back() == '\0') args.pop_back();  // "a\0b\0" is two words
    if (text.empty()) args.clear();

    cli::options o;
    try {
        o = cli::parse_options(args);
    } catch (const cli::usage_error& e) {
        const std::string_view msg = e.what();
        fz::check(!msg.empty(), "empty usage error", text);
        return 0;
    }
    fz::check(o.args.size() == args.size(), "args not kept as given", text);
    switch (o.mode) {
    case cli::run_mode::single:
        fz::check(!o.batch_file && !o.command.empty() && !o.command.front().empty(), "single run without a command",
                  text);
        break;
    case cli::run_mode::batch:
        fz::check(o.batch_file && o.command.empty(), "batch with a command", text);
        fz::check(!o.resume_failed || o.resume_file, "--resume-failed without --resume", text);
        fz::check(o.max_line > 0, "--max-line 0", text);
        break;
    default: return 0;  // --help, --version, --show-policy: nothing else is looked at
    }
    if (o.jobs) fz::check(*o.jobs <= 10000, "--jobs out of range", text);  // 0: all at once
    fz::check(o.retries <= 100, "--retries out of range", text);

    // The policy file is read from disk; the fuzz input names no file worth reading.
    o.policy_file.reset();
    try {
        const auto p = cli::effective_policy(o);
        const auto back = sandbox::policy_from_json(sandbox::to_json(p));
        fz::check(back == p, "the flags' policy does not survive JSON: " + sandbox::to_json(p), text);
    } catch (const cli::usage_error&) {
    }
    return 0;
}
