#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# soak.sh - stsd with its journal under mixed load for a while: is the state directory
# bounded and RSS flat? Every 10 s it prints RSS, the state directory's size and files,
# the live data, and the requests served in those 10 s; at the end it stops stsd and runs
# --check-journal on the state directory.
#
# Load: wrk on 8 connections, half ADD LAST and half READ KEEP=FALSE on queue.csv, one
# request in five a READ KEEP=TRUE on logins.csv (10,000 lines); and an INITFILE of a
# 100,000-line file (2.8 MB) every 0.5 s, each of which supersedes the last snapshot.
#
# Usage: scripts/soak.sh [SECONDS]        (default 300)
# Env:   SOAK_FSYNC=always|everysec|no    (default everysec)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-300}
policy=${SOAK_FSYNC:-everysec}
[ "$secs" -ge 10 ] || { echo "soak.sh: at least 10 seconds" >&2; exit 2; }

scripts/deps.sh bench
make --no-print-directory -s build/stsd >/dev/null

work=$(mktemp -d /tmp/stsd-soak.XXXXXX)
pid=""; feeder=""
cleanup() {
    [ -n "$feeder" ] && kill "$feeder" 2>/dev/null
    [ -n "$pid" ] && kill "$pid" 2>/dev/null
    wait 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/data"
# 28-byte lines, so that the live data is the line count times 28 (plus queue lines).
awk 'BEGIN { for (i = 1; i <= 100000; i++) printf "login%07d;password%07d\n", i, i }' \
    > "$work/data/init.csv"
head -n 10000 "$work/data/init.csv" > "$work/data/logins.csv"

build/stsd --port 0 --port-file "$work/port" --bind 127.0.0.1 --dataset-dir "$work/data" \
    -DjmeterPlugin.sts.daemon=true --journal on -Dstsd.journal.fsync="$policy" \
    --state-dir "$work/state" 2> "$work/stsd.log" &
pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
port=$(cat "$work/port")
base="http://127.0.0.1:$port/sts"
curl -sf "$base/INITFILE?FILENAME=logins.csv" > /dev/null
curl -sf "$base/INITFILE?FILENAME=init.csv" > /dev/null

cat > "$work/mix.lua" <<'LUA'
local reqs, i = {}, 0
init = function(args)
    for k = 1, 10000 do
        local path
        if k % 5 == 0 then
            path = "/sts/READ?FILENAME=logins.csv&KEEP=TRUE"
        elseif k % 2 == 0 then
            path = "/sts/ADD?FILENAME=queue.csv&ADD_MODE=LAST&LINE=q" .. string.format("%010d", k)
        else
            path = "/sts/READ?FILENAME=queue.csv&KEEP=FALSE"
        end
        reqs[k] = wrk.format("GET", path)
    end
end
request = function()
    i = i % #reqs + 1
    return reqs[i]
end
LUA

# INITFILE every 0.5 s, counted.
( n=0; while :; do curl -sf "$base/INITFILE?FILENAME=init.csv" > /dev/null && n=$((n + 1));
  echo "$n" > "$work/initfiles"; sleep 0.5; done ) &
feeder=$!

# Live data in bytes: every list's lines at their known length (queue lines are 11 bytes).
live_bytes() {
    curl -sf "$base/STATUS" | sed -n 's/^\([a-z.]*\) = \([0-9]*\)<br \/>$/\1 \2/p' |
        awk '{ b += $2 * ($1 == "queue.csv" ? 11 : 28) } END { print b + 0 }'
}
rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$pid/status"; }
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }

printf '%6s %9s %11s %6s %11s %10s %8s %9s\n' time "RSS MiB" "state MiB" files "live MiB" "requests" errors initfile
start=$(date +%s)
max_state=0; max_ratio=0; rss_first=""; rss_max=0; total=0
for ((t = 10; t <= secs; t += 10)); do
    out=$(wrk -t1 -c8 -d10s -s "$work/mix.lua" "http://127.0.0.1:$port/" 2>&1)
    reqs=$(awk '/requests in/ { print $1 }' <<< "$out")
    errs=$(awk '/Socket errors/ { gsub(",", ""); e += $4 + $6 + $8 + $10 } /Non-2xx/ { e += $5 } END { print e + 0 }' <<< "$out")
    rss=$(rss_kb)
    state=$(du -sb "$work/state" | cut -f1)
    files=$(find "$work/state" -type f | wc -l)
    live=$(live_bytes)
    total=$((total + reqs))
    printf '%5ss %9.1f %11.1f %6d %11.1f %10d %8d %9s\n' "$t" "$(mib $((rss * 1024)))" \
        "$(mib "$state")" "$files" "$(mib "$live")" "$reqs" \
        "$errs" "$(cat "$work/initfiles" 2>/dev/null || echo 0)"
    [ "$state" -gt "$max_state" ] && max_state=$state
    # The bound: twice the live data plus one 64 MiB log.
    ratio=$(awk -v s="$state" -v l="$live" -v m="$max_ratio" \
        'BEGIN { r = s / (2 * l + 64 * 1048576); printf "%.3f", (r > m ? r : m) }')
    max_ratio=$ratio
    # RSS after warm-up: from the 30 s mark on.
    if [ "$t" -ge 30 ]; then
        [ -z "$rss_first" ] && rss_first=$rss
        [ "$rss" -gt "$rss_max" ] && rss_max=$rss
    fi
done
kill "$feeder"; wait "$feeder" 2>/dev/null || true; feeder=""
kill "$pid"; wait "$pid" || true; pid=""
echo
echo "$total requests in $(( $(date +%s) - start )) s (fsync=$policy); $(cat "$work/initfiles") INITFILEs of 100,000 lines"
echo "state directory at most $(mib "$max_state") MiB; at most $max_ratio of the bound (2 x live data + one 64 MiB log)"
[ -n "$rss_first" ] && echo "RSS from 30 s on: $(mib $((rss_first * 1024))) MiB at 30 s, at most $(mib $((rss_max * 1024))) MiB"
echo "compactions: $(grep -c 'compaction done' "$work/stsd.log" || true)"
echo
build/stsd --check-journal "$work/state"
