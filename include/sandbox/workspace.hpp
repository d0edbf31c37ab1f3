// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_WORKSPACE_HPP
#define SANDBOX_WORKSPACE_HPP

#include <sandbox/detail/export.hpp>
#include <sandbox/detail/unique_fd.hpp>

#include <boost/system/error_code.hpp>
#include <boost/system/system_error.hpp>

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sandbox {

/// One entry of workspace::list_dir().
struct dir_entry {
    std::string name;     ///< the entry's name in its directory
    bool is_dir = false;  ///< false for a symlink, even one to a directory

    /// Equal when both members are.
    friend bool operator==(const dir_entry&, const dir_entry&) = default;
};

/// The result of workspace::read_file_limit().
struct limited_read {
    std::string data;        ///< at most the limit's bytes, from the start of the file
    bool truncated = false;  ///< the file continued past the limit

    /// Equal when both members are.
    friend bool operator==(const limited_read&, const limited_read&) = default;
};

/// A directory that the file operations below cannot leave.
///
/// The root is opened once (`O_PATH`) and every path is resolved by the kernel beneath that
/// descriptor with `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`. Creating, removing,
/// listing and making directories act on a parent descriptor opened that way. So `..`,
/// absolute symlinks, dangling symlinks that point outside, `/proc` magic links and a
/// symlink swapped in mid-operation cannot reach outside, while relative symlinks that stay
/// inside keep working. Requires Linux 5.6 or later; without `openat2` the constructor
/// throws (ENOSYS) rather than fall back to a check-then-open walk.
///
/// \par Paths
/// - `""` and `"."` are the root.
/// - The mount alias (see set_mount_alias()) is stripped first, component by component:
///   with `/workspace`, `/workspace` is the root and `/workspace/f` is `f`, but
///   `/workspaceX/f` is not the alias.
/// - Any other absolute path is taken relative to the root, as a command that sees the
///   workspace as `/` would see it: `/etc/passwd` means `<root>/etc/passwd`.
/// - `.` and `..` are applied lexically before the kernel sees the path. `a/../b` is `b`;
///   a `..` that climbs above the root (also `/..` or `/workspace/..`) is refused, never
///   clamped.
/// - Absolute symlinks are refused even when they point inside the root.
/// - A path containing NUL is refused.
///
/// \par Errors
/// Every failure throws boost::system::system_error (the family of sandbox::launch_error, so
/// one `catch` covers the whole library) whose message names the path as given:
/// - a lexical refusal (`..` leaves the root, removing the root) has
///   errc::permission_denied: `workspace: refused "../x": it leaves the workspace root
///   /tmp/w`;
/// - a refusal by the kernel keeps its code: EXDEV (the path resolves outside the root
///   through a symlink) or ELOOP (a magic link or a symlink loop);
/// - a NUL in the path, or reading or writing something that is neither a regular file nor
///   a directory (a FIFO, a socket, a device), has errc::invalid_argument;
/// - an OS error keeps its code and names the operation: `workspace: read_file
///   "missing.txt": No such file or directory`.
///
/// Each operation also has an overload taking a `boost::system::error_code&` last, as
/// std::filesystem does: it sets the same code (and clears it on success) instead of
/// throwing, and returns an empty value on failure. The message naming the path is what it
/// gives up.
///
/// \par Thread safety
/// Every member function except set_mount_alias() and assignment may be called
/// concurrently from any number of threads; the object holds no mutable state besides the
/// alias.
class SANDBOX_DECL workspace {
public:
    /// Opens `root`, which must exist and be a directory; otherwise throws
    /// boost::system::system_error naming it.
    explicit workspace(std::filesystem::path root);
    /// The same without throwing: empty, with `ec` set, when `root` cannot be opened.
    static std::optional<workspace> open(std::filesystem::path root, boost::system::error_code& ec);

    /// Takes over the other's root descriptor and alias.
    workspace(workspace&&) noexcept = default;
    /// Takes over the other's root descriptor and alias.
    workspace& operator=(workspace&&) noexcept = default;
    workspace(const workspace&) = delete;
    workspace& operator=(const workspace&) = delete;
    ~workspace() = default;

    /// The root as given, made absolute and lexically normal (no trailing '/').
    const std::filesystem::path& root() const noexcept { return root_; }
    /// The root with symlinks resolved: the directory the held descriptor refers to.
    const std::filesystem::path& real_root() const noexcept { return real_root_; }

    /// The whole file.
    [[nodiscard]] std::string read_file(std::string_view path) const;
    /// The same, setting `ec` instead of throwing.
    [[nodiscard]] std::string read_file(std::string_view path, boost::system::error_code& ec) const;
    /// At most `max` bytes; reads at most `max + 1` to tell whether the file continued.
    /// `max == 0` means no limit.
    [[nodiscard]] limited_read read_file_limit(std::string_view path, std::uint64_t max) const;
    /// The same, setting `ec` instead of throwing.
    [[nodiscard]] limited_read read_file_limit(std::string_view path, std::uint64_t max,
                                               boost::system::error_code& ec) const;

    /// Creates or truncates the file; `mode` (less the umask) applies on creation only.
    /// The parent directory must exist.
    void write_file(std::string_view path, std::string_view data, mode_t mode = 0644);
    /// The same, setting `ec` instead of throwing.
    void write_file(std::string_view path, std::string_view data, boost::system::error_code& ec);
    /// The same, setting `ec` instead of throwing.
    void write_file(std::string_view path, std::string_view data, mode_t mode, boost::system::error_code& ec);
    /// Appends with `O_APPEND`, creating the file if missing; never reads what is there.
    void append_file(std::string_view path, std::string_view data, mode_t mode = 0644);
    /// The same, setting `ec` instead of throwing.
    void append_file(std::string_view path, std::string_view data, boost::system::error_code& ec);
    /// The same, setting `ec` instead of throwing.
    void append_file(std::string_view path, std::string_view data, mode_t mode, boost::system::error_code& ec);

    /// The entries of a directory except `.` and `..`, sorted by name.
    [[nodiscard]] std::vector<dir_entry> list_dir(std::string_view path) const;
    /// The same, setting `ec` instead of throwing.
    [[nodiscard]] std::vector<dir_entry> list_dir(std::string_view path, boost::system::error_code& ec) const;
    /// Creates the directory and any missing parents; an existing directory is fine.
    void make_dir_all(std::string_view path, mode_t mode = 0755);
    /// The same, setting `ec` instead of throwing.
    void make_dir_all(std::string_view path, boost::system::error_code& ec);
    /// The same, setting `ec` instead of throwing.
    void make_dir_all(std::string_view path, mode_t mode, boost::system::error_code& ec);
    /// Removes one file, symlink (never its target) or empty directory. Never recursive;
    /// the root itself is refused.
    void remove(std::string_view path);
    /// The same, setting `ec` instead of throwing.
    void remove(std::string_view path, boost::system::error_code& ec);

    /// The path fenced as the operations above fence it (including the kernel check of the
    /// deepest existing ancestor), cleaned and relative to the root; "." for the root.
    /// For handing a working directory to something that runs inside the workspace.
    [[nodiscard]] std::filesystem::path rel_in_root(std::string_view path) const;
    /// The same, setting `ec` instead of throwing.
    [[nodiscard]] std::filesystem::path rel_in_root(std::string_view path, boost::system::error_code& ec) const;

    /// Declares the absolute path at which the root appears to commands, e.g. the
    /// container mount point "/workspace". One trailing '/' is trimmed; "" (or "/")
    /// disables it. Throws std::invalid_argument for a relative prefix or one with NUL.
    void set_mount_alias(std::string prefix);
    /// The alias, "" when none is set.
    const std::string& mount_alias() const noexcept { return alias_; }
    /// Where commands start, as they should name it: the alias when set, else root().
    [[nodiscard]] std::filesystem::path workdir() const;

private:
    // The cleaned root-relative path ("." for the root), or throws a refusal.
    std::string fence(std::string_view path) const;
    // openat2 beneath the root; throws on any error, naming `op` and `path`.
    detail::unique_fd open_beneath(const char* op, std::string_view path, const std::string& rel, int flags,
                                   mode_t mode = 0) const;
    void write_impl(const char* op, std::string_view path, std::string_view data, int flags, mode_t mode);

    std::filesystem::path root_;
    std::filesystem::path real_root_;
    detail::unique_fd root_fd_;
    std::string alias_;
};

}  // namespace sandbox

#endif
