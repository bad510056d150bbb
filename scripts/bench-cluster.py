#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench-cluster.py - what replicas cost and how fast they fail over, three nodes on
this machine (docs/benchmarks.md, "Replicas"). Usage: scripts/bench-cluster.py STSD [KILLS]
or, for failover alone with a list loaded: scripts/bench-cluster.py STSD KILLS LINES [CHANGES]
(INITFILE of LINES lines, kills, then CHANGES ADD / READ KEEP=FALSE on it and kills again)
or, to compare builds: scripts/bench-cluster.py --ab STSD,STSD[,...] ROUNDS CONNS
(a fresh cluster of each build in turn, ROUNDS times: wrk ADD over CONNS connections for
5 s against its leader; the medians)
or, for rows 3, 5 and 6 alone: scripts/bench-cluster.py --ratios STSD [ROUNDS]
(scripts/bench-writes.sh runs it)

1. failover: kill -9 of the leader, then the first OK ADD through a surviving node
   (KILLS times, 10 by default; the killed node restarts with its disk each time);
2. planned switchover: SIGTERM of the leader while a client ADDs in a loop: the time
   between its last OK before and its first OK after (only 503s or refusals between);
3. cost of a write: wrk, ADD over 50 connections for 5 s, against the cluster's leader and
   against one lone stsd with fsync=always, alternated, 3 rounds each, medians;
4. READ KEEP=TRUE through a follower (proxied) against the leader directly, the same way;
5. ADD through a follower (proxied) against the leader directly, the same way;
6. LENGTH through a follower (answered there, after a READINDEX round:
   stsd.cluster.followerReads) against the leader directly, the same way, with the
   READINDEX rounds the follower asked (what the leader carried for its reads)."""
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "cluster"))
from cluster import Cluster, free_port  # noqa: E402


def add_until_ok(nodes, line, timeout=15.0):
    """Sends ADD through the nodes in turn until one answers OK; returns the time of it."""
    end = time.time() + timeout
    i = 0
    while time.time() < end:
        n = nodes[i % len(nodes)]
        i += 1
        if not n.alive():
            continue
        st, h, b = n.req("ADD", {"FILENAME": "bench", "LINE": line}, timeout=3)
        if st == 200 and b.find(b"<title>OK") >= 0:
            return time.time()
        time.sleep(0.01)
    return None


def failover(cl, kills):
    out = []
    for k in range(kills):
        leader = cl.leader(20)
        assert leader, "no leader"
        rest = [n for n in cl.nodes if n is not leader]
        assert add_until_ok(rest, "warm-%d" % k)
        t0 = time.time()
        leader.kill()
        t1 = add_until_ok(rest, "after-%d" % k, 20)
        assert t1, "no OK after the kill"
        out.append(t1 - t0)
        leader.start()
        # Back as a follower before the next kill (its standby rebuilt, with a big list).
        assert leader.wait_follower(60), "node %d is not back" % leader.id
        time.sleep(1.0)
    return out


def promotion_ms(node):
    """How long node's last promotion took: from "won the election" to "serving", by its log."""
    lead = serve = None
    stamp = lambda ln: time.mktime(time.strptime(ln[:19], "%Y-%m-%d %H:%M:%S")) + float(ln[19:23])
    with open(node.log, errors="replace") as f:
        for ln in f:
            if "won the election" in ln:
                lead, serve = stamp(ln), None
            elif "; serving " in ln and lead is not None:
                serve = stamp(ln)
    return (serve - lead) * 1000 if lead is not None and serve is not None else float("nan")


def changes(leader, name, n, conns=16):
    """n changes on list name through leader: ADD and READ KEEP=FALSE in turn."""
    import http.client
    import threading

    def client(k):
        c = http.client.HTTPConnection("127.0.0.1", leader.http_port, timeout=10)
        for i in range(k, n, conns):
            path = ("/sts/ADD?FILENAME=%s&LINE=c%d" % (name, i) if i % 2 == 0
                    else "/sts/READ?FILENAME=%s&KEEP=FALSE" % name)
            c.request("GET", path)
            c.getresponse().read()
        c.close()
    ts = [threading.Thread(target=client, args=(k,)) for k in range(conns)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def failover_loaded(cl, kills, lines, nchanges):
    leader = cl.leader(20)
    with open(os.path.join(cl.work, "big.csv"), "w") as f:
        f.write("".join("line-%07d\n" % i for i in range(lines)))
    for n in cl.nodes:
        shutil.copy(os.path.join(cl.work, "big.csv"), os.path.join(n.data, "big.csv"))
    st, h, b = leader.req("INITFILE", {"FILENAME": "big.csv"}, timeout=120)
    assert st == 200 and b.find(b"<title>OK") >= 0, b[:200]
    for what, nch in (("", 0), (" after %d changes" % nchanges, nchanges)):
        if nch:
            t = time.time()
            changes(cl.leader(20), "big.csv", nch)
            print("  %d changes in %.1f s" % (nch, time.time() - t))
        time.sleep(2)
        f, p = [], []
        for k in range(kills):
            f += failover(cl, 1)
            p.append(promotion_ms(cl.leader(20)))
            time.sleep(3)       # the restarted node rebuilt before the next kill
        print("failover with %d lines%s, %d kills: first OK ADD after the kill: median %.2f s, "
              "all: %s; promotion (leads -> serves): %s ms" %
              (lines, what, kills, statistics.median(f), " ".join("%.2f" % x for x in f),
               " ".join("%.0f" % x for x in p)))
        if not nchanges:
            break


def switchover(cl):
    leader = cl.leader(20)
    rest = [n for n in cl.nodes if n is not leader]
    client = rest[0]
    last_ok_before = first_ok_after = None
    stopped = False
    t_end = time.time() + 15
    i = 0
    while time.time() < t_end:
        if not stopped and i == 50:
            leader.proc.send_signal(signal.SIGTERM)
            stopped = True
        st, h, b = client.req("ADD", {"FILENAME": "sw", "LINE": "s%d" % i}, timeout=3)
        i += 1
        ok = st == 200 and b.find(b"<title>OK") >= 0
        if ok and not stopped:
            last_ok_before = time.time()
        elif ok and stopped and last_ok_before and first_ok_after is None:
            first_ok_after = time.time()
            break
        elif not ok and st not in (503, None):
            raise SystemExit("switchover: unexpected answer %s %r" % (st, b[:200]))
    leader.proc.wait(10)
    leader.start()
    return first_ok_after - last_ok_before


def wrk(url, path, seconds=5, conns=50):
    r = subprocess.run(["wrk", "-t2", "-c%d" % conns, "-d%ds" % seconds, url + path],
                       capture_output=True, text=True)
    m = re.search(r"Requests/sec:\s+([\d.]+)", r.stdout)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", r.stdout)
    if non2xx:
        try:
            urllib.request.urlopen(url + path, timeout=5)
        except urllib.error.HTTPError as e:
            print("  %s%s answers %d: %r" % (url, path, e.code, e.read()[:200]))
    return float(m.group(1)) if m else 0.0, int(non2xx.group(1)) if non2xx else 0


LOCAL_READS = "stsd_cluster_local_reads_total "
ROUNDS_OK = 'stsd_cluster_read_index_rounds_total{result="ok"} '
COMMIT_METRICS = ("stsd_journal_records_total ", "stsd_cluster_commit_seconds_count ",
                  "stsd_cluster_commit_seconds_sum ")


def metric(node, line_start):
    """The value of node's first /metrics line that starts with line_start (0 if none)."""
    with urllib.request.urlopen(node.url + "/metrics", timeout=5) as r:
        for line in r.read().decode().splitlines():
            if line.startswith(line_start):
                return float(line.split()[-1])
    return 0.0


def alternated(url_a, url_b, path, rounds=3, leader=None, commits=None):
    """wrk on path at url_a then url_b, rounds times: the medians of each and their
    non-2xx answers. With leader, commits gets what the leader's COMMIT_METRICS grew by
    during the runs at url_a (commits[0]) and at url_b (commits[1])."""
    a, b = [], []
    for _ in range(rounds):
        for url, out, side in ((url_a, a, 0), (url_b, b, 1)):
            before = [metric(leader, m) for m in COMMIT_METRICS] if leader else None
            out.append(wrk(url, path))
            if leader:
                grew = [metric(leader, m) - v for m, v in zip(COMMIT_METRICS, before)]
                commits[side] = [x + y for x, y in zip(commits[side], grew)]
    return (statistics.median(x[0] for x in a), statistics.median(x[0] for x in b),
            sum(x[1] for x in a), sum(x[1] for x in b))


def commit_line(who, grew):
    """What the leader's commits were while who sent the changes (grew: COMMIT_METRICS)."""
    records, entries, secs = grew
    if entries:
        print("  %s: %.0f changes in %.0f raft entries (%.1f an entry), each committed %.2f ms "
              "after its hand-over to raft on average (stsd_cluster_commit_seconds)" %
              (who, records, entries, records / entries, secs / entries * 1000))


def lone(stsd, work):
    port = free_port()
    d = os.path.join(work, "lone")
    os.makedirs(d, exist_ok=True)
    p = subprocess.Popen([stsd, "-DjmeterPlugin.sts.daemon=true", "-DjmeterPlugin.sts.port=%d" % port,
                          "-Dstsd.bind=127.0.0.1", "-DjmeterPlugin.sts.datasetDirectory=%s" % d,
                          "-Dstsd.journal=on", "-Dstsd.journal.fsync=always",
                          "-Dstsd.stateDirectory=%s/state" % d],
                         stdout=open(os.path.join(work, "lone.log"), "ab"), stderr=subprocess.STDOUT)
    time.sleep(0.5)
    return p, "http://127.0.0.1:%d" % port


def ab(builds, rounds, conns):
    """ADD c`conns` against the leader of a fresh cluster of each build, alternated."""
    got = dict((b, []) for b in builds)
    for _ in range(rounds):
        for b in builds:
            work = tempfile.mkdtemp(prefix="stsd-bench-ab.")
            cl = Cluster(os.path.abspath(b), work).start()
            try:
                leader = cl.leader(20)
                assert leader, "no leader"
                for n in cl.others(leader):
                    assert n.wait_follower(15), "node %d is no follower" % n.id
                time.sleep(0.5)
                got[b].append(wrk(leader.url, "/sts/ADD?FILENAME=w&LINE=abcdefghij",
                                  conns=conns)[0])
            finally:
                cl.kill()
                shutil.rmtree(work, ignore_errors=True)
    for b in builds:
        print("%s: ADD c%d against the leader, median %.0f/s (%s)" %
              (b, conns, statistics.median(got[b]), ", ".join("%.0f" % x for x in got[b])))


def main():
    if sys.argv[1] == "--ab":
        return ab(sys.argv[2].split(","), int(sys.argv[3]), int(sys.argv[4]))
    if sys.argv[1] == "--ratios":
        return ratios_only(os.path.abspath(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 3)
    stsd = os.path.abspath(sys.argv[1])
    kills = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    work = tempfile.mkdtemp(prefix="stsd-bench-cluster.")
    cl = Cluster(stsd, os.path.join(work, "cl")).start()
    try:
        assert cl.leader(20), "no leader"
        if len(sys.argv) > 3:
            failover_loaded(cl, kills, int(sys.argv[3]),
                            int(sys.argv[4]) if len(sys.argv) > 4 else 0)
        else:
            the_rest(cl, stsd, work, kills)
    finally:
        cl.stop()
    if os.environ.get("KEEP"):
        print("work directory kept:", work)
    else:
        shutil.rmtree(work, ignore_errors=True)


def ratios(cl, stsd, work, rounds, read_keep=False):
    """The write path's ratios (issue 41's goals), each from `rounds` alternated pairs of
    5 s wrk runs over 50 connections: three nodes against one lone node with
    fsync=always (ADD), ADD through a follower against the leader, LENGTH on a follower
    against the leader; with read_keep, READ KEEP=TRUE through a follower too. Prints a
    line each, and one "ratio NAME VALUE" line each for scripts/bench-writes.sh. Returns
    the lone stsd's process, for the caller to stop."""
    leader = cl.leader(20)
    assert leader, "no leader"
    follower = cl.others(leader)[0]
    for n in cl.others(leader):
        assert n.wait_follower(15), "node %d is no follower" % n.id
    lp, lurl = lone(stsd, work)
    add = "/sts/ADD?FILENAME=w&LINE=abcdefghij"
    grew = [[0, 0, 0], [0, 0, 0]]
    r3, r1, n3, n1 = alternated(leader.url, lurl, add, rounds, leader, grew)
    print("ADD, 50 connections, 5 s x %d alternated: three nodes %.0f/s, one node "
          "fsync=always %.0f/s: ratio %.2f (non-2xx: %d, %d)" % (rounds, r3, r1, r3 / r1, n3, n1))
    commit_line("clients of the leader", grew[0])
    print("ratio cluster-lone %.2f" % (r3 / r1))
    if read_keep:
        rf, rl, nf, nl = alternated(follower.url, leader.url, "/sts/READ?FILENAME=w&KEEP=TRUE",
                                    rounds)
        print("READ KEEP=TRUE, 50 connections: through a follower %.0f/s, the leader "
              "directly %.0f/s: ratio %.2f (non-2xx: %d, %d)" % (rf, rl, rf / rl, nf, nl))
    grew = [[0, 0, 0], [0, 0, 0]]
    rf, rl, nf, nl = alternated(follower.url, leader.url, add, rounds, leader, grew)
    print("ADD, 50 connections: through a follower %.0f/s, the leader directly %.0f/s: "
          "ratio %.2f (non-2xx: %d, %d)" % (rf, rl, rf / rl, nf, nl))
    commit_line("clients of a follower", grew[0])
    commit_line("clients of the leader", grew[1])
    print("ratio follower-add %.2f" % (rf / rl))
    rounds0, reads0 = metric(follower, ROUNDS_OK), metric(follower, LOCAL_READS)
    rf, rl, nf, nl = alternated(follower.url, leader.url, "/sts/LENGTH?FILENAME=w", rounds)
    nrounds = metric(follower, ROUNDS_OK) - rounds0
    reads = metric(follower, LOCAL_READS) - reads0
    print("LENGTH, 50 connections: on a follower %.0f/s, the leader directly %.0f/s: "
          "ratio %.2f (non-2xx: %d, %d); the follower answered %.0f reads itself in "
          "%.0f READINDEX rounds (%.1f reads a round)" %
          (rf, rl, rf / rl, nf, nl, reads, nrounds, reads / nrounds if nrounds else 0))
    print("ratio follower-length %.2f" % (rf / rl))
    return lp


def ratios_only(stsd, rounds):
    """--ratios: a fresh cluster and a lone node, the ratios alone."""
    work = tempfile.mkdtemp(prefix="stsd-bench-ratios.")
    cl = Cluster(stsd, os.path.join(work, "cl")).start()
    lp = None
    try:
        lp = ratios(cl, stsd, work, rounds)
    finally:
        if lp:
            lp.terminate()
            lp.wait(10)
        cl.stop()
        shutil.rmtree(work, ignore_errors=True)


def the_rest(cl, stsd, work, kills):
    """Failover, switchover, the cost of a write and of a proxied read."""
    lp = None
    try:
        f = failover(cl, kills)
        print("failover (kill -9 of the leader -> first OK ADD through a survivor), %d kills: "
              "median %.2f s, max %.2f s, all: %s" % (kills, statistics.median(f), max(f),
                                                    " ".join("%.2f" % x for x in f)))
        s = switchover(cl)
        print("planned switchover (SIGTERM of the leader): %.0f ms between the last OK "
              "before and the first OK after" % (s * 1000))
        time.sleep(2)
        lp = ratios(cl, stsd, work, 3, read_keep=True)
    finally:
        if lp:
            lp.terminate()
            lp.wait(10)


if __name__ == "__main__":
    main()
