#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# spdx.sh - every source file under src/, include/, scripts/ and tests/ names its license
# (Apache-2.0) in an SPDX line among its first three lines. The fuzzers' seed corpora are
# input bytes, not source, and carry none.
# Usage: scripts/spdx.sh          check (exit 1 naming each file without the line)
#        scripts/spdx.sh --add    add the line, in each file type's comment syntax
set -eu
cd "$(dirname "$0")/.."
tag="SPDX-License-Identifier: Apache-2.0"
files() { git ls-files src include scripts tests | grep -v '^tests/fuzz/seeds-'; }
line_for() {
    case "$1" in
        *.c|*.h|*.css|*.js) echo "/* $tag */" ;;
        *.html|*.svg|*.md) echo "<!-- $tag -->" ;;
        *) echo "# $tag" ;;
    esac
}
if [ "${1:-}" = "--add" ]; then
    files | while read -r f; do
        head -n 3 "$f" | grep -q "$tag" && continue
        l=$(line_for "$f")
        first=$(head -n 1 "$f")
        case "$first" in
            '#!'*|'<!doctype'*|'<!DOCTYPE'*)
                { printf '%s\n%s\n' "$first" "$l"; tail -n +2 "$f"; } >"$f.spdx" ;;
            *)  { printf '%s\n' "$l"; cat "$f"; } >"$f.spdx" ;;
        esac
        chmod --reference="$f" "$f.spdx" && mv "$f.spdx" "$f"
        echo "spdx: added to $f"
    done
    exit 0
fi
missing=$(files | while read -r f; do head -n 3 "$f" | grep -q "$tag" || echo "$f"; done)
if [ -n "$missing" ]; then
    echo "spdx: these files have no '$tag' line among their first three:" >&2
    echo "$missing" | sed 's/^/  /' >&2
    echo "spdx: scripts/spdx.sh --add adds it" >&2
    exit 1
fi
echo "spdx: $(files | wc -l) files, each with its SPDX line"
