#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench-cluster-disk.py - a cluster that runs for days: failover and disk against the
test's history, three nodes on this machine (docs/benchmarks.md, "A cluster that runs for
days"). Usage: scripts/bench-cluster-disk.py STSD [LINES] [CHANGES] [KILLS]
           scripts/bench-cluster-disk.py --soak STSD [MILLIONS] [LINES]
           scripts/bench-cluster-disk.py --latency STSD
           scripts/bench-cluster-disk.py --demote STSD [LINES] [ROUNDS]
           scripts/bench-cluster-disk.py --growth STSD COMPACTBYTES [LINES] [CHANGES]

1. failover with a small list: 100 lines, kill -9 of the leader, the first OK ADD through
   a survivor (KILLS times, 3 by default);
2. the same with LINES (1M) loaded by INITFILE and CHANGES (200k) made after it, half ADD
   LAST, half READ KEEP=FALSE, by wrk over 8 connections;
3. CHANGES more, then every node's state directory (its journal and raft's directory,
   bytes on disk) against a lone stsd with the journal on (fsync=always) that did the
   same work: growth per change, and the ratio;
4. a new node added (stsd.cluster.join, CLUSTERADD) after CHANGES and after twice as many:
   the time until it is a voter, caught up (then removed again).

--soak, by hand (docs/cluster.md): LINES lines (100,000), then MILLIONS (10) times a million
changes the same way, with the default compactBytes and snapshotEntries; after each
million, every node's state directory (journal and raft) and its compactions so far. The
directories must stay flat once the first compactions are done.

--latency: one change at a time (2,000 ADDs in a row on one keep-alive connection, 3
rounds) against a lone stsd with fsync=always and against the leader of three nodes: what
a commit adds to a lone durable change (docs/benchmarks.md).

--demote: LINES (1M) loaded, then ROUNDS (3) times: the leader paused (SIGSTOP) until
another node leads, resumed; what its log says the demotion cost (the standby rebuilt
from the directory on raft's thread, the store emptied), the time from SIGCONT until it
answers as a follower, and whether it restarted (an older stsd executes itself again).

--growth: step 3 alone, with stsd.cluster.compactBytes=COMPACTBYTES (say 4M): LINES (1M),
CHANGES (200k) to start with, then CHANGES more, and each node's growth per change over
them, with the compactions that fell in that window."""
import http.client
import importlib.util
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "cluster"))
from cluster import Cluster, Node, free_port  # noqa: E402

# The failover loop is bench-cluster.py's (a file name with a dash: loaded by path).
_spec = importlib.util.spec_from_file_location(
    "bench_cluster", os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench-cluster.py"))
bench_cluster = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_cluster)

LUA = """
local n, done, limit = 0, 0, tonumber(os.getenv("BENCH_PER_THREAD"))
request = function()
  n = n + 1
  if n % 2 == 1 then
    return wrk.format("GET", "/sts/ADD?FILENAME=big.csv&ADD_MODE=LAST&LINE=change-" .. n)
  end
  return wrk.format("GET", "/sts/READ?FILENAME=big.csv&KEEP=FALSE")
end
response = function(status, headers, body)
  done = done + 1
  if done >= limit then wrk.thread:stop() end
end
"""


def du(path):
    """Bytes on disk under path (blocks allocated: raft's preallocated segments count)."""
    out = subprocess.run(["du", "-s", "--block-size=1", path], capture_output=True, text=True)
    return int(out.stdout.split()[0])


def answered(url):
    """ADD and READ answered so far by the server at url (its metrics)."""
    with urllib.request.urlopen(url + "/metrics", timeout=10) as r:
        text = r.read().decode()
    return sum(float(m.group(1)) for m in re.finditer(
        r'^stsd_requests_total\{command="(?:ADD|READ)",result="\w+"\} (\S+)$', text, re.M))


def changes(url, n, work):
    """About n changes (ADD LAST and READ KEEP=FALSE in turn) through url by wrk, stopped
    (SIGINT: wrk's own end) once the server has answered n; returns how many it did."""
    script = os.path.join(work, "changes.lua")
    with open(script, "w") as f:
        f.write(LUA)
    env = dict(os.environ, BENCH_PER_THREAD=str(n // 2 + 1000))
    base = answered(url)
    p = subprocess.Popen(["wrk", "-t2", "-c8", "-d3600s", "-s", script, url + "/sts/STATUS"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    while p.poll() is None and answered(url) - base < n:
        time.sleep(0.2)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(60)
    if "requests in" not in out:
        raise SystemExit("wrk: %s %s" % (out, err))
    return int(answered(url) - base)


def add_node(cl, nid):
    """A new, empty node added to cl; returns the seconds CLUSTERADD took (it answers once
    the node is a voter, caught up); the node is removed and stopped again."""
    L = cl.leader(30)
    N = Node(cl, nid)
    cl.nodes.append(N)
    N.start(extra=["-Dstsd.cluster.join=true"])
    time.sleep(0.5)
    t0 = time.time()
    st, h, b = L.req("CLUSTERADD", {"NODE": nid, "RAFT": "127.0.0.1:%d" % N.raft_port,
                                    "URL": N.url}, timeout=600)
    took = time.time() - t0
    assert st == 200 and b.find(b"<title>OK") >= 0, b[:300]
    st, h, b = L.req("CLUSTERREMOVE", {"NODE": nid}, timeout=60)
    assert st == 200, b[:300]
    N.stop(15)
    cl.nodes.remove(N)
    return took


def load(node, lines):
    with open(os.path.join(node.data, "big.csv"), "w") as f:
        for i in range(lines):
            f.write("user%08d,secret%08d,some-more-data-%d\n" % (i, i, i % 1000))
    st, h, b = node.req("INITFILE", {"FILENAME": "big.csv"}, timeout=600)
    assert st == 200 and b.find(b"<title>OK") >= 0, b[:200]


def lone(stsd, work):
    port = free_port()
    d = os.path.join(work, "lone")
    os.makedirs(os.path.join(d, "data"), exist_ok=True)
    log = open(os.path.join(work, "lone.log"), "ab")
    p = subprocess.Popen([stsd, "-DjmeterPlugin.sts.daemon=true",
                          "-DjmeterPlugin.sts.port=%d" % port, "-Dstsd.bind=127.0.0.1",
                          "-DjmeterPlugin.sts.datasetDirectory=%s/data" % d,
                          "-Dstsd.journal=on", "-Dstsd.journal.fsync=always",
                          "-Dstsd.stateDirectory=%s/state" % d],
                         stdout=log, stderr=subprocess.STDOUT)
    time.sleep(0.5)
    return p, port, d


def soak(stsd, millions, lines):
    work = tempfile.mkdtemp(prefix="stsd-soak-cluster.")
    cl = Cluster(stsd, os.path.join(work, "cl")).start()
    try:
        L = cl.leader(20)
        load(L, lines)
        t0 = time.time()
        for m in range(1, millions + 1):
            changes(L.url, 1000000, work)
            st, h, b = L.req("LENGTH", {"FILENAME": "big.csv"})
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
        shutil.rmtree(work, ignore_errors=True)


def one_at_a_time(port, n=2000):
    """Median and 99th percentile, in microseconds, of n ADDs one after the other."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    took = []
    for i in range(n):
        t = time.perf_counter()
        conn.request("GET", "/sts/ADD?FILENAME=lat&LINE=l%d" % i)
        r = conn.getresponse()
        r.read()
        took.append(time.perf_counter() - t)
        assert r.status == 200
    conn.close()
    took.sort()
    return statistics.median(took) * 1e6, took[int(0.99 * n)] * 1e6


def latency(stsd):
    work = tempfile.mkdtemp(prefix="stsd-bench-latency.")
    lp, port, d = lone(stsd, work)
    cl = Cluster(stsd, os.path.join(work, "cl")).start()
    try:
        L = cl.leader(20)
        for k in range(3):
            a, b = one_at_a_time(port), one_at_a_time(L.http_port)
            print("round %d, ADD one at a time: lone fsync=always median %.0f us (p99 %.0f), "
                  "the leader of three %.0f us (p99 %.0f)" % (k + 1, a[0], a[1], b[0], b[1]),
                  flush=True)
    finally:
        cl.stop()
        lp.terminate()
        lp.wait(10)
        shutil.rmtree(work, ignore_errors=True)


def log_ms(text, pattern):
    """The last 'in N ms' of the lines of text matching pattern."""
    found = re.findall(pattern + r".* in ([0-9.]+) ms", text)
    return float(found[-1]) if found else None


def demote(stsd, lines, rounds):
    work = tempfile.mkdtemp(prefix="stsd-bench-demote.")
    cl = Cluster(stsd, os.path.join(work, "cl")).start()
    try:
        load(cl.leader(20), lines)
        for k in range(rounds):
            L = cl.leader(20)
            with open(L.log, errors="replace") as f:
                restarts = f.read().count("cluster: restarting")
            L.pause()
            try:
                M = cl.leader(20, among=cl.others(L))
            finally:
                t0 = time.time()
                L.resume()
            follower = L.wait_follower(30)
            t1 = time.time()
            with open(L.log, errors="replace") as f:
                text = f.read()
            # A restart executes stsd in the same pid: its log says so.
            print("round %d, %d lines: node %d (%s) follows node %d %.0f ms after "
                  "SIGCONT; standby rebuilt in %s ms, store emptied in %s ms" % (
                      k + 1, lines, L.id, "restarted" if text.count("cluster: restarting") >
                      restarts else "in the same process", M.id, (t1 - t0) * 1000,
                      log_ms(text, "standby built from"),
                      log_ms(text, "follows, in the same process")), flush=True)
            assert follower is not None
    finally:
        cl.stop()
        shutil.rmtree(work, ignore_errors=True)


def compactions(node):
    with open(node.log, errors="replace") as f:
        return f.read().count("compaction into generation")


def growth(stsd, compact, lines, n):
    work = tempfile.mkdtemp(prefix="stsd-bench-growth.")
    cl = Cluster(stsd, os.path.join(work, "cl"),
                 extra=["-Dstsd.cluster.compactBytes=%s" % compact]).start()
    try:
        L = cl.leader(20)
        load(L, lines)
        changes(L.url, n, work)
        time.sleep(3)
        before = {x.id: (du(x.state), compactions(x)) for x in cl.nodes}
        done = changes(L.url, n, work)
        time.sleep(3)        # the last compaction and raft snapshot
        for x in cl.nodes:
            b, c0 = before[x.id]
            a = du(x.state)
            print("compactBytes %s, %d lines: node %d %.1f -> %.1f MiB over %d changes: %.1f B "
                  "a change, %d compactions in that window" % (
                      compact, lines, x.id, b / 2**20, a / 2**20, done, (a - b) / done,
                      compactions(x) - c0), flush=True)
    finally:
        cl.stop()
        shutil.rmtree(work, ignore_errors=True)


def main():
    if sys.argv[1] == "--growth":
        growth(os.path.abspath(sys.argv[2]), sys.argv[3],
               int(sys.argv[4]) if len(sys.argv) > 4 else 1000000,
               int(sys.argv[5]) if len(sys.argv) > 5 else 200000)
        return
    if sys.argv[1] == "--demote":
        demote(os.path.abspath(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 1000000,
               int(sys.argv[4]) if len(sys.argv) > 4 else 3)
        return
    if sys.argv[1] == "--latency":
        latency(os.path.abspath(sys.argv[2]))
        return
    if sys.argv[1] == "--soak":
        soak(os.path.abspath(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 10,
             int(sys.argv[4]) if len(sys.argv) > 4 else 100000)
        return
    stsd = os.path.abspath(sys.argv[1])
    lines = int(sys.argv[2]) if len(sys.argv) > 2 else 1000000
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 200000
    kills = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    work = tempfile.mkdtemp(prefix="stsd-bench-disk.")
    lp = None
    try:
        small = Cluster(stsd, os.path.join(work, "small")).start()
        try:
            L = small.leader(20)
            for i in range(100):
                assert bench_cluster.add_until_ok([L], "l%d" % i)
            f_small = bench_cluster.failover(small, kills)
        finally:
            small.stop()
        cl = Cluster(stsd, os.path.join(work, "big")).start()
        try:
            L = cl.leader(20)
            t = time.time()
            load(L, lines)
            print("INITFILE of %d lines through the leader: %.1f s" % (lines, time.time() - t))
            t = time.time()
            done1 = changes(L.url, n, work)
            print("%d changes: %.1f s" % (done1, time.time() - t))
            f_big = bench_cluster.failover(cl, kills)
            print("failover (kill -9 of the leader -> first OK ADD), %d kills: 100 lines: "
                  "median %.2f s (%s); %d lines and %d changes: median %.2f s (%s); ratio %.2f"
                  % (kills, statistics.median(f_small), " ".join("%.2f" % x for x in f_small),
                     lines, done1, statistics.median(f_big),
                     " ".join("%.2f" % x for x in f_big),
                     statistics.median(f_big) / statistics.median(f_small)))
            L = cl.leader(20)
            add1 = add_node(cl, 4)
            time.sleep(2)
            before = {x.id: (du(x.state), du(os.path.join(x.state, "raft"))) for x in cl.nodes}
            done2 = changes(L.url, n, work)
            time.sleep(3)        # the last compaction and raft snapshot
            after = {x.id: (du(x.state), du(os.path.join(x.state, "raft"))) for x in cl.nodes}
            add2 = add_node(cl, 5)
            print("a new node a voter (CLUSTERADD answered) after %d changes: %.2f s; after %d: "
                  "%.2f s" % (done1, add1, done1 + done2, add2))
        finally:
            cl.stop()
        lp, port, d = lone(stsd, work)

        class Lone:
            data = os.path.join(d, "data")

            def req(self, cmd, params, timeout=10):
                import urllib.parse
                u = "http://127.0.0.1:%d/sts/%s?%s" % (port, cmd, urllib.parse.urlencode(params))
                with urllib.request.urlopen(u, timeout=timeout) as r:
                    return r.status, r.headers, r.read()
        load(Lone(), lines)
        url = "http://127.0.0.1:%d" % port
        done_lone = changes(url, done1, work) + changes(url, done2, work)
        time.sleep(2)
        lone_bytes = du(os.path.join(d, "state"))
        for i in sorted(after):
            (b0, r0), (b1, r1) = before[i], after[i]
            print("node %d: %.1f MiB -> %.1f MiB (raft's directory %.1f -> %.1f MiB) over "
                  "%d changes: %+.1f bytes a change; %.2f x the lone stsd's %.1f MiB"
                  % (i, b0 / 2**20, b1 / 2**20, r0 / 2**20, r1 / 2**20, done2,
                     (b1 - b0) / done2, b1 / lone_bytes, lone_bytes / 2**20))
        print("lone stsd: %d changes after the INITFILE, state directory %.1f MiB"
              % (done_lone, lone_bytes / 2**20))
    finally:
        if lp:
            lp.terminate()
            lp.wait(10)
    if os.environ.get("KEEP"):
        print("work directory kept:", work)
    else:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
