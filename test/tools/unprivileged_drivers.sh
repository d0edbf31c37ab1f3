#!/bin/sh
# unprivileged_drivers.sh TEST_DRIVERS DRIVERS [ARGS...]: the driver suite (or what ARGS
# select) for DRIVERS (comma-separated) as an unprivileged caller gets it. Under root it runs as uid 65534, which must be able to
# reach the build tree (its directories searchable by others, as a checkout normally is).
set -eu
bin=$1
drivers=$2
shift 2
if [ "$(id -u)" != 0 ]; then
    exec env SANDBOX_TEST_DRIVERS="$drivers" "$bin" --report_level=short "$@"
fi
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }
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
    echo "uid 65534 cannot reach $bin" >&2
    exit 1
fi
cd /tmp
as_nobody env HOME=/tmp TMPDIR=/tmp SANDBOX_TEST_DRIVERS="$drivers" "$bin" --report_level=short "$@"
