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
#include <sandbox/detail/spawn.hpp>

#include "spawn_support.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <mutex>

#if defined(__x86_64__) || defined(__aarch64__)
#define SANDBOX_ASYNC_SPAWN 1
#endif

namespace sandbox::detail {

#ifdef SANDBOX_ASYNC_SPAWN

namespace {

// ---- what the child runs ---------------------------------------------------------------

#define SANDBOX_CHILD_CODE [[gnu::always_inline]] inline __attribute__((no_sanitize("address", "undefined")))

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
    long close_limit = 0;               // for kernels without close_range
    std::uint64_t reset_ignored = 0;     // bit (sig - 1): set to default even when ignored
    std::uint64_t empty_mask = 0;
    // Written by the child before it exits with 127; read by us after it was reaped.
    int failed_step = 0;
    int failed_errno = 0;
};

SANDBOX_CHILD_CODE int child_fail(child_plan* p, child_step step, long err)
{
    __atomic_store_n(&p->failed_errno, static_cast<int>(-err), __ATOMIC_RELAXED);
    __atomic_store_n(&p->failed_step, static_cast<int>(step), __ATOMIC_RELEASE);
    for (;;) raw(SYS_exit_group, 127);
}

SANDBOX_CHILD_CODE long move_to(int from, int to)
{
    return raw(SYS_dup3, from, to, 0);  // from is above 2, so never equal to `to`
}

__attribute__((no_sanitize("address", "undefined"))) int child_main(void* arg)
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
            return child_fail(p, child_step::signals, r);
    }

    // 2. Own session and process group.
    if ((r = raw(SYS_setsid)) < 0) return child_fail(p, child_step::setsid, r);

    // 3. Descriptors 0-2 (dup3 clears close-on-exec on the copies).
    int in = p->stdin_fd;
    if (in < 0) {
        static const char dev_null_path[] = "/dev/null";
        if ((r = raw(SYS_openat, AT_FDCWD, reinterpret_cast<long>(dev_null_path), O_RDONLY | O_CLOEXEC)) < 0)
            return child_fail(p, child_step::stdio, r);
        in = static_cast<int>(r);
    }
    if (in == 0) {
        // Only when our own descriptor 0 was closed and the open took its number.
        if ((r = raw(SYS_fcntl, 0, F_SETFD, 0)) < 0) return child_fail(p, child_step::stdio, r);
    } else if ((r = move_to(in, 0)) < 0) {
        return child_fail(p, child_step::stdio, r);
    }
    if ((r = move_to(p->stdout_fd, 1)) < 0 || (r = move_to(p->stderr_fd, 2)) < 0)
        return child_fail(p, child_step::stdio, r);

    // 4. Working directory.
    if (p->cwd && (r = raw(SYS_chdir, reinterpret_cast<long>(p->cwd))) < 0) return child_fail(p, child_step::chdir, r);

    // 5. Nothing but 0-2 goes on.
    if ((r = raw(SYS_close_range, 3, static_cast<long>(~0U), 0)) < 0) {
        if (r != -ENOSYS) return child_fail(p, child_step::close_fds, r);
        for (long fd = 3; fd < p->close_limit; ++fd) raw(SYS_close, fd);
    }

    // 6. An empty signal mask for the command; then exec, trying each candidate as execvp
    //    does: keep going past the errors that mean "not here".
    if ((r = raw(SYS_rt_sigprocmask, SIG_SETMASK, reinterpret_cast<long>(&p->empty_mask), 0, 8)) < 0)
        return child_fail(p, child_step::signals, r);
    long err = -ENOENT;
    bool got_eacces = false;
    for (const char* const* path = p->paths; *path; ++path) {
        err = raw(SYS_execve, reinterpret_cast<long>(*path), reinterpret_cast<long>(p->argv),
                  reinterpret_cast<long>(p->envp));
        if (err == -EACCES) got_eacces = true;
        else if (err != -ENOENT && err != -ENOTDIR && err != -ESTALE && err != -ENODEV && err != -ETIMEDOUT) break;
    }
    if (got_eacces && (err == -ENOENT || err == -ENOTDIR || err == -ESTALE || err == -ENODEV || err == -ETIMEDOUT))
        err = -EACCES;
    return child_fail(p, child_step::exec, err);
}

#undef SANDBOX_CHILD_CODE

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

    void* get()
    {
        {
            std::lock_guard lock(mutex_);
            if (!free_.empty()) {
                void* s = free_.back();
                free_.pop_back();
                return s;
            }
        }
        void* base = ::mmap(nullptr, guard_ + size_, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
        if (base == MAP_FAILED) return nullptr;
        if (::mprotect(base, guard_, PROT_NONE) != 0) {
            ::munmap(base, guard_ + size_);
            return nullptr;
        }
        return base;
    }

    void put(void* base) noexcept
    {
        {
            std::lock_guard lock(mutex_);
            if (free_.size() < max_kept) {
                try {
                    free_.push_back(base);
                    return;
                } catch (...) {
                }
            }
        }
        ::munmap(base, guard_ + size_);
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

    static constexpr std::size_t max_kept = 256;
    std::size_t guard_ = 4096;
    std::size_t size_ = 16384;
    std::mutex mutex_;
    std::vector<void*> free_;
};

long close_limit()
{
    static const long limit = [] {
        const long n = ::sysconf(_SC_OPEN_MAX);
        return n > 0 ? n : 1024;
    }();
    return limit;
}

}  // namespace

class launch_record {
public:
    std::shared_ptr<const spawn_request> req;
    std::vector<char*> argv, envp;
    std::vector<std::string> candidates;
    std::vector<const char*> paths;
    child_plan plan;
    void* stack = nullptr;
    pid_t pid = -1;
    // Non-zero until the child has exec'd or exited (CLONE_CHILD_CLEARTID): the kernel then
    // writes 0 and wakes futex waiters.
    alignas(4) pid_t in_use = 0;

    launch_record() = default;
    launch_record(const launch_record&) = delete;
    launch_record& operator=(const launch_record&) = delete;

    ~launch_record()
    {
        wait_released();
        if (stack) stack_pool::instance().put(stack);
    }

    bool released() const noexcept { return __atomic_load_n(&in_use, __ATOMIC_ACQUIRE) == 0; }

private:
    // Normally the child is long reaped by now. Otherwise (the record dropped without a reap,
    // as when an io_context is destroyed with the launch's completion still queued) its
    // memory must not go while the child may still read it: wait, killing it if it takes
    // long (a pid that still uses our memory has not exited, so it names the child).
    void wait_released() noexcept
    {
        bool killed = false;
        while (!released()) {
            const pid_t v = __atomic_load_n(&in_use, __ATOMIC_ACQUIRE);
            if (v == 0) break;
            timespec limit{1, 0};
            const long r = ::syscall(SYS_futex, &in_use, FUTEX_WAIT, v, killed ? nullptr : &limit, nullptr, 0);
            if (r < 0 && errno == ETIMEDOUT && !killed && pid > 0) {
                ::kill(pid, SIGKILL);
                killed = true;
            }
        }
    }
};

std::error_code spawn_child_async(std::shared_ptr<const spawn_request> req_ptr, spawned_child& out, std::string& what)
{
    const spawn_request& req = *req_ptr;
    if (auto ec = validate(req, what)) return ec;
    child_fds f;
    if (auto ec = make_child_fds(req, f, what)) return ec;

    auto rec = std::make_shared<launch_record>();
    rec->req = req_ptr;
    rec->argv = c_strings(req.argv);
    rec->envp = c_strings(req.env);
    const std::string& name = req.argv.front();
    if (name.find('/') != std::string::npos) {
        rec->paths = {name.c_str(), nullptr};
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
            rec->candidates.push_back(std::move(candidate));
            if (colon == std::string_view::npos) break;
            dirs.remove_prefix(colon + 1);
        }
        rec->paths.reserve(rec->candidates.size() + 1);
        for (const auto& c : rec->candidates) rec->paths.push_back(c.c_str());
        rec->paths.push_back(nullptr);
    }

    child_plan& p = rec->plan;
    p.argv = rec->argv.data();
    p.envp = rec->envp.data();
    p.paths = rec->paths.data();
    p.stdin_fd = req.stdin_socket ? f.in_r.get() : dev_null();
    p.stdout_fd = f.out_w.get();
    p.stderr_fd = f.err_w.get();
    p.cwd = req.cwd.empty() ? nullptr : req.cwd.c_str();
    p.close_limit = close_limit();
    for (int sig : reset_signals) p.reset_ignored |= std::uint64_t{1} << (sig - 1);

    rec->stack = stack_pool::instance().get();
    if (!rec->stack) {
        what = "cannot map a stack for the child";
        return {errno, std::system_category()};
    }

    // Everything blocked across the clone: the child inherits the mask and unblocks only
    // once no handler of ours is left in it.
    sigset_t all, old;
    sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &old);
    rec->in_use = 1;
    const pid_t pid = ::clone(child_main, stack_pool::instance().top(rec->stack),
                              CLONE_VM | CLONE_CHILD_CLEARTID | SIGCHLD, &p, nullptr, nullptr, &rec->in_use);
    const int clone_errno = errno;
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (pid < 0) {
        rec->in_use = 0;
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

std::error_code launch_failure(const launch_record& record, std::string& what)
{
    const int step = __atomic_load_n(&record.plan.failed_step, __ATOMIC_ACQUIRE);
    if (step == static_cast<int>(child_step::none)) return {};
    const int err = __atomic_load_n(&record.plan.failed_errno, __ATOMIC_RELAXED);
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
