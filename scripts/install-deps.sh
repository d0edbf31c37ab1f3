#!/usr/bin/env bash
# Installs what building and testing the library needs on Debian 12. Idempotent.
# --first-run: only what building the library, sandbox-run and the examples needs (the
# quickstart); the tests, the sanitizer runtimes, the browser and the packaging tools come
# with a plain run.
set -euo pipefail

first_run=(g++ cmake make pkg-config libboost1.81-dev libboost-json1.81-dev libseccomp-dev)
packages=(
    g++ cmake make pkg-config ccache gdb valgrind
    libboost1.81-dev libboost-json1.81-dev libboost-test1.81-dev
    util-linux procps python3 python3-jsonschema libseccomp-dev
    # sandbox-run report's test renders the page in a real browser.
    chromium
    # The .deb and its test: dpkg-shlibdeps (cpack's Depends), file, man, bash completion.
    dpkg-dev file groff-base man-db bash-completion
    # The API reference (target sandbox_doc) and its test, test_docs.
    doxygen
    # scripts/fuzz.sh: clang's libFuzzer and sanitizer runtimes.
    clang libclang-rt-14-dev
)

if [[ ${1:-} == --first-run ]]; then packages=("${first_run[@]}"); fi

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "installing: ${missing[*]}"
    sudo_cmd=()
    [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
