#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench.sh - HTTP benchmark of stsd against a constant-answer libmicrohttpd ceiling,
# both started here and driven by wrk in alternation; prints req/s, p50/p99 latency and
# the ratio to the ceiling measured in the same run, as medians of ROUNDS runs.
#
# Usage: scripts/bench.sh [SECONDS_PER_RUN [ROUNDS]]   (defaults 5 and 3)
# Env:   BENCH_ONLY="scenario names"  run only these ("scrape": the /metrics rows);
#        BENCH_BIG=0 skips the 10M/1M lists;
#        STSD_ARGS="..."               extra stsd arguments (e.g. --journal on)
# The durability rows (names durable-*) start their own servers: stsd with each fsync
# policy, stsd with fsync=always whose syncs a test shim skips (the group commit without
# the disk), and redis-server with appendfsync always when it is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
rounds=${2:-3}
big=${BENCH_BIG:-1}

scripts/deps.sh bench
make --no-print-directory -s build/stsd build/ceiling build/fsync-floor \
    build/tests/libfailsync.so >/dev/null
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

work=$(mktemp -d /tmp/stsd-bench.XXXXXX)
stsd_pid=""; ceil_pid=""; tls_pid=""
cleanup() {
    [ -n "$stsd_pid" ] && kill "$stsd_pid" 2>/dev/null
    [ -n "$tls_pid" ] && kill "$tls_pid" 2>/dev/null
    [ -n "$ceil_pid" ] && kill "$ceil_pid" 2>/dev/null
    wait 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo $((20000 + RANDOM % 20000)); }

mkdir -p "$work/data"
lines() { awk -v n="$1" 'BEGIN { for (i = 1; i <= n; i++) printf "login%07d;password%07d\n", i, i }'; }
lines 1000 > "$work/data/logins.csv"
if [ "$big" = 1 ]; then
    lines 1000000 > "$work/data/m1.csv"
    lines 2000000 > "$work/data/m2.csv"
    lines 10000000 > "$work/data/m10.csv"
fi

# wrk scripts: requests are built once in init() and cycled, so that wrk's Lua costs
# little per request (the same script drives stsd and the ceiling).
cat > "$work/cycle.lua" <<'LUA'
-- args: kind list n
local reqs, i = {}, 0
init = function(args)
    local kind, list, n = args[1], args[2], tonumber(args[3])
    for k = 1, 10000 do
        local path
        local j = math.random(n)
        local line = string.format("login%07d%%3Bpassword%07d", j, j)
        if kind == "add" then
            path = "/sts/ADD?FILENAME=" .. list .. "&ADD_MODE=LAST&LINE=added" .. k
        elseif kind == "mix" then
            if k % 5 == 0 then
                path = "/sts/ADD?FILENAME=" .. list .. "&ADD_MODE=LAST&LINE=added" .. k
            else
                path = "/sts/READ?FILENAME=" .. list
            end
        elseif kind == "find" then
            path = "/sts/FIND?FILENAME=" .. list .. "&FIND_MODE=EQUALS&LINE=" .. line
        elseif kind == "unique" then
            -- a line already there: the whole uniqueness check, list size steady
            path = "/sts/ADD?FILENAME=" .. list .. "&UNIQUE=TRUE&ADD_MODE=LAST&LINE=" .. line
        end
        reqs[k] = wrk.format("GET", path)
    end
end
request = function()
    i = i % #reqs + 1
    return reqs[i]
end
LUA

# Fills stsd with distinct lists l1..l10000 (cycled ADDs), for the scrape rows.
cat > "$work/lists.lua" <<'LUA'
local reqs, i = {}, 0
init = function(args)
    for k = 1, 10000 do reqs[k] = wrk.format("GET", "/sts/ADD?FILENAME=l" .. k .. "&LINE=x") end
end
request = function()
    i = i % #reqs + 1
    return reqs[i]
end
LUA
# A Prometheus-like scraper: one keep-alive connection, GET /metrics every 100 ms.
cat > "$work/scrape.lua" <<'LUA'
delay = function() return 100 end
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
cp "$work/data/logins.csv" "$work/data/k1.csv"
sts "INITFILE?FILENAME=k1.csv"
sts "ADD?FILENAME=mix.csv&LINE=seed"
if [ "$big" = 1 ]; then
    for f in m1 m2 m10; do sts "INITFILE?FILENAME=$f.csv"; done
fi

# run_wrk CONNS WRK_ARGS... -> "rps p50_ms p99_ms errors"
run_wrk() {
    local conns=$1; shift
    local threads=2
    [ "$conns" -lt 2 ] && threads=1
    [ "$1" = -t1 ] && { threads=1; shift; }
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

printf '%-34s %10s %9s %9s %10s %9s %7s %6s\n' scenario "req/s" "p50 ms" "p99 ms" "ceiling" "ceil p99" ratio errors
report() {   # name results-file ceiling-file
    local name=$1 f=$2 c=$3
    local rps p50 p99 err crps cp99
    rps=$(cut -d' ' -f1 "$f" | median); p50=$(cut -d' ' -f2 "$f" | median)
    p99=$(cut -d' ' -f3 "$f" | median); err=$(cut -d' ' -f4 "$f" | awk '{ s += $1 } END { print s }')
    crps=$(cut -d' ' -f1 "$c" | median); cp99=$(cut -d' ' -f3 "$c" | median)
    printf '%-34s %10s %9s %9s %10s %9s %7s %6s\n' "$name" "$rps" "$p50" "$p99" "$crps" "$cp99" \
        "$(awk -v a="$rps" -v b="$crps" 'BEGIN { printf "%.2f", b ? a / b : 0 }')" "$err"
}

# scenario NAME CONNS WRK_ARGS...: the same wrk arguments against the ceiling and stsd
# (@PORT@ in them stands for the server's port), alternating, ROUNDS times.
scenario() {
    local name=$1 conns=$2; shift 2
    if [ -n "${BENCH_ONLY:-}" ] && ! grep -qw -- "$name" <<< "$BENCH_ONLY"; then return; fi
    : > "$work/s.txt"; : > "$work/c.txt"
    for _ in $(seq "$rounds"); do
        run_wrk "$conns" "${@//@PORT@/$ceil_port}" >> "$work/c.txt"
        run_wrk "$conns" "${@//@PORT@/$stsd_port}" >> "$work/s.txt"
    done
    report "$name" "$work/s.txt" "$work/c.txt"
}

# pair NAME CONNS SMALL -- BIG: stsd alone, the same command on a 1k-line list (SMALL,
# one string) and on a big list (BIG...), alternating; ratio = big / small.
pair() {
    local name=$1 conns=$2 small=$3; shift 4
    if [ -n "${BENCH_ONLY:-}" ] && ! grep -qw -- "$name" <<< "$BENCH_ONLY"; then return; fi
    : > "$work/s.txt"; : > "$work/c.txt"
    for _ in $(seq "$rounds"); do
        # shellcheck disable=SC2086
        run_wrk "$conns" ${small//@PORT@/$stsd_port} >> "$work/c.txt"
        run_wrk "$conns" "${@//@PORT@/$stsd_port}" >> "$work/s.txt"
    done
    report "$name" "$work/s.txt" "$work/c.txt"
}

# versus NAME CONNS PLAIN_URL SECURE_URL [WRK_ARGS...]: the same wrk arguments against plain
# http ('ceiling' column) and https, alternating; ratio = https / http.
versus() {
    local name=$1 conns=$2 plain=$3 secure=$4; shift 4
    if [ -n "${BENCH_ONLY:-}" ] && ! grep -qw -- "$name" <<< "$BENCH_ONLY"; then return; fi
    : > "$work/s.txt"; : > "$work/c.txt"
    for _ in $(seq "$rounds"); do
        run_wrk "$conns" "$@" "$plain" >> "$work/c.txt"
        run_wrk "$conns" "$@" "$secure" >> "$work/s.txt"
    done
    report "$name" "$work/s.txt" "$work/c.txt"
}

base="http://127.0.0.1:@PORT@/sts"
close=(-H "Connection: close")
cyc="$work/cycle.lua"
scenario read-keepalive-50 50 "$base/READ?FILENAME=logins.csv"
scenario read-newconn-50 50 "${close[@]}" "$base/READ?FILENAME=logins.csv"
scenario add-last-50 50 -s "$cyc" "$base/" -- add added.csv 1
scenario mix-80read-20add-50 50 -s "$cyc" "$base/" -- mix mix.csv 1
# Latency: one wrk thread (an injector's connection pool on another machine is not
# competing for these cores), more rounds since tails are noisy on a shared machine.
rounds_saved=$rounds; rounds=$((rounds * 2 + 1))
scenario closed-loop-8 8 -t1 "$base/READ?FILENAME=logins.csv"
rounds=$rounds_saved
if [ "$big" = 1 ]; then
    scenario drain-10M-keepfalse 50 "$base/READ?FILENAME=m10.csv&KEEP=FALSE"
    scenario random-1M 50 "$base/READ?FILENAME=m1.csv&READ_MODE=RANDOM"
    scenario find-equals-1M 50 -s "$cyc" "$base/" -- find m1.csv 1000000
fi
scenario keepalive-2000-conns 2000 "$base/READ?FILENAME=logins.csv"
# HTTPS: a second stsd with TLS (a P-256 certificate made here) on the same files; the
# 'ceiling' column is the plain-HTTP stsd above, ratio = https / http.
if command -v openssl >/dev/null && { [ -z "${BENCH_ONLY:-}" ] || grep -qw https <<< "$BENCH_ONLY"; }; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
        -subj /CN=localhost -keyout "$work/tls.key" -out "$work/tls.crt" 2>/dev/null
    tls_port=$(free_port)
    build/stsd --port "$tls_port" --bind 127.0.0.1 --dataset-dir "$work/data" \
        -DjmeterPlugin.sts.daemon=true -Dstsd.maxConnections=10000 ${STSD_ARGS:-} \
        -Dstsd.tls.cert="$work/tls.crt" -Dstsd.tls.key="$work/tls.key" 2> "$work/stsd-tls.log" &
    tls_pid=$!
    sleep 0.5
    curl -sfk "https://127.0.0.1:$tls_port/sts/INITFILE?FILENAME=logins.csv" > /dev/null
    echo
    echo "HTTPS (TLS 1.3): stsd over https, against the same stsd over plain http ('ceiling' column); ratio = https / http"
    plain="http://127.0.0.1:$stsd_port/sts/READ?FILENAME=logins.csv"
    secure="https://127.0.0.1:$tls_port/sts/READ?FILENAME=logins.csv"
    versus https-keepalive-read-50 50 "$plain" "$secure"
    versus https-newconn-read-50 50 "$plain" "$secure" "${close[@]}"
fi
# READ keep-alive while GET /metrics runs every 100 ms on one keep-alive connection (as a
# Prometheus would), against the same READ without; ratio = with / without (goal
# >= 0.97). Then the same with 10,000 lists (each scrape formats ~30,000 list series),
# and how long one scrape of those lists takes.
scrape_pair() {   # NAME
    local name=$1 c0 c1
    : > "$work/s.txt"; : > "$work/c.txt"; : > "$work/cs.txt"; : > "$work/cc.txt"
    for _ in $(seq "$rounds"); do
        c0=$(stsd_ticks)
        run_wrk 50 "http://127.0.0.1:$stsd_port/sts/READ?FILENAME=logins.csv" >> "$work/c.txt"
        c1=$(stsd_ticks)
        per_request "$c0" "$c1" "$(tail -n1 "$work/c.txt" | cut -d' ' -f1)" >> "$work/cc.txt"
        wrk -t1 -c1 -d"$((secs + 1))s" -s "$work/scrape.lua" \
            "http://127.0.0.1:$stsd_port/metrics" > "$work/scraper.txt" 2>&1 &
        local scraper=$!
        c0=$(stsd_ticks)
        run_wrk 50 "http://127.0.0.1:$stsd_port/sts/READ?FILENAME=logins.csv" >> "$work/s.txt"
        c1=$(stsd_ticks)
        per_request "$c0" "$c1" "$(tail -n1 "$work/s.txt" | cut -d' ' -f1)" >> "$work/cs.txt"
        wait "$scraper" || true
    done
    report "$name" "$work/s.txt" "$work/c.txt"
    # The same comparison in stsd's CPU per READ (scrapes included), which the load of
    # other processes on the machine skews far less than req/s.
    local us_with us_without
    us_with=$(median < "$work/cs.txt"); us_without=$(median < "$work/cc.txt")
    printf '%-34s %s us of stsd CPU per READ with scrapes, %s without: ratio %s\n' \
        "  cpu-per-READ" "$us_with" "$us_without" \
        "$(awk -v a="$us_with" -v b="$us_without" 'BEGIN { printf "%.3f", a ? b / a : 0 }')"
}
stsd_ticks() { awk '{ print $14 + $15 }' "/proc/$stsd_pid/stat"; }
per_request() {   # TICKS0 TICKS1 RPS -> microseconds of CPU per request
    awk -v a="$1" -v b="$2" -v r="$3" -v s="$secs" -v t="$(getconf CLK_TCK)" \
        'BEGIN { printf "%.3f\n", r ? (b - a) * 1e6 / t / (r * s) : 0 }'
}
# CPU that stsd spends per scrape (user + system ticks over 200 scrapes), which load on the
# machine does not skew as it skews wall-clock times.
scrape_cpu() {   # LISTS
    local tick c0 c1
    tick=$(getconf CLK_TCK)
    c0=$(awk '{ print $14 + $15 }' "/proc/$stsd_pid/stat")
    for _ in $(seq 200); do curl -sf -o /dev/null "http://127.0.0.1:$stsd_port/metrics"; done
    c1=$(awk '{ print $14 + $15 }' "/proc/$stsd_pid/stat")
    printf '%-34s %s ms of stsd CPU per scrape (200 scrapes): %s%% of one core at one per 100 ms\n' \
        "scrape-cpu-$1-lists" \
        "$(awk -v a="$c0" -v b="$c1" -v t="$tick" 'BEGIN { printf "%.2f", (b - a) * 1000 / t / 200 }')" \
        "$(awk -v a="$c0" -v b="$c1" -v t="$tick" 'BEGIN { printf "%.1f", (b - a) * 1000 / t / 200 / 100 * 100 }')"
}
scrape_rows() {
    if [ -n "${BENCH_ONLY:-}" ] && ! grep -qw -- "scrape" <<< "$BENCH_ONLY"; then return; fi
    local lists
    lists=$(curl -sf "http://127.0.0.1:$stsd_port/metrics" | awk '$1 == "stsd_lists" { print $2 }')
    echo
    echo "stsd alone: READ keep-alive while GET /metrics runs every 100 ms ('ceiling' column: the same READ without scrapes); ratio = with / without"
    scrape_pair "read-keepalive-50-scrape-$lists-lists"
    scrape_cpu "$lists"
    wrk -t1 -c4 -d3s -s "$work/lists.lua" "http://127.0.0.1:$stsd_port/" > /dev/null 2>&1
    lists=$(curl -sf "http://127.0.0.1:$stsd_port/metrics" | awk '$1 == "stsd_lists" { print $2 }')
    scrape_pair "read-keepalive-50-scrape-$lists-lists"
    local t
    : > "$work/t.txt"
    for _ in 1 2 3 4 5 6 7; do
        curl -sf -o "$work/scrape.txt" -w '%{time_total}\n' \
            "http://127.0.0.1:$stsd_port/metrics" >> "$work/t.txt"
    done
    t=$(median < "$work/t.txt")
    printf '%-34s %s ms (median of 7 curl fetches), %s bytes, %s lines\n' "scrape-$lists-lists" \
        "$(awk -v t="$t" 'BEGIN { printf "%.1f", t * 1000 }')" "$(wc -c < "$work/scrape.txt")" \
        "$(wc -l < "$work/scrape.txt")"
    scrape_cpu "$lists"
}
scrape_rows

if [ "$big" = 1 ]; then
    echo
    echo "stsd alone: the same command on a 1k-line list ('ceiling' column) and a 2M-line list; ratio = 2M / 1k"
    pair random-2M-vs-1k 50 "$base/READ?FILENAME=k1.csv&READ_MODE=RANDOM" -- \
        "$base/READ?FILENAME=m2.csv&READ_MODE=RANDOM"
    last1k="login0001000%3Bpassword0001000"; last2m="login2000000%3Bpassword2000000"
    pair find-equals-end-2M-vs-1k 50 "$base/FIND?FILENAME=k1.csv&FIND_MODE=EQUALS&LINE=$last1k" -- \
        "$base/FIND?FILENAME=m2.csv&FIND_MODE=EQUALS&LINE=$last2m"
    pair add-unique-2M-vs-1k 50 "-s $cyc $base/ -- unique k1.csv 1000" -- \
        -s "$cyc" "$base/" -- unique m2.csv 2000000
fi

# Keys: INCR on one counter against READ KEEP=TRUE on a 1k-line list, same connections
# and wrk arguments, alternating; ratio = INCR / READ.
pair incr-vs-read-keepalive-50 50 "$base/READ?FILENAME=logins.csv&KEEP=TRUE" -- \
    "$base/INCR?NAME=counter"
# Wake latency of 100 GET watchers after a SET (build/bench-keys starts its own stsd).
if [ -z "${BENCH_ONLY:-}" ] || [[ " $BENCH_ONLY " == *" keys-wake "* ]]; then
    make --no-print-directory -s build/bench-keys >/dev/null
    echo
    STSD=build/stsd build/bench-keys 300
fi

# Waiting and leases: wake latency with 100 waiters, 5,000 parked waiters, READ LEASE +
# ACK pairs against READ KEEP=FALSE (build/bench-queues starts its own stsd).
if [ -z "${BENCH_ONLY:-}" ] || [[ " $BENCH_ONLY " == *" queues "* ]]; then
    make --no-print-directory -s build/bench-queues >/dev/null
    echo
    STSD=build/stsd build/bench-queues "$secs" "$rounds"
fi

# Barriers: release skew of 1,000 parties from 4 processes over 20 generations, and the
# CPU of 10,000 parked arrivals (build/bench-barrier starts its own stsd).
if [ -z "${BENCH_ONLY:-}" ] || [[ " $BENCH_ONLY " == *" barrier "* ]]; then
    make --no-print-directory -s build/bench-barrier >/dev/null
    echo
    STSD=build/stsd build/bench-barrier
fi

# ---- durability: fsync policies against each other and against Redis ----------------------

# One stsd per policy ("off": no journal; "nodisk": fsync=always with every fdatasync
# skipped by the failsync shim, so that its rows show what the group commit costs apart
# from the disk), each in its own directory, and Redis with appendonly yes + appendfsync
# always (the same promise as fsync=always). Rows compare two servers measured
# alternately in the same run; "bytes/op" is what the server caused to be written to the
# disk per request (/proc/PID/io write_bytes: pages dirtied; a small append to a page
# already synced dirties it again).
durable_wanted() {
    [ -z "${BENCH_ONLY:-}" ] || grep -qw -- "$1" <<< "$BENCH_ONLY"
}
declare -A dport dpid
if [ -z "${BENCH_ONLY:-}" ] || grep -q -- "durable-" <<< "$BENCH_ONLY"; then
    awk 'BEGIN { for (i = 1; i <= 2000000; i++) printf "login%07d;password%07d\n", i, i }' \
        > "$work/data/fill.csv"
    for pol in off no everysec always nodisk; do
        mkdir -p "$work/$pol"
        ln "$work/data/fill.csv" "$work/$pol/fill.csv" 2>/dev/null ||
            cp "$work/data/fill.csv" "$work/$pol/fill.csv"
        jargs=(--journal on -Dstsd.journal.fsync="${pol/nodisk/always}" --state-dir "$work/$pol/state")
        [ "$pol" = off ] && jargs=()
        shim=(env)
        [ "$pol" = nodisk ] && shim=(env STSD_SKIPSYNC=1 LD_PRELOAD="$PWD/build/tests/libfailsync.so")
        dport[$pol]=$(free_port)
        "${shim[@]}" build/stsd --port "${dport[$pol]}" --bind 127.0.0.1 --dataset-dir "$work/$pol" \
            -DjmeterPlugin.sts.daemon=true -Dstsd.maxConnections=10000 "${jargs[@]}" \
            2> "$work/$pol.log" &
        dpid[$pol]=$!
        extra_pids="${extra_pids:-} $!"
    done
    redis_port=""
    if command -v redis-server > /dev/null && command -v redis-benchmark > /dev/null; then
        redis_port=$(free_port)
        mkdir -p "$work/redis"
        redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$work/redis" \
            --appendonly yes --appendfsync always --save '' --daemonize no \
            > "$work/redis.log" 2>&1 &
        redis_pid=$!
        extra_pids="$extra_pids $!"
    else
        echo "(redis-server or redis-benchmark missing: scripts/deps.sh bench installs them as root; Redis rows skipped)"
    fi
    sleep 0.5
fi
trap 'for p in ${extra_pids:-}; do kill "$p" 2>/dev/null; done; cleanup' EXIT

write_bytes() { awk '/^write_bytes/ { print $2 }' "/proc/$1/io"; }

# stsd_run POLICY CONNS add|read|incr -> "rps bytes_per_op"
stsd_run() {
    local pol=$1 conns=$2 kind=$3 port=${dport[$1]} out w0 w1 n
    if [ "$kind" = read ]; then      # a full list to drain, loaded before the clock starts
        curl -sf "http://127.0.0.1:$port/sts/INITFILE?FILENAME=fill.csv" | grep -q OK ||
            { echo "bench: INITFILE of fill.csv failed on the $pol server" >&2; exit 1; }
        w0=$(write_bytes "${dpid[$pol]}")
        out=$(wrk -t2 -c"$conns" -d"${secs}s" "http://127.0.0.1:$port/sts/READ?FILENAME=fill.csv&KEEP=FALSE" 2>&1)
    elif [ "$kind" = incr ]; then
        w0=$(write_bytes "${dpid[$pol]}")
        out=$(wrk -t2 -c"$conns" -d"${secs}s" "http://127.0.0.1:$port/sts/INCR?NAME=ids" 2>&1)
    else
        # One fixed line, as redis-benchmark's RPUSH pushes one fixed value ("xxx"): the
        # same request each time, so neither client pays for building requests.
        w0=$(write_bytes "${dpid[$pol]}")
        out=$(wrk -t2 -c"$conns" -d"${secs}s" "http://127.0.0.1:$port/sts/ADD?FILENAME=added.csv&ADD_MODE=LAST&LINE=xxx" 2>&1)
    fi
    w1=$(write_bytes "${dpid[$pol]}")
    [ "$kind" = read ] && ! curl -sf "http://127.0.0.1:$port/sts/LENGTH?FILENAME=fill.csv" |
        grep -q '<body>[1-9]' && echo "bench: fill.csv ran dry on the $pol server" >&2
    n=$(awk '/requests in/ { print $1 }' <<< "$out")
    awk -v out="$out" -v n="$n" -v w="$((w1 - w0))" 'BEGIN {
        split(out, l, "\n"); for (i in l) if (l[i] ~ /Requests\/sec/) { split(l[i], f, " "); r = f[2] }
        printf "%.0f %.0f\n", r, n ? w / n : 0 }'
}

# redis_run CONNS rpush|lpop -> "rps bytes_per_op" (LPOP pops what the RPUSH run pushed)
redis_run() {
    local conns=$1 test=$2 n=$((secs * 8000)) w0 w1 rps
    w0=$(write_bytes "$redis_pid")
    rps=$(redis-benchmark -p "$redis_port" -c "$conns" -n "$n" -t "$test" -q 2>/dev/null |
          tr '\r' '\n' | awk '/requests per second/ { for (i = 1; i <= NF; i++) if ($i == "requests") r = $(i - 1) } END { print r + 0 }')
    w1=$(write_bytes "$redis_pid")
    echo "$rps $(( (w1 - w0) / n ))"
}

# durable NAME LABEL_A LABEL_B CMD_A -- CMD_B: A and B alternated ROUNDS times.
durable() {
    local name=$1 la=$2 lb=$3; shift 3
    durable_wanted "$name" || return 0
    local a=() b=() seen=0
    for x in "$@"; do
        if [ "$x" = -- ]; then seen=1; elif [ $seen = 0 ]; then a+=("$x"); else b+=("$x"); fi
    done
    : > "$work/a.txt"; : > "$work/b.txt"
    for _ in $(seq "$rounds"); do
        "${a[@]}" >> "$work/a.txt"
        "${b[@]}" >> "$work/b.txt"
    done
    local ra rb ba bb
    ra=$(cut -d' ' -f1 "$work/a.txt" | median); ba=$(cut -d' ' -f2 "$work/a.txt" | median)
    rb=$(cut -d' ' -f1 "$work/b.txt" | median); bb=$(cut -d' ' -f2 "$work/b.txt" | median)
    printf '%-24s %-34s %9s %8s   %-30s %9s %8s %6s\n' "$name" "$la" "$ra" "$ba" "$lb" "$rb" "$bb" \
        "$(awk -v a="$ra" -v b="$rb" 'BEGIN { printf "%.2f", b ? a / b : 0 }')"
}

if [ -z "${BENCH_ONLY:-}" ] || grep -q -- "durable-" <<< "$BENCH_ONLY"; then
    echo
    echo "durability: two servers alternated; req/s and bytes written to disk per request; ratio = A / B"
    # The floor under these rows: one fdatasync's time and CPU on the disk the servers use.
    echo "this disk: $(build/fsync-floor "$work" 2)"
    printf '%-24s %-34s %9s %8s   %-30s %9s %8s %6s\n' row "A" "req/s" "bytes/op" "B" "req/s" "bytes/op" ratio
    if [ -n "$redis_port" ]; then
        durable durable-add-redis-50 "stsd ADD LAST, fsync=always, c50" "redis RPUSH, fsync always, c50" \
            stsd_run always 50 add -- redis_run 50 rpush
        durable durable-read-redis-50 "stsd READ KEEP=FALSE, always, c50" "redis LPOP, fsync always, c50" \
            stsd_run always 50 read -- redis_run 50 lpop
        durable durable-nodisk-redis-50 "stsd ADD LAST, syncs skipped, c50" "redis RPUSH, fsync always, c50" \
            stsd_run nodisk 50 add -- redis_run 50 rpush
    fi
    durable durable-add-200 "stsd ADD LAST, always, c200" "stsd ADD LAST, fsync=no, c200" \
        stsd_run always 200 add -- stsd_run no 200 add
    durable durable-read-200 "stsd READ KEEP=FALSE, always, c200" "stsd READ KEEP=FALSE, no, c200" \
        stsd_run always 200 read -- stsd_run no 200 read
    durable durable-nodisk-200 "stsd ADD LAST, syncs skipped, c200" "stsd ADD LAST, fsync=no, c200" \
        stsd_run nodisk 200 add -- stsd_run no 200 add
    durable durable-incr-always-50 "stsd INCR, always, c50" "stsd ADD LAST, always, c50" \
        stsd_run always 50 incr -- stsd_run always 50 add
    durable durable-add-everysec "stsd ADD LAST, everysec, c50" "stsd ADD LAST, journal off, c50" \
        stsd_run everysec 50 add -- stsd_run off 50 add
    durable durable-read-everysec "stsd READ KEEP=FALSE, everysec, c50" "stsd READ KEEP=FALSE, off, c50" \
        stsd_run everysec 50 read -- stsd_run off 50 read
fi

echo
echo "machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(uname -sr); wrk and both servers share the cores"
echo "each row: median of $rounds runs of ${secs}s, stsd and ceiling alternating; ratio = stsd / ceiling"
