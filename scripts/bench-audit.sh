#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench-audit.sh - what stsd.auditLog costs READ KEEP=FALSE: two servers, one with the
# audit log and one without, driven by wrk in alternated rounds; medians of the rounds.
#
# Usage: scripts/bench-audit.sh [SECONDS_PER_RUN [ROUNDS [CONNECTIONS]]]  (5, 7, 50)
# Env:   AUDIT_LINES=plain|hash (plain)
# Besides req/s, each run's CPU per request (stsd's utime+stime from /proc over the run,
# its threads and the audit writer included): on a machine shared with other work, the
# cost itself, where throughput also measures the neighbours.
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
off_pid=${pids[-1]}
start on -Dstsd.auditLog="$work/audit.log" -Dstsd.auditLog.lines="$mode" \
    -Dstsd.auditLog.maxBytes=1G
on_pid=${pids[-1]}
off=$(cat "$work/off.port"); on=$(cat "$work/on.port")
tck=$(getconf CLK_TCK)
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# run PORT PID -> "req/s cpu_us_per_request" of one wrk run
run() {
    curl -s "http://127.0.0.1:$1/sts/INITFILE?FILENAME=m1.csv" >/dev/null
    local t0 t1 out
    t0=$(cpu_ticks "$2")
    out=$(wrk -t2 -c"$conns" -d"${secs}s" "http://127.0.0.1:$1/sts/READ?FILENAME=m1.csv&KEEP=FALSE")
    t1=$(cpu_ticks "$2")
    echo "$out" | awk -v t="$((t1 - t0))" -v hz="$tck" '
        / requests in / { n = $1 } /^Requests\/sec/ { r = $2 }
        END { printf "%s %.2f\n", r, t / hz * 1e6 / n }'
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

for r in $(seq "$rounds"); do
    # Alternate which goes first, so that neither always meets a warmer machine.
    if [ $((r % 2)) -eq 1 ]; then a=$(run "$off" "$off_pid"); b=$(run "$on" "$on_pid")
    else b=$(run "$on" "$on_pid"); a=$(run "$off" "$off_pid"); fi
    echo "$a" >> "$work/off.txt"; echo "$b" >> "$work/on.txt"
    printf 'round %d: without %s req/s %s us/req, with %s req/s %s us/req\n' "$r" \
        ${a% *} ${a#* } ${b% *} ${b#* }
done
moff=$(cut -d' ' -f1 "$work/off.txt" | median); mon=$(cut -d' ' -f1 "$work/on.txt" | median)
coff=$(cut -d' ' -f2 "$work/off.txt" | median); con=$(cut -d' ' -f2 "$work/on.txt" | median)
lines=$(curl -s "http://127.0.0.1:$on/metrics" | awk '/^stsd_audit_lines_total/ { print $2 }')
dropped=$(curl -s "http://127.0.0.1:$on/metrics" | awk '/^stsd_audit_dropped_total/ { print $2 }')
echo "READ KEEP=FALSE c$conns, median of $rounds alternated ${secs}s runs (lines=$mode):"
echo "  without the audit log: $moff req/s, $coff us of CPU per request"
echo "  with the audit log:    $mon req/s, $con us of CPU per request"
echo "  ratio: throughput $(awk -v a="$mon" -v b="$moff" 'BEGIN { printf "%.3f", a / b }'), CPU per request $(awk -v a="$con" -v b="$coff" 'BEGIN { printf "%.3f", a / b }')"
echo "  audit lines written: $lines, dropped: $dropped, file: $(du -h "$work/audit.log" | cut -f1)"
