# SPDX-License-Identifier: Apache-2.0
# tally.sh - how every test runner counts, sourced by them: ok, fail and skip print one
# line each; tally prints "LABEL: N passed, M failed, K skipped", names every skip and
# returns non-zero on a failure, or on any skip when CI=true (.ci/run sets it).
# A test that cannot run here says so, never passes quietly: a shell check calls skip
# with the reason; a test binary calls cmocka's skip() after printing "skipped: reason",
# or exits 77 (automake's convention) when none of it can run.
passed=0; failed=0; skipped=0; skip_list=""

ok() { passed=$((passed + 1)); echo "  ok    $*"; }
fail() { failed=$((failed + 1)); echo "  FAIL  $*"; }
skip() {
    skipped=$((skipped + 1)); echo "  skip  $*"
    skip_list="$skip_list
        $*"
}

# tally LABEL: the closing line; the status the runner should exit with.
tally() {
    echo "$1: $passed passed, $failed failed, $skipped skipped"
    if [ "$skipped" -gt 0 ]; then
        echo "$1: skipped:$skip_list"
        if [ "${CI:-}" = true ]; then
            echo "$1: CI=true allows no skip (scripts/deps.sh test installs what they need)"
            return 1
        fi
    fi
    [ "$failed" -eq 0 ]
}
