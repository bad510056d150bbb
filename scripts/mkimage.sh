#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# mkimage.sh - builds the OCI image localhost/stsd:VERSION (and :latest) from Debian packages only.
# mmdebstrap makes a Debian 12 root filesystem holding the .deb of `make deb` and its
# run-time libraries, podman import turns it into an image with stsd as its entrypoint,
# and conf/Containerfile adds the HEALTHCHECK (podman import cannot). As root.
# Usage: scripts/mkimage.sh [DEB] (from the top of the tree; DEB: build/deb/stsd_*.deb, made
# by scripts/mkdeb.sh first when missing or older than the tree).
# Cached in build/image/: the packages mmdebstrap downloaded (apt-cache/), the root
# filesystem (rootfs.tar) and its key (the .deb's, this script's and the Containerfile's
# checksums): an unchanged key rebuilds nothing, a changed one rebuilds without
# downloading the packages again. IMAGE_FRESH=1 ignores the cache.
set -eu

# mmdebstrap runs this script again as its customize hook, on the root filesystem in $2.
if [ "${1:-}" = --hook ]; then
    root=$2
    # The user stsd runs as: a fixed uid and gid (a volume's owner outside means the same
    # user in every build), no login, home the volume.
    echo 'stsd:x:10001:10001:stsd:/var/lib/stsd:/usr/sbin/nologin' >> "$root/etc/passwd"
    echo 'stsd:x:10001:' >> "$root/etc/group"
    [ -f "$root/etc/shadow" ] && echo 'stsd:!:1::::::' >> "$root/etc/shadow"
    mkdir -p "$root/var/lib/stsd"
    chown 10001:10001 "$root/var/lib/stsd"
    chmod 0750 "$root/var/lib/stsd"
    # What only the package manager or systemd would read: no dpkg, apt or systemd runs
    # in the container.
    rm -rf "$root/etc/systemd/system/multi-user.target.wants" "$root/var/lib/systemd" \
        "$root/var/cache/debconf/"*-old "$root/var/lib/dpkg/"*-old "$root/var/log/"*.log \
        "$root/var/log/apt" "$root/var/cache/ldconfig/aux-cache"
    # The files a container engine mounts over: present, so that it need not add them to
    # a container's layer (podman diff stays empty), and none of this machine's names.
    printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' > "$root/etc/hosts"
    : > "$root/etc/hostname"
    : > "$root/etc/resolv.conf"
    ln -sfn ../proc/self/mounts "$root/etc/mtab"
    exit 0
fi

top=$(pwd)
out=$top/build/image
deb=${1:-}
if [ -z "$deb" ]; then
    # make deb's output, made again when missing or older than a file it is built from.
    for deb in build/deb/stsd_*_*.deb; do [ -f "$deb" ] && break; done
    if [ ! -f "$deb" ] || [ -n "$(find Makefile debian src include conf docs datasets examples scripts \
            -type f -newer "$deb" ! -name mkimage.sh ! -name Containerfile 2>/dev/null | head -n 1)" ]; then
        echo "mkimage: make deb first (build/deb/)" >&2
        scripts/deps.sh deb
        deb=$(scripts/mkdeb.sh build/deb | tail -n 1)
    fi
fi
[ -f "$deb" ] || { echo "mkimage: no .deb: $deb" >&2; exit 1; }
deb=$(cd "$(dirname "$deb")" && pwd)/$(basename "$deb")
version=$(sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' debian/changelog)
[ -n "$version" ] || { echo "mkimage: no version in debian/changelog" >&2; exit 1; }
self=$top/scripts/mkimage.sh

# This machine's podman: runc (crun refuses on a hybrid cgroup hierarchy), cgroupfs.
pm() { podman --runtime runc --cgroup-manager cgroupfs "$@"; }

mkdir -p "$out/apt-cache"
key=$(cat "$deb" "$self" conf/Containerfile | sha256sum | cut -c1-16)
if [ "${IMAGE_FRESH:-0}" != 1 ] &&
    [ "$(pm image inspect --format '{{index .Labels "stsd.rootfs"}}' "localhost/stsd:$version" 2>/dev/null)" = "$key" ]; then
    echo "mkimage: localhost/stsd:$version is up to date (rootfs $key)" >&2
    pm tag "localhost/stsd:$version" localhost/stsd:latest
    exit 0
fi

# The Debian archive this machine's apt uses, bookworm's three suites (main only), from
# the deb822 files and the one-line lists; deb.debian.org if none names them.
mirrors=$(
    for f in /etc/apt/sources.list.d/*.sources; do [ -f "$f" ] && { cat "$f"; echo; }; done |
    awk 'function flush() { if (types ~ /(^| )deb( |$)/ && enabled != "no")
                                for (i = 1; i <= ns; i++) for (j = 1; j <= nu; j++)
                                    print uris[j] " " suites[i]
                            types = ""; enabled = ""; nu = 0; ns = 0 }
         /^[ \t]*$/ { flush(); next }
         /^Types:/ { types = $0 } /^Enabled:/ { enabled = $2 }
         /^URIs:/ { for (i = 2; i <= NF; i++) uris[++nu] = $i }
         /^Suites:/ { for (i = 2; i <= NF; i++) suites[++ns] = $i }
         END { flush() }'
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
        awk '$1 == "deb" { u = 2; if ($2 ~ /^\[/) { while ($u !~ /\]$/) u++; u++ } print $u " " $(u + 1) }'
)
mirrors=$(echo "$mirrors" | awk '$2 ~ /^bookworm(-updates|-security)?$/ { print "deb " $1 " " $2 " main" }' | sort -u)
[ -n "$mirrors" ] || mirrors="deb http://deb.debian.org/debian bookworm main"

if [ "${IMAGE_FRESH:-0}" = 1 ] || [ ! -f "$out/rootfs.tar" ] || [ "$(cat "$out/rootfs.key" 2>/dev/null)" != "$key" ]; then
    rm -f "$out/rootfs.tar" "$out/rootfs.key"
    echo "mkimage: mmdebstrap bookworm from: $(echo "$mirrors" | awk '{ printf " %s/%s", $2, $3 }')" >&2
    # shellcheck disable=SC2016 # $1 is the hooks', the root file system.
    # essential: the Essential:yes packages (a shell, coreutils, dpkg), no apt; the .deb
    # brings its Depends. dpkg leaves out documentation (copyright files kept), manual
    # pages, locales and completions; the downloaded packages go to apt-cache/ for the
    # next build, and out of the root filesystem.
    echo "$mirrors" > "$out/mirrors.list"
    mmdebstrap --variant=essential --mode=root --quiet \
        --include="$deb" --hook-dir=/usr/share/mmdebstrap/hooks/file-mirror-automount \
        --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
        --dpkgopt='path-exclude=/usr/share/doc/*' \
        --dpkgopt='path-include=/usr/share/doc/*/copyright' \
        --dpkgopt='path-exclude=/usr/share/man/*' \
        --dpkgopt='path-exclude=/usr/share/info/*' \
        --dpkgopt='path-exclude=/usr/share/locale/*' \
        --dpkgopt='path-exclude=/usr/share/lintian/*' \
        --dpkgopt='path-exclude=/usr/share/bash-completion/*' \
        --skip=download/empty --skip=essential/unlink \
        --setup-hook='mkdir -p "$1/var/cache/apt/archives"' \
        --setup-hook="sync-in '$out/apt-cache' /var/cache/apt/archives/" \
        --customize-hook="sync-out /var/cache/apt/archives '$out/apt-cache'" \
        --customize-hook='rm -f "$1"/var/cache/apt/archives/*.deb' \
        --customize-hook="'$self' --hook \"\$1\"" \
        bookworm "$out/rootfs.tmp.tar" "$out/mirrors.list" >"$out/mmdebstrap.log" 2>&1 ||
        { tail -n 30 "$out/mmdebstrap.log" >&2; echo "mkimage: mmdebstrap failed; log: $out/mmdebstrap.log" >&2; exit 1; }
    mv "$out/rootfs.tmp.tar" "$out/rootfs.tar"
    echo "$key" > "$out/rootfs.key"
fi

# The image: stsd as user 10001 in the foreground, its data on the volume; -D arguments
# after the image name on `podman run` are appended to the ENTRYPOINT's. STSD_URL is for
# stsctl inside (the HEALTHCHECK, podman exec).
base=localhost/stsd-rootfs:$key
old=$(pm image inspect --format '{{.Id}}' "localhost/stsd:$version" 2>/dev/null || true)
pm import --quiet \
    --change 'USER 10001:10001' \
    --change 'WORKDIR /var/lib/stsd' \
    --change 'VOLUME /var/lib/stsd' \
    --change 'EXPOSE 9191/tcp' \
    --change 'ENV STSD_URL=http://127.0.0.1:9191' \
    --change 'STOPSIGNAL SIGTERM' \
    --change 'ENTRYPOINT ["/usr/bin/stsd", "--config", "/etc/stsd/sts.properties", "-DjmeterPlugin.sts.datasetDirectory=/var/lib/stsd", "-DjmeterPlugin.sts.daemon=true"]' \
    --change 'CMD []' \
    --message "stsd $version: mmdebstrap bookworm, $(basename "$deb")" \
    "$out/rootfs.tar" "$base" >/dev/null
# HEALTHCHECK is kept only in the docker format (OCI's image config has no such field).
pm build --quiet --pull=never --layers=false --format docker --file conf/Containerfile \
    --build-arg "BASE=$base" --build-arg "KEY=$key" \
    --tag "localhost/stsd:$version" --tag localhost/stsd:latest conf >/dev/null
# The imported image's record (its layer stays, under the new image) and the image these
# tags named before, unless something else still uses it.
pm rmi "$base" >/dev/null
[ -z "$old" ] || pm rmi "$old" >/dev/null 2>&1 || true
size=$(pm image inspect --format '{{.Size}}' "localhost/stsd:$version")
echo "mkimage: localhost/stsd:$version and :latest, $size bytes ($((size / 1000000)) MB) uncompressed" >&2
