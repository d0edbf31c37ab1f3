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
#include <utility>
#include <memory>
#include <mutex>

namespace sandbox::detail {

namespace {

struct ctx_deleter {
    void operator()(scmp_filter_ctx c) const noexcept { seccomp_release(c); }
};
using filter_ptr = std::unique_ptr<void, ctx_deleter>;

// CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET; unshare also takes
// CLONE_NEWTIME, which in clone's flags is part of the exit signal.
constexpr scmp_datum_t namespace_flags[] = {0x00020000, 0x02000000, 0x04000000, 0x08000000,
                                            0x10000000, 0x20000000, 0x40000000};
constexpr scmp_datum_t clone_newtime = 0x00000080;

// Calls newer than this libseccomp may know by name. From Linux 5.1 on a call has one number
// on every architecture, so these hold wherever the kernel has them.
int late_call_number(std::string_view name)
{
    static constexpr std::pair<std::string_view, int> late[] = {
        {"io_uring_setup", 425}, {"io_uring_enter", 426}, {"io_uring_register", 427}, {"open_tree", 428},
        {"move_mount", 429},     {"fsopen", 430},         {"fsconfig", 431},          {"fsmount", 432},
        {"fspick", 433},         {"clone3", 435},         {"openat2", 437},           {"mount_setattr", 442},
        {"quotactl_fd", 443},    {"fchmodat2", 452}};
    for (const auto& [n, nr] : late)
        if (n == name) return nr;
    return __NR_SCMP_ERROR;
}

class builder {
public:
    explicit builder(std::string& why) : why_(why), ctx_(seccomp_init(SCMP_ACT_ALLOW))
    {
        if (!ctx_) why_ = "seccomp_init failed";
    }

    // `name` refused with `err` when every comparison holds (none: always). A name neither
    // this libseccomp nor late_call_number() knows is not a call of this architecture: skipped.
    template <typename... Cmp>
    void refuse(std::string_view name, int err, Cmp... cmp)
    {
        if (!ctx_ || rc_ != 0) return;
        int call = seccomp_syscall_resolve_name(std::string(name).c_str());
        if (call == __NR_SCMP_ERROR) call = late_call_number(name);
        if (call == __NR_SCMP_ERROR) return;
        rc_ = seccomp_rule_add(ctx_.get(), SCMP_ACT_ERRNO(static_cast<unsigned>(err)), call,
                               static_cast<unsigned>(sizeof...(cmp)), cmp...);
        if (rc_ != 0) why_ = "seccomp_rule_add (" + std::string(name) + "): " + std::strerror(-rc_);
    }

    filter_ptr done() { return rc_ == 0 ? std::move(ctx_) : nullptr; }

private:
    std::string& why_;
    filter_ptr ctx_;
    int rc_ = 0;
};

void refuse_setid_modes(builder& b, int err)
{
    // A mode with either bit: (mode & bit) == bit, one rule per bit (rules of a call are ORed).
    auto mode_rule = [&](std::string_view call, unsigned arg) {
        for (scmp_datum_t bit : {scmp_datum_t{S_ISUID}, scmp_datum_t{S_ISGID}})
            b.refuse(call, err, SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, bit, bit));
    };
    mode_rule("chmod", 1);
    mode_rule("fchmod", 1);
    mode_rule("fchmodat", 2);
    mode_rule("mknod", 1);
    mode_rule("mknodat", 2);
    mode_rule("creat", 1);
    // open and openat only when they create: their mode is garbage otherwise.
    auto creating_rule = [&](std::string_view call, unsigned flags_arg, unsigned mode_arg) {
        for (scmp_datum_t flag : {scmp_datum_t{O_CREAT}, scmp_datum_t{__O_TMPFILE}})
            for (scmp_datum_t bit : {scmp_datum_t{S_ISUID}, scmp_datum_t{S_ISGID}})
                b.refuse(call, err, SCMP_CMP(flags_arg, SCMP_CMP_MASKED_EQ, flag, flag),
                         SCMP_CMP(mode_arg, SCMP_CMP_MASKED_EQ, bit, bit));
    };
    creating_rule("open", 1, 2);
    creating_rule("openat", 2, 3);
    // As if the kernel had none of them: glibc falls back to the calls above.
    for (std::string_view call : {"openat2", "fchmodat2"}) b.refuse(call, ENOSYS);
}

void refuse_namespaces(builder& b, int err)
{
    for (scmp_datum_t flag : namespace_flags) {
        b.refuse("clone", err, SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag));
        b.refuse("unshare", err, SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag));
    }
    b.refuse("unshare", err, SCMP_A0(SCMP_CMP_MASKED_EQ, clone_newtime, clone_newtime));
    b.refuse("clone3", ENOSYS);
    b.refuse("setns", err);
}

filter_ptr make_filter(std::uint32_t bits, std::string& why)
{
    builder b(why);
    const auto rules = syscall_rules();
    auto has = [&](rule_shape shape) {
        for (std::size_t i = 0; i < rules.size(); ++i)
            if ((bits >> i & 1u) && rules[i].shape == shape) return true;
        return false;
    };
    for (std::size_t i = 0; i < rules.size(); ++i) {
        if (!(bits >> i & 1u)) continue;
        const auto& r = rules[i];
        switch (r.shape) {
        case rule_shape::calls:
            for (auto call : r.calls) b.refuse(call, r.error);
            break;
        case rule_shape::namespace_flags: refuse_namespaces(b, r.error); break;
        case rule_shape::setid_modes: refuse_setid_modes(b, r.error); break;
        case rule_shape::unix_socket:
            if (!has(rule_shape::any_socket)) b.refuse("socket", r.error, SCMP_A0(SCMP_CMP_EQ, scmp_datum_t{AF_UNIX}));
            break;
        case rule_shape::any_socket: b.refuse("socket", r.error); break;
        case rule_shape::supervised: break;  // not a refusal: the launch hands these to its supervisor
        }
    }
    return b.done();
}

}  // namespace

std::string write_filter(int fd, std::uint32_t rules)
{
    std::string why;
    const auto ctx = make_filter(rules, why);
    if (!ctx) return why;
    if (const int e = seccomp_export_bpf(ctx.get(), fd); e != 0) return std::string("seccomp_export_bpf: ") + std::strerror(-e);
    return {};
}

const std::string& filter_program(std::uint32_t rules, std::string& why)
{
    // Never erased, so references stay valid; never destroyed, as every static a library thread
    // may touch: those threads outlive static destruction (run/offload.hpp).
    static auto& m = *new std::mutex;
    static auto& made = *new std::map<std::uint32_t, std::string>;
    static const auto& none = *new const std::string;
    std::lock_guard lock(m);
    if (auto it = made.find(rules); it != made.end()) return it->second;
    const int fd = ::memfd_create("sandbox-seccomp", MFD_CLOEXEC);
    if (fd < 0) {
        why = std::string("memfd_create: ") + std::strerror(errno);
        return none;
    }
    std::string program;
    why = write_filter(fd, rules);
    if (why.empty()) {
        const auto size = ::lseek(fd, 0, SEEK_END);
        program.resize(size > 0 ? static_cast<std::size_t>(size) : 0);
        if (size <= 0 || ::pread(fd, program.data(), program.size(), 0) != size) why = "cannot read the BPF program back";
    }
    ::close(fd);
    if (!why.empty()) return none;
    return made.emplace(rules, std::move(program)).first->second;
}

unique_fd sealed_program(std::uint32_t rules, std::string& why)
{
    const auto& program = filter_program(rules, why);
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

std::string load_filter(std::uint32_t rules)
{
    std::string why;
    const auto ctx = make_filter(rules, why);
    if (!ctx) return why;
    if (const int e = seccomp_load(ctx.get()); e != 0) return std::string("seccomp_load: ") + std::strerror(-e);
    return {};
}

std::string rules_to_names(std::uint32_t rules)
{
    std::string out;
    const auto all = syscall_rules();
    for (std::size_t i = 0; i < all.size(); ++i)
        if (rules >> i & 1u) {
            if (!out.empty()) out += ',';
            out += all[i].id;
        }
    return out;
}

bool parse_rules(std::string_view names, std::uint32_t& rules)
{
    rules = 0;
    const auto all = syscall_rules();
    while (!names.empty()) {
        const auto comma = names.find(',');
        const auto name = names.substr(0, comma);
        bool found = false;
        for (std::size_t i = 0; i < all.size() && !found; ++i)
            if (all[i].id == name) {
                rules |= 1u << i;
                found = true;
            }
        if (!found) return false;
        names = comma == std::string_view::npos ? std::string_view() : names.substr(comma + 1);
    }
    return true;
}

}  // namespace sandbox::detail
