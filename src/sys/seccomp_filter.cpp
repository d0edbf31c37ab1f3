// SPDX-License-Identifier: BSL-1.0
#include "sys/seccomp_filter.hpp"

#include <fcntl.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

namespace sandbox::detail {

namespace {

struct ctx_deleter {
    void operator()(scmp_filter_ctx c) const noexcept { seccomp_release(c); }
};
using filter_ptr = std::unique_ptr<void, ctx_deleter>;

// Newer than this libseccomp may know by name; their numbers are the same on every
// architecture (system calls from Linux 5.x on are numbered once for all).
constexpr int nr_io_uring_setup = 425;
constexpr int nr_open_tree = 428;
constexpr int nr_move_mount = 429;
constexpr int nr_fsopen = 430;
constexpr int nr_fsconfig = 431;
constexpr int nr_fsmount = 432;
constexpr int nr_fspick = 433;
constexpr int nr_clone3 = 435;
constexpr int nr_openat2 = 437;
constexpr int nr_mount_setattr = 442;
constexpr int nr_fchmodat2 = 452;

// CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET; unshare also takes
// CLONE_NEWTIME, which in clone's flags is part of the exit signal.
constexpr scmp_datum_t namespace_flags[] = {0x00020000, 0x02000000, 0x04000000, 0x08000000,
                                            0x10000000, 0x20000000, 0x40000000};
constexpr scmp_datum_t clone_newtime = 0x00000080;

class builder {
public:
    explicit builder(std::string& why) : why_(why), ctx_(seccomp_init(SCMP_ACT_ALLOW))
    {
        if (!ctx_) why_ = "seccomp_init failed";
    }

    // `call` refused with `err` when every comparison holds (none: always).
    template <typename... Cmp>
    void refuse(int call, int err, Cmp... cmp)
    {
        if (!ctx_ || rc_ != 0) return;
        rc_ = seccomp_rule_add(ctx_.get(), SCMP_ACT_ERRNO(static_cast<unsigned>(err)), call,
                               static_cast<unsigned>(sizeof...(cmp)), cmp...);
        if (rc_ != 0) why_ = "seccomp_rule_add (call " + std::to_string(call) + "): " + std::strerror(-rc_);
    }

    filter_ptr done() { return rc_ == 0 ? std::move(ctx_) : nullptr; }

private:
    std::string& why_;
    filter_ptr ctx_;
    int rc_ = 0;
};

void refuse_setid_files(builder& b)
{
    // A mode with either bit: (mode & bit) == bit, one rule per bit (rules of a call are ORed).
    auto mode_rule = [&](int call, unsigned arg) {
        for (scmp_datum_t bit : {scmp_datum_t{S_ISUID}, scmp_datum_t{S_ISGID}})
            b.refuse(call, EPERM, SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, bit, bit));
    };
    mode_rule(SCMP_SYS(chmod), 1);
    mode_rule(SCMP_SYS(fchmod), 1);
    mode_rule(SCMP_SYS(fchmodat), 2);
    mode_rule(SCMP_SYS(mknod), 1);
    mode_rule(SCMP_SYS(mknodat), 2);
    mode_rule(SCMP_SYS(creat), 1);
    // open and openat only when they create: their mode is garbage otherwise.
    auto creating_rule = [&](int call, unsigned flags_arg, unsigned mode_arg) {
        for (scmp_datum_t flag : {scmp_datum_t{O_CREAT}, scmp_datum_t{__O_TMPFILE}})
            for (scmp_datum_t bit : {scmp_datum_t{S_ISUID}, scmp_datum_t{S_ISGID}})
                b.refuse(call, EPERM, SCMP_CMP(flags_arg, SCMP_CMP_MASKED_EQ, flag, flag),
                         SCMP_CMP(mode_arg, SCMP_CMP_MASKED_EQ, bit, bit));
    };
    creating_rule(SCMP_SYS(open), 1, 2);
    creating_rule(SCMP_SYS(openat), 2, 3);
    // As if the kernel had none of them: glibc falls back to the calls above.
    for (int call : {nr_openat2, nr_fchmodat2}) b.refuse(call, ENOSYS);
}

void refuse_hardened(builder& b)
{
    for (scmp_datum_t flag : namespace_flags) {
        b.refuse(SCMP_SYS(clone), EPERM, SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag));
        b.refuse(SCMP_SYS(unshare), EPERM, SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag));
    }
    b.refuse(SCMP_SYS(unshare), EPERM, SCMP_A0(SCMP_CMP_MASKED_EQ, clone_newtime, clone_newtime));
    b.refuse(nr_clone3, ENOSYS);
    for (int call : {SCMP_SYS(setns), SCMP_SYS(keyctl), SCMP_SYS(add_key), SCMP_SYS(request_key), SCMP_SYS(bpf),
                     SCMP_SYS(userfaultfd), SCMP_SYS(perf_event_open), SCMP_SYS(init_module),
                     SCMP_SYS(finit_module), SCMP_SYS(delete_module), SCMP_SYS(kexec_load),
                     SCMP_SYS(kexec_file_load), SCMP_SYS(mount), SCMP_SYS(umount2), SCMP_SYS(pivot_root),
                     nr_open_tree, nr_move_mount, nr_fsopen, nr_fsconfig, nr_fsmount, nr_fspick, nr_mount_setattr,
                     SCMP_SYS(open_by_handle_at), SCMP_SYS(swapon), SCMP_SYS(swapoff), SCMP_SYS(reboot),
                     SCMP_SYS(acct), SCMP_SYS(quotactl), SCMP_SYS(syslog), SCMP_SYS(iopl), SCMP_SYS(ioperm)})
        b.refuse(call, EPERM);
}

filter_ptr make_filter(const filter_spec& spec, std::string& why)
{
    builder b(why);
    if (spec.setid_files) refuse_setid_files(b);
    if (spec.hardening) refuse_hardened(b);
    switch (spec.sockets) {
    case socket_rule::any: break;
    case socket_rule::no_unix: b.refuse(SCMP_SYS(socket), EACCES, SCMP_A0(SCMP_CMP_EQ, scmp_datum_t{AF_UNIX})); break;
    case socket_rule::none: b.refuse(SCMP_SYS(socket), EACCES); break;
    }
    if (spec.setid_files || spec.hardening || spec.sockets != socket_rule::any) b.refuse(nr_io_uring_setup, ENOSYS);
    return b.done();
}

int spec_key(const filter_spec& s)
{
    return (s.setid_files ? 1 : 0) | (s.hardening ? 2 : 0) | (static_cast<int>(s.sockets) << 2);
}

}  // namespace

std::string write_filter(int fd, const filter_spec& spec)
{
    std::string why;
    const auto ctx = make_filter(spec, why);
    if (!ctx) return why;
    if (const int e = seccomp_export_bpf(ctx.get(), fd); e != 0) return std::string("seccomp_export_bpf: ") + std::strerror(-e);
    return {};
}

const std::string& filter_program(const filter_spec& spec, std::string& why)
{
    static std::mutex m;
    static std::map<int, std::string> made;  // never erased: references stay valid
    static const std::string none;
    std::lock_guard lock(m);
    if (auto it = made.find(spec_key(spec)); it != made.end()) return it->second;
    const int fd = ::memfd_create("sandbox-seccomp", MFD_CLOEXEC);
    if (fd < 0) {
        why = std::string("memfd_create: ") + std::strerror(errno);
        return none;
    }
    std::string program;
    why = write_filter(fd, spec);
    if (why.empty()) {
        const auto size = ::lseek(fd, 0, SEEK_END);
        program.resize(size > 0 ? static_cast<std::size_t>(size) : 0);
        if (size <= 0 || ::pread(fd, program.data(), program.size(), 0) != size) why = "cannot read the BPF program back";
    }
    ::close(fd);
    if (!why.empty()) return none;
    return made.emplace(spec_key(spec), std::move(program)).first->second;
}

unique_fd sealed_program(const filter_spec& spec, std::string& why)
{
    const auto& program = filter_program(spec, why);
    if (program.empty()) return {};
    unique_fd fd(::memfd_create("sandbox-seccomp", MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (!fd || ::write(fd.get(), program.data(), program.size()) != static_cast<ssize_t>(program.size()) ||
        ::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0 ||
        ::lseek(fd.get(), 0, SEEK_SET) != 0) {  // bwrap reads from the offset on
        why = std::string("cannot put the seccomp program in a memory file: ") + std::strerror(errno);
        return {};
    }
    return fd;
}

std::string load_filter(const filter_spec& spec)
{
    std::string why;
    const auto ctx = make_filter(spec, why);
    if (!ctx) return why;
    if (const int e = seccomp_load(ctx.get()); e != 0) return std::string("seccomp_load: ") + std::strerror(-e);
    return {};
}

}  // namespace sandbox::detail
