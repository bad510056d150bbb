#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# test-image-cluster.sh - examples/compose.yml as a user runs it: three stsd replicas from
# the image of `make image`, started by podman-compose, each with its own volume, on one
# network where the nodes find each other by their service names (aardvark-dns).
# A leader elected; ADDs through one node, read through another; the leader's container
# killed (SIGKILL) while a client keeps adding: a new leader serves within 5 s and every
# acknowledged ADD is there, in order; the killed container started again (it comes back
# at a new address) rejoins as a follower and catches up; every container stops with
# exit 0. Then deploy/k8s/stsd.yaml: its fields checked, and its StatefulSet's pods run by
# podman kube play (see section 9 for what that does and does not prove). Containers,
# pods, volumes and networks are removed whatever happens.
# Usage: tests/pkg/test-image-cluster.sh (from the top of the tree, as root: CI runs as root).
set -u
. "$(dirname "$0")/../tally.sh"

if [ "$(id -u)" -ne 0 ]; then
    skip "the image's cluster: mmdebstrap and podman run as root here (CI runs as root)"
    tally "image-cluster"; exit
fi
for t in podman runc podman-compose mmdebstrap curl python3; do
    command -v "$t" >/dev/null || { skip "the image's cluster: no $t (scripts/deps.sh test)"; tally "image-cluster"; exit; }
done

top=$(pwd)
proj=stsdc$$                   # the compose project: names its containers, volumes, network
tmp=$(mktemp -d)
t_start=$(date +%s)
# This machine's podman: runc, not crun, and cgroupfs (hybrid cgroups, no systemd); for
# podman-compose, whose --podman-args go after the command, a wrapper with the flags.
pm() { podman --runtime runc --cgroup-manager cgroupfs "$@"; }
printf '#!/bin/sh\nexec podman --runtime runc --cgroup-manager cgroupfs "$@"\n' > "$tmp/podman"
chmod +x "$tmp/podman"
# Limits no higher than this machine allows (as tests/pkg/test-image.sh).
lim() {
    v=$(awk -v n="$1" 'index($0, n) == 1 { print $(NF - 1) }' /proc/self/limits)
    case $v in ''|unlimited) v=$2 ;; esac
    [ "$v" -gt "$2" ] && v=$2
    echo "$v"
}
nofile=$(lim 'Max open files' "$(cat /proc/sys/fs/nr_open)")
nproc=$(lim 'Max processes' "$(cat /proc/sys/kernel/pid_max)")
compose() {
    podman-compose -p "$proj" -f "$top/examples/compose.yml" --podman-path "$tmp/podman" \
        --podman-run-args "--ulimit nofile=$nofile:$nofile --ulimit nproc=$nproc:$nproc" "$@"
}
cleanup() {
    [ -f "$tmp/writer.pid" ] && kill "$(cat "$tmp/writer.pid")" 2>/dev/null
    compose down -v -t 0 >/dev/null 2>&1
    # Whatever down left (podman-compose 1.0.3 keeps the network; a failed up, volumes).
    ids=$(pm ps -aq --filter "label=io.podman.compose.project=$proj" 2>/dev/null)
    [ -z "$ids" ] || pm rm -f -t 0 $ids >/dev/null 2>&1
    for v in $(pm volume ls -q --filter "label=io.podman.compose.project=$proj" 2>/dev/null); do
        pm volume rm -f "$v" >/dev/null 2>&1
    done
    pm network rm -f "${proj}_stsd" >/dev/null 2>&1
    # The k8s part's pods (kube down, or by name), claims, ConfigMap volume and network.
    for f in "$tmp"/k8s/[012].yaml; do
        [ -f "$f" ] && CONTAINERS_CONF=$tmp/k8s/containers.conf podman kube down "$f" >/dev/null 2>&1
    done
    for p in $(pm pod ls -q --filter "name=$proj-" 2>/dev/null); do pm pod rm -f -t 0 "$p" >/dev/null 2>&1; done
    for v in $(pm volume ls -q --filter "name=$proj" 2>/dev/null); do pm volume rm -f "$v" >/dev/null 2>&1; done
    pm network rm -f "${proj}_k8s" >/dev/null 2>&1
    left=$(pm ps -aq --filter "label=io.podman.compose.project=$proj" 2>/dev/null)
    left="$left$(pm volume ls -q --filter "label=io.podman.compose.project=$proj" 2>/dev/null)"
    left="$left$(pm pod ls -q --filter "name=$proj-" 2>/dev/null)$(pm volume ls -q --filter "name=$proj" 2>/dev/null)"
    pm network exists "${proj}_stsd" 2>/dev/null && left="$left network"
    pm network exists "${proj}_k8s" 2>/dev/null && left="$left network-k8s"
    [ -z "$left" ] || echo "  FAIL  teardown left: $left"
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

now_ms() { echo $(($(date +%s%N) / 1000000)); }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# port N: node N's published HTTP port; cnt N: its container.
p1=$(free_port); p2=$(free_port); p3=$(free_port)
while [ "$p2" = "$p1" ]; do p2=$(free_port); done
while [ "$p3" = "$p1" ] || [ "$p3" = "$p2" ]; do p3=$(free_port); done
port() { eval echo "\$p$1"; }
cnt() { echo "${proj}_stsd$1_1"; }
export STSD_PUBLISH_1=127.0.0.1:$p1 STSD_PUBLISH_2=127.0.0.1:$p2 STSD_PUBLISH_3=127.0.0.1:$p3
# state N: node N's CLUSTER as "role serving leader commit applied", or "down".
state() {
    curl -s -m 2 "http://127.0.0.1:$(port "$1")/sts/CLUSTER?FORMAT=JSON" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d["role"], int(bool(d["serving"])), d["leader"] or 0, d["commit_index"], d["applied_index"])' 2>/dev/null ||
        echo down
}
# leader_among NODES...: the one node of NODES that serves as the leader while every other
# of NODES follows it; nothing (status 1) otherwise.
leader_among() {
    l=""; f=""; k=0
    for n in "$@"; do
        k=$((k + 1))
        # shellcheck disable=SC2046
        set -- $(state "$n")
        [ "${2:-0}" = 1 ] && l="$l $n"
        [ "${1:-}" = follower ] && f="$f $3"
    done
    # shellcheck disable=SC2086
    set -- $l
    [ $# -eq 1 ] && [ "$(echo "$f" | wc -w)" -eq $((k - 1)) ] || return 1
    for x in $f; do [ "$x" = "$1" ] || return 1; done
    echo "$1"
}
# lines: an answer's body, one line per <br /> (READMULTI).
lines() { sed -n 's|<br />$||p' | sed '/^<body>$/d'; }
add() { curl -s -m 5 -d "FILENAME=$2" -d "LINE=$3" -d ADD_MODE=LAST "http://127.0.0.1:$(port "$1")/sts/ADD" | grep -q '<title>OK</title>'; }
# readall N LIST: every line of LIST, through node N (LENGTH, then READMULTI of as many).
readall() {
    u=http://127.0.0.1:$(port "$1")/sts
    len=$(curl -s -m 5 "$u/LENGTH?FILENAME=$2" | sed -n 's|^<body>\([0-9]*\)</body>$|\1|p')
    [ "${len:-0}" -gt 0 ] || return 0
    curl -s -m 5 "$u/READMULTI?FILENAME=$2&NB_LINES=$len&KEEP=TRUE" | lines
}
ip() { pm inspect --format '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$(cnt "$1")"; }
logs() { pm logs "$(cnt "$1")" 2>&1 | tail -n "${2:-8}" | sed 's/^/        /'; }

# 1. The image (cached: make test built it in test-image just before).
t0=$(now_ms)
if scripts/mkimage.sh >"$tmp/mkimage.log" 2>&1; then
    ok "make image: localhost/stsd:latest ($(( ($(now_ms) - t0) / 1000 )) s)"
else
    fail "make image:"; tail -n 30 "$tmp/mkimage.log" | sed 's/^/        /'
    tally "image-cluster"; exit
fi

# 2. podman-compose up: three containers, three volumes, one network.
t0=$(now_ms)
compose up -d >"$tmp/up.log" 2>&1
running=$(pm ps --filter "label=io.podman.compose.project=$proj" --format '{{.Names}}' | sort | tr '\n' ' ')
if [ "$running" = "$(cnt 1) $(cnt 2) $(cnt 3) " ]; then
    ok "podman-compose up -d: 3 containers in $(( ($(now_ms) - t0) / 1000 )) s, HTTP on 127.0.0.1:$p1, $p2, $p3"
else
    fail "podman-compose up: running [$running]"; tail -n 20 "$tmp/up.log" | sed 's/^/        /'
    tally "image-cluster"; exit
fi
vols=$(pm volume ls -q --filter "label=io.podman.compose.project=$proj" | sort | tr '\n' ' ')
mounts=""; for n in 1 2 3; do
    mounts="$mounts$(pm inspect --format '{{range .Mounts}}{{.Name}}:{{.Destination}}{{end}}' "$(cnt "$n")") "
done
nets=$(for n in 1 2 3; do pm inspect --format '{{range $k, $v := .NetworkSettings.Networks}}{{$k}}{{end}}' "$(cnt "$n")"; done | sort -u)
[ "$vols" = "${proj}_stsd1-data ${proj}_stsd2-data ${proj}_stsd3-data " ] &&
    [ "$mounts" = "${proj}_stsd1-data:/var/lib/stsd ${proj}_stsd2-data:/var/lib/stsd ${proj}_stsd3-data:/var/lib/stsd " ] &&
    [ "$nets" = "${proj}_stsd" ] &&
    ok "a volume each on /var/lib/stsd, one network (${proj}_stsd)" ||
    fail "volumes [$vols] mounts [$mounts] networks [$nets]"
pub=$(for n in 1 2 3; do pm port "$(cnt "$n")"; done | tr '\n' ' ')
[ "$pub" = "9191/tcp -> 127.0.0.1:$p1 9191/tcp -> 127.0.0.1:$p2 9191/tcp -> 127.0.0.1:$p3 " ] &&
    ok "published: HTTP only (9191 of each), raft's 9201 stays inside the network" ||
    fail "published ports: $pub"
# stsd as uid 10001 on a read-only root, under podman's default seccomp profile (raft's
# io_setup allowed by it: raft could not start otherwise).
sec=$(for n in 1 2 3; do
    printf '%s/%s/%s ' "$(pm inspect --format '{{.HostConfig.ReadonlyRootfs}}' "$(cnt "$n")")" \
        "$(pm exec "$(cnt "$n")" sh -c 'sed -n "s/^Uid:\t*\([0-9]*\).*/\1/p; s/^Seccomp:\t*//p" /proc/1/status' | tr '\n' '/')" \
        "$(pm inspect --format '{{.HostConfig.SecurityOpt}}' "$(cnt "$n")")"
done)
[ "$sec" = "true/10001/2//[] true/10001/2//[] true/10001/2//[] " ] &&
    ok "each: read-only root, uid 10001, podman's default seccomp filter (mode 2, no security-opt)" ||
    fail "read-only/uid/seccomp/security-opt: $sec"

# 3. A leader, found by the names: each node resolved the two others' service names.
t0=$(now_ms); leader=""
while [ $(($(now_ms) - t0)) -lt 30000 ]; do
    leader=$(leader_among 1 2 3) && [ -n "$leader" ] && break
    sleep 0.2
done
if [ -n "$leader" ]; then
    ok "leader: node $leader serves and the two others follow it, $(( $(now_ms) - t0 )) ms after up"
else
    fail "no leader followed by the two others within 30 s: $(state 1) | $(state 2) | $(state 3)"; logs 1 12; logs 2 6; logs 3 6
    tally "image-cluster"; exit
fi
# resolved N: how many of the other two service names node N has logged resolving.
resolved() { pm logs "$(cnt "$1")" 2>&1 | grep -c 'cluster: stsd[123] resolves to [0-9]'; }
i=0; while [ $i -lt 50 ]; do
    res="$(resolved 1) $(resolved 2) $(resolved 3)"; [ "$res" = "2 2 2" ] && break
    sleep 0.1; i=$((i + 1))
done
[ "$res" = "2 2 2" ] && ok "raft addresses by service name: each node resolved the other two (stsdN:9201)" ||
    fail "\"resolves to\" lines per node: $res"

# 4. ADD through one follower, READ through the other (both forward to the leader).
fa=""; fb=""; for n in 1 2 3; do [ "$n" = "$leader" ] && continue; [ -z "$fa" ] && fa=$n || fb=$n; done
n=0; for i in $(seq 1 20); do add "$fa" users.csv "user$i" && n=$((n + 1)); done
[ $n -eq 20 ] && ok "ADD through node $fa (a follower): 20 acknowledged" || fail "ADD through node $fa: $n of 20"
seq 1 20 | sed 's/^/user/' > "$tmp/want"
readall "$fb" users.csv > "$tmp/got"
cmp -s "$tmp/want" "$tmp/got" && ok "READMULTI through node $fb: the 20 lines, in order" ||
    fail "READMULTI through node $fb: $(diff "$tmp/want" "$tmp/got" | grep '^[<>]' | head -5 | tr '\n' ' ')"

# A file sent as a list (LOAD) through the other follower: stsctl in its container, the
# file on its standard input, as examples/compose.yml's header says to fill a list.
out=$(seq 1 500 | sed 's/^/item/' | pm exec -i "$(cnt "$fb")" stsctl load items - 2>&1)
readall "$fa" items > "$tmp/items"
[ "$(wc -l < "$tmp/items")" = 500 ] && [ "$(tail -n 1 "$tmp/items")" = item500 ] &&
    ok "stsctl load through node $fb (in its container): 500 lines, read back through node $fa" ||
    fail "stsctl load through node $fb: $out; $(wc -l < "$tmp/items") lines through node $fa"

# 5. SIGKILL the leader's container while a client keeps adding through a follower.
# writer: ADD w1, w2... to seq.csv through node $fa until $tmp/stop (or 3,000 ADDs, 60 s);
# "sent answered line" per acknowledged one in $tmp/acked (ms), every line sent in $tmp/tried.
(
    i=0; end=$(( $(now_ms) + 60000 ))
    while [ ! -f "$tmp/stop" ] && [ $i -lt 3000 ] && [ "$(now_ms)" -lt $end ]; do
        i=$((i + 1)); echo "w$i" >> "$tmp/tried"
        t=$(now_ms)
        if add "$fa" seq.csv "w$i"; then echo "$t $(now_ms) w$i" >> "$tmp/acked"; else sleep 0.05; fi
    done
) &
echo $! > "$tmp/writer.pid"
acked() { [ -f "$tmp/acked" ] && wc -l < "$tmp/acked" || echo 0; }
i=0; while [ "$(acked)" -lt 30 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
before=$(acked)
ip_before=$(ip "$leader")
t_kill=$(now_ms)
pm kill "$(cnt "$leader")" >/dev/null 2>&1
t_dead=$(now_ms)
st=$(pm inspect --format '{{.State.Running}} {{.State.ExitCode}}' "$(cnt "$leader")")
[ "$st" = "false 137" ] && ok "podman kill node $leader (the leader; SIGKILL, exit 137) with $before ADDs acknowledged" ||
    fail "podman kill node $leader: running, exit code: $st"
new=""
while [ $(($(now_ms) - t_kill)) -lt 15000 ]; do
    new=$(leader_among "$fa" "$fb") && [ -n "$new" ] && break
    sleep 0.1
done
t_new=$(now_ms)
# The first ADD sent after the leader was dead (podman kill returned) and acknowledged: the
# writer's, through the follower it writes to (forwarding to the new leader, or it).
first=""; i=0
while [ -z "$first" ] && [ $i -lt 100 ]; do
    first=$(awk -v k="$t_dead" '$1 > k { print $2; exit }' "$tmp/acked")
    [ -n "$first" ] || { sleep 0.1; i=$((i + 1)); }
done
if [ -n "$new" ] && [ -n "$first" ] && [ $((t_new - t_kill)) -le 5000 ] && [ $((first - t_kill)) -le 5000 ]; then
    ok "failover: node $new serves $((t_new - t_kill)) ms after the kill; the first ADD sent after it acknowledged at $((first - t_kill)) ms (5 s at most)"
else
    fail "failover: new leader [$new] after $((t_new - t_kill)) ms, first ADD sent after it acknowledged at ${first:+$((first - t_kill))} ms: $(state "$fa") | $(state "$fb")"
    logs "$fa" 6; logs "$fb" 6
fi
i=0; n0=$(acked); while [ "$(acked)" -lt $((n0 + 30)) ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
touch "$tmp/stop"; wait "$(cat "$tmp/writer.pid")" 2>/dev/null; rm -f "$tmp/writer.pid"
cut -d ' ' -f 3 "$tmp/acked" > "$tmp/acked.lines"
readall "$new" seq.csv > "$tmp/seq.got"
# Every acknowledged line there, in their order; nothing that was not sent, nothing twice
# (an ADD answered "outcome unknown" may be there or not).
v=$(python3 - "$tmp/acked.lines" "$tmp/seq.got" "$tmp/tried" <<'EOF'
import sys
acked, got, tried = ([l.strip() for l in open(f) if l.strip()] for f in sys.argv[1:4])
pos = {l: i for i, l in enumerate(got)}
lost = [l for l in acked if l not in pos]
order = all(pos[a] < pos[b] for a, b in zip(acked, acked[1:]) if a in pos and b in pos)
stray = [l for l in got if l not in set(tried)]
print("ok" if not lost and order and not stray and len(set(got)) == len(got) else
      "lost %s order %s stray %s dup %d" % (lost[:5], order, stray[:5], len(got) - len(set(got))))
print(len(acked), len(got), len(tried))
EOF
)
set -- $(echo "$v" | tail -n 1)
[ "$(echo "$v" | head -n 1)" = ok ] &&
    ok "nothing acknowledged lost: $1 ADDs acknowledged, $2 lines in seq.csv (of $3 sent; the others got a 503 or no answer), in order, no duplicate" ||
    fail "after the failover: $(echo "$v" | head -n 1)"
readall "$new" users.csv > "$tmp/got2"
cmp -s "$tmp/want" "$tmp/got2" &&
    ok "users.csv whole on the new leader" || fail "users.csv after the failover: $(tr '\n' ' ' < "$tmp/got2")"

# 6. The killed container started again: a new address (the names resolve to it again),
# a follower of the new leader, caught up.
set -- $(state "$new"); commit=$4
t0=$(now_ms)
pm start "$(cnt "$leader")" >/dev/null 2>&1
rej=""
while [ $(($(now_ms) - t0)) -lt 30000 ]; do
    set -- $(state "$leader")
    [ "$1" = follower ] && [ "$3" = "$new" ] && [ "${5:-0}" -ge "$commit" ] && { rej=1; break; }
    sleep 0.2
done
if [ -n "$rej" ]; then
    ok "podman start node $leader (address $ip_before, now $(ip "$leader")): a follower of node $new again in $(( $(now_ms) - t0 )) ms, applied index $5 >= $commit"
else
    # What each side knew: the restarted node's log, and the leader's lines on names and
    # connections (a flake seen once in CI: the restarted node stayed a candidate).
    fail "node $leader after podman start: $(state "$leader") (leader node $new at commit $commit; addresses: $(for n in 1 2 3; do printf '%s=%s ' "$n" "$(ip "$n")"; done))"
    logs "$leader" 25
    echo "        --- node $new (the leader):"; pm logs "$(cnt "$new")" 2>&1 | grep -E 'cluster|raft|resolve' | tail -n 25 | sed 's/^/        /'
fi
readall "$leader" seq.csv > "$tmp/seq.got2"
cmp -s "$tmp/seq.got" "$tmp/seq.got2" && ok "seq.csv read through node $leader: the same $(wc -l < "$tmp/seq.got") lines" ||
    fail "seq.csv through node $leader differs: $(wc -l < "$tmp/seq.got2") lines"
set -- $(leader_among 1 2 3)
[ "${1:-}" = "$new" ] && ok "one leader among the three: node $new" || fail "leaders now: [$*]"

# 7. podman stop, followers first: each exits 0 within 5 s (the last without a majority).
stops=""; bad=""
for n in $(for n in 1 2 3; do [ "$n" = "$new" ] || echo "$n"; done) "$new"; do
    t0=$(now_ms)
    pm stop -t 20 "$(cnt "$n")" >/dev/null 2>&1
    ms=$(($(now_ms) - t0)); code=$(pm inspect --format '{{.State.ExitCode}}' "$(cnt "$n")")
    stops="$stops node $n: $code in $ms ms,"
    { [ "$code" = 0 ] && [ $ms -le 5000 ]; } || bad=1
done
[ -z "$bad" ] && ok "podman stop, the leader last: exit 0 within 5 s each (${stops%,})" ||
    fail "podman stop: ${stops%,}"

# 8. Torn down (the trap does it again on any exit).
t0=$(now_ms)
compose down -v >"$tmp/down.log" 2>&1
pm network rm -f "${proj}_stsd" >/dev/null 2>&1
left="$(pm ps -aq --filter "label=io.podman.compose.project=$proj")$(pm volume ls -q --filter "label=io.podman.compose.project=$proj")"
[ -z "$left" ] && ! pm network exists "${proj}_stsd" 2>/dev/null &&
    ok "podman-compose down -v (and the network): nothing left ($(( $(now_ms) - t0 )) ms)" ||
    fail "left after down: $left"
# 9. deploy/k8s/stsd.yaml without a cluster: its fields checked (python3-yaml), then its
# StatefulSet's pods as the controller would make them (tests/pkg/k8s-pods.py) run by
# podman kube play, each on a network where its alias is the headless Service's name
# (stsd-N.stsd): the ConfigMap as it is, the pod's command (stsd.cluster.self from the
# ordinal), the securityContext, the claims. Not the controller, the Services, the probe
# as the kubelet runs it, a real cluster's DNS, scheduling or storage.
k8s=$tmp/k8s; mkdir -p "$k8s"
p1=$(free_port); p2=$(free_port); p3=$(free_port)
while [ "$p2" = "$p1" ]; do p2=$(free_port); done
while [ "$p3" = "$p1" ] || [ "$p3" = "$p2" ]; do p3=$(free_port); done
python3 tests/pkg/k8s-pods.py deploy/k8s/stsd.yaml "$proj" "$p1,$p2,$p3" "$k8s" > "$k8s/checks" 2>&1
rc=$?
while read -r st msg; do
    case $st in ok) ok "k8s: $msg" ;; FAIL) fail "k8s: $msg" ;; *) fail "k8s-pods.py: $st $msg" ;; esac
done < "$k8s/checks"
[ $rc -eq 0 ] && [ -f "$k8s/2.yaml" ] || { tally "image-cluster"; exit; }
kcnt() { echo "$proj-stsd-$(($1 - 1))-stsd"; }
# kube play has no --ulimit: the limits (and the runtime) from a containers.conf of its own.
printf '[containers]\ndefault_ulimits = ["nofile=%s:%s", "nproc=%s:%s"]\n[engine]\nruntime = "runc"\ncgroup_manager = "cgroupfs"\n' \
    "$nofile" "$nofile" "$nproc" "$nproc" > "$k8s/containers.conf"
pm network create "${proj}_k8s" >/dev/null
t0=$(now_ms); played=""
for i in 0 1 2; do
    CONTAINERS_CONF=$k8s/containers.conf podman kube play --network "${proj}_k8s:alias=stsd-$i.stsd" \
        "$k8s/$i.yaml" >"$k8s/play$i.log" 2>&1 && played="$played $i"
done
[ "$played" = " 0 1 2" ] && ok "podman kube play: pods $proj-stsd-0, 1 and 2 started ($(( $(now_ms) - t0 )) ms)" ||
    { fail "podman kube play: started [$played]: $(grep -iv '^[0-9a-f]*$' "$k8s"/play*.log | tail -n 5)"; tally "image-cluster"; exit; }
t0=$(now_ms); leader=""
while [ $(($(now_ms) - t0)) -lt 30000 ]; do
    leader=$(leader_among 1 2 3) && [ -n "$leader" ] && break
    sleep 0.2
done
[ -n "$leader" ] && ok "k8s pods: node $leader leads, the two others follow it, $(( $(now_ms) - t0 )) ms after kube play" ||
    fail "k8s pods: no leader: $(state 1) | $(state 2) | $(state 3) $(pm logs "$(kcnt 1)" 2>&1 | tail -n 5)"
selfs=$(for n in 1 2 3; do
    printf '%s ' "$(curl -s -m 2 "http://127.0.0.1:$(port "$n")/sts/CLUSTER?FORMAT=JSON" | sed -n 's/.*"self":\([0-9]*\).*/\1/p')"
done)
cmd=$(pm exec "$(kcnt 2)" sh -c 'tr "\0" " " < /proc/1/cmdline')
[ "$selfs" = "1 2 3 " ] && echo "$cmd" | grep -q -- '--config /etc/stsd/cluster/cluster.properties .*-Dstsd.cluster.self=2 $' &&
    ok "k8s pods: stsd.cluster.self from the ordinal (pods 0, 1, 2 are nodes $selfs); PID 1: $cmd" ||
    fail "k8s pods: self [$selfs], PID 1: $cmd"
sec=$(for n in 1 2 3; do
    pm exec "$(kcnt "$n")" sh -c 'sed -n "s/^\(Uid\|CapEff\|NoNewPrivs\|Seccomp\):\t*\([0-9a-f]*\).*/\2/p" /proc/1/status | tr "\n" /
        touch /usr/x 2>/dev/null && echo rw || echo ro'
done | tr '\n' ' ')
[ "$sec" = "10001/0000000000000000/1/2/ro 10001/0000000000000000/1/2/ro 10001/0000000000000000/1/2/ro " ] &&
    ok "k8s pods: uid 10001, no capability, no_new_privs, seccomp RuntimeDefault, read-only root" ||
    fail "k8s pods: uid/CapEff/NoNewPrivs/Seccomp/root: $sec"
fa=""; fb=""; for n in 1 2 3; do [ "$n" = "$leader" ] && continue; [ -z "$fa" ] && fa=$n || fb=$n; done
n=0; for i in $(seq 1 20); do add "$fa" users.csv "user$i" && n=$((n + 1)); done
readall "$fb" users.csv > "$tmp/got"
[ $n -eq 20 ] && cmp -s "$tmp/want" "$tmp/got" &&
    ok "k8s pods: 20 ADDs through pod $((fa - 1)), read back through pod $((fb - 1))" ||
    fail "k8s pods: ADD $n of 20; read: $(tr '\n' ' ' < "$tmp/got" | cut -c 1-100)"
codes=$(for n in 1 2 3; do curl -s -m 3 -o /dev/null -w '%{http_code} ' "http://127.0.0.1:$(port "$n")/sts/INFO"; done)
[ "$codes" = "200 200 200 " ] && ok "k8s pods: the readiness probe's GET /sts/INFO answers 200 on each" ||
    fail "k8s pods: GET /sts/INFO: $codes"
out=$(pm run --rm --ulimit "nofile=$nofile:$nofile" --ulimit "nproc=$nproc:$nproc" -e POD_NAME=stsd \
    --entrypoint /bin/sh localhost/stsd:latest -c "$(cat "$k8s/command.sh")" stsd 2>&1 | grep -v 'systemd\|syslog')
code=$(pm run --rm --ulimit "nofile=$nofile:$nofile" --ulimit "nproc=$nproc:$nproc" -e POD_NAME=stsd \
    --entrypoint /bin/sh localhost/stsd:latest -c "$(cat "$k8s/command.sh")" stsd >/dev/null 2>&1; echo $?)
[ "$code" = 2 ] && echo "$out" | grep -q "ends in no ordinal" && ok "k8s: the command refuses a pod name without an ordinal: $out" ||
    fail "k8s: POD_NAME=stsd: exit $code, $out"
t0=$(now_ms)
for i in 0 1 2; do CONTAINERS_CONF=$k8s/containers.conf podman kube down "$k8s/$i.yaml" >/dev/null 2>&1; done
for v in "$proj-stsd-cluster" "data-$proj-stsd-0" "data-$proj-stsd-1" "data-$proj-stsd-2"; do pm volume rm -f "$v" >/dev/null 2>&1; done
pm network rm -f "${proj}_k8s" >/dev/null 2>&1
left="$(pm pod ls -q --filter "name=$proj-")$(pm volume ls -q --filter "name=$proj")"
[ -z "$left" ] && ! pm network exists "${proj}_k8s" 2>/dev/null &&
    ok "k8s pods: kube down, volumes and network removed ($(( $(now_ms) - t0 )) ms)" || fail "k8s pods left: $left"

echo "  (test-image-cluster took $(( $(date +%s) - t_start )) s)"
tally "image-cluster"
