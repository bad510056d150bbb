#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# check-layers.sh - by the symbols src/'s objects use: rooms call downward, no circle of files or rooms.
#
# An edge a -> b means the object of src/<room>/a.c uses (nm: U) a global symbol that
# b's object defines: a call, or a use of b's data, which ties the two just as much.
# Objects, not #includes, because a shared private header (command_int.h, store_int.h)
# hid the circles that actually link. Exit status 1 on a violation, with the files and
# the symbols that tie them on stderr.
# CHECK_LAYERS_SHOW=1 (or --show) also prints every edge with its symbols.
set -eu
cd "$(dirname "$0")/.."

# The rooms (folders under src/), top to bottom. A file may use files of its own room or
# of rooms after it here. Reorganising the tree should need only this line changed.
ORDER="ctl app http cmd hold cluster guard journal meet store dataset list audit config base"
# Rooms that are programs of their own (room:rooms it may call, comma separated): stsctl
# (src/ctl/) is a client, which links base's helpers and no room of the server.
ALONE="ctl:base"

OBJ=build/obj
show=${CHECK_LAYERS_SHOW:-0}
[ "${1:-}" = --show ] && show=1

# Every folder holding a .c file is a room, and must be placed in ORDER: a room left out
# would otherwise be allowed to call anything.
for c in src/*/*.c; do
    r=${c#src/}; r=${r%%/*}
    case " $ORDER " in
        *" $r "*) ;;
        *) echo "check-layers: src/$r/ is not in ORDER (\"$ORDER\") at the top of $0;" \
                "add it where it belongs, top to bottom" >&2
           exit 1 ;;
    esac
done

# The objects to read: one per source that exists now (a stale .o of a moved file is
# ignored). The dashboard's generated object (gen/ui_assets.o) is counted as a file of
# the room whose folder holds ui/: its bytes belong to that room's UI code.
objs=""
for c in src/*/*.c; do
    o=$OBJ/${c#src/}; objs="$objs ${o%.c}.o"
done
ui_room=""
for d in src/*/ui; do
    [ -d "$d" ] && { ui_room=${d#src/}; ui_room=${ui_room%/ui}; }
done
[ -n "$ui_room" ] && objs="$objs $OBJ/gen/ui_assets.o"

# make test runs us before anything is built. Our own make, not the caller's: a parent's
# jobserver is not handed to a plain script, and make would warn about it.
# shellcheck disable=SC2086
MAKEFLAGS='' MFLAGS='' make --no-print-directory -s -j"$(nproc 2>/dev/null || echo 2)" $objs ||
    { echo "check-layers: could not build the objects it reads" >&2; exit 1; }

# "build/obj/<room>/<file>.o: symbol type value size", global symbols only (-g).
# shellcheck disable=SC2086
syms=$(nm -A -P -g $objs)

printf '%s\n' "$syms" | awk -v order="$ORDER" -v alone="$ALONE" -v ui_room="$ui_room" -v show="$show" '
function room(f) { return f ~ /^gen\// ? ui_room : substr(f, 1, index(f, "/") - 1) }

# A few of the symbols that make an edge, so that a message says what to move.
function few(e,   n, s, i, text) {
    n = split(syms[e], s, " ")
    text = s[1]
    for (i = 2; i <= n && i <= 4; i++) text = text ", " s[i]
    if (n > 4) text = text " (+" (n - 4) " more)"
    return text
}

# Tarjan: each strongly connected component of more than one node is a circle.
# Files (room/name) and rooms (no slash) are nodes of one graph whose two halves never
# meet, so one pass finds the circles of both.
function strong(v,   k, w) {
    num[v] = low[v] = ++counter
    stack[++sp] = v; onstack[v] = 1
    for (k = 1; k <= nout[v]; k++) {
        w = out[v, k]
        if (!(w in num)) { strong(w); if (low[w] < low[v]) low[v] = low[w] }
        else if (onstack[w] && num[w] < low[v]) low[v] = num[w]
    }
    if (low[v] == num[v]) {
        ncomp++
        do { w = stack[sp--]; onstack[w] = 0; comp[w] = ncomp; csize[ncomp]++ } while (w != v)
    }
}

function edge(a, b) {
    if (!((a, b) in has)) { has[a, b] = 1; out[a, ++nout[a]] = b }
}

BEGIN {
    nrooms = split(order, ro, " "); for (i = 1; i <= nrooms; i++) rank[ro[i]] = i
    na = split(alone, al, " ")
    for (i = 1; i <= na; i++) {
        split(al[i], pair, ":"); nm = split(pair[2], may, ",")
        only[pair[1]] = 1
        for (j = 1; j <= nm; j++) mayc[pair[1], may[j]] = 1
    }
}

{
    f = $1; sub(/:$/, "", f); sub(/^.*\/obj\//, "", f); sub(/\.o$/, "", f)
    if (!(f in seen)) { seen[f] = 1; files[++nfiles] = f }
    if ($3 == "U") { nuse++; user[nuse] = f; used[nuse] = $2 }
    else if ($3 ~ /^[TDBRCGSVW]$/) def[$2] = f    # defined here; libc and the rest stay U
}

END {
    # File edges, in the order of the objects and then of the symbols (nm sorts them).
    for (i = 1; i <= nuse; i++) {
        if (!(used[i] in def)) continue
        a = user[i]; b = def[used[i]]
        if (a == b) continue
        e = a SUBSEP b
        if (!(e in syms)) { nedges++; from[nedges] = a; to[nedges] = b; syms[e] = used[i] }
        else syms[e] = syms[e] " " used[i]
        edge(a, b)
    }
    # Room edges, each remembering the first file edge that makes it.
    for (i = 1; i <= nedges; i++) {
        ra = room(from[i]); rb = room(to[i])
        if (ra == rb) continue
        if (!((ra, rb) in why)) why[ra, rb] = i
        edge(ra, rb)
    }

    if (show) {
        for (i = 1; i <= nedges; i++)
            print from[i] " -> " to[i] ": " syms[from[i], to[i]]
    }

    for (i = 1; i <= nfiles; i++) if (!(files[i] in num)) strong(files[i])
    for (i = 1; i <= nrooms; i++) if (!(ro[i] in num)) strong(ro[i])

    bad = 0
    # (1) Circles between files, in the order of their first file: the files, then
    # every edge inside the circle.
    for (f = 1; f <= nfiles; f++) {
        c = comp[files[f]]
        if (csize[c] < 2 || (c in told)) continue
        told[c] = 1; bad = 1
        line = ""
        for (i = 1; i <= nfiles; i++) if (comp[files[i]] == c) line = line " " files[i]
        print "check-layers: a circle between files:" line > "/dev/stderr"
        for (i = 1; i <= nedges; i++)
            if (comp[from[i]] == c && comp[to[i]] == c)
                print "    " from[i] " -> " to[i] ": " few(from[i] SUBSEP to[i]) > "/dev/stderr"
    }
    # (2) Circles between rooms, each room edge shown by one file edge that makes it.
    for (c = 1; c <= ncomp; c++) {
        if (csize[c] < 2) continue
        line = ""; isroom = 0
        for (i = 1; i <= nrooms; i++)
            if (comp[ro[i]] == c) { line = line " " ro[i]; isroom = 1 }
        if (!isroom) continue
        bad = 1
        print "check-layers: a circle between rooms:" line > "/dev/stderr"
        for (i = 1; i <= nrooms; i++) for (j = 1; j <= nrooms; j++)
            if (((ro[i], ro[j]) in why) && comp[ro[i]] == c && comp[ro[j]] == c) {
                k = why[ro[i], ro[j]]
                print "    " ro[i] " -> " ro[j] ": " from[k] " -> " to[k] ": " \
                    few(from[k] SUBSEP to[k]) > "/dev/stderr"
            }
    }
    # (3) Calls up the order: a lower room must take a callback instead.
    for (i = 1; i <= nedges; i++) {
        ra = room(from[i]); rb = room(to[i])
        if (rank[ra] > rank[rb]) {
            bad = 1
            print "check-layers: " from[i] " (" ra ") calls up into " to[i] " (" rb "): " \
                few(from[i] SUBSEP to[i]) > "/dev/stderr"
        }
    }
    # (4) A program of its own calls only the rooms ALONE gives it.
    for (i = 1; i <= nedges; i++) {
        ra = room(from[i]); rb = room(to[i])
        if (ra != rb && (ra in only) && !((ra, rb) in mayc)) {
            bad = 1
            print "check-layers: " from[i] " (" ra ", a program of its own) calls " to[i] \
                " (" rb "), which ALONE does not give it: " few(from[i] SUBSEP to[i]) > "/dev/stderr"
        }
    }
    if (bad) exit 1
    print "check-layers: " nfiles " files, " nedges " calls between files, " \
        "rooms call downward, no circle"
}'
