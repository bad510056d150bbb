#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench-writes.sh - the write path's goals (docs/benchmarks.md, issue 41) from one run:
# READ against the constant-answer ceiling, a lone stsd with fsync=always against Redis
# with appendfsync always (scripts/bench.sh's rows), three nodes against one, and a
# follower against its leader for a forwarded ADD and for a LENGTH it answers itself
# (scripts/bench-cluster.py --ratios). Each figure is the median of alternated rounds;
# the table at the end sets each ratio against its goal.
#
# Usage: scripts/bench-writes.sh [ROUNDS]   (default 3; each round is a pair of 5 s runs)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}

scripts/deps.sh bench
make --no-print-directory -s build/stsd >/dev/null
out=$(mktemp /tmp/stsd-bench-writes.XXXXXX)
trap 'rm -f "$out"' EXIT

echo "== scripts/bench.sh 5 $rounds: READ against the ceiling, fsync=always against Redis"
BENCH_BIG=0 BENCH_ONLY="read-keepalive-50 durable-add-redis-50" scripts/bench.sh 5 "$rounds" |
    tee -a "$out"
echo
echo "== scripts/bench-cluster.py --ratios build/stsd $rounds: three nodes on this machine"
scripts/bench-cluster.py --ratios build/stsd "$rounds" | tee -a "$out"

# The ratio of each row: bench.sh's scenario rows have it in their 7th column, its
# durability rows in their last; bench-cluster.py prints "ratio NAME VALUE".
read_ceiling=$(awk '$1 == "read-keepalive-50" { print $7 }' "$out")
always_redis=$(awk '$1 == "durable-add-redis-50" { print $NF }' "$out")
ratio() { awk -v n="$1" '$1 == "ratio" && $2 == n { print $3 }' "$out"; }

echo
printf '%-52s %6s %9s %5s\n' "measure" goal measured met
row() {   # label goal value
    local met=no
    [ -z "$3" ] && { printf '%-52s %6s %9s %5s\n' "$1" "$2" "none" "-"; return; }
    awk -v v="$3" -v g="$2" 'BEGIN { exit !(v >= g) }' && met=yes
    printf '%-52s %6s %9s %5s\n' "$1" "$2" "$3" "$met"
}
row "ADD c50: three nodes / one node, fsync=always" 0.80 "$(ratio cluster-lone)"
row "ADD c50: through a follower / the leader" 0.60 "$(ratio follower-add)"
row "ADD c50: one stsd fsync=always / Redis always" 1.00 "$always_redis"
row "READ keep-alive c50: stsd / the ceiling" 0.95 "$read_ceiling"
row "LENGTH c50: on a follower / the leader" 0.60 "$(ratio follower-length)"
echo "(2 cores shared by every server and wrk: compare runs made in the same minutes)"
