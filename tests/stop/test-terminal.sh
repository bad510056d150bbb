#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# test-terminal.sh - stsd and its terminal (issue 32), in an interactive shell inside tmux:
# `stsd &` is never stopped by the terminal (SIGTTIN) and answers, and a line typed for
# the shell stays the shell's; in the foreground ENTER stops it (exit 0); a background job
# brought back with `fg` is stopped by ENTER again. Part of make test-stop.
# Usage: tests/stop/test-terminal.sh (from the top of the tree, after `make`).
set -u
STSD=${STSD:-build/stsd}
. "$(dirname "$0")/../tally.sh"
STSD=$(cd "$(dirname "$STSD")" && pwd)/$(basename "$STSD")
tmp=$(mktemp -d /tmp/stsd-term-XXXXXX)
sock="$tmp/tmux"
trap '[ -s "$tmp/pid" ] && kill -9 "$(cat "$tmp/pid")" 2>/dev/null;
      tmux -S "$sock" kill-server 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT

if ! command -v tmux >/dev/null 2>&1; then
    skip "stsd and its terminal: no tmux (scripts/deps.sh test installs it)"
    tally terminal
    exit
fi

mkdir -p "$tmp/data"
printf 'a\nb\n' > "$tmp/data/t.csv"
# The command typed at the prompt: the default daemon=false, stdin the pane's terminal.
cmd="'$STSD' --port 0 --bind 127.0.0.1 --port-file '$tmp/port' --dataset-dir '$tmp/data' -DjmeterPlugin.sts.initFileAtStartup=t.csv >>'$tmp/stsd.log' 2>&1"

# An interactive shell with job control, as a user's terminal has.
tmux -S "$sock" new-session -d -x 160 -y 40 "env -i PATH=$PATH HOME=$tmp PS1='$ ' sh -i"
type_line() { tmux -S "$sock" send-keys -l "$1"; tmux -S "$sock" send-keys Enter; }
screen() { tmux -S "$sock" capture-pane -p 2>/dev/null; }
# wait_for COMMAND...: up to 5 s for it to succeed.
wait_for() {
    i=0; while ! "$@" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
    "$@"
}
port_up() { [ -s "$tmp/port" ]; }
answers() { curl -s -m 2 "http://127.0.0.1:$(cat "$tmp/port")/sts/LENGTH?FILENAME=t.csv" | grep -q '<body>2</body>'; }
gone() { ! kill -0 "$(cat "$tmp/pid")" 2>/dev/null; }
state() { ps -o stat= -p "$(cat "$tmp/pid")" 2>/dev/null | cut -c1; }
on_screen() { screen | grep -q "$1"; }

# 1. stsd & : answers, never "Stopped", the shell keeps its input.
sleep 0.3
type_line "$cmd & echo \$! > '$tmp/pid'"
if wait_for port_up && wait_for answers; then ok "stsd &: curl answers"
else fail "stsd &: no answer (state $(state); log: $(cat "$tmp/stsd.log"))"; fi
sleep 1
type_line "echo typed-for-the-shell"
type_line "jobs"
if wait_for on_screen '^typed-for-the-shell$'; then ok "stsd &: a line typed goes to the shell"
else fail "stsd &: the shell did not get its line: $(screen)"; fi
sleep 0.5
st=$(state)
if [ "$st" != T ] && ! screen | grep -qi 'stopped' && answers; then
    ok "stsd &: still running after typing (state $st), not Stopped"
else fail "stsd &: state $st: $(screen)"; fi
grep -q 'ENTER pressed' "$tmp/stsd.log" && fail "stsd &: took the shell's ENTER: $(cat "$tmp/stsd.log")" ||
    ok "stsd &: the shell's ENTER did not stop it"
grep -q 'running in the background of the terminal' "$tmp/stsd.log" &&
    ok "stsd &: says ENTER is not watched in the background" || fail "stsd &: log: $(cat "$tmp/stsd.log")"

# 2. fg brings it to the foreground, where ENTER stops it again.
type_line "fg"
sleep 1.2
type_line ""
if wait_for gone && grep -q 'ENTER pressed on the terminal' "$tmp/stsd.log"; then
    ok "after fg: ENTER stops it"
else fail "after fg: ENTER did not stop it (state $(state)): $(screen)"; fi
rm -f "$tmp/port" "$tmp/pid"
: > "$tmp/stsd.log"

# 3. In the foreground from the start: ENTER stops it, exit status 0.
type_line "$cmd; echo exit=\$?"
if wait_for port_up && wait_for answers; then ok "foreground: curl answers"
else fail "foreground: no answer: $(cat "$tmp/stsd.log")"; fi
grep -q 'press ENTER or Ctrl-C to stop' "$tmp/stsd.log" && ok "foreground: says ENTER stops it" ||
    fail "foreground: log: $(cat "$tmp/stsd.log")"
type_line ""
if wait_for on_screen '^exit=0$' && grep -q 'ENTER pressed on the terminal' "$tmp/stsd.log"; then
    ok "foreground: ENTER stops it, exit 0"
else fail "foreground: ENTER did not stop it: $(screen)"; fi

tally terminal
