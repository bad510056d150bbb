#!/bin/sh
# stop-flag.sh - a gradual stop: the virtual users of a test read status.csv (RUN) on
# every iteration and leave when it says STOP; this script flips it for all injectors.
# Run: `make run` in one terminal, then `sh examples/stop-flag.sh stop` (or `run` to
#      switch back). STS=http://HOST:PORT/sts for another server.
# In a JMeter plan: READ FILENAME=status.csv (KEEP=TRUE), a Regular Expression Extractor
# on <body>(.*)</body>, and a While Controller on "${status}" != "STOP".
# status.csv is a list of the reference's protocol, not a key: it has no TTL and no run
# id, so switch it back (`run`) once the test is over, or the next test stops at once.
set -eu
STS=${STS:-http://localhost:9191/sts}
want=$(echo "${1:-stop}" | tr '[:lower:]' '[:upper:]')
case "$want" in RUN|STOP) ;; *) echo "usage: $0 stop|run" >&2; exit 2 ;; esac

# The body of an answer; fails unless it is OK.
sts() {
    page=$(curl -fsS "$STS/$1") || { echo "stop-flag: no answer from $STS" >&2; exit 1; }
    case "$page" in *"<title>OK</title>"*) ;; *) echo "stop-flag: $1: $page" >&2; exit 1 ;; esac
    printf '%s' "$page" | tr -d '\n' | sed 's|.*<body>\(.*\)</body>.*|\1|'
}

# RESET then ADD: between the two a reader gets "No more line !", which plans treat as
# "keep going"; the flag is never half-written.
sts 'RESET?FILENAME=status.csv' >/dev/null
sts "ADD?FILENAME=status.csv&LINE=$want" >/dev/null
now=$(sts 'READ?FILENAME=status.csv')
echo "status.csv now says $now"
[ "$now" = "$want" ]
