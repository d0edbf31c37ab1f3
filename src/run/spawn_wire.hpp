// SPDX-License-Identifier: BSL-1.0
// The messages between the library and its spawn helper (src/helpers/spawn_helper.cpp),
// written and read by both sides from this one header.
//
// A launch request is one SOCK_SEQPACKET message on the helper's control socket: a header,
// the body (in the message, or in a memory file when it is large), and descriptors by
// SCM_RIGHTS: first the request's reply socket, then the body's memory file if there is one,
// then those the body refers to by index. The helper answers on the reply socket with one
// `reply` (the child's pid, or why there is none) and closes its end; the child either
// executes, which closes its copy of the socket, or writes one `reply` saying which step
// failed and exits 127. The two may arrive in either order: the library reads until end of
// file, which comes once both have closed the socket.
#ifndef SANDBOX_SRC_RUN_SPAWN_WIRE_HPP
#define SANDBOX_SRC_RUN_SPAWN_WIRE_HPP

#include "run/confinement.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace sandbox::detail::wire {

inline constexpr std::uint32_t magic = 0x53425832;  // "SBX2"
/// A body up to this size travels in the message itself.
inline constexpr std::size_t inline_body_max = 48 * 1024;
/// At most this many descriptors in one request (the kernel's SCM_MAX_FD is 253).
inline constexpr std::size_t max_fds = 200;

struct header {
    std::uint32_t magic = wire::magic;
    std::uint32_t body_size = 0;
    std::uint32_t body_in_file = 0;  ///< 1: the body is in the memory file after the reply socket
    std::uint32_t reserved = 0;
};

/// What a launch asks for. Descriptors are indexes into the request's descriptor list after
/// the reply socket and the body's file.
struct launch {
    std::string path_search;  ///< PATH to look argv[0] up on (when it has no slash)
    std::string cwd;          ///< empty: the helper's own (never used by the library)
    std::vector<std::string> argv, env;
    std::vector<std::int32_t> targets;  ///< targets[i]: the number descriptor i takes in the child
    std::uint32_t library_pid = 0;      ///< the parent the child must have (parent death checks)
    confinement limits;                 ///< landlock_ruleset / seccomp_program: descriptor indexes
};

/// The steps of a child, as they can fail.
enum class step : std::uint32_t {
    none = 0,
    fork,           ///< the helper could not fork (the process limit, memory)
    request,        ///< the request could not be read
    descriptors,    ///< moving the descriptors into place
    session,        ///< setsid
    cgroup,         ///< joining a cgroup (detail: the cgroup.procs file)
    limit,          ///< an rlimit
    mounts,         ///< the private mount namespace or one of its steps (detail: which)
    cwd,            ///< chdir (detail: the directory)
    user,           ///< becoming the user (detail: uid:gid)
    parent_gone,    ///< the library ended before the child could start
    no_new_privs,
    landlock,
    seccomp,
    exec,           ///< execve itself (detail: the program)
};

struct reply {
    std::uint32_t magic = wire::magic;
    std::int32_t pid = -1;  ///< the child's; -1 when the helper could not fork (step says why)
    std::uint32_t from_child = 0;  ///< 1: the child's report of a failed step; 0: the helper's answer
    step failed = step::none;
    std::int32_t error = 0;  ///< errno
    char detail[200] = {};   ///< what the step was about (a path), NUL-terminated
};

// ---- the body --------------------------------------------------------------------------

class writer {
public:
    void u32(std::uint32_t v) { raw(&v, sizeof v); }
    void u64(std::uint64_t v) { raw(&v, sizeof v); }
    void i32(std::int32_t v) { raw(&v, sizeof v); }
    void str(std::string_view s)
    {
        u32(static_cast<std::uint32_t>(s.size()));
        out_.append(s);
    }
    void strs(const std::vector<std::string>& v)
    {
        u32(static_cast<std::uint32_t>(v.size()));
        for (const auto& s : v) str(s);
    }
    std::string take() { return std::move(out_); }

private:
    void raw(const void* p, std::size_t n) { out_.append(static_cast<const char*>(p), n); }
    std::string out_;
};

class reader {
public:
    explicit reader(std::string_view in) : in_(in) {}
    bool ok() const noexcept { return ok_; }
    std::uint32_t u32() { return fixed<std::uint32_t>(); }
    std::uint64_t u64() { return fixed<std::uint64_t>(); }
    std::int32_t i32() { return fixed<std::int32_t>(); }
    std::string str()
    {
        const auto n = u32();
        if (!ok_ || n > in_.size()) return fail<std::string>();
        std::string s(in_.substr(0, n));
        in_.remove_prefix(n);
        return s;
    }
    std::vector<std::string> strs()
    {
        const auto n = u32();
        std::vector<std::string> v;
        if (!ok_ || n > in_.size() / 4) return fail<std::vector<std::string>>();  // each takes 4 bytes at least
        v.reserve(n);
        for (std::uint32_t i = 0; i < n && ok_; ++i) v.push_back(str());
        return v;
    }

private:
    template <typename T>
    T fixed()
    {
        T v{};
        if (in_.size() < sizeof v) return fail<T>();
        std::memcpy(&v, in_.data(), sizeof v);
        in_.remove_prefix(sizeof v);
        return v;
    }
    template <typename T>
    T fail()
    {
        ok_ = false;
        in_ = {};
        return T{};
    }
    std::string_view in_;
    bool ok_ = true;
};

inline std::string encode(const launch& l)
{
    writer w;
    w.str(l.path_search);
    w.str(l.cwd);
    w.strs(l.argv);
    w.strs(l.env);
    w.u32(static_cast<std::uint32_t>(l.targets.size()));
    for (auto t : l.targets) w.i32(t);
    w.u32(l.library_pid);
    const auto& c = l.limits;
    w.strs(c.cgroup_procs);
    w.u64(c.rlimit_as);
    w.u64(c.rlimit_nproc);
    w.u32(c.private_mounts ? 1 : 0);
    w.u32(static_cast<std::uint32_t>(c.mounts.size()));
    for (const auto& m : c.mounts) {
        w.u32(static_cast<std::uint32_t>(m.what));
        w.str(m.source);
        w.str(m.target);
        w.u64(m.size);
        w.strs(m.keep);
        w.u64(m.dev);
        w.u64(m.ino);
    }
    w.u32(c.user ? 1 : 0);
    w.u32(c.user ? c.user->first : 0);
    w.u32(c.user ? c.user->second : 0);
    w.u32(c.setuid_program ? 1 : 0);
    w.i32(c.parent_death_signal);
    w.u32(c.no_new_privs ? 1 : 0);
    w.i32(c.landlock_ruleset);
    w.i32(c.seccomp_program);
    w.u32(c.read_only_view ? 1 : 0);
    w.u32(static_cast<std::uint32_t>(c.writable.size()));
    for (const auto& m : c.writable) {
        w.str(m.target);
        w.u64(m.dev);
        w.u64(m.ino);
    }
    return w.take();
}

/// False when the body is not a well-formed request.
inline bool decode(std::string_view body, launch& l)
{
    reader r(body);
    l.path_search = r.str();
    l.cwd = r.str();
    l.argv = r.strs();
    l.env = r.strs();
    const auto n = r.u32();
    if (!r.ok() || n > max_fds) return false;
    l.targets.clear();
    for (std::uint32_t i = 0; i < n; ++i) l.targets.push_back(r.i32());
    l.library_pid = r.u32();
    auto& c = l.limits;
    c.cgroup_procs = r.strs();
    c.rlimit_as = r.u64();
    c.rlimit_nproc = r.u64();
    c.private_mounts = r.u32() != 0;
    const auto mounts = r.u32();
    if (!r.ok() || mounts > 4096) return false;
    c.mounts.clear();
    for (std::uint32_t i = 0; i < mounts && r.ok(); ++i) {
        mount_step m;
        m.what = static_cast<mount_step::kind>(r.u32());
        m.source = r.str();
        m.target = r.str();
        m.size = r.u64();
        m.keep = r.strs();
        m.dev = r.u64();
        m.ino = r.u64();
        c.mounts.push_back(std::move(m));
    }
    const bool has_user = r.u32() != 0;
    const auto uid = r.u32();
    const auto gid = r.u32();
    if (has_user) c.user = std::pair<uid_t, gid_t>{uid, gid};
    c.setuid_program = r.u32() != 0;
    c.parent_death_signal = r.i32();
    c.no_new_privs = r.u32() != 0;
    c.landlock_ruleset = r.i32();
    c.seccomp_program = r.i32();
    c.read_only_view = r.u32() != 0;
    const auto writable = r.u32();
    if (!r.ok() || writable > 4096) return false;
    c.writable.clear();
    for (std::uint32_t i = 0; i < writable && r.ok(); ++i) {
        mount_step m;
        m.target = r.str();
        m.source = m.target;
        m.dev = r.u64();
        m.ino = r.u64();
        c.writable.push_back(std::move(m));
    }
    return r.ok() && !l.argv.empty();
}

// ---- the hand-off to a sandbox started ahead -------------------------------------------

/// What a sandbox started ahead (`sandbox-spawn --await`) reads from its stdin before it
/// executes the command: this header, then the body, then the command's own stdin.
struct hand_off_header {
    std::uint32_t magic = wire::magic;
    std::uint32_t body_size = 0;
};

struct hand_off {
    std::string cwd;  ///< where the command starts, inside the sandbox; empty: where it is
    std::vector<std::string> argv, env;
    /// --report: the random token of the end-of-command lines it writes on stdout and stderr.
    std::string token;
};

inline std::string encode(const hand_off& h)
{
    writer w;
    w.str(h.cwd);
    w.strs(h.argv);
    w.strs(h.env);
    w.str(h.token);
    auto body = w.take();
    hand_off_header head;
    head.body_size = static_cast<std::uint32_t>(body.size());
    std::string out(reinterpret_cast<const char*>(&head), sizeof head);
    return out + body;
}

inline bool decode(std::string_view body, hand_off& h)
{
    reader r(body);
    h.cwd = r.str();
    h.argv = r.strs();
    h.env = r.strs();
    h.token = r.str();
    return r.ok() && !h.argv.empty();
}

/// The byte a sandbox started ahead writes on stdout once it waits for its command.
/// Where execvp would look for `name`, in order: `name` itself when it holds a '/', else
/// each directory of `path` (a colon-separated PATH; an empty entry is the current
/// directory) joined with it. An empty `path` is "/usr/local/bin:/usr/bin:/bin".
inline std::vector<std::string> exec_candidates(const std::string& name, std::string_view path)
{
    if (name.find('/') != std::string::npos) return {name};
    if (path.empty()) path = "/usr/local/bin:/usr/bin:/bin";
    std::vector<std::string> out;
    for (;;) {
        const auto colon = path.find(':');
        const auto dir = path.substr(0, colon);
        out.push_back((dir.empty() ? std::string(".") : std::string(dir)) + "/" + name);
        if (colon == std::string_view::npos) return out;
        path.remove_prefix(colon + 1);
    }
}

inline constexpr char ready_byte = '\x06';

/// The start of the line `--await --report` writes on stdout and stderr once the command has
/// ended: "\x1esandbox-end TOKEN" then, on stdout, " STATUS UTIME_US STIME_US MAXRSS_KB", and
/// "\n". A container's engine passes output on before it tears the container down, so this
/// tells when the command ended without waiting for the teardown.
inline std::string end_line_prefix(std::string_view token) { return "\x1esandbox-end " + std::string(token); }

}  // namespace sandbox::detail::wire

#endif
