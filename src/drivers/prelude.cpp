// SPDX-License-Identifier: BSL-1.0
// Mounts a root caller makes for bubblewrap and firejail before they start unprivileged,
// in a mount namespace of their own: the host never sees them, and they go with the tool.
#include "drivers/plans.hpp"

namespace sandbox::detail {

std::vector<std::string> mount_prelude(const sandbox_setup& s, const std::vector<std::string>& steps)
{
    if (steps.empty()) return {};
    // "tmp" opens each kept path before /tmp is covered and binds it back from its
    // descriptor (-c: the path itself now names the new, empty /tmp); dash knows fds 3-9.
    std::vector<std::string> a{
        s.unshare, "--mount", "--propagation", "private", "--", "/bin/sh", "-c",
        "m=$1; shift\n"
        "fail() { echo \"sandbox: cannot bind $1\" >&2; exit 125; }\n"
        "while [ \"$1\" != -- ]; do\n"
        "  case $1 in\n"
        "  bind) \"$m\" --bind \"$2\" \"$3\" && \"$m\" -o remount,bind,nosuid,nodev \"$3\" \"$3\" || fail \"$2 on $3\"\n"
        "        shift 3 ;;\n"
        "  tmp) size=$2 n=$3 fd=3 kept=; shift 3\n"
        "       while [ \"$n\" -gt 0 ]; do\n"
        "         [ $fd -le 9 ] && eval \"exec $fd<\\\"\\$1\\\"\" || fail \"$1\"\n"
        "         kept=\"$kept $fd:$1\" fd=$((fd+1)) n=$((n-1)); shift\n"
        "       done\n"
        "       \"$m\" -t tmpfs -o \"size=$size,mode=1777,nosuid,nodev\" sandbox-tmp /tmp || fail /tmp\n"
        "       for e in $kept; do\n"
        "         fd=${e%%:*} p=${e#*:}\n"
        "         if [ -d /proc/self/fd/$fd ]; then mkdir -p \"$p\"; else mkdir -p \"${p%/*}\" && : > \"$p\"; fi\n"
        "         \"$m\" -c --bind /proc/self/fd/$fd \"$p\" || fail \"$p\"\n"
        "         eval \"exec $fd<&-\"\n"
        "       done ;;\n"
        "  *) fail \"(unknown step $1)\" ;;\n"
        "  esac\n"
        "done\n"
        "shift; exec \"$@\"",
        "sh", s.mount_tool};
    a.insert(a.end(), steps.begin(), steps.end());
    a.push_back("--");
    return a;
}

}  // namespace sandbox::detail
