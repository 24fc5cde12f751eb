#!/usr/bin/env bash
# The man page (scripts/make-man) holds every command's help, as the binary
# prints it, and groff formats it without a warning, at most 80 columns wide;
# its sections say what the binary does (ENVIRONMENT, EXIT STATUS) and its
# EXAMPLES run; it is readable by everyone (0644).
# usage: check_man.sh WATTSIM.1 WATTSIM
set -uo pipefail
page=$1 ws=$2
fail=0
[[ -s $page ]] || { echo "check_man: $page is missing or empty"; exit 1; }
if ! command -v groff >/dev/null; then
    echo "check_man: no groff: only the sections are checked"
fi
text=''
if command -v groff >/dev/null; then
    warn=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
    [[ -z $warn ]] || { echo "check_man: groff warns:"; echo "$warn"; fail=1; }
    text=$(groff -man -Tutf8 "$page" 2>/dev/null | col -bx)
fi
# has LINE: the formatted page has the line (leading blanks aside)
has() { grep -qF -- "$(sed 's/^ *//' <<<"$1")" <<<"$text"; }
for c in "" run simulate plan pareto list sweep curves "merge sweep" potential frontiers \
         report "groups synth" "groups replay" "trace import power" "trace import train" \
         "trace check" "policy new" "policy check" serve; do
    [[ -z $c ]] || grep -qF -- ".SS \"wattsim $c\"" "$page" ||
        { echo "check_man: no section for '$c'"; fail=1; }
    [[ -n $text ]] || continue
    # every line of the command's help is in the formatted page: nothing
    # was lost to roff requests or escapes
    # shellcheck disable=SC2086 # the command's words
    while IFS= read -r line; do
        [[ -z ${line// /} ]] && continue
        # the main usage line is the SYNOPSIS (without its "usage: ")
        [[ -z $c && $line == usage:* ]] && line=${line#usage: }
        has "$line" || { echo "check_man: '$c --help': the page lacks: $line"; fail=1; }
    done < <("$ws" $c --help 2>&1)
done
# section NAME: the formatted page's lines from heading NAME to the next
section() { awk -v h="$1" '/^[A-Z][A-Z ]*$/ {on = ($0 == h); next} on' <<<"$text"; }
mode=$(stat -c %a -- "$page")
[[ $mode == 644 ]] || { echo "check_man: $page is mode $mode, not 644"; fail=1; }
if [[ -n $text ]]; then
    # nothing wider than a terminal's 80 columns
    wide=$(awk 'length($0) > 80 {n++} END {print n + 0}' <<<"$text")
    ((wide == 0)) || { echo "check_man: $wide formatted lines are wider than 80 columns:"
                       awk 'length($0) > 80' <<<"$text" | head -5; fail=1; }
    # DESCRIPTION does not repeat the usage line SYNOPSIS shows
    ! section DESCRIPTION | grep -q 'usage:' ||
        { echo "check_man: DESCRIPTION repeats the usage line"; fail=1; }
    # every variable the page or a help names is in ENVIRONMENT, and each
    # default there is the one --help gives
    env=$(section ENVIRONMENT)
    for v in $( { cat -- "$page"; "$ws" run --help; "$ws" policy check --help; } |
                grep -oP '(?<!-D)WATTSIM_[A-Z_]+' | sort -u) SOURCE_DATE_EPOCH; do
        grep -q "^ *$v\b" <<<"$env" || { echo "check_man: ENVIRONMENT lacks $v"; fail=1; }
    done
    for v in WATTSIM_TRACES WATTSIM_CATALOGUE; do
        want=$("$ws" list --help | tr -s ' \n' ' ' | grep -o "\$$v, else [^)]*" |
               grep -o 'share/wattsim/[^ ]*')
        got=$(awk -v v="$v" '$1 == v {on = 1; next} /^ {7}[A-Z_]+$/ {on = 0} on' <<<"$env" |
              tr -s ' \n' ' ' | sed 's/- //g')
        [[ -n $want && $got == *"$want"* ]] ||
            { echo "check_man: $v's default differs from --help ($want): $got"; fail=1; }
    done
    section "EXIT STATUS" | tr -s ' \n' ' ' | grep -q ' 70 for an internal error' ||
        { echo "check_man: EXIT STATUS lacks 70"; fail=1; }
    # policy new and policy check have help texts of their own
    new=$(awk '/^   wattsim policy new$/ {on = 1; next} /^   wattsim / {on = 0} on' <<<"$text")
    chk=$(awk '/^   wattsim policy check$/ {on = 1; next} /^[A-Z]|^   wattsim / {on = 0} on' <<<"$text")
    [[ -n $new && $new != "$chk" ]] || { echo "check_man: policy new and check show one text"; fail=1; }
    # EXAMPLES: each runs, from a copy of the source tree's layout
    mapfile -t examples < <(section EXAMPLES | sed -n 's/^ *\(wattsim .*\)$/\1/p')
    ((${#examples[@]} >= 3)) || { echo "check_man: EXAMPLES has ${#examples[@]} commands"; fail=1; }
    src=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
    build=$(cd -- "$(dirname -- "$ws")/.." && pwd)
    work=$(mktemp -d)
    ln -s "$src/configs" "$work/configs"
    ln -s "$build" "$work/build"
    # Under the sanitizers the examples are not run (as docs_examples is
    # not): `policy check`'s leak check measures resident memory, which
    # ASan's quarantine grows; the suites test the memory.
    [[ ${WS_MAN_RUN_EXAMPLES:-1} == 1 ]] || examples=()
    for e in "${examples[@]}"; do
        # shellcheck disable=SC2086 # the example's words
        (cd "$work" && PATH="$(dirname -- "$ws"):$PATH" WATTSIM_QUIET=1 timeout 300 $e) \
            >/dev/null 2>"$work/err" ||
            { echo "check_man: example failed: $e: $(head -3 "$work/err")"; fail=1; }
    done
    rm -rf -- "$work"
fi
exit $fail
