#!/bin/sh
# unprivileged_drivers.sh TEST_DRIVERS DRIVERS: the driver suite for DRIVERS (comma-separated)
# as an unprivileged caller gets it. Under root it runs as uid 65534, which must be able to
# reach the build tree (its directories searchable by others, as a checkout normally is).
set -eu
bin=$1
drivers=$2
if [ "$(id -u)" != 0 ]; then
    exec env SANDBOX_TEST_DRIVERS="$drivers" "$bin" --report_level=short
fi
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }
if ! as_nobody test -x "$bin"; then
    echo "uid 65534 cannot reach $bin: every directory above it must be searchable by others (chmod o+x)" >&2
    exit 1
fi
cd /tmp
exec setpriv --reuid=65534 --regid=65534 --clear-groups -- \
    env HOME=/tmp TMPDIR=/tmp SANDBOX_TEST_DRIVERS="$drivers" "$bin" --report_level=short
