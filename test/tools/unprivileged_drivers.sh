#!/bin/sh
# unprivileged_drivers.sh TEST_DRIVERS DRIVERS [ARGS...]: the driver suite (or what ARGS
# select) for DRIVERS (comma-separated) as an unprivileged caller gets it. Under root it runs
# as SANDBOX_TEST_UNPRIVILEGED_USER (default uid 65534), which must be able to reach the
# build tree (its directories searchable by others, as a checkout normally is).
set -eu
bin=$1
drivers=$2
shift 2
if [ "$(id -u)" != 0 ]; then
    exec env SANDBOX_TEST_DRIVERS="$drivers" "$bin" --report_level=short "$@"
fi
user=${SANDBOX_TEST_UNPRIVILEGED_USER:-65534}
if ! uid=$(id -u "$user" 2>/dev/null); then
    echo "no account $user: scripts/setup-engines.sh makes it" >&2
    exit 1
fi
gid=$(id -g "$user")
as_nobody() { setpriv --reuid="$uid" --regid="$gid" --clear-groups -- "$@"; }
# A checkout below a private directory (/root, say): the directories above the build tree
# are made searchable (not readable) by others for the run, and put back afterwards.
opened=
restore() { for d in $opened; do chmod o-x "$d"; done; }
trap restore EXIT
dir=$(dirname "$(readlink -f "$bin")")
while [ "$dir" != / ]; do
    if [ -z "$(find "$dir" -maxdepth 0 -perm -o+x)" ]; then
        chmod o+x "$dir"
        opened="$opened $dir"
    fi
    dir=$(dirname "$dir")
done
if ! as_nobody test -x "$bin"; then
    echo "uid $uid cannot reach $bin" >&2
    exit 1
fi
cd /tmp
as_nobody env HOME=/tmp TMPDIR=/tmp SANDBOX_TEST_DRIVERS="$drivers" "$bin" --report_level=short "$@"
