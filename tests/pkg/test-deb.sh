#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# test-deb.sh - the Debian package: `make deb` (dpkg-buildpackage -b -us -uc over debian/),
# its file list, conffile and dependencies (dh_shlibdeps), lintian without an error or a
# warning, then into this machine: dpkg -i (whose maintainer scripts must not fail where
# no systemd runs), stsd --version and stsctl --help as installed, dpkg -r (only the
# conffile and the unit's enablement stay: both configuration, as dpkg keeps it), dpkg
# --purge (nothing stays); the unit's ExecStart passes the conffile only, and serves
# /var/lib/stsd from it. Needs root (CI runs as root); otherwise a named skip.
# Usage: tests/pkg/test-deb.sh [OUT] (from the top of the tree; OUT: build/deb).
set -u
. "$(dirname "$0")/../tally.sh"
out=${1:-build/deb}

if [ "$(id -u)" -ne 0 ]; then
    skip "the .deb: dpkg -i needs root (CI runs as root)"
    tally "deb"; exit
fi
if dpkg-query -W -f='${Status}' stsd 2>/dev/null | grep -q 'ok installed'; then
    fail "a package stsd is installed already: this test would replace it (dpkg -r stsd first)"
    tally "deb"; exit
fi
# Another session's dpkg or apt may hold the lock: wait for it rather than fail.
dpkg_retry() {
    i=0
    while :; do
        dpkg "$@" >"$out/dpkg.log" 2>&1 && return 0
        grep -q 'lock' "$out/dpkg.log" && [ $i -lt 60 ] || { cat "$out/dpkg.log"; return 1; }
        sleep 2; i=$((i + 1))
    done
}

# 1. Build.
if deb=$(scripts/mkdeb.sh "$out" | tail -n 1) && [ -f "$deb" ]; then
    ok "make deb: $(basename "$deb")"
else
    fail "make deb (log: $out/build.log)"; tally "deb"; exit
fi

# 2. What it holds: exactly these files, the conffile, the shared libraries' packages.
{
    echo ./etc/stsd/sts.properties
    echo ./lib/systemd/system/stsd.service
    echo ./usr/bin/stsctl
    echo ./usr/bin/stsd
    echo ./usr/share/bash-completion/completions/stsctl
    echo ./usr/share/doc/stsd/changelog.gz
    echo ./usr/share/doc/stsd/copyright
    echo ./usr/share/man/man1/stsctl.1.gz
    echo ./usr/share/man/man8/stsd.8.gz
    echo ./usr/share/stsd/sts.properties.sample
    for f in datasets/README.md datasets/*.csv examples/*; do echo "./usr/share/stsd/$f"; done
} | sort > "$out/want.list"
dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { print $6 }' | sort > "$out/got.list"
if cmp -s "$out/want.list" "$out/got.list"; then
    ok "file list: the binaries, both man pages, the unit, the conffile, completion, datasets, examples ($(wc -l < "$out/got.list") files)"
else
    fail "file list differs (< wanted, > in the .deb): $(diff "$out/want.list" "$out/got.list" | grep '^[<>]' | tr '\n' ' ')"
fi
dpkg-deb -c "$deb" | grep -q '^-rwxr-xr-x .* ./usr/bin/stsctl$' && ok "stsctl is 0755" || fail "stsctl's mode"
conf=$(dpkg-deb -I "$deb" conffiles)
[ "$conf" = /etc/stsd/sts.properties ] && ok "conffiles: /etc/stsd/sts.properties" || fail "conffiles: $conf"
dep=$(dpkg-deb -f "$deb" Depends)
missing=""
for p in libc6 libcurl3-gnutls libgnutls30 libmicrohttpd12 libpcre2-8-0; do
    echo "$dep" | grep -q "\(^\|, \)$p (>= [0-9]" || missing="$missing $p"
done
[ -z "$missing" ] && ! echo "$dep" | grep -q -- '-dev' &&
    ok "Depends: the runtime libraries with versions (dh_shlibdeps): $dep" || fail "Depends: $dep (missing:$missing)"

# 3. lintian: no error, no warning (overrides in debian/stsd.lintian-overrides say why).
lint=$(lintian "$deb" 2>&1 | grep -v 'running with root privileges is not recommended')
echo "$lint" | sed '/^$/d; s/^/        /'
echo "$lint" | grep -q '^[EW]: ' && fail "lintian: errors or warnings" || ok "lintian: no error, no warning"

# 4. Install, run, remove, purge.
[ -d /run/systemd/system ] && where="systemd runs here" || where="no systemd runs here"
dpkg_retry -i "$deb" && ok "dpkg -i ($where): the maintainer scripts succeed" || fail "dpkg -i"
listed=$(dpkg -L stsd 2>/dev/null)
/usr/bin/stsd --version | grep -q '^stsd [0-9]' && ok "stsd --version, installed" || fail "/usr/bin/stsd --version"
/usr/bin/stsctl --help | grep -q '^Usage: stsctl' && ok "stsctl --help, installed" || fail "/usr/bin/stsctl --help"
man -w stsctl 2>/dev/null | grep -q /usr/share/man/man1/stsctl.1.gz && man -w 8 stsd 2>/dev/null | grep -q man8/stsd.8.gz &&
    ok "man stsctl, man stsd" || fail "man -w: $(man -w stsctl 2>&1) $(man -w 8 stsd 2>&1)"
bash -c '. /usr/share/bash-completion/completions/stsctl; complete -p stsctl' >/dev/null 2>&1 &&
    ok "bash completion installed" || fail "completion"
[ -L /etc/systemd/system/multi-user.target.wants/stsd.service ] && ok "the unit is enabled (dh_installsystemd)" ||
    fail "stsd.service not enabled"
# The unit's command line is --config and the conffile only (no -D to override it), and
# the conffile alone serves /var/lib/stsd: the installed unit's ExecStart, run as it is
# with only a free port and no journal added (systemd may not run here), loads a CSV put
# in /var/lib/stsd (made for the test when missing, as StateDirectory= would).
exec_line=$(sed -n 's/^ExecStart=//p' /lib/systemd/system/stsd.service)
if [ "$exec_line" = "/usr/bin/stsd --config /etc/stsd/sts.properties" ] &&
    ! grep -v '^#' /lib/systemd/system/stsd.service | grep -q -- '-D'; then
    ok "the unit passes only --config /etc/stsd/sts.properties (no -D)"
else
    fail "the unit's ExecStart: '$exec_line'"
fi
made=""
[ -e /var/lib/stsd ] || { mkdir -p /var/lib/stsd && made=yes; }
printf 'from-var-lib\n' >/var/lib/stsd/stsd-test-deb.csv
$exec_line --port 0 --bind 127.0.0.1 --port-file "$out/port" --journal off </dev/null >"$out/run.log" 2>&1 &
run=$!
i=0
while [ ! -s "$out/port" ] && [ $i -lt 300 ]; do sleep 0.01; i=$((i + 1)); done
sts="http://127.0.0.1:$(cat "$out/port" 2>/dev/null)/sts"
conf=$(curl -fsS "$sts/CONFIG" 2>/dev/null | tr -d '\n')
loaded=$(curl -fsS "$sts/INITFILE?FILENAME=stsd-test-deb.csv" 2>/dev/null | tr -d '\n')
curl -fsS "$sts/STOP" >/dev/null 2>&1 || kill "$run" 2>/dev/null
wait "$run"
rm -f /var/lib/stsd/stsd-test-deb.csv "$out/port"
[ -n "$made" ] && rm -rf /var/lib/stsd
case "$conf" in *'datasetDirectory=/var/lib/stsd<br />'*'daemon=true<br />'*) ;; *) conf="" ;; esac
case "$loaded" in *'<body>1</body>'*) ;; *) loaded="" ;; esac
[ -n "$conf" ] && [ -n "$loaded" ] &&
    ok "the unit's ExecStart serves /var/lib/stsd from the conffile alone (CONFIG, INITFILE)" ||
    { fail "the unit's ExecStart: CONFIG without datasetDirectory=/var/lib/stsd and daemon=true, or INITFILE of a file there failed"
      sed 's/^/        /' "$out/run.log"; }

dpkg_retry -r stsd && ok "dpkg -r" || fail "dpkg -r"
left=""
for f in $listed; do
    [ -d "$f" ] && continue
    [ "$f" = /etc/stsd/sts.properties ] && continue
    [ -e "$f" ] || [ -L "$f" ] && left="$left $f"
done
[ -z "$left" ] && [ -f /etc/stsd/sts.properties ] &&
    ok "after dpkg -r: every file gone but the conffile /etc/stsd/sts.properties" ||
    fail "after dpkg -r: left:$left; conffile $( [ -f /etc/stsd/sts.properties ] && echo kept || echo gone)"
dpkg-query -W -f='${Status}' stsd | grep -q 'config-files' && ok "dpkg -r: status config-files" ||
    fail "status after dpkg -r: $(dpkg-query -W -f='${Status}' stsd)"

dpkg_retry --purge stsd && ok "dpkg --purge" || fail "dpkg --purge"
rest=$(find /etc/stsd /etc/systemd /var/lib/systemd /var/lib/stsd /usr/bin/stsd /usr/bin/stsctl \
    -name '*stsd*' -o -name 'sts.properties' 2>/dev/null)
[ -z "$rest" ] && ! dpkg-query -W stsd >/dev/null 2>&1 && ok "after purge: nothing left (conffile, enablement)" ||
    fail "after purge: left: $rest"

tally "deb"
