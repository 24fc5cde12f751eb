#!/usr/bin/env bash
# The man page (scripts/make-man) holds every command's help, as the binary
# prints it, and groff formats it without a warning.
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
        has "$line" || { echo "check_man: '$c --help': the page lacks: $line"; fail=1; }
    done < <("$ws" $c --help 2>&1)
done
exit $fail
