// SPDX-License-Identifier: BSL-1.0
// Batch mode's files: the jobs file, the results file written whole, and the results --resume reads.
#include "batch.hpp"

#include "batch_run.hpp"
#include "io.hpp"

#include <boost/json/parse.hpp>
#include <boost/system/error_code.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <unordered_set>
#include <utility>
#include <vector>

namespace sandbox::cli {

std::string id_key(const boost::json::value& id) { return serialize_json(id); }

namespace {

// A result line's id, unless the line is no result: not one of ours, or a job a stop
// cancelled, which --resume runs again like one never started.
const boost::json::value* finished_id(const boost::json::value& v)
{
    const auto* obj = v.if_object();
    const auto* id = obj ? obj->if_contains("id") : nullptr;
    if (!id || id->is_null()) return nullptr;  // a line that could not be read: it is read again
    if (const auto* e = obj->if_contains("error"); e && e->is_string() && e->get_string().starts_with("cancelled"))
        return nullptr;
    return id;
}

// The directory a file name is in, and its last part.
std::pair<std::string, std::string> split_name(const std::string& name)
{
    const auto slash = name.rfind('/');
    if (slash == std::string::npos) return {".", name};
    return {slash == 0 ? "/" : name.substr(0, slash), name.substr(slash + 1)};
}

// Results a run killed before its end (SIGKILL, a crash) left under its temporary name
// beside FILE: each is locked while its run lives, so one we can lock has no writer. They are
// held locked until this run has taken their lines, so two resumes never both take them.
// Newest first: a leftover of a resumed run holds the lines it kept of older ones too.
struct leftover {
    std::string path;
    int fd = -1;
    std::pair<std::time_t, long> modified;
};

std::vector<leftover> find_leftovers(const std::string& name)
{
    std::vector<leftover> found;
    const auto [dir, file] = split_name(name);
    const std::string prefix = "." + file + ".";
    DIR* d = ::opendir(dir.c_str());
    if (!d) return found;
    while (const dirent* e = ::readdir(d)) {
        const std::string_view entry = e->d_name;
        if (entry.size() != prefix.size() + 6 || !entry.starts_with(prefix)) continue;  // mkostemp's XXXXXX
        const int fd = ::openat(::dirfd(d), e->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0) continue;
        struct stat st {};
        if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() ||
            ::flock(fd, LOCK_EX | LOCK_NB) != 0) {
            ::close(fd);
            continue;
        }
        found.push_back({dir + "/" + std::string(entry), fd, {st.st_mtim.tv_sec, st.st_mtim.tv_nsec}});
    }
    ::closedir(d);
    std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.modified > b.modified; });
    return found;
}

void release_leftovers(std::vector<leftover>& left, bool remove)
{
    for (auto& l : left) {
        if (remove) ::unlink(l.path.c_str());
        ::close(l.fd);
    }
    left.clear();
}

// Calls `each(line, from_leftover)` with every line of the leftovers, then of the file, whose
// lines are older than theirs. A missing file is no error when a leftover stands in for it (a
// first run killed before its end).
template <class Each>
void for_each_result_line(const std::string& name, const std::vector<leftover>& left, Each each)
{
    const auto cannot_read = [&](const std::string& which) {
        throw usage_error("--resume " + name + ": cannot read " + (which == name ? "it" : which) + ": " +
                          std::strerror(errno));
    };
    std::vector<std::string> files;
    for (const auto& l : left) files.push_back(l.path);
    if (::access(name.c_str(), F_OK) == 0 || left.empty()) files.push_back(name);
    for (const auto& file : files) {
        std::ifstream in(file);
        if (!in) cannot_read(file);
        std::string text;
        while (std::getline(in, text)) each(text, file != name);
        if (in.bad()) cannot_read(file);
    }
}

// Reads the results of an earlier run, a line at a time; a line that is not a result (a
// torn or foreign line) is passed over.
resumed_ids read_resume_file(const std::string& name, const std::vector<leftover>& left)
{
    resumed_ids ids;
    for_each_result_line(name, left, [&](const std::string& text, bool) {
        boost::system::error_code ec;
        const auto v = boost::json::parse(text, ec);
        const auto* id = ec ? nullptr : finished_id(v);
        if (!id) return;
        const auto* ok = v.get_object().if_contains("success");
        auto& succeeded = ids[id_key(*id)];
        succeeded = succeeded || (ok && ok->is_bool() && ok->get_bool());
    });
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
// one where the results were. A run killed outright leaves its results under the temporary
// name, which --resume FILE -o FILE takes in (find_leftovers()).
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
    const auto [dir, file] = split_name(*name);
    std::string temp = dir + "/." + file + ".XXXXXX";
    t.fd = ::mkostemp(temp.data(), O_CLOEXEC);
    if (t.fd < 0) fail("cannot create a file in " + dir);
    ::flock(t.fd, LOCK_EX);  // this run lives: see find_leftovers()
    ::fchmod(t.fd, mode);
    t.path = *name;
    t.temp = std::move(temp);
    return t;
}

// Whether two names are one file, also when neither exists yet.
bool same_file(const std::string& a, const std::string& b)
{
    struct stat sa {}, sb {};
    const bool ea = ::stat(a.c_str(), &sa) == 0, eb = ::stat(b.c_str(), &sb) == 0;
    if (ea || eb) return ea && eb && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    std::error_code ec;
    return std::filesystem::weakly_canonical(a, ec) == std::filesystem::weakly_canonical(b, ec) && !ec;
}

// --resume FILE -o FILE: the results of the jobs that are not run again stay in the file.
// They are copied into the new results first (with those a killed run left beside it), so
// the file holds every job's result once the batch ends, however it ends.
void keep_resumed_results(const options& o, const resumed_ids& resumed, const std::vector<leftover>& left,
                          const output_target& out)
{
    std::string kept;
    std::unordered_set<std::string> ids_kept;  // a job's newest line only
    for_each_result_line(*o.resume_file, left, [&](const std::string& text, bool from_leftover) {
        // A cancelled job's line goes, and with --resume-failed a failed one's: those jobs run
        // again. So does an unreadable line's (no id): it is read, and told about, again.
        boost::system::error_code ec;
        const auto v = boost::json::parse(text, ec);
        if (!ec && v.is_object() && v.get_object().contains("id")) {
            const auto* id = finished_id(v);
            if (!id) return;
            const auto key = id_key(*id);
            const auto it = resumed.find(key);
            if (o.resume_failed && it != resumed.end() && !it->second) return;
            if (!ids_kept.insert(key).second) return;
        } else if (from_leftover) {
            return;  // torn by the kill, or a copy of the file's own foreign line
        }
        kept += text;
        kept += '\n';
        if (kept.size() >= (1u << 20)) {
            write_all(out.fd, kept);
            kept.clear();
        }
    });
    write_all(out.fd, kept);
}

}  // namespace

int run_batch(const options& o, const execution_policy& policy)
{
    const int in = open_input(*o.batch_file);
    output_target out;
    resumed_ids resumed;
    std::vector<leftover> left;
    try {
        // What a killed run left is taken only into the same file; anywhere else it would
        // count as done while its results stay out of sight.
        const bool into_resumed = o.resume_file && o.output_file && *o.output_file != "-" &&
                                  same_file(*o.resume_file, *o.output_file);
        if (into_resumed) left = find_leftovers(*o.resume_file);
        // --resume R -o R before R exists is a first run, as with GNU parallel's --resume: a
        // loop of the same command line runs a batch to its end.
        const bool first_run = into_resumed && left.empty() && ::access(o.resume_file->c_str(), F_OK) != 0 && errno == ENOENT;
        if (o.resume_file && !first_run) resumed = read_resume_file(*o.resume_file, left);
        out = open_output(o.output_file, in, *o.batch_file);
        if (into_resumed && !first_run && !out.temp.empty()) keep_resumed_results(o, resumed, left, out);
        // Their lines are in this run's own file now, which is itself locked while it lives.
        release_leftovers(left, true);
        if (!into_resumed && o.output_file && !out.temp.empty())
            for (auto& l : find_leftovers(*o.output_file)) {
                batch_run::say("note: " + l.path + " holds the results of a run of --output " + *o.output_file +
                               " that was killed before its end; --resume " + *o.output_file + " -o " +
                               *o.output_file + " takes them");
                ::close(l.fd);
            }
    } catch (...) {
        release_leftovers(left, false);
        if (in != STDIN_FILENO) ::close(in);
        if (!out.temp.empty()) {
            ::close(out.fd);
            ::unlink(out.temp.c_str());
        }
        throw;
    }
    int status = 0;
    {
        // The results written so far take the output's name however the batch ends, once it
        // has begun; a batch refused before its first job leaves the old file as it was.
        struct commit {
            output_target& out;
            const std::optional<std::string>& name;
            int& status;
            bool begun = false;
            ~commit()
            {
                if (out.fd == STDOUT_FILENO) return;
                if (!out.temp.empty() && !begun) {
                    ::close(out.fd);
                    ::unlink(out.temp.c_str());
                    return;
                }
                // On the disk before its name says the batch is done.
                if (!out.temp.empty() && ::fsync(out.fd) != 0 && status == 0) {
                    batch_run::say(std::string("--output ") + *name + ": " + std::strerror(errno));
                    status = exit_status::some_failed;
                }
                if (::close(out.fd) != 0 && status == 0) {
                    batch_run::say(std::string("--output ") + *name + ": " + std::strerror(errno));
                    status = exit_status::some_failed;
                }
                if (out.temp.empty()) return;
                if (::rename(out.temp.c_str(), out.path.c_str()) != 0) {
                    batch_run::say("--output " + out.path + ": cannot rename " + out.temp +
                                   " to it (the results are there): " + std::strerror(errno));
                    status = exit_status::some_failed;
                    return;
                }
                if (const int d = ::open(split_name(out.path).first.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); d >= 0) {
                    ::fsync(d);  // the rename itself
                    ::close(d);
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
        on_exit.begun = true;
        status = run.run();
    }
    return status;
}

}  // namespace sandbox::cli
