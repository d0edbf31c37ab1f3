// SPDX-License-Identifier: BSL-1.0
#include <sandbox/workspace.hpp>

#include <sandbox/errors.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <system_error>
#include <type_traits>
#include <utility>

namespace sandbox {

namespace {

using detail::unique_fd;
using boost::system::error_code;

// The message as std::system_error wrote it before: what, then the code's text.
system_error failure(error_code ec, const std::string& what) { return {ec, what + ": " + ec.message()}; }
namespace sys_errc = boost::system::errc;  // not sandbox::errc, which clang would find too

error_code os_code(int err) { return {err, boost::system::system_category()}; }

// The error_code overloads: the throwing form's code, without the exception escaping. Every
// failure inside is already a system_error naming its path; keeping one code path means the
// two forms can never disagree on what is refused.
template <class F>
auto code_of(error_code& ec, F&& f) -> decltype(f())
{
    ec.clear();
    try {
        return f();
    } catch (const boost::system::system_error& e) {
        ec = e.code();
    }
    if constexpr (!std::is_void_v<decltype(f())>) return {};
}

// The kernel gives EAGAIN when a rename elsewhere might have moved a ".." step; it asks us
// to retry. Bounded so a hostile renamer cannot keep us spinning forever.
constexpr int eagain_retries = 1000;

constexpr std::size_t io_chunk = std::size_t{1} << 20;

// The path as given, in double quotes, with quotes, backslashes and non-printable bytes
// escaped so the message stays one readable line.
std::string quote_path(std::string_view p)
{
    std::string s = "\"";
    for (unsigned char c : p) {
        if (c == '"' || c == '\\') {
            s += '\\';
            s += static_cast<char>(c);
        } else if (c < 0x20 || c == 0x7f) {
            char buf[5];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            s += buf;
        } else {
            s += static_cast<char>(c);
        }
    }
    return s + '"';
}

system_error refusal(error_code ec, std::string_view path, const std::string& why)
{
    return failure(ec, "workspace: refused " + quote_path(path) + ": " + why);
}

system_error os_error(int err, const char* op, std::string_view path)
{
    return failure(os_code(err), std::string("workspace: ") + op + " " + quote_path(path));
}

// `subject` is what we were doing, e.g. `read_file "f.txt"`.
system_error no_openat2(int err, const std::string& subject)
{
    return failure(os_code(err),
            "workspace: " + subject +
                ": openat2 is unavailable (Linux 5.6 or later is needed, and a seccomp filter may block it); "
                "refusing to resolve paths without it");
}

// openat2 beneath `root_fd`; the descriptor, or -errno.
int openat2_beneath(int root_fd, const std::string& rel, int flags, mode_t mode)
{
    open_how how{};
    how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC);
    // The kernel rejects a mode without O_CREAT.
    how.mode = (flags & O_CREAT) ? (mode & 07777) : 0;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    for (int attempt = 0;; ++attempt) {
        const long fd = ::syscall(SYS_openat2, root_fd, rel.c_str(), &how, sizeof how);
        if (fd >= 0) return static_cast<int>(fd);
        const int err = errno;
        if (err == EINTR || (err == EAGAIN && attempt < eagain_retries)) continue;
        return -err;
    }
}

// The system_error for openat2's `err` on `path`.
system_error open_error(int err, const char* op, std::string_view path, const std::filesystem::path& root)
{
    switch (err) {
    case EXDEV:
        // ".." never reaches the kernel (fence() applies it), so a symlink did this.
        return refusal(os_code(err), path,
                       "it goes through a symlink that is absolute or leads outside the workspace root " +
                           root.string());
    case ELOOP:
        return refusal(os_code(err), path,
                       "it goes through a /proc magic link or a symlink loop");
    case ENOSYS:
        return no_openat2(err, op + (" " + quote_path(path)));
    default:
        return os_error(err, op, path);
    }
}

// "a/b/c" -> {"a/b", "c"}; "c" -> {".", "c"}. `rel` is cleaned and not ".".
std::pair<std::string, std::string> split_parent(const std::string& rel)
{
    const auto slash = rel.rfind('/');
    if (slash == std::string::npos) return {".", rel};
    return {rel.substr(0, slash), rel.substr(slash + 1)};
}

// The components of `p`, without empty ones and ".".
std::vector<std::string_view> components(std::string_view p)
{
    std::vector<std::string_view> out;
    while (!p.empty()) {
        const auto slash = p.find('/');
        const auto part = p.substr(0, slash);
        if (!part.empty() && part != ".") out.push_back(part);
        if (slash == std::string_view::npos) break;
        p.remove_prefix(slash + 1);
    }
    return out;
}

// Checks what the descriptor is: a directory gives EISDIR, anything else that is
// not a regular file (a FIFO could block us forever, a device could never end) is refused.
void require_regular(int fd, const char* op, std::string_view path)
{
    struct stat st {};
    if (::fstat(fd, &st) != 0) throw os_error(errno, op, path);
    if (S_ISDIR(st.st_mode)) throw os_error(EISDIR, op, path);
    if (!S_ISREG(st.st_mode))
        throw failure(sys_errc::make_error_code(sys_errc::invalid_argument), std::string("workspace: ") + op + " " + quote_path(path) + ": not a regular file");
}

// Reads until EOF or `cap` bytes, asking the kernel for never more than `cap` in total.
std::string read_up_to(int fd, std::uint64_t cap, const char* op, std::string_view path)
{
    struct stat st {};
    if (::fstat(fd, &st) != 0) throw os_error(errno, op, path);
    // The size is a hint (the file may change); +1 lets the first pass see EOF.
    const std::uint64_t hint = static_cast<std::uint64_t>(std::max<off_t>(st.st_size, 0)) + 1;
    std::string data;
    data.resize(static_cast<std::size_t>(std::min({cap, hint, std::uint64_t{256} << 20})));
    std::size_t len = 0;
    for (;;) {
        if (len == cap) break;
        if (len == data.size()) {
            const std::uint64_t grown = std::min<std::uint64_t>(cap, data.size() + std::max(data.size(), io_chunk));
            data.resize(static_cast<std::size_t>(grown));
        }
        const ssize_t n = ::read(fd, data.data() + len, data.size() - len);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw os_error(errno, op, path);
        }
        if (n == 0) break;
        len += static_cast<std::size_t>(n);
    }
    data.resize(len);
    return data;
}

}  // namespace

workspace::workspace(std::filesystem::path root)
{
    std::error_code cwd_error;
    root_ = std::filesystem::absolute(root, cwd_error).lexically_normal();
    if (cwd_error)
        throw failure(os_code(cwd_error.value()), "workspace: cannot make root " + quote_path(root.native()) + " absolute");
    if (!root_.has_filename() && root_ != root_.root_path()) root_ = root_.parent_path();

    const int fd = ::open(root_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        if (err == ENOTDIR)
            throw failure(os_code(err), "workspace: root " + quote_path(root_.native()) + " is not a directory");
        throw failure(os_code(err), "workspace: cannot open root " + quote_path(root_.native()));
    }
    root_fd_.reset(fd);

    // Fail closed now rather than on the first file operation.
    const int probe = openat2_beneath(root_fd_.get(), ".", O_PATH | O_DIRECTORY, 0);
    if (probe < 0) {
        if (probe == -ENOSYS || probe == -EPERM) throw no_openat2(-probe, "root " + quote_path(root_.native()));
        throw os_error(-probe, "open root", root_.native());
    }
    ::close(probe);

    // What the descriptor refers to, so real_root() cannot disagree with the fence.
    char buf[4096];
    const std::string link = "/proc/self/fd/" + std::to_string(root_fd_.get());
    const ssize_t n = ::readlink(link.c_str(), buf, sizeof buf);
    if (n > 0 && static_cast<std::size_t>(n) < sizeof buf && buf[0] == '/') {
        real_root_ = std::string(buf, static_cast<std::size_t>(n));
    } else {
        std::error_code ec;
        real_root_ = std::filesystem::canonical(root_, ec);
        if (ec) real_root_ = root_;
    }
}

std::string workspace::fence(std::string_view path) const
{
    if (path.find('\0') != std::string_view::npos)
        throw refusal(sys_errc::make_error_code(sys_errc::invalid_argument), path, "it contains a NUL byte");

    auto parts = components(path);
    if (!alias_.empty() && !path.empty() && path.front() == '/') {
        const auto alias = components(alias_);
        if (parts.size() >= alias.size() && std::equal(alias.begin(), alias.end(), parts.begin()))
            parts.erase(parts.begin(), parts.begin() + static_cast<std::ptrdiff_t>(alias.size()));
    }

    // Lexical: the kernel then never sees "..", so a ".." can only come from a symlink
    // target, which RESOLVE_BENEATH checks.
    std::vector<std::string_view> kept;
    for (auto part : parts) {
        if (part != "..") {
            kept.push_back(part);
        } else if (kept.empty()) {
            throw refusal(sys_errc::make_error_code(sys_errc::permission_denied), path,
                          "it leaves the workspace root " + root_.string());
        } else {
            kept.pop_back();
        }
    }
    if (kept.empty()) return ".";
    std::string rel;
    for (auto part : kept) {
        if (!rel.empty()) rel += '/';
        rel += part;
    }
    return rel;
}

detail::unique_fd workspace::open_beneath(const char* op, std::string_view path, const std::string& rel, int flags,
                                          mode_t mode) const
{
    const int fd = openat2_beneath(root_fd_.get(), rel, flags, mode);
    if (fd < 0) throw open_error(-fd, op, path, root_);
    return unique_fd(fd);
}

std::string workspace::read_file(std::string_view path) const
{
    return read_file_limit(path, 0).data;
}

limited_read workspace::read_file_limit(std::string_view path, std::uint64_t max) const
{
    const char* op = max == 0 ? "read_file" : "read_file_limit";
    const auto rel = fence(path);
    // O_NONBLOCK so that opening a FIFO cannot hang before require_regular refuses it.
    const auto fd = open_beneath(op, path, rel, O_RDONLY | O_NOCTTY | O_NONBLOCK);
    require_regular(fd.get(), op, path);
    if (max == 0) return {read_up_to(fd.get(), std::numeric_limits<std::uint64_t>::max(), op, path), false};

    const std::uint64_t cap = max == std::numeric_limits<std::uint64_t>::max() ? max : max + 1;
    limited_read r{read_up_to(fd.get(), cap, op, path), false};
    if (r.data.size() > max) {
        r.data.resize(static_cast<std::size_t>(max));
        r.truncated = true;
    }
    return r;
}

void workspace::write_impl(const char* op, std::string_view path, std::string_view data, int flags, mode_t mode)
{
    const auto rel = fence(path);
    // The kernel follows a final symlink for O_CREAT beneath the root too, so a dangling
    // link to an outside path is refused here instead of creating its target.
    const auto fd = open_beneath(op, path, rel, O_WRONLY | O_CREAT | O_NOCTTY | O_NONBLOCK | flags, mode);
    require_regular(fd.get(), op, path);
    while (!data.empty()) {
        const ssize_t n = ::write(fd.get(), data.data(), std::min(data.size(), io_chunk * 64));
        if (n < 0) {
            if (errno == EINTR) continue;
            throw os_error(errno, op, path);
        }
        data.remove_prefix(static_cast<std::size_t>(n));
    }
}

void workspace::write_file(std::string_view path, std::string_view data, mode_t mode)
{
    write_impl("write_file", path, data, O_TRUNC, mode);
}

void workspace::append_file(std::string_view path, std::string_view data, mode_t mode)
{
    write_impl("append_file", path, data, O_APPEND, mode);
}

std::vector<dir_entry> workspace::list_dir(std::string_view path) const
{
    const auto rel = fence(path);
    auto fd = open_beneath("list_dir", path, rel, O_RDONLY | O_DIRECTORY);
    DIR* dir = ::fdopendir(fd.get());
    if (!dir) throw os_error(errno, "list_dir", path);
    fd.release();  // the stream owns it now
    struct closer {
        DIR* d;
        ~closer() { ::closedir(d); }
    } close_dir{dir};

    std::vector<dir_entry> entries;
    for (;;) {
        errno = 0;
        const dirent* e = ::readdir(dir);
        if (!e) {
            if (errno != 0) throw os_error(errno, "list_dir", path);
            break;
        }
        const std::string_view name = e->d_name;
        if (name == "." || name == "..") continue;
        bool is_dir = e->d_type == DT_DIR;
        if (e->d_type == DT_UNKNOWN) {
            // Some filesystems leave the type out; ask without following a symlink.
            struct stat st {};
            is_dir = ::fstatat(::dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
        }
        entries.push_back({std::string(name), is_dir});
    }
    std::sort(entries.begin(), entries.end(), [](const dir_entry& a, const dir_entry& b) { return a.name < b.name; });
    return entries;
}

void workspace::make_dir_all(std::string_view path, mode_t mode)
{
    const auto rel = fence(path);
    if (rel == ".") return;

    // Each step is opened beneath the root again, so a component swapped for a symlink
    // between steps is still resolved by the kernel under the fence.
    auto parent = open_beneath("make_dir_all", path, ".", O_PATH | O_DIRECTORY);
    std::string prefix;
    for (auto name : components(rel)) {
        if (!prefix.empty()) prefix += '/';
        prefix += name;
        int fd = openat2_beneath(root_fd_.get(), prefix, O_PATH | O_DIRECTORY, 0);
        if (fd == -ENOENT) {
            const std::string n(name);
            int made = 0;
            if (::mkdirat(parent.get(), n.c_str(), mode & 07777) != 0) {
                made = errno;
                if (made != EEXIST) throw os_error(made, "make_dir_all", path);
            }
            fd = openat2_beneath(root_fd_.get(), prefix, O_PATH | O_DIRECTORY, 0);
            // EEXIST then ENOENT: the name is a dangling symlink that stays inside.
            if (fd == -ENOENT && made == EEXIST) fd = -EEXIST;
        }
        if (fd < 0) throw open_error(-fd, "make_dir_all", path, root_);
        parent.reset(fd);
    }
}

void workspace::remove(std::string_view path)
{
    const auto rel = fence(path);
    if (rel == ".")
        throw refusal(sys_errc::make_error_code(sys_errc::permission_denied), path,
                      "the workspace root " + root_.string() + " cannot be removed");
    const auto [parent_rel, name] = split_parent(rel);
    const auto parent = open_beneath("remove", path, parent_rel, O_PATH | O_DIRECTORY);
    // unlinkat acts on the entry itself: a symlink goes, its target stays.
    if (::unlinkat(parent.get(), name.c_str(), 0) == 0) return;
    const int err = errno;
    if (err != EISDIR && err != EPERM) throw os_error(err, "remove", path);
    if (::unlinkat(parent.get(), name.c_str(), AT_REMOVEDIR) == 0) return;
    const int dir_err = errno;
    throw os_error(dir_err == ENOTDIR ? err : dir_err, "remove", path);
}

std::filesystem::path workspace::rel_in_root(std::string_view path) const
{
    const auto rel = fence(path);
    // Check the deepest part that exists: a symlink there that leads outside is refused, a
    // missing tail is fine.
    std::string probe = rel;
    for (;;) {
        const int fd = openat2_beneath(root_fd_.get(), probe, O_PATH, 0);
        if (fd >= 0) {
            ::close(fd);
            break;
        }
        if ((fd != -ENOENT && fd != -ENOTDIR) || probe == ".") throw open_error(-fd, "rel_in_root", path, root_);
        probe = split_parent(probe).first;
    }
    return rel;
}

std::optional<workspace> workspace::open(std::filesystem::path root, error_code& ec)
{
    return code_of(ec, [&] { return std::optional<workspace>(workspace(std::move(root))); });
}

std::string workspace::read_file(std::string_view path, error_code& ec) const
{
    return code_of(ec, [&] { return read_file(path); });
}

limited_read workspace::read_file_limit(std::string_view path, std::uint64_t max, error_code& ec) const
{
    return code_of(ec, [&] { return read_file_limit(path, max); });
}

void workspace::write_file(std::string_view path, std::string_view data, error_code& ec)
{
    write_file(path, data, 0644, ec);
}

void workspace::write_file(std::string_view path, std::string_view data, mode_t mode, error_code& ec)
{
    code_of(ec, [&] { write_file(path, data, mode); });
}

void workspace::append_file(std::string_view path, std::string_view data, error_code& ec)
{
    append_file(path, data, 0644, ec);
}

void workspace::append_file(std::string_view path, std::string_view data, mode_t mode, error_code& ec)
{
    code_of(ec, [&] { append_file(path, data, mode); });
}

std::vector<dir_entry> workspace::list_dir(std::string_view path, error_code& ec) const
{
    return code_of(ec, [&] { return list_dir(path); });
}

void workspace::make_dir_all(std::string_view path, error_code& ec)
{
    make_dir_all(path, 0755, ec);
}

void workspace::make_dir_all(std::string_view path, mode_t mode, error_code& ec)
{
    code_of(ec, [&] { make_dir_all(path, mode); });
}

void workspace::remove(std::string_view path, error_code& ec)
{
    code_of(ec, [&] { remove(path); });
}

std::filesystem::path workspace::rel_in_root(std::string_view path, error_code& ec) const
{
    return code_of(ec, [&] { return rel_in_root(path); });
}

void workspace::set_mount_alias(std::string prefix)
{
    if (prefix.find('\0') != std::string::npos)
        throw std::invalid_argument("workspace: mount alias " + quote_path(prefix) + " contains a NUL byte");
    if (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
    if (!prefix.empty() && prefix.front() != '/')
        throw std::invalid_argument("workspace: mount alias " + quote_path(prefix) +
                                    " must be an absolute path (where commands see the root)");
    alias_ = std::move(prefix);
}

std::filesystem::path workspace::workdir() const
{
    if (!alias_.empty()) return alias_;
    return root_;
}

}  // namespace sandbox
