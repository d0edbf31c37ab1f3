#!/usr/bin/env bash
# Sets up everything the tests need (build dependencies and the real engines: Docker,
# Podman, bubblewrap, firejail, Slurm), builds, and runs the whole suite three times: a normal
# build, an AddressSanitizer + UndefinedBehaviorSanitizer build and a ThreadSanitizer build;
# then fuzzes every parser of outside input with libFuzzer for FUZZ_SECONDS (default 60) a
# target. Fails when a test fails, a sanitizer reports anything or a fuzzer finds a crash.
#
# The suites mostly wait on engines, so each next build runs beside the tests before it, at
# idle CPU and I/O priority: it takes only what the tests leave, and they run as they would
# alone. SANDBOX_TEST_OVERLAP=0 builds and tests strictly one after another.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
if [ -x scripts/setup-engines.sh ]; then
    scripts/setup-engines.sh
fi

cpus=$(nproc 2>/dev/null || echo 2)
overlap=${SANDBOX_TEST_OVERLAP:-1}
logs=$(mktemp -d "${TMPDIR:-/tmp}/sandbox-test-builds.XXXXXX")
declare -A build_pid build_t0
# A failed stage leaves no build running behind it: each runs in a session of its own.
stop_builds() {
    local pid
    for pid in "${build_pid[@]}"; do [ -n "$pid" ] && kill -- "-$pid" 2>/dev/null || true; done
    rm -rf "$logs"
}
trap stop_builds EXIT

asan=(build-sanitize -DSANDBOX_ENABLE_SANITIZERS=ON -DSANDBOX_BUILD_BENCH=OFF -DSANDBOX_BUILD_EXAMPLES=OFF -DSANDBOX_INSTALL=OFF)
tsan=(build-tsan -DSANDBOX_ENABLE_TSAN=ON -DSANDBOX_BUILD_BENCH=OFF -DSANDBOX_BUILD_EXAMPLES=OFF -DSANDBOX_INSTALL=OFF)

# start_build NAME COMMAND...: runs a build in the background, at idle priority.
start_build() {
    local name=$1
    shift
    build_t0[$name]=$SECONDS
    if [ "$overlap" = 1 ]; then
        setsid chrt --idle 0 ionice -c 3 "$@" >"$logs/$name.log" 2>&1 &
        build_pid[$name]=$!
    else
        build_pid[$name]=""
    fi
}
# finish_build NAME COMMAND...: waits for a build started by start_build (or, without
# overlap, runs it now) and shows its output.
finish_build() {
    local name=$1 rc=0 waited=$SECONDS
    shift
    if [ -n "${build_pid[$name]}" ]; then
        wait "${build_pid[$name]}" || rc=$?
        build_pid[$name]=""
        cat "$logs/$name.log"
        echo "   $name: built in $((SECONDS - build_t0[$name])) s beside the tests before it, $((SECONDS - waited)) s of it after them"
    else
        "$@" || rc=$?
        echo "   $name: built in $((SECONDS - waited)) s"
    fi
    return "$rc"
}
run_tests() {
    local dir=$1 t0=$SECONDS
    (cd "$dir" && ctest --output-on-failure --timeout 900 -j "$cpus")
    echo "   $dir: tested in $((SECONDS - t0)) s"
}

echo "== normal build"
t0=$SECONDS
scripts/build.sh build
echo "   build: built in $((SECONDS - t0)) s"
start_build asan scripts/build.sh "${asan[@]}"
echo "== normal tests"
run_tests build

echo "== sanitizer build (ASan + UBSan)"
finish_build asan scripts/build.sh "${asan[@]}"
start_build tsan scripts/build.sh "${tsan[@]}"
echo "== sanitizer tests (ASan + UBSan)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 LSAN_OPTIONS=suppressions=$PWD/test/lsan.supp UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_tests build-sanitize

echo "== sanitizer build (ThreadSanitizer)"
finish_build tsan scripts/build.sh "${tsan[@]}"
start_build fuzz env FUZZ_BUILD_ONLY=1 scripts/fuzz.sh
echo "== sanitizer tests (ThreadSanitizer)"
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/test/tsan.supp run_tests build-tsan

echo "== fuzzing (libFuzzer, ASan + UBSan)"
finish_build fuzz env FUZZ_BUILD_ONLY=1 scripts/fuzz.sh
scripts/fuzz.sh
echo "all tests passed"
