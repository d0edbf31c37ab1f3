#!/usr/bin/env bash
# The runner under the standard tools: Valgrind must run an execution to the end with no
# error and no definite leak, and a gdb breakpoint in the launching code must be hit once per
# launch (a launcher that hid its children from ptrace would make gdb drop breakpoints).
# Usage: debuggers.sh valgrind SANDBOX_RUN | debuggers.sh gdb FRESH_LAUNCH
set -euo pipefail
tool=$1 program=$2
case "$tool" in
valgrind)
    log=$(mktemp) errf=$(mktemp)
    trap 'rm -f "$log" "$errf"' EXIT
    # The library's worker threads live as long as the process: their stacks are "possibly
    # lost" at exit by design, so only definite leaks count.
    out=$(valgrind -q --log-file="$log" --error-exitcode=99 --leak-check=full --show-leak-kinds=definite \
        --errors-for-leak-kinds=definite \
        "$program" --timeout 10 -- sh -c 'echo hello; echo oops >&2; exit 3' 2>"$errf") && rc=0 || rc=$?
    err=$(cat "$errf")
    if [ "$rc" -ne 3 ] || [ "$out" != hello ] || [ "$err" != oops ] || [ -s "$log" ]; then
        printf 'exit %s, stdout "%s", stderr "%s"; valgrind said:\n' "$rc" "$out" "$err" >&2
        cat "$log" >&2
        exit 1
    fi
    echo "valgrind: clean run, exit 3 as the command"
    ;;
gdb)
    script=$(mktemp)
    trap 'rm -f "$script"' EXIT
    cat >"$script" <<'GDB'
set pagination off
set breakpoint pending on
break sandbox::detail::spawn_child
commands
silent
continue
end
run
info breakpoints
GDB
    out=$(gdb -batch -nx -x "$script" --args "$program" 2>&1)
    printf '%s\n' "$out" | grep -E 'commands from|breakpoint already hit|exited' >&2 || true
    # A here-string, not a pipe: grep -q stops at the first match, and under pipefail the
    # writer's SIGPIPE would fail a run that went well.
    grep -q 'exited normally' <<<"$out" || { printf '%s\n' "$out" | tail -20 >&2; exit 1; }
    hits=$(printf '%s\n' "$out" | sed -n 's/.*breakpoint already hit \([0-9]*\) time.*/\1/p')
    if [ -z "$hits" ] || [ "$hits" -lt 256 ]; then echo "the breakpoint was hit ${hits:-0} times for 256 launches" >&2; exit 1; fi
    echo "gdb: the breakpoint was hit $hits times for 256 launches"
    ;;
*) echo "usage: $0 valgrind|gdb PROGRAM" >&2; exit 2 ;;
esac
