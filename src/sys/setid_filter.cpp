// SPDX-License-Identifier: BSL-1.0
#include "sys/setid_filter.hpp"

#include <fcntl.h>
#include <seccomp.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace sandbox::detail {

namespace {

struct ctx_deleter {
    void operator()(scmp_filter_ctx c) const noexcept { seccomp_release(c); }
};

// Newer than this libseccomp may know by name; their numbers are the same on every
// architecture (system calls from Linux 5.x on are numbered once for all).
constexpr int nr_io_uring_setup = 425;
constexpr int nr_openat2 = 437;
constexpr int nr_fchmodat2 = 452;

// The filter, or why not (then null).
std::unique_ptr<void, ctx_deleter> setid_filter(std::string& why)
{
    std::unique_ptr<void, ctx_deleter> ctx(seccomp_init(SCMP_ACT_ALLOW));
    if (!ctx) {
        why = "seccomp_init failed";
        return nullptr;
    }
    const auto eperm = SCMP_ACT_ERRNO(EPERM);
    int rc = 0;
    // A mode with either bit: (mode & bit) == bit, one rule per bit (rules of a call are ORed).
    auto mode_rule = [&](int call, unsigned arg) {
        for (scmp_datum_t bit : {scmp_datum_t{S_ISUID}, scmp_datum_t{S_ISGID}})
            if (rc == 0) rc = seccomp_rule_add(ctx.get(), eperm, call, 1, SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, bit, bit));
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
                if (rc == 0)
                    rc = seccomp_rule_add(ctx.get(), eperm, call, 2, SCMP_CMP(flags_arg, SCMP_CMP_MASKED_EQ, flag, flag),
                                          SCMP_CMP(mode_arg, SCMP_CMP_MASKED_EQ, bit, bit));
    };
    creating_rule(SCMP_SYS(open), 1, 2);
    creating_rule(SCMP_SYS(openat), 2, 3);
    // As if the kernel had none of them: glibc falls back to the calls above.
    for (int call : {nr_io_uring_setup, nr_openat2, nr_fchmodat2})
        if (rc == 0) rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(ENOSYS), call, 0);
    if (rc != 0) {
        why = std::string("seccomp_rule_add: ") + std::strerror(-rc);
        return nullptr;
    }
    return ctx;
}

}  // namespace

std::string write_setid_filter(int fd)
{
    std::string why;
    const auto ctx = setid_filter(why);
    if (!ctx) return why;
    if (const int e = seccomp_export_bpf(ctx.get(), fd); e != 0) return std::string("seccomp_export_bpf: ") + std::strerror(-e);
    return {};
}

std::string load_setid_filter()
{
    std::string why;
    const auto ctx = setid_filter(why);
    if (!ctx) return why;
    if (const int e = seccomp_load(ctx.get()); e != 0) return std::string("seccomp_load: ") + std::strerror(-e);
    return {};
}

}  // namespace sandbox::detail
