// SPDX-License-Identifier: BSL-1.0
//
// Starting a child without waiting for its exec. posix_spawn is clone(CLONE_VM|CLONE_VFORK):
// the calling thread sleeps until the child has exec'd, a few hundred microseconds that an
// io thread launching many commands would otherwise spend doing nothing. Here the child is
// clone(CLONE_VM) without CLONE_VFORK: it still shares our memory (nothing is copied, so the
// cost does not grow with the parent's size, as with vfork), runs on a stack of its own, and
// sets itself up and execs while we go on.
//
// Sharing our memory while we run is what the child's code must respect: it uses no libc
// function (they may take locks or set errno, which is our thread's, in the TLS the child
// shares), only the raw system calls below, and writes nothing of ours but its report in the
// launch_record. All signals are blocked from before the clone until the child has reset
// every caught signal to its default, so no handler of ours ever runs in it. The record and
// everything the child reads stay alive until the kernel says the child has let go of our
// memory (CLONE_CHILD_CLEARTID clears a word when it execs or exits).
#include "run/spawn.hpp"

#include "run/spawn_support.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <mutex>

#if (defined(__x86_64__) && !defined(__ILP32__)) || defined(__aarch64__)
#define SANDBOX_ASYNC_SPAWN 1
#endif

namespace sandbox::detail {

#ifdef SANDBOX_ASYNC_SPAWN

namespace {

// ---- what the child runs ---------------------------------------------------------------

// No instrumentation of any kind may add a call, or a write to TLS or globals, to the child.
#define SANDBOX_CHILD_ATTRS                                                                     \
    __attribute__((no_sanitize("address", "undefined", "thread"), no_instrument_function,      \
                   no_profile_instrument_function))
#define SANDBOX_CHILD_CODE [[gnu::always_inline]] inline SANDBOX_CHILD_ATTRS

// A system call that returns -errno and never touches errno.
SANDBOX_CHILD_CODE long raw(long n, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0)
{
#if defined(__x86_64__)
    long ret;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8) : "rcx", "r11", "memory");
    return ret;
#else
    register long x8 __asm__("x8") = n;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    register long x4 __asm__("x4") = e;
    __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4) : "memory", "cc");
    return x0;
#endif
}

}  // namespace

// The kernel's struct sigaction (the same on x86-64 and AArch64), which rt_sigaction takes.
// The handler as a number: SIG_DFL is 0 and SIG_IGN 1.
struct kernel_sigaction {
    unsigned long handler;
    unsigned long flags;
    unsigned long restorer;
    std::uint64_t mask;
};
constexpr unsigned long handler_default = 0, handler_ignore = 1;

enum class child_step : int { none = 0, signals, setsid, stdio, chdir, close_fds, exec };

// Everything the child reads, prepared by the parent; and the one thing it writes.
struct child_plan {
    const char* const* argv = nullptr;
    const char* const* envp = nullptr;
    const char* const* paths = nullptr;  // where to exec: argv[0], or each PATH candidate
    int stdin_fd = -1;                   // -1: open /dev/null
    int stdout_fd = -1;
    int stderr_fd = -1;
    const char* cwd = nullptr;
    std::uint64_t reset_ignored = 0;     // bit (sig - 1): set to default even when ignored
    std::uint64_t empty_mask = 0;
    // Written by the child before it exits with 127; read by us after it was reaped.
    int failed_step = 0;
    int failed_errno = 0;
};

namespace {

[[noreturn]] SANDBOX_CHILD_CODE void child_fail(child_plan* p, child_step step, long err)
{
    __atomic_store_n(&p->failed_errno, static_cast<int>(-err), __ATOMIC_RELAXED);
    __atomic_store_n(&p->failed_step, static_cast<int>(step), __ATOMIC_RELEASE);
    for (;;) raw(SYS_exit_group, 127);
}

SANDBOX_CHILD_CODE long move_to(int from, int to)
{
    return raw(SYS_dup3, from, to, 0);  // from is above 2, so never equal to `to`
}

// Closes every descriptor from 3 up without close_range (an old kernel, or a seccomp filter
// that refuses system calls it does not know): the ones /proc lists, else every number up to
// the descriptor limit.
SANDBOX_CHILD_CODE void close_from_3()
{
    static const char fd_dir[] = "/proc/self/fd";
    const long dir = raw(SYS_openat, AT_FDCWD, reinterpret_cast<long>(fd_dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
        alignas(8) char buf[2048];
        long n;
        // Listing /proc/self/fd goes by descriptor number, so closing the ones read does not
        // make the listing skip any.
        while ((n = raw(SYS_getdents64, dir, reinterpret_cast<long>(buf), sizeof buf)) > 0) {
            for (long off = 0; off < n;) {
                // struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1), d_name
                unsigned short reclen;
                __builtin_memcpy(&reclen, buf + off + 16, sizeof reclen);
                const char* name = buf + off + 19;
                long fd = 0;
                bool number = *name != 0;
                for (const char* c = name; *c; ++c) {
                    if (*c < '0' || *c > '9') {
                        number = false;
                        break;
                    }
                    fd = fd * 10 + (*c - '0');
                }
                if (number && fd > 2 && fd != dir) raw(SYS_close, fd);
                off += reclen;
            }
        }
        raw(SYS_close, dir);
        if (n == 0) return;
    }
    struct {
        std::uint64_t cur, max;
    } limit{1024, 1024};
    raw(SYS_prlimit64, 0, RLIMIT_NOFILE, 0, reinterpret_cast<long>(&limit));
    const long top = limit.cur > (1u << 20) ? (1 << 20) : static_cast<long>(limit.cur);
    for (long fd = 3; fd < top; ++fd) raw(SYS_close, fd);
}

SANDBOX_CHILD_ATTRS int child_main(void* arg)
{
    auto* p = static_cast<child_plan*>(arg);
    long r;

    // 1. Caught signals to their defaults (a handler of ours must never run here), and the
    //    ignored ones a server commonly ignores too. Everything is still blocked.
    kernel_sigaction dfl;
    dfl.handler = handler_default;
    dfl.flags = 0;
    dfl.restorer = 0;
    dfl.mask = 0;
    for (int sig = 1; sig <= 64; ++sig) {
        if (sig == SIGKILL || sig == SIGSTOP) continue;
        kernel_sigaction old;
        old.handler = handler_default;
        if (raw(SYS_rt_sigaction, sig, 0, reinterpret_cast<long>(&old), 8) < 0) continue;  // not a signal here
        if (old.handler == handler_default) continue;
        if (old.handler == handler_ignore && !(p->reset_ignored & (std::uint64_t{1} << (sig - 1)))) continue;
        if ((r = raw(SYS_rt_sigaction, sig, reinterpret_cast<long>(&dfl), 0, 8)) < 0)
            child_fail(p, child_step::signals, r);
    }

    // 2. Own session and process group.
    if ((r = raw(SYS_setsid)) < 0) child_fail(p, child_step::setsid, r);

    // 3. Descriptors 0-2 (dup3 clears close-on-exec on the copies).
    int in = p->stdin_fd;
    if (in < 0) {
        static const char dev_null_path[] = "/dev/null";
        if ((r = raw(SYS_openat, AT_FDCWD, reinterpret_cast<long>(dev_null_path), O_RDONLY | O_CLOEXEC)) < 0)
            child_fail(p, child_step::stdio, r);
        in = static_cast<int>(r);
    }
    if (in == 0) {
        // Only when our own descriptor 0 was closed and the open took its number.
        if ((r = raw(SYS_fcntl, 0, F_SETFD, 0)) < 0) child_fail(p, child_step::stdio, r);
    } else if ((r = move_to(in, 0)) < 0) {
        child_fail(p, child_step::stdio, r);
    }
    if ((r = move_to(p->stdout_fd, 1)) < 0 || (r = move_to(p->stderr_fd, 2)) < 0)
        child_fail(p, child_step::stdio, r);

    // 4. Working directory.
    if (p->cwd && (r = raw(SYS_chdir, reinterpret_cast<long>(p->cwd))) < 0) child_fail(p, child_step::chdir, r);

    // 5. Nothing but 0-2 goes on.
    if (raw(SYS_close_range, 3, static_cast<long>(~0U), 0) < 0) close_from_3();

    // 6. An empty signal mask for the command; then exec, trying each candidate as execvp
    //    does: keep going past the errors that mean "not here".
    if ((r = raw(SYS_rt_sigprocmask, SIG_SETMASK, reinterpret_cast<long>(&p->empty_mask), 0, 8)) < 0)
        child_fail(p, child_step::signals, r);
    long err = -ENOENT;
    bool got_eacces = false;
    for (const char* const* path = p->paths; *path; ++path) {
        err = raw(SYS_execve, reinterpret_cast<long>(*path), reinterpret_cast<long>(p->argv),
                  reinterpret_cast<long>(p->envp));
        if (err == -EACCES) got_eacces = true;
        else if (err != -ENOENT && err != -ENOTDIR && err != -ESTALE && err != -ENODEV && err != -ETIMEDOUT &&
                 err != -ENAMETOOLONG)
            break;
    }
    if (got_eacces && err != -EACCES && (err == -ENOENT || err == -ENOTDIR || err == -ESTALE || err == -ENODEV ||
                                         err == -ETIMEDOUT || err == -ENAMETOOLONG))
        err = -EACCES;
    child_fail(p, child_step::exec, err);
}

#undef SANDBOX_CHILD_CODE
#undef SANDBOX_CHILD_ATTRS

}  // namespace

// What the child uses of our memory until it execs or exits: kept apart from the record so
// that it can be left allocated for good if the child never lets go (see ~launch_record).
struct child_memory {
    std::shared_ptr<const spawn_request> req;  // argv, env and cwd strings
    std::vector<char*> argv, envp;
    std::vector<std::string> candidates;
    std::vector<const char*> paths;
    child_plan plan;
    // Non-zero until the child has exec'd or exited (CLONE_CHILD_CLEARTID): the kernel then
    // writes 0 and wakes futex waiters.
    alignas(4) pid_t in_use = 0;

    bool released() const noexcept { return __atomic_load_n(&in_use, __ATOMIC_ACQUIRE) == 0; }
};

class launch_record {
public:
    std::unique_ptr<child_memory> mem = std::make_unique<child_memory>();
    pid_t pid = -1;

    // The child's stack, and its place among the stacks lent out (guarded by the pool's
    // mutex): a stack goes back to the pool as soon as its child has exec'd, not when the
    // record goes, so a thousand long-running commands do not hold a thousand stacks.
    void* stack = nullptr;
    launch_record* prev = nullptr;
    launch_record* next = nullptr;

    launch_record() = default;
    launch_record(const launch_record&) = delete;
    launch_record& operator=(const launch_record&) = delete;
    ~launch_record();

    bool released() const noexcept { return mem->released(); }
};

namespace {

// ---- stacks ----------------------------------------------------------------------------

// The child's stack: it needs little (no libc, no signal handler), but gets a guard page
// below. Kept for reuse, since a fresh mapping costs a page fault in every child.
class stack_pool {
public:
    // Never destroyed: a record may be dropped by a static's destructor at exit.
    static stack_pool& instance()
    {
        static auto* pool = new stack_pool;
        return *pool;
    }

    // Lends a stack to `r`: a free one, else one whose child has exec'd since, else a new one.
    bool lend(launch_record& r)
    {
        {
            std::lock_guard lock(mutex_);
            if (!free_.empty()) {
                r.stack = free_.back();
                free_.pop_back();
            } else {
                for (launch_record* o = oldest_; o; o = o->next)
                    if (o->released()) {
                        r.stack = std::exchange(o->stack, nullptr);
                        unlink(*o);
                        break;
                    }
            }
        }
        if (!r.stack) r.stack = map();
        if (!r.stack) return false;
        std::lock_guard lock(mutex_);
        r.prev = newest_;
        r.next = nullptr;
        (newest_ ? newest_->next : oldest_) = &r;
        newest_ = &r;
        return true;
    }

    // Takes back the stack of `r`, unless it was taken back already. Only once the child has
    // let go of it.
    void give_back(launch_record& r) noexcept
    {
        void* s = nullptr;
        {
            std::lock_guard lock(mutex_);
            if (!r.stack) return;
            s = std::exchange(r.stack, nullptr);
            unlink(r);
            if (free_.size() < max_kept) {
                try {
                    free_.push_back(s);
                    return;
                } catch (...) {
                }
            }
        }
        ::munmap(s, guard_ + size_);
    }

    // `r` goes without giving its stack back: its child may still be on it.
    void forget(launch_record& r) noexcept
    {
        std::lock_guard lock(mutex_);
        if (!r.stack) return;
        r.stack = nullptr;
        unlink(r);
    }

    // Stacks grow down: the child starts at the top, 16-byte aligned.
    void* top(void* base) const noexcept { return static_cast<char*>(base) + guard_ + size_; }

private:
    stack_pool()
    {
        const long page = ::sysconf(_SC_PAGESIZE);
        guard_ = page > 0 ? static_cast<std::size_t>(page) : 4096;
        size_ = guard_ > 16384 ? guard_ : 16384;
    }

    void* map() const
    {
        void* base = ::mmap(nullptr, guard_ + size_, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
        if (base == MAP_FAILED) return nullptr;
        if (::mprotect(base, guard_, PROT_NONE) != 0) {
            ::munmap(base, guard_ + size_);
            return nullptr;
        }
        return base;
    }

    void unlink(launch_record& r) noexcept
    {
        (r.prev ? r.prev->next : oldest_) = r.next;
        (r.next ? r.next->prev : newest_) = r.prev;
        r.prev = r.next = nullptr;
    }

    static constexpr std::size_t max_kept = 256;
    std::size_t guard_ = 4096;
    std::size_t size_ = 16384;
    std::mutex mutex_;
    std::vector<void*> free_;
    launch_record* oldest_ = nullptr;  // the records holding a stack, oldest first
    launch_record* newest_ = nullptr;
};

// All signals blocked, glibc's two internal ones too (pthread_sigmask leaves those alone, and
// their handlers must not run in the child either).
struct all_signals_blocked {
    std::uint64_t old = 0;
    all_signals_blocked()
    {
        const std::uint64_t all = ~std::uint64_t{0};
        ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, sizeof all);
    }
    ~all_signals_blocked() { ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, nullptr, sizeof old); }
    all_signals_blocked(const all_signals_blocked&) = delete;
    all_signals_blocked& operator=(const all_signals_blocked&) = delete;
};

}  // namespace

// Normally the child is long reaped by now. Otherwise (the record dropped without a reap, as
// when an io_context is destroyed with the launch's completion still queued) its memory must
// not go while the child may still read or write it: wait, then kill it, then, should it
// still not let go (stuck in an exec from a dead network file system), leave that memory
// allocated for good rather than block this thread.
launch_record::~launch_record()
{
    auto wait_released = [this](timespec limit) {
        const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(limit.tv_sec);
        while (!mem->released() && std::chrono::steady_clock::now() < end) {
            const pid_t v = __atomic_load_n(&mem->in_use, __ATOMIC_ACQUIRE);
            if (v != 0) ::syscall(SYS_futex, &mem->in_use, FUTEX_WAIT, v, &limit, nullptr, 0);
        }
        return mem->released();
    };
    if (!mem->released() && !wait_released({1, 0}) && pid > 0) {
        // A pidfd opened while the child still uses our memory (so has not exited, so cannot
        // have been reaped and its pid reused) names the child for sure.
        const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
        if (!mem->released()) {
            if (fd >= 0) ::syscall(SYS_pidfd_send_signal, fd, SIGKILL, nullptr, 0);
            wait_released({5, 0});
        }
        if (fd >= 0) ::close(fd);
    }
    if (!mem->released()) {
        stack_pool::instance().forget(*this);
        (void)mem.release();  // deliberately never freed: the child may still use it
        return;
    }
    stack_pool::instance().give_back(*this);
}

std::error_code spawn_child_async(std::shared_ptr<const spawn_request> req_ptr, spawned_child& out, std::string& what)
{
    const spawn_request& req = *req_ptr;
    if (auto ec = validate(req, what)) return ec;
    child_fds f;
    if (auto ec = make_child_fds(req, f, what)) return ec;

    auto rec = std::make_shared<launch_record>();
    child_memory& m = *rec->mem;
    m.req = req_ptr;
    m.argv = c_strings(req.argv);
    m.envp = c_strings(req.env);
    const std::string& name = req.argv.front();
    if (name.find('/') != std::string::npos) {
        m.paths = {name.c_str(), nullptr};
    } else {
        // Looked up on our PATH, as posix_spawnp does (an empty entry is the current directory).
        const char* path_env = std::getenv("PATH");
        std::string_view dirs = path_env ? path_env : "/bin:/usr/bin";
        while (true) {
            const auto colon = dirs.find(':');
            const auto dir = dirs.substr(0, colon);
            std::string candidate;
            candidate.reserve(dir.size() + 1 + name.size());
            candidate.append(dir.empty() ? std::string_view(".") : dir).append("/").append(name);
            m.candidates.push_back(std::move(candidate));
            if (colon == std::string_view::npos) break;
            dirs.remove_prefix(colon + 1);
        }
        m.paths.reserve(m.candidates.size() + 1);
        for (const auto& c : m.candidates) m.paths.push_back(c.c_str());
        m.paths.push_back(nullptr);
    }

    child_plan& p = m.plan;
    p.argv = m.argv.data();
    p.envp = m.envp.data();
    p.paths = m.paths.data();
    p.stdin_fd = req.stdin_socket ? f.in_r.get() : dev_null();
    p.stdout_fd = f.out_w.get();
    p.stderr_fd = f.err_w.get();
    p.cwd = req.cwd.empty() ? nullptr : req.cwd.c_str();
    for (int sig : reset_signals) p.reset_ignored |= std::uint64_t{1} << (sig - 1);

    if (!stack_pool::instance().lend(*rec)) {
        what = "cannot map a stack for the child";
        return {errno, std::system_category()};
    }

    pid_t pid;
    int clone_errno = 0;
    {
        // The child inherits the mask and unblocks only once no handler of ours is left in it.
        all_signals_blocked blocked;
        m.in_use = 1;
        pid = ::clone(child_main, stack_pool::instance().top(rec->stack), CLONE_VM | CLONE_CHILD_CLEARTID | SIGCHLD,
                      &p, nullptr, nullptr, &m.in_use);
        clone_errno = errno;
    }
    if (pid < 0) {
        m.in_use = 0;
        what.clear();
        return {clone_errno, std::system_category()};
    }
    rec->pid = pid;

    out.pid = pid;
    if (req.open_pidfd) out.pidfd.reset(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    out.stdin_w = std::move(f.in_w);
    out.stdout_r = std::move(f.out_r);
    out.stderr_r = std::move(f.err_r);
    out.launch = std::move(rec);
    return {};  // the child's ends close with `f`: it has its own copies
}

bool launch_released(const launch_record& record) noexcept { return record.released(); }

std::error_code launch_failure(const launch_record& record, std::string& what)
{
    if (!record.released()) return {};
    const int step = __atomic_load_n(&record.mem->plan.failed_step, __ATOMIC_ACQUIRE);
    if (step == static_cast<int>(child_step::none)) return {};
    const int err = __atomic_load_n(&record.mem->plan.failed_errno, __ATOMIC_RELAXED);
    switch (static_cast<child_step>(step)) {
    case child_step::signals: what = "cannot reset the signals"; break;
    case child_step::setsid: what = "cannot start a session"; break;
    case child_step::stdio: what = "cannot set up descriptors 0-2"; break;
    case child_step::close_fds: what = "cannot close inherited descriptors"; break;
    default: what.clear(); break;  // chdir, exec: describe_spawn_error says why
    }
    return {err, std::system_category()};
}

#else  // no raw system calls written for this architecture: posix_spawn, which waits

class launch_record {};

bool launch_released(const launch_record&) noexcept { return true; }

std::error_code spawn_child_async(std::shared_ptr<const spawn_request> req, spawned_child& out, std::string& what)
{
    return spawn_child(*req, out, what);
}

std::error_code launch_failure(const launch_record&, std::string& what)
{
    what.clear();
    return {};
}

#endif

}  // namespace sandbox::detail
