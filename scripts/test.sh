#!/usr/bin/env bash
# Sets up everything the tests need (build dependencies and the real engines: Docker,
# Podman, bubblewrap, firejail, Slurm), builds, and runs the whole suite three times: a normal
# build, an AddressSanitizer + UndefinedBehaviorSanitizer build and a ThreadSanitizer build;
# then fuzzes every parser of outside input with libFuzzer for FUZZ_SECONDS (default 60) a
# target. Fails when a test fails, a sanitizer reports anything or a fuzzer finds a crash.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
if [ -x scripts/setup-engines.sh ]; then
    scripts/setup-engines.sh
fi

jobs=$(nproc 2>/dev/null || echo 2)
run_suite() {
    local dir=$1
    shift
    local t0=$SECONDS
    scripts/build.sh "$dir" "$@"
    local t1=$SECONDS
    (cd "$dir" && ctest --output-on-failure --timeout 900 -j "$jobs")
    echo "   $dir: built in $((t1 - t0)) s, tested in $((SECONDS - t1)) s"
}

echo "== normal build"
run_suite build
echo "== sanitizer build (ASan + UBSan)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 LSAN_OPTIONS=suppressions=$PWD/test/lsan.supp UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_suite build-sanitize -DSANDBOX_ENABLE_SANITIZERS=ON -DSANDBOX_BUILD_BENCH=OFF -DSANDBOX_BUILD_EXAMPLES=OFF -DSANDBOX_INSTALL=OFF
echo "== sanitizer build (ThreadSanitizer)"
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/test/tsan.supp \
    run_suite build-tsan -DSANDBOX_ENABLE_TSAN=ON -DSANDBOX_BUILD_BENCH=OFF -DSANDBOX_BUILD_EXAMPLES=OFF -DSANDBOX_INSTALL=OFF
echo "== fuzzing (libFuzzer, ASan + UBSan)"
scripts/fuzz.sh
echo "all tests passed"
