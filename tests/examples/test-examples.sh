#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# test-examples.sh - runs examples/ against a real stsd started as `make run` starts it
# (conf/run.properties, a fresh copy of datasets/, a free port): the curl scripts, and the
# Locust example headless for a few seconds, checking that no request failed and that
# the lists end as they must (no account lost, every job consumed once or still queued,
# the leftovers saved); the shared-state Locust example (issue 24: unique order ids, a
# semaphore, an abort flag that stops the run; sticky logins once the server has READ
# ... OWNER=). The parts that need leases and TIMEOUT (issue 10) run once the
# command table has LEASES. Artillery (installed by npm into $NPM_DIR, once) runs
# examples/artillery.yml for 3 s: its report and its captures are checked. A preparation
# run once (ONCE, DONE) must run exactly once: the JMeter plan's setUp group, which loads
# the lists, replayed 5 times at once and as two engines in turn (the late one loads
# nothing), and Locust's PrepareOnce. Every example must say in a header what it shows and
# how to run it; the JMeter plans must be well-formed. Run ids (issue 34): the examples that
# use keys, barriers or ONCE run twice in a row with the same run id on the same stsd (the
# second run must neither stop at once nor skip its preparation), leave no key of their
# run id behind (KEYS PREFIX=<id>. is empty) and do not see the flags of another id; the
# JMeter replay takes the id as -GrunId. A check whose tool is missing is a skip,
# counted and named (tests/tally.sh; under CI=true a skip fails the run).
# Usage: tests/examples/test-examples.sh (from the top of the tree, after `make`).
set -u
STSD=${STSD:-build/stsd}
. "$(dirname "$0")/../tally.sh"
tmp=$(mktemp -d /tmp/stsd-examples-XXXXXX)
pid=
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT

# Starts stsd on a free port with datasets/ copied to $tmp/data; sets $pid and $STS.
start() {
    rm -rf "$tmp/data" "$tmp/port"
    mkdir -p "$tmp/data" && cp datasets/*.csv "$tmp/data/"
    "$STSD" --config conf/run.properties --dataset-dir "$tmp/data" --port 0 --bind 127.0.0.1 \
        --port-file "$tmp/port" -DjmeterPlugin.sts.daemon=true </dev/null >>"$tmp/stsd.log" 2>&1 &
    pid=$!
    i=0
    while [ ! -s "$tmp/port" ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
    [ -s "$tmp/port" ] || { cat "$tmp/stsd.log"; echo "  FAIL  stsd did not start"; exit 1; }
    STS="http://127.0.0.1:$(cat "$tmp/port")/sts"
}
stop() {
    curl -fsS "$STS/STOP" >/dev/null || fail "STOP"
    wait "$pid" || fail "stsd exited with status $?"
    pid=
}
# The body of an answer (OK or KO).
body() { curl -fsS "$STS/$1" | tr -d '\n' | sed 's|.*<body>\(.*\)</body>.*|\1|'; }
# The keys whose names start with $1, as "name = value" lines (none: nothing).
keys() { curl -fsS "$STS/KEYS?PREFIX=$1" | tr -d '\n' | sed 's|.*<body>\(.*\)</body>.*|\1|; s|<br />|\n|g'; }
# Column $2 of the row named $1 of Locust's statistics CSV ($stats).
col() { awk -F, -v name="\"$1\"" -v c="$2" '$2 == name || $2 == substr(name, 2, length(name) - 2) { print $c }' "$stats"; }

queues=no
grep -q '{"LEASES"' src/cmd/*.c && queues=yes
once=no
grep -q '{"ONCE"' src/cmd/*.c && once=yes

# 1. Headers, and the JMeter plan's XML.
for f in examples/*; do
    case "$f" in */README.md) continue ;; esac
    head -n 12 "$f" | grep -q -i 'run' || fail "$f: no header saying how to run it"
done
if python3 - examples/*.jmx <<'PY'
import sys, xml.etree.ElementTree as ET
for path in sys.argv[1:]:
    root = ET.parse(path).getroot()
    assert root.tag == "jmeterTestPlan", path
    # In a plan every element is followed by the hashTree of its children.
    def walk(tree):
        kids = list(tree)
        assert len(kids) % 2 == 0, "%s: an element without its hashTree" % path
        for el, sub in zip(kids[::2], kids[1::2]):
            assert sub.tag == "hashTree", "%s: %s not followed by a hashTree" % (path, el.tag)
            walk(sub)
    walk(root.find("hashTree"))
    paths = [p.text for p in root.iter("stringProp") if p.get("name") == "HTTPSampler.path"]
    assert paths and all(p.startswith("/sts/") for p in paths), paths
PY
then ok "examples: headers; the JMeter plan is well-formed"; else fail "the JMeter plan"; fi
# k6 is not in Debian (a Go binary, not installed here): its scripts are only parsed (node:
# nodejs), as Artillery's file (python3-yaml) before it runs in 3b; scripts/deps.sh test
# installs both. JMeter is not in Debian either: its plans are replayed (2b, 6).
for f in examples/k6-*.js; do
    if command -v node >/dev/null 2>&1; then
        node --input-type=module --check <"$f" && ok "$f parses" || fail "$f does not parse"
    else
        skip "$f syntax: node is not installed (Debian: nodejs)"
    fi
done
# The Locust files compile (the run below needs locust; this needs only python3).
for f in examples/*.py; do
    python3 -c 'import sys; compile(open(sys.argv[1]).read(), sys.argv[1], "exec")' "$f" &&
        ok "$f compiles" || fail "$f does not compile"
done
if python3 -c 'import yaml' 2>/dev/null; then
    python3 -c 'import sys, yaml; yaml.safe_load(open(sys.argv[1]))' examples/artillery.yml &&
        ok "examples/artillery.yml parses" || fail "examples/artillery.yml is not YAML"
else
    skip "examples/artillery.yml syntax: python3-yaml is not installed"
fi

# 1b. The tour twice (two SAVEs of queue.csv in about a second), a STOP, and `make run`'s
# configuration again on the same directory: the same lists as before the tour, none of
# the saves loaded back; each SAVE named its own file (issue 55).
start
before=$(curl -fsS "$STS/STATUS")
for n in 1 2; do STS=$STS sh examples/tour.sh >"$tmp/tour$n" 2>&1 || fail "tour run $n"; done
stop
saved=$(ls "$tmp/data" | grep -c '^[0-9]\{8\}T.*\.queue\.csv$')
named1=$(sed -n 's/^saved .* lines to \([^ ]*\) in the dataset directory$/\1/p' "$tmp/tour1")
named2=$(sed -n 's/^saved .* lines to \([^ ]*\) in the dataset directory$/\1/p' "$tmp/tour2")
[ "$saved" -eq 2 ] && [ -n "$named1" ] && [ "$named1" != "$named2" ] && [ -f "$tmp/data/$named1" ] &&
    [ -f "$tmp/data/$named2" ] && ok "tour twice: two saves, each named ($named1, $named2)" ||
    fail "tour twice: $saved saves in $(ls "$tmp/data" | tr '\n' ' '); named [$named1] [$named2]"
rm -f "$tmp/port"
"$STSD" --config conf/run.properties --dataset-dir "$tmp/data" --port 0 --bind 127.0.0.1 \
    --port-file "$tmp/port" -DjmeterPlugin.sts.daemon=true </dev/null >>"$tmp/stsd.log" 2>&1 &
pid=$!
i=0
while [ ! -s "$tmp/port" ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
STS="http://127.0.0.1:$(cat "$tmp/port")/sts"
after=$(curl -fsS "$STS/STATUS")
[ -n "$before" ] && [ "$before" = "$after" ] &&
    ok "make run after the tour: the same lists as before it, no save loaded back" ||
    fail "make run after the tour serves [$after], not [$before]"
stop

# 2. The curl scripts, each on a fresh server.
for script in examples/tour.sh examples/stop-flag.sh examples/queue-wait.sh; do
    if [ "$script" = examples/queue-wait.sh ] && [ "$queues" = no ]; then
        skip "$script: this stsd has no leases yet (issue 10)"
        continue
    fi
    start
    if STS=$STS sh "$script" >"$tmp/out" 2>&1; then ok "$script"
    else fail "$script:"; sed 's/^/        /' "$tmp/out"; fi
    if [ "$script" = examples/queue-wait.sh ]; then
        # Twice more on the same server, under a run id: its scratch list is gone each time.
        for n in 1 2; do
            if STS=$STS RUN_ID=qw sh "$script" >"$tmp/out" 2>&1 &&
                ! curl -fsS "$STS/STATUS" | grep -q 'qw\.'; then
                ok "$script, RUN_ID=qw, run $n: its scratch list qw.jobs.csv DROPped at the end"
            else
                fail "$script, RUN_ID=qw, run $n (or qw.jobs.csv left):"; sed 's/^/        /' "$tmp/out"
                curl -fsS "$STS/STATUS" | grep 'qw\.' | sed 's/^/        /'
            fi
        done
    fi
    stop
done

# 2b. The shared-state JMeter plan, replayed without JMeter (tests/examples/jmx-replay.py:
# each HTTP sampler once, its assertions and regex extractors), with -GrunId=j1 and the
# abort flag j1.abort set first so the watcher answers at once and its If Controller sees
# "stop"; its tearDown must leave no key of j1. Then a second run of j1, beside j2's flag:
# it must wait for its own flag (set 1 s later), not stop at once. Its sticky-login
# samplers (READ/RELEASE ... OWNER=) run when the server's help page lists OWNER;
# STSD_EXAMPLES_OWNER=yes forces them (and =no leaves them out), as for Locust below.
start
owner=${STSD_EXAMPLES_OWNER:-auto}
if [ "$owner" = auto ]; then
    owner=no
    curl -fsS "$STS/" | grep -q 'OWNER' && owner=yes
fi
curl -fsS "$STS/SET?NAME=j1.abort&VALUE=stop&TTL=300" >/dev/null
skipowner=
[ "$owner" = yes ] || skipowner="--skip OWNER"
if python3 tests/examples/jmx-replay.py examples/shared-state.jmx "${STS%/sts}" -GrunId=j1 $skipowner \
    >"$tmp/replay" 2>&1 && grep -q 'if ${__jexl3("stop" == "stop")}' "$tmp/replay" &&
    grep -q '^  ok    GET j1.abort ' "$tmp/replay"; then
    ok "examples/shared-state.jmx replayed with -GrunId=j1: $(tail -n 1 "$tmp/replay" | sed 's/^replay: //')"
else
    fail "examples/shared-state.jmx replay:"; sed 's/^/        /' "$tmp/replay"
fi
left=$(keys j1.)
[ -z "$left" ] && ok "shared-state.jmx: its tearDown left no key of run j1" ||
    fail "shared-state.jmx left keys of run j1: $left"
# Again with the same id, another team's flag (j2.abort) set: the watcher must wait for
# this run's own flag, set 1 s later, not stop at once on a leftover or on j2's.
curl -fsS "$STS/SET?NAME=j2.abort&VALUE=stop&TTL=300" >/dev/null
(sleep 1; curl -fsS "$STS/SET?NAME=j1.abort&VALUE=stop&TTL=300" >/dev/null) &
setter=$!
t0=$(date +%s%N)
python3 tests/examples/jmx-replay.py examples/shared-state.jmx "${STS%/sts}" -JrunId=j1 $skipowner \
    >"$tmp/replay2" 2>&1
status=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
wait "$setter"
[ "$status" = 0 ] && [ "$ms" -ge 900 ] && grep -q 'if ${__jexl3("stop" == "stop")}' "$tmp/replay2" &&
    [ -z "$(keys j1.)" ] && [ -n "$(keys j2.)" ] &&
    ok "shared-state.jmx, a second run of j1 (-JrunId): waited $ms ms for its own flag (none left over, j2's not seen), cleaned up again; j2.abort untouched" ||
    { fail "shared-state.jmx, second run of j1: status $status, $ms ms (want >= 900: no flag left over), keys j1: '$(keys j1.)' (want none), j2: '$(keys j2.)' (want j2.abort)"
      sed 's/^/        /' "$tmp/replay2"; }
[ "$owner" = yes ] ||
    skip "examples/shared-state.jmx sticky logins (OWNER): this stsd has no READ ... OWNER= yet (issue 24 section 3)"
stop

# 3. Locust, headless, for a few seconds.
if ! command -v locust >/dev/null 2>&1; then
    skip "Locust example: locust is not installed (Debian: python3-locust)"
else
    users="LoginUser Producer Consumer"
    [ "$queues" = yes ] && users="$users LeaseConsumer"
    n=$(( $(echo "$users" | wc -w) * 2 ))
    start
    host=${STS%/sts}
    if locust -f examples/locustfile.py --host "$host" --headless -u "$n" -r "$n" -t 4s \
        --stop-timeout 5 --csv "$tmp/locust" --only-summary --loglevel WARNING $users \
        >"$tmp/locust.log" 2>&1; then
        ok "locust: $users for 4 s, exit status 0"
    else
        fail "locust exited with status $? (log below)"; tail -n 25 "$tmp/locust.log" | sed 's/^/        /'
    fi
    stats="$tmp/locust_stats.csv"
    failures=$(col Aggregated 4); requests=$(col Aggregated 3)
    logins=$(col "READ logins.csv" 3)
    # The CSV may miss the requests of users finishing their task after -t: the count
    # comes from the locustfile, once every user has stopped.
    produced=$(sed -n 's/^jobs produced: \([0-9]*\)$/\1/p' "$tmp/locust.log")
    [ "${failures:-x}" = 0 ] && [ "${requests:-0}" -gt 20 ] && [ "${produced:-0}" -gt 0 ] &&
        [ "${logins:-0}" -gt 0 ] && ok "locust: $requests requests, none failed" ||
        fail "locust statistics: ${requests:-?} requests, ${failures:-?} failed (want 0); $produced ADD, $logins READ logins"
    accounts=$(body 'LENGTH?FILENAME=logins.csv')
    left=$(body 'LENGTH?FILENAME=queue.csv'); done=$(body 'LENGTH?FILENAME=done.csv')
    [ "$accounts" = 20 ] || fail "logins.csv holds $accounts accounts, not 20"
    if [ "$queues" = yes ]; then
        loaned=$(body 'LEASES?FILENAME=queue.csv')
        [ "$loaned" = 0 ] || fail "$loaned jobs still on loan after the test"
    fi
    [ $((left + done)) -eq $((10 + ${produced:-0})) ] &&
        ok "lists: 20 accounts; 10 + $produced jobs = $done consumed once + $left left" ||
        fail "jobs: 10 + $produced produced, but $done consumed + $left left"
    saved=$(ls "$tmp/data" | grep -c '^[0-9]*T[0-9]*h[0-9]*m[0-9]*s\.queue\.csv$')
    [ "$saved" = 1 ] && [ "$(cat "$tmp/data/"*T*s.queue.csv | wc -l)" -eq "$left" ] &&
        ok "the leftovers were saved at the end ($left lines)" || fail "no SAVE of $left lines at the end"
    stop
fi

# 3b. Artillery (examples/artillery.yml) for 3 s of load. Artillery is not in Debian: npm
# installs artillery@$ARTILLERY_VERSION into $NPM_DIR once (kept between runs, installed
# again when the version there is another). No npm is a skip; a failed install is a skip
# here and a failure under CI=true. The report (--output) must show no failed virtual
# user, no failed expectation, and as many requests as the scenarios make: 2 per login
# user (READ, ADD back), 1 per producer, 1 READ per consumer and 1 ACK per job taken (the
# jobs ADDed minus those left). The captures must be bare: every login is logged as
# "logged in as loginN with passwordN", and the 20 accounts ADDed back are each found
# again by FIND FIND_MODE=EQUALS. Every lease ACKed, the leftovers SAVEd by `after`.
NPM_DIR=${NPM_DIR:-build/npm}
ARTILLERY_VERSION=${ARTILLERY_VERSION:-2.0.x}
artillery="$NPM_DIR/node_modules/.bin/artillery"
# The version npm installed in $NPM_DIR, if any.
artillery_version() {
    node -p 'require(process.argv[1]).version' \
        "$(cd "$NPM_DIR" 2>/dev/null && pwd)/node_modules/artillery/package.json" 2>/dev/null
}
have=$(artillery_version || true)
case "$have" in "${ARTILLERY_VERSION%x}"*) artillery_ok=yes ;; *) artillery_ok=no ;; esac
if [ "$artillery_ok" = no ] && command -v npm >/dev/null 2>&1; then
    mkdir -p "$NPM_DIR"
    echo "  ..    npm install artillery@$ARTILLERY_VERSION into $NPM_DIR (once; a minute or two)"
    # Artillery's browser engine downloads a Chromium at install; the HTTP engine needs none.
    if (cd "$NPM_DIR" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-audit --no-fund \
        --loglevel=error "artillery@$ARTILLERY_VERSION") >"$tmp/npm.log" 2>&1 &&
        [ -x "$artillery" ]; then
        artillery_ok=yes
    elif [ "${CI:-}" = true ]; then
        fail "npm install artillery@$ARTILLERY_VERSION failed:"
        tail -n 15 "$tmp/npm.log" | sed 's/^/        /'
        artillery_ok=failed
    else
        skip "Artillery example: npm install artillery@$ARTILLERY_VERSION failed (CI=true: a failure)"
        tail -n 5 "$tmp/npm.log" | sed 's/^/        /'
        artillery_ok=failed
    fi
fi
if [ "$artillery_ok" = no ]; then
    skip "Artillery example: npm is not installed (Debian: npm)"
elif [ "$artillery_ok" = yes ]; then
    start
    t0=$(date +%s)
    ARTILLERY_DISABLE_TELEMETRY=true "$artillery" run --target "${STS%/sts}" \
        --overrides '{"config":{"phases":[{"duration":3,"arrivalRate":10}]}}' \
        --output "$tmp/artillery.json" examples/artillery.yml >"$tmp/artillery.log" 2>&1
    status=$?
    took=$(( $(date +%s) - t0 ))
    [ "$status" = 0 ] &&
        ok "artillery $(artillery_version): examples/artillery.yml, 3 s of load, exit status 0 (run took $took s)" ||
        { fail "artillery exited with status $status (log below)"
          tail -n 25 "$tmp/artillery.log" | sed 's/^/        /'; }
    # The report's counters as "name<TAB>value" lines; a scenario's name cut at its ':'.
    python3 -c '
import json, sys
counters = json.load(open(sys.argv[1]))["aggregate"]["counters"]
for k, v in sorted(counters.items()):
    if k.startswith("vusers.created_by_name."):
        k = "scenario." + k[len("vusers.created_by_name."):].split(":")[0]
    print(k + "\t" + str(v))
' "$tmp/artillery.json" >"$tmp/artillery.counters" || fail "no Artillery report"
    counter() { awk -F'\t' -v k="$1" '$1 == k { v = $2 } END { print v + 0 }' "$tmp/artillery.counters"; }
    users=$(counter vusers.created); vfailed=$(counter vusers.failed)
    efailed=$(counter plugins.expect.failed); requests=$(counter http.requests)
    logins=$(counter "scenario.Unique logins"); producers=$(counter scenario.Producer)
    consumers=$(counter scenario.Consumer)
    acked=$(counter 'plugins.metrics-by-endpoint.ACK jobs.csv.codes.200')
    jobs=$(body 'LENGTH?FILENAME=jobs.csv'); loaned=$(body 'LEASES?FILENAME=jobs.csv')
    acks=$((producers - jobs))
    want=$((2 * logins + producers + consumers + acks))
    [ "$users" = 30 ] && [ "$vfailed" = 0 ] && [ "$efailed" = 0 ] && [ "$requests" = "$want" ] &&
        [ "$acked" = "$acks" ] && [ "$loaned" = 0 ] &&
        ok "artillery report: $users users ($logins logins, $producers producers, $consumers consumers), 0 failed; $requests requests = 2 x $logins + $producers + $consumers + $acks ACKs" ||
        { fail "artillery report: $users users (want 30), $vfailed failed, $efailed expectations failed (want 0, 0), $requests requests (want $want: $logins logins, $producers producers, $consumers consumers, $acks jobs taken; $acked ACKs), $loaned jobs on loan (want 0)"
          sed 's/^/        /' "$tmp/artillery.counters"; }
    bare=$(grep -c '^logged in as login[0-9]* with password[0-9]*$' "$tmp/artillery.log")
    said=$(grep -c '^logged in as ' "$tmp/artillery.log")
    found=0
    while IFS= read -r account; do
        [ "$(body "FIND?FILENAME=logins.csv&FIND_MODE=EQUALS&KEEP=TRUE&LINE=$account")" = "$account" ] &&
            found=$((found + 1))
    done <datasets/logins.csv
    accounts=$(body 'LENGTH?FILENAME=logins.csv')
    [ "$logins" -gt 0 ] && [ "$bare" = "$logins" ] && [ "$said" = "$logins" ] && [ "$found" = 20 ] &&
        [ "$accounts" = 20 ] &&
        ok "artillery captures are bare: $bare logins logged as loginN with passwordN; the 20 accounts ADDed back, each found by FIND EQUALS" ||
        { fail "artillery captures: $bare of $said logins bare (want $logins), $found of 20 accounts found by FIND EQUALS, logins.csv $accounts lines (want 20)"
          grep '^logged in as ' "$tmp/artillery.log" | head -n 3 | sed 's/^/        /'; }
    saved=$(ls "$tmp/data" | grep -c '^[0-9]*T[0-9]*h[0-9]*m[0-9]*s\.jobs\.csv$')
    [ "$saved" = 1 ] && [ "$(cat "$tmp/data/"*T*s.jobs.csv | wc -l)" -eq "$jobs" ] &&
        ok "artillery: the $jobs jobs left were saved by after" ||
        fail "artillery: $saved SAVE of the $jobs jobs left at the end (want 1)"
    stop
fi

# 4. Shared state (keys and counters), Locust headless: a global order id, a semaphore of 3
# seats, and an abort flag that stops the run (set with curl after 3 s of a 30 s run);
# twice with RUN_ID=s1, beside the flag of another run id (s2) that must not stop it.
# Sticky logins (READ ... OWNER=) are a check of their own below.
if ! command -v locust >/dev/null 2>&1; then
    skip "Locust shared-state example: locust is not installed (Debian: python3-locust)"
else
    start
    host=${STS%/sts}
    # Another team's flag on the same stsd: run s1 must not see it.
    curl -fsS "$STS/SET?NAME=s2.abort&VALUE=stop&TTL=300" >/dev/null
    for n in 1 2; do    # twice, the same RUN_ID: the second must not stop at once
        (sleep 3; curl -fsS "$STS/SET?NAME=s1.abort&VALUE=stop&TTL=300" >/dev/null) &
        setter=$!
        t0=$(date +%s)
        if RUN_ID=s1 locust -f examples/locust-shared-state.py --host "$host" --headless -u 9 -r 9 \
            -t 30s --stop-timeout 5 --csv "$tmp/shared" --only-summary --loglevel WARNING \
            OrderUser SeatUser AbortWatcher >"$tmp/shared.log" 2>&1; then
            ok "locust shared state, RUN_ID=s1, run $n: OrderUser SeatUser AbortWatcher, exit status 0"
        else
            fail "locust (shared state, run $n) exited with status $? (log below)"
            tail -n 25 "$tmp/shared.log" | sed 's/^/        /'
        fi
        took=$(( $(date +%s) - t0 ))
        wait "$setter"
        grep -q '^abort flag seen' "$tmp/shared.log" && [ "$took" -ge 3 ] && [ "$took" -lt 15 ] &&
            ok "run $n: its abort flag (s1.abort, GET VERSION TIMEOUT), set after 3 s, stopped the 30 s run after $took s; s2.abort did not" ||
            fail "run $n: the abort flag did not stop the run after 3 s (took $took s; under 3: a leftover or another id's flag)"
        stats="$tmp/shared_stats.csv"
        failures=$(col Aggregated 4); requests=$(col Aggregated 3)
        [ "${failures:-x}" = 0 ] && [ "${requests:-0}" -gt 20 ] &&
            ok "locust shared state: $requests requests, none failed" ||
            fail "locust shared-state statistics: ${requests:-?} requests, ${failures:-?} failed (want 0)"
        ids=$(sed -n 's/^order ids: \([0-9]*\) taken, \([0-9]*\) distinct$/\1 \2/p' "$tmp/shared.log")
        taken=${ids% *}; distinct=${ids#* }
        [ -n "$ids" ] && [ "$taken" -gt 0 ] && [ "$taken" = "$distinct" ] &&
            ok "order ids: $taken taken, all distinct" || fail "order ids: '${ids:-none}' (taken distinct)"
        most=$(sed -n 's/^seats: at most \([0-9]*\) users.*/\1/p' "$tmp/shared.log")
        [ "${most:-0}" -ge 1 ] && [ "${most:-9}" -le 3 ] &&
            ok "semaphore: at most $most of 3 users in the step" ||
            fail "semaphore: at most ${most:-?} users in the step (want 1 to 3)"
        left=$(keys s1.)
        [ -z "$left" ] && grep -q '^stsd DEL PREFIX=s1\.: [1-9][0-9]* keys deleted$' "$tmp/shared.log" &&
            ok "run $n: test_stop deleted the keys of s1 (KEYS PREFIX=s1. empty)" ||
            fail "run $n: keys of s1 left after the run: '$left'"
    done
    [ -n "$(keys s2.)" ] && ok "the other run's flag s2.abort is still there" ||
        fail "s2.abort was deleted by run s1"
    stop
fi

# 5. Sticky logins (READ ... KEEP=FALSE OWNER=, issue 24 section 3): 8 users, each must get
# the same login at every READ, no two the same, all back in the list at the end. It runs
# when $owner is yes (section 2b: the help page lists OWNER, or STSD_EXAMPLES_OWNER=yes).
if ! command -v locust >/dev/null 2>&1; then
    skip "Locust sticky logins: locust is not installed (Debian: python3-locust)"
else
    start
    if [ "$owner" != yes ]; then
        skip "Locust sticky logins (OWNER): this stsd has no READ ... OWNER= yet (issue 24 section 3)"
    else
        host=${STS%/sts}
        if locust -f examples/locust-shared-state.py --host "$host" --headless -u 8 -r 8 -t 4s \
            --stop-timeout 5 --csv "$tmp/sticky" --only-summary --loglevel WARNING \
            StickyLoginUser >"$tmp/sticky.log" 2>&1; then
            ok "locust sticky logins: StickyLoginUser for 4 s, exit status 0"
        else
            fail "locust (sticky logins) exited with status $? (log below)"
            tail -n 25 "$tmp/sticky.log" | sed 's/^/        /'
        fi
        stats="$tmp/sticky_stats.csv"
        failures=$(col Aggregated 4); requests=$(col Aggregated 3)
        line=$(sed -n 's/^sticky logins: //p' "$tmp/sticky.log")
        reads=$(echo "$line" | sed -n 's/.* \([0-9]*\) reads.*/\1/p')
        [ "${failures:-x}" = 0 ] && case "$line" in
            "8 owners, 8 distinct logins, "*" reads, 0 changed") [ "${reads:-0}" -ge 16 ] ;;
            *) false ;; esac &&
            ok "sticky logins: $line; none failed" ||
            fail "sticky logins: '${line:-none}' (want 8 owners, 8 distinct, 0 changed), ${failures:-?} failed"
        accounts=$(body 'LENGTH?FILENAME=logins.csv'); loaned=$(body 'LEASES?FILENAME=logins.csv')
        [ "$accounts" = 20 ] && [ "$loaned" = 0 ] &&
            ok "sticky logins: RELEASE by OWNER put all 20 back" ||
            fail "logins.csv: $accounts lines, $loaned on loan after RELEASE by OWNER (want 20, 0)"
    fi
    stop
fi

# 6. Run once (ONCE, DONE). The JMeter plan's setUp groups (every one, as each engine runs
# them) load the lists through ONCE:
# the engine that gets RUN INITFILEs and RESETs, then DONE; the others load nothing.
# First 5 replays of that group at once (5 engines starting together): 1 RUN, 4 DONE,
# the lists loaded by one of them only. Then two engines in turn, with a READ ... LEASE
# between them as the test under way (jmx-replay.py --engines 2): the late engine must
# send no INITFILE or RESET, so the order it consumes is the second one taken and the
# lease survives. Run ids: the 5 replays say -GrunId=o1; run o2 prepares on its own, and
# after o1's tearDown (DEL PREFIX=o1.) o1's next setUp gets RUN again. Then the Locust
# PrepareOnce users (5, in on_start) must prepare once (one ADD to prepared.csv), twice in
# a row with RUN_ID=p1, test_stop leaving no key of p1. Each on a fresh server.
if [ "$once" = no ]; then
    skip "ONCE examples: this stsd has no ONCE yet"
else
    start
    host=${STS%/sts}
    i=1; replays=
    while [ $i -le 5 ]; do
        python3 tests/examples/jmx-replay.py examples/stsd-plan.jmx "$host" --group setUp \
            -GrunId=o1 --machine "engine$i" >"$tmp/once$i" 2>&1 &
        replays="$replays $!"; i=$((i + 1))
    done
    wait $replays    # not a bare wait: stsd is a child too
    runs=$(cat "$tmp"/once[1-5] | grep -c 'if ${__jexl3("RUN" == "RUN")}: true, children run')
    dones=$(cat "$tmp"/once[1-5] | grep -c '^  ok    ONCE dataset-ready .* -> OK DONE$')
    loads=$(cat "$tmp"/once[1-5] | grep -c '^  ok    \(INITFILE\|RESET\) ')
    loaders=$(grep -l '^  ok    INITFILE ' "$tmp"/once[1-5] | wc -l)
    replay_fails=$(cat "$tmp"/once[1-5] | grep -c '^  FAIL')
    value=$(body 'GET?NAME=o1.dataset-ready')
    [ "$runs" = 1 ] && [ "$dones" = 4 ] && [ "$replay_fails" = 0 ] && [ "$loads" = 3 ] &&
        [ "$loaders" = 1 ] && [ "$value" = ok ] &&
        ok "examples/stsd-plan.jmx ONCE setUp, 5 replays at once (-GrunId=o1): 1 RUN loaded the lists (2 INITFILE, 1 RESET), 4 DONE, o1.dataset-ready = ok" ||
        { fail "stsd-plan.jmx ONCE: $runs RUN, $dones DONE, $replay_fails failed (want 1, 4, 0); $loads INITFILE/RESET by $loaders replays (want 3 by 1), o1.dataset-ready = '$value' (want ok)"
          sed 's/^/        /' "$tmp"/once[1-5]; }
    # Another run id prepares on its own; run o1's tearDown deletes its keys, and the
    # next run of o1 prepares again.
    python3 tests/examples/jmx-replay.py examples/stsd-plan.jmx "$host" --group setUp \
        -GrunId=o2 >"$tmp/once-o2" 2>&1
    python3 tests/examples/jmx-replay.py examples/stsd-plan.jmx "$host" --group tearDown \
        -GrunId=o1 >"$tmp/once-down" 2>&1
    left=$(keys o1.)
    python3 tests/examples/jmx-replay.py examples/stsd-plan.jmx "$host" --group setUp \
        -GrunId=o1 >"$tmp/once-again" 2>&1
    ran() { grep -c 'if ${__jexl3("RUN" == "RUN")}: true, children run' "$1"; }
    [ "$(ran "$tmp/once-o2")" = 1 ] && [ -z "$left" ] &&
        grep -q '^  ok    DEL PREFIX=o1\. .* -> OK 1$' "$tmp/once-down" &&
        [ "$(ran "$tmp/once-again")" = 1 ] && [ "$(body 'GET?NAME=o2.dataset-ready')" = ok ] &&
        ok "stsd-plan.jmx: run o2 prepared on its own; o1's tearDown deleted o1.dataset-ready, and o1's next setUp got RUN again" ||
        { fail "stsd-plan.jmx run ids: o2 RUN $(ran "$tmp/once-o2") times (want 1), keys of o1 after its tearDown '$left' (want none), o1 again RUN $(ran "$tmp/once-again") times (want 1)"
          cat "$tmp/once-o2" "$tmp/once-down" "$tmp/once-again" | sed 's/^/        /'; }
    stop
    start
    host=${STS%/sts}
    python3 tests/examples/jmx-replay.py examples/stsd-plan.jmx "$host" --engines 2 \
        --group setUp --group 'Consume once' \
        --between '/sts/READ?FILENAME=logins.csv&KEEP=FALSE&LEASE=60' \
        --once-only INITFILE --once-only RESET >"$tmp/late" 2>&1
    status=$?
    second=$(sed -n '/^engine replay-2$/,$s/^  ok    READ queue.csv KEEP=FALSE -> OK //p' "$tmp/late")
    orders=$(body 'LENGTH?FILENAME=queue.csv'); loaned=$(body 'LEASES?FILENAME=logins.csv')
    [ "$status" = 0 ] && [ "$second" = ORD-2024-10042 ] && [ "$orders" = 8 ] && [ "$loaned" = 1 ] &&
        ok "stsd-plan.jmx, a late engine: loads nothing (ONCE DONE); it consumed the 2nd order, 8 left, the lease taken between engines still on loan" ||
        { fail "stsd-plan.jmx, a late engine: replay status $status, its order '$second' (want ORD-2024-10042), queue.csv $orders lines (want 8), $loaned leases on logins.csv (want 1)"
          sed 's/^/        /' "$tmp/late"; }
    stop
    if ! command -v locust >/dev/null 2>&1; then
        skip "Locust PrepareOnce: locust is not installed (Debian: python3-locust)"
    else
        start
        host=${STS%/sts}
        for n in 1 2; do    # twice, the same RUN_ID: the second must prepare again
            if RUN_ID=p1 locust -f examples/locustfile.py --host "$host" --headless -u 5 -r 5 \
                -t 3s --stop-timeout 5 --csv "$tmp/once" --only-summary --loglevel WARNING \
                PrepareOnce >"$tmp/once.log" 2>&1; then
                ok "locust: PrepareOnce, RUN_ID=p1, run $n, exit status 0"
            else
                fail "locust (PrepareOnce, run $n) exited with status $? (log below)"
                tail -n 25 "$tmp/once.log" | sed 's/^/        /'
            fi
            stats="$tmp/once_stats.csv"
            failures=$(col Aggregated 4); onces=$(col "ONCE dataset-ready" 3)
            line=$(sed -n 's/^once: //p' "$tmp/once.log")
            prepared=$(body 'LENGTH?FILENAME=prepared.csv'); left=$(keys p1.)
            [ "${failures:-x}" = 0 ] && [ "${onces:-0}" = 5 ] &&
                [ "$line" = "1 ran the preparation, 4 got DONE" ] && [ "$prepared" = "$n" ] &&
                [ -z "$left" ] && ! grep -q "^dataset-ready is" "$tmp/once.log" &&
                ok "locust PrepareOnce run $n: 5 ONCE, $line; prepared.csv $n lines; no key of p1 left" ||
                fail "locust PrepareOnce run $n: '${line:-none}' (want 1 ran, 4 DONE), ${onces:-?} ONCE, ${failures:-?} failed; prepared.csv $prepared lines (want $n), keys of p1 left: '$left'"
        done
        stop
    fi
fi

tally examples
