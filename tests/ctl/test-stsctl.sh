#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# test-stsctl.sh - stsctl against a real stsd: every verb, its raw output and --json, each
# exit status (0 OK, 1 KO, 2 usage, 3 unreachable or refused), load's progress bar on a
# terminal only (script(1) gives it one), and `stsctl top` in a tmux pane: a list and its
# count, a key and its value (control bytes as '?'), a barrier with 1 of 2 arrived and a
# ONCE run with its waiter on screen, an ADD and a SET made with curl shown within 2 s, q
# quits; on a node of a real three-node cluster, top's CLUSTER section above the lists
# with the leader marked, and the new leader marked once the old one is killed (none of
# it for a lone stsd); `stsctl cluster` as a table on a terminal, fields when piped. The
# help, the
# completion and stsctl(1) must name every command of src/cmd/command.c. For scripts: the
# bare results of get, incr, set, barrier and done (--long the fields), --opt value for
# every option, --name instead of FILENAME, -h, a one-line unknown verb, - as standard
# input for add and load, --print-lease; stsctl(1)'s examples run as the manual prints
# them, and docs/stsctl.md shows the same lines.
# Usage: tests/ctl/test-stsctl.sh (from the top of the tree, after `make`).
set -u
STSD=${STSD:-build/stsd}
STSCTL=${STSCTL:-build/stsctl}
. "$(dirname "$0")/../tally.sh"
STSCTL=$(cd "$(dirname "$STSCTL")" && pwd)/$(basename "$STSCTL")
tmp=$(mktemp -d /tmp/stsctl-test-XXXXXX)
pid=
bpid=
rpid=
cpids=
tmux_sock="$tmp/tmux"
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; [ -n "$bpid" ] && kill "$bpid" 2>/dev/null;
      [ -n "$rpid" ] && kill "$rpid" 2>/dev/null; for p in $cpids; do kill -9 "$p" 2>/dev/null; done;
      tmux -S "$tmux_sock" kill-server 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT

# Starts stsd on a free port over a fresh dataset directory; extra -D options in "$@".
start() {
    rm -rf "$tmp/data" "$tmp/port"; mkdir -p "$tmp/data"
    printf 'alpha\nbeta\ngamma\n' > "$tmp/data/greek.csv"
    "$STSD" --port 0 --bind 127.0.0.1 --port-file "$tmp/port" --dataset-dir "$tmp/data" \
        --journal off -DjmeterPlugin.sts.daemon=true "$@" </dev/null >>"$tmp/stsd.log" 2>&1 &
    pid=$!
    i=0
    while [ ! -s "$tmp/port" ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
    [ -s "$tmp/port" ] || { cat "$tmp/stsd.log"; echo "  FAIL  stsd did not start"; exit 1; }
    export STSD_URL="http://127.0.0.1:$(cat "$tmp/port")"
    STS="$STSD_URL/sts"
}
halt() { kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; pid=; }

# run ARGS...: stsctl with stdout in $out, stderr in $err, status in $rc.
run() {
    "$STSCTL" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?
    out=$(cat "$tmp/out"); err=$(cat "$tmp/err")
}
# expect NAME RC OUT: the last run's status and stdout (OUT "*" for any).
expect() {
    if [ "$rc" != "$2" ]; then fail "$1: exit status $rc, not $2 (stdout: $out; stderr: $err)"
    elif [ "$3" != "*" ] && [ "$out" != "$3" ]; then fail "$1: printed [$out], not [$3] (stderr: $err)"
    else ok "$1"; fi
}
tab=$(printf '\t')

# once_run NAME LEASE: a ONCE of NAME by curl that gets RUN; its lease id in $lease.
once_run() {
    lease=$(curl -s -D - -o /dev/null "$STS/ONCE?NAME=$1&LEASE=$2" | tr -d '\r' |
            sed -n 's/^X-STS-Lease: //Ip')
    [ -n "$lease" ] || fail "ONCE $1: no RUN"
}

# 1. Generated from the command table: --help, VERB --help, completion, stsctl(1).
verbs=$(sed -n 's/^ *{"\([A-Z][A-Z]*\)", *cmd_[a-z_]*, .*/\1/p' src/cmd/command.c | tr 'A-Z' 'a-z')
run --help
missing=""
for v in $verbs top; do
    echo "$out" | grep -q "^  $v " || missing="$missing $v"
    grep -q "^        $v)" build/stsctl.bash || [ "$v" = top ] || missing="$missing bash:$v"
    grep -q "^\.B $v\( \|$\)" build/stsctl.1 || missing="$missing man:$v"
done
[ $rc -eq 0 ] && [ -z "$missing" ] && ok "--help, completion and stsctl(1) name every command ($(echo $verbs | wc -w) + top)" ||
    fail "not generated for:$missing"
run read --help
echo "$out" | grep -q -- '--mode first|last|random' && echo "$out" | grep -q -- '--lease' &&
    ok "read --help: READ's parameters as options" || fail "read --help: $out"
run --version; expect "--version" 0 "stsctl $("$STSD" --version | sed 's/^stsd //')"
warn=$(groff -man -ww -z build/stsctl.1 2>&1)
[ -z "$warn" ] && ok "stsctl(1) renders with groff -man -ww without a warning" || fail "groff: $warn"
bash -n build/stsctl.bash && ok "the completion is valid bash" || fail "bash -n build/stsctl.bash"
if out=$(bash -c ". build/stsctl.bash; COMP_WORDS=(stsctl read f --m); COMP_CWORD=3; _stsctl;
         echo \${COMPREPLY[*]}; COMP_WORDS=(stsctl rea); COMP_CWORD=1; _stsctl; echo \${COMPREPLY[*]}") &&
    [ "$out" = "--mode
read readmulti readindex" ]; then ok "completion: verbs and a verb's options"
else fail "completion gave: $out"; fi

# 2. Usage errors: exit 2, no server needed.
export STSD_URL=http://127.0.0.1:9
run frobnicate; expect "unknown verb: exit 2" 2 ""
[ "$err" = "stsctl: unknown verb: frobnicate
Try 'stsctl --help'." ] && ok "unknown verb: one line and the hint to run stsctl --help" ||
    fail "unknown verb said: $err"
run -h; h=$out; run --help
[ $rc -eq 0 ] && [ -n "$h" ] && [ "$h" = "$out" ] && echo "$out" | grep -q -- '^  -h, --help ' &&
    echo "$out" | grep -q -- '^  -l, --long ' && ok "-h prints what --help prints" || fail "-h: [$h]"
run get -h; h=$out; run get --help
[ $rc -eq 0 ] && [ "$h" = "$out" ] && echo "$out" | grep -q '^Prints the value; --long' &&
    ok "VERB -h prints VERB --help, which says what it prints" || fail "get -h: [$h]"
run load -h; expect "load -h" 0 "*"
run read greek.csv --keep maybe; expect "--keep maybe: a word not true/false is an argument: exit 2" 2 ""
echo "$err" | grep -q "^stsctl: read: --keep takes true or false (alone: true; --no-keep: false), not maybe$" &&
    ok "--keep maybe: says what --keep takes" || fail "--keep maybe said: $err"
run read greek.csv --keep true maybe; expect "--keep true maybe: exit 2" 2 ""
echo "$err" | grep -q "too many arguments: maybe" && ok "--keep true maybe: too many arguments" ||
    fail "--keep true maybe said: $err"
run --print-lease=yes status; expect "--print-lease=yes: a flag takes no value: exit 2" 2 ""
run --long=1 status; expect "--long=1: exit 2" 2 ""
run load - ; expect "load - without a name: exit 2" 2 ""
echo "$err" | grep -q "standard input needs a name" && ok "load - without a name: said" || fail "load -: $err"
run load a.csv - --as b.csv; expect "load NAME - --as NAME2: exit 2" 2 ""
run load a b c; expect "load with three arguments: exit 2" 2 ""
run release --lease 0123456789abcdef; expect "release without FILENAME or --name: exit 2" 2 ""
echo "$err" | grep -q "missing FILENAME" && ok "release without FILENAME or --name: missing FILENAME" ||
    fail "release said: $err"
run read greek.csv --frob; expect "unknown option: exit 2" 2 ""
run --frob status; expect "unknown global option: exit 2" 2 ""
run read; expect "missing FILENAME: exit 2" 2 ""
run read greek.csv --mode sideways; expect "--mode sideways: exit 2" 2 ""
run read greek.csv --keep=maybe; expect "--keep=maybe: exit 2" 2 ""
run load "$tmp/no/such.csv"; expect "load of a missing file: exit 2" 2 ""
echo "$err" | grep -q "$tmp/no/such.csv" && ok "load of a missing file names its path" ||
    fail "load's message: $err"
run; expect "no verb: exit 2" 2 ""

# 3. A server that is down: exit 3, fast; one that does not answer: within --connect-timeout.
start; port=$(cat "$tmp/port"); halt
export STSD_URL=http://127.0.0.1:$port
t0=$(date +%s%N); run length greek.csv; t1=$(date +%s%N)
expect "server down: exit 3" 3 ""
echo "$err" | grep -q "127.0.0.1:$port" && ok "server down: the URL in the message" || fail "server down said: $err"
# A listener whose backlog is full drops new SYNs: connecting hangs until the timeout.
python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(0)
cs = []
for _ in range(8):
    c = socket.socket(); c.setblocking(False); c.connect_ex(s.getsockname()); cs.append(c)
print(s.getsockname()[1], flush=True)
time.sleep(30)' > "$tmp/hang.port" &
hang=$!
i=0; while [ ! -s "$tmp/hang.port" ] && [ $i -lt 300 ]; do sleep 0.01; i=$((i + 1)); done
t0=$(date +%s%N); run --url "http://127.0.0.1:$(cat "$tmp/hang.port")" --connect-timeout 1 length greek.csv; t1=$(date +%s%N)
kill "$hang" 2>/dev/null; wait "$hang" 2>/dev/null
ms=$(( (t1 - t0) / 1000000 ))
[ $rc -eq 3 ] && [ $ms -ge 900 ] && [ $ms -lt 2500 ] && ok "a connect that hangs: exit 3 after ${ms} ms (--connect-timeout 1)" ||
    fail "a connect that hangs: exit $rc after $ms ms: $err"
t0=$(date +%s%N); run --url http://192.0.2.1:9191 length greek.csv; t1=$(date +%s%N)
ms=$(( (t1 - t0) / 1000000 ))
[ $rc -eq 3 ] && [ $ms -lt 4000 ] && ok "an unrouted address: exit 3 after ${ms} ms (default 3 s)" ||
    fail "unrouted address: exit $rc after $ms ms"

# 4. Every verb against a real server.
start
run initfile greek.csv; expect "initfile: the count" 0 3
run read greek.csv; expect "read: the raw line" 0 alpha
run read greek.csv --mode last; expect "read --mode last" 0 alpha
run --json read greek.csv
want=$(curl -s "$STS/READ?FILENAME=greek.csv&FORMAT=JSON" | sed 's/"gamma"/"beta"/')
[ $rc -eq 0 ] && [ "$out" = '{"ok":true,"line":"beta"}' ] && [ "$want" = "$out" ] &&
    ok "read --json: the server's JSON unchanged" || fail "read --json: $out (curl: $want)"
run read greek.csv --json; expect "--json after the verb" 0 '{"ok":true,"line":"alpha"}'
run readmulti greek.csv 2; expect "readmulti: one line each" 0 "beta
gamma"
run length greek.csv; expect "length: a number" 0 3
run add greek.csv "delta epsilon" --mode first; expect "add (POST): nothing printed" 0 ""
run read greek.csv --no-keep; expect "read --no-keep takes the head" 0 "delta epsilon"
run add greek.csv alpha --unique; expect "add --unique of a present line: KO, exit 1" 1 ""
[ -n "$err" ] && ok "add --unique: the server's message on stderr ($err)" || fail "add --unique: no message"
run find greek.csv amm --mode substring; expect "find --mode substring" 0 gamma
run find greek.csv '^b' --mode regex_find --keep=false; expect "find --mode regex_find --keep=false" 0 beta
run length greek.csv; expect "find --keep=false took it" 0 2
run read greek.csv --no-keep --lease 30
id=$err
[ $rc -eq 0 ] && [ -n "$out" ] && echo "$id" | grep -qx '[0-9a-f]\{16\}' &&
    ok "read --lease: the line on stdout, the lease id on stderr ($id)" || fail "read --lease: [$out] [$id]"
run leases greek.csv; expect "leases: a number" 0 1
run ack greek.csv --lease "$id"; expect "ack --lease ID" 0 ""
run ack greek.csv --lease "$id"; expect "ack of a settled lease: exit 1" 1 ""
run read greek.csv --no-keep --lease 30; id=$err
run release greek.csv --lease "$id"; expect "release --lease ID" 0 ""
run leases greek.csv; expect "leases after release" 0 0
"$STSCTL" add multi.csv m1 && "$STSCTL" add multi.csv m2 --mode last || fail "add to multi.csv"
run readmulti multi.csv 2 --no-keep --lease 30
[ $rc -eq 0 ] && [ "$(echo "$out" | wc -l)" -eq 2 ] && [ "$(echo "$err" | grep -cx '[0-9a-f]\{16\}')" -eq 2 ] &&
    ok "readmulti --lease: two lines on stdout, two lease ids on stderr, one a line" || fail "readmulti --lease: [$out] [$err]"
[ "$out" = "m1
m2" ] || fail "readmulti multi.csv: $out"
for id in $err; do "$STSCTL" release multi.csv --lease "$id" || fail "release $id"; done
run leases multi.csv; expect "both released" 0 0
# A long line goes in a POST body, not the URL.
long=$(head -c 120000 /dev/zero | tr '\0' 'x')
run add long.csv "$long"; expect "add of a 120 KB line" 0 ""
run read long.csv
[ $rc -eq 0 ] && [ "$out" = "$long" ] && ok "read of the 120 KB line: the same bytes" || fail "long line: ${#out} bytes, exit $rc"
run peek greek.csv --limit 1; expect "peek --limit 1: the line" 0 "*"
[ "$(echo "$out" | wc -l)" -eq 1 ] && ok "peek prints lines only" || fail "peek: $out"
run status; expect "status piped: name<TAB>lines" 0 "greek.csv${tab}1
long.csv${tab}1
multi.csv${tab}2"
run save greek.csv --no-add-timestamp; expect "save: the file's name" 0 greek.csv
run save greek.csv; echo "$out" | grep -qx '[0-9]\{8\}T[0-9][0-9]h[0-9][0-9]m[0-9][0-9]s\(-[0-9]*\)\?\.greek\.csv' &&
    [ -f "$tmp/data/$out" ] && ok "save: the timestamped file's name, and the file ($out)" ||
    fail "save with a timestamp printed [$out] ($err)"
run save greek.csv --long; expect "save --long: the count" 0 1
[ -f "$tmp/data/greek.csv" ] && [ "$(cat "$tmp/data/greek.csv")" = "$(curl -s "$STS/PEEK?FILENAME=greek.csv&FORMAT=JSON" | sed 's/.*"line":"\([^"]*\)".*/\1/')" ] &&
    ok "save wrote the file" || fail "save: $(cat "$tmp/data/greek.csv")"
run files; echo "$out" | grep -q "^greek.csv$tab" && [ $rc -eq 0 ] && ok "files: name<TAB>size<TAB>mtime" || fail "files: $out"
run info; echo "$out" | grep -q "^version${tab}[0-9]" && echo "$out" | grep -q "^journal.enabled${tab}false" &&
    ok "info: key<TAB>value" || fail "info: $out"
run config; echo "$out" | grep -q "^jmeterPlugin.sts.port${tab}$(cat "$tmp/port")$" && ok "config: key<TAB>value" || fail "config: $out"
# --json: the server's answer unchanged, verb by verb (curl asks the same with FORMAT=JSON).
same=""; differ=""
for q in "length greek.csv:LENGTH?FILENAME=greek.csv" "leases greek.csv:LEASES?FILENAME=greek.csv" \
         "peek greek.csv:PEEK?FILENAME=greek.csv" "files:FILES?" "config:CONFIG?" \
         "find greek.csv a:FIND?FILENAME=greek.csv&LINE=a" \
         "add json.csv j:ADD?FILENAME=json.csv&LINE=j" "read json.csv:READ?FILENAME=json.csv" \
         "initfile greek.csv:INITFILE?FILENAME=greek.csv" \
         "save json.csv --no-add-timestamp:SAVE?FILENAME=json.csv&ADD_TIMESTAMP=false" \
         "reset json.csv:RESET?FILENAME=json.csv" "read json.csv:READ?FILENAME=json.csv"; do
    verb=${q%%:*}; path=${q#*:}
    want=$(curl -s "$STS/${path}&FORMAT=JSON")
    # shellcheck disable=SC2086
    got=$("$STSCTL" --json $verb 2>/dev/null)
    [ "$got" = "$want" ] && same="$same ${verb%% *}" || differ="$differ [$verb: $got / $want]"
done
for v in status info; do
    "$STSCTL" --json $v | python3 -c 'import json, sys; assert json.load(sys.stdin)["ok"]' &&
        same="$same $v" || differ="$differ [$v: not JSON]"
done
[ -z "$differ" ] && ok "--json as the server answers:$same" || fail "--json differs:$differ"
# Options with their value as the next word, flags included.
printf 'alpha\nbeta\ngamma\n' > "$tmp/abc.csv"
"$STSCTL" load "$tmp/abc.csv" >/dev/null || fail "load abc.csv"
run read abc.csv --keep false; expect "read --keep false takes the head" 0 alpha
run read abc.csv --keep FALSE --mode last; expect "read --keep FALSE --mode last" 0 gamma
run length abc.csv; expect "--keep false took them" 0 1
run add abc.csv beta --unique true; expect "add --unique true of a present line: KO" 1 ""
run add abc.csv zeta --unique=true --mode last; expect "add --unique=true of a new line" 0 ""
run read abc.csv --no-keep --mode=last; expect "--mode=last" 0 zeta
"$STSCTL" load "$tmp/abc.csv" >/dev/null || fail "load abc.csv again"

# --print-lease: the line, then its lease id, both on stdout; nothing on stderr.
run read abc.csv --no-keep --lease 30 --print-lease
line1=$(echo "$out" | sed -n 1p); id=$(echo "$out" | sed -n 2p)
[ $rc -eq 0 ] && [ "$line1" = alpha ] && echo "$id" | grep -qx '[0-9a-f]\{16\}' &&
    [ "$(echo "$out" | wc -l)" -eq 2 ] && [ -z "$err" ] &&
    ok "read --print-lease: the line, then its lease id on stdout, stderr empty" ||
    fail "read --print-lease: [$out] [$err]"
run leases abc.csv; expect "the lease is real" 0 1
run ack abc.csv --lease "$id"; expect "ack of the printed lease" 0 ""
run readmulti abc.csv 2 --no-keep --lease 30 --print-lease
[ $rc -eq 0 ] && [ "$(echo "$out" | sed -n 1,2p | tr '\n' ' ')" = "beta gamma " ] &&
    [ "$(echo "$out" | sed -n 3,4p | grep -cx '[0-9a-f]\{16\}')" -eq 2 ] && [ -z "$err" ] &&
    ok "readmulti --print-lease: the lines, then their ids in the same order" ||
    fail "readmulti --print-lease: [$out] [$err]"
for id in $(echo "$out" | sed -n 3,4p); do "$STSCTL" release abc.csv --lease "$id" || fail "release $id"; done
run --json --print-lease read abc.csv --no-keep --lease 30
[ $rc -eq 0 ] && echo "$out" | sed -n 1p | grep -qx '{"ok":true,"line":"[a-z]*"}' &&
    echo "$out" | sed -n 2p | grep -qx '[0-9a-f]\{16\}' && ok "--json --print-lease: the JSON, then the id" ||
    fail "--json --print-lease: [$out]"
"$STSCTL" release abc.csv --lease "$(echo "$out" | sed -n 2p)" || fail "release of the JSON's lease"

# Bare results: get, incr, set, barrier, done; --long (-l) the fields as before.
run set flag on; expect "set: the new version" 0 1
run set flag off; expect "set again: version 2" 0 2
run get flag; expect "get: the value" 0 off
run get flag --long; expect "get --long: the fields" 0 "name${tab}flag
value${tab}off
version${tab}2"
run -l get flag; expect "-l get: the same" 0 "name${tab}flag
value${tab}off
version${tab}2"
run --json get flag; expect "get --json unchanged" 0 '{"ok":true,"name":"flag","value":"off","version":2}'
run set flag x --if-version 1; expect "set --if-version of another version: KO" 1 ""
run get flag; expect "nothing changed" 0 off
run incr ids; expect "incr: the new value" 0 1
run incr ids --by 41; expect "incr --by 41" 0 42
ids=$("$STSCTL" incr ids) && [ "$ids" = 43 ] && ok "id=\$(stsctl incr ids) is one number" || fail "incr captured [$ids]"
run incr ids -l; expect "incr -l: the fields" 0 "name${tab}ids
value${tab}44
version${tab}4"
curl -s "$STS/SET?NAME=bin&VALUE=caf%E9%0Aok" >/dev/null
"$STSCTL" get bin > "$tmp/got"
printf 'caf\351\nok\n' | cmp -s - "$tmp/got" && ok "get: a value that is not UTF-8, as its bytes" ||
    fail "get bin: $(od -c "$tmp/got")"
run barrier gate 1; expect "barrier: the generation" 0 0
run barrier gate 1; expect "barrier again: generation 1" 0 1
run barrier gate 1 --long; expect "barrier --long: the fields" 0 "generation${tab}2
arrival${tab}1
parties${tab}1
released${tab}full"
run del flag; expect "del prints as it did" 0 "name${tab}flag
version${tab}0"
once_run done-test 30
run done done-test "$lease" --value t-42; expect "done: the key's new version" 0 1
run get done-test; expect "done set the value" 0 t-42
curl -s -D "$tmp/hdr" -o /dev/null "$STS/ONCE?NAME=done-test"
tr -d '\r' < "$tmp/hdr" | grep -qx 'X-STS-Value: t-42' && ok "ONCE's DONE: X-STS-Value" ||
    fail "ONCE's DONE headers: $(cat "$tmp/hdr")"

# --name instead of FILENAME: a counter lease settled by its key.
run incr chairs --lease 30 --print-lease
seat=$(echo "$out" | sed -n 1p); id=$(echo "$out" | sed -n 2p)
[ $rc -eq 0 ] && [ "$seat" = 1 ] && echo "$id" | grep -qx '[0-9a-f]\{16\}' &&
    ok "incr --lease --print-lease: the value, then the id" || fail "incr --print-lease: [$out] [$err]"
run release --name chairs --lease "$id"; expect "release --name chairs --lease ID (no FILENAME)" 0 ""
run get chairs; expect "release --name undid the increment" 0 0
run incr chairs --lease 30 --print-lease; id=$(echo "$out" | sed -n 2p)
run ack --name chairs --lease "$id"; expect "ack --name chairs --lease ID" 0 ""
run get chairs; expect "ack --name kept it" 0 1
for k in flag ids bin gate done-test chairs; do curl -s "$STS/DEL?NAME=$k" >/dev/null; done

# - reads standard input: add, in ADDMULTI batches (CRLF too); load, the file.
printf 'j1\nj2\r\nj3' | "$STSCTL" add stdin.csv - --mode last; rc=$?
"$STSCTL" peek stdin.csv > "$tmp/got"
[ $rc -eq 0 ] && printf 'j1\nj2\nj3\n' | cmp -s - "$tmp/got" &&
    ok "add LIST - --mode last: the lines in order, CR dropped" || fail "add -: $(od -c "$tmp/got")"
printf 'k1\nk2\n' | "$STSCTL" add stdin2.csv -; "$STSCTL" peek stdin2.csv > "$tmp/got"
[ "$(cat "$tmp/got" | tr '\n' ' ')" = "k2 k1 " ] && ok "add LIST - with the default --mode first: each to the head" ||
    fail "add - first: $(cat "$tmp/got")"
printf 'j9\nj2\nj8\n' | "$STSCTL" add stdin.csv - --unique --mode last >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q "Line 2 is in the list already" "$tmp/err" &&
    grep -q "stopped at lines 1-3 of standard input, added all or none (0 done)" "$tmp/err" &&
    [ "$("$STSCTL" length stdin.csv)" = 3 ] &&
    ok "add - stops at the first batch refused (line 2 in it), the batch added not at all" ||
    fail "add - with a KO: exit $rc, $(cat "$tmp/err"), length $("$STSCTL" length stdin.csv)"
before=$(curl -s "$STSD_URL/metrics" | sed -n 's/^stsd_requests_total{command="ADDMULTI",result="ok"} //p')
seq 1 2500 | "$STSCTL" add batch.csv - --mode last > "$tmp/out" 2>&1; rc=$?
after=$(curl -s "$STSD_URL/metrics" | sed -n 's/^stsd_requests_total{command="ADDMULTI",result="ok"} //p')
[ $rc -eq 0 ] && [ ! -s "$tmp/out" ] && [ "$("$STSCTL" length batch.csv)" = 2500 ] &&
    [ "$("$STSCTL" read batch.csv --mode last)" = 2500 ] && [ $((after - ${before:-0})) -eq 3 ] &&
    ok "add - of 2,500 lines: 3 ADDMULTI requests of at most 1,000, in order, nothing printed" ||
    fail "add - in batches: exit $rc, $(cat "$tmp/out"), ADDMULTI requests ${before:-0} -> $after"
printf 'p1\np2\n' | "$STSCTL" add stdin4.csv - --unique=nocolumn >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q "stopped at line 1 of standard input (0 done)" "$tmp/err" &&
    ok "add - with a UNIQUE ADDMULTI does not take: one ADD per line, as before" ||
    fail "add - --unique=nocolumn: exit $rc, $(cat "$tmp/err")"
printf 'n1\nn2\000x\nn3\n' | "$STSCTL" add nul.csv - >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "line 2 of standard input holds a NUL byte" "$tmp/err" &&
    ! "$STSCTL" length nul.csv >/dev/null 2>&1 &&
    ok "add - with a NUL byte in line 2: refused, nothing of the batch cut short and sent" ||
    fail "add - with a NUL: exit $rc, $(cat "$tmp/err"),"\
         "$("$STSCTL" peek nul.csv 2>&1 | tr '\n' ' ')"
printf 'o1\000x\n' | "$STSCTL" add nul2.csv - --unique=nocolumn >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "line 1 of standard input holds a NUL byte" "$tmp/err" &&
    ok "add - one ADD per line: a NUL byte refused too, not the line cut at it" ||
    fail "add - (one ADD per line) with a NUL: exit $rc, $(cat "$tmp/err")"
: | "$STSCTL" add stdin3.csv -; rc=$?
[ $rc -eq 0 ] && "$STSCTL" length stdin3.csv >/dev/null 2>&1; [ $? -eq 1 ] && [ $rc -eq 0 ] &&
    ok "add - of nothing: exit 0, nothing added" || fail "add - of nothing: $rc"
run find greek.csv - ; expect "find LIST -: a line '-' to find, not standard input" 1 ""
seq 1 50000 | "$STSCTL" load piped.csv - > "$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 0 ] && [ "$(cat "$tmp/out")" = 50000 ] && [ -z "$(cat "$tmp/err")" ] &&
    [ "$("$STSCTL" read piped.csv --mode last)" = 50000 ] &&
    ok "load NAME -: standard input as the file (50000 lines)" || fail "load -: exit $rc, $(cat "$tmp/out") $(cat "$tmp/err")"
printf 'p\nq\n' | "$STSCTL" load - --as piped.csv > "$tmp/out"; rc=$?
[ $rc -eq 0 ] && [ "$(cat "$tmp/out")" = 2 ] && ok "load - --as NAME" || fail "load - --as: $rc $(cat "$tmp/out")"
run load twoargs.csv "$tmp/abc.csv"; expect "load NAME LOCALFILE" 0 3
run length twoargs.csv; expect "loaded under NAME" 0 3

run reset greek.csv; expect "reset" 0 ""
run length greek.csv; expect "length after reset" 0 0
run read greek.csv; expect "read of an empty list: KO, exit 1" 1 ""
run read nowhere.csv; expect "read of an unknown list: exit 1" 1 ""
[ "$err" = "stsctl: nowhere.csv not loaded yet !" ] && ok "KO: the server's message on stderr, after stsctl:" || fail "KO said: $err"
run --json read nowhere.csv; expect "--json KO: the JSON, exit 1" 1 '{"ok":false,"error":"nowhere.csv not loaded yet !"}'
# Bytes as stored: a line that is not UTF-8 comes back as the same bytes.
printf 'caf\351\nplain\n' > "$tmp/latin1.csv"
run load "$tmp/latin1.csv" --as bytes.csv; expect "load --as: the count, nothing on stderr" 0 2
[ -z "$err" ] && ok "load piped: no progress bar" || fail "load piped wrote: $err"
"$STSCTL" read bytes.csv > "$tmp/got"
printf 'caf\351\n' | cmp -s - "$tmp/got" && ok "read: a non-UTF-8 line's bytes as stored" || fail "read bytes: $(od -c "$tmp/got")"
run load "$tmp/latin1.csv"; expect "load without --as: the file's name" 0 2
run length latin1.csv; expect "loaded as latin1.csv" 0 2
# The progress bar on a terminal: script(1) runs stsctl on a pseudo-terminal.
seq 1 300000 > "$tmp/big.csv"
script -qec "$STSCTL load $tmp/big.csv --as big.csv" /dev/null > "$tmp/tty.out" 2>&1
grep -q '100%' "$tmp/tty.out" && grep -q '\[##' "$tmp/tty.out" && grep -q '300000' "$tmp/tty.out" &&
    ok "load on a terminal: a progress bar, then the count" || fail "load on a tty: $(tr '\r' '\n' < "$tmp/tty.out" | tail -3)"
script -qec "$STSCTL status" /dev/null > "$tmp/tty.out" 2>&1
grep -q '^LIST *LINES *ON LOAN *WAITERS' "$tmp/tty.out" && grep -q '^big.csv  *300000 ' "$tmp/tty.out" &&
    ok "status on a terminal: a table" || fail "status on a tty: $(cat "$tmp/tty.out")"

# once_crowd NAME N LEASE SECONDS STATUS: N callers of `once NAME` at the same time, each
# COMMAND a line in $tmp/ran, a sleep and exit STATUS; sets runs (COMMANDs run), codes
# (the callers' statuses) and said (what they printed).
once_crowd() {
    rm -f "$tmp/ran" "$tmp"/crowd*; callers=
    for n in $(seq "$2"); do
        ( "$STSCTL" once "$1" --lease "$3" -- sh -c "echo x >> '$tmp/ran'; sleep $4; exit $5" \
            >"$tmp/crowd$n.out" 2>&1; echo $? > "$tmp/crowd$n.rc" ) &
        callers="$callers $!"
    done
    wait $callers
    runs=$(wc -l < "$tmp/ran" 2>/dev/null || echo 0)
    codes=$(for n in $(seq "$2"); do cat "$tmp/crowd$n.rc"; done | tr '\n' ' ')
    said=$(cat "$tmp"/crowd*.out)
}
# once: 5 callers at the same time, COMMAND runs on exactly one, all exit with its status.
once_crowd setup 5 30 0.5 7
[ "$runs" -eq 1 ] && [ "$codes" = "7 7 7 7 7 " ] &&
    ok "once: 5 callers, COMMAND ran once, all exited with its status 7" ||
    fail "once: ran $runs times, statuses $codes: $said"
run get setup; expect "once: the status is key setup's value, 7" 0 7
run once setup -- false; expect "once: done already, COMMAND not run, its status" 7 ""
run del setup; expect "once: DEL for another round" 0 "*"
run once setup -- true; expect "once: another round runs COMMAND again" 0 ""
run once setup; expect "once without COMMAND: exit 2" 2 ""
# once: a COMMAND four times longer than the lease still runs once (the run is renewed).
once_crowd long 3 0.6 2.5 5
[ "$runs" -eq 1 ] && [ "$codes" = "5 5 5 " ] && [ -z "$said" ] &&
    ok "once: COMMAND of 2.5 s with a 0.6 s lease, renewed: ran once, all exited 5" ||
    fail "once renewed: ran $runs times, statuses $codes: $said"
# once: the runner stopped by SIGTERM passes it on and gives the run up at once.
rm -f "$tmp/started"
"$STSCTL" once intr --lease 30 -- sh -c "echo > '$tmp/started'; exec sleep 30" &
runner=$!
i=0; while [ ! -e "$tmp/started" ] && [ $i -lt 300 ]; do sleep 0.01; i=$((i + 1)); done
kill -TERM "$runner"; wait "$runner"; rc=$?
[ $rc -eq 143 ] && ok "once: the runner on SIGTERM exits 143" || fail "once on SIGTERM: exit $rc"
pgrep -f "^sleep 30$" >/dev/null && fail "once: COMMAND still runs after SIGTERM" ||
    ok "once: COMMAND got the SIGTERM"
run once intr --timeout 0 -- sh -c 'exit 3'
expect "once: the run given up, the next caller runs at once" 3 ""
run once -- true; expect "once without NAME: exit 2" 2 ""

# wait_runs PATTERN: up to 3 s for `stsctl runs` to print a line matching PATTERN.
wait_runs() {
    i=0; while ! "$STSCTL" runs 2>/dev/null | grep -q "$1" && [ $i -lt 30 ]; do sleep 0.1; i=$((i + 1)); done
}
# runs: ONCE's runs in progress, name<TAB>ms left<TAB>waiting, sorted; --json unchanged.
run runs; expect "runs: none in progress, nothing printed" 0 ""
run --json runs; expect "runs --json: none" 0 '{"ok":true,"runs":[]}'
once_run r-setup 30; setup_lease=$lease
curl -s "$STS/ONCE?NAME=r-setup&TIMEOUT=30" >"$tmp/waiter.out" 2>&1 &
rpid=$!
once_run r-again 5; again_lease=$lease
wait_runs "^r-setup${tab}[0-9]*${tab}1\$"
run runs
left=$(echo "$out" | sed -n "s/^r-setup${tab}\([0-9]*\)${tab}1\$/\1/p")
[ $rc -eq 0 ] && [ "$(echo "$out" | cut -f1 | tr '\n' ' ')" = "r-again r-setup " ] &&
    [ -n "$left" ] && [ "$left" -ge 25000 ] && [ "$left" -le 30000 ] &&
    echo "$out" | grep -q "^r-again${tab}[0-9]*${tab}0\$" &&
    ok "runs: name<TAB>ms left<TAB>waiting, sorted by name ($left ms, 1 waiting)" || fail "runs: [$out] (exit $rc)"
run runs --prefix r-s; [ $rc -eq 0 ] && [ "$(echo "$out" | cut -f1)" = "r-setup" ] &&
    ok "runs --prefix" || fail "runs --prefix r-s: [$out]"
ms='s/"expires_in_ms":[0-9]*/"expires_in_ms":N/g'
want=$(curl -s "$STS/RUNS?FORMAT=JSON" | sed "$ms")
run --json runs
[ $rc -eq 0 ] && [ "$(echo "$out" | sed "$ms")" = "$want" ] &&
    [ "$want" = '{"ok":true,"runs":[{"name":"r-again","expires_in_ms":N,"waiters":0},{"name":"r-setup","expires_in_ms":N,"waiters":1}]}' ] &&
    ok "runs --json: the server's JSON unchanged" || fail "runs --json: [$out] (curl: $want)"
curl -s "$STS/DONE?NAME=r-setup&LEASE=$setup_lease" >/dev/null
curl -s "$STS/DONE?NAME=r-again&LEASE=$again_lease" >/dev/null
wait "$rpid"; rpid=
grep -q '<body>DONE</body>' "$tmp/waiter.out" || fail "runs: the waiter got [$(cat "$tmp/waiter.out")]"
run runs; expect "runs: gone once DONE" 0 ""
curl -s "$STS/DEL?NAME=r-setup" >/dev/null; curl -s "$STS/DEL?NAME=r-again" >/dev/null

# 5. stsctl top in a tmux pane: the lists, a key, a barrier with one of two arrived and a
# run with one caller waiting.
if command -v tmux >/dev/null 2>&1; then
    curl -s "$STS/SET?NAME=topkey&VALUE=first" >/dev/null
    curl -s "$STS/SET?NAME=topesc&VALUE=a%1b%5b2Jb" >/dev/null
    curl -s "$STS/BARRIER?NAME=b1&PARTIES=2&TIMEOUT=30" >/dev/null 2>&1 &
    bpid=$!
    once_run toprun 60; top_lease=$lease
    curl -s "$STS/ONCE?NAME=toprun&TIMEOUT=30" >/dev/null 2>&1 &
    rpid=$!
    tmux -S "$tmux_sock" new-session -d -x 120 -y 60 -e "STSD_URL=$STSD_URL" "$STSCTL top"
    screen() { tmux -S "$tmux_sock" capture-pane -p 2>/dev/null; }
    # on_screen PATTERN [TENTHS]: waits up to TENTHS tenths of a second (30) for PATTERN.
    on_screen() {
        i=0; while ! screen | grep -q "$1" && [ $i -lt "${2:-30}" ]; do sleep 0.1; i=$((i + 1)); done
        screen | grep -q "$1"
    }
    on_screen '^big.csv  *300000 ' && screen | grep -q 'LINES *ON LOAN *WAITERS *IN/S *OUT/S *EMPTY IN' &&
        ok "top: the lists and their counts on screen" || fail "top's screen: $(screen)"
    screen | sed -n 3p | grep -q '^LIST  *LINES ' && ! screen | grep -q 'NODE\|this is node' &&
        ok "top: a lone stsd, no cluster section (CLUSTER's KO draws nothing)" ||
        fail "top, alone: more than the lists on top: $(screen)"
    on_screen '^topkey  *first  *1  *0  *0$' && screen | grep -q '^KEY  *VALUE  *VERSION *WATCHERS *WAITERS$' &&
        ok "top: a key, its value and version on screen" || fail "top: no key topkey: $(screen)"
    on_screen '^topesc  *a?\[2Jb ' && screen | grep -q '^big.csv ' &&
        ok "top: a value's control bytes shown as '?', the screen intact" || fail "top: topesc: $(screen)"
    on_screen '^b1  *1/2  *0$' && screen | grep -q '^BARRIER  *ARRIVED  *GENERATION$' &&
        ok "top: a barrier with 1 of 2 arrived on screen" || fail "top: no barrier b1 at 1/2: $(screen)"
    on_screen '^toprun  *[0-9]*s  *1$' && screen | grep -q '^RUN  *ENDS IN  *WAITING$' &&
        screen | grep -q '^toprun  *\(5[0-9]\|60\)s  *1$' &&
        ok "top: a run, its lease left and 1 waiting on screen" || fail "top: no run toprun with 1 waiting: $(screen)"
    curl -s "$STS/ADD?FILENAME=big.csv&LINE=one-more" >/dev/null
    t0=$(date +%s%N); i=0
    while ! screen | grep -q '^big.csv  *300001 ' && [ $i -lt 40 ]; do sleep 0.05; i=$((i + 1)); done
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    screen | grep -q '^big.csv  *300001 ' && [ $ms -le 2000 ] && ok "top: an ADD by curl on screen after $ms ms" ||
        fail "top: the ADD not on screen after $ms ms: $(screen)"
    curl -s "$STS/SET?NAME=topkey&VALUE=second" >/dev/null
    t0=$(date +%s%N); i=0
    while ! screen | grep -q '^topkey  *second  *2 ' && [ $i -lt 40 ]; do sleep 0.05; i=$((i + 1)); done
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    screen | grep -q '^topkey  *second  *2 ' && [ $ms -le 2000 ] && ok "top: a SET by curl on screen after $ms ms" ||
        fail "top: the SET not on screen after $ms ms: $(screen)"
    tmux -S "$tmux_sock" send-keys q
    i=0; while tmux -S "$tmux_sock" has-session 2>/dev/null && [ $i -lt 20 ]; do sleep 0.1; i=$((i + 1)); done
    tmux -S "$tmux_sock" has-session 2>/dev/null && fail "top: q did not quit" || ok "top: q quits"
    kill "$bpid" 2>/dev/null; wait "$bpid" 2>/dev/null; bpid=
    curl -s "$STS/DONE?NAME=toprun&LEASE=$top_lease" >/dev/null
    wait "$rpid" 2>/dev/null; rpid=
    curl -s "$STS/DEL?NAME=toprun" >/dev/null
    curl -s "$STS/DEL?NAME=topkey" >/dev/null; curl -s "$STS/DEL?NAME=topesc" >/dev/null
else
    skip "stsctl top: no tmux (scripts/deps.sh test installs it)"
fi
run top; expect "top without a terminal: exit 2" 2 ""
# status on a terminal: a list's name is the client's bytes, made safe and cut to its column.
curl -s "$STS/ADD?FILENAME=evil%1B%5B2Jname&LINE=x" >/dev/null
curl -s "$STS/ADD?FILENAME=a-list-name-longer-than-its-32-columns&LINE=x" >/dev/null
script -qec "$STSCTL status" /dev/null > "$tmp/tty.out" 2>&1
grep -q '^evil?\[2Jname  *1 ' "$tmp/tty.out" && ! grep -q "$(printf '\033')\[2J" "$tmp/tty.out" &&
    grep -q '^a-list-name-longer-than-its-3\.\.\. *1 ' "$tmp/tty.out" &&
    ok "status on a terminal: a control byte in a name as ?, a long name cut" ||
    fail "status on a tty, odd names: $(cat -v "$tmp/tty.out")"
run status
echo "$out" | grep -q "^evil$(printf '\033')\[2Jname${tab}1\$" &&
    ok "status piped: names as stored" || fail "status piped: $(echo "$out" | cat -v)"

# docs/stsctl.md's script (examples/stsctl-script.sh, shown there whole) against this server.
if STSCTL="$STSCTL" sh examples/stsctl-script.sh > "$tmp/script.out" 2>&1 &&
    [ "$(grep '^doing' "$tmp/script.out" | tr '\n' ' ')" = "doing job-1 doing job-2 doing job-3 " ] &&
    grep -q '^demo.users.csv: 5 lines$' "$tmp/script.out" && [ -f "$tmp/data/demo.users.csv" ] &&
    ! "$STSCTL" length demo.jobs.csv >/dev/null 2>&1; then
    ok "examples/stsctl-script.sh runs: jobs leased and acked in order, the users saved, its lists dropped"
else
    fail "examples/stsctl-script.sh: $(cat "$tmp/script.out")"
fi
sed 's/^/    /; s/^    $//' examples/stsctl-script.sh > "$tmp/script.md"
if python3 -c 'import sys; sys.exit(open(sys.argv[2]).read() not in open(sys.argv[1]).read())' \
    docs/stsctl.md "$tmp/script.md"; then ok "docs/stsctl.md shows examples/stsctl-script.sh as it is"
else fail "docs/stsctl.md's copy of examples/stsctl-script.sh differs from the file"; fi

# stsctl(1)'s examples, as the manual prints them, run in order in a directory holding
# users.csv, with stsctl on PATH; docs/stsctl.md shows the same lines.
sed -n '/^\.SH EXAMPLES/,/^\.SH /p' docs/stsctl.1.in | sed -n '/^\.nf$/,/^\.fi$/p' | sed '1d;$d' |
    sed 's/\\-/-/g; s/\\e/\\/g' > "$tmp/examples.sh"
mkdir -p "$tmp/ex" && printf 'ann;pw1\nbob;pw2\n' > "$tmp/ex/users.csv"
if [ "$(wc -l < "$tmp/examples.sh")" -ge 10 ] &&
    (cd "$tmp/ex" && PATH="$(dirname "$STSCTL"):$PATH" sh -eu "$tmp/examples.sh") > "$tmp/ex.out" 2>&1 &&
    grep -qx 'doing job-1 as ann;pw1' "$tmp/ex.out" && grep -qx 'release v1' "$tmp/ex.out" &&
    grep -qx "version${tab}1" "$tmp/ex.out" && grep -qx 'a' "$tmp/ex.out" &&
    [ "$("$STSCTL" length queue.csv)" = 2 ] && [ "$("$STSCTL" leases queue.csv)" = 0 ] &&
    [ "$("$STSCTL" get seats)" = 0 ] && [ "$("$STSCTL" length letters.csv)" = 1 ]; then
    ok "stsctl(1)'s examples run ($(wc -l < "$tmp/examples.sh") lines): job leased and acked, the seat released"
else
    fail "stsctl(1)'s examples: $(cat "$tmp/ex.out")"
fi
sed 's/^/    /' "$tmp/examples.sh" > "$tmp/examples.md"
if python3 -c 'import sys; sys.exit(open(sys.argv[2]).read() not in open(sys.argv[1]).read())' \
    docs/stsctl.md "$tmp/examples.md"; then ok "docs/stsctl.md shows stsctl(1)'s examples as they are"
else fail "docs/stsctl.md's stsctl examples differ from stsctl(1)'s"; fi
grep -q '2>&1 >/dev/null' docs/stsctl.1.in docs/stsctl.md README.md && fail "an example still throws the line away" ||
    ok "no example throws the line away for its lease"

run stop; expect "stop" 0 "*"
i=0; while kill -0 "$pid" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.01; i=$((i + 1)); done
kill -0 "$pid" 2>/dev/null && fail "stsd still runs after stsctl stop" || { ok "stsd stopped"; pid=; }

# 6. Tokens: 401 and 403 are exit 3 with a clear message; the right token passes.
start -Dstsd.token=reader -Dstsd.adminToken=admin
run length greek.csv; expect "no token: exit 3" 3 ""
echo "$err" | grep -q "token" && echo "$err" | grep -q "401" && ok "no token: says a token is wanted (401)" || fail "no token said: $err"
STSD_TOKEN=reader run initfile greek.csv; expect "a reader's token for an admin command: exit 3" 3 ""
echo "$err" | grep -q "403" && ok "wrong role: 403 named" || fail "wrong role said: $err"
STSD_TOKEN=admin run initfile greek.csv; expect "STSD_TOKEN: the admin's token passes" 0 3
run --token reader length greek.csv; expect "--token passes" 0 3
halt

# 7. HTTPS: --cacert trusts a CA, without it the certificate is refused (exit 3),
# --insecure skips the check.
if command -v openssl >/dev/null 2>&1; then
    (cd "$tmp" && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -keyout ca.key -out ca.crt -days 2 -subj /CN=stsctl-test-ca 2>/dev/null &&
     printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > san.ext &&
     openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout srv.key \
        -out srv.csr -subj /CN=localhost 2>/dev/null &&
     openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
        -extfile san.ext -out srv.crt 2>/dev/null && chmod 600 srv.key) ||
        fail "openssl could not make a certificate"
    start -Dstsd.tls.cert="$tmp/srv.crt" -Dstsd.tls.key="$tmp/srv.key"
    export STSD_URL="https://127.0.0.1:$(cat "$tmp/port")"
    run initfile greek.csv; expect "https, an unknown CA: exit 3" 3 ""
    echo "$err" | grep -qi "certificate" && ok "https, an unknown CA: the certificate named" || fail "https said: $err"
    run --cacert "$tmp/ca.crt" initfile greek.csv; expect "https --cacert" 0 3
    run --insecure length greek.csv; expect "https --insecure" 0 3
    run --cacert "$tmp/nowhere.crt" length greek.csv; expect "--cacert of a missing file: exit 2" 2 ""
    echo "$err" | grep -q "$tmp/nowhere.crt" && ok "--cacert of a missing file: its path said" || fail "--cacert said: $err"
    halt
else
    skip "https: openssl is not installed (scripts/deps.sh test installs it)"
fi

# 8. A real cluster of three nodes on loopback: top on a follower shows the nodes above
# the lists, the leader marked '*'; the leader killed (SIGKILL), the new one is marked
# within a few seconds. `stsctl cluster`: a table on a terminal, fields when piped.
if command -v tmux >/dev/null 2>&1; then
    t_cluster=$(date +%s%N)
    set -- $(python3 -c 'import socket
ss = [socket.socket() for _ in range(6)]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))')
    for id in 1 2 3; do eval "hp$id=\$1 rp$id=\$2"; shift 2; done
    for id in 1 2 3; do
        mkdir -p "$tmp/c$id/data"
        eval "port=\$hp$id"
        # The node list's values hold a space: the arguments are built one by one.
        set -- -DjmeterPlugin.sts.daemon=true -DjmeterPlugin.sts.port=$port -Dstsd.bind=127.0.0.1 \
            -DjmeterPlugin.sts.datasetDirectory="$tmp/c$id/data" -Dstsd.stateDirectory="$tmp/c$id/state" \
            -Dstsd.cluster.self=$id
        for n in 1 2 3; do eval "set -- \"\$@\" \"-Dstsd.cluster.node.$n=127.0.0.1:\$rp$n http://127.0.0.1:\$hp$n\""; done
        "$STSD" "$@" </dev/null >>"$tmp/c$id.log" 2>&1 &
        eval "cpid$id=\$!"; cpids="$cpids $!"
    done
    # leader: the node whose CLUSTER says it serves (piped: "serving<TAB>true").
    leader=; i=0
    while [ -z "$leader" ] && [ $i -lt 150 ]; do
        for id in 1 2 3; do
            eval "port=\$hp$id"
            "$STSCTL" --url "http://127.0.0.1:$port" cluster 2>/dev/null | grep -qx "serving${tab}true" &&
                leader=$id && break
        done
        [ -n "$leader" ] || { sleep 0.1; i=$((i + 1)); }
    done
    if [ -z "$leader" ]; then
        fail "cluster: no leader within 15 s ($(tail -n 5 "$tmp/c1.log"))"
    else
        f=$((leader % 3 + 1)); eval "furl=http://127.0.0.1:\$hp$f lport=\$hp$leader"
        run --url "$furl" cluster
        echo "$out" | grep -qx "self${tab}$f" && echo "$out" | grep -qx "leader${tab}$leader" &&
            echo "$out" | grep -q "^$leader${tab}http://127.0.0.1:$lport${tab}127.0.0.1:[0-9]*${tab}leader${tab}" &&
            ok "cluster piped: key<TAB>value, a line per node (id, URL, raft, role, match, lag)" ||
            fail "cluster piped: [$out]"
        script -qec "$STSCTL --url $furl cluster --long" /dev/null > "$tmp/tty.out" 2>&1
        grep -q '^  NODE ROLE  *LAG  URL' "$tmp/tty.out" &&
            grep -q "^\* $leader  *leader  *- *http://127.0.0.1:$lport" "$tmp/tty.out" &&
            grep -q "^this is node $f (follower); \* node $leader leads since [0-9:]*; term [0-9]*, commit index [0-9]*" "$tmp/tty.out" &&
            ok "cluster --long on a terminal: a table, the leader marked, this node named" ||
            fail "cluster on a tty: $(cat -v "$tmp/tty.out")"
        tmux -S "$tmux_sock" new-session -d -x 120 -y 30 -e "STSD_URL=$furl" "$STSCTL top"
        on_screen "^\* $leader  *leader " 50 && screen | sed -n 3p | grep -q '^  NODE ROLE  *LAG  URL$' &&
            [ "$(screen | grep -c '^[* ] [123]  ')" = 3 ] &&
            screen | grep -q "^this is node $f (follower); \* node $leader leads since" &&
            screen | grep -q '^no lists$' &&
            ok "top on a follower: the cluster's three nodes above the lists, the leader marked" ||
            fail "top on a cluster node: $(screen)"
        t0=$(date +%s%N)
        eval "kill -9 \$cpid$leader"
        others=$(echo 1 2 3 | tr -d "$leader ")
        on_screen "^\* [$others]  *leader " 100 && ! screen | grep -q "^\* $leader " &&
            ms=$(( ($(date +%s%N) - t0) / 1000000 )) &&
            ok "top: the new leader marked $ms ms after the old one was killed (the cluster case: $(( ($(date +%s%N) - t_cluster) / 1000000 )) ms)" ||
            fail "top: no new leader on screen after 10 s: $(screen)"
        tmux -S "$tmux_sock" send-keys q
    fi
    for p in $cpids; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; cpids=
else
    skip "stsctl top on a cluster: no tmux (scripts/deps.sh test installs it)"
fi

tally "stsctl"
