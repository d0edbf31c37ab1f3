// SPDX-License-Identifier: BSL-1.0
// Idmapped bind mounts (Linux 5.12+, root only): a directory shown with its owner's ids
// replaced by the sandbox's, so that a command running as the sandbox uid can write where
// only the owner may, without the owner or mode changing on the host; what it creates there
// belongs to the owner.
#ifndef SANDBOX_SRC_SYS_IDMAP_HPP
#define SANDBOX_SRC_SYS_IDMAP_HPP

#include <sys/types.h>

#include <filesystem>
#include <string>

namespace sandbox::detail {

struct id_pair {
    uid_t uid;
    gid_t gid;
};

/// Clones the mount of the directory `source` (a descriptor: see open_pinned; not its submounts), idmapped so that `owner` appears as
/// `shown` (one id each), nosuid and nodev, and attaches it at `target` (an existing, empty
/// directory that only root may reach: whoever reaches it writes as the owner). Returns why
/// not, or empty, `name` naming the source. Blocking: never on an io thread.
std::string attach_idmapped(int source, const std::string& name, const std::filesystem::path& target, id_pair owner,
                            id_pair shown);

}  // namespace sandbox::detail

#endif
