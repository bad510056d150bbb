#!/bin/sh
# run-tests.sh - runs test binaries, prints each one's outcome and a closing tally.
# Usage: tests/run-tests.sh LABEL BINARY...
label=$1; shift
passed=0; failed=0; failures=""
for t in "$@"; do
    if "$t" >"$t.log" 2>&1; then
        passed=$((passed + 1)); echo "  ok    $t"
    else
        failed=$((failed + 1)); failures="$failures $t"; echo "  FAIL  $t (log: $t.log)"
        tail -n 30 "$t.log" | sed 's/^/        /'
    fi
done
echo "$label: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
