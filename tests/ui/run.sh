#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run.sh - runs the dashboard's browser tests (tests/ui/) when headless Chromium,
# chromedriver and python3-selenium are there; a skip, with why, otherwise (tests/tally.sh:
# under CI=true a skip fails the run).
# Usage: tests/ui/run.sh STSD_BINARY
set -u
. "$(dirname "$0")/../tally.sh"
stsd=${1:-build/stsd}
why=""
command -v chromium >/dev/null 2>&1 || why="chromium is not installed"
[ -z "$why" ] && { command -v chromedriver >/dev/null 2>&1 || why="chromedriver (chromium-driver) is not installed"; }
[ -z "$why" ] && { /usr/bin/python3 -c 'import selenium' 2>/dev/null || why="python3-selenium is not installed"; }
if [ -n "$why" ]; then
    skip "tests/ui/test_dashboard.py: $why (scripts/deps.sh test installs it as root)"
    tally ui
    exit
fi
log=build/tests/test_dashboard.log
mkdir -p build/tests
if STSD="$stsd" /usr/bin/python3 tests/ui/test_dashboard.py >"$log" 2>&1; then
    n=$(grep -c ' ok$' "$log")
    echo "  ok    tests/ui/test_dashboard.py ($n tests; screenshots in build/ui-screens/)"
    passed=$((passed + n))
    grep -E '^  (first load|change shown|failover)' "$log" | sed 's/^/        /'
else
    passed=$((passed + $(grep -c ' ok$' "$log")))
    fail "tests/ui/test_dashboard.py (log: $log)"
    tail -n 40 "$log" | sed 's/^/        /'
fi
# unittest's own skips (skipTest, skipIf) count as skips too.
grep -E '\.\.\. skipped' "$log" >"$log.skips"
while read -r line; do skip "tests/ui/test_dashboard.py: $line"; done <"$log.skips"
rm -f "$log.skips"
tally ui
