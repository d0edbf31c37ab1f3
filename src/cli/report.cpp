// SPDX-License-Identifier: BSL-1.0
// `report` itself: its flags, its input, and an output file that holds a whole page or none.
#include "report.hpp"

#include "io.hpp"
#include "options.hpp"
#include "report_data.hpp"
#include "report_page.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

namespace sandbox::cli {

void say(const std::string& s) noexcept
{
    try {
        write_all(STDERR_FILENO, std::string(program_name) + " report: " + s + "\n");
    } catch (...) {
    }
}

namespace {

struct report_options {
    std::string input;
    std::optional<std::string> output;
    std::optional<std::string> title;
    bool help = false;
};

report_options parse_report_options(const std::vector<std::string_view>& args)
{
    report_options o;
    std::vector<std::string> inputs;
    bool only_names = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view a = args[i];
        const auto value = [&](std::string_view flag) {
            if (i + 1 >= args.size()) throw usage_error(std::string(flag) + " needs a value");
            return std::string(args[++i]);
        };
        if (only_names || a == "-" || !a.starts_with("-")) inputs.emplace_back(a);
        else if (a == "--") only_names = true;
        else if (a == "-h" || a == "--help") o.help = true;
        else if (a == "-o" || a == "--output") o.output = value(a);
        else if (a.starts_with("--output=")) o.output = std::string(a.substr(9));
        else if (a.starts_with("-o")) o.output = std::string(a.substr(2));
        else if (a == "--title") o.title = value(a);
        else if (a.starts_with("--title=")) o.title = std::string(a.substr(8));
        else throw usage_error("unknown option " + std::string(a) + " (see sandbox-run report --help)");
    }
    if (o.help) return o;
    if (inputs.empty()) throw usage_error("no results file given (sandbox-run report RESULTS.jsonl [-o FILE])");
    if (inputs.size() > 1) throw usage_error("one results file only, not " + inputs[1] + " too");
    if (o.output && o.output->empty()) throw usage_error("--output needs a file name");
    o.input = inputs.front();
    return o;
}

int open_input(const std::string& name)
{
    if (name == "-") return STDIN_FILENO;
    const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw usage_error(name + ": cannot open it: " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        ::close(fd);
        throw usage_error(name + ": is a directory");
    }
    return fd;
}

// A regular file is written under a temporary name beside it and renamed when complete, so
// the name never holds half a report; anything else (stdout, a device, a pipe) as it is.
class output_file {
public:
    output_file(const std::optional<std::string>& name, int input_fd)
    {
        if (!name || *name == "-") return;
        const auto fail = [&](const std::string& what) {
            throw usage_error("--output " + *name + ": " + what + ": " + std::strerror(errno));
        };
        const mode_t mask = ::umask(0);
        ::umask(mask);
        mode_t mode = 0666 & ~mask;
        struct stat st {};
        if (::stat(name->c_str(), &st) == 0) {
            struct stat in {};
            // The results would be replaced by the page that describes them.
            if (::fstat(input_fd, &in) == 0 && S_ISREG(in.st_mode) && in.st_dev == st.st_dev && in.st_ino == st.st_ino)
                throw usage_error("--output " + *name + " is the results file: the page would replace the results");
            if (S_ISDIR(st.st_mode)) {
                errno = EISDIR;
                fail("cannot write it");
            }
            if (!S_ISREG(st.st_mode)) {
                fd_ = ::open(name->c_str(), O_WRONLY | O_CLOEXEC);
                if (fd_ < 0) fail("cannot open it");
                return;
            }
            mode = st.st_mode & 07777;
        }
        const auto slash = name->rfind('/');
        const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : name->substr(0, slash);
        temp_ = dir + "/." + name->substr(slash == std::string::npos ? 0 : slash + 1) + ".XXXXXX";
        fd_ = ::mkostemp(temp_.data(), O_CLOEXEC);
        if (fd_ < 0) {
            temp_.clear();
            fail("cannot create a file in " + dir);
        }
        ::fchmod(fd_, mode);
        path_ = *name;
    }
    ~output_file()
    {
        if (fd_ != STDOUT_FILENO && fd_ >= 0) ::close(fd_);
        if (!temp_.empty()) ::unlink(temp_.c_str());
    }
    output_file(const output_file&) = delete;
    output_file& operator=(const output_file&) = delete;

    /// Writes everything and puts it in place. Throws std::runtime_error.
    void commit(std::string_view data)
    {
        write_all(fd_, data);
        if (fd_ == STDOUT_FILENO) return;
        const int fd = fd_;
        fd_ = -1;
        if (::close(fd) != 0) throw std::runtime_error(std::strerror(errno));
        if (temp_.empty()) return;
        if (::rename(temp_.c_str(), path_.c_str()) != 0)
            throw std::runtime_error("cannot rename " + temp_ + " to it: " + std::strerror(errno));
        temp_.clear();
    }

private:
    int fd_ = STDOUT_FILENO;
    std::string path_;
    std::string temp_;  // non-empty: still to be renamed or removed
};

}  // namespace

std::string report_usage_text()
{
    return R"(Usage: sandbox-run report RESULTS.jsonl [-o REPORT.html] [--title TEXT]

Makes one self-contained HTML page from the result lines of sandbox-run --batch: a summary
(outcomes, wall time, mean, median and p95 duration, jobs/s, outliers), the failures
grouped by how they ended (exit status, signal, timeout or error), the largest group first,
with their error or last line of stderr, a timeline of the jobs with one row per slot (as
many rows as jobs ran at once), a histogram of the durations, and the slowest jobs with
the outliers marked. The page has inline CSS and SVG only: no script, nothing loaded from
anywhere.

  RESULTS.jsonl            the results ("-" for stdin)
  -o, --output FILE        write the page to FILE (default, or "-": stdout); a file is
                           written under a temporary name and renamed when complete
  --title TEXT             the page's title
  -h, --help               show this help and exit

The timeline needs "started_at" and "ended_at" in the results; without them the jobs are
shown by duration only. Lines that are not result lines are skipped with a warning on
stderr and counted in the report.
Exit status: 0 the report was written, 1 it could not be written, 2 bad usage or an
input that cannot be read.
)";
}

namespace {

int report(const std::vector<std::string_view>& args)
{
    const auto o = parse_report_options(args);
    if (o.help) {
        write_all(STDOUT_FILENO, report_usage_text());
        return exit_status::ok;
    }
    const int in = open_input(o.input);
    struct closer {
        int fd;
        ~closer()
        {
            if (fd != STDIN_FILENO) ::close(fd);
        }
    } close_in{in};
    output_file out(o.output, in);
    const auto data = read_results(in, o.input);
    const std::string shown_name = o.input == "-" ? "stdin" : o.input;
    const auto html = make_page(data, shown_name, o.title.value_or("sandbox-run report: " + shown_name));
    try {
        out.commit(html);
    } catch (const std::exception& e) {
        say("--output " + o.output.value_or("-") + ": " + e.what());
        return exit_status::some_failed;
    }
    return exit_status::ok;
}

}  // namespace

int run_report(const std::vector<std::string_view>& args)
{
    try {
        return report(args);
    } catch (const usage_error& e) {
        say(e.what());
        return exit_status::usage;
    }
}

}  // namespace sandbox::cli
