// SPDX-License-Identifier: BSL-1.0
// What a launch applies to its child between the fork and the exec: the cgroups it joins,
// its limits, a private mount namespace with a few binds, the user it becomes, and the
// kernel's confinement (no_new_privs, a Landlock domain, a seccomp filter). The spawn helper
// (src/helpers/spawn_helper.cpp) applies it in plain linear code, so no shell, setpriv or
// launcher program runs in front of the sandbox's own program.
#ifndef SANDBOX_SRC_RUN_CONFINEMENT_HPP
#define SANDBOX_SRC_RUN_CONFINEMENT_HPP

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sandbox::detail {

/// One step in the child's private mount namespace, made as root before it drops to its user.
struct mount_step {
    enum class kind : std::uint8_t {
        bind,  ///< `source` bound on `target`, then made nosuid and nodev
        tmp,   ///< a tmpfs of `size` bytes (mode 1777, nosuid, nodev) over /tmp, `keep` bound back in place
    };
    kind what = kind::bind;
    std::string source, target;
    std::uint64_t size = 0;
    std::vector<std::string> keep;  ///< paths below /tmp that stay visible (opened before /tmp is covered)
    /// A bind onto a path the policy names: the target as the launch pinned it (sys/mounts.hpp).
    /// Reached without a symbolic link and checked to be that directory, then mounted on
    /// through its descriptor, so a component swapped meanwhile moves nothing. 0: by path.
    std::uint64_t dev = 0, ino = 0;
};

struct confinement {
    /// cgroup.procs files the child writes its pid to: it is inside before it can fork.
    std::vector<std::string> cgroup_procs;
    /// RLIMIT_AS, soft and hard (0: unchanged).
    std::uint64_t rlimit_as = 0;
    /// RLIMIT_NPROC, soft and hard (0: unchanged).
    std::uint64_t rlimit_nproc = 0;
    /// A private mount namespace (propagation private) with these steps.
    bool private_mounts = false;
    std::vector<mount_step> mounts;
    /// An unprivileged caller's landlock run: a user namespace of the caller's own uid and gid
    /// and a mount namespace in which every mount is read-only but the `writable` trees (bind
    /// steps onto themselves, pinned as `mounts` are, cloned before the rest is made
    /// read-only). Landlock does not govern chmod, chown, utimensat or extended attributes;
    /// outside its writable paths the command's calls then fail with EROFS.
    bool read_only_view = false;
    std::vector<mount_step> writable;
    /// The user to become, with no supplementary groups, an empty bounding set and no
    /// capabilities. nullopt: unchanged.
    std::optional<std::pair<uid_t, gid_t>> user;
    /// The program is set-uid (firejail): the bounding set stays full for it, as a set-uid
    /// program started by that user normally has it.
    bool setuid_program = false;
    /// Signal the child gets when the thread that started the library's spawn helper ends;
    /// set after the change of user (which clears it), and the child gives up at once if the
    /// library is gone already. 0: none.
    int parent_death_signal = 0;
    bool no_new_privs = false;
    /// Descriptors the child uses and closes before the exec (not the command's): a Landlock
    /// ruleset to restrict itself with, and a seccomp BPF program to load, last. -1: none.
    int landlock_ruleset = -1;
    int seccomp_program = -1;

    bool empty() const noexcept
    {
        return cgroup_procs.empty() && !rlimit_as && !rlimit_nproc && !private_mounts && mounts.empty() && !read_only_view && !user &&
               !parent_death_signal && !no_new_privs && landlock_ruleset < 0 && seccomp_program < 0;
    }
};

}  // namespace sandbox::detail

#endif
