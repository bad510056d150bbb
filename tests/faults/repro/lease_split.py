#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""lease_split.py - a reproduction of a bug the fault checker found (seed 964360, rule
`lost`): READ with LEASE journals a TAKE and then a LEASE record, and a group-commit
batch may end between them; a leader cut off right then gets the TAKE committed without
its LEASE, and the line is gone for good (neither in its list nor on loan).

The fault checker's three nodes in network namespaces (as root), 3,000 lines, 12 clients
doing nothing but READ KEEP=FALSE LEASE=1 (never ACKed: every line must come back), the
leader isolated by iptables for 3 s, ROUNDS times (40: it shows about once in 20 to 40
isolations). Then every line must be back.
Exits 1 when a line is missing.

Usage: lease_split.py STSD [ROUNDS]      (as root; about 6 s a round)"""
import json
import os
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import netns   # noqa: E402
import nodes   # noqa: E402

N = 3000


def main():
    stsd, rounds = os.path.abspath(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 40
    netns.cleanup_leftovers()
    net = netns.Net()
    cl = None
    try:
        net.up()
        net.enter_clients()
        cl = nodes.Cluster(stsd, tempfile.mkdtemp(prefix="stsd-lease-split-")).start()
        L = cl.node(cl.leader(20))
        for i in range(0, N, 500):
            for j in range(i, i + 500):
                L.req("ADD", {"FILENAME": "q.csv", "LINE": "line-%d" % j})
        stop = threading.Event()

        def reader(k):
            while not stop.is_set():
                cl.nodes[k % 3].req("READ", {"FILENAME": "q.csv", "KEEP": "FALSE",
                                             "LEASE": "1"}, timeout=5)
        ths = [threading.Thread(target=reader, args=(k,)) for k in range(12)]
        for t in ths:
            t.start()
        for r in range(rounds):
            time.sleep(1.5)
            L = cl.leader(20)
            net.isolate(L, cl.ids())
            time.sleep(3)
            net.heal_partitions()
        stop.set()
        for t in ths:
            t.join()
        time.sleep(4)                       # every lease past its deadline
        L = cl.node(cl.leader(20))
        n = json.loads(L.req("LENGTH", {"FILENAME": "q.csv", "FORMAT": "JSON"})[3])["length"]
        out = json.loads(L.req("LEASES", {"FILENAME": "q.csv", "FORMAT": "JSON"})[3])["length"]
        print("lines %d, on loan %d, of %d added; none was ever ACKed" % (n, out, N))
        return 0 if n + out == N else 1
    finally:
        if cl:
            cl.kill_all()
        net.down()


if __name__ == "__main__":
    sys.exit(main())
