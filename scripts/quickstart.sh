#!/usr/bin/env bash
# From nothing to the quickstart example's output on Debian 12: installs only what building
# needs, builds the library, sandbox-run, the helpers and the example (no tests: the test
# command installs and builds the rest), and runs it. Its own build directory, so the test
# command's build keeps its options.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --first-run
build_dir=build-quickstart
launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DSANDBOX_BUILD_TESTS=OFF -DSANDBOX_BUILD_BENCH=OFF \
    -DSANDBOX_BUILD_DOCS=OFF "${launcher[@]}" >/dev/null
cmake --build "$build_dir" -j "$(nproc 2>/dev/null || echo 2)" \
    --target sandbox sandbox-run sandbox-spawn sandbox-sweep sandbox-seccomp-exec sandbox-landlock-exec quickstart
echo
"./$build_dir/examples/quickstart"
