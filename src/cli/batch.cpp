// SPDX-License-Identifier: BSL-1.0
// Batch mode's files: the jobs file, the results file written whole, and the results --resume reads.
#include "batch.hpp"

#include "batch_run.hpp"
#include "io.hpp"

#include <boost/json/parse.hpp>
#include <boost/system/error_code.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace sandbox::cli {

std::string id_key(const boost::json::value& id) { return serialize_json(id); }

namespace {

// A result line's id, unless the line is no result: not one of ours, or a job a stop
// cancelled, which --resume runs again like one never started.
const boost::json::value* finished_id(const boost::json::value& v)
{
    const auto* obj = v.if_object();
    const auto* id = obj ? obj->if_contains("id") : nullptr;
    if (!id) return nullptr;
    if (const auto* e = obj->if_contains("error"); e && e->is_string() && e->get_string().starts_with("cancelled"))
        return nullptr;
    return id;
}

// Reads the results of an earlier run, a line at a time; a line that is not a result (a
// torn or foreign line) is passed over.
resumed_ids read_resume_file(const std::string& name)
{
    std::ifstream in(name);
    if (!in) throw usage_error("--resume " + name + ": cannot read it: " + std::strerror(errno));
    resumed_ids ids;
    std::string text;
    while (std::getline(in, text)) {
        boost::system::error_code ec;
        const auto v = boost::json::parse(text, ec);
        const auto* id = ec ? nullptr : finished_id(v);
        if (!id) continue;
        const auto* ok = v.get_object().if_contains("success");
        auto& succeeded = ids[id_key(*id)];
        succeeded = succeeded || (ok && ok->is_bool() && ok->get_bool());
    }
    if (in.bad()) throw usage_error("--resume " + name + ": cannot read it: " + std::strerror(errno));
    return ids;
}

int open_input(const std::string& name)
{
    if (name == "-") return STDIN_FILENO;
    const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw usage_error("--batch " + name + ": cannot open it: " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        ::close(fd);
        throw usage_error("--batch " + name + ": is a directory");
    }
    return fd;
}

// Where the results go: stdout, or a device or pipe as it is, or a regular file written
// under a temporary name beside it and renamed into place when the batch ends (also after
// Ctrl-C): until then the old file stays whole, and a killed run never leaves a half-written
// one where the results were.
struct output_target {
    int fd = STDOUT_FILENO;
    std::string path;  // the name asked for, when written under `temp`
    std::string temp;
};

output_target open_output(const std::optional<std::string>& name, int input_fd, const std::string& input_name)
{
    output_target t;
    if (!name || *name == "-") return t;
    const auto fail = [&](const std::string& what) {
        throw usage_error("--output " + *name + ": " + what + ": " + std::strerror(errno));
    };
    mode_t mode = 0666 & ~[] {
        const mode_t m = ::umask(0);
        ::umask(m);
        return m;
    }();
    struct stat out {};
    if (::stat(name->c_str(), &out) == 0) {
        struct stat in {};
        // The same file, through any name or link: writing the results would destroy the jobs.
        if (::fstat(input_fd, &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino)
            throw usage_error("--output " + *name + " is the job file (--batch " + input_name +
                              "): the results would overwrite the jobs; write them to another file");
        if (!S_ISREG(out.st_mode)) {
            t.fd = ::open(name->c_str(), O_WRONLY | O_CLOEXEC);
            if (t.fd < 0) fail("cannot open it");
            return t;
        }
        mode = out.st_mode & 07777;
    }
    const auto slash = name->rfind('/');
    const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : name->substr(0, slash);
    std::string temp = dir + "/." + name->substr(slash == std::string::npos ? 0 : slash + 1) + ".XXXXXX";
    t.fd = ::mkostemp(temp.data(), O_CLOEXEC);
    if (t.fd < 0) fail("cannot create a file in " + dir);
    ::fchmod(t.fd, mode);
    t.path = *name;
    t.temp = std::move(temp);
    return t;
}

// --resume FILE -o FILE: the results of the jobs that are not run again stay in the file.
// They are copied into the new results first, so the file holds every job's result once the
// batch ends, however it ends.
void keep_resumed_results(const options& o, const resumed_ids& resumed, const output_target& out)
{
    struct stat r {}, t {};
    if (::stat(o.resume_file->c_str(), &r) != 0 || ::stat(out.path.c_str(), &t) != 0 || r.st_dev != t.st_dev ||
        r.st_ino != t.st_ino)
        return;
    std::ifstream in(*o.resume_file);
    std::string text, kept;
    while (std::getline(in, text)) {
        // A cancelled job's line goes, and with --resume-failed a failed one's: those jobs run again.
        boost::system::error_code ec;
        const auto v = boost::json::parse(text, ec);
        if (!ec && v.is_object() && v.get_object().contains("id")) {
            const auto* id = finished_id(v);
            if (!id) continue;
            const auto it = resumed.find(id_key(*id));
            if (o.resume_failed && it != resumed.end() && !it->second) continue;
        }
        kept += text;
        kept += '\n';
        if (kept.size() >= (1u << 20)) {
            write_all(out.fd, kept);
            kept.clear();
        }
    }
    if (in.bad()) throw usage_error("--resume " + *o.resume_file + ": cannot read it: " + std::strerror(errno));
    write_all(out.fd, kept);
}

}  // namespace

int run_batch(const options& o, const execution_policy& policy)
{
    const int in = open_input(*o.batch_file);
    output_target out;
    resumed_ids resumed;
    try {
        if (o.resume_file) resumed = read_resume_file(*o.resume_file);
        out = open_output(o.output_file, in, *o.batch_file);
        if (o.resume_file && !out.temp.empty()) keep_resumed_results(o, resumed, out);
    } catch (...) {
        if (in != STDIN_FILENO) ::close(in);
        if (!out.temp.empty()) {
            ::close(out.fd);
            ::unlink(out.temp.c_str());
        }
        throw;
    }
    int status = 0;
    {
        // The results written so far take the output's name however the batch ends.
        struct commit {
            output_target& out;
            const std::optional<std::string>& name;
            int& status;
            ~commit()
            {
                if (out.fd == STDOUT_FILENO) return;
                if (::close(out.fd) != 0 && status == 0) {
                    batch_run::say(std::string("--output ") + *name + ": " + std::strerror(errno));
                    status = exit_status::some_failed;
                }
                if (!out.temp.empty() && ::rename(out.temp.c_str(), out.path.c_str()) != 0) {
                    batch_run::say("--output " + out.path + ": cannot rename " + out.temp +
                                   " to it (the results are there): " + std::strerror(errno));
                    status = exit_status::some_failed;
                }
            }
        } on_exit{out, o.output_file, status};
        batch_run run(o, policy, in, in != STDIN_FILENO, out.fd, std::move(resumed));
        for (const auto& what : run.unenforced()) {
            if (o.strict) {
                batch_run::say(what + " (" + make_error_code(errc::limit_not_enforced).message() + "; --strict)");
                status = exit_status::sandbox_failed;
                return status;
            }
            batch_run::say("warning: " + what);
        }
        status = run.run();
    }
    return status;
}

}  // namespace sandbox::cli
