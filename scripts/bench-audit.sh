#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench-audit.sh - what stsd.auditLog costs READ KEEP=FALSE: two servers, one with the
# audit log and one without, driven by wrk in alternated rounds; medians of the rounds.
#
# Usage: scripts/bench-audit.sh [SECONDS_PER_RUN [ROUNDS [CONNECTIONS]]]  (5, 7, 50)
# Env:   AUDIT_LINES=plain|hash (plain)
# Each round reloads the list (INITFILE, 1M lines) on both servers first, so that no run
# meets an empty list (a KO is not logged, and would flatter the audit log).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
rounds=${2:-7}
conns=${3:-50}
mode=${AUDIT_LINES:-plain}

scripts/deps.sh bench
make --no-print-directory -s build/stsd >/dev/null
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

work=$(mktemp -d /tmp/stsd-bench-audit.XXXXXX)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/data"
awk 'BEGIN { for (i = 1; i <= 1000000; i++) printf "login%07d;password%07d\n", i, i }' \
    > "$work/data/m1.csv"

# start NAME ARGS...: an stsd on a free port; its port in $work/NAME.port.
start() {
    local name=$1; shift
    build/stsd -DjmeterPlugin.sts.port=0 -DjmeterPlugin.sts.daemon=true --bind=127.0.0.1 \
        -DjmeterPlugin.sts.datasetDirectory="$work/data" --port-file="$work/$name.port" \
        "$@" > "$work/$name.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 100); do [ -s "$work/$name.port" ] && return 0; sleep 0.05; done
    echo "bench-audit: $name did not start:" >&2; cat "$work/$name.log" >&2; exit 1
}
start off
start on -Dstsd.auditLog="$work/audit.log" -Dstsd.auditLog.lines="$mode" \
    -Dstsd.auditLog.maxBytes=1G
off=$(cat "$work/off.port"); on=$(cat "$work/on.port")

# run PORT -> requests per second of one wrk run
run() {
    curl -s "http://127.0.0.1:$1/sts/INITFILE?FILENAME=m1.csv" >/dev/null
    wrk -t2 -c"$conns" -d"${secs}s" "http://127.0.0.1:$1/sts/READ?FILENAME=m1.csv&KEEP=FALSE" |
        awk '/^Requests\/sec/ { print $2 }'
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

for r in $(seq "$rounds"); do
    # Alternate which goes first, so that neither always meets a warmer machine.
    if [ $((r % 2)) -eq 1 ]; then a=$(run "$off"); b=$(run "$on")
    else b=$(run "$on"); a=$(run "$off"); fi
    echo "$a" >> "$work/off.txt"; echo "$b" >> "$work/on.txt"
    printf 'round %d: without %s, with %s req/s\n' "$r" "$a" "$b"
done
moff=$(median < "$work/off.txt"); mon=$(median < "$work/on.txt")
lines=$(curl -s "http://127.0.0.1:$on/metrics" | awk '/^stsd_audit_lines_total/ { print $2 }')
dropped=$(curl -s "http://127.0.0.1:$on/metrics" | awk '/^stsd_audit_dropped_total/ { print $2 }')
echo "READ KEEP=FALSE c$conns, median of $rounds alternated ${secs}s runs (lines=$mode):"
echo "  without the audit log: $moff req/s"
echo "  with the audit log:    $mon req/s  (ratio $(awk -v a="$mon" -v b="$moff" 'BEGIN { printf "%.3f", a / b }'))"
echo "  audit lines written: $lines, dropped: $dropped, file: $(du -h "$work/audit.log" | cut -f1)"
