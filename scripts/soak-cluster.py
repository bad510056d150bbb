#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""soak-cluster.py - by hand: millions of changes on three nodes, each node's state
directory measured after every million (docs/cluster.md, "A soak"). Usage:
scripts/soak-cluster.py STSD [MILLIONS] [LINES]

A list of LINES lines (100,000 by default) is loaded, then ADD LAST and READ KEEP=FALSE go
in turn (wrk, 8 connections) MILLIONS times a million (10 by default), with the default
stsd.cluster.compactBytes (64 MiB) and snapshotEntries. After each million: every node's
state directory (journal and raft), its compactions so far and the list's length, which
must not move. The directories must stay flat once the first compactions are done."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "cluster"))
from cluster import Cluster  # noqa: E402

LUA = """
local n, done, limit = 0, 0, tonumber(os.getenv("SOAK_PER_THREAD"))
request = function()
  n = n + 1
  if n % 2 == 1 then
    return wrk.format("GET", "/sts/ADD?FILENAME=soak.csv&ADD_MODE=LAST&LINE=change-" .. n)
  end
  return wrk.format("GET", "/sts/READ?FILENAME=soak.csv&KEEP=FALSE")
end
response = function(status, headers, body)
  if status ~= 200 then error("answer " .. status) end
  done = done + 1
  if done >= limit then wrk.thread:stop() end
end
"""


def du(path):
    out = subprocess.run(["du", "-s", "--block-size=1", path], capture_output=True, text=True)
    return int(out.stdout.split()[0])


def main():
    stsd = os.path.abspath(sys.argv[1])
    millions = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    lines = int(sys.argv[3]) if len(sys.argv) > 3 else 100000
    work = tempfile.mkdtemp(prefix="stsd-soak-cluster.")
    script = os.path.join(work, "soak.lua")
    with open(script, "w") as f:
        f.write(LUA)
    cl = Cluster(stsd, os.path.join(work, "cl")).start()
    try:
        L = cl.leader(20)
        with open(os.path.join(L.data, "soak.csv"), "w") as f:
            for i in range(lines):
                f.write("user%08d,secret%08d\n" % (i, i))
        st, h, b = L.req("INITFILE", {"FILENAME": "soak.csv"}, timeout=120)
        assert st == 200 and b.find(b"<title>OK") >= 0, b[:200]
        t0 = time.time()
        for m in range(1, millions + 1):
            env = dict(os.environ, SOAK_PER_THREAD=str(500000))
            r = subprocess.run(["wrk", "-t2", "-c8", "-d3600s", "-s", script,
                                L.url + "/sts/STATUS"], capture_output=True, text=True, env=env)
            if r.returncode != 0 or "requests in" not in r.stdout:
                raise SystemExit("wrk: %s %s" % (r.stdout, r.stderr))
            st, h, b = L.req("LENGTH", {"FILENAME": "soak.csv"})
            sizes = []
            for n in cl.nodes:
                with open(n.log, errors="replace") as f:
                    compactions = f.read().count("compaction into generation")
                sizes.append("node %d %.1f MiB (raft %.1f, %d compactions)" % (
                    n.id, du(n.state) / 2**20, du(os.path.join(n.state, "raft")) / 2**20,
                    compactions))
            print("%2dM changes, %5.0f s, LENGTH %s: %s" % (
                m, time.time() - t0, b.split(b"<body>")[-1].split(b"<")[0].strip().decode()
                if st == 200 else st, "; ".join(sizes)), flush=True)
    finally:
        cl.stop()
    if os.environ.get("KEEP"):
        print("work directory kept:", work)
    else:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
