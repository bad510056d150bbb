#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench-once.sh - what a runner's renewal of its ONCE run costs the server: ONCE RUN=id
# against SET (one journaled change of a key) and GET (no record), one keep-alive
# connection each (wrk -c1), with the journal at fsync=always, alternated for ROUNDS
# rounds of SECONDS; prints each round and the medians, and renewal/SET.
#
# Usage: scripts/bench-once.sh [ROUNDS [SECONDS]]      (default 3 rounds of 3 s)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
secs=${2:-3}
command -v wrk >/dev/null || { echo "bench-once.sh: needs wrk (apt-get install wrk)" >&2; exit 2; }
make --no-print-directory -s build/stsd >/dev/null
work=$(mktemp -d /tmp/stsd-once.XXXXXX)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$work/data" "$work/state"
build/stsd --port 0 --port-file "$work/port" --bind 127.0.0.1 --dataset-dir "$work/data" \
    --journal=on -Dstsd.journal.fsync=always --state-dir="$work/state" \
    -DjmeterPlugin.sts.daemon=true 2> "$work/stsd.log" &
pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
base="http://127.0.0.1:$(cat "$work/port")/sts"
id=$(curl -sf -D - -o /dev/null "$base/ONCE?NAME=setup&LEASE=3600" |
     tr -d '\r' | awk 'tolower($1) == "x-sts-lease:" { print $2 }')
[ -n "$id" ] || { echo "bench-once.sh: no run lease from ONCE" >&2; exit 1; }
curl -sf "$base/SET?NAME=k&VALUE=1" > /dev/null
rate() { wrk -t1 -c1 -d"${secs}s" "$base/$1" | awk '/^Requests\/sec/ { printf "%.0f", $2 }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
: > "$work/renew"; : > "$work/set"; : > "$work/get"
for r in $(seq "$rounds"); do
    a=$(rate "ONCE?NAME=setup&RUN=$id&LEASE=3600"); b=$(rate "SET?NAME=k&VALUE=1")
    c=$(rate "GET?NAME=k")
    echo "$a" >> "$work/renew"; echo "$b" >> "$work/set"; echo "$c" >> "$work/get"
    echo "round $r: renewal $a/s, SET $b/s, GET $c/s"
done
a=$(median < "$work/renew"); b=$(median < "$work/set"); c=$(median < "$work/get")
echo "median: renewal $a/s, SET $b/s, GET $c/s; renewal/SET $(awk "BEGIN { printf \"%.2f\", $a / $b }")"
