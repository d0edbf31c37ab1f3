#!/usr/bin/env bash
# Configures and builds with warnings as errors. Usage: scripts/build.sh [build-dir] [extra cmake arguments...]
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
shift || true
jobs=$(nproc 2>/dev/null || echo 2)
launcher=()
# Rebuilds of the same sources are much faster. Paths inside the checkout are hashed relative
# to it, so another clone of the project (a CI checkout) reuses what this one compiled.
if command -v ccache >/dev/null 2>&1; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}
fi
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" -DSANDBOX_WERROR=ON "${launcher[@]}" "$@" >/dev/null
cmake --build "$build_dir" -j "$jobs"
