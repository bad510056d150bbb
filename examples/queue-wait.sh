#!/bin/sh
# queue-wait.sh - a producer/consumer queue without polling, and lines that come back:
# READ with TIMEOUT waits for a line; READ with LEASE lends it until ACK (done), RELEASE
# (put back now) or the lease's deadline (put back by itself).
# Run: `make run` in one terminal, then `sh examples/queue-wait.sh` in another (about 3 s).
#      STS=http://HOST:PORT/sts for another server; RUN_ID=... (default demo) names this
#      run's scratch queue, RUN_ID.jobs.csv, DROPped at the end (examples/README.md).
# Stops with status 1 at the first answer that is not the one expected.
set -eu
STS=${STS:-http://localhost:9191/sts}
Q=${RUN_ID:-demo}.jobs.csv   # a scratch list of this run: two runs never share it

# Sends one command; prints the body of its answer; fails unless it is OK. With a second
# argument, also writes the X-STS-Lease header's value (the lease id) to that file.
sts() {
    page=$(curl -fsS -D "${TMPDIR:-/tmp}/queue-wait.$$" "$STS/$1") ||
        { echo "queue-wait: $1: no answer from $STS" >&2; exit 1; }
    if [ $# -gt 1 ]; then
        tr -d '\r' <"${TMPDIR:-/tmp}/queue-wait.$$" | sed -n 's/^[Xx]-[Ss][Tt][Ss]-[Ll]ease: //p' >"$2"
    fi
    rm -f "${TMPDIR:-/tmp}/queue-wait.$$"
    body=$(printf '%s' "$page" | tr -d '\n' | sed 's|.*<body>\(.*\)</body>.*|\1|')
    case "$page" in
    *"<title>OK</title>"*) printf '%s' "$body" ;;
    *) echo "queue-wait: $1: $body" >&2; exit 1 ;;
    esac
}
check() { [ "$1" = "$2" ] || { echo "queue-wait: $3: got '$1', expected '$2'" >&2; exit 1; }; }
lease=${TMPDIR:-/tmp}/queue-wait-lease.$$
trap 'rm -f "$lease" "${TMPDIR:-/tmp}/queue-wait.$$"' EXIT
curl -fsS "$STS/RESET?FILENAME=$Q" >/dev/null  # KO if the list does not exist yet: fine

echo "== TIMEOUT: a consumer waits (up to 5 s) on an empty queue; a producer adds 1 s later"
start=$(date +%s%N)
sts "READ?FILENAME=$Q&KEEP=FALSE&TIMEOUT=5" >"$lease.got" &
consumer=$!
sleep 1
sts "ADD?FILENAME=$Q&LINE=job-1&ADD_MODE=LAST" >/dev/null
wait "$consumer"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "the consumer got $(cat "$lease.got") after $ms ms, without polling"
check "$(cat "$lease.got")" job-1 "the waiting consumer"
rm -f "$lease.got"

echo "== LEASE and ACK: the line leaves the list, on loan until ACKed"
sts "ADD?FILENAME=$Q&LINE=job-2&ADD_MODE=LAST" >/dev/null
got=$(sts "READ?FILENAME=$Q&KEEP=FALSE&LEASE=30" "$lease")
echo "took $got, lease $(cat "$lease"); LENGTH $(sts "LENGTH?FILENAME=$Q"), on loan $(sts "LEASES?FILENAME=$Q")"
check "$(sts "LEASES?FILENAME=$Q")" 1 "LEASES after a READ with LEASE"
sts "ACK?FILENAME=$Q&LEASE=$(cat "$lease")" >/dev/null
echo "after ACK: LENGTH $(sts "LENGTH?FILENAME=$Q"), on loan $(sts "LEASES?FILENAME=$Q")"
check "$(sts "LEASES?FILENAME=$Q")" 0 "LEASES after ACK"

echo "== RELEASE: a consumer that cannot finish puts the line back at the head at once"
sts "ADD?FILENAME=$Q&LINE=job-3&ADD_MODE=LAST" >/dev/null
sts "ADD?FILENAME=$Q&LINE=job-4&ADD_MODE=LAST" >/dev/null
got=$(sts "READ?FILENAME=$Q&KEEP=FALSE&LEASE=30" "$lease")
sts "RELEASE?FILENAME=$Q&LEASE=$(cat "$lease")" >/dev/null
check "$(sts "READ?FILENAME=$Q&KEEP=TRUE")" "$got" "the released line, first again"
echo "released $got: it is the next line read"

echo "== Expiry: a consumer that dies never ACKs; its line comes back after LEASE seconds"
sts "RESET?FILENAME=$Q" >/dev/null
sts "ADD?FILENAME=$Q&LINE=job-5&ADD_MODE=LAST" >/dev/null
sts "READ?FILENAME=$Q&KEEP=FALSE&LEASE=1" >/dev/null
echo "leased job-5 for 1 s: LENGTH $(sts "LENGTH?FILENAME=$Q")"
sleep 1.5
check "$(sts "LENGTH?FILENAME=$Q")" 1 "LENGTH once the lease expired"
echo "1.5 s later: LENGTH $(sts "LENGTH?FILENAME=$Q"), job-5 is back"
sts "DROP?FILENAME=$Q" >/dev/null   # the scratch list goes (the admin token, with tokens on)
