#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# deps.sh - makes sure the Debian packages stsd builds and tests with are installed.
# Usage: scripts/deps.sh build|test|bench|deb|image
# As root it installs what is missing; otherwise it prints the apt-get line and fails.
set -eu

# libcurl4-gnutls-dev: stsctl's HTTP client and a follower's forwarding (the GnuTLS build,
# as stsd links GnuTLS). libraft-dev and libuv1-dev: the replicas (src/cluster/).
need="gcc make pkg-config libmicrohttpd-dev libpcre2-dev libgnutls28-dev libcurl4-gnutls-dev"
need="$need libraft-dev libuv1-dev"
case "${1:-build}" in
    build) ;;
    # Every test that would otherwise skip (tests/tally.sh; CI=true allows none): promtool
    # (prometheus), systemd-analyze (systemd: tests/pkg), node and yaml (nodejs,
    # python3-yaml: the k6 and Artillery syntax checks in tests/examples), Locust, the
    # dashboard's browser (tests/ui); redis-server is bench.sh's, kept here so that one
    # `make deps-test` readies the machine for both.
    test)  need="$need libcmocka-dev curl clang libclang-rt-14-dev prometheus groff-base python3-locust openssl"
           need="$need systemd nodejs python3-yaml redis-server"
           # npm installs Artillery into build/npm (tests/examples); NodeSource's nodejs has it.
           command -v npm >/dev/null 2>&1 || need="$need npm"
           need="$need chromium chromium-driver python3-selenium"      # tests/ui
           # tests/ctl (stsctl top in a tmux pane) and tests/pkg/test-deb.sh (make deb).
           need="$need tmux debhelper lintian"
           # tests/pkg/test-image.sh (make image: a root file system, then podman), and
           # test-image-cluster.sh (examples/compose.yml: podman-compose; the nodes find
           # each other by service name through netavark's DNS, aardvark-dns).
           need="$need podman runc mmdebstrap uidmap podman-compose netavark aardvark-dns"
           # tests/faults (make test-faults): namespaces, partitions, netem, clock skew.
           need="$need iproute2 iptables faketime" ;;
    # make deb: debhelper (with dpkg-dev) builds the package, lintian checks it.
    deb)   need="$need debhelper lintian" ;;
    # make image: the .deb, mmdebstrap's root file system, podman (runc: crun refuses on
    # hybrid cgroups), uidmap for either without root; podman-compose and aardvark-dns
    # run examples/compose.yml's three replicas.
    image) need="$need debhelper lintian podman runc mmdebstrap uidmap podman-compose netavark aardvark-dns" ;;
    # redis-server (with redis-tools' redis-benchmark): the Redis rows of the durability bench.
    bench) need="$need wrk curl openssl time redis-server" ;;
    *) echo "usage: $0 build|test|bench|deb|image" >&2; exit 2 ;;
esac

missing=""
for p in $need; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
    echo "deps: installing$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q $missing >/dev/null 2>&1 ||
        { apt-get update -q >/dev/null && apt-get install -y -q $missing >/dev/null; }
    exit 0
fi
echo "deps: missing packages; run as root:" >&2
echo "    apt-get install -y$missing" >&2
exit 1
