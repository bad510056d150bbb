#!/bin/sh
# check-layers.sh - the rooms of src/ call downward only, and no modules include each other
# in a circle. A module is x.c with its x.h (public, include/<room>/, or private, beside it)
# and x_int.h (what x's own files share).
# Order, top to bottom: server, journal, store, base. Exit status 1 on a violation.
set -eu
cd "$(dirname "$0")/.."
rank() { case "$1" in server) echo 3 ;; journal) echo 2 ;; store) echo 1 ;; base) echo 0 ;; *) echo 9 ;; esac; }

# One edge "from to" per quoted #include, modules named room/name.
edges=$(for f in src/*/*.[ch] include/*/*.h; do
    room=$(basename "$(dirname "$f")")
    from="$room/$(basename "$f" | sed 's/\.[ch]$//; s/_int$//')"
    sed -n 's/^#include "\([^"]*\)\.h".*/\1/p' "$f" | while read -r inc; do
        case "$inc" in */*) to="${inc%_int}" ;; *) to="$room/${inc%_int}" ;; esac
        [ "$from" = "$to" ] || echo "$from $to"
    done
done)

bad=0
echo "$edges" | while read -r from to; do
    if [ "$(rank "${to%%/*}")" -gt "$(rank "${from%%/*}")" ]; then
        echo "check-layers: $from includes $to, a room above it" >&2
        exit 1
    fi
done || bad=1

if ! echo "$edges" | tsort >/dev/null 2>/tmp/check-layers.$$; then
    echo "check-layers: modules include each other in a circle:" >&2
    sed 's/^tsort: /  /' /tmp/check-layers.$$ >&2
    bad=1
fi
rm -f /tmp/check-layers.$$
[ "$bad" -eq 0 ] && echo "check-layers: $(echo "$edges" | wc -l) includes, rooms call downward, no circle"
exit "$bad"
