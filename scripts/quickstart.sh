#!/usr/bin/env bash
# From nothing to the quickstart example's output on Debian 12, in about three minutes on two
# CPUs: installs only what building needs, builds the library and the example and runs it,
# then builds sandbox-run and the helpers the isolating drivers start. Optimised lightly
# (-O1), which compiles in about half the time of -O2; scripts/build.sh makes the full
# build, and the test command installs and builds everything else. Its own build directory,
# so the test command's build keeps its options.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --first-run
build_dir=build-quickstart
jobs=$(nproc 2>/dev/null || echo 2)
launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
    -DSANDBOX_BUILD_TESTS=OFF -DSANDBOX_BUILD_BENCH=OFF -DSANDBOX_BUILD_DOCS=OFF "${launcher[@]}" >/dev/null
cmake --build "$build_dir" -j "$jobs" --target quickstart
echo
"./$build_dir/examples/quickstart"
echo
cmake --build "$build_dir" -j "$jobs" --target sandbox-run sandbox-spawn sandbox-sweep sandbox-seccomp-exec sandbox-landlock-exec
echo "sandbox-run: $build_dir/src/cli/sandbox-run (try: $build_dir/src/cli/sandbox-run --help)"
