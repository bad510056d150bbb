#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""snapshot_stall.py - a minimal reproduction of a slowness the fault checker found (the
heal waiting ~30 s after a wipe): a node that restores its state from a raft snapshot
gets the log after it only ~30 s later (raft's install-snapshot timeout), so for that long
the cluster runs on two nodes.

Three nodes on loopback, stsd.cluster.snapshotEntries=200, 500 ADDs, a follower killed and
its state directory deleted, restarted empty; ADDs go on. Exits 1 if the follower has not
caught up within 10 s.

Usage: snapshot_stall.py STSD      (as any user; up to 45 s)"""
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "cluster"))
from cluster import Cluster  # noqa: E402


def main():
    cl = Cluster(sys.argv[1], tempfile.mkdtemp(prefix="stsd-snapshot-stall-"), election_ms=1000,
                 extra=["-Dstsd.cluster.snapshotEntries=200"]).start()
    try:
        L = cl.leader(20)
        for i in range(500):
            L.req("ADD", {"FILENAME": "q.csv", "LINE": "l%d" % i})
        f = [n for n in cl.nodes if n is not L][0]
        f.kill()
        shutil.rmtree(os.path.join(f.dir, "state"))
        f.start()
        t0 = time.time()
        while time.time() - t0 < 45:
            L.req("ADD", {"FILENAME": "q.csv", "LINE": "m%f" % time.time()})
            try:
                v = json.loads(f.req("CLUSTER", {"FORMAT": "JSON"}, timeout=2)[2])
                lv = json.loads(L.req("CLUSTER", {"FORMAT": "JSON"}, timeout=2)[2])
            except ValueError:
                time.sleep(0.2)
                continue
            if time.time() - t0 > 1 and v["applied_index"] >= lv["commit_index"] - 2:
                break
            time.sleep(0.2)
        took = time.time() - t0
        print("the wiped follower caught up %.1f s after its restart (applied %s, leader at %s)"
              % (took, v["applied_index"], lv["commit_index"]))
        return 0 if took < 10 else 1
    finally:
        cl.stop()


if __name__ == "__main__":
    sys.exit(main())
