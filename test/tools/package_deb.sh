#!/usr/bin/env bash
# Builds the .deb with `cpack -G DEB` from a built tree, then checks what it holds, its
# control fields, and that what it installs works from an extracted copy: sandbox-run runs,
# its manual page renders, its bash completion completes, the pkg-config file links a
# program, the CMake package files are there; then installs it into a fresh Debian 12
# container (package_deb_container.sh).
# Usage: package_deb.sh BUILD_DIR VERSION PREFIX BINDIR LIBDIR LIBEXECDIR INCLUDEDIR DATADIR MANDIR
# (the install directories relative to PREFIX, as GNUInstallDirs gives them).
set -euo pipefail
build_dir=$1 version=$2 prefix=$3 bindir=$4 libdir=$5 libexecdir=$6 includedir=$7 datadir=$8 mandir=$9
tools=$(cd "$(dirname "$0")" && pwd)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "package_deb: $*" >&2; exit 1; }

# A tool that is missing is a failure, never a skip: the package is what users install.
for tool in cpack dpkg-deb man pkg-config g++; do
    command -v "$tool" >/dev/null || fail "$tool is not installed (scripts/install-deps.sh installs it)"
done

(cd "$build_dir" && cpack -G DEB -B "$tmp/out") >"$tmp/cpack.log" 2>&1 ||
    { cat "$tmp/cpack.log" >&2; fail "cpack -G DEB failed"; }
debs=("$tmp"/out/*.deb)
((${#debs[@]} == 1)) && [[ -f ${debs[0]} ]] || fail "expected one .deb in $tmp/out, got: ${debs[*]}"
deb=${debs[0]}
arch=$(dpkg --print-architecture)
[[ $(basename "$deb") == "sandbox_${version}_${arch}.deb" ]] || fail "unexpected file name $(basename "$deb")"
echo "built $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB)"

# Contents.
# "mode owner size date time ./path[ -> target]" -> "/path"
dpkg-deb -c "$deb" | sed -E 's/^([^ ]+ +){5}\.//; s/ -> .*//' >"$tmp/contents"
p=${prefix%/}
wanted=(
    "$p/$bindir/sandbox-run"
    "$p/$libexecdir/sandbox/sandbox-seccomp-exec"
    "$p/$libexecdir/sandbox/sandbox-landlock-exec"
    "$p/$libexecdir/sandbox/sandbox-spawn"
    "$p/$libexecdir/sandbox/sandbox-sweep"
    "$p/$datadir/doc/sandbox/copyright"
    "$p/$includedir/sandbox/sandbox.hpp"
    "$p/$includedir/sandbox/version.hpp"
    "$p/$libdir/cmake/sandbox/sandboxConfig.cmake"
    "$p/$libdir/cmake/sandbox/sandboxConfigVersion.cmake"
    "$p/$libdir/cmake/sandbox/sandboxTargets.cmake"
    "$p/$libdir/pkgconfig/sandbox.pc"
    "$p/$mandir/man1/sandbox-run.1"
    "$p/$datadir/bash-completion/completions/sandbox-run"
)
for f in "${wanted[@]}"; do
    grep -qxF -- "$f" "$tmp/contents" || fail "$f is not in the package; it holds:$(printf '\n  %s' $(cat "$tmp/contents"))"
done
grep -qE "^$p/$libdir/libsandbox\.(a|so\.[0-9.]+)$" "$tmp/contents" || fail "no libsandbox in $p/$libdir"
# Only what the install rules install: no test, example or benchmark program.
if grep -E '/(test_|bench_|sandbox_test_child)' "$tmp/contents"; then fail "build-only files in the package"; fi

# Control fields.
field() { dpkg-deb -f "$deb" "$1"; }
[[ $(field Package) == sandbox ]] || fail "Package: $(field Package)"
[[ $(field Version) == "$version" ]] || fail "Version: $(field Version), expected $version"
[[ $(field Architecture) == "$arch" ]] || fail "Architecture: $(field Architecture)"
[[ $(field Maintainer) == *@* ]] || fail "Maintainer: $(field Maintainer)"
[[ -n $(field Description) ]] || fail "no Description"
depends=$(field Depends)
# From dpkg-shlibdeps: the libraries the programs really link.
for d in libc6 libstdc++6 libseccomp2; do
    [[ $depends == *"$d "* || $depends == *"$d," || $depends == *"$d" ]] || fail "Depends lacks $d: $depends"
done
[[ $(field Recommends) == *libseccomp-dev* ]] || fail "Recommends: $(field Recommends)"
dpkg-deb -I "$deb"

# The extracted tree works.
root=$tmp/root
dpkg-deb -x "$deb" "$root"
export LD_LIBRARY_PATH="$root$p/$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"  # if the library is shared
run=$root$p/$bindir/sandbox-run
[[ $("$run" --version) == "sandbox-run $version" ]] || fail "sandbox-run --version said: $("$run" --version)"
[[ $("$run" --timeout 5 -- sh -c 'echo ran') == ran ]] || fail "sandbox-run -- sh -c 'echo ran' failed"
[[ -x $root$p/$libexecdir/sandbox/sandbox-seccomp-exec ]] || fail "sandbox-seccomp-exec is not executable"
cmp -s "$root$p/$datadir/doc/sandbox/copyright" "$tools/../../LICENSE" || fail "share/doc/sandbox/copyright is not the LICENSE"
echo "extracted sandbox-run runs: $("$run" --version)"

# The manual page renders without a warning.
page=$root$p/$mandir/man1/sandbox-run.1
LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" >"$tmp/man.txt" 2>"$tmp/man.err" ||
    { cat "$tmp/man.err" >&2; fail "man -l $page failed"; }
[[ ! -s $tmp/man.err ]] || { cat "$tmp/man.err" >&2; fail "man -l $page warned"; }
for section in NAME SYNOPSIS DESCRIPTION OPTIONS 'BATCH FILES' 'EXIT STATUS' ENVIRONMENT EXAMPLES 'SEE ALSO'; do
    grep -q "^$section\$" "$tmp/man.txt" || fail "the manual page has no $section section"
done
echo "man -l renders $(wc -l <"$tmp/man.txt") lines"

# The completion, from the package, for "sandbox-run" found on PATH.
PATH="$root$p/$bindir:$PATH" "$tools/bash_completion.sh" \
    "$root$p/$datadir/bash-completion/completions/sandbox-run" sandbox-run

# pkg-config: its flags build and link a program against the extracted tree.
export PKG_CONFIG_PATH="$root$p/$libdir/pkgconfig"
flags=$(pkg-config --cflags --libs sandbox) || fail "pkg-config --cflags --libs sandbox failed"
[[ $flags == *"-I$root"* && $flags == *"-L$root"* ]] || fail "sandbox.pc does not point into the tree: $flags"
[[ $(pkg-config --modversion sandbox) == "$version" ]] || fail "sandbox.pc version: $(pkg-config --modversion sandbox)"
# shellcheck disable=SC2086  # the flags are words
g++ -std=c++20 -o "$tmp/consumer" "$tools/../cmake_consumer/main.cpp" $flags ||
    fail "building against sandbox.pc failed (flags: $flags)"
"$tmp/consumer" || fail "the program built with sandbox.pc failed"
echo "pkg-config: $flags"

# Installed with apt into a fresh Debian 12 container, where a consumer builds against it.
"$tools/package_deb_container.sh" "$deb" "$tools/../.." "$version"
echo "package_deb: all checks pass"
