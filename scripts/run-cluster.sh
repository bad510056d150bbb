#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run-cluster.sh - what `make run-cluster` starts: three stsd nodes on this machine over
# the example datasets, as `make run` starts one (conf/run.properties), until ENTER or
# Ctrl-C stops all three.
#
# Node N (1, 2, 3) serves HTTP on 919N and raft on 929N, on 127.0.0.1; its dataset
# directory is a copy of datasets/ in build/run-cluster/nN/data, its state in
# build/run-cluster/nN/state, its log build/run-cluster/nN.log. Each run starts a new
# cluster from the files (the previous run's directories are removed first, and kept
# after the stop for a look). The first leader loads every .csv file as a list.
# Usage: scripts/run-cluster.sh [STSD]        env: RUN_CLUSTER_DIR (build/run-cluster)
set -u
stsd=${1:-build/stsd}
top=${RUN_CLUSTER_DIR:-build/run-cluster}
[ -x "$stsd" ] || { echo "run-cluster: no $stsd (make first)" >&2; exit 1; }
if command -v ss >/dev/null 2>&1; then
    for port in 9191 9192 9193 9291 9292 9293; do
        # Listening on 127.0.0.1 or on every address (another host's address is no clash).
        if ss -Htln "sport = :$port" | awk '{print $4}' |
           grep -Eq "^(127\.0\.0\.1|0\.0\.0\.0|\*|\[::\]|\[::ffff:127\.0\.0\.1\]):$port\$"; then
            echo "run-cluster: port $port is in use (another make run or run-cluster?)" >&2
            exit 1
        fi
    done
fi

pids=""
stop() {
    trap - INT TERM EXIT
    [ -n "$pids" ] || exit 0
    echo
    echo "run-cluster: stopping nodes (SIGTERM to $pids)"
    for pid in $pids; do
        kill -TERM "$pid" 2>/dev/null
    done
    for pid in $pids; do
        wait "$pid" 2>/dev/null
    done
    echo "run-cluster: stopped; logs and states in $top/"
    exit 0
}
trap stop INT TERM EXIT

mkdir -p "$top"
for i in 1 2 3; do
    rm -rf "$top/n$i" "$top/n$i.log"
    mkdir -p "$top/n$i/data"
    cp datasets/*.csv "$top/n$i/data/"
done
for i in 1 2 3; do
    "$stsd" --config conf/run.properties -DjmeterPlugin.sts.daemon=true \
        -DjmeterPlugin.sts.port=919$i -Dstsd.bind=127.0.0.1 \
        -DjmeterPlugin.sts.datasetDirectory="$top/n$i/data" \
        -Dstsd.stateDirectory="$top/n$i/state" \
        -Dstsd.cluster.self=$i \
        -Dstsd.cluster.node.1="127.0.0.1:9291 http://127.0.0.1:9191" \
        -Dstsd.cluster.node.2="127.0.0.1:9292 http://127.0.0.1:9192" \
        -Dstsd.cluster.node.3="127.0.0.1:9293 http://127.0.0.1:9193" \
        </dev/null >"$top/n$i.log" 2>&1 &
    pids="$pids $!"
done

# Up to 15 s for a leader that serves (with curl; without it, a fixed wait).
leader=""
if command -v curl >/dev/null 2>&1; then
    tries=0
    while [ -z "$leader" ] && [ $tries -lt 150 ]; do
        for i in 1 2 3; do
            if curl -s -m 1 "http://127.0.0.1:919$i/sts/CLUSTER?FORMAT=JSON" |
               grep -q '"role":"leader","serving":true'; then
                leader=$i
            fi
        done
        [ -n "$leader" ] || { sleep 0.1; tries=$((tries + 1)); }
    done
else
    sleep 3
fi
for pid in $pids; do
    kill -0 "$pid" 2>/dev/null || { echo "run-cluster: a node exited; see $top/n*.log" >&2
                                    tail -n 5 "$top"/n*.log >&2; exit 1; }
done

echo "run-cluster: three stsd nodes over the example datasets (state in $top/)"
for i in 1 2 3; do
    role=follower
    [ "$i" = "$leader" ] && role=leader
    [ -n "$leader" ] || role="?"
    echo "  node $i ($role): http://127.0.0.1:919$i/sts/  raft 127.0.0.1:929$i  log $top/n$i.log"
done
echo "  the dashboard: http://127.0.0.1:9191/ (any node's; followers forward to the leader)"
echo "  who leads: curl -s 'http://127.0.0.1:9191/sts/CLUSTER'"
echo "  try: curl -s 'http://127.0.0.1:9192/sts/READ?FILENAME=logins.csv'"
if [ -t 0 ]; then
    echo "ENTER or Ctrl-C stops all three."
    read -r _ || true
else
    echo "Ctrl-C (SIGINT) or SIGTERM stops all three."
    for pid in $pids; do
        wait "$pid" 2>/dev/null
    done
fi
stop
