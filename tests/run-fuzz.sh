#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run-fuzz.sh - runs each libFuzzer harness for SECONDS on a corpus kept in build/fuzz,
# and prints the executions each made; any crash, leak or timeout fails the run. The
# tally is tests/tally.sh's (a fuzzer has no skip of its own: missing clang fails the build).
# Usage: tests/run-fuzz.sh SECONDS FUZZER...
. "$(dirname "$0")/tally.sh"
secs=$1; shift
for f in "$@"; do
    name=$(basename "$f")
    corpus="build/fuzz/corpus-$name"
    mkdir -p "$corpus"
    seeds="tests/fuzz/seeds-$name"
    [ -d "$seeds" ] || seeds=""
    if "$f" -max_total_time="$secs" -timeout=5 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="build/fuzz/$name-" "$corpus" $seeds >"$f.log" 2>&1; then
        ok "$name: $(awk '/stat::number_of_executed_units/ { print $2 }' "$f.log") executions in ${secs}s"
    else
        fail "$name (log: $f.log)"
        grep -E "ERROR|SUMMARY|artifact" "$f.log" | head -10 | sed 's/^/        /'
    fi
done
tally fuzz
