#!/bin/sh
# tour.sh - the 30-second tour of stsd with curl: the lists loaded at start, unique
# logins, data consumed once, a queue, FIND, and SAVE at the end.
# Run: `make run` in one terminal, then `sh examples/tour.sh` in another.
#      STS=http://HOST:PORT/sts sh examples/tour.sh talks to another server.
# Needs the example datasets loaded (make run loads them). Stops with status 1 at the
# first answer that is not the one expected.
set -eu
STS=${STS:-http://localhost:9191/sts}

# Sends one command and prints the lines of its answer (what is between <body> and
# </body>, one per line); stops the script unless the answer is OK.
sts() {
    page=$(curl -fsS "$STS/$1") || { echo "tour: $1: no answer from $STS" >&2; exit 1; }
    body=$(printf '%s' "$page" | tr -d '\n' | sed 's|.*<body>\(.*\)</body>.*|\1|; s|<br />|\n|g')
    case "$page" in
    *"<title>OK</title>"*) [ -z "$body" ] || printf '%s\n' "$body" ;;
    *) echo "tour: $1: $body" >&2; exit 1 ;;
    esac
}
say() { printf '\n== %s\n' "$*"; }

say "STATUS: every list and its length (loaded from datasets/ at start)"
sts STATUS

say "Unique logins: READ hands out the next account and puts it back at the tail"
for vu in 1 2 3; do echo "virtual user $vu gets $(sts 'READ?FILENAME=logins.csv')"; done
echo "logins.csv still holds $(sts 'LENGTH?FILENAME=logins.csv') accounts"

say "Consume once: READ with KEEP=FALSE takes an order for good"
before=$(sts 'LENGTH?FILENAME=queue.csv')
echo "took $(sts 'READ?FILENAME=queue.csv&KEEP=FALSE')"
after=$(sts 'LENGTH?FILENAME=queue.csv')
echo "queue.csv: $before lines before, $after after"
[ "$after" -eq $((before - 1)) ] || { echo "tour: the order was not consumed" >&2; exit 1; }

say "A queue: producers ADD at the tail, consumers READ KEEP=FALSE from the head"
sts 'ADD?FILENAME=jobs.csv&LINE=job-1&ADD_MODE=LAST'
sts 'ADD?FILENAME=jobs.csv&LINE=job-2&ADD_MODE=LAST'
first=$(sts 'READ?FILENAME=jobs.csv&KEEP=FALSE')
echo "the consumer got $first, then $(sts 'READ?FILENAME=jobs.csv&KEEP=FALSE')"
[ "$first" = job-1 ] || { echo "tour: the queue is not first in, first out" >&2; exit 1; }

say "FIND: the line of login7 (KEEP=TRUE leaves it in the list)"
sts 'FIND?FILENAME=logins.csv&LINE=login7%3B&FIND_MODE=SUBSTRING&KEEP=TRUE'

say "SAVE at the end: what is left of queue.csv goes to a timestamped file"
# The page is the reference's (the count); the X-STS-File header names the file written,
# which a second SAVE in the same second never replaces (it gets a -2).
page=$(curl -fsS -D "${TMPDIR:-/tmp}/tour-save.$$" "$STS/SAVE?FILENAME=queue.csv&ADD_TIMESTAMP=true") ||
    { echo "tour: SAVE: no answer from $STS" >&2; exit 1; }
file=$(sed -n 's/^X-STS-File: *\([^[:space:]]*\).*/\1/p' "${TMPDIR:-/tmp}/tour-save.$$")
rm -f "${TMPDIR:-/tmp}/tour-save.$$"
case "$page" in *"<title>OK</title>"*) ;; *) echo "tour: SAVE: $page" >&2; exit 1 ;; esac
[ -n "$file" ] || { echo "tour: SAVE named no file (X-STS-File)" >&2; exit 1; }
echo "saved $(printf '%s' "$page" | sed -n 's|.*<body>\(.*\)</body>.*|\1|p') lines to $file" \
     "in the dataset directory"
