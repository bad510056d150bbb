#!/bin/bash
# bench.sh - HTTP benchmark of stsd against a constant-answer libmicrohttpd ceiling,
# both started here and driven by wrk in alternation; prints req/s, p50/p99 latency and
# the ratio to the ceiling measured in the same run, as medians of ROUNDS runs.
#
# Usage: scripts/bench.sh [SECONDS_PER_RUN [ROUNDS]]   (defaults 5 and 3)
# Env:   BENCH_ONLY="scenario names"  run only these; BENCH_BIG=0 skips the 10M/1M lists;
#        STSD_ARGS="..."               extra stsd arguments (e.g. --journal on)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
rounds=${2:-3}
big=${BENCH_BIG:-1}

scripts/deps.sh bench
make --no-print-directory -s build/stsd build/ceiling >/dev/null
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

work=$(mktemp -d /tmp/stsd-bench.XXXXXX)
stsd_pid=""; ceil_pid=""
cleanup() {
    [ -n "$stsd_pid" ] && kill "$stsd_pid" 2>/dev/null
    [ -n "$ceil_pid" ] && kill "$ceil_pid" 2>/dev/null
    wait 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo $((20000 + RANDOM % 20000)); }

mkdir -p "$work/data"
seq -f 'login%07g;password%07g' 1 1000 > "$work/data/logins.csv"
if [ "$big" = 1 ]; then
    seq -f 'login%07g;password%07g' 1 1000000 > "$work/data/m1.csv"
    seq -f 'login%07g;password%07g' 1 10000000 > "$work/data/m10.csv"
fi

# wrk scripts
cat > "$work/mix.lua" <<'LUA'
counter = 0
request = function()
    counter = counter + 1
    if math.random(100) <= 20 then
        return wrk.format("GET", "/sts/ADD?FILENAME=mix.csv&ADD_MODE=LAST&LINE=added" .. counter)
    end
    return wrk.format("GET", "/sts/READ?FILENAME=mix.csv")
end
LUA
cat > "$work/find.lua" <<'LUA'
request = function()
    local n = math.random(1000000)
    return wrk.format("GET", string.format(
        "/sts/FIND?FILENAME=m1.csv&FIND_MODE=EQUALS&LINE=login%07d%%3Bpassword%07d", n, n))
end
LUA
cat > "$work/add.lua" <<'LUA'
counter = 0
request = function()
    counter = counter + 1
    return wrk.format("GET", "/sts/ADD?FILENAME=added.csv&ADD_MODE=LAST&LINE=line" .. counter)
end
LUA

stsd_port=$(free_port)
build/stsd --port "$stsd_port" --bind 127.0.0.1 --dataset-dir "$work/data" \
    -DjmeterPlugin.sts.daemon=true -Dstsd.maxConnections=10000 ${STSD_ARGS:-} \
    2> "$work/stsd.log" &
stsd_pid=$!
ceil_port=$(free_port)
build/ceiling "$ceil_port" 2> "$work/ceiling.log" &
ceil_pid=$!
sleep 0.5

sts() { curl -sf "http://127.0.0.1:$stsd_port/sts/$1" > /dev/null; }
sts "INITFILE?FILENAME=logins.csv"
sts "ADD?FILENAME=mix.csv&LINE=seed"
if [ "$big" = 1 ]; then
    sts "INITFILE?FILENAME=m1.csv"
    sts "INITFILE?FILENAME=m10.csv"
fi

# run_wrk PORT CONNS EXTRA... -> "rps p50_ms p99_ms errors"
run_wrk() {
    local port=$1 conns=$2; shift 2
    local threads=2
    [ "$conns" -lt 2 ] && threads=1
    local out
    out=$(wrk -t"$threads" -c"$conns" -d"${secs}s" --latency "$@" 2>&1)
    echo "$out" > "$work/last.txt"
    awk '
        function ms(v) { if (v ~ /us$/) return v/1000; if (v ~ /ms$/) return v+0; if (v ~ /s$/) return v*1000; return v }
        /Requests\/sec/ { rps = $2 }
        /^ +50%/ { p50 = ms($2) }
        /^ +99%/ { p99 = ms($2) }
        /Socket errors/ { gsub(",", ""); err += $4 + $6 + $8 + $10 }
        /Non-2xx/ { err += $5 }
        END { printf "%.0f %.3f %.3f %d\n", rps, p50, p99, err }' "$work/last.txt"
}

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

printf '%-34s %10s %9s %9s %10s %7s %6s\n' scenario "req/s" "p50 ms" "p99 ms" "ceiling" ratio errors
report() {   # name results-file ceiling-file
    local name=$1 f=$2 c=$3
    local rps p50 p99 err crps
    rps=$(cut -d' ' -f1 "$f" | median); p50=$(cut -d' ' -f2 "$f" | median)
    p99=$(cut -d' ' -f3 "$f" | median); err=$(cut -d' ' -f4 "$f" | awk '{ s += $1 } END { print s }')
    crps=$(cut -d' ' -f1 "$c" | median)
    printf '%-34s %10s %9s %9s %10s %7s %6s\n' "$name" "$rps" "$p50" "$p99" "$crps" \
        "$(awk -v a="$rps" -v b="$crps" 'BEGIN { printf "%.2f", b ? a / b : 0 }')" "$err"
}

# scenario NAME CONNS CEILING_EXTRA -- STSD_ARGS...
scenario() {
    local name=$1 conns=$2 cextra=$3; shift 4
    if [ -n "${BENCH_ONLY:-}" ] && ! grep -qw -- "$name" <<< "$BENCH_ONLY"; then return; fi
    : > "$work/s.txt"; : > "$work/c.txt"
    for _ in $(seq "$rounds"); do
        # shellcheck disable=SC2086
        run_wrk "$ceil_port" "$conns" $cextra "http://127.0.0.1:$ceil_port/sts/READ?FILENAME=logins.csv" >> "$work/c.txt"
        run_wrk "$stsd_port" "$conns" "$@" >> "$work/s.txt"
    done
    report "$name" "$work/s.txt" "$work/c.txt"
}

base="http://127.0.0.1:$stsd_port/sts"
scenario read-keepalive-50 50 "" -- "$base/READ?FILENAME=logins.csv"
scenario read-newconn-50 50 "-H Connection:close" -- -H "Connection: close" "$base/READ?FILENAME=logins.csv"
scenario add-last-50 50 "" -- -s "$work/add.lua" "$base/"
scenario mix-80read-20add-50 50 "" -- -s "$work/mix.lua" "$base/"
scenario closed-loop-8 8 "" -- "$base/READ?FILENAME=logins.csv"
if [ "$big" = 1 ]; then
    scenario drain-10M-keepfalse 50 "" -- "$base/READ?FILENAME=m10.csv&KEEP=FALSE"
    scenario random-1M 50 "" -- "$base/READ?FILENAME=m1.csv&READ_MODE=RANDOM"
    scenario find-equals-1M 50 "" -- -s "$work/find.lua" "$base/"
fi
scenario keepalive-2000-conns 2000 "" -- "$base/READ?FILENAME=logins.csv"

echo
echo "machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(uname -sr); wrk and both servers share the cores"
echo "each row: median of $rounds runs of ${secs}s, stsd and ceiling alternating; ratio = stsd / ceiling"
