#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench-leases.sh - a million open leases: what they cost in memory, how fast ACK and
# RELEASE by id stay among them, and how long the expiry of all of them takes.
#
# One stsd (no journal) on a free port; a list of N 28-byte lines (INITFILE, not timed);
# READMULTI of 1,000 lines with LEASE= until N are on loan (timed); RSS before and after;
# then 2,000 ACKs and 2,000 RELEASEs by id, in a row on one connection, against 2,000
# LENGTHs the same way (timed); then the lines left
# leased for 5 s among the million, timed until they are back.
#
# Usage: scripts/bench-leases.sh [N]        (default 1000000)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000000}
[ "$n" -ge 10000 ] || { echo "bench-leases.sh: N of at least 10,000" >&2; exit 2; }
make --no-print-directory -s build/stsd >/dev/null
work=$(mktemp -d /tmp/stsd-leases.XXXXXX)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
awk -v n="$n" 'BEGIN { for (i = 1; i <= n; i++) printf "login%07d;password%07d\n", i, i }' \
    > "$work/l.csv"
build/stsd --port 0 --port-file "$work/port" --bind 127.0.0.1 --dataset-dir "$work" \
    -DjmeterPlugin.sts.daemon=true -Dstsd.maxLease=3600 2> "$work/stsd.log" &
pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
base="http://127.0.0.1:$(cat "$work/port")/sts"
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$pid/status"; }
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.2f\", $1 }"; }
curl -sf "$base/INITFILE?FILENAME=l.csv" > /dev/null
rss0=$(rss)
# Lease every line but 4,000 in batches of 1,000 (held an hour), keeping 4,000 ids to
# settle; the last 4,000 lines are leased for 5 s, to watch them expire with the rest.
t0=$(now)
batches=$(( (n - 4000) / 1000 ))
for ((b = 0; b < batches; b++)); do
    if [ "$b" -lt 4 ]; then
        curl -sfD - -o /dev/null "$base/READMULTI?FILENAME=l.csv&NB_LINES=1000&KEEP=FALSE&LEASE=3600" |
            tr -d '\r' | sed -n 's/^X-STS-Lease: //p' | tr ',' '\n' >> "$work/ids"
    else
        curl -sf -o /dev/null "$base/READMULTI?FILENAME=l.csv&NB_LINES=1000&KEEP=FALSE&LEASE=3600"
    fi
done
t1=$(now)
rss1=$(rss)
leased=$(curl -sf "$base/LEASES?FILENAME=l.csv" | sed -n 's/.*<body>\([0-9]*\)<.*/\1/p')
printf 'leases: %d open, taken in %s s (%d READMULTI of 1,000)\n' "$leased" \
    "$(calc "$t1 - $t0")" "$batches"
printf 'RSS: %s MiB with the list, %s MiB with the leases: %s bytes per lease\n' \
    "$(calc "$rss0 / 1024")" "$(calc "$rss1 / 1024")" "$(calc "($rss1 - $rss0) * 1024 / $leased")"
# Requests in a row on one keep-alive connection (one curl for all of them, so that
# curl's own start is not what is timed); prints the seconds taken and checks each answer.
in_a_row() {      # in_a_row WANT URL...
    local want=$1 t got
    shift
    printf 'url = "%s"\n' "$@" > "$work/urls"
    t=$(now)
    got=$(curl -s -K "$work/urls" | grep -o "$want" | wc -l)
    [ "$got" -eq "$#" ] || { echo "bench-leases: $got of $# answers were $want" >&2; exit 1; }
    calc "$(now) - $t"
}
ids() { sed -n "$1,$(( $1 + $2 - 1 ))p" "$work/ids"; }
k=2000
mapfile -t urls < <(for _ in $(seq $k); do echo "$base/LENGTH?FILENAME=l.csv"; done)
s0=$(in_a_row '<title>OK</title>' "${urls[@]}")
mapfile -t urls < <(ids 1 $k | sed "s|^|$base/ACK?FILENAME=l.csv\&LEASE=|")
s1=$(in_a_row '<title>OK</title>' "${urls[@]}")
mapfile -t urls < <(ids $((k + 1)) $k | sed "s|^|$base/RELEASE?FILENAME=l.csv\&LEASE=|")
s2=$(in_a_row '<title>OK</title>' "${urls[@]}")
printf 'among %d open leases, %d requests in a row on one connection: LENGTH %s s, ACK by id %s s, RELEASE by id %s s (%s, %s, %s us each)\n' \
    "$leased" "$k" "$s0" "$s1" "$s2" "$(calc "$s0 * 1e6 / $k")" "$(calc "$s1 * 1e6 / $k")" \
    "$(calc "$s2 * 1e6 / $k")"
# Expiry among them: the lines left in the list (those never leased, and the released
# ones) leased for 5 s; the time until all are back (the lease timer ticks every 100 ms).
left=$(curl -sf "$base/LENGTH?FILENAME=l.csv" | sed -n 's/.*<body>\([0-9]*\)<.*/\1/p')
t0=$(now)
for ((got = 0; got < left; got += 1000)); do
    take=$(( left - got < 1000 ? left - got : 1000 ))
    out=$(curl -sf "$base/READMULTI?FILENAME=l.csv&NB_LINES=$take&KEEP=FALSE&LEASE=5")
    [[ $out == *'<br />'* ]] || { echo "bench-leases: READMULTI of $take lines failed" >&2; exit 1; }
done
for ((i = 0; i < 400; i++)); do
    len=$(curl -sf "$base/LENGTH?FILENAME=l.csv" | sed -n 's/.*<body>\([0-9]*\)<.*/\1/p')
    [ "$len" -ge "$left" ] && break
    sleep 0.05
done
[ "$len" -ge "$left" ] || { echo "bench-leases: the 5 s leases did not come back" >&2; exit 1; }
printf '%d leases of 5 s among %d open: all lines back %s s after the first was taken\n' \
    "$left" "$(curl -sf "$base/LEASES?FILENAME=l.csv" | sed -n 's/.*<body>\([0-9]*\)<.*/\1/p')" \
    "$(calc "$(now) - $t0")"
echo "machine: $(nproc) cores, $(uname -sr); curl and stsd share the cores"
