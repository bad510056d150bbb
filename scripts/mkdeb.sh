#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# mkdeb.sh - builds the Debian package (debian/) with dpkg-buildpackage -b -us -uc in a
# copy of the tree, so that its outputs, which dpkg-buildpackage writes to the parent
# directory, land in OUT and not beside the work tree.
# Usage: scripts/mkdeb.sh OUT (make deb: build/deb). Prints the .deb's path last.
set -eu
out=${1:-build/deb}
rm -rf "$out"
mkdir -p "$out/src"
out=$(cd "$out" && pwd)
# The tracked files and the new ones not ignored: what a commit of this tree would hold.
git ls-files -z --cached --others --exclude-standard |
    xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
    tar --null -T - -cf - | tar -C "$out/src" -xf -
cd "$out/src"
DEB_BUILD_OPTIONS="parallel=${DEB_JOBS:-2} ${DEB_BUILD_OPTIONS:-}" \
    dpkg-buildpackage -b -us -uc >"$out/build.log" 2>&1 ||
    { tail -n 40 "$out/build.log" >&2; echo "mkdeb: dpkg-buildpackage failed; log: $out/build.log" >&2; exit 1; }
ls "$out"/stsd_*.deb
