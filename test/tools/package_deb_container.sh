#!/usr/bin/env bash
# Installs the .deb into a fresh Debian 12 container (the image scripts/setup-engines.sh makes
# with debootstrap: nothing but Debian's minimal base) with apt, as a user would, then runs
# sandbox-run and builds the consumer project against the installed package twice, with
# find_package and with pkg-config, and runs what it built. What the package declares
# (Depends and Recommends) must be all the consumer needs beside g++, CMake, make and
# pkg-config.
# Usage: package_deb_container.sh DEB SOURCE_DIR VERSION
set -euo pipefail
deb=$(realpath "$1") source_dir=$(realpath "$2") version=$3
image=${SANDBOX_TEST_DEBIAN_IMAGE:-sandbox-test/debian:12}
fail() { echo "package_deb_container: $*" >&2; exit 1; }

if [ -x /usr/bin/docker ]; then docker=/usr/bin/docker; else docker=$(command -v docker) || fail "docker is not installed (scripts/setup-engines.sh installs it)"; fi
"$docker" image inspect "$image" >/dev/null 2>&1 || fail "no image $image (scripts/setup-engines.sh makes it)"

# apt's downloads stay in a volume, so a second run installs without the network; the
# network is the host's, for apt (the engine here has no bridge).
# shellcheck disable=SC2016  # expanded in the container
timeout 900 "$docker" run --rm --network host \
    -v "$deb:/tmp/sandbox.deb:ro" -v "$source_dir/test/cmake_consumer:/consumer:ro" \
    -v sandbox-test-apt-archives:/var/cache/apt/archives \
    -e DEBIAN_FRONTEND=noninteractive -e VERSION="$version" "$image" sh -euc '
        step() { echo "container: $*"; }
        apt-get update -qq >/tmp/apt.log 2>&1 || { cat /tmp/apt.log; exit 1; }
        apt-get install -y -qq /tmp/sandbox.deb g++ cmake make pkg-config >>/tmp/apt.log 2>&1 ||
            { cat /tmp/apt.log; exit 1; }
        step "installed $(dpkg-query -W -f="\${Package} \${Version}" sandbox) with its Depends and Recommends"
        test "$(sandbox-run --version)" = "sandbox-run $VERSION"
        test "$(sandbox-run --timeout 5 -- sh -c "echo ran")" = ran
        step "sandbox-run runs: $(command -v sandbox-run)"
        cmake -S /consumer -B /tmp/with-cmake -DCMAKE_BUILD_TYPE=Release >/tmp/cmake.log 2>&1 &&
            cmake --build /tmp/with-cmake >>/tmp/cmake.log 2>&1 || { cat /tmp/cmake.log; exit 1; }
        /tmp/with-cmake/consumer >/tmp/consumer.log 2>&1 || { cat /tmp/consumer.log; exit 1; }
        step "find_package(sandbox): the consumer builds and passes ($(grep -c "^ok" /tmp/consumer.log) checks)"
        # shellcheck disable=SC2046
        g++ -std=c++20 -O1 -o /tmp/with-pc /consumer/main.cpp $(pkg-config --cflags --libs sandbox)
        /tmp/with-pc >/tmp/consumer.log 2>&1 || { cat /tmp/consumer.log; exit 1; }
        step "pkg-config sandbox: the consumer builds and passes ($(grep -c "^ok" /tmp/consumer.log) checks)"
    ' || fail "the package did not install, build against or run in a fresh $image container (above)"
echo "package_deb_container: all checks pass"
