#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# test-image.sh - the OCI image of `make image` under podman, as CI runs it (as root).
# Its size and settings; stsd as a non-root PID 1 on a read-only root with its data on one
# volume; INITFILE, READ and ADD through the published port; the HEALTHCHECK; podman stop
# (exit 0 within 5 s); a new container on the same volume with every acknowledged change.
# Usage: tests/pkg/test-image.sh (from the top of the tree, as root: CI runs as root).
# TEST_IMAGE_RUN_ARGS adds podman run options and TEST_IMAGE_ARGS stsd arguments to the
# first container (to break a check on purpose: "--user 0", "--read-only=false",
# "-Dstsd.journal=off").
set -u
. "$(dirname "$0")/../tally.sh"

if [ "$(id -u)" -ne 0 ]; then
    skip "the image: mmdebstrap and podman run as root here (CI runs as root)"
    tally "image"; exit
fi
for t in podman runc mmdebstrap curl python3; do
    command -v "$t" >/dev/null || { skip "the image: no $t (scripts/deps.sh test)"; tally "image"; exit; }
done

version=$(sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' debian/changelog)
image=localhost/stsd:$version
tag=stsd-test-$$
vol=$tag-data
tmp=$(mktemp -d)
# This machine's podman: runc, not crun, and cgroupfs (hybrid cgroups, no systemd).
pm() { podman --runtime runc --cgroup-manager cgroupfs "$@"; }
cleanup() {
    pm rm --ignore -f -t 0 "$tag-1" "$tag-2" "$tag-bad" >/dev/null 2>&1
    pm volume rm -f "$vol" >/dev/null 2>&1
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# Limits no higher than this machine allows: runc cannot raise them past the hard limits
# (nor nproc past pid_max here), and podman's defaults are higher.
# lim NAME CEILING: the hard limit NAME of /proc/self/limits, at most CEILING.
lim() {
    v=$(awk -v n="$1" 'index($0, n) == 1 { print $(NF - 1) }' /proc/self/limits)
    case $v in ''|unlimited) v=$2 ;; esac
    [ "$v" -gt "$2" ] && v=$2
    echo "$v"
}
nofile=$(lim 'Max open files' "$(cat /proc/sys/fs/nr_open)")
nproc=$(lim 'Max processes' "$(cat /proc/sys/kernel/pid_max)")
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url=http://127.0.0.1:$port/sts
pm_run() { pm run --ulimit "nofile=$nofile:$nofile" --ulimit "nproc=$nproc:$nproc" "$@"; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# run NAME [podman options...] -- [stsd arguments...]: a detached container of the image,
# its podman messages in $tmp/NAME.podman.
run() {
    n=$1; shift
    opts=""
    while [ "$1" != -- ]; do opts="$opts $1"; shift; done
    shift
    # shellcheck disable=SC2086
    pm_run -d --name "$n" $opts "$image" "$@" >"$tmp/$n.out" 2>&1
    rc=$?
    # Without podman 4.3's complaint that no systemd runs its health check timers here.
    grep -v 'systemd connection' "$tmp/$n.out" >"$tmp/$n.podman"
    return $rc
}
# up: waits up to 10 s for INFO through the published port.
up() {
    i=0
    while [ $i -lt 100 ]; do
        curl -sf "$url/INFO" >/dev/null 2>&1 && return 0
        sleep 0.1; i=$((i + 1))
    done
    return 1
}
# lines: an answer's body, one line per <br /> (READMULTI).
lines() { sed -n 's|<br />$||p' | sed '/^<body>$/d'; }

# 1. The image: built from the .deb (cached when nothing changed), its size and settings.
# (make test runs test-deb first, which leaves a fresh .deb in build/deb/.)
t0=$(now_ms)
if scripts/mkimage.sh >"$tmp/mkimage.log" 2>&1; then
    ok "make image: $image ($(( ($(now_ms) - t0) / 1000 )) s; $(tail -n 1 "$tmp/mkimage.log" | sed 's/^mkimage: //'))"
else
    fail "make image:"; sed 's/^/        /' "$tmp/mkimage.log" | tail -n 30
    tally "image"; exit
fi
size=$(pm image inspect --format '{{.Size}}' "$image")
[ "$size" -le 80000000 ] && ok "size: $((size / 1000000)) MB uncompressed (at most 80)" ||
    fail "size: $size bytes, over 80 MB"
[ "$(pm image inspect --format '{{.Id}}' localhost/stsd:latest)" = "$(pm image inspect --format '{{.Id}}' "$image")" ] &&
    ok "tagged $image and localhost/stsd:latest" || fail "localhost/stsd:latest is not $image"
conf=$(pm image inspect --format '{{.Config.User}}|{{json .Config.ExposedPorts}}|{{json .Config.Volumes}}|{{json .HealthCheck.Test}}' "$image")
[ "$conf" = '10001:10001|{"9191/tcp":{}}|{"/var/lib/stsd":{}}|["CMD","/usr/bin/stsctl","--connect-timeout","2","info"]' ] &&
    ok "config: USER 10001, EXPOSE 9191, VOLUME /var/lib/stsd, HEALTHCHECK stsctl info" ||
    fail "config: $conf"
pm_run --rm --entrypoint /usr/bin/dpkg-query "$image" -W -f '${db:Status-Abbrev}${Package}\n' \
    >"$tmp/pkgs" 2>/dev/null
grep -q '^ii stsd$' "$tmp/pkgs" && ! grep -q '^ii \(apt\|perl\)$' "$tmp/pkgs" &&
    ok "packages: stsd and $(($(grep -c '^ii' "$tmp/pkgs") - 1)) others (essential and its Depends), no apt, no perl" ||
    fail "packages: $(grep '^ii \(stsd\|apt\|perl\)$' "$tmp/pkgs" | tr '\n' ' ')"


# 2. First container: read-only root, the volume, the port on 127.0.0.1 only.
# shellcheck disable=SC2086
if run "$tag-1" --read-only -v "$vol:/var/lib/stsd" -p "127.0.0.1:$port:9191" ${TEST_IMAGE_RUN_ARGS:-} -- \
        ${TEST_IMAGE_ARGS:-} && up; then
    ok "started: answers INFO on 127.0.0.1:$port"
else
    fail "start: $(cat "$tmp/$tag-1.podman") $(pm logs "$tag-1" 2>&1 | tail -n 5)"; tally "image"; exit
fi
uid=$(pm exec "$tag-1" sh -c 'id -u; cat /proc/1/comm; sed -n "s/^Uid:\t*//p" /proc/1/status' | tr '\n\t' '  ')
[ "$uid" = "10001 stsd 10001 10001 10001 10001 " ] && ok "PID 1 is stsd, uid 10001 (real, effective, saved, fs)" ||
    fail "not stsd as 10001 at PID 1: id, comm, Uid: $uid"
ro=$(pm inspect --format '{{.HostConfig.ReadonlyRootfs}}' "$tag-1")
err=$(pm exec --user 0 "$tag-1" touch /usr/x 2>&1)
[ "$ro" = true ] && echo "$err" | grep -q 'Read-only file system' &&
    ok "read-only root: even root inside cannot write /usr" || fail "root file system writable: $ro; $err"

# A dataset written into the volume by the container's user, then the commands.
printf 'user1\nuser2\nuser3\nuser4\nuser5\n' | pm exec -i "$tag-1" sh -c 'cat > /var/lib/stsd/users.csv'
a=$(curl -s "$url/INITFILE?FILENAME=users.csv")
echo "$a" | grep -q '<body>5</body>' && ok "INITFILE users.csv from the volume: 5 lines" || fail "INITFILE: $a"
a=$(curl -s "$url/READ?FILENAME=users.csv&READ_MODE=FIRST&KEEP=FALSE")
echo "$a" | grep -q '<body>user1</body>' && ok "READ KEEP=FALSE: user1" || fail "READ: $a"
n=0
for i in 1 2 3 4 5 6 7 8 9 10; do
    curl -s -d FILENAME=users.csv -d "LINE=added$i" -d ADD_MODE=LAST "$url/ADD" | grep -q '<title>OK</title>' &&
        n=$((n + 1))
done
[ $n -eq 10 ] && ok "ADD: 10 lines acknowledged" || fail "ADD: $n of 10 acknowledged"
printf 'user%s\n' 2 3 4 5 > "$tmp/want"; printf 'added%s\n' 1 2 3 4 5 6 7 8 9 10 >> "$tmp/want"

# The HEALTHCHECK: healthy now; its command fails where no stsd answers.
pm healthcheck run "$tag-1" >/dev/null 2>&1 &&
    [ "$(pm inspect --format '{{.State.Health.Status}}' "$tag-1")" = healthy ] &&
    ok "HEALTHCHECK (stsctl info): healthy" || fail "HEALTHCHECK: $(pm inspect --format '{{json .State.Health}}' "$tag-1")"
pm exec -e STSD_URL=http://127.0.0.1:1 "$tag-1" stsctl --connect-timeout 2 info >/dev/null 2>&1 &&
    fail "stsctl info succeeded with no server: the HEALTHCHECK could not fail" ||
    ok "the HEALTHCHECK's command fails where no stsd answers"

# Nothing written outside the volume: no file in the container's layer, none in /tmp.
d=$(pm diff "$tag-1" 2>&1)
t=$(pm exec "$tag-1" find /tmp /var/tmp /run ! -type d 2>&1)
j=$(pm exec "$tag-1" sh -c 'ls /var/lib/stsd/.stsd' 2>/dev/null | grep -c '^journal\.')
[ -z "$d" ] && [ -z "$t" ] && [ "$j" -ge 1 ] &&
    ok "writes only to the volume: podman diff empty, /tmp /var/tmp /run empty, the journal in /var/lib/stsd/.stsd" ||
    fail "writes outside the volume: diff [$d] tmpfs [$t]; journal files in the volume: $j"

# 3. podman stop: SIGTERM to PID 1, exit 0 within 5 s (podman would SIGKILL after 20).
t0=$(now_ms)
pm stop -t 20 "$tag-1" >/dev/null 2>&1
ms=$(($(now_ms) - t0))
code=$(pm inspect --format '{{.State.ExitCode}}' "$tag-1")
[ "$code" = 0 ] && [ $ms -le 5000 ] && pm logs "$tag-1" 2>&1 | grep -q '\[info\] stopped' &&
    ok "podman stop: exit 0 in $ms ms, \"stopped\" logged" ||
    fail "podman stop: exit code $code after $ms ms; $(pm logs "$tag-1" 2>&1 | tail -n 3)"

# 4. A new container on the same volume, configured by a -D argument after the image.
run "$tag-2" --read-only -v "$vol:/var/lib/stsd" -p "127.0.0.1:$port:9191" -- -Dstsd.journal.fsync=always && up ||
    { fail "restart: $(cat "$tmp/$tag-2.podman") $(pm logs "$tag-2" 2>&1 | tail -n 5)"; tally "image"; exit; }
curl -s "$url/INFO" | grep -q 'journal.fsync=always<br />' && ok "-D after the image name: journal.fsync=always" ||
    fail "-Dstsd.journal.fsync=always not in effect: $(curl -s "$url/INFO" | grep fsync)"
curl -s "$url/READMULTI?FILENAME=users.csv&NB_LINES=14&KEEP=TRUE" | lines > "$tmp/got"
cmp -s "$tmp/want" "$tmp/got" && ok "after the restart: users.csv whole, in order (user1 read, 10 ADDs back)" ||
    fail "after the restart (< wanted, > got): $(diff "$tmp/want" "$tmp/got" | grep '^[<>]' | tr '\n' ' ')"
pm stop -t 20 "$tag-2" >/dev/null 2>&1
[ "$(pm inspect --format '{{.State.ExitCode}}' "$tag-2")" = 0 ] && ok "second stop: exit 0" ||
    fail "second stop: exit $(pm inspect --format '{{.State.ExitCode}}' "$tag-2")"

# 5. A volume the user cannot write (a bind mount owned by root): stsd refuses to start,
# saying why, rather than running without its journal.
mkdir "$tmp/rootonly"; chmod 0755 "$tmp/rootonly"
run "$tag-bad" -v "$tmp/rootonly:/var/lib/stsd" --
i=0
while [ "$(pm inspect --format '{{.State.Status}}' "$tag-bad" 2>/dev/null)" = running ] && [ $i -lt 50 ]; do
    sleep 0.1; i=$((i + 1))
done
code=$(pm inspect --format '{{.State.ExitCode}}' "$tag-bad" 2>/dev/null)
pm logs "$tag-bad" > "$tmp/bad.log" 2>&1
[ "$code" != 0 ] && [ -n "$code" ] && grep -qi 'permission denied' "$tmp/bad.log" &&
    ok "a volume uid 10001 cannot write: exit $code, \"$(grep -i -m 1 'permission denied' "$tmp/bad.log" | cut -c 25-100)\"" ||
    fail "a volume uid 10001 cannot write: exit code $code; $(tail -n 3 "$tmp/bad.log")"

tally "image"
