#!/usr/bin/env bash
# The bash completion of sandbox-run, driven the way bash drives it (COMP_WORDS, COMP_CWORD),
# against a real sandbox-run whose --help gives the option names.
# Usage: bash_completion.sh COMPLETION_SCRIPT SANDBOX_RUN
# Each case runs twice: alone, and over bash-completion's own functions when they are
# installed (then commands complete through its _command_offset).
set -uo pipefail
script=$(realpath "$1") bin=$2
# A path is made absolute (the cases run elsewhere); a bare name is looked up on PATH.
[[ $bin == */* ]] && bin=$(realpath "$bin")

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/adir" && touch "$scratch/afile.json"
cd "$scratch" || exit 1

failures=0

# complete WORD... : COMPREPLY, one a line and sorted, for the command line "sandbox-run
# WORD..." with the cursor at the end of the last word.
complete_words()
{
    COMP_WORDS=("$bin" "$@")
    COMP_CWORD=$#
    COMP_LINE="${COMP_WORDS[*]}"
    COMP_POINT=${#COMP_LINE}
    COMPREPLY=()
    _sandbox_run "$bin" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}" 2>/dev/null
    printf '%s\n' "${COMPREPLY[@]}" | sort -u | sed '/^$/d'
}

# expect "WORDS" EXPECTED... : the completion is exactly EXPECTED.
expect()
{
    local words=$1 got want
    shift
    read -ra w <<<"$words"
    [[ $words == *' ' ]] && w+=("")
    got=$(complete_words "${w[@]}")
    want=$(printf '%s\n' "$@" | sort -u | sed '/^$/d')
    if [[ $got != "$want" ]]; then
        printf '%s: "sandbox-run %s<TAB>": expected [%s], got [%s]\n' "$mode" "$words" \
            "${want//$'\n'/ }" "${got//$'\n'/ }" >&2
        ((failures++))
    fi
}

# expect_has "WORDS" WANTED [UNWANTED]: WANTED is offered (and UNWANTED is not).
expect_has()
{
    local words=$1 got
    read -ra w <<<"$words"
    [[ $words == *' ' ]] && w+=("")
    got=$(complete_words "${w[@]}")
    if ! grep -qx -- "$2" <<<"$got" || { [[ -n ${3:-} ]] && grep -qx -- "$3" <<<"$got"; }; then
        printf '%s: "sandbox-run %s<TAB>": expected %s%s among [%s]\n' "$mode" "$words" "$2" \
            "${3:+ and no $3}" "${got//$'\n'/ }" >&2
        ((failures++))
    fi
}

run_cases()
{
    # Option names come from --help.
    expect "--dri" --driver
    expect "--no-net" --no-network
    expect "--jo" --jobs
    expect "--timeout 5 --memory 1G --dri" --driver
    expect_has "-" -j
    expect_has "-" --base-dir
    # Values.
    # Every driver --help lists, and no other word: the list is the library's table.
    drivers=$("$bin" --help | sed -n '/^Drivers:$/,/^$/s/^  \([a-z]*\) .*/\1/p')
    [[ $(wc -w <<<"$drivers") -ge 7 ]] || { echo "FAIL: --help lists no drivers: $drivers"; ((failures++)); }
    # shellcheck disable=SC2086
    expect "--driver " $drivers
    # shellcheck disable=SC2086
    expect "--driver = " $drivers
    expect "--driver = po" podman
    expect "--driver b" bubblewrap
    expect "--inner-driver " host bubblewrap
    expect "--inner-driver b" bubblewrap
    expect "--halt " never now,fail= soon,fail=
    expect "--halt n" never now,fail=
    expect "--war" --warm
    expect "--base-dir " adir
    expect_has "--policy " afile.json
    expect_has "-o " afile.json
    expect "--batch af" afile.json
    expect "--ro ad" adir
    expect "--timeout " ""
    # The command, after "--" or at the first word that is neither an option nor a value.
    expect_has "ech" echo
    expect_has "--driver host --timeout 5 ech" echo
    expect_has "rep" report
    expect_has "-- ech" echo
    expect "-- report" ""
    expect_has "-- echo af" afile.json
    # The report subcommand.
    expect_has "report " afile.json
    expect "report results.jsonl --o" --output
}

mode=alone
source "$script" || exit 1
run_cases
bash_completion=/usr/share/bash-completion/bash_completion
if [[ -r $bash_completion ]]; then
    mode=bash-completion
    source "$bash_completion" && source "$script" || exit 1
    declare -F _command_offset >/dev/null || { echo "$bash_completion has no _command_offset" >&2; exit 1; }
    run_cases
fi
if ((failures)); then
    echo "$failures completion case(s) failed" >&2
    exit 1
fi
echo "completion: all cases pass (${mode})"
