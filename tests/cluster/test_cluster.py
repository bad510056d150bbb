#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""test_cluster.py - replicas under failures: three real stsd on loopback (cluster.py).

Usage: test_cluster.py STSD [TEST ...]          (make test-cluster)

Each test runs in a child process of its own, in a process group of its own, bounded in
time: at its limit the group is killed (the stsd processes with it). A test's stsd are
killed at its end whatever happens. Work directories live under /tmp/stsd-cluster-*: a
passed test's is removed, a failed one's kept (logs n1.log.. and states) and named.
Exits non-zero when any test fails. A test that cannot yet check a part of what it
should (followers before forwarding lands) says SKIP for that part.
"""
import http.client
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.parse

sys.dont_write_bytecode = True    # no __pycache__ in the tree (scripts/spdx.sh)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cluster import Cluster, Node, body_text, free_port, is_ok  # noqa: E402

ELECTION_MS = 1000
# How long after a kill -9 of the leader the first change may be answered OK. Raft's
# randomized timeouts make it 1 to 2 s, but two followers that stand at once split the
# vote and wait again (then 3 to 4 s).
FAILOVER_S = float(os.environ.get("CLUSTER_FAILOVER_S", "3"))
NO_MORE = b"No more line"
NOT_LOADED = b"not loaded yet"
NOT_WRITABLE = b"Journal not writable"


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def show(answer):
    st, h, b = answer
    return "%s %r" % (st, b[:300])


class Ctx:
    """What one test owns: its work directory, its clusters and lone stsd (killed at its
    end), the parts it had to skip."""

    def __init__(self, stsd, work):
        self.stsd, self.work = stsd, work
        self.clusters, self.procs, self.skips, self.notes = [], [], [], []

    def cluster(self, name="c", start=True, **kw):
        kw.setdefault("election_ms", ELECTION_MS)
        cl = Cluster(self.stsd, os.path.join(self.work, name), **kw)
        self.clusters.append(cl)
        if start:
            cl.start()
            check(cl.leader(20) is not None, "no leader 20 s after the cluster's start")
        return cl

    def skip(self, what):
        print("  SKIP %s" % what, flush=True)
        self.skips.append(what)

    def note(self, what):
        print("  %s" % what, flush=True)
        self.notes.append(what)

    def cleanup(self):
        for cl in self.clusters:
            cl.kill()
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait(10)


def ok_answer(node, cmd, params=None, what=None, **kw):
    """A request that must be answered OK; returns (status, headers, body)."""
    a = node.req(cmd, params, **kw)
    check(a[0] is not None and is_ok(a[2]),
          "%s through node %d: not OK: %s" % (what or cmd, node.id, show(a)))
    return a


def leader_of(cl, timeout=15.0, among=None):
    L = cl.leader(timeout, among)
    check(L is not None, "no leader within %.0f s" % timeout)
    return L


def refused(a):
    return a[0] is None and b"ConnectionRefused" in a[2]


def write_file(node, name, text):
    with open(os.path.join(node.data, name), "w") as f:
        f.write(text)


class Router:
    """Where a client sends its next request: any node once followers forward, else the
    node that leads now (looked up again after a failure)."""

    def __init__(self, cl, forwarding):
        self.cl, self.forwarding = cl, forwarding
        self.lock = threading.Lock()
        self.cur = None

    def pick(self, rnd):
        if self.forwarding:
            return rnd.choice(self.cl.nodes)
        with self.lock:
            cur = self.cur
        if cur is None or not cur.alive():
            cur = self.cl.leader(0.5)
            with self.lock:
                self.cur = cur
        return cur          # None: no leader now

    def failed(self, node):
        if node is not None and not self.forwarding:
            with self.lock:
                if self.cur is node:
                    self.cur = None


def make_leader(cl, a, tries=4):
    """Makes node a the leader: the leader is stopped (SIGTERM, which hands over to the
    most up-to-date follower) after the third node is paused and left behind by a change,
    so that a is the one up to date; then it is started again as a follower."""
    for k in range(tries):
        L = leader_of(cl, 15)
        if L is a:
            print("  node %d leads (after %d handovers)" % (a.id, k), flush=True)
            return L
        rest = [n for n in cl.nodes if n is not a and n is not L]
        for n in rest:
            n.pause()
        try:
            ok_answer(L, "SET", {"NAME": "make-leader", "VALUE": str(a.id)})
            rc = L.stop(15)
            check(rc == 0, "node %d (leader) exited %s on SIGTERM" % (L.id, rc))
        finally:
            for n in rest:
                n.resume()
        L.start()
        leader_of(cl, 15)
        check(L.wait_follower(15) is not None, "node %d not back as a follower" % L.id)
    L = leader_of(cl, 15)
    check(L is a, "node %d would not lead after %d tries (node %d does)" % (a.id, tries, L.id))
    return L


def peek_all(node, name):
    """Every line of list name, by PEEK pages (through node, which serves or forwards)."""
    lines, off = [], 0
    while True:
        st, h, b = node.req("PEEK", {"FILENAME": name, "OFFSET": off, "LIMIT": 1000,
                                      "FORMAT": "JSON"})
        check(st == 200, "PEEK %s through node %d: %s" % (name, node.id, show((st, h, b))))
        doc = json.loads(b)
        got = doc.get("lines") or []
        lines += [x["line"] for x in got]
        nxt = doc.get("next_offset")
        if not got or nxt is None or nxt <= off:
            return lines
        off = nxt


def length(node, name):
    a = ok_answer(node, "LENGTH", {"FILENAME": name})
    return int(body_text(a[2]))


# ---- 1 -----------------------------------------------------------------------------------

def command_family(T, n, tag, leader):
    """A representative request of every command family through node n; all OK."""
    q, k, o, b = "q%s.csv" % tag, "k%s" % tag, "o%s" % tag, "b%s" % tag
    a = ok_answer(n, "INITFILE", {"FILENAME": "init.csv"})
    check(body_text(a[2]) == b"3", "INITFILE answered %r" % a[2])
    ok_answer(n, "ADD", {"FILENAME": q, "LINE": "a"})
    ok_answer(n, "ADD", {"FILENAME": q, "LINE": "b", "ADD_MODE": "LAST"}, method="POST")
    a = ok_answer(n, "READ", {"FILENAME": q})
    check(body_text(a[2]) == b"a", "READ answered %r" % a[2])
    a = ok_answer(n, "READMULTI", {"FILENAME": q, "NB_LINES": 2})
    ok_answer(n, "FIND", {"FILENAME": q, "LINE": "b"})
    check(length(n, q) == 2, "LENGTH of %s is not 2" % q)
    a = ok_answer(n, "STATUS")
    check(q.encode() in a[2], "STATUS lacks %s: %r" % (q, a[2]))
    a = ok_answer(n, "PEEK", {"FILENAME": q, "FORMAT": "JSON"})
    check(sorted(x["line"] for x in json.loads(a[2])["lines"]) == ["a", "b"],
          "PEEK answered %r" % a[2])
    ok_answer(n, "RESET", {"FILENAME": q})
    a = ok_answer(n, "ADDMULTI", {"FILENAME": q, "LINES": "x\ny\nz"})
    check(body_text(a[2]) == b"3", "ADDMULTI answered %r" % a[2])
    # Leases: ACK one, RELEASE another.
    a = ok_answer(n, "READ", {"FILENAME": q, "KEEP": "FALSE", "LEASE": 30})
    lease = a[1].get("x-sts-lease")
    check(lease, "READ LEASE=30 without X-STS-Lease: %r" % (a[1],))
    ok_answer(n, "ACK", {"FILENAME": q, "LEASE": lease})
    a = ok_answer(n, "READ", {"FILENAME": q, "KEEP": "FALSE", "LEASE": 30})
    ok_answer(n, "RELEASE", {"FILENAME": q, "LEASE": a[1].get("x-sts-lease", "")})
    check(length(n, q) == 2, "after ACK and RELEASE, LENGTH of %s is not 2" % q)
    ok_answer(n, "LEASES", {"FILENAME": q})
    # Keys.
    ok_answer(n, "SET", {"NAME": k, "VALUE": "v1"})
    a = ok_answer(n, "GET", {"NAME": k})
    check(body_text(a[2]) == b"v1", "GET answered %r" % a[2])
    a = ok_answer(n, "INCR", {"NAME": k + "n", "BY": 5})
    check(body_text(a[2]) == b"5", "INCR answered %r" % a[2])
    ok_answer(n, "DEL", {"NAME": k})
    ok_answer(n, "KEYS")
    # Run once.
    a = ok_answer(n, "ONCE", {"NAME": o, "LEASE": 30})
    check(body_text(a[2]) == b"RUN" and a[1].get("x-sts-lease"), "ONCE answered %s" % show(a))
    ok_answer(n, "DONE", {"NAME": o, "LEASE": a[1]["x-sts-lease"], "VALUE": "built"})
    a = ok_answer(n, "ONCE", {"NAME": o})
    check(body_text(a[2]) == b"DONE", "ONCE after DONE answered %s" % show(a))
    ok_answer(n, "RUNS")
    # Meeting points.
    a = ok_answer(n, "BARRIER", {"NAME": b, "PARTIES": 1})
    ok_answer(n, "BARRIERS")
    ok_answer(n, "DROP", {"FILENAME": q})
    ok_answer(n, "INFO")
    ok_answer(n, "CONFIG")
    ok_answer(n, "FILES")
    a = ok_answer(n, "CLUSTER", {"FORMAT": "JSON"})
    i = json.loads(a[2])
    check(i.get("self") == n.id and i.get("leader") == leader.id,
          "CLUSTER through node %d: %r" % (n.id, i))
    ok_answer(n, "CLUSTER")


def test_every_command_through_each_node(T):
    cl = T.cluster()
    for n in cl.nodes:
        write_file(n, "init.csv", "i1\ni2\ni3\n")
    L = leader_of(cl)
    fwd = cl.forwarding(L)
    for n in [L] + cl.others(L):
        if n is not L and not fwd:
            T.skip("node %d (follower): SKIP until forwarding lands" % n.id)
            continue
        command_family(T, n, str(n.id), L)
        if fwd:
            # A forwarded answer names the leader.
            a = n.req("LENGTH", {"FILENAME": "init.csv"})
            check(a[1].get("x-sts-leader") == str(L.id),
                  "through node %d, X-STS-Leader is %r, not %d" %
                  (n.id, a[1].get("x-sts-leader"), L.id))


# ---- 2 -----------------------------------------------------------------------------------

SEQUENCE = [
    ("", {}),                                                    # the help page
    ("INITFILE", {"FILENAME": "init.csv"}),
    ("LENGTH", {"FILENAME": "init.csv"}),
    ("READ", {"FILENAME": "init.csv"}),
    ("READ", {"FILENAME": "init.csv", "READ_MODE": "LAST", "KEEP": "FALSE"}),
    ("READMULTI", {"FILENAME": "init.csv", "NB_LINES": 2}),
    ("READMULTI", {"FILENAME": "init.csv", "NB_LINES": 2, "FORMAT": "JSON"}),
    ("READMULTI", {"FILENAME": "init.csv", "NB_LINES": 9}),
    ("ADD", {"FILENAME": "q.csv", "LINE": "one"}),
    ("ADD", {"FILENAME": "q.csv", "LINE": "two", "ADD_MODE": "FIRST"}),
    ("ADD", {"FILENAME": "q.csv", "LINE": "one", "UNIQUE": "TRUE"}),
    ("ADD", {"FILENAME": "q.csv"}),
    ("ADD", {"FILENAME": "q.csv", "LINE": "three", "FORMAT": "JSON"}),
    ("FIND", {"FILENAME": "q.csv", "LINE": "on"}),
    ("FIND", {"FILENAME": "q.csv", "LINE": "^t", "FIND_MODE": "REGEX_FIND", "KEEP": "FALSE"}),
    ("FIND", {"FILENAME": "q.csv", "LINE": "zzz"}),
    ("FIND", {"FILENAME": "q.csv", "LINE": "zzz", "FORMAT": "JSON"}),
    ("ADDMULTI", {"FILENAME": "q.csv", "LINES": "a\nb\nc"}),
    ("ADDMULTI", {"FILENAME": "q.csv", "LINES": "a\nd", "UNIQUE": "TRUE"}),
    ("PEEK", {"FILENAME": "q.csv"}),
    ("PEEK", {"FILENAME": "q.csv", "FORMAT": "JSON", "OFFSET": 1, "LIMIT": 2}),
    ("STATUS", {}),
    ("LENGTH", {"FILENAME": "q.csv", "FORMAT": "JSON"}),
    ("READ", {"FILENAME": "nope.csv"}),
    ("READ", {"FILENAME": "nope.csv", "FORMAT": "JSON"}),
    ("READ", {"FILENAME": "q.csv", "KEEP": "maybe"}),
    ("SAVE", {"FILENAME": "q.csv", "ADD_TIMESTAMP": "false"}),
    ("RESET", {"FILENAME": "q.csv"}),
    ("READ", {"FILENAME": "q.csv"}),
    ("READ", {"FILENAME": "q.csv", "TIMEOUT": "0.2"}),
    ("READ", {"FILENAME": "q.csv", "FORMAT": "JSON"}),
    ("SET", {"NAME": "k", "VALUE": "v"}),
    ("SET", {"NAME": "k", "VALUE": "w", "IF_VERSION": 5}),
    ("SET", {"NAME": "k", "VALUE": "w", "IF_VERSION": 1, "FORMAT": "JSON"}),
    ("GET", {"NAME": "k"}),
    ("INCR", {"NAME": "n", "BY": 5}),
    ("INCR", {"NAME": "n", "BY": 1, "MAX": 5}),
    ("INCR", {"NAME": "n", "BY": -2, "FORMAT": "JSON"}),
    ("KEYS", {}),
    ("KEYS", {"FORMAT": "JSON"}),
    ("DEL", {"NAME": "k"}),
    ("GET", {"NAME": "k"}),
    ("LEASES", {"FILENAME": "init.csv"}),
    ("READ", {"FILENAME": "init.csv", "KEEP": "FALSE", "LEASE": 30}),
    ("LEASES", {"FILENAME": "init.csv", "FORMAT": "JSON"}),
    ("ACK", {"FILENAME": "init.csv", "LEASE": "0123456789abcdef"}),
    ("ONCE", {"NAME": "o", "LEASE": 30}),
    ("ONCE", {"NAME": "o", "TIMEOUT": 0}),
    ("BARRIER", {"NAME": "b", "PARTIES": 1}),
    ("BARRIER", {"NAME": "b", "PARTIES": 1, "FORMAT": "JSON"}),
    ("BARRIERS", {}),
    ("COLUMNS", {"FILENAME": "init.csv"}),
    ("DROP", {"FILENAME": "q.csv"}),
    ("DROP", {"FILENAME": "q.csv"}),
    ("DROP", {"FILENAME": "q.csv", "FORMAT": "JSON"}),
    ("STATUS", {}),
    ("NOSUCH", {}),
]
# Headers whose values may differ between two servers (their presence may not).
VARYING = {"date", "x-sts-lease"}
NOT_COMPARED = {"x-sts-leader"}


def lone_stsd(T, name):
    """A lone stsd (no cluster keys) on its own port and directories; returns (port, data
    dir)."""
    d = os.path.join(T.work, name)
    data = os.path.join(d, "data")
    os.makedirs(data)
    port = free_port()
    logf = open(os.path.join(T.work, name + ".log"), "ab")
    p = subprocess.Popen([T.stsd, "-DjmeterPlugin.sts.daemon=true",
                          "-DjmeterPlugin.sts.port=%d" % port, "-Dstsd.bind=127.0.0.1",
                          "-DjmeterPlugin.sts.datasetDirectory=%s" % data,
                          "-Dstsd.stateDirectory=%s" % os.path.join(d, "state")],
                         stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT)
    T.procs.append(p)
    end = time.time() + 10
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return port, data
        except OSError:
            check(p.poll() is None, "the lone stsd exited %s" % p.returncode)
            time.sleep(0.05)
    raise Failure("the lone stsd does not listen after 10 s")


def lone_req(port, cmd, params):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        c.request("GET", "/sts/" + cmd + ("?" + urllib.parse.urlencode(params) if params else ""))
        r = c.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    except (OSError, http.client.HTTPException) as e:
        return None, {}, str(e).encode()
    finally:
        c.close()


def same_as_lone(T, port, node, what):
    """SEQUENCE sent to a lone stsd and to node: the same statuses, headers and bodies."""
    diffs = []
    for cmd, params in SEQUENCE:
        a = lone_req(port, cmd, params)
        b = node.req(cmd, params)
        check(a[0] is not None and b[0] is not None,
              "%s %r: no answer (lone: %s; %s: %s)" % (cmd, params, show(a), what, show(b)))
        ha = {k: v for k, v in a[1].items() if k not in NOT_COMPARED}
        hb = {k: v for k, v in b[1].items() if k not in NOT_COMPARED}
        for k in VARYING:
            if k in ha and k in hb:
                ha[k] = hb[k] = "*"
        if a[0] != b[0] or a[2] != b[2] or ha != hb:
            diffs.append("%s %r:\n    lone:   %s %r %r\n    %s: %s %r %r" %
                         (cmd, params, a[0], ha, a[2][:400], what, b[0], hb, b[2][:400]))
    check(not diffs, "%d of %d answers differ:\n  %s" % (len(diffs), len(SEQUENCE),
                                                          "\n  ".join(diffs)))


def lone_and_cluster(T):
    """A lone stsd and a cluster, init.csv in each's dataset directory: (port, cluster)."""
    port, data = lone_stsd(T, "lone")
    with open(os.path.join(data, "init.csv"), "w") as f:
        f.write("i1\ni2\ni3\ni4\ni5\n")
    cl = T.cluster()
    for n in cl.nodes:
        write_file(n, "init.csv", "i1\ni2\ni3\ni4\ni5\n")
    return port, cl


def test_answers_identical_to_one_stsd(T):
    port, cl = lone_and_cluster(T)
    same_as_lone(T, port, leader_of(cl), "leader")


def batch_frame(items, count=None):
    """A batch's bytes (src/http/batch_frame.h): items are (method, target, headers dict,
    body bytes)."""
    out = b"STSB1\0%d\0" % (len(items) if count is None else count)
    for method, target, headers, body in items:
        out += method.encode() + b"\0" + target.encode() + b"\0"
        for k, v in headers.items():
            out += k.encode() + b"\0" + v.encode() + b"\0"
        out += b"\0%d\0" % len(body) + body
    return out


def post_raw(node_port, path, body, method="POST", headers=None):
    c = http.client.HTTPConnection("127.0.0.1", node_port, timeout=10)
    if headers is None:
        headers = {"Content-Type": "application/x-stsd-batch"} if body else {}
    try:
        c.request(method, path, body=body, headers=headers)
        r = c.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        c.close()


def test_batched_forwards(T):
    """A follower sends the leader the requests answered at once in batches, with the
    answers each would have had alone: the same bytes as a lone stsd's. Under 16 clients
    the batches hold several requests and every ADD is made once. The leader refuses a
    malformed batch whole (400, nothing changed), a GET of it (405), one of another type
    (415) or from a browser (403), and a request that may wait within one (400); a lone
    stsd knows no such path. A request that a node forwarded is not forwarded again."""
    port, cl = lone_and_cluster(T)
    L = leader_of(cl)
    F = cl.others(L)[0]
    check(F.wait_follower(15) is not None, "node %d is no follower" % F.id)
    same_as_lone(T, port, F, "follower")
    batched = metric(F, 'stsd_cluster_forwarded_total{way="batch"} ')
    alone = metric(F, 'stsd_cluster_forwarded_total{way="alone"} ')
    check(batched and batched >= 25 and alone and alone >= 8,
          "the follower sent %r requests in batches and %r alone" % (batched, alone))

    # 16 clients at once: every ADD answered OK and made once, in batches of several.
    b0, n0 = metric(F, "stsd_cluster_forward_batches_total "), batched
    bad = []

    def client(k):
        c = http.client.HTTPConnection("127.0.0.1", F.http_port, timeout=10)
        for i in range(60):
            c.request("GET", "/sts/ADD?FILENAME=many.csv&LINE=c%d-%d" % (k, i))
            r = c.getresponse()
            body = r.read()
            if r.status != 200 or not is_ok(body):
                bad.append((r.status, body[:120]))
        c.close()
    ts = [threading.Thread(target=client, args=(k,)) for k in range(16)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    check(not bad, "%d ADDs through the follower failed: %r" % (len(bad), bad[:3]))
    check(length(L, "many.csv") == 960, "the leader holds %r lines, not 960" %
          length(L, "many.csv"))
    batches = metric(F, "stsd_cluster_forward_batches_total ") - b0
    sent = metric(F, 'stsd_cluster_forwarded_total{way="batch"} ') - n0
    T.note("960 ADDs from 16 clients went in %d batches" % batches)
    check(sent == 960 and 0 < batches < 960,
          "%r ADDs went in %r batches: no batch held more than one" % (sent, batches))

    # Bad batches, sent to the leader: refused whole, nothing changed.
    before = length(L, "many.csv")
    add = ("GET", "/sts/ADD?FILENAME=many.csv&LINE=x", {}, b"")
    good = batch_frame([add, add])
    for body, why in ((good[:-1], "cut short"), (good + b"x", "trailing bytes"),
                      (batch_frame([add], count=2), "fewer than its count"),
                      (batch_frame([add] * 65), "65 requests"),
                      (batch_frame([]), "no request"), (b"STSB2\x001\x00", "another magic"),
                      (b"\xff" * 40, "binary"),
                      (batch_frame([("GET", "", {}, b"")]), "an empty target")):
        a = post_raw(L.http_port, "/_stsd/batch", body)
        check(a[0] == 400 and a[2] == b"400 malformed batch\n",
              "a batch %s: %s" % (why, show(a)))
    a = post_raw(L.http_port, "/_stsd/batch", None, method="GET")
    check(a[0] == 405, "GET /_stsd/batch: %s" % show(a))
    # What a foreign page in a browser could send: a type it may send without asking, or
    # its Origin.
    for hdrs, want in (({"Content-Type": "text/plain"}, 415), ({}, 415),
                       ({"Content-Type": "application/x-stsd-batch",
                         "Origin": "http://elsewhere.example"}, 403),
                       ({"Content-Type": "application/x-stsd-batch",
                         "Sec-Fetch-Site": "cross-site"}, 403)):
        a = post_raw(L.http_port, "/_stsd/batch", good, headers=hdrs)
        check(a[0] == want, "a batch with %r: %s" % (hdrs, show(a)))
    wait = ("GET", "/sts/READ?FILENAME=many.csv&TIMEOUT=1", {}, b"")
    a = post_raw(L.http_port, "/_stsd/batch", batch_frame([wait, add]))
    check(a[0] == 200 and b"400 not a request for a batch\n" in a[2] and b"OK" in a[2],
          "a batch with a READ that may wait: %s" % show(a))
    check(length(L, "many.csv") == before + 1, "the leader holds %r lines, not %d" %
          (length(L, "many.csv"), before + 1))
    # A request another node sent (X-STS-Forwarded) goes no further than one hop: a node
    # that does not lead answers 503 "No leader", retry; the leader runs it.
    fwd = {"X-STS-Forwarded": "1"}
    a = F.req("ADD", {"FILENAME": "many.csv", "LINE": "hop"}, headers=fwd)
    check(a[0] == 503 and NO_LEADER in a[2] and a[1].get("retry-after") == "1",
          "a forwarded ADD at a follower: %s" % show(a))
    a = F.req("READ", {"FILENAME": "many.csv", "TIMEOUT": "1"}, headers=fwd)
    check(a[0] == 503 and NO_LEADER in a[2], "a forwarded READ TIMEOUT at a follower: %s" %
          show(a))
    check(length(L, "many.csv") == before + 1, "a forwarded ADD at a follower was made")
    ok_answer(L, "ADD", {"FILENAME": "many.csv", "LINE": "hop"}, headers=fwd)
    # stsd alone: no such route, the answer of any other unknown path.
    lone_a, lone_b = (post_raw(port, p, good) for p in ("/_stsd/batch", "/_stsd/batcx"))
    check(lone_a[0] == lone_b[0] and lone_a[2] == lone_b[2],
          "a lone stsd answers /_stsd/batch %s, another path %s" % (show(lone_a), show(lone_b)))


# ---- 3 -----------------------------------------------------------------------------------

UNKNOWN = b"Outcome unknown"
NO_LEADER = b"No leader"
LEADER_CHANGED = b"Leader changed"


def outcome(a):
    """What an answer to a change says was done: "ok", "empty" (KO: no line, no list),
    "none" (refused: no connection, no leader, journal not writable), "unknown" (outcome
    unknown, or the connection cut or timed out), or "odd" (anything else)."""
    st, h, b = a
    if st == 200 and is_ok(b):
        return "ok"
    if st is None:
        return "none" if refused(a) else "unknown"
    if UNKNOWN in b:
        return "unknown"
    if NO_LEADER in b or LEADER_CHANGED in b or NOT_WRITABLE in b:
        return "none"
    if st == 200 and (NO_MORE in b or NOT_LOADED in b):
        return "empty"
    return "odd"


def answer_kind(a, n):
    """An answer not OK in a few words: status, Retry-After if any, the KO's start."""
    ra = a[1].get("retry-after")
    return "%s%s %s" % (a[0], " (Retry-After %s)" % ra if ra else "",
                        body_text(a[2])[:n].decode("utf-8", "replace"))


class Tally:
    """What the clients of a run saw: ADDs answered OK, lines read, outcomes unknown."""

    def __init__(self):
        self.lock = threading.Lock()
        self.tried, self.added, self.reads = set(), set(), []
        self.unknown = []             # ("ADD" or "READ", sent) of each outcome unknown
        self.kinds = {}               # KO texts of refusals and unknowns, by status
        self.ok_changes = []          # (sent, answered) of every OK change
        self.odd = []                 # answers no client should see

    def count(self, a):
        if a[0] is not None and not is_ok(a[2]):
            k = answer_kind(a, 30)
        else:
            k = "no answer" if a[0] is None else None
        if k:
            self.kinds[k] = self.kinds.get(k, 0) + 1

    def add(self, line, sent, a):
        o = outcome(a)
        with self.lock:
            self.tried.add(line)
            self.count(a)
            if o == "ok":
                self.added.add(line)
                self.ok_changes.append((sent, time.time()))
            elif o == "unknown":
                self.unknown.append(("ADD", sent))
            elif o != "none":
                self.odd.append("ADD %s: %s" % (line, show(a)))

    def read(self, sent, a):
        """Returns True when the list was empty (or not there)."""
        o = outcome(a)
        with self.lock:
            self.count(a)
            if o == "ok":
                self.reads.append(body_text(a[2]).decode("utf-8", "replace"))
                self.ok_changes.append((sent, time.time()))
            elif o == "unknown":
                self.unknown.append(("READ", sent))
            elif o == "odd":
                self.odd.append("READ: %s" % show(a))
            return o == "empty"


def drain(node_pick, name, tally, limit=60.0):
    """READ KEEP=FALSE until the list is empty; the lines go to tally.reads."""
    end = time.time() + limit
    while time.time() < end:
        n = node_pick()
        if n is None:
            time.sleep(0.1)
            continue
        a = n.req("READ", {"FILENAME": name, "KEEP": "FALSE"}, timeout=5)
        o = outcome(a)
        if o == "ok":
            with tally.lock:
                tally.reads.append(body_text(a[2]).decode("utf-8", "replace"))
        elif o == "empty":
            return
        else:
            check(o != "odd", "drain: %s" % show(a))
            if o == "unknown":
                with tally.lock:
                    tally.unknown.append(("READ", time.time()))
            time.sleep(0.1)
    raise Failure("the drain did not end in %.0f s" % limit)


def check_tally(T, tally, what, clients, killed, serving):
    """Every line added OK read once; none twice; none never sent. A request of unknown
    outcome may have been done or not: one in flight when the leader was killed (at most
    one per client), or one sent once the new leader served (first OK at serving). One
    sent in between went to a dead leader or to none: a follower may call it unknown (it
    cannot tell), but nothing can have been done."""
    seen = {}
    for line in tally.reads:
        seen[line] = seen.get(line, 0) + 1
    twice = sorted(l for l, c in seen.items() if c > 1)
    never = sorted(l for l in seen if l not in tally.tried)
    lost = sorted(tally.added - set(seen))
    before = [k for k, sent in tally.unknown if sent < killed]
    between = [k for k, sent in tally.unknown if killed <= sent < serving]
    after = [k for k, sent in tally.unknown if sent >= serving]
    reads = min(clients, sum(1 for k in before if k == "READ")) + \
        sum(1 for k in after if k == "READ")
    T.note("%s: %d ADDs tried, %d OK; %d lines read; outcome unknown: %d sent before the "
           "kill, %d before the new leader served, %d after; lost %d, read twice %d, "
           "never added %d" %
           (what, len(tally.tried), len(tally.added), len(tally.reads), len(before),
            len(between), len(after), len(lost), len(twice), len(never)))
    T.note("answers not OK: %s" % ", ".join("%s: %d" % kv for kv in sorted(tally.kinds.items())))
    # A READ whose outcome is unknown may have taken a line that no client saw.
    check(len(lost) <= reads,
          "%d lines whose ADD was OK were never read (%d READs of unknown outcome could "
          "explain %d): %r" % (len(lost), reads, reads, lost[:20]))
    check(not twice, "lines read twice: %r" % twice[:20])
    check(not never, "lines read that no ADD sent: %r" % never[:20])
    check(len(before) <= clients,
          "%d requests sent before the kill ended unknown, for %d clients" %
          (len(before), clients))
    check(not tally.odd, "answers other than OK, KO No more line, 503 or no connection: "
          "%r" % tally.odd[:10])


def test_kill_leader_under_load(T):
    cl = T.cluster()
    L = leader_of(cl)
    fwd = cl.forwarding(L)
    if not fwd:
        T.skip("clients through followers: SKIP until forwarding lands (through the "
               "leader only)")
    router = Router(cl, fwd)
    tally = Tally()
    stop = threading.Event()
    name = "load.csv"
    clients = 8
    term0 = L.info()["term"]

    def client(k):
        rnd = random.Random(k)
        i = 0
        while not stop.is_set():
            # Two ADDs for a READ: the queue grows, so that a kill finds lines in it.
            for _ in range(2):
                i += 1
                line = "c%d-%d" % (k, i)
                n = router.pick(rnd)
                if n is None:
                    time.sleep(0.05)
                    continue
                sent = time.time()
                a = n.req("ADD", {"FILENAME": name, "LINE": line, "ADD_MODE": "LAST"},
                          timeout=5)
                tally.add(line, sent, a)
                if a[0] != 200:
                    router.failed(n)
                    time.sleep(0.02)
            n = router.pick(rnd)
            if n is None:
                time.sleep(0.05)
                continue
            sent = time.time()
            a = n.req("READ", {"FILENAME": name, "KEEP": "FALSE"}, timeout=5)
            tally.read(sent, a)
            if a[0] != 200:
                router.failed(n)
                time.sleep(0.02)

    threads = [threading.Thread(target=client, args=(k,), daemon=True)
               for k in range(clients)]
    t0 = time.time()
    for t in threads:
        t.start()
    try:
        time.sleep(2.0)
        L.kill()
        tk = time.time()
        time.sleep(max(0.0, t0 + 6.0 - time.time()))
    finally:
        stop.set()
        for t in threads:
            t.join(15)
    check(not any(t.is_alive() for t in threads), "a client is still running")
    after = [done for sent, done in tally.ok_changes if sent >= tk]
    check(after, "no change answered OK after the leader was killed")
    took = min(after) - tk
    before = sum(1 for sent, done in tally.ok_changes if done < tk)
    T.note("leader node %d killed at %.1f s (%d OK changes before); first OK change "
           "%.2f s after the kill" % (L.id, tk - t0, before, took))
    check(before > 0, "no OK change before the kill")
    L.start()
    M = leader_of(cl, 15)
    check(L.wait_follower(15) is not None, "node %d not back as a follower" % L.id)
    a = M.req("LENGTH", {"FILENAME": name})
    T.note("the queue after the run: %s" % body_text(a[2])[:80].decode("utf-8", "replace"))
    rnd = random.Random(99)
    drain(lambda: router.pick(rnd), name, tally)
    check_tally(T, tally, "kill -9 under load", clients, tk, min(after))
    check(took <= FAILOVER_S, "the first OK change came %.2f s after the kill (limit %g s; "
          "elections: term %s to %s)" % (took, FAILOVER_S, term0, leader_of(cl).info()["term"]))


# ---- 4 -----------------------------------------------------------------------------------

SNAPSHOT_THRESHOLD = 8192     # src/cluster/cluster.c


def snapshots(node):
    d = os.path.join(node.state, "raft")
    try:
        return sorted(f for f in os.listdir(d) if f.startswith("snapshot-") and
                      not f.endswith(".meta"))
    except OSError:
        return []


def catch_up(node, index, seconds, leader=None):
    """Waits until node has applied index; fails after seconds."""
    end = time.time() + seconds
    info = None
    while time.time() < end:
        info = node.info()
        if info and info.get("applied_index", 0) >= index:
            return info
        time.sleep(0.1)
    check(False, "node %d did not catch up to index %d in %d s: %r%s" %
          (node.id, index, seconds, info,
           "; the leader: %r" % (leader.info(),) if leader else ""))


def test_restarted_node_catches_up_from_snapshot(T):
    cl = T.cluster()
    L = leader_of(cl)
    A = cl.others(L)[0]
    check(A.stop(15) == 0, "node %d did not exit 0 on SIGTERM" % A.id)
    # Sequential ADDs, one at a time on one connection: one raft entry each.
    name = "snap.csv"
    conn = http.client.HTTPConnection("127.0.0.1", L.http_port, timeout=10)
    ok = 0
    t0 = time.time()
    i = 0
    try:
        while time.time() - t0 < 40 and i < 3 * SNAPSHOT_THRESHOLD:
            i += 1
            try:
                conn.request("GET", "/sts/ADD?FILENAME=%s&LINE=s%d" % (name, i))
                r = conn.getresponse()
                st, b = r.status, r.read()
            except (OSError, http.client.HTTPException) as e:
                st, b = None, str(e).encode()
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", L.http_port, timeout=10)
            if st == 200 and is_ok(b):
                ok += 1
            else:
                # Nothing failed: every ADD must be OK.
                info = L.info()
                raise Failure("ADD s%d (after %d OK, %.1f s) through the leader node %d, "
                              "with every node but the stopped one up: %s %r; the node now: "
                              "%s in term %s" % (i, ok, time.time() - t0, L.id, st,
                                                 body_text(b)[:150],
                                                 info and info.get("role"),
                                                 info and info.get("term")))
            if i % 500 == 0:
                info = L.info()
                check(info and info.get("role") == "leader",
                      "node %d stopped leading during the writes: %r" % (L.id, info))
                if info["last_index"] > SNAPSHOT_THRESHOLD + 100 and snapshots(L):
                    break
    finally:
        conn.close()
    took = time.time() - t0
    T.note("%d sequential ADDs in %.1f s (%.0f/s); leader's last index %d, snapshots %s" %
           (i, took, i / took, L.info()["last_index"], snapshots(L)))
    check(snapshots(L), "no raft snapshot on the leader after %d ADDs (its last index: %s)" %
          (i, L.info()["last_index"]))
    want_len = length(L, name)
    want = peek_all(L, name)
    want_status = ok_answer(L, "STATUS")[2]
    check(want_len == ok, "the leader has %d lines, %d ADDs were OK" % (want_len, ok))
    check(snapshots(A) == [], "node %d had a snapshot before its restart" % A.id)
    commit = L.info()["commit_index"]
    A.start()
    catch_up(A, commit, 30)
    check(snapshots(A), "node %d caught up without a snapshot (raft dir: %r)" %
          (A.id, os.listdir(os.path.join(A.state, "raft"))))
    T.note("node %d caught up to %d; its snapshots: %s" % (A.id, commit, snapshots(A)))
    make_leader(cl, A)
    got_len = length(A, name)
    check(got_len == want_len, "node %d, leading, has %d lines in %s; the old leader had %d" %
          (A.id, got_len, name, want_len))
    got = peek_all(A, name)
    check(got == want, "node %d, leading, has other lines than the old leader had" % A.id)
    got_status = ok_answer(A, "STATUS")[2]
    check(got_status == want_status, "STATUS on node %d, leading: %r; on the old leader: %r" %
          (A.id, got_status, want_status))
    ok_answer(A, "ADD", {"FILENAME": name, "LINE": "after"})
    check(length(A, name) == want_len + 1, "an ADD on node %d did not count" % A.id)


# ---- 5 -----------------------------------------------------------------------------------

def test_paused_leader(T):
    cl = T.cluster()
    L = leader_of(cl)
    name = "paused.csv"
    for i in range(5):
        ok_answer(L, "ADD", {"FILENAME": name, "LINE": "p%d" % i})
    answers = []
    alock = threading.Lock()

    def stale_read(tag):
        a = L.req("READ", {"FILENAME": name, "KEEP": "FALSE"}, timeout=20)
        with alock:
            answers.append((tag, a))

    L.pause()
    t_pause = time.time()
    resumed = False
    try:
        # Requests that wait in the paused leader's sockets for it to wake up.
        waiting = [threading.Thread(target=stale_read, args=("sent while paused",),
                                    daemon=True) for _ in range(3)]
        for t in waiting:
            t.start()
        M = leader_of(cl, 3 * ELECTION_MS / 1000 + 5, among=cl.others(L))
        T.note("node %d paused; node %d leads %.2f s later" % (L.id, M.id,
                                                               time.time() - t_pause))
        got = 0
        while True:
            a = M.req("READ", {"FILENAME": name, "KEEP": "FALSE"})
            if a[0] == 200 and NO_MORE in a[2]:
                break
            check(a[0] == 200 and is_ok(a[2]), "READ on the new leader: %s" % show(a))
            got += 1
        check(got == 5, "the new leader had %d lines of %s, not 5" % (got, name))
        ok_answer(M, "ADD", {"FILENAME": "other.csv", "LINE": "x"})
        ok_answer(M, "SET", {"NAME": "k", "VALUE": "v"})
        time.sleep(max(0.0, t_pause + 3 * ELECTION_MS / 1000 - time.time()))
        L.resume()
        resumed = True
        # Requests sent right after SIGCONT, while it may still think it leads.
        after = [threading.Thread(target=stale_read, args=("sent after SIGCONT",),
                                  daemon=True) for _ in range(3)]
        for t in after:
            t.start()
            time.sleep(0.02)
        for t in waiting + after:
            t.join(25)
    finally:
        if not resumed:
            L.resume()
    for tag, a in answers:
        check(not (a[0] == 200 and is_ok(a[2])),
              "the old leader node %d answered OK from its stale state (%s): %s" %
              (L.id, tag, show(a)))
    T.note("old leader's answers: %s" % "; ".join(
        "%s: %s %s" % (t, a[0], body_text(a[2])[:60].decode("utf-8", "replace"))
        for t, a in answers))
    # Forwarded to the new leader (which has no line left), or 503, or no connection.
    for tag, a in answers:
        forwarded = a[1].get("x-sts-leader") == str(M.id) and NO_MORE in a[2]
        check(forwarded or a[0] in (None, 503),
              "the old leader node %d answered neither 503 nor the new leader's answer "
              "(%s): %s %r" % (L.id, tag, show(a), a[1]))
    check(L.wait_follower(15) is not None, "node %d not a follower after SIGCONT: %r" %
          (L.id, L.info()))
    i = L.info()
    check(i["leader"] == M.id, "node %d follows %r, not node %d" % (L.id, i["leader"], M.id))
    check(length(M, name) == 0, "the list came back on the new leader")


def wait_stopped(pid, timeout):
    """Whether process pid is in the stopped state (T) within timeout seconds."""
    end = time.time() + timeout
    while time.time() < end:
        with open("/proc/%d/stat" % pid) as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "T":
                return True
        time.sleep(0.005)
    return False


def test_late_forward_never_runs(T):
    """A READ passed on by a follower while the leader could not take it, whose client gave
    up meanwhile, is never run once the leader can: its line stays (docs/faults.md, fault
    seed 1206072, where a partition held such READs back for twelve seconds). Here the
    leader is paused (its kernel takes the follower's batch, its process reads it late),
    for longer than stsd.cluster.forwardWithin but shorter than an election."""
    within_ms = 500
    cl = T.cluster(election_ms=3000, extra=("-Dstsd.cluster.forwardWithin=%d" % within_ms,))
    L = leader_of(cl)
    F = cl.others(L)[0]
    check(F.wait_follower(15) is not None, "node %d follows no leader" % F.id)
    name = "late.csv"
    ok_answer(L, "ADD", {"FILENAME": name, "LINE": "keep-me"})

    def read_while_paused(what):
        L.pause()
        t_pause = time.time()
        try:
            # Stopped for sure before the READ goes: one that ran first would be an
            # outcome unknown to its client, not a late one.
            check(wait_stopped(L.proc.pid, 2.0), "node %d not stopped by SIGSTOP" % L.id)
            a = F.req("READ", {"FILENAME": name, "KEEP": "FALSE"}, timeout=1.0)
            # Unsent for want of the leader's clock, the READ is answered "No leader"
            # (retry) once its time is up; sent, it is not answered before its client
            # leaves.
            check(a[0] is None or (a[0] == 503 and b"No leader" in a[2]),
                  "the READ through node %d %s: %s" % (F.id, what, show(a)))
            time.sleep(max(0.0, t_pause + 3 * within_ms / 1000 - time.time()))
        finally:
            L.resume()
        T.note("%s: leader node %d paused %.2f s; the READ's client left after 1 s" %
               (what, L.id, time.time() - t_pause))

    def line_stays(what, way):
        end = time.time() + 5
        while time.time() < end and metric(F if way == "dropped" else L,
                                           'stsd_cluster_forward_late_total{way="%s"}' %
                                           way) in (None, 0, 0.0):
            time.sleep(0.1)
        check(cl.leader(10) is L, "node %d no longer leads after its pause" % L.id)
        n = length(L, name)
        check(n == 1, "%s: a READ whose client had left before the leader could run it "
              "consumed the line (LENGTH %d)" % (what, n))
        late = metric(F if way == "dropped" else L,
                      'stsd_cluster_forward_late_total{way="%s"}' % way)
        check(late is not None and late >= 1, "%s: nothing counted %s late: %r" %
              (what, way, late))

    # The follower has not heard from the leader yet: it probes the leader's clock and
    # sends nothing before it has it; its READ waits here, and is dropped when late.
    read_while_paused("before any answer from the leader")
    line_stays("before any answer from the leader", "dropped")
    # Through the follower: a batch, whose answer samples the leader's clock; then the
    # READ goes with its deadline and the leader refuses it when it wakes.
    ok_answer(F, "ADD", {"FILENAME": "other.csv", "LINE": "x"})
    read_while_paused("with the leader's clock")
    line_stays("with the leader's clock", "refused")
    # The follower's clients are served as before once the leader is back.
    a = ok_answer(F, "READ", {"FILENAME": name, "KEEP": "FALSE"})
    check(b"keep-me" in a[2], "READ through node %d: %s" % (F.id, show(a)))


def test_dead_node_shown_dead(T):
    """A leader killed -9 is shown unreachable by every node left (CLUSTER's JSON and HTML,
    /metrics) within a few seconds, and up again after its restart; the new leader logs
    one line each way, and nothing after the failover reads like a crash recovery."""
    cl = T.cluster()
    L = leader_of(cl)
    for n in cl.others(L):
        check(n.wait_follower(15) is not None, "node %d follows no leader" % n.id)
    ok_answer(L, "ADD", {"FILENAME": "h.csv", "LINE": "x"})
    L.kill()
    t_kill = time.time()
    M = leader_of(cl, 3 * ELECTION_MS / 1000 + 5, among=cl.others(L))

    def seen(node, health):
        i = node.info()
        if not i:
            return False
        rows = [r for r in i["nodes"] if r["id"] == L.id]
        return bool(rows) and rows[0]["health"] == health

    def wait_all(health, timeout):
        end = time.time() + timeout
        while time.time() < end:
            if all(seen(n, health) for n in cl.others(L) + ([L] if L.alive() else [])):
                return True
            time.sleep(0.1)
        return False

    check(wait_all("unreachable", 10), "node %d not shown unreachable by every node: %r" %
          (L.id, [n.info() for n in cl.others(L)]))
    T.note("node %d (the leader) killed; shown unreachable everywhere %.1f s later" %
           (L.id, time.time() - t_kill))
    for n in cl.others(L):
        up = metric(n, 'stsd_cluster_node_up{node="%d"}' % L.id)
        check(up == 0, "node %d's /metrics: stsd_cluster_node_up for node %d is %r" %
              (n.id, L.id, up))
        st, h, b = n.req("CLUSTER")
        check(st == 200 and b"health=unreachable" in b,
              "node %d's CLUSTER page: %s" % (n.id, show((st, h, b))))
        i = n.info()
        others = [r for r in i["nodes"] if r["id"] != L.id]
        check(all(r["health"] == "up" for r in others), "node %d: %r" % (n.id, i["nodes"]))
        if n is not M:
            row = [r for r in i["nodes"] if r["id"] == M.id][0]
            check(row["heard_ms_ago"] is not None and row["heard_ms_ago"] < 3 * ELECTION_MS,
                  "follower node %d: its leader last heard %r" % (n.id, row))
    L.start()
    t_start = time.time()
    check(wait_all("up", 20), "node %d not shown up again after its restart: %r" %
          (L.id, [n.info() for n in cl.nodes]))
    T.note("node %d restarted; shown up everywhere %.1f s later" % (L.id, time.time() - t_start))
    log = M.tail(100000)
    down = log.count("node %d stopped answering" % L.id)
    back = log.count("node %d answers again" % L.id)
    check(down == 1 and back == 1, "node %d's log: %d lines of node %d stopping, %d of it "
          "answering again, not one each" % (M.id, down, L.id, back))
    check("recovered list" not in log.split("won the election")[-1],
          "the new leader's log reads like a crash recovery after the failover")
    check("leads, term %d; serving 1 list from memory" % M.info()["term"] in log,
          "the new leader does not say what it serves: %s" % log[-2000:])


def test_added_node_restarts_at_once(T):
    """A node added with CLUSTERADD and killed at once starts again: the raft snapshot it
    caught up from is older than its own entry in the table of nodes, which comes after
    it in the log (fault seed 72519: the node died at every start, on a NULL entry)."""
    cl = T.cluster(extra=("-Dstsd.cluster.snapshotEntries=64",))
    L = leader_of(cl)
    for i in range(300):                  # snapshots of the state before the new node
        ok_answer(L, "ADD", {"FILENAME": "a.csv", "LINE": "l%d" % i})
    V = cl.others(L)[0]
    V.kill()
    shutil.rmtree(V.dir, ignore_errors=True)
    N = Node(cl, 4)
    cl.nodes.append(N)
    N.start(extra=["-Dstsd.cluster.join=true"])
    ok_answer(L, "CLUSTERADD", {"NODE": 4, "RAFT": "127.0.0.1:%d" % N.raft_port,
                                "URL": N.url}, timeout=60)
    ok_answer(L, "CLUSTERREMOVE", {"NODE": V.id}, timeout=30)
    cl.nodes.remove(V)
    N.kill()
    N.start()
    check(N.wait_follower(15) is not None, "node 4, added then killed, does not start "
          "again (exit status %r): %s" % (N.proc.poll(), N.tail(5)))
    check(length(L, "a.csv") == 300, "the leader lost lines")


# ---- 6 -----------------------------------------------------------------------------------

def test_leases_and_once_survive_failover(T):
    cl = T.cluster()
    L = leader_of(cl)
    name = "leased.csv"
    ok_answer(L, "ADDMULTI", {"FILENAME": name, "LINES": "l1\nl2\nl3", "ADD_MODE": "LAST"})
    a = ok_answer(L, "READ", {"FILENAME": name, "KEEP": "FALSE", "LEASE": 30})
    lease = a[1].get("x-sts-lease")
    check(body_text(a[2]) == b"l1" and lease, "READ LEASE=30: %s %r" % (show(a), a[1]))
    a = ok_answer(L, "READ", {"FILENAME": name, "KEEP": "FALSE", "LEASE": 30})
    lease2 = a[1].get("x-sts-lease")
    a = ok_answer(L, "ONCE", {"NAME": "x", "LEASE": 30})
    run = a[1].get("x-sts-lease")
    check(body_text(a[2]) == b"RUN" and run, "ONCE NAME=x LEASE=30: %s" % show(a))
    a = ok_answer(L, "INCR", {"NAME": "sem", "BY": 1, "MAX": 1, "LEASE": 30})
    sem = a[1].get("x-sts-lease")
    L.kill()
    M = leader_of(cl, 10, among=cl.others(L))
    a = ok_answer(M, "LEASES", {"FILENAME": name})
    check(body_text(a[2]) == b"2", "LEASES on the new leader: %s" % show(a))
    check(length(M, name) == 1, "the new leader's %s has not 1 line" % name)
    a = M.req("ONCE", {"NAME": "x", "TIMEOUT": 0})
    check(not is_ok(a[2]) and b"still in progress" in a[2],
          "ONCE NAME=x on the new leader: %s" % show(a))
    a = ok_answer(M, "RUNS")
    check(b"x" in body_text(a[2]), "RUNS on the new leader lacks x: %s" % show(a))
    a = M.req("INCR", {"NAME": "sem", "BY": 1, "MAX": 1})
    check(not is_ok(a[2]), "the semaphore's lease was lost: INCR answered %s" % show(a))
    ok_answer(M, "ACK", {"FILENAME": name, "LEASE": lease})
    ok_answer(M, "RELEASE", {"FILENAME": name, "LEASE": lease2})
    a = ok_answer(M, "LEASES", {"FILENAME": name})
    check(body_text(a[2]) == b"0", "LEASES after ACK and RELEASE: %s" % show(a))
    a = ok_answer(M, "READ", {"FILENAME": name, "KEEP": "FALSE"})
    check(body_text(a[2]) == b"l2", "the RELEASEd line is not at the head: %s" % show(a))
    ok_answer(M, "RELEASE", {"NAME": "sem", "LEASE": sem})
    ok_answer(M, "DONE", {"NAME": "x", "LEASE": run, "VALUE": "built"})
    a = ok_answer(M, "ONCE", {"NAME": "x"})
    check(body_text(a[2]) == b"DONE", "ONCE NAME=x after DONE: %s" % show(a))
    # And the old leader, back, follows.
    L.start()
    check(L.wait_follower(15) is not None, "node %d not back as a follower" % L.id)


# ---- 6b ----------------------------------------------------------------------------------

def observe(node, names):
    """What node answers of lists names and of the keys: STATUS (names, lines, leases),
    every line in order, LEASES and COLUMNS of each list, KEYS, the runs by name."""
    a = ok_answer(node, "STATUS", {"FORMAT": "JSON"})
    status = sorted((x["name"], x["lines"], x["leased"]) for x in json.loads(a[2])["lists"])
    lists = {}
    for name in names:
        st, h, b = node.req("LEASES", {"FILENAME": name})
        lists[name] = (peek_all(node, name) if is_ok(b) else None, body_text(b),
                       body_text(node.req("COLUMNS", {"FILENAME": name})[2]))
    a = ok_answer(node, "KEYS", {"FORMAT": "JSON"})
    keys = sorted((k["name"], k["value"], k["version"]) for k in json.loads(a[2])["keys"]
                  if k["name"] not in ("ttl", "make-leader"))
    a = ok_answer(node, "RUNS", {"FORMAT": "JSON"})
    runs = sorted(r["name"] for r in json.loads(a[2])["runs"])
    return status, lists, keys, runs


def test_standby_serves_from_memory(T):
    """Changes of every kind on a list of 200k lines and beside it, a compaction through
    the cluster among them, then kill -9 of the leader: the new leader answers every list
    and key as the old one did, and took its state from memory (the hot standby), not from
    its directory. Then the old leader comes
    back (raft restores a snapshot: its standby is built from the directory) and is made
    the leader: the same again."""
    cl = T.cluster(extra=["-Dstsd.cluster.snapshotEntries=64",
                          "-Dstsd.cluster.compactBytes=64K"])
    L = leader_of(cl)
    big = "".join("line-%06d\n" % i for i in range(200000))
    hdr = "id,kind\n" + "".join("r%d,%s\n" % (i, "ab"[i % 2]) for i in range(50))
    for n in cl.nodes:
        write_file(n, "big.csv", big)
        write_file(n, "hdr.csv", hdr)
        write_file(n, "small.csv", "s1\ns2\ns3\n")
    a = ok_answer(L, "INITFILE", {"FILENAME": "big.csv"})
    check(body_text(a[2]) == b"200000", "INITFILE big.csv: %s" % show(a))
    ok_answer(L, "INITFILE", {"FILENAME": "hdr.csv", "HEADER": "TRUE"})
    ok_answer(L, "INITFILE", {"FILENAME": "small.csv"})
    rnd = random.Random(40)
    for i in range(300):
        ok_answer(L, "ADD", {"FILENAME": "big.csv", "LINE": "add-%d" % i,
                             "ADD_MODE": "LAST" if i % 2 else "FIRST"})
        ok_answer(L, "READ", {"FILENAME": "big.csv", "KEEP": "FALSE",
                              "READ_MODE": rnd.choice(["FIRST", "LAST", "RANDOM"])})
        if i % 10 == 0:
            ok_answer(L, "READ", {"FILENAME": "big.csv", "KEEP": "TRUE"})
    # Log enough for a compaction through the cluster (compactBytes 64K): its new log
    # generation, SNAPSHOT records, COMPACT_DONE and tidying reach the standbys too.
    for i in range(15):
        ok_answer(L, "ADDMULTI", {"FILENAME": "pad.csv", "LINES": "\n".join(
            "%s-%d-%d" % ("p" * 100, i, k) for k in range(50))})
    deadline = time.time() + 30
    while time.time() < deadline and not all(
            b"compaction into generation" in open(n.log, "rb").read() for n in cl.nodes):
        time.sleep(0.2)
    check(all(b"compaction into generation" in open(n.log, "rb").read() for n in cl.nodes),
          "no compaction through the cluster within 30 s")
    leases = [ok_answer(L, "READ", {"FILENAME": "big.csv", "KEEP": "FALSE", "LEASE": 300})
              [1].get("x-sts-lease") for _ in range(6)]
    ok_answer(L, "ACK", {"FILENAME": "big.csv", "LEASE": leases[0]})
    ok_answer(L, "ACK", {"FILENAME": "big.csv", "LEASE": leases[1]})
    ok_answer(L, "RELEASE", {"FILENAME": "big.csv", "LEASE": leases[2]})
    ok_answer(L, "RELEASE", {"FILENAME": "big.csv", "LEASE": leases[3]})
    ok_answer(L, "READ", {"FILENAME": "big.csv", "KEEP": "FALSE", "OWNER": "alice", "LEASE": 300})
    ok_answer(L, "READ", {"FILENAME": "big.csv", "KEEP": "FALSE", "OWNER": "alice", "LEASE": 200})
    ok_answer(L, "READ", {"FILENAME": "big.csv", "KEEP": "FALSE", "OWNER": "bob", "LEASE": 300})
    ok_answer(L, "ACK", {"FILENAME": "big.csv", "OWNER": "bob"})
    ok_answer(L, "ADDMULTI", {"FILENAME": "multi.csv", "LINES": "m1\nm2\nm3", "ADD_MODE": "LAST"})
    ok_answer(L, "ADDMULTI", {"FILENAME": "big.csv", "LINES": "b1\nb2", "ADD_MODE": "FIRST"})
    ok_answer(L, "ADD", {"FILENAME": "gone.csv", "LINE": "g"})
    ok_answer(L, "READ", {"FILENAME": "gone.csv", "KEEP": "FALSE", "LEASE": 300})
    ok_answer(L, "DROP", {"FILENAME": "gone.csv"})
    ok_answer(L, "ADD", {"FILENAME": "back.csv", "LINE": "old"})
    ok_answer(L, "DROP", {"FILENAME": "back.csv"})
    ok_answer(L, "ADD", {"FILENAME": "back.csv", "LINE": "new"})
    for x in ("r1", "r2", "r3"):
        ok_answer(L, "ADD", {"FILENAME": "reset.csv", "LINE": x})
    ok_answer(L, "RESET", {"FILENAME": "reset.csv"})
    ok_answer(L, "ADD", {"FILENAME": "reset.csv", "LINE": "after"})
    ok_answer(L, "RESET", {"FILENAME": "hdr.csv"})
    ok_answer(L, "ADD", {"FILENAME": "hdr.csv", "LINE": "z,b"})
    ok_answer(L, "READ", {"FILENAME": "small.csv", "KEEP": "FALSE", "LEASE": 300})
    ok_answer(L, "ADD", {"FILENAME": "small.csv", "LINE": "s4"})
    ok_answer(L, "INITFILE", {"FILENAME": "small.csv"})
    for cmd, p in [("SET", {"NAME": "a", "VALUE": "1"}), ("SET", {"NAME": "b", "VALUE": "2",
                                                                 "TTL": 300}),
                   ("INCR", {"NAME": "c", "BY": 5}), ("INCR", {"NAME": "c", "BY": -2}),
                   ("DEL", {"NAME": "a"}), ("SET", {"NAME": "d", "VALUE": "x"}),
                   ("EXPIRE", {"NAME": "d", "TTL": 300}), ("SET", {"NAME": "e", "VALUE": "y"}),
                   ("SET", {"NAME": "e", "VALUE": "z"}), ("SET", {"NAME": "ttl", "VALUE": "t",
                                                                   "TTL": 4})]:
        ok_answer(L, cmd, p)
    set_at = time.time()
    sem = ok_answer(L, "INCR", {"NAME": "sem", "BY": 1, "MAX": 1, "LEASE": 300})[1].get(
        "x-sts-lease")
    sem2 = ok_answer(L, "INCR", {"NAME": "sem2", "BY": 3, "LEASE": 300})[1].get("x-sts-lease")
    ok_answer(L, "ACK", {"NAME": "sem2", "LEASE": sem2})
    ok_answer(L, "ONCE", {"NAME": "o1", "LEASE": 300})
    run2 = ok_answer(L, "ONCE", {"NAME": "o2", "LEASE": 300})[1].get("x-sts-lease")
    ok_answer(L, "DONE", {"NAME": "o2", "LEASE": run2, "VALUE": "built"})
    names = ["big.csv", "hdr.csv", "small.csv", "multi.csv", "gone.csv", "back.csv",
             "reset.csv", "pad.csv"]
    before = observe(L, names)
    check(before[1]["gone.csv"][0] is None, "gone.csv still answers after DROP")
    check(len(before[1]["big.csv"][0]) > 199000, "big.csv has %d lines" %
          len(before[1]["big.csv"][0]))
    time.sleep(1.0)             # every node applies what the reads above saw committed
    L.kill()
    M = leader_of(cl, 10, among=cl.others(L))
    after = observe(M, names)
    for what, x, y in zip(("STATUS", "lists", "KEYS", "RUNS"), before, after):
        if what == "lists":
            for name in names:
                check(x[name] == y[name], "list %s: the new leader answers %r... (%s lines), "
                      "the old one answered %r... (%s lines)" %
                      (name, y[name][1:], y[name][0] and len(y[name][0]), x[name][1:],
                       x[name][0] and len(x[name][0])))
        check(x == y, "%s differs: before %r, after %r" % (what, x, y))
    with open(M.log, "rb") as f:
        log = f.read()
    check(b"taken from memory" in log and b"from the state directory" not in log,
          "node %d's log does not say it took its state from memory:\n%s" % (M.id, M.tail(20)))
    # The state behaves, too: leases, counter leases, runs and TTLs go on.
    a = M.req("INCR", {"NAME": "sem", "BY": 1, "MAX": 1})
    check(not is_ok(a[2]), "the semaphore's lease was lost: INCR answered %s" % show(a))
    ok_answer(M, "RELEASE", {"NAME": "sem", "LEASE": sem})
    ok_answer(M, "ACK", {"FILENAME": "big.csv", "LEASE": leases[4]})
    ok_answer(M, "RELEASE", {"FILENAME": "big.csv", "LEASE": leases[5]})
    a = M.req("ONCE", {"NAME": "o1", "TIMEOUT": 0})
    check(b"still in progress" in a[2], "ONCE o1 on the new leader: %s" % show(a))
    while time.time() < set_at + 6:
        time.sleep(0.2)
    a = ok_answer(M, "KEYS", {"FORMAT": "JSON"})
    check("ttl" not in [k["name"] for k in json.loads(a[2])["keys"]],
          "the key with TTL=4 outlived its deadline on the new leader: %s" % show(a))
    # The old leader back: its standby is built from the snapshot raft restores.
    mark = os.path.getsize(L.log)
    L.start()
    check(L.wait_follower(15) is not None, "node %d not back as a follower" % L.id)
    ok_answer(M, "ADD", {"FILENAME": "back.csv", "LINE": "later"})
    ok_answer(M, "READ", {"FILENAME": "big.csv", "KEEP": "FALSE"})
    before = observe(M, names)
    time.sleep(1.0)
    make_leader(cl, L)
    after = observe(L, names)
    for what, x, y in zip(("STATUS", "lists", "KEYS", "RUNS"), before, after):
        check(x == y, "%s differs after the second promotion (node %d)" % (what, L.id))
    with open(L.log, "rb") as f:
        f.seek(mark)
        log = f.read()
    check(b"standby built from" in log and b"taken from memory" in log and
          b"from the state directory" not in log,
          "node %d, back from a snapshot, did not lead from its standby:\n%s" %
          (L.id, L.tail(20)))


# ---- 7 -----------------------------------------------------------------------------------

def test_save_writes_on_all_three(T):
    cl = T.cluster()
    L = leader_of(cl)
    ok_answer(L, "ADDMULTI", {"FILENAME": "saved.csv", "LINES": "a\nb\nc",
                              "ADD_MODE": "LAST"})
    a = ok_answer(L, "SAVE", {"FILENAME": "saved.csv", "ADD_TIMESTAMP": "false"})
    check(body_text(a[2]) == b"3", "SAVE answered %s" % show(a))
    end = time.time() + 5
    have = []
    while time.time() < end:
        have = [n.id for n in cl.nodes if os.path.exists(os.path.join(n.data, "saved.csv"))]
        if len(have) == len(cl.nodes):
            break
        time.sleep(0.1)
    check(L.id in have, "SAVE answered OK but the leader (node %d) has no saved.csv" % L.id)
    check(len(have) == len(cl.nodes),
          "SAVE wrote saved.csv on nodes %r only (the leader is node %d); nodes %r have none "
          "5 s later: SAVE is not replicated" %
          (have, L.id, [n.id for n in cl.nodes if n.id not in have]))
    for n in cl.nodes:
        with open(os.path.join(n.data, "saved.csv"), "rb") as f:
            text = f.read()
        check(text == b"a\nb\nc\n", "node %d's saved.csv is %r" % (n.id, text))


# ---- 8 -----------------------------------------------------------------------------------

def test_rolling_restart(T):
    cl = T.cluster()
    L = leader_of(cl)
    fwd = cl.forwarding(L)
    if not fwd:
        T.skip("ADDs through followers: SKIP until forwarding lands (through the leader only)")
    router = Router(cl, fwd)
    name = "rolling.csv"
    lock = threading.Lock()
    hist = {}                     # line: the outcome of each of its ADDs, in order
    kinds, bad = {}, []
    stop = threading.Event()

    def client(k):
        rnd = random.Random(k)
        i = 0
        while not stop.is_set():
            i += 1
            line = "r%d-%d" % (k, i)
            for attempt in range(100):
                n = router.pick(rnd)
                if n is None:
                    time.sleep(0.1)
                    continue
                a = n.req("ADD", {"FILENAME": name, "LINE": line}, timeout=10)
                o = outcome(a)
                kind = "OK" if o == "ok" else "refused" if refused(a) else answer_kind(a, 40)
                with lock:
                    hist.setdefault(line, []).append(o)
                    kinds[kind] = kinds.get(kind, 0) + 1
                    if o != "ok" and not (a[0] == 503 or refused(a)):
                        bad.append("ADD %s through node %d: %s" % (line, n.id, show(a)))
                if o == "ok":
                    break
                router.failed(n)
                time.sleep(0.1)
            time.sleep(0.03)

    threads = [threading.Thread(target=client, args=(k,), daemon=True) for k in range(3)]
    for t in threads:
        t.start()
    try:
        time.sleep(0.5)
        for n in cl.nodes:
            t1 = time.time()
            rc = n.stop(15)
            check(rc == 0, "node %d exited %s on SIGTERM" % (n.id, rc))
            took_stop = time.time() - t1
            n.start()
            check(n.wait_follower(20) is not None, "node %d not back as a follower" % n.id)
            leader_of(cl, 10)
            T.note("node %d: stopped in %.2f s, back as a follower %.2f s later" %
                   (n.id, took_stop, time.time() - t1 - took_stop))
        time.sleep(0.5)
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    L = leader_of(cl)
    lines = peek_all(L, name)
    count = {}
    for line in lines:
        count[line] = count.get(line, 0) + 1
    added = set(l for l, h in hist.items() if "ok" in h)
    lost = sorted(added - set(count))
    # A line may be there once per ADD answered OK or of unknown outcome, never more: a
    # 503 "No leader" or a refused connection says nothing was done.
    extra = sorted("%s x%d after %s" % (l, c, hist.get(l)) for l, c in count.items()
                   if c > sum(1 for o in hist.get(l, []) if o in ("ok", "unknown")))
    T.note("%d ADDs OK of %d lines; %d duplicates; answers: %s" %
           (len(added), len(hist), len(lines) - len(count),
            ", ".join("%s: %d" % kv for kv in sorted(kinds.items()))))
    check(not bad, "answers other than OK, 503 or a refused connection: %r" % bad[:10])
    check(not lost, "%d ADDs answered OK are missing: %r" % (len(lost), lost[:20]))
    check(not extra, "lines there more often than their ADDs could have made them: %r" %
          extra[:10])
    check(len(added) > 20, "only %d ADDs were OK" % len(added))


# ---- 9 -----------------------------------------------------------------------------------

def test_bad_cluster_configuration(T):
    state = os.path.join(T.work, "state")
    p1, p2, h1, h2 = free_port(), free_port(), free_port(), free_port()
    node1 = "-Dstsd.cluster.node.1=127.0.0.1:%d http://127.0.0.1:%d" % (p1, h1)
    node2 = "-Dstsd.cluster.node.2=127.0.0.1:%d http://127.0.0.1:%d" % (p2, h2)
    base = [T.stsd, "-DjmeterPlugin.sts.daemon=true", "-DjmeterPlugin.sts.port=%d" % h1,
            "-Dstsd.bind=127.0.0.1", "-Dstsd.stateDirectory=%s" % state,
            "-DjmeterPlugin.sts.datasetDirectory=%s" % T.work]
    cases = [
        ("self without node", ["-Dstsd.cluster.self=1"], ["stsd.cluster.node.1"]),
        ("node without self", [node1, node2], ["stsd.cluster.self"]),
        ("two nodes on one raft address",
         ["-Dstsd.cluster.self=1", node1,
          "-Dstsd.cluster.node.2=127.0.0.1:%d http://127.0.0.1:%d" % (p1, h2)],
         ["stsd.cluster.node.2", "127.0.0.1:%d" % p1]),
        ("a malformed node value", ["-Dstsd.cluster.self=1", node1,
                                    "-Dstsd.cluster.node.2=127.0.0.1 http://127.0.0.1:1"],
         ["stsd.cluster.node.2"]),
        ("a node's URL that is no URL", ["-Dstsd.cluster.self=1", node1,
                                         "-Dstsd.cluster.node.2=127.0.0.1:%d 127.0.0.1:%d"
                                         % (p2, h2)],
         ["stsd.cluster.node.2"]),
        ("self naming an unset node", ["-Dstsd.cluster.self=3", node1, node2],
         ["stsd.cluster.self", "stsd.cluster.node.3"]),
        ("raft port already in use", ["-Dstsd.cluster.self=1", node1, node2],
         ["stsd.cluster.node.1", "127.0.0.1:%d" % p1]),
    ]
    for what, keys, words in cases:
        shutil.rmtree(state, ignore_errors=True)
        holder = None
        if what == "raft port already in use":
            holder = socket.socket()
            holder.bind(("127.0.0.1", p1))
            holder.listen()
        t = time.time()
        try:
            p = subprocess.run(base + keys, stdin=subprocess.DEVNULL, capture_output=True,
                               timeout=5)
        except subprocess.TimeoutExpired:
            raise Failure("%s: stsd still running after 5 s" % what)
        finally:
            if holder:
                holder.close()
        took = time.time() - t
        out = (p.stdout + p.stderr).decode("utf-8", "replace")
        named = [l for l in out.splitlines() if words[0] in l]
        last = named[0] if named else ""
        check(p.returncode != 0, "%s: stsd exited 0 (%s)" % (what, last))
        for w in words:
            check(w in out, "%s: the message does not name %s:\n%s" % (what, w, out[-800:]))
        T.note("%-30s exit %d in %.2f s: %s" % (what, p.returncode, took, last[-150:]))


# ---- 10 ----------------------------------------------------------------------------------

def test_replace_node_under_load(T):
    """A dead node replaced by a new one (new id, empty disk, stsd.cluster.join) while
    clients ADD through every live node: CLUSTERADD, CLUSTERREMOVE, then the old leader
    killed so that the new node must be in the majority; no ADD answered OK is lost."""
    cl = T.cluster()
    L = leader_of(cl)
    name = "replace.csv"
    lock = threading.Lock()
    hist, bad, gone = {}, [], set()
    stop = threading.Event()

    def live():
        with lock:
            return [n for n in cl.nodes if n.id not in gone]

    def client(k):
        rnd = random.Random(100 + k)
        i = 0
        while not stop.is_set():
            i += 1
            line = "n%d-%d" % (k, i)
            for attempt in range(100):
                n = rnd.choice(live())
                a = n.req("ADD", {"FILENAME": name, "LINE": line}, timeout=10)
                o = outcome(a)
                with lock:
                    hist.setdefault(line, []).append(o)
                    # A connection cut by the kill of its node: outcome unknown, counted by extra.
                    if o != "ok" and not (a[0] in (503, None) or refused(a)):
                        bad.append("ADD %s through node %d: %s" % (line, n.id, show(a)))
                if o == "ok" or stop.is_set():
                    break
                time.sleep(0.1)
            time.sleep(0.02)

    threads = [threading.Thread(target=client, args=(k,), daemon=True) for k in range(3)]
    for t in threads:
        t.start()
    try:
        time.sleep(0.5)
        V = cl.others(L)[0]
        with lock:
            gone.add(V.id)
        V.kill()
        shutil.rmtree(V.dir, ignore_errors=True)       # its disk is gone too
        N = Node(cl, 4)
        cl.nodes.append(N)
        N.start(extra=["-Dstsd.cluster.join=true"])
        t0 = time.time()
        a = ok_answer(L, "CLUSTERADD", {"NODE": 4, "RAFT": "127.0.0.1:%d" % N.raft_port,
                                        "URL": N.url}, timeout=60)
        T.note("CLUSTERADD: %s in %.2f s" % (body_text(a[2]).decode(), time.time() - t0))
        a = ok_answer(L, "CLUSTERREMOVE", {"NODE": V.id}, timeout=30)
        T.note("CLUSTERREMOVE: %s" % body_text(a[2]).decode())
        # Bad input: a taken id, a node that is not there, a malformed address.
        for params, status in (({"NODE": 4, "RAFT": "127.0.0.1:1", "URL": "http://127.0.0.1:2"}, 409),
                               ({"NODE": V.id}, 404),
                               ({"NODE": 5, "RAFT": "nowhere", "URL": N.url}, 400),
                               ({"NODE": 12, "RAFT": "127.0.0.1:1", "URL": "http://x:1"}, 400)):
            cmd = "CLUSTERREMOVE" if "RAFT" not in params else "CLUSTERADD"
            a = L.req(cmd, dict(params, FORMAT="JSON"))
            check(a[0] == status and b'"ok":false' in a[2],
                  "%s %r: want %d KO, got %s" % (cmd, params, status, show(a)))
        time.sleep(0.5)
        with lock:
            gone.add(L.id)
        L.kill()                  # the new node now makes the majority with the third
        M = leader_of(cl, 15, among=[n for n in cl.nodes if n.id not in (L.id, V.id)])
        time.sleep(0.5)
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    info = json.loads(M.req("CLUSTER", {"FORMAT": "JSON"})[2])
    ids = sorted(n["id"] for n in info["nodes"])
    check(V.id not in ids and 4 in ids, "the table of nodes after the change: %r" % ids)
    lines = peek_all(M, name)
    count = {}
    for line in lines:
        count[line] = count.get(line, 0) + 1
    added = set(l for l, h in hist.items() if "ok" in h)
    lost = sorted(added - set(count))
    extra = sorted(l for l, c in count.items()
                   if c > sum(1 for o in hist.get(l, []) if o in ("ok", "unknown")))
    T.note("new leader node %d; %d ADDs OK, %d lines there" % (M.id, len(added), len(lines)))
    check(not bad, "answers other than OK, 503 or a refused connection: %r" % bad[:10])
    check(not lost, "%d ADDs answered OK are missing: %r" % (len(lost), lost[:20]))
    check(not extra, "lines there more often than their ADDs could make them: %r" % extra[:10])
    check(len(added) > 20, "only %d ADDs were OK" % len(added))


# ---- 11 ----------------------------------------------------------------------------------

def test_nodes_by_host_name(T):
    """Raft addresses that name their host (localhost:PORT), as in containers: raft 0.15
    takes only IPv4, stsd resolves the names (src/cluster/cluster_net.c). A leader; ADDs
    through a follower; kill -9 of the leader, a new one within 5 s with every line; the
    killed node back as a follower."""
    cl = T.cluster(raft_host="localhost")
    L = leader_of(cl)
    F = cl.others(L)[0]
    # The leader serves once one follower has its entries; the other may hear from it a
    # moment later (its connection to a name is made on the resolver's next round).
    check(F.wait_follower(10) is not None, "node %d does not know the leader" % F.id)
    for i in range(20):
        ok_answer(F, "ADD", {"FILENAME": "named.csv", "LINE": "n%d" % i, "ADD_MODE": "LAST"})
    for n in cl.nodes:
        text = n.tail(200)
        check("cluster: localhost resolves to 127.0.0.1" in text and
              "raft on localhost:%d" % n.raft_port in text,
              "node %d's log says nothing of resolving localhost:\n%s" % (n.id, text[-1500:]))
    t = time.time()
    L.kill()
    M = leader_of(cl, 10, among=cl.others(L))
    took = time.time() - t
    check(took <= 5, "a new leader %.1f s after the kill" % took)
    check(peek_all(M, "named.csv") == ["n%d" % i for i in range(20)],
          "named.csv on the new leader: %r" % peek_all(M, "named.csv")[:30])
    L.start()
    check(L.wait_follower(15) is not None, "node %d not back as a follower" % L.id)
    ok_answer(L, "ADD", {"FILENAME": "named.csv", "LINE": "after", "ADD_MODE": "LAST"})
    check(length(M, "named.csv") == 21, "named.csv after an ADD through the node back")
    T.note("new leader node %d %.2f s after the kill" % (M.id, took))


# ---- 12 ----------------------------------------------------------------------------------

def state_files(node):
    """The journal's files in node's state directory (raft's own directory left out):
    {name: bytes}."""
    out = {}
    for f in os.listdir(node.state):
        if f.startswith("journal.") or f.startswith("snap-"):
            out[f] = os.path.getsize(os.path.join(node.state, f))
    return out


def changes(node, name, n):
    """n ADDs, each followed by a READ KEEP=FALSE of the line before (the queue stays as
    long), one at a time on one connection; all OK."""
    conn = http.client.HTTPConnection("127.0.0.1", node.http_port, timeout=10)
    try:
        for i in range(n):
            for path in ("/sts/ADD?FILENAME=%s&LINE=change-%07d&ADD_MODE=LAST" % (name, i),
                         "/sts/READ?FILENAME=%s&KEEP=FALSE" % name):
                conn.request("GET", path)
                r = conn.getresponse()
                b = r.read()
                check(r.status == 200 and is_ok(b), "%s through node %d (change %d): %s %r"
                      % (path, node.id, i, r.status, b[:120]))
    finally:
        conn.close()


def test_compaction_bounds_directories(T):
    """The leader compacts the state directory through the cluster (stsd.cluster.compactBytes
    small here): every node starts the same new log generation and removes the same old
    files, the directories stay bounded as changes go on, a failover serves the compacted
    state, and a node restarted with raft snapshots of the compacted directory (small
    snapshotEntries) catches up and leads with the same lists, keys and leases."""
    cl = T.cluster(extra=("-Dstsd.cluster.compactBytes=64K",
                          "-Dstsd.cluster.snapshotEntries=64"))
    L = leader_of(cl)
    big = "".join("line-%06d,%s\n" % (i, "x" * 20) for i in range(6000))
    write_file(L, "big.csv", big)
    a = ok_answer(L, "INITFILE", {"FILENAME": "big.csv"})
    check(body_text(a[2]) == b"6000", "INITFILE big.csv answered %s" % show(a))
    ok_answer(L, "ADDMULTI", {"FILENAME": "q.csv", "LINES": "\n".join("q%d" % i for i in range(50)),
                              "ADD_MODE": "LAST"})
    a = ok_answer(L, "READ", {"FILENAME": "big.csv", "KEEP": "FALSE", "LEASE": 600})
    lease = a[1].get("x-sts-lease")
    check(lease, "READ LEASE=600 gave no lease: %r" % (a[1],))
    ok_answer(L, "SET", {"NAME": "k1", "VALUE": "v1"})
    ok_answer(L, "INCR", {"NAME": "ctr", "BY": 5})
    a = ok_answer(L, "INCR", {"NAME": "sem", "BY": 1, "MAX": 2, "LEASE": 600})
    sem = a[1].get("x-sts-lease")
    # Enough changes for a first compaction (the log past 64 KiB), then for a second one
    # (its growth past what the first wrote: the 6,000 lines' file).
    changes(L, "q.csv", 1500)
    deadline = time.time() + 30
    while time.time() < deadline:
        done = [n for n in cl.nodes if "compaction into generation" in n.tail(100000)]
        if len(done) == 3:
            break
        time.sleep(0.2)
    for n in cl.nodes:
        check("started by the cluster's compaction" in n.tail(100000) and
              "compaction into generation" in n.tail(100000),
              "node %d did not compact its directory: %s" % (n.id, sorted(state_files(n))))
    first = {n.id: state_files(n) for n in cl.nodes}
    changes(L, "q.csv", 4000)
    time.sleep(1.0)
    after = {n.id: state_files(n) for n in cl.nodes}
    T.note("state directories after 1,500 and 5,500 change pairs: %s -> %s bytes" %
           ([sum(first[i].values()) for i in sorted(first)],
            [sum(after[i].values()) for i in sorted(after)]))
    for n in cl.nodes:
        logs = [f for f in after[n.id] if f.startswith("journal.")]
        check(len(logs) <= 2, "node %d keeps %d logs: %r" % (n.id, len(logs), sorted(logs)))
        # Bounded by the data (~200 KB of lines) and two logs' worth of the threshold, not
        # by the 11,000 changes (~500 KB of records).
        total = sum(after[n.id].values())
        check(total < 450000, "node %d's directory holds %d bytes after 5,500 change pairs: "
              "%r" % (n.id, total, after[n.id]))
        gens = sorted(int(f.split(".")[1]) for f in logs)
        check(gens and gens[-1] >= 3, "node %d's newest log is generation %s: fewer than two "
              "compactions" % (n.id, gens))
    def keys(node):
        # make_leader's key is the handovers' own.
        return [l for l in ok_answer(node, "KEYS")[2].split(b"\n") if b"make-leader" not in l]

    want = {"big": peek_all(L, "big.csv"), "q": peek_all(L, "q.csv"),
            "status": ok_answer(L, "STATUS")[2], "keys": keys(L),
            "leases": ok_answer(L, "LEASES", {"FILENAME": "big.csv"})[2]}
    check(len(want["big"]) == 5999 and len(want["q"]) == 50,
          "the leader has %d and %d lines" % (len(want["big"]), len(want["q"])))

    def same_state(M, what):
        got = {"big": peek_all(M, "big.csv"), "q": peek_all(M, "q.csv"),
               "status": ok_answer(M, "STATUS")[2], "keys": keys(M),
               "leases": ok_answer(M, "LEASES", {"FILENAME": "big.csv"})[2]}
        for k in want:
            check(got[k] == want[k], "%s, node %d: %s differs from the first leader's "
                  "(%r against %r)" % (what, M.id, k, got[k] if k not in ("big", "q") else
                                       len(got[k]), want[k] if k not in ("big", "q") else
                                       len(want[k])))

    L.kill()
    M = leader_of(cl, 10, among=cl.others(L))
    same_state(M, "after a kill -9 of the leader")
    # The old leader, wiped, comes back from the others' compacted directory.
    shutil.rmtree(L.state)
    L.start()
    check(L.wait_follower(20) is not None, "node %d not back as a follower" % L.id)
    commit = M.info()["commit_index"]
    # A sanitizer build on a busy machine takes its time to install the snapshot.
    catch_up(L, commit, 60, M)
    check(snapshots(L), "node %d caught up without a snapshot" % L.id)
    got = state_files(L)
    check(sum(got.values()) < 450000, "node %d restored %d bytes: %r" % (L.id, sum(got.values()),
                                                                         got))
    make_leader(cl, L)
    same_state(L, "on the wiped node, restored and leading")
    ok_answer(L, "ACK", {"FILENAME": "big.csv", "LEASE": lease})
    ok_answer(L, "RELEASE", {"NAME": "sem", "LEASE": sem})
    a = ok_answer(L, "GET", {"NAME": "ctr"})
    check(body_text(a[2]) == b"5", "GET ctr: %s" % show(a))


# ---- 13 ----------------------------------------------------------------------------------

def test_barrier_across_failover(T):
    """Barrier arrivals are connections held on the leader, never in the log: parties
    waiting through a follower when the leader dies get a 503 (nothing was counted for
    them), and once every party arrives again the new leader opens the barrier."""
    cl = T.cluster()
    L = leader_of(cl)
    F = cl.others(L)
    results = {}
    killed = []

    def arrive(node, who, timeout=30, retry=False):
        end = time.time() + 10
        while True:
            a = node.req("BARRIER", {"NAME": "gate", "PARTIES": 3, "TIMEOUT": 20},
                         timeout=timeout)
            # A follower that has not heard of the new leader yet: nothing was done.
            if not (retry and a[0] == 503 and b"No leader" in a[2] and time.time() < end and
                    (who.startswith("q") or not killed)):
                break
            time.sleep(0.1)
        results[who] = a

    waiting = [threading.Thread(target=arrive, args=(F[i], "p%d" % i), kwargs={"retry": True})
               for i in range(2)]
    for t in waiting:
        t.start()
    end = time.time() + 10
    arrived = 0
    while time.time() < end and arrived < 2:
        a = L.req("BARRIERS", {"FORMAT": "JSON"})
        try:
            arrived = sum(b.get("arrived", 0) for b in json.loads(a[2]).get("barriers", []))
        except (ValueError, AttributeError):
            arrived = 0
        time.sleep(0.05)
    check(arrived == 2, "2 arrivals through the followers did not reach the leader: %s" %
          show(L.req("BARRIERS", {"FORMAT": "JSON"})))
    killed.append(L)
    L.kill()
    for t in waiting:
        t.join(40)
    for who in ("p0", "p1"):
        a = results.get(who)
        check(a and a[0] == 503 and not is_ok(a[2]),
              "party %s, waiting through a follower when the leader died: %s" %
              (who, show(a) if a else "no answer"))
    M = leader_of(cl, 10, among=F)
    a = ok_answer(M, "BARRIERS", {"FORMAT": "JSON"})
    check(b'"gate"' not in a[2], "the new leader counts the old arrivals: %s" % show(a))
    again = [threading.Thread(target=arrive, args=(F[i % 2], "q%d" % i), kwargs={"retry": True})
             for i in range(3)]
    for t in again:
        t.start()
    for t in again:
        t.join(30)
    for who in ("q0", "q1", "q2"):
        a = results.get(who)
        check(a and a[0] == 200 and is_ok(a[2]),
              "party %s, arriving again on the new leader: %s" % (who, show(a) if a else
                                                                  "no answer"))

# ---- 15 ----------------------------------------------------------------------------------

def metric(node, line_start):
    """The value of the first /metrics line of node that starts with line_start, or
    None."""
    c = http.client.HTTPConnection("127.0.0.1", node.http_port, timeout=5)
    token = node.cl.token
    try:
        c.request("GET", "/metrics",
                  headers={"Authorization": "Bearer %s" % token} if token else {})
        text = c.getresponse().read().decode()
    except (OSError, http.client.HTTPException):
        return None
    finally:
        c.close()
    for line in text.splitlines():
        if line.startswith(line_start):
            return float(line.split()[-1])
    return None


def lines_or_none(node, name):
    """Every line of list name, or none when it is not loaded."""
    a = node.req("LENGTH", {"FILENAME": name})
    return [] if a[0] == 200 and NOT_LOADED in a[2] else peek_all(node, name)


def test_deposed_leader_keeps_process(T):
    """The leader is paused until another node leads, with a keep-alive connection open to
    it, a READ and a GET waiting on it and changes sent to it while paused. Resumed, it
    stops leading in the same process: the same pid and start time, its counters going
    on, the waiting READ and GET answered 503, each change it took as leader either
    answered OK and in the cluster, or answered 503; the keep-alive connection, the same
    socket, is answered through the new leader. Then it is made the leader again and has
    the cluster's lists and keys, from its standby, and none of the changes it dropped."""
    cl = T.cluster()
    L = leader_of(cl)
    pid = L.proc.pid
    ok_answer(L, "ADD", {"FILENAME": "base.csv", "LINE": "b0"})
    ok_answer(L, "SET", {"NAME": "k", "VALUE": "1"})
    ok_answer(L, "ADD", {"FILENAME": "empty.csv", "LINE": "e"})
    ok_answer(L, "READ", {"FILENAME": "empty.csv", "KEEP": "FALSE"})
    ka = http.client.HTTPConnection("127.0.0.1", L.http_port, timeout=10)

    def ka_req(cmd, params):
        ka.request("GET", "/sts/%s?%s" % (cmd, urllib.parse.urlencode(params)))
        r = ka.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()

    a = ka_req("LENGTH", {"FILENAME": "base.csv"})
    check(a[0] == 200 and body_text(a[2]) == b"1", "LENGTH on the leader: %s" % show(a))
    ka_port = ka.sock.getsockname()[1]
    started = metric(L, "process_start_time_seconds")
    served = metric(L, 'stsd_requests_total{command="LENGTH",result="ok"}')
    check(started and served, "no metrics from node %d" % L.id)
    answers, alock = [], threading.Lock()

    def send(tag, cmd, params, timeout=20):
        a = L.req(cmd, params, timeout=timeout)
        with alock:
            answers.append((tag, cmd, params, a))

    waiting = [threading.Thread(target=send, args=("waiting", "READ",
                                {"FILENAME": "empty.csv", "TIMEOUT": "20"}, 30), daemon=True),
               threading.Thread(target=send, args=("waiting", "GET",
                                {"NAME": "k", "VERSION": "1", "TIMEOUT": "20"}, 30),
                                daemon=True)]
    for t in waiting:
        t.start()
    end = time.time() + 10
    while time.time() < end and not (
            metric(L, 'stsd_list_waiters{list="empty.csv"}') == 1 and
            (metric(L, "stsd_key_watchers") or 0) >= 1):
        time.sleep(0.05)
    check(time.time() < end, "the READ and the GET are not waiting on node %d" % L.id)
    L.pause()
    resumed = False
    try:
        t0 = time.time()
        sent = [threading.Thread(target=send, args=("paused", "ADD",
                                 {"FILENAME": "taken.csv", "LINE": "t%d" % i}), daemon=True)
                for i in range(8)]
        for t in sent:
            t.start()
        M = leader_of(cl, 3 * ELECTION_MS / 1000 + 5, among=cl.others(L))
        T.note("node %d paused; node %d leads %.2f s later" % (L.id, M.id, time.time() - t0))
        ok_answer(M, "ADD", {"FILENAME": "base.csv", "LINE": "b1"})
        ok_answer(M, "SET", {"NAME": "k2", "VALUE": "2"})
        L.resume()
        resumed = True
        for t in waiting + sent:
            t.join(40)
    finally:
        if not resumed:
            L.resume()
    check(L.wait_follower(15) is not None, "node %d not a follower: %r" % (L.id, L.info()))
    check(L.alive() and L.proc.pid == pid, "node %d's process did not live on" % L.id)
    log = L.tail(100000)
    check("restarting" not in log, "node %d restarted:\n%s" % (L.id, L.tail(20)))
    check("follows, in the same process" in log, "node %d did not say it follows in the same "
          "process:\n%s" % (L.id, L.tail(20)))
    check(metric(L, "process_start_time_seconds") == started, "node %d's start time moved" %
          L.id)
    for tag, cmd, params, a in answers:
        if tag == "waiting":
            check(a[0] == 503 and b"Leader changed" in a[2],
                  "%s waiting on node %d while it stopped leading: %s" % (cmd, L.id, show(a)))
    took = [p["LINE"] for tag, cmd, p, a in answers
            if tag == "paused" and a[0] == 200 and is_ok(a[2])]
    unknown = [p["LINE"] for tag, cmd, p, a in answers if tag == "paused" and a[0] == 503]
    check(len(took) + len(unknown) == 8, "ADDs sent to the paused leader, answered neither OK "
          "nor 503: %s" % [show(a) for tag, c, p, a in answers if tag == "paused"])
    T.note("ADDs sent while paused: %d OK, %d 503 (%s)" % (
        len(took), len(unknown), "; ".join(sorted(set(body_text(a[2])[:50].decode(
            "utf-8", "replace") for tag, c, p, a in answers if tag == "paused")))))
    on_m = set(lines_or_none(M, "taken.csv"))
    check(set(took) <= on_m, "ADDs answered OK are missing on the new leader: %s" %
          sorted(set(took) - on_m))
    # The same socket, answered through the new leader within a few tries.
    a = None
    for _ in range(50):
        a = ka_req("LENGTH", {"FILENAME": "base.csv"})
        if a[0] == 200:
            break
        check(a[0] == 503, "keep-alive request to node %d: %s" % (L.id, show(a)))
        time.sleep(0.1)
    check(a[0] == 200 and body_text(a[2]) == b"2" and a[1].get("x-sts-leader") == str(M.id),
          "keep-alive LENGTH through node %d: %s %r" % (L.id, show(a), a[1]))
    check(ka.sock.getsockname()[1] == ka_port, "the keep-alive connection was made again")
    ka.close()
    now = metric(L, 'stsd_requests_total{command="LENGTH",result="ok"}')
    check(now is not None and now >= served, "node %d's counters went back: %s then %s" %
          (L.id, served, now))
    # Led again, in the same process: the cluster's state, from the standby.
    want_taken = sorted(on_m)
    make_leader(cl, L)
    check(L.proc.pid == pid, "node %d's process changed on the way back to leading" % L.id)
    check(sorted(peek_all(L, "base.csv")) == ["b0", "b1"], "base.csv on node %d: %r" %
          (L.id, peek_all(L, "base.csv")))
    got = sorted(lines_or_none(L, "taken.csv"))
    check(got == want_taken, "taken.csv on node %d leading again: %r, the cluster had %r" %
          (L.id, got, want_taken))
    for name, value in (("k", b"1"), ("k2", b"2")):
        a = ok_answer(L, "GET", {"NAME": name})
        check(body_text(a[2]) == value, "GET %s on node %d: %s" % (name, L.id, show(a)))
    check("taken from memory (the standby)" in L.tail(100000).split("follows, in the same "
          "process")[-1], "node %d did not lead again from its standby" % L.id)
    ok_answer(L, "ADD", {"FILENAME": "base.csv", "LINE": "b2"})
    check(length(L, "base.csv") == 3, "ADD on node %d leading again" % L.id)


# ---- 16 -----------------------------------------------------------------------------------

LOCAL_READS = "stsd_cluster_local_reads_total "


def test_follower_reads(T):
    """A follower answers LENGTH, STATUS, GET, PEEK, KEYS and COLUMNS itself, from its
    hot standby, with the
    leader's bytes (the /metrics counter says it did), and never an answer older than a
    change acknowledged before the read was sent: a write answered by the leader is seen
    by a read sent to a follower right after, one by one and under concurrent writes.
    STATUS and KEYS in JSON and a GET that waits still go to the leader. With the leader paused, a
    follower answers 503 "No leader" (retry) or the truth, and once another node leads it
    sees the changes made there. With stsd.cluster.followerReads=false it passes them on."""
    cl = T.cluster()
    L = leader_of(cl)
    F, G = cl.others(L)
    for n in (F, G):
        check(n.wait_follower(15) is not None, "node %d is no follower" % n.id)
    for i in range(3):
        ok_answer(L, "ADD", {"FILENAME": "fr.csv", "LINE": "line%d" % i})
    ok_answer(L, "ADD", {"FILENAME": "drained.csv", "LINE": "x"})
    ok_answer(L, "READ", {"FILENAME": "drained.csv", "KEEP": "FALSE"})
    ok_answer(L, "SET", {"NAME": "k1", "VALUE": "v\u00e9 1"})
    ok_answer(L, "SET", {"NAME": "gone", "VALUE": "x"})
    ok_answer(L, "DEL", {"NAME": "gone"})
    ok_answer(L, "INCR", {"NAME": "n", "BY": "5"})
    write_file(L, "cols.csv", "id,name\n1,ann\n2,bob\n3,cy\n")
    ok_answer(L, "INITFILE", {"FILENAME": "cols.csv", "HEADER": "TRUE"})
    # The leader timed the commit of each of its batches (one a change here: they came one
    # by one); the followers proposed none.
    commits = metric(L, "stsd_cluster_commit_seconds_count ")
    check(commits is not None and commits >= 9,
          "the leader counts %r commits of its batches after 9 changes" % commits)
    check(metric(L, 'stsd_cluster_commit_seconds_bucket{le="+Inf"} ') == commits and
          metric(L, "stsd_cluster_commit_seconds_sum ") > 0,
          "the leader's commit histogram does not add up")
    for n in (F, G):
        check(metric(n, "stsd_cluster_commit_seconds_count ") == 0,
              "follower %d counts commits of batches it did not propose" % n.id)
    # Answered by the follower itself: the same bytes as the leader's.
    local = [("LENGTH", {"FILENAME": "fr.csv"}), ("LENGTH", {"FILENAME": "drained.csv"}),
             ("LENGTH", {"FILENAME": "none.csv"}), ("LENGTH", {"FILENAME": "fr.csv",
                                                                "FORMAT": "JSON"}),
             ("LENGTH", None), ("STATUS", None), ("GET", {"NAME": "k1"}),
             ("GET", {"NAME": "gone"}), ("GET", {"NAME": "n"}),
             ("GET", {"NAME": "k1", "FORMAT": "JSON"}),
             ("PEEK", {"FILENAME": "fr.csv"}), ("PEEK", {"FILENAME": "fr.csv", "OFFSET": "1",
                                                        "LIMIT": "1", "FORMAT": "JSON"}),
             ("PEEK", {"FILENAME": "cols.csv", "MATCH": "b.b", "FIND_MODE": "REGEX_FIND"}),
             ("PEEK", {"FILENAME": "none.csv"}), ("PEEK", {"FILENAME": "fr.csv", "LIMIT": "0"}),
             ("KEYS", None), ("KEYS", {"PREFIX": "k"}), ("COLUMNS", {"FILENAME": "cols.csv"}),
             ("COLUMNS", {"FILENAME": "cols.csv", "FORMAT": "JSON"}),
             ("COLUMNS", {"FILENAME": "fr.csv"})]
    for n in (F, G):
        base = metric(n, LOCAL_READS)
        check(base == 0, "node %d counts %r local reads before any" % (n.id, base))
        for cmd, p in local:
            want, got = L.req(cmd, p), n.req(cmd, p)
            for h in ("content-type", "x-sts-version"):
                check(want[1].get(h) == got[1].get(h), "%s %r: %s %r on node %d, %r on the "
                      "leader" % (cmd, p, h, got[1].get(h), n.id, want[1].get(h)))
            check(got[0] == want[0] and got[2] == want[2],
                  "%s %r: node %d answered %s, the leader %s" % (cmd, p, n.id, show(got),
                                                                 show(want)))
            check(got[1].get("x-sts-leader") == str(L.id),
                  "%s on node %d: X-STS-Leader %r" % (cmd, n.id, got[1].get("x-sts-leader")))
        check(metric(n, LOCAL_READS) == len(local),
              "node %d counts %r local reads, not %d" % (n.id, metric(n, LOCAL_READS),
                                                         len(local)))
        # The leader's: STATUS and KEYS in JSON (rates, waiters), a GET that waits.
        ok_answer(n, "STATUS", {"FORMAT": "JSON"})
        ok_answer(n, "KEYS", {"FORMAT": "JSON"})
        a = n.req("GET", {"NAME": "k1", "VERSION": "7", "TIMEOUT": "0.1"})
        check(a[0] == 200 and b"v" in a[2], "GET VERSION TIMEOUT via node %d: %s" %
              (n.id, show(a)))
        check(metric(n, LOCAL_READS) == len(local),
              "node %d answered a JSON STATUS or a waiting GET itself" % n.id)

    # One by one: a change answered, then a read sent to a follower at once.
    stale = []
    for i in range(150):
        ok_answer(L, "ADD", {"FILENAME": "seq.csv", "LINE": "s%d" % i})
        n = (F, G)[i % 2]
        a = n.req("LENGTH", {"FILENAME": "seq.csv"})
        if a[2] != b"<html><title>OK</title>\n<body>%d</body>\n</html>" % (i + 1):
            stale.append((n.id, i + 1, show(a)))
    check(not stale, "reads on followers older than the change answered before them: %r"
          % stale[:5])

    # Under writes: each read sees at least every ADD answered before it was sent, and no
    # more than were sent.
    acked, sent, lock, stop = [0], [0], threading.Lock(), time.time() + 4
    problems = []

    def writer():
        c = http.client.HTTPConnection("127.0.0.1", L.http_port, timeout=10)
        while time.time() < stop:
            with lock:
                sent[0] += 1
            c.request("GET", "/sts/ADD?FILENAME=conc.csv&LINE=c")
            if is_ok(c.getresponse().read()):
                with lock:
                    acked[0] += 1
        c.close()

    def reader(n):
        c = http.client.HTTPConnection("127.0.0.1", n.http_port, timeout=10)
        while time.time() < stop:
            with lock:
                low = acked[0]
            c.request("GET", "/sts/LENGTH?FILENAME=conc.csv")
            r = c.getresponse()
            body = r.read()
            with lock:
                high = sent[0]
            if r.status == 200 and NOT_LOADED in body and low == 0:
                continue
            try:
                got = int(body_text(body))
            except ValueError:
                problems.append("node %d: %s" % (n.id, body[:80]))
                continue
            if not low <= got <= high:
                problems.append("node %d: %d lines, %d..%d expected" % (n.id, got, low, high))
        c.close()

    threads = [threading.Thread(target=writer, daemon=True) for _ in range(2)]
    threads += [threading.Thread(target=reader, args=(n,), daemon=True)
                for n in (F, G) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    check(not problems, "reads on followers under writes: %r" % problems[:5])
    reads = metric(F, LOCAL_READS) + metric(G, LOCAL_READS)
    rounds = (metric(F, 'stsd_cluster_read_index_rounds_total{result="ok"}') +
              metric(G, 'stsd_cluster_read_index_rounds_total{result="ok"}'))
    T.note("%d ADDs answered; %d reads on the followers in %d READINDEX rounds" %
           (acked[0], reads, rounds))
    check(acked[0] > 50 and reads > 200, "too little traffic to judge: %d ADDs, %d reads"
          % (acked[0], reads))

    # The leader paused: the truth or a 503 to retry, then the new leader's changes.
    L.pause()
    try:
        a = F.req("LENGTH", {"FILENAME": "seq.csv"}, timeout=20)
        check(a[2] == b"<html><title>OK</title>\n<body>150</body>\n</html>" or
              (a[0] == 503 and b"No leader" in a[2] and a[1].get("retry-after") == "1"),
              "a read on node %d with its leader paused: %s" % (F.id, show(a)))
        M = leader_of(cl, 3 * ELECTION_MS / 1000 + 5, among=(F, G))
        ok_answer(M, "ADD", {"FILENAME": "seq.csv", "LINE": "after"})
        O = G if M is F else F
        a = O.req("LENGTH", {"FILENAME": "seq.csv"})
        check(a[2] == b"<html><title>OK</title>\n<body>151</body>\n</html>",
              "node %d after node %d came to lead: %s" % (O.id, M.id, show(a)))
    finally:
        L.resume()
    check(L.wait_follower(15) is not None, "node %d no follower after SIGCONT" % L.id)
    a = L.req("LENGTH", {"FILENAME": "seq.csv"})
    check(a[2] == b"<html><title>OK</title>\n<body>151</body>\n</html>",
          "the old leader, now a follower: %s" % show(a))

    # With tokens: the question carries the read's credentials, header or TOKEN.
    tc = T.cluster("tokens", token="s3cret")
    TL = leader_of(tc)
    ok_answer(TL, "ADD", {"FILENAME": "t.csv", "LINE": "x"})
    TF = tc.others(TL)[0]
    check(TF.wait_follower(15) is not None, "node %d of the second cluster" % TF.id)
    a = TF.req("LENGTH", {"FILENAME": "t.csv", "TOKEN": "s3cret"}, headers={})
    check(a[2] == b"<html><title>OK</title>\n<body>1</body>\n</html>", "LENGTH with TOKEN "
          "on a follower: %s" % show(a))
    a = TF.req("LENGTH", {"FILENAME": "t.csv"}, headers={"Authorization": "Bearer s3cret"})
    check(a[2] == b"<html><title>OK</title>\n<body>1</body>\n</html>", "LENGTH with a "
          "bearer header on a follower: %s" % show(a))
    a = TF.req("LENGTH", {"FILENAME": "t.csv", "TOKEN": "wrong"}, headers={})
    check(a[0] == 401, "LENGTH with a wrong TOKEN on a follower: %s" % show(a))
    check(metric(TF, LOCAL_READS) == 2, "node %d of the second cluster read %r locally, not 2"
          % (TF.id, metric(TF, LOCAL_READS)))
    tc.kill()

    # Switched off: the same answer, from the leader.
    O.stop()
    O.start(extra=("-Dstsd.cluster.followerReads=false",))
    check(O.wait_follower(15) is not None, "node %d no follower after its restart" % O.id)
    a = O.req("LENGTH", {"FILENAME": "seq.csv"})
    check(a[2] == b"<html><title>OK</title>\n<body>151</body>\n</html>",
          "node %d with followerReads=false: %s" % (O.id, show(a)))
    check(metric(O, LOCAL_READS) == 0, "node %d with followerReads=false read locally" % O.id)


TESTS = [
    (test_every_command_through_each_node, 40),
    (test_answers_identical_to_one_stsd, 30),
    (test_batched_forwards, 45),
    (test_kill_leader_under_load, 60),
    (test_restarted_node_catches_up_from_snapshot, 120),
    (test_paused_leader, 60),
    (test_late_forward_never_runs, 40),
    (test_dead_node_shown_dead, 60),
    (test_added_node_restarts_at_once, 60),
    (test_leases_and_once_survive_failover, 40),
    (test_standby_serves_from_memory, 90),
    (test_save_writes_on_all_three, 30),
    (test_rolling_restart, 90),
    (test_bad_cluster_configuration, 45),
    (test_replace_node_under_load, 90),
    (test_nodes_by_host_name, 45),
    (test_compaction_bounds_directories, 180),
    (test_barrier_across_failover, 60),
    (test_deposed_leader_keeps_process, 90),
    (test_follower_reads, 90),
]


def run_one(stsd, name, work):
    """In the child: runs test name; exit 0 pass, 1 fail. Writes work/result.json."""
    fn = dict((f.__name__, f) for f, _ in TESTS)[name]
    T = Ctx(stsd, work)
    rc = 1
    try:
        fn(T)
        rc = 0
    except Failure as e:
        print("  FAILED: %s" % e, flush=True)
    except Exception:
        print("  ERROR:\n" + traceback.format_exc(), flush=True)
    finally:
        # A sanitizer build (make test-tsan, test-asan) reports into the nodes' logs.
        for cl in T.clusters:
            for n in cl.nodes:
                text = n.tail(10000000)
                for mark in ("WARNING: ThreadSanitizer", "ERROR: AddressSanitizer",
                             "ERROR: LeakSanitizer", "runtime error:"):
                    if mark in text:
                        at = text.index(mark)
                        print("  FAILED: node %d's log has a sanitizer report:\n%s" %
                              (n.id, text[at:at + 3000]), flush=True)
                        rc = 1
                        break
        if rc:
            for cl in T.clusters:
                for n in cl.nodes:
                    warn = [l for l in n.tail(100000).splitlines()
                            if "[warn]" in l or "[error]" in l]
                    print("  --- node %d (%s): %d warnings and errors%s\n%s" %
                          (n.id, n.log, len(warn), ", the first ones:" if warn else "",
                           "".join("    %s\n" % l[:300] for l in warn[:8])), flush=True)
        T.cleanup()
        with open(os.path.join(work, "result.json"), "w") as f:
            json.dump({"skips": T.skips, "notes": T.notes}, f)
    return rc


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "--one":
        sys.exit(run_one(sys.argv[2], sys.argv[3], sys.argv[4]))
    if len(sys.argv) < 2:
        print("usage: %s STSD [TEST ...]" % sys.argv[0], file=sys.stderr)
        sys.exit(2)
    stsd = os.path.abspath(sys.argv[1])
    wanted = sys.argv[2:]
    tests = [(f, limit) for f, limit in TESTS if not wanted or f.__name__ in wanted]
    if wanted and len(tests) != len(wanted):
        print("unknown test among %r" % wanted, file=sys.stderr)
        sys.exit(2)
    root = tempfile.mkdtemp(prefix="stsd-cluster-", dir="/tmp")
    results = []
    t_all = time.time()
    for f, limit in tests:
        name = f.__name__
        work = os.path.join(root, name)
        os.makedirs(work)
        print("%s ..." % name, flush=True)
        t = time.time()
        child = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--one", stsd,
                                  name, work], start_new_session=True)
        try:
            rc = child.wait(limit)
        except subprocess.TimeoutExpired:
            print("  FAILED: still running after its limit of %d s" % limit, flush=True)
            rc = -1
        finally:
            # The child's group holds its stsd processes: whatever is left goes.
            try:
                os.killpg(child.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            child.wait()
        took = time.time() - t
        skips = []
        try:
            with open(os.path.join(work, "result.json")) as fh:
                skips = json.load(fh)["skips"]
        except (OSError, ValueError, KeyError):
            pass
        verdict = "PASS" if rc == 0 else "FAIL"
        if rc == 0 and skips:
            verdict = "PASS (partly SKIPPED: %d part%s)" % (len(skips), "s" * (len(skips) > 1))
        print("%-48s %s  %5.1f s" % (name, verdict, took), flush=True)
        if rc == 0:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("  work directory kept: %s" % work, flush=True)
        results.append((name, rc, took, skips))
    failed = [r for r in results if r[1] != 0]
    print("cluster tests: %d passed, %d failed, %.1f s" % (len(results) - len(failed),
                                                           len(failed), time.time() - t_all))
    for name, rc, took, skips in results:
        for s in skips:
            print("  skipped in %s: %s" % (name, s))
    if failed:
        print("failed: %s; kept in %s" % (", ".join(r[0] for r in failed), root))
        sys.exit(1)
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
