#!/usr/bin/env bash
# SPDX-License-Identifier: BSL-1.0
#
# The same batches through sandbox-run --batch and its peers, in one run, side by side:
#   1. many short commands (`true`)
#   2. fewer commands writing 10 MiB each to stdout (`head -c 10485760 /dev/zero`)
# through
#   - sandbox-run --batch JOBS -j N        results as JSON lines, output tails capped
#   - Python asyncio, a semaphore of N     bench/peers/asyncio_runner.py, the same jobs file
#   - GNU parallel -j N
#   - xargs -P N
# and prints wall time, jobs/s and each peer's time relative to sandbox-run's (the median
# of --repeat rounds; each round runs every runner once, in turn).
#
# What each one does with the 10 MiB, so that the comparison is read fairly:
#   sandbox-run  reads both pipes to EOF, keeps the last 1 KiB (--stdout-cap 1K) and writes a
#                JSON result line per job (with that tail) to a file;
#   asyncio      the same: pipes read to EOF, last 1 KiB kept, a JSON line per job;
#   parallel     its default --group mode: each job's output is spooled to a temp file by
#                parallel, then copied to parallel's stdout (/dev/null);
#   xargs        the children write straight to /dev/null: no pipe, no copy at all (a lower
#                bound on what any runner that looks at the output can do).
#
# Usage: bench/peers/run.sh [--sandbox-run PATH] [-j N] [--small N] [--big N] [--repeat R]
#                           [--only sandbox-run,asyncio,parallel,xargs]
# Needs: python3, GNU parallel (apt-get install -y parallel), xargs (findutils).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
sandbox_run="$root/build/src/cli/sandbox-run"
jobs=8
small=2000
big=200
repeat=3
only="sandbox-run,asyncio,parallel,xargs"
python=${PYTHON:-}

while (($#)); do
    case "$1" in
    --sandbox-run) sandbox_run=$2; shift 2 ;;
    -j) jobs=$2; shift 2 ;;
    --small) small=$2; shift 2 ;;
    --big) big=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    -h | --help) sed -n '3,26p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

[ -x "$sandbox_run" ] || { echo "run.sh: no sandbox-run at $sandbox_run (build it, or pass --sandbox-run)" >&2; exit 1; }
if [ -z "$python" ]; then
    if [ -x /usr/bin/python3 ]; then python=/usr/bin/python3; else python=$(command -v python3); fi
fi
if ! command -v parallel >/dev/null 2>&1; then
    echo "run.sh: installing GNU parallel" >&2
    sudo_cmd=(); [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq parallel >/dev/null
fi

work=$(mktemp -d /tmp/sandbox-peers-XXXXXX)
trap 'rm -rf "$work"' EXIT

# The jobs files (sandbox-run and asyncio) and the argument lists (parallel and xargs).
for ((i = 1; i <= small; i++)); do echo '{"argv":["true"]}'; done >"$work/small.jsonl"
for ((i = 1; i <= big; i++)); do echo '{"argv":["head","-c","10485760","/dev/zero"]}'; done >"$work/big.jsonl"
seq "$small" >"$work/small.args"
for ((i = 1; i <= big; i++)); do echo /dev/zero; done >"$work/big.args"

now() { echo "$EPOCHREALTIME"; }

# run_one RUNNER WORKLOAD -> prints the wall seconds; fails when the runner reports failure.
run_one() {
    local runner=$1 workload=$2 t0 t1 n cap_args=()
    [ "$workload" = big ] && cap_args=(--stdout-cap 1K --stderr-cap 1K)
    n=$([ "$workload" = big ] && echo "$big" || echo "$small")
    t0=$(now)
    case "$runner" in
    sandbox-run)
        "$sandbox_run" --batch "$work/$workload.jsonl" -j "$jobs" "${cap_args[@]}" --no-progress \
            -o "$work/out.jsonl" 2>"$work/err.txt" ;;
    asyncio)
        "$python" "$here/asyncio_runner.py" "$work/$workload.jsonl" -j "$jobs" \
            --cap "$([ "$workload" = big ] && echo 1024 || echo 1048576)" -o "$work/out.jsonl" ;;
    parallel)
        if [ "$workload" = big ]; then
            parallel --will-cite -j "$jobs" -N0 head -c 10485760 /dev/zero :::: "$work/big.args" >/dev/null
        else
            parallel --will-cite -j "$jobs" -N0 true :::: "$work/small.args" >/dev/null
        fi ;;
    xargs)
        if [ "$workload" = big ]; then
            xargs -P "$jobs" -n 1 head -c 10485760 <"$work/big.args" >/dev/null
        else
            xargs -P "$jobs" -n 1 true <"$work/small.args" >/dev/null
        fi ;;
    esac
    t1=$(now)
    case "$runner" in
    sandbox-run | asyncio)
        local lines
        lines=$(wc -l <"$work/out.jsonl")
        [ "$lines" -eq "$n" ] || { echo "run.sh: $runner wrote $lines results for $n jobs" >&2; exit 1; } ;;
    esac
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", b - a }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "machine: $(nproc) cores, $(uname -sr); sandbox-run $("$sandbox_run" --version | awk '{print $2}'), $("$python" --version 2>&1), $(parallel --version | head -n 1), $(xargs --version | head -n 1)"
echo "each figure: the median of $repeat rounds (runners interleaved), -j $jobs for every runner"

IFS=, read -r -a runners <<<"$only"
for workload in small big; do
    if [ "$workload" = small ]; then
        n=$small; title="$small x true"
    else
        n=$big; title="$big x head -c 10485760 /dev/zero (10 MiB of stdout each)"
    fi
    echo
    echo "== $title"
    printf '%-14s %9s %10s %18s\n' runner "wall s" "jobs/s" "time vs sandbox-run"
    # Rounds interleave the runners, so that a change in the machine's load during the run
    # falls on all of them alike; each figure is the median of its rounds.
    declare -A times=()
    for ((r = 0; r < repeat; r++)); do
        for runner in "${runners[@]}"; do times[$runner]+="$(run_one "$runner" "$workload") "; done
    done
    base=""
    for runner in "${runners[@]}"; do
        t=$(printf '%s\n' ${times[$runner]} | median)
        [ "$runner" = sandbox-run ] && base=$t
        rate=$(awk -v n="$n" -v t="$t" 'BEGIN { printf "%.0f", n / t }')
        if [ -n "$base" ]; then
            ratio=$(awk -v t="$t" -v b="$base" 'BEGIN { printf "%.2fx", t / b }')
        else
            ratio="-"
        fi
        printf '%-14s %9.3f %10s %18s\n' "$runner" "$t" "$rate" "$ratio"
    done
    unset times
done
echo
echo "time vs sandbox-run: a peer's wall time divided by sandbox-run's (above 1: sandbox-run is faster)"
