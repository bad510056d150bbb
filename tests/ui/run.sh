#!/bin/sh
# run.sh - runs the dashboard's browser tests (tests/ui/) when headless Chromium,
# chromedriver and python3-selenium are there; says "skipped" and why otherwise.
# Usage: tests/ui/run.sh STSD_BINARY
set -u
stsd=${1:-build/stsd}
why=""
command -v chromium >/dev/null 2>&1 || why="chromium is not installed"
[ -z "$why" ] && { command -v chromedriver >/dev/null 2>&1 || why="chromedriver (chromium-driver) is not installed"; }
[ -z "$why" ] && { /usr/bin/python3 -c 'import selenium' 2>/dev/null || why="python3-selenium is not installed"; }
if [ -n "$why" ]; then
    echo "ui: skipped: $why (scripts/deps.sh test installs it as root)"
    exit 0
fi
log=build/tests/test_dashboard.log
mkdir -p build/tests
if STSD="$stsd" /usr/bin/python3 tests/ui/test_dashboard.py >"$log" 2>&1; then
    echo "  ok    tests/ui/test_dashboard.py ($(grep -c ' ok$' "$log") tests; screenshots in build/ui-screens/)"
    grep -E '^  (first load|change shown)' "$log" | sed 's/^/        /'
    exit 0
fi
echo "  FAIL  tests/ui/test_dashboard.py (log: $log)"
tail -n 40 "$log" | sed 's/^/        /'
exit 1
