#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run-tests.sh - runs cmocka test binaries, prints each one's outcome and a closing tally
# of their tests (tests/tally.sh): passed, failed, and skipped with each skip named
# (cmocka's skip(), or a binary that exits 77), with the reason the test printed.
# Usage: tests/run-tests.sh LABEL BINARY...
. "$(dirname "$0")/tally.sh"
label=$1; shift
export CMOCKA_MESSAGE_OUTPUT=stdout     # the format parsed below
# The names after cmocka's "[  TAG  ] " (stdout and stderr may share a line in the log).
names() { grep -o "\[ *$1 *\] [A-Za-z_][A-Za-z0-9_]*" "$2" | sed 's/.*\] //' | sort -u; }
for t in "$@"; do
    "$t" >"$t.log" 2>&1
    rc=$?
    name=$(basename "$t")
    if [ "$rc" -eq 77 ]; then
        skip "$name: $(grep -i 'skipped' "$t.log" | tail -n 1)"
        continue
    fi
    n_ok=$(names OK "$t.log" | wc -l)
    n_skip=$(names SKIPPED "$t.log" | wc -l)
    passed=$((passed + n_ok))
    for s in $(names SKIPPED "$t.log"); do
        # The reason: the "skipped:" line the test printed between its RUN and SKIPPED.
        why=$(awk -v s="$s" '$0 ~ "\\[ RUN +\\] " s "$" { on = 1 }
            on && tolower($0) ~ /skipped:/ && $0 !~ /^\[/ { print; exit }
            $0 ~ "\\[ +SKIPPED +\\] " s "$" { on = 0 }' "$t.log")
        skip "$name: $s${why:+ ($why)}"
    done
    bad=$(names FAILED "$t.log"; names ERROR "$t.log")
    if [ "$rc" -ne 0 ] || [ -n "$bad" ]; then
        n_bad=$(echo "$bad" | grep -c .)
        [ "$n_bad" -eq 0 ] && n_bad=1   # died before cmocka could say which
        failed=$((failed + n_bad - 1))
        fail "$t (exit status $rc; log: $t.log)" $bad
        tail -n 30 "$t.log" | sed 's/^/        /'
    else
        echo "  ok    $t ($n_ok tests$([ "$n_skip" -gt 0 ] && echo ", $n_skip skipped"))"
    fi
done
tally "$label"
