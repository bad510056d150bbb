#!/bin/sh
# stsctl-script.sh - the setup and teardown of a load test, scripted with stsctl: load the
# users, check there are enough, hand out jobs with leases, and save what is left.
# Run: `make run` in one terminal, then `sh examples/stsctl-script.sh` in another
#      (STSD_URL=http://HOST:PORT and STSD_TOKEN=... for another server; stsctl on PATH,
#      or STSCTL=build/stsctl; RUN_ID=... (default demo) names this run's lists,
#      RUN_ID.users.csv and RUN_ID.jobs.csv, dropped at the end: see examples/README.md).
set -eu
stsctl=${STSCTL:-stsctl}
run=${RUN_ID:-demo}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# Before the run: the users as a list, checked.
printf 'user%s;secret\n' 1 2 3 4 5 > "$tmp/users.csv"
"$stsctl" load "$tmp/users.csv" --as "$run.users.csv" >/dev/null
n=$("$stsctl" length "$run.users.csv")
[ "$n" -ge 5 ] || { echo "only $n users" >&2; exit 1; }

# A queue of jobs, added from standard input; each taken for good with a lease (its id printed
# after the line), ACKed once done.
printf 'job-%s\n' 1 2 3 | "$stsctl" add "$run.jobs.csv" - --mode last
while :; do
    rc=0; out=$("$stsctl" read "$run.jobs.csv" --no-keep --lease 60 --print-lease) || rc=$?
    [ "$rc" -eq 1 ] && break          # KO: the queue is empty (the message on stderr)
    [ "$rc" -eq 0 ] || exit "$rc"     # 3: no server, or the token refused
    job=$(printf '%s\n' "$out" | head -n 1)
    echo "doing $job"                 # the work; if it failed, no ack: the job comes back
    "$stsctl" ack "$run.jobs.csv" --lease "$(printf '%s\n' "$out" | tail -n 1)"
done

# After the run: every list and its length, then the users left saved to a file.
"$stsctl" status | while IFS=$(printf '\t') read -r list lines; do
    echo "$list: $lines lines"
done
"$stsctl" save "$run.users.csv" --no-add-timestamp
# The run's scratch lists go, so the next run starts clean (the admin token, with tokens on).
"$stsctl" drop --prefix "$run." >/dev/null
