#!/usr/bin/env bash
# Configures and builds with warnings as errors. Usage: scripts/build.sh [build-dir] [extra cmake arguments...]
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
shift || true
jobs=$(nproc 2>/dev/null || echo 2)
launcher=()
# Rebuilds of the same sources (the three test builds share most of them) are much faster.
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" -DSANDBOX_WERROR=ON "${launcher[@]}" "$@" >/dev/null
cmake --build "$build_dir" -j "$jobs"
