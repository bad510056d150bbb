#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# test-install.sh - `make install DESTDIR=tmp` ships the binary, stsd(8), the unit, the
# sample configuration, the datasets and the examples, and stsctl with stsctl(1) and its
# bash completion; the man page renders without a
# warning and names every key, option and command; the installed unit passes
# `systemd-analyze verify` and rates 2.0 or less in `systemd-analyze security` (a skip,
# counted, without systemd-analyze); `make uninstall` takes it all back.
# Usage: tests/pkg/test-install.sh (from the top of the tree, after `make`).
set -u
. "$(dirname "$0")/../tally.sh"

tmp=$(mktemp -d /tmp/stsd-install-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
root="$tmp/root"
prefix=/usr/local
make --no-print-directory -s install DESTDIR="$root" PREFIX="$prefix" >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log"; fail "make install DESTDIR=$root"; exit 1; }

# 1. The files, with their modes.
for f in "$prefix/bin/stsd:755" "$prefix/share/man/man8/stsd.8:644" \
         "$prefix/bin/stsctl:755" "$prefix/share/man/man1/stsctl.1:644" \
         "$prefix/share/bash-completion/completions/stsctl:644" \
         "/lib/systemd/system/stsd.service:644" "/etc/stsd/sts.properties:644" \
         "$prefix/share/stsd/sts.properties.sample:644" \
         "$prefix/share/stsd/datasets/logins.csv:644" "$prefix/share/stsd/datasets/README.md:644"; do
    path=${f%:*}; mode=${f##*:}
    if [ ! -f "$root$path" ]; then fail "not installed: $path"
    elif [ "$(stat -c %a "$root$path")" != "$mode" ]; then fail "$path: mode $(stat -c %a "$root$path"), not $mode"
    fi
done
for f in examples/*; do
    [ -f "$f" ] || continue
    cmp -s "$f" "$root$prefix/share/stsd/$f" || fail "not installed: $prefix/share/stsd/$f"
done
"$root$prefix/bin/stsd" --version | grep -q '^stsd ' || fail "the installed binary does not run"
"$root$prefix/bin/stsctl" --version | grep -q '^stsctl ' || fail "the installed stsctl does not run"
grep -q "^ExecStart=$prefix/bin/stsd --config /etc/stsd/sts.properties" \
    "$root/lib/systemd/system/stsd.service" || fail "the unit's ExecStart is not the installed binary"
grep -q '@[A-Z]*@' "$root/lib/systemd/system/stsd.service" && fail "the unit kept an @placeholder@"
[ "$failed" -eq 0 ] && ok "make install: binaries, man pages, unit, configuration, datasets, examples, completion"

# 1b. The unit passes the conffile and nothing else: a -Dkey=value (or any option) on its
# command line would override what an admin writes in /etc/stsd/sts.properties. So the
# installed conffile itself sets what the unit needs: the dataset directory is the unit's
# StateDirectory, daemon is true; the sample stays as shipped.
unit="$root/lib/systemd/system/stsd.service"
exec_line=$(sed -n '/^ExecStart=/{:a;/\\$/{N;ba};p}' "$unit")
conf="$root/etc/stsd/sts.properties"
# The value a properties file leaves for key $1: its last uncommented setting.
value() { sed -n "s/^$1[ =:]*//p" "$conf" | tail -n 1; }
if [ "$exec_line" = "ExecStart=$prefix/bin/stsd --config /etc/stsd/sts.properties" ] &&
    ! grep -v '^#' "$unit" | grep -q -- '-D'; then
    ok "the unit passes only --config /etc/stsd/sts.properties (no -D)"
else
    fail "the unit's command line: '$exec_line'; lines with -D: $(grep -v '^#' "$unit" | grep -c -- '-D')"
fi
dir=$(value 'jmeterPlugin\.sts\.datasetDirectory'); daemon=$(value 'jmeterPlugin\.sts\.daemon')
[ "$dir" = /var/lib/stsd ] && [ "$daemon" = true ] &&
    grep -q '^StateDirectory=stsd$' "$unit" && grep -q '^WorkingDirectory=/var/lib/stsd$' "$unit" &&
    cmp -s conf/sts.properties "$root$prefix/share/stsd/sts.properties.sample" &&
    ok "/etc/stsd/sts.properties: datasetDirectory=/var/lib/stsd (StateDirectory), daemon=true; the sample as shipped" ||
    fail "/etc/stsd/sts.properties: datasetDirectory='$dir' (want /var/lib/stsd), daemon='$daemon' (want true), or the unit's StateDirectory or the sample changed"

# 2. The man pages: no groff warning; stsd(8) has every key, option and command.
man="$root$prefix/share/man/man8/stsd.8"
warn=$(groff -man -ww -z "$man" 2>&1; groff -man -ww -Tutf8 -z "$man" 2>&1)
[ -z "$warn" ] && ok "stsd(8) renders with groff -man -ww without a warning" ||
    fail "groff -man -ww warns: $warn"
man1="$root$prefix/share/man/man1/stsctl.1"
warn=$(groff -man -ww -z "$man1" 2>&1; groff -man -ww -Tutf8 -z "$man1" 2>&1)
[ -z "$warn" ] && ok "stsctl(1) renders with groff -man -ww without a warning" ||
    fail "stsctl(1): groff -man -ww warns: $warn"
text=$(groff -man -rLL=300n -Tascii -P-c -P-b -P-u "$man" 2>/dev/null)
n=0
for key in $("$root$prefix/bin/stsd" --help | sed -n 's/^  \([a-zA-Z.]*\)=.*/\1/p'); do
    n=$((n + 1))
    echo "$text" | grep -q "^       $key (" || fail "stsd(8) does not list the key $key"
done
for opt in $("$root$prefix/bin/stsd" --help | sed -n 's/^  \(-[a-z], \)\{0,1\}\(--[a-z-]*\).*/\2/p'); do
    n=$((n + 1))
    echo "$text" | grep -q -- "$opt" || fail "stsd(8) does not list the option $opt"
done
# The COMMANDS section is generated from the command table: every row must be there.
for cmd in $(sed -n 's/^ *{"\([A-Z][A-Z]*\)", *cmd_[a-z_]*, .*/\1/p' src/cmd/command.c); do
    n=$((n + 1))
    grep -q "^\.B $cmd\( \|$\)" "$man" ||
        fail "command $cmd is in src/cmd/command.c but not in the installed stsd(8) (COMMANDS)"
done
[ "$n" -gt 30 ] || fail "found only $n keys, options and commands to look for"
[ "$failed" -eq 0 ] && ok "stsd(8) lists all $n keys, options and commands"

# 3. The unit, as installed.
if command -v systemd-analyze >/dev/null 2>&1; then
    unit="$root/lib/systemd/system/stsd.service"
    # verify resolves the unit's dependencies inside --root: give it the stock targets.
    mkdir -p "$root/usr/lib/systemd/system"
    for t in /lib/systemd/system/*.target /usr/lib/systemd/system/*.target; do
        [ -f "$t" ] && cp -n "$t" "$root/usr/lib/systemd/system/"
    done
    # verify also opens Documentation=man:stsd(8), with man, if there is one.
    manopt=--man=yes; command -v man >/dev/null 2>&1 || manopt=--man=no
    if out=$(MANPATH="$root$prefix/share/man" systemd-analyze verify $manopt --root="$root" "$unit" 2>&1) &&
        [ -z "$out" ]; then
        ok "systemd-analyze verify $manopt stsd.service"
    else
        fail "systemd-analyze verify stsd.service: $out"
    fi
    level=$(systemd-analyze security --offline=yes --root="$root" "$unit" 2>&1 |
        sed -n 's/.*Overall exposure level for stsd.service: \([0-9.]*\).*/\1/p')
    if [ -n "$level" ] && awk "BEGIN { exit !($level <= 2.0) }"; then
        ok "systemd-analyze security --offline=yes: exposure $level (<= 2.0)"
    else
        fail "systemd-analyze security: exposure '${level:-unknown}', more than 2.0"
    fi
else
    skip "systemd unit checks: systemd-analyze is not installed (Debian: systemd; scripts/deps.sh test)"
fi

# 4. uninstall leaves only the configuration an admin may have edited.
make --no-print-directory -s uninstall DESTDIR="$root" PREFIX="$prefix" >>"$tmp/install.log" 2>&1 ||
    fail "make uninstall"
rm -rf "$root/usr/lib/systemd/system"
left=$(cd "$root" && find . -type f | sort | tr '\n' ' ')
[ "$left" = "./etc/stsd/sts.properties " ] && ok "make uninstall: only /etc/stsd/sts.properties is left" ||
    fail "make uninstall left: $left"

tally install
