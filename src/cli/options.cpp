// SPDX-License-Identifier: BSL-1.0
// The option table and the parsing of argv, and the policy the options make.
#include "options.hpp"

#include "io.hpp"
#include "option_values.hpp"

#include <boost/json/stream_parser.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <system_error>

namespace sandbox::cli {

namespace {

// ---- one table of options -----------------------------------------------------------------

enum class arity { flag, value };

struct option_spec {
    std::string_view name;  // long name without the dashes
    char short_name;        // 0 when none
    arity kind;
    bool batch_only;
    void (*apply)(options&, std::string_view flag, std::string_view value);
};

constexpr std::uint64_t mib = 1u << 20;

// --memory and --disk: the library keeps whole MiB (rounding down), and 1M at least.
std::string mib_limit(std::string_view flag, std::string_view v)
{
    return std::to_string(size_at_least(flag, v, mib) / mib) + "M";
}

const option_spec option_table[] = {
    {"help", 'h', arity::flag, false, [](options& o, auto, auto) { o.mode = run_mode::help; }},
    {"version", 'V', arity::flag, false, [](options& o, auto, auto) { o.mode = run_mode::version; }},
    {"show-policy", 0, arity::flag, false, [](options& o, auto, auto) { o.mode = run_mode::show_policy; }},
    {"policy", 0, arity::value, false,
     [](options& o, auto f, auto v) { o.policy_file = std::filesystem::path(non_empty(f, v)); }},
    {"driver", 0, arity::value, false,
     [](options& o, auto f, auto v) {
         try {
             o.driver = parse_driver(v);
         } catch (const std::invalid_argument& e) {
             throw usage_error(std::string(f) + ": " + e.what());
         }
     }},
    {"image", 0, arity::value, false, [](options& o, auto f, auto v) { o.image = std::string(non_empty(f, v)); }},
    {"partition", 0, arity::value, false,
     [](options& o, auto f, auto v) { o.slurm.partition = std::string(non_empty(f, v)); }},
    {"inner-driver", 0, arity::value, false,
     [](options& o, auto f, auto v) {
         if (v != "host" && v != "bubblewrap")
             throw usage_error(std::string(f) + ": the driver on the nodes is host or bubblewrap, not " + squote(v));
         o.slurm.inner = parse_driver(v);
     }},
    {"srun-arg", 0, arity::value, false,
     [](options& o, auto f, auto v) { o.slurm.extra_args.emplace_back(non_empty(f, v)); }},
    {"timeout", 0, arity::value, false,
     [](options& o, auto f, auto v) {
         o.timeout = limit_or_none(f, v, "seconds, e.g. 0.5 or 2; or 500ms, 1m; 0 or none for no timeout")
                         .value_or(no_timeout);
     }},
    {"idle-timeout", 0, arity::value, false,
     [](options& o, auto f, auto v) {
         o.idle_timeout = limit_or_none(f, v, "seconds, e.g. 0.5 or 10; 0 or none disables it");
     }},
    {"memory", 0, arity::value, false,
     [](options& o, auto f, auto v) {
         if (means_none(v))
             throw usage_error(std::string(f) + ": " + squote(v) +
                               " is not accepted: a command always has a memory limit (give a size, at least 1M, "
                               "e.g. 64G)");
         o.memory = mib_limit(f, v);
     }},
    {"disk", 0, arity::value, false,
     [](options& o, auto f, auto v) {
         if (means_none(v)) o.disk = std::optional<std::string>{};
         else o.disk = std::optional<std::string>(mib_limit(f, v));
     }},
    {"network", 0, arity::flag, false, [](options& o, auto, auto) { o.network = true; }},
    {"no-network", 0, arity::flag, false, [](options& o, auto, auto) { o.network = false; }},
    {"env", 'e', arity::value, false,
     [](options& o, auto f, auto v) {
         const auto eq = v.find('=');
         const auto name = v.substr(0, eq);
         if (name.empty()) throw usage_error(std::string(f) + ": expected NAME=VALUE or NAME, got " + squote(v));
         // A blocked name is checked once every flag is read (effective_policy), since
         // --unblock-env may come after it.
         if (eq == std::string_view::npos) {  // NAME alone: its value here, like docker run -e NAME
             if (const char* value = std::getenv(std::string(name).c_str())) o.env.emplace_back(name, value);
             return;
         }
         o.env.emplace_back(name, v.substr(eq + 1));
     }},
    {"unblock-env", 0, arity::value, false,
     [](options& o, auto f, auto v) {
         const auto name = non_empty(f, v);
         if (name.find('=') != std::string_view::npos)
             throw usage_error(std::string(f) + ": expected a variable's name, got " + squote(v));
         if (blocking_env_pattern(name).empty())
             throw usage_error(std::string(f) + " " + std::string(name) + ": no pattern blocks it (nothing to unblock)");
         o.unblocked_env.emplace_back(name);
     }},
    {"inherit-env", 0, arity::flag, false, [](options& o, auto, auto) { o.inherit_env = true; }},
    {"no-inherit-env", 0, arity::flag, false, [](options& o, auto, auto) { o.inherit_env = false; }},
    {"ro", 0, arity::value, false, [](options& o, auto f, auto v) { o.readable.emplace_back(non_empty(f, v)); }},
    {"rw", 0, arity::value, false, [](options& o, auto f, auto v) { o.writable.emplace_back(non_empty(f, v)); }},
    {"base-dir", 0, arity::value, false,
     [](options& o, auto f, auto v) {
         std::filesystem::path dir(non_empty(f, v));
         std::error_code ec;
         if (!std::filesystem::is_directory(dir, ec))
             throw usage_error(std::string(f) + ": " + squote(v) + " is not a directory");
         o.base_dir = std::move(dir);
     }},
    {"stdout-cap", 0, arity::value, false,
     [](options& o, auto f, auto v) { o.stdout_cap = size_at_least(f, v, execution_policy::min_output_cap); }},
    {"stderr-cap", 0, arity::value, false,
     [](options& o, auto f, auto v) { o.stderr_cap = size_at_least(f, v, execution_policy::min_output_cap); }},
    {"json", 0, arity::flag, false, [](options& o, auto, auto) { o.json = true; }},
    {"no-stdin", 0, arity::flag, false, [](options& o, auto, auto) { o.no_stdin = true; }},
    {"batch", 0, arity::value, false,
     [](options& o, auto f, auto v) { o.batch_file = std::string(non_empty(f, v)); }},
    {"jobs", 'j', arity::value, true, [](options& o, auto f, auto v) { o.jobs = parse_jobs(f, v, cpu_count()); }},
    {"warm", 0, arity::value, true,
     [](options& o, auto f, auto v) {
         unsigned n = 0;
         auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
         if (ec != std::errc() || end != v.data() + v.size() || n > max_jobs)
             throw usage_error(std::string(f) + ": expected a number of sandboxes from 0 to " +
                               std::to_string(max_jobs) + ", got " + squote(v));
         o.warm = n;
     }},
    {"output", 'o', arity::value, true,
     [](options& o, auto f, auto v) { o.output_file = std::string(non_empty(f, v)); }},
    {"progress", 0, arity::flag, true, [](options& o, auto, auto) { o.progress = true; }},
    {"no-progress", 0, arity::flag, true, [](options& o, auto, auto) { o.progress = false; }},
    {"resume", 0, arity::value, true,
     [](options& o, auto f, auto v) { o.resume_file = std::string(non_empty(f, v)); }},
    {"resume-failed", 0, arity::flag, true, [](options& o, auto, auto) { o.resume_failed = true; }},
    {"retries", 0, arity::value, true,
     [](options& o, auto f, auto v) {
         unsigned n = 0;
         auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
         if (ec != std::errc() || end != v.data() + v.size() || n > 100)
             throw usage_error(std::string(f) + ": expected a number of retries from 0 to 100, got " + squote(v));
         o.retries = n;
     }},
    {"halt", 0, arity::value, true, [](options& o, auto f, auto v) { o.halt = parse_halt(f, v); }},
    {"keep-order", 'k', arity::flag, true, [](options& o, auto, auto) { o.keep_order = true; }},
    {"lock-policy", 0, arity::flag, true, [](options& o, auto, auto) { o.lock_policy = true; }},
    {"strict", 0, arity::flag, false, [](options& o, auto, auto) { o.strict = true; }},
    {"dry-run", 0, arity::flag, false, [](options& o, auto, auto) { o.dry_run = true; }},
    {"verbose", 'v', arity::flag, false, [](options& o, auto, auto) { o.verbose = true; }},
    {"max-line", 0, arity::value, true,
     [](options& o, auto f, auto v) {
         o.max_line = size_at_least(f, v, 1);
     }},
};

const option_spec* find_long(std::string_view name)
{
    for (const auto& s : option_table)
        if (s.name == name) return &s;
    return nullptr;
}

const option_spec* find_short(char c)
{
    for (const auto& s : option_table)
        if (s.short_name != 0 && s.short_name == c) return &s;
    return nullptr;
}

std::string read_text_file(const std::filesystem::path& p, std::string_view flag)
{
    const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        throw usage_error(std::string(flag) + " " + p.string() + ": cannot read it: " + std::strerror(errno));
    try {
        auto text = read_all(fd);
        ::close(fd);
        return text;
    } catch (const std::system_error& e) {
        ::close(fd);
        throw usage_error(std::string(flag) + " " + p.string() + ": cannot read it: " + e.code().message());
    }
}

// The --policy file as JSON. A UTF-8 byte order mark before it is skipped; bad JSON is
// reported with the line and column (in bytes, from 1) where the parser stopped.
boost::json::value read_policy_file(const std::filesystem::path& file)
{
    const auto text = read_text_file(file, "--policy");
    const std::string_view body = skip_bom(text);
    // Byte for byte like policy_from_json: the policy that to_json sends to a slurm node may
    // hold paths or values that are not UTF-8.
    boost::json::parse_options opts;
    opts.allow_invalid_utf8 = true;
    boost::json::stream_parser parser({}, opts);
    boost::system::error_code ec;
    std::size_t at = parser.write(body.data(), body.size(), ec);
    if (!ec) {
        parser.finish(ec);
        at = body.size();
    }
    if (!ec) return parser.release();
    // Where it stopped: the line, and the byte in it (a byte order mark is not counted).
    const auto before = body.substr(0, at);
    const auto line = 1 + static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n'));
    const auto nl = before.rfind('\n');
    const auto column = before.size() - (nl == std::string_view::npos ? 0 : nl + 1) + 1;
    throw usage_error("--policy " + file.string() + ": not valid JSON at line " + std::to_string(line) + ", column " +
                      std::to_string(column) + " (" + ec.message() + ")");
}

}  // namespace

// ---- argv ---------------------------------------------------------------------------------

options parse_options(const std::vector<std::string_view>& args)
{
    options o;
    o.args.assign(args.begin(), args.end());
    std::string_view batch_only_flag;  // the first batch-only flag seen, for the error
    std::string_view single_only_flag;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view a = args[i];
        if (a == "--") {
            o.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
            break;
        }
        if (a.size() < 2 || a.front() != '-') {  // the command starts here
            o.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
            break;
        }

        const option_spec* spec = nullptr;
        std::string flag;
        std::optional<std::string_view> value;
        if (a.starts_with("--")) {
            const auto body = a.substr(2);
            const auto eq = body.find('=');
            flag = "--" + std::string(body.substr(0, eq));
            spec = find_long(body.substr(0, eq));
            if (!spec) throw usage_error("unknown option " + squote(flag) + " (see --help)");
            if (eq != std::string_view::npos) {
                if (spec->kind == arity::flag) throw usage_error("option " + squote(flag) + " takes no value");
                value = body.substr(eq + 1);
            }
        } else {
            flag = std::string(a.substr(0, 2));
            spec = find_short(a[1]);
            if (!spec) throw usage_error("unknown option " + squote(flag) + " (see --help)");
            if (a.size() > 2) {
                if (spec->kind == arity::flag) throw usage_error("option " + squote(flag) + " takes no value");
                value = a.substr(a[2] == '=' ? 3 : 2);  // -j4, -j=4
            }
        }
        if (spec->kind == arity::value && !value) {
            if (i + 1 >= args.size()) throw usage_error("option " + squote(flag) + " needs a value");
            value = args[++i];
        }
        if (spec->batch_only && batch_only_flag.empty()) batch_only_flag = spec->name;
        if ((spec->name == "json" || spec->name == "no-stdin" || spec->name == "dry-run") && single_only_flag.empty())
            single_only_flag = spec->name;
        spec->apply(o, flag, value.value_or(std::string_view{}));
        if (o.mode == run_mode::help || o.mode == run_mode::version) return o;
    }

    if (o.mode == run_mode::show_policy) return o;
    if (o.batch_file) {
        o.mode = run_mode::batch;
        if (!o.command.empty())
            throw usage_error("--batch runs the jobs in its file and takes no command (got " + squote(o.command.front()) +
                              ")");
        if (!single_only_flag.empty())
            throw usage_error("option '--" + std::string(single_only_flag) +
                              "' is for a single command; batch results are always JSON lines");
        if (o.resume_failed && !o.resume_file)
            throw usage_error("--resume-failed needs --resume RESULTS.jsonl (the results that say which jobs failed)");
    } else {
        if (!batch_only_flag.empty())
            throw usage_error("option '--" + std::string(batch_only_flag) + "' needs --batch");
        if (o.command.empty()) throw usage_error("no command given (usage: sandbox-run [options] -- command [args...])");
        if (o.command.front().empty()) throw usage_error("the command name is empty");
    }
    return o;
}

driver_options driver_options_for(const options& o)
{
    driver_options d;
    if (o.image) d.image = *o.image;
    d.slurm = o.slurm;
    if (!std::getenv("SANDBOX_RUN_BIN")) d.slurm.node_program = own_program_path();
    return d;
}

execution_policy effective_policy(const options& o)
{
    execution_policy base = execution_policy::defaults();
    bool file_sets_timeout = false;
    if (o.policy_file) {
        const auto jv = read_policy_file(*o.policy_file);
        file_sets_timeout = jv.is_object() && jv.get_object().contains("timeout_seconds");
        try {
            base = apply_json(base, jv);
        } catch (const std::invalid_argument& e) {
            throw usage_error("--policy " + o.policy_file->string() + ": " + e.what());
        }
    }
    // The library strips blocked names from every environment; asked for by name, dropping
    // one silently would run the command without what the user meant to give it.
    const auto unblocked = [&](const std::string& name) {
        const auto& in_file = base.env_unblocked();
        return std::find(o.unblocked_env.begin(), o.unblocked_env.end(), name) != o.unblocked_env.end() ||
               std::find(in_file.begin(), in_file.end(), name) != in_file.end();
    };
    const auto refuse_blocked = [&](const std::string& where, const std::string& name) {
        if (const auto pattern = blocking_env_pattern(name); !pattern.empty() && !unblocked(name))
            throw usage_error(where + " " + name + ": blocked by the pattern '" + std::string(pattern) +
                              "' (these names can take over programs or carry secrets; --unblock-env " + name +
                              " passes it on purpose)");
    };
    if (o.policy_file)
        for (const auto& [name, value] : base.env()) refuse_blocked("--policy " + o.policy_file->string() + ": env", name);
    for (const auto& [name, value] : o.env) refuse_blocked("--env", name);

    policy_changes c;
    c.base_dir = o.base_dir;
    c.timeout = o.timeout;
    // A batch has no timeout unless one is set (--timeout, the --policy file or a job's own
    // policy), as with GNU parallel: a batch of builds must not die at one command's 5 s.
    const bool batch = o.mode == run_mode::batch || (o.mode == run_mode::show_policy && o.batch_file);
    if (batch && !o.timeout && !file_sets_timeout) c.timeout = no_timeout;
    c.idle_timeout = o.idle_timeout;
    c.memory_limit = o.memory;
    c.disk_limit = o.disk;
    if (!o.readable.empty()) {
        auto paths = base.readable_paths();
        paths.insert(paths.end(), o.readable.begin(), o.readable.end());
        c.readable_paths = std::move(paths);
    }
    if (!o.writable.empty()) {
        auto paths = base.writable_paths();
        paths.insert(paths.end(), o.writable.begin(), o.writable.end());
        c.writable_paths = std::move(paths);
    }
    if (!o.env.empty()) {
        env_list env = base.env();
        for (const auto& [name, value] : o.env) {
            // An init-capture: clang before 16 cannot capture a structured binding.
            auto it = std::find_if(env.begin(), env.end(), [&n = name](const auto& kv) { return kv.first == n; });
            if (it != env.end()) it->second = value;
            else env.emplace_back(name, value);
        }
        c.env = std::move(env);
    }
    c.inherit_env = o.inherit_env;
    if (!o.unblocked_env.empty()) {
        auto names = base.env_unblocked();
        for (const auto& n : o.unblocked_env)
            if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
        c.env_unblocked = std::move(names);
    }
    c.network_enabled = o.network;
    c.stdout_limit_bytes = o.stdout_cap;
    c.stderr_limit_bytes = o.stderr_cap;
    const auto policy = [&] {
        try {
            return base.with(c);
        } catch (const std::invalid_argument& e) {
            throw usage_error(std::string("--env: ") + e.what());
        }
    }();
    // As bwrap --bind does: a path that cannot be seen at its place is an error here, not a
    // surprise inside the sandbox. Slurm's paths are the nodes', checked there.
    if (o.driver != sandbox::driver::slurm) {
        auto check = [&](const std::vector<std::filesystem::path>& paths, const std::vector<std::filesystem::path>& flags,
                         const char* flag, const char* key) {
            for (const auto& p : paths)
                if (auto why = mount_path_problem(p); !why.empty())
                    throw usage_error((std::find(flags.begin(), flags.end(), p) != flags.end()
                                           ? std::string(flag)
                                           : "--policy " + o.policy_file->string() + ": " + key) +
                                      " " + p.string() + ": " + why);
        };
        check(policy.writable_paths(), o.writable, "--rw", "writable_paths");
        check(policy.readable_paths(), o.readable, "--ro", "readable_paths");
    }
    return policy;
}

}  // namespace sandbox::cli
