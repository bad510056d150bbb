#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run.sh - the soak (tests/soak/soak.py) against a sanitizer build of stsd.
# Usage: tests/soak/run.sh asan|tsan STSD        env: SOAK_SECONDS (60)
# The work directory (logs, state) is kept when the soak fails, removed when it passes.
set -eu
kind=$1 stsd=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/stsd-soak-$kind.XXXXXX)
case "$kind" in
    asan)
        # Leaks count: LeakSanitizer's report at exit makes the exit status 23.
        export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=0:${ASAN_OPTIONS:-}"
        export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
        export LSAN_OPTIONS="${LSAN_OPTIONS:-}" ;;
    tsan)
        # Every report is kept (halt_on_error=0) and makes the exit status 66.
        export TSAN_OPTIONS="halt_on_error=0:exitcode=66:second_deadlock_stack=1:history_size=4:suppressions=$here/tsan.supp:${TSAN_OPTIONS:-}" ;;
    *) echo "usage: $0 asan|tsan STSD" >&2; exit 2 ;;
esac
start=$(date +%s)
if python3 "$here/soak.py" "$stsd" "$work"; then
    echo "soak ($kind): passed in $(( $(date +%s) - start )) s"
    rm -rf "$work"
else
    echo "soak ($kind): FAILED after $(( $(date +%s) - start )) s; logs and state in $work"
    for f in "$work"/stsd-*.log; do
        grep -q -E 'Sanitizer|runtime error' "$f" && { echo "--- $f"; head -n 60 "$f"; }
    done
    exit 1
fi
