// SPDX-License-Identifier: BSL-1.0
// The workspace fence, against a model. Each input is a script: it builds a small tree in a
// scratch root (files, directories, FIFOs, and symlinks whose targets are relative or
// absolute, inside or outside, dangling or looping) and calls workspace operations on
// fuzzed paths. After every operation:
// - the sentinel directory beside the root (the target of the outside symlinks) and the
//   directory holding both are exactly as they were: nothing created, changed or removed;
// - an operation that succeeded named a path that the model, which resolves it step by step
//   as documented (lexical `..`, then relative symlinks beneath the root; absolute ones,
//   climbing above the root and loops refused), places under the root;
// - what it read is what that file holds, and what it wrote or made or removed is there.
#include "fuzz_support.hpp"

#include <sandbox/workspace.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace fs = std::filesystem;
namespace fz = sandbox::fuzz;

namespace {

// ---- the scratch tree -----------------------------------------------------------------------

struct snapshot_entry {
    std::string rel;
    mode_t mode;
    ino_t ino;
    off_t size;
    timespec mtime;
    timespec ctime;
    std::string content;  // regular files
    std::string target;   // symlinks
};

bool operator==(const timespec& a, const timespec& b) { return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec; }
bool operator==(const snapshot_entry& a, const snapshot_entry& b)
{
    return a.rel == b.rel && a.mode == b.mode && a.ino == b.ino && a.size == b.size && a.mtime == b.mtime &&
           a.ctime == b.ctime && a.content == b.content && a.target == b.target;
}

std::string read_path(const std::string& p)
{
    const int fd = ::open(p.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return {};
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    return out;
}

// Every entry under `dir`, depth first, sorted, without following symlinks; the directory
// itself too, so that a file created and removed again still shows in its times. `skip` is
// left out at the top.
void snapshot(const std::string& dir, const std::string& rel, std::vector<snapshot_entry>& out,
              std::string_view skip = {})
{
    struct stat st {};
    const std::string path = rel.empty() ? dir : dir + "/" + rel;
    if (::lstat(path.c_str(), &st) != 0) return;
    snapshot_entry e{rel, st.st_mode, st.st_ino, st.st_size, st.st_mtim, st.st_ctim, {}, {}};
    if (S_ISREG(st.st_mode)) e.content = read_path(path);
    if (S_ISLNK(st.st_mode)) {
        char buf[4096];
        const auto n = ::readlink(path.c_str(), buf, sizeof buf);
        if (n > 0) e.target.assign(buf, static_cast<std::size_t>(n));
    }
    out.push_back(std::move(e));
    if (!S_ISDIR(st.st_mode)) return;
    std::vector<std::string> names;
    if (DIR* d = ::opendir(path.c_str())) {
        while (const dirent* de = ::readdir(d)) {
            const std::string_view n = de->d_name;
            if (n != "." && n != "..") names.emplace_back(n);
        }
        ::closedir(d);
    }
    std::sort(names.begin(), names.end());
    for (const auto& n : names)
        if (!rel.empty()) snapshot(dir, rel + "/" + n, out);
        else if (n != skip) snapshot(dir, n, out);
}

int count_fds()
{
    int n = 0;
    if (DIR* d = ::opendir("/proc/self/fd")) {
        while (::readdir(d)) ++n;
        ::closedir(d);
    }
    return n;
}

struct scratch {
    std::string base;     // holds only root/ and outside/
    std::string root;     // the workspace root
    std::string outside;  // the sentinel: never reached through the workspace
    std::unique_ptr<sandbox::workspace> ws;
    std::vector<snapshot_entry> sentinel;  // base, without root's subtree
    std::vector<std::string> sentinel_texts;

    scratch()
    {
        std::string templ = (fs::temp_directory_path() / "sandbox-fuzz-ws.XXXXXX").string();
        if (!::mkdtemp(templ.data())) fz::fail("mkdtemp failed");
        base = fs::canonical(templ).string();  // the model compares real paths
        root = base + "/root";
        outside = base + "/outside";
        fs::create_directories(root);
        fs::create_directories(outside + "/sub");
        fs::create_directories(outside + "/empty");
        put(outside + "/secret", "SENTINEL:outside/secret\n");
        put(outside + "/sub/deep", "SENTINEL:outside/sub/deep\n");
        put(outside + "/a", "SENTINEL:outside/a\n");
        ::symlinkat("secret", AT_FDCWD, (outside + "/link").c_str());
        sentinel_texts = {"SENTINEL:outside/secret\n", "SENTINEL:outside/sub/deep\n", "SENTINEL:outside/a\n"};
        ws = std::make_unique<sandbox::workspace>(root);
        sentinel = take_sentinel();
    }
    ~scratch()
    {
        ws.reset();
        std::error_code ec;
        fs::remove_all(base, ec);
    }

    static void put(const std::string& path, std::string_view text)
    {
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || ::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size()))
            fz::fail("cannot write " + path);
        ::close(fd);
    }

    std::vector<snapshot_entry> take_sentinel() const
    {
        std::vector<snapshot_entry> s;
        // The root's subtree changes on purpose; base's own times do not (root stays).
        snapshot(base, "", s, "root");
        return s;
    }

    // Empties the root (never following a symlink), keeping the directory and its descriptor.
    void clear_root() const
    {
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(root, ec)) {
            std::error_code rec;
            fs::remove_all(e.path(), rec);
        }
    }
};

scratch& state()
{
    static scratch s;
    return s;
}

// ---- the model ------------------------------------------------------------------------------

std::vector<std::string> split(std::string_view p)
{
    std::vector<std::string> out;
    while (!p.empty()) {
        const auto slash = p.find('/');
        const auto part = p.substr(0, slash);
        if (!part.empty() && part != ".") out.emplace_back(part);
        if (slash == std::string_view::npos) break;
        p.remove_prefix(slash + 1);
    }
    return out;
}

std::string join(const std::vector<std::string>& parts)
{
    std::string s;
    for (const auto& p : parts) {
        if (!s.empty()) s += '/';
        s += p;
    }
    return s;
}

// The documented lexical rules: nullopt when the path is refused before any lookup.
std::optional<std::string> model_fence(std::string_view path, const std::string& alias)
{
    if (path.find('\0') != std::string_view::npos) return std::nullopt;
    auto parts = split(path);
    if (!alias.empty() && !path.empty() && path.front() == '/') {
        const auto a = split(alias);
        if (parts.size() >= a.size() && std::equal(a.begin(), a.end(), parts.begin()))
            parts.erase(parts.begin(), parts.begin() + static_cast<std::ptrdiff_t>(a.size()));
    }
    std::vector<std::string> kept;
    for (auto& p : parts) {
        if (p != "..") kept.push_back(std::move(p));
        else if (kept.empty()) return std::nullopt;
        else kept.pop_back();
    }
    return kept.empty() ? std::string(".") : join(kept);
}

enum class rk { ok, missing, escapes, absolute, loop, notdir, noent };

struct resolution {
    rk kind;
    std::string rel;  // for ok and missing: the symlink-free path under the root ("" = root)
};

// Walks `rel` from the root as openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS) should.
resolution resolve(const std::string& root, const std::string& rel, bool follow_last)
{
    std::vector<std::string> cur;
    std::deque<std::string> todo;
    for (auto& p : split(rel)) todo.push_back(std::move(p));
    int links = 0;
    while (!todo.empty()) {
        std::string c = std::move(todo.front());
        todo.pop_front();
        if (c == "..") {
            if (cur.empty()) return {rk::escapes, {}};
            cur.pop_back();
            continue;
        }
        const bool last = todo.empty();
        auto next = cur;
        next.push_back(c);
        const std::string path = root + "/" + join(next);
        struct stat st {};
        if (::lstat(path.c_str(), &st) != 0) {
            if (errno == ENOENT) return last ? resolution{rk::missing, join(next)} : resolution{rk::noent, {}};
            return {rk::notdir, {}};
        }
        if (S_ISLNK(st.st_mode) && (!last || follow_last)) {
            if (++links > 40) return {rk::loop, {}};
            char buf[4096];
            const auto n = ::readlink(path.c_str(), buf, sizeof buf);
            if (n <= 0) return {rk::noent, {}};
            const std::string_view target(buf, static_cast<std::size_t>(n));
            if (target.front() == '/') return {rk::absolute, {}};
            auto parts = split(target);
            todo.insert(todo.begin(), parts.begin(), parts.end());
            continue;
        }
        if (!last && !S_ISDIR(st.st_mode)) return {rk::notdir, {}};
        cur = std::move(next);
    }
    return {rk::ok, join(cur)};
}

std::string under(const std::string& root, const std::string& rel) { return rel.empty() ? root : root + "/" + rel; }

// ---- the script -----------------------------------------------------------------------------

// Pieces the fuzzer combines into paths; a byte below 0x80 is itself.
constexpr std::string_view path_tokens[] = {
    "a", "b", "c/", "d/", "../", "./", "/", "L", "M", "up", "abs", "loop", "dang", "fifo", "..", ".",
    "/workspace", "/workspace/", "/w/s/", "outside", "secret", "sub/", "deep", "link", "x", "//",
};
// Entry names of the tree the script builds (never "." or "..").
constexpr std::string_view names[] = {"a", "b", "c", "d", "L", "M", "up", "abs", "loop", "dang", "fifo", "x"};
// Components of relative symlink targets.
constexpr std::string_view target_tokens[] = {"..", ".", "a", "b", "c", "d", "L", "M", "up", "loop",
                                              "dang", "x", "outside", "secret", "sub", "deep", "root", "nope"};
constexpr std::string_view aliases[] = {"", "/workspace", "/w/s/"};

std::string fuzz_path(fz::reader& r)
{
    std::string p;
    const auto n = r.pick(10);
    for (std::size_t i = 0; i < n; ++i) {
        const auto b = r.byte();
        if (b >= 0x80) p += path_tokens[(b - 0x80) % std::size(path_tokens)];
        else p += static_cast<char>(b);
    }
    return p;
}

// A path of entry names, 1 to 3 deep: where the script itself creates something.
std::vector<std::string> tree_path(fz::reader& r)
{
    std::vector<std::string> out;
    const auto n = 1 + r.pick(3);
    for (std::size_t i = 0; i < n; ++i) out.emplace_back(names[r.pick(std::size(names))]);
    return out;
}

std::string symlink_target(fz::reader& r, const scratch& s)
{
    switch (r.pick(12)) {
    case 0: return s.outside;
    case 1: return s.outside + "/secret";
    case 2: return s.outside + "/created-through-the-workspace";
    case 3: return s.outside + "/sub";
    case 4: return s.root + "/a";
    case 5: return "../outside/secret";
    case 6: return "../outside";
    case 7: return "/proc/self/root" + s.outside;
    case 8: return "/proc/self/cwd";
    default: {
        std::string t;
        const auto n = 1 + r.pick(5);
        for (std::size_t i = 0; i < n; ++i) {
            if (i) t += '/';
            t += target_tokens[r.pick(std::size(target_tokens))];
        }
        return t;
    }
    }
}

// Creates the parents of `parts` under the root without following any symlink; the
// descriptor of the last one, or -1.
int make_parents(const scratch& s, const std::vector<std::string>& parts)
{
    int fd = ::open(s.root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    for (std::size_t i = 0; i + 1 < parts.size() && fd >= 0; ++i) {
        ::mkdirat(fd, parts[i].c_str(), 0755);
        const int next = ::openat(fd, parts[i].c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        ::close(fd);
        fd = next;
    }
    return fd;
}

void build_step(fz::reader& r, const scratch& s, unsigned kind)
{
    const auto parts = tree_path(r);
    const int dir = make_parents(s, parts);
    if (dir < 0) return;
    const auto& name = parts.back();
    switch (kind) {
    case 0: {
        const auto text = r.bytes(r.pick(24));
        const int fd = ::openat(dir, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0) {
            if (::write(fd, text.data(), text.size()) < 0) {
            }
            ::close(fd);
        }
        break;
    }
    case 1: ::mkdirat(dir, name.c_str(), 0755); break;
    case 2: ::mkfifoat(dir, name.c_str(), 0644); break;
    default: ::symlinkat(symlink_target(r, s).c_str(), dir, name.c_str()); break;
    }
    ::close(dir);
}

enum class op { read, read_limit, write, append, list, mkdir, remove, rel_in_root };

struct context {
    scratch& s;
    const std::string& alias;
    const std::string& path;
    std::string_view input;

    [[noreturn]] void fail(const std::string& what) const { fz::fail(what + " (path \"" + path + "\")", input); }
};

// The model's verdict on a path the workspace accepted.
resolution accepted(const context& c, const std::string& rel, bool follow_last)
{
    const auto res = resolve(c.s.root, rel == "." ? "" : rel, follow_last);
    switch (res.kind) {
    case rk::escapes: c.fail("accepted a path that climbs above the root");
    case rk::absolute: c.fail("accepted a path through an absolute symlink");
    case rk::loop: c.fail("accepted a path through a symlink loop");
    case rk::notdir: c.fail("accepted a path through a non-directory");
    case rk::noent: c.fail("accepted a path through a missing directory");
    default: return res;
    }
}

void no_sentinel_text(const context& c, std::string_view data)
{
    for (const auto& t : c.s.sentinel_texts)
        if (data.find(t) != std::string_view::npos) c.fail("read sentinel content through the workspace");
}

void run_op(fz::reader& r, const context& c, op o)
{
    auto& ws = *c.s.ws;
    const auto rel = model_fence(c.path, c.alias);
    const auto data = r.bytes(r.pick(16));
    const auto limit = r.pick(24);
    const auto mode = static_cast<mode_t>(0600 | (r.byte() & 0177));
    try {
        switch (o) {
        case op::read:
        case op::read_limit: {
            const auto got = o == op::read ? sandbox::limited_read{ws.read_file(c.path), false}
                                           : ws.read_file_limit(c.path, limit);
            if (!rel) c.fail("read a path the lexical rules refuse");
            const auto res = accepted(c, *rel, true);
            if (res.kind != rk::ok) c.fail("read a file that is not there");
            auto want = read_path(under(c.s.root, res.rel));
            bool truncated = false;
            if (o == op::read_limit && limit != 0 && want.size() > limit) {
                want.resize(limit);
                truncated = true;
            }
            if (got.data != want || got.truncated != truncated) c.fail("read other bytes than the file holds");
            no_sentinel_text(c, got.data);
            break;
        }
        case op::write:
        case op::append: {
            std::optional<std::string> before;
            if (rel) {
                const auto res = resolve(c.s.root, *rel == "." ? "" : *rel, true);
                if (res.kind == rk::ok) before = read_path(under(c.s.root, res.rel));
            }
            if (o == op::write) ws.write_file(c.path, data, mode);
            else ws.append_file(c.path, data, mode);
            if (!rel) c.fail("wrote a path the lexical rules refuse");
            const auto res = accepted(c, *rel, true);
            if (res.kind != rk::ok) c.fail("wrote, but no file is there");
            const auto now = read_path(under(c.s.root, res.rel));
            const auto want = o == op::write ? std::string(data) : before.value_or("") + std::string(data);
            if (now != want) c.fail("the file does not hold what was written");
            break;
        }
        case op::list: {
            const auto entries = ws.list_dir(c.path);
            if (!rel) c.fail("listed a path the lexical rules refuse");
            const auto res = accepted(c, *rel, true);
            std::vector<snapshot_entry> snap;
            snapshot(under(c.s.root, res.rel), "", snap);
            if (snap.empty() || !S_ISDIR(snap.front().mode)) c.fail("listed something that is not a directory");
            std::vector<std::string> want;
            for (const auto& e : snap)
                if (!e.rel.empty() && e.rel.find('/') == std::string::npos) want.push_back(e.rel);
            std::vector<std::string> got;
            for (const auto& e : entries) got.push_back(e.name);
            if (got != want) c.fail("the listing differs from the directory");
            break;
        }
        case op::mkdir: {
            ws.make_dir_all(c.path, mode);
            if (!rel) c.fail("made a directory at a path the lexical rules refuse");
            const auto res = accepted(c, *rel, true);
            struct stat st {};
            if (res.kind != rk::ok || ::stat(under(c.s.root, res.rel).c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
                c.fail("make_dir_all succeeded, but no directory is there");
            break;
        }
        case op::remove: {
            ws.remove(c.path);
            if (!rel || *rel == ".") c.fail("removed the root or a path the lexical rules refuse");
            const auto slash = rel->rfind('/');
            const auto parent = slash == std::string::npos ? std::string() : rel->substr(0, slash);
            const auto name = slash == std::string::npos ? *rel : rel->substr(slash + 1);
            const auto res = accepted(c, parent, true);
            if (res.kind != rk::ok) c.fail("removed from a directory that is not there");
            struct stat st {};
            if (::lstat((under(c.s.root, res.rel) + "/" + name).c_str(), &st) == 0) c.fail("removed, but still there");
            break;
        }
        case op::rel_in_root: {
            const auto got = ws.rel_in_root(c.path);
            if (!rel) c.fail("rel_in_root accepted a path the lexical rules refuse");
            if (got.string() != *rel) c.fail("rel_in_root gave " + got.string() + ", not " + *rel);
            // Only the deepest existing part is checked: missing or non-directory tails are fine.
            const auto res = resolve(c.s.root, *rel == "." ? "" : *rel, true);
            if (res.kind == rk::escapes || res.kind == rk::absolute || res.kind == rk::loop)
                c.fail("rel_in_root accepted a path that leaves the root");
            break;
        }
        }
    } catch (const boost::system::system_error&) {
        // Refusals and OS errors are results; only what they might have touched is checked.
    }
}

void check_sentinel(const context& c)
{
    if (c.s.take_sentinel() != c.s.sentinel) c.fail("the outside of the root changed");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    auto& s = state();
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    fz::reader r(data, size);
    const int fds = count_fds();
    s.clear_root();
    const std::string alias(aliases[r.pick(std::size(aliases))]);
    s.ws->set_mount_alias(alias);
    const std::string trimmed_alias = alias.ends_with('/') ? alias.substr(0, alias.size() - 1) : alias;

    for (int steps = 0; steps < 48 && !r.empty(); ++steps) {
        const auto b = r.byte();
        if (b < 0x40) {
            build_step(r, s, b % 4);
            continue;
        }
        const auto path = fuzz_path(r);
        const context c{s, trimmed_alias, path, input};
        run_op(r, c, static_cast<op>(b % 8));
        check_sentinel(c);
    }
    const std::string none;
    check_sentinel(context{s, trimmed_alias, none, input});

    // No descriptor outlives the operations.
    if (const int now = count_fds(); now != fds) fz::fail("descriptors leaked: " + std::to_string(now - fds), input);
    return 0;
}
