#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench-tls-cpu.sh - READ keep-alive over plain HTTP and HTTPS, alternating, counting the
# CPU seconds stsd and wrk spend: requests per CPU-second is what the https/http ratio
# tends to on an otherwise idle machine, and moves less than req/s on a busy one.
# Usage: scripts/bench-tls-cpu.sh [ROUNDS]   (default 5; 50 connections, 5 s per run)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
scripts/deps.sh bench
make --no-print-directory -s build/stsd >/dev/null
work=$(mktemp -d /tmp/stsd-tlscpu.XXXXXX)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
mkdir "$work/data"
awk 'BEGIN { for (i = 1; i <= 1000; i++) printf "login%07d;password%07d\n", i, i }' > "$work/data/logins.csv"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
    -subj /CN=localhost -keyout "$work/tls.key" -out "$work/tls.crt" 2>/dev/null
start() {   # NAME extra-args...: starts stsd, sets port_NAME and pid_NAME
    local name=$1; shift
    build/stsd --port 0 --port-file "$work/$name.port" --bind 127.0.0.1 --dataset-dir "$work/data" \
        -DjmeterPlugin.sts.daemon=true -DjmeterPlugin.sts.initFileAtStartup=logins.csv "$@" \
        2> "$work/$name.log" &
    pids+=($!)
    eval "pid_$name=$!"
    for _ in $(seq 100); do [ -s "$work/$name.port" ] && break; sleep 0.05; done
    eval "port_$name=$(cat "$work/$name.port")"
}
start http
start https -Dstsd.tls.cert="$work/tls.crt" -Dstsd.tls.key="$work/tls.key"
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
run() {   # scheme port pid -> "requests stsd_cpu wrk_cpu"
    local a b out
    a=$(ticks "$3")
    out=$( { /usr/bin/time -f "WRKCPU %U %S" wrk -t2 -c50 -d5s \
        "$1://127.0.0.1:$2/sts/READ?FILENAME=logins.csv"; } 2>&1)
    b=$(ticks "$3")
    awk -v s=$((b - a)) -v hz="$hz" '/requests in/ { r = $1 } /WRKCPU/ { w = $2 + $3 }
        END { printf "%d %.2f %.2f\n", r, s / hz, w }' <<< "$out"
}
printf '%-6s %9s %9s %9s %12s %12s\n' round scheme requests "stsd cpu" "req/stsd-s" "req/all-cpu-s"
for i in $(seq "$rounds"); do
    for scheme in http https; do
        eval "port=\$port_$scheme pid=\$pid_$scheme"
        read -r req scpu wcpu <<< "$(run "$scheme" "$port" "$pid")"
        awk -v i="$i" -v sc="$scheme" -v r="$req" -v s="$scpu" -v w="$wcpu" 'BEGIN {
            printf "%-6s %9s %9d %9.2f %12.0f %12.0f\n", i, sc, r, s, r / s, r / (s + w) }'
    done
done
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); wrk and stsd share the cores"
