#!/usr/bin/env bash
# Install, start and verify the sandbox engines the isolating drivers use:
# bubblewrap, firejail, docker (dockerd) and podman (+ runc), plus a tiny local
# image "sandbox-test/busybox:latest" for docker and podman (no registry is reachable), and
# "sandbox-test/debian:12", Debian's minimal base made with debootstrap, into which the
# package test installs the .deb.
#
# Idempotent and quiet: re-running only does what is missing. Prints one
# "<engine>: ready" line per engine; exits non-zero naming the engine that fails.
# Must run as root (Debian 12).
#
# Environment:
#   SANDBOX_TEST_IMAGE   image name (default sandbox-test/busybox:latest)
#   SANDBOX_TEST_DEBIAN_IMAGE  the Debian image's name (default sandbox-test/debian:12)
#   DOCKERD_LOG          dockerd log file (default /var/log/dockerd.log)
#   DOCKER_WAIT_SECONDS  how long to wait for dockerd (default 30)
set -euo pipefail

IMAGE="${SANDBOX_TEST_IMAGE:-sandbox-test/busybox:latest}"
DOCKERD_LOG="${DOCKERD_LOG:-/var/log/dockerd.log}"
DOCKER_WAIT_SECONDS="${DOCKER_WAIT_SECONDS:-30}"
PODMAN_CONF=/etc/containers/containers.conf
# buildah: the orphan tests make a container in podman's storage only with it.
PACKAGES=(bubblewrap firejail docker.io podman runc buildah busybox-static uidmap iproute2 debootstrap)

export PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:${PATH:-}"

die() { echo "setup-engines: $*" >&2; exit 1; }

# Run a command quietly; on failure show its output and die with a message.
quiet() {
    local what="$1"; shift
    local out
    if ! out="$("$@" 2>&1)"; then
        printf '%s\n' "$out" >&2
        die "$what failed: $*"
    fi
}

[ "$(id -u)" -eq 0 ] || die "must run as root"

# ---------------------------------------------------------------- packages
missing=()
for p in "${PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$p")
    fi
done
if [ "${#missing[@]}" -gt 0 ]; then
    quiet "apt-get update" apt-get update -qq
    quiet "apt-get install ${missing[*]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The docker.io client (20.10, API 1.41) matches the daemon. A newer client earlier on
# PATH (e.g. /usr/local/bin/docker 28.x) negotiates the API down by itself, but we use
# the packaged one here so that a version skew can never break this script.
if [ -x /usr/bin/docker ]; then DOCKER=/usr/bin/docker; else DOCKER="$(command -v docker)" || die "docker: no docker client"; fi
PODMAN="$(command -v podman)" || die "podman: not found after install"
BWRAP="$(command -v bwrap)" || die "bubblewrap: bwrap not found after install"
FIREJAIL="$(command -v firejail)" || die "firejail: not found after install"
BUSYBOX=/bin/busybox
[ -x "$BUSYBOX" ] || die "busybox-static: $BUSYBOX missing"

# ---------------------------------------------------------------- dockerd
docker_up() { "$DOCKER" info >/dev/null 2>&1; }
if ! docker_up; then
    if ! pgrep -x dockerd >/dev/null 2>&1; then
        # A stale pid file from a dead daemon makes dockerd refuse to start.
        if [ -f /var/run/docker.pid ] && ! kill -0 "$(cat /var/run/docker.pid 2>/dev/null)" 2>/dev/null; then
            rm -f /var/run/docker.pid
        fi
        mkdir -p "$(dirname "$DOCKERD_LOG")"
        # setsid: its own session, so it outlives this script and its caller's group.
        setsid -f dockerd --iptables=false --bridge=none >>"$DOCKERD_LOG" 2>&1 </dev/null
    fi
    for _ in $(seq 1 "$((DOCKER_WAIT_SECONDS * 4))"); do
        docker_up && break
        pgrep -x dockerd >/dev/null 2>&1 || break      # it died: no point in waiting
        sleep 0.25
    done
    if ! docker_up; then
        tail -n 20 "$DOCKERD_LOG" >&2 || true
        die "docker: dockerd did not answer within ${DOCKER_WAIT_SECONDS}s (log: $DOCKERD_LOG)"
    fi
fi

# ---------------------------------------------------------------- podman config
# Set key = value inside [section] of a TOML file, keeping everything else.
# Replaces an existing (uncommented) key in that section, else adds the key at the end of
# the section, else appends the section. Rewrites the file only when something changed.
toml_set() {
    local file="$1" section="$2" key="$3" value="$4" tmp
    [ -f "$file" ] || : >"$file"
    tmp="$(mktemp "${file}.XXXXXX")"
    awk -v sec="[$section]" -v key="$key" -v val="$value" '
        function flush_missing() { if (in_sec && !done) { print key " = " val; done = 1 } }
        {
            line = $0; t = line; sub(/^[ \t]+/, "", t); sub(/[ \t]+$/, "", t)
            if (t ~ /^\[/) {                       # a section header
                flush_missing()
                in_sec = (t == sec); if (in_sec) seen = 1
                print line; next
            }
            if (in_sec && !done && t ~ ("^" key "[ \t]*=")) { print key " = " val; done = 1; skip_array = (t ~ /=[ \t]*\[/ && t !~ /\]/); next }
            if (skip_array) { if (t ~ /\]/) skip_array = 0; next }   # rest of a multi-line array we replaced
            print line
        }
        END {
            flush_missing()
            if (!seen) { if (NR > 0) print ""; print sec; print key " = " val }
        }' "$file" >"$tmp"
    if cmp -s "$tmp" "$file"; then rm -f "$tmp"; else chmod 0644 "$tmp"; mv -f "$tmp" "$file"; fi
}
mkdir -p /etc/containers
# crun fails on hybrid cgroups ("cgroups in hybrid mode not supported"): use runc.
toml_set "$PODMAN_CONF" engine runtime '"runc"'
# No systemd as PID 1 here.
toml_set "$PODMAN_CONF" engine cgroup_manager '"cgroupfs"'
toml_set "$PODMAN_CONF" engine events_logger '"file"'
# Podman's default RLIMIT_NOFILE (1048576) is above this machine's hard limit and the
# session lacks CAP_SYS_RESOURCE: "setrlimit ... operation not permitted" without this.
toml_set "$PODMAN_CONF" containers default_ulimits '["nofile=1024:1024", "nproc=4096:4096"]'
# "podman run --init" looks for /usr/libexec/podman/catatonit (package catatonit, not
# installed); tini-static (package tini, a dependency of docker.io) does the same job and,
# being static, also works inside the busybox image.
if [ -x /usr/bin/tini-static ]; then
    toml_set "$PODMAN_CONF" containers init_path '"/usr/bin/tini-static"'
fi

# ---------------------------------------------------------------- image
build_rootfs() {
    local dir="$1" a
    mkdir -p "$dir/bin" "$dir/etc" "$dir/tmp" "$dir/work" "$dir/mnt" "$dir/proc" "$dir/dev" "$dir/sys" "$dir/root"
    cp "$BUSYBOX" "$dir/bin/busybox"
    chmod 0755 "$dir/bin/busybox"
    for a in $("$BUSYBOX" --list); do
        [ "$a" = busybox ] || ln -sf busybox "$dir/bin/$a"
    done
    ln -sf busybox "$dir/bin/sh"
    ln -s bin "$dir/sbin"
    mkdir -p "$dir/usr"
    ln -s ../bin "$dir/usr/bin"
    ln -s ../bin "$dir/usr/sbin"
    printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n' >"$dir/etc/passwd"
    printf 'root:x:0:\nnogroup:x:65534:\nnobody:x:65534:\n' >"$dir/etc/group"
    chmod 1777 "$dir/tmp"
    chmod 0755 "$dir/work" "$dir/mnt"
}
rootfs=""
cleanup() { if [ -n "$rootfs" ]; then rm -rf -- "$rootfs"; fi; }
trap cleanup EXIT
ensure_rootfs() {
    if [ -z "$rootfs" ]; then
        rootfs="$(mktemp -d /tmp/sandbox-image.XXXXXX)"
        build_rootfs "$rootfs"
    fi
}
if ! "$DOCKER" image inspect "$IMAGE" >/dev/null 2>&1; then
    ensure_rootfs
    # shellcheck disable=SC2016 # expanded by the inner sh
    quiet "docker import" sh -c 'tar -C "$1" -c . | "$2" import -c "ENV PATH=/bin" - "$3"' _ "$rootfs" "$DOCKER" "$IMAGE"
fi
if ! "$PODMAN" image exists "$IMAGE" 2>/dev/null; then
    ensure_rootfs
    # shellcheck disable=SC2016 # expanded by the inner sh
    quiet "podman import" sh -c 'tar -C "$1" -c . | "$2" import -c "ENV PATH=/bin" - "$3"' _ "$rootfs" "$PODMAN" "$IMAGE"
fi

# ---------------------------------------------------------------- a fresh Debian
# The package test installs the .deb into this: Debian 12's minimal base, from the mirror apt
# uses here, made by debootstrap once (about a minute).
DEBIAN_IMAGE="${SANDBOX_TEST_DEBIAN_IMAGE:-sandbox-test/debian:12}"
if ! "$DOCKER" image inspect "$DEBIAN_IMAGE" >/dev/null 2>&1; then
    mirror="$(sed -n 's/^URIs: *\(http[^ ]*\/debian\)\/*$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)"
    [ -n "$mirror" ] || mirror="$(awk '$1 == "deb" && $2 ~ /\/debian\/?$/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null)"
    debian_root="$(mktemp -d /tmp/sandbox-debian.XXXXXX)"
    quiet "debootstrap" timeout 900 debootstrap --variant=minbase bookworm "$debian_root" "${mirror:-http://deb.debian.org/debian}"
    # shellcheck disable=SC2016 # expanded by the inner sh
    quiet "docker import $DEBIAN_IMAGE" timeout 300 sh -c 'tar -C "$1" -c . | "$2" import - "$3"' _ "$debian_root" "$DOCKER" "$DEBIAN_IMAGE"
    rm -rf -- "$debian_root"
fi
echo "debian: ready (image $DEBIAN_IMAGE)"

# ---------------------------------------------------------------- verify
# verify ENGINE EXPECTED_OUTPUT CMD...: run CMD once, die naming ENGINE unless it exits 0
# and prints exactly EXPECTED_OUTPUT.
verify() {
    local engine="$1" expected="$2" out rc=0; shift 2
    out="$("$@" 2>&1)" || rc=$?
    if [ "$rc" -ne 0 ] || [ "$out" != "$expected" ]; then
        printf '%s\n' "$out" >&2
        die "$engine: does not work (exit $rc, expected output '$expected'): $*"
    fi
}
verify docker ok "$DOCKER" run --rm --network=none "$IMAGE" echo ok
# The driver finds "docker" on PATH, which may be another client (here /usr/local/bin/docker
# 28.x). It negotiates the API version down to the daemon's 1.41; make sure it really does.
path_docker="$(command -v docker || true)"
if [ -n "$path_docker" ] && [ "$path_docker" != "$DOCKER" ]; then
    if ! "$path_docker" version --format '{{.Server.APIVersion}}' >/dev/null 2>&1; then
        die "docker: $path_docker (first on PATH) cannot talk to the daemon; use DOCKER_BIN=$DOCKER or DOCKER_API_VERSION=$("$DOCKER" version --format '{{.Server.APIVersion}}')"
    fi
fi
echo "docker: ready ($("$DOCKER" version --format '{{.Server.Version}}' 2>/dev/null), client $DOCKER, image $IMAGE)"

verify podman ok "$PODMAN" run --rm --network=none "$IMAGE" echo ok
echo "podman: ready ($("$PODMAN" version --format '{{.Client.Version}}' 2>/dev/null), runtime runc, image $IMAGE)"

# The same shape as the driver's launch: user+pid+net namespaces, uid 65534, /proc, /dev.
bwrap_args=(--unshare-all --unshare-user --disable-userns --die-with-parent --new-session
            --uid 65534 --gid 65534 --cap-drop ALL --clearenv --setenv PATH /usr/bin:/bin
            --proc /proc --dev /dev --tmpfs /tmp --ro-bind /usr /usr)
for d in bin lib lib64 sbin; do
    if [ -L "/$d" ]; then bwrap_args+=(--symlink "$(readlink "/$d")" "/$d")
    elif [ -d "/$d" ]; then bwrap_args+=(--ro-bind "/$d" "/$d"); fi
done
verify bubblewrap ok "$BWRAP" "${bwrap_args[@]}" --remount-ro / -- sh -c 'echo x >/dev/null && echo ok'
echo "bubblewrap: ready ($("$BWRAP" --version 2>/dev/null))"

# Under a root caller the firejail driver runs commands as this unprivileged account (firejail
# would run them as root). firejail needs the account to have a home directory and a shell;
# its password stays locked.
FIREJAIL_USER=sandbox-run
if ! getent passwd "$FIREJAIL_USER" >/dev/null; then
    useradd --system --create-home --home-dir "/var/lib/$FIREJAIL_USER" --shell /bin/sh "$FIREJAIL_USER" \
        || die "firejail: cannot create the account $FIREJAIL_USER"
fi
fj_home="$(getent passwd "$FIREJAIL_USER" | cut -d: -f6)"
mkdir -p "$fj_home" && chown "$FIREJAIL_USER:" "$fj_home" && chmod 0700 "$fj_home"
# The tests' unprivileged caller for firejail, which refuses an account with no shell or
# home (uid 65534 has neither).
TEST_USER=sandbox-tester
if ! getent passwd "$TEST_USER" >/dev/null; then
    useradd --system --create-home --home-dir "/var/lib/$TEST_USER" --shell /bin/sh "$TEST_USER" \
        || die "cannot create the test account $TEST_USER"
fi
verify firejail ok "$FIREJAIL" --quiet --noprofile --net=none -- echo ok
if [ "$(id -u)" = 0 ]; then
    verify "firejail as $FIREJAIL_USER" "$FIREJAIL_USER" setpriv --reuid="$FIREJAIL_USER" --regid="$FIREJAIL_USER" \
        --clear-groups -- "$FIREJAIL" --quiet --noprofile --net=none -- id -un
fi
echo "firejail: ready ($("$FIREJAIL" --version 2>/dev/null | head -n1))"

# The slurm driver's cluster: a single-node Slurm (munge, slurmctld, slurmd) on this host.
"$(dirname "$0")/setup-slurm.sh"
