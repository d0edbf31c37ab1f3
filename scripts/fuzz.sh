#!/usr/bin/env bash
# Fuzzes every target in test/fuzz with clang's libFuzzer (ASan+UBSan), FUZZ_SECONDS each
# (default 60) of wall-clock time, FUZZ_JOBS targets at a time (default: all at once, so the
# whole run takes about FUZZ_SECONDS however many targets there are; they share the cores).
# Usage: scripts/fuzz.sh [target...]   (FUZZ_BUILD_ONLY=1: build the targets, run none)
# Each run starts from a copy of the target's seed corpus and regressions in
# build-fuzz/corpus/<target> (the repository is never written to); crash inputs go to
# build-fuzz/artifacts/<target>/. Exits non-zero when a target crashed.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
build=build-fuzz
build_jobs=$(nproc 2>/dev/null || echo 2)
all_targets=(policy_json job_line values cli_args workspace_paths)
targets=("${all_targets[@]}")
if (($#)); then targets=("$@"); fi

need_deps=0
command -v clang++ >/dev/null 2>&1 && command -v cmake >/dev/null 2>&1 || need_deps=1
for p in libclang-rt-14-dev libboost-json1.81-dev libboost-test1.81-dev libseccomp-dev pkg-config; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need_deps=1
done
if ((need_deps)); then scripts/install-deps.sh; fi

launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
# Only the fuzzers are built; the options keep the rest of the project out of the build.
CC=clang CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSANDBOX_BUILD_FUZZERS=ON \
    -DSANDBOX_BUILD_TESTS=ON -DSANDBOX_BUILD_CLI=OFF -DSANDBOX_BUILD_EXAMPLES=OFF -DSANDBOX_BUILD_BENCH=OFF \
    -DSANDBOX_INSTALL=OFF -DSANDBOX_BUILD_DOCS=OFF -DSANDBOX_ENABLE_SANITIZERS=OFF -DSANDBOX_ENABLE_TSAN=OFF \
    "${launcher[@]}" >/dev/null
cmake --build "$build" -j "$build_jobs" --target "${targets[@]/#/fuzz_}"
if [ "${FUZZ_BUILD_ONLY:-0}" = 1 ]; then exit 0; fi

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
run_one() {
    local t=$1 corpus=$build/corpus/$1 artifacts=$build/artifacts/$1
    rm -rf "$corpus" "$artifacts"
    mkdir -p "$corpus" "$artifacts"
    cp test/fuzz/corpus/"$t"/* "$corpus"/
    if [ -d test/fuzz/regressions/"$t" ]; then cp test/fuzz/regressions/"$t"/* "$corpus"/ 2>/dev/null || true; fi
    local rc=0
    "$build"/test/fuzz/fuzz_"$t" "$corpus" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
        -artifact_prefix="$artifacts"/ -print_final_stats=1 >"$build/artifacts/$t.log" 2>&1 || rc=$?
    echo "$rc" >"$build/artifacts/$t.rc"
}

jobs=${FUZZ_JOBS:-${#targets[@]}}
start=$(date +%s)
running=0
for t in "${targets[@]}"; do
    if ((running >= jobs)); then
        wait -n
        running=$((running - 1))
    fi
    run_one "$t" &
    running=$((running + 1))
done
wait

failed=0
printf '%-16s %8s %12s %9s %8s  %s\n' target seconds executions exec/s corpus result
for t in "${targets[@]}"; do
    log=$build/artifacts/$t.log
    rc=$(cat "$build/artifacts/$t.rc")
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
    size=$(find "$build/corpus/$t" -type f | wc -l)
    artifact=$(find "$build/artifacts/$t" -type f | head -1)
    if [ "$rc" = 0 ] && [ -z "$artifact" ]; then
        result=ok
    else
        result="CRASHED: ${artifact:-see $log} (copy it into test/fuzz/regressions/$t/)"
        failed=1
    fi
    printf '%-16s %8s %12s %9s %8s  %s\n' "$t" "${secs:-?}" "${execs:-?}" "${rate:-?}" "$size" "$result"
done
echo "fuzzing took $(($(date +%s) - start)) s; logs in $build/artifacts/"
exit "$failed"
