# SPDX-License-Identifier: Apache-2.0
"""nodes.py - three real stsd processes, each in its network namespace (netns.py), with
its own state and dataset directories: start (optionally under libfaketime), kill -9,
SIGSTOP/SIGCONT, wipe, and one HTTP request at a time to any of them."""
import http.client
import json
import os
import shutil
import signal
import subprocess
import time
import urllib.parse

import netns

# A raft snapshot every 64 entries (batches) and a compaction of the state directory each
# time its log passes 64 KiB: many of both in every run.
SNAPSHOT_ENTRIES = 64
COMPACT_BYTES = "64K"
# Four batches in flight (the default is one): the pipeline's order and outcome-unknown
# rules under the faults.
PIPELINE = 4
FAKETIME_LIBS = ["/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1",
                 "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
                 "/usr/lib/faketime/libfaketimeMT.so.1"]


def faketime_lib():
    for p in FAKETIME_LIBS:
        if os.path.exists(p):
            return p
    for root, _, files in os.walk("/usr/lib"):
        if "libfaketimeMT.so.1" in files:
            return os.path.join(root, "libfaketimeMT.so.1")
    return None


def request(ip, cmd, params=None, timeout=5.0, port=netns.HTTP_PORT):
    """One GET. Returns (phase, status, headers, body): phase "connect" when no
    connection was made (nothing sent), "sent" when it failed after the request may have
    gone out, "answer" with a status."""
    path = "/sts/" + cmd
    if params:
        path += "?" + urllib.parse.urlencode(params)
    c = http.client.HTTPConnection(ip, port, timeout=timeout)
    try:
        try:
            c.connect()
        except (OSError, http.client.HTTPException) as e:
            return "connect", None, {}, repr(e).encode()
        try:
            c.request("GET", path)
            r = c.getresponse()
            return "answer", r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
        except (OSError, http.client.HTTPException) as e:
            return "sent", None, {}, repr(e).encode()
    finally:
        c.close()


class Node:
    def __init__(self, cluster, nid):
        self.cl, self.id = cluster, nid
        self.ns, self.ip = netns.node_ns(nid), netns.node_ip(nid)
        self.dir = os.path.join(cluster.work, "n%d" % nid)
        self.state = os.path.join(self.dir, "state")
        self.data = os.path.join(self.dir, "data")
        self.log = os.path.join(cluster.work, "n%d.log" % nid)
        self.proc = None
        self.skew = 0                  # seconds of faketime offset of the running process
        self.paused = False
        self.join = False              # a replacement: waits to be added (CLUSTERADD)
        os.makedirs(self.data, exist_ok=True)

    def args(self):
        a = [self.cl.stsd, "-DjmeterPlugin.sts.daemon=true",
             "-DjmeterPlugin.sts.port=%d" % netns.HTTP_PORT, "-Dstsd.bind=%s" % self.ip,
             "-DjmeterPlugin.sts.datasetDirectory=%s" % self.data,
             "-Dstsd.stateDirectory=%s" % self.state,
             "-Dstsd.cluster.self=%d" % self.id,
             "-Dstsd.cluster.electionTimeout=%d" % self.cl.election_ms,
             # Small, so that compactions of the state directory, raft's snapshots of it,
             # the log truncated behind them and catching up from one all happen during the
             # faults (docs/faults.md).
             "-Dstsd.cluster.snapshotEntries=%d" % SNAPSHOT_ENTRIES,
             "-Dstsd.cluster.compactBytes=%s" % COMPACT_BYTES,
             "-Dstsd.cluster.pipeline=%d" % PIPELINE]
        listed = list(self.cl.nodes) + ([self] if self not in self.cl.nodes else [])
        for n in sorted(listed, key=lambda n: n.id):
            a.append("-Dstsd.cluster.node.%d=%s:%d http://%s:%d" % (
                n.id, n.ip, netns.RAFT_PORT, n.ip, netns.HTTP_PORT))
        if self.join:
            a.append("-Dstsd.cluster.join=true")
        # FAULTS_AUDIT=1: each node's audit log in its directory, kept with a failed run,
        # to follow a line through the nodes (off by default: it costs a write per change).
        if os.environ.get("FAULTS_AUDIT"):
            a.append("-Dstsd.auditLog=%s" % os.path.join(self.dir, "audit.jsonl"))
        return a

    def raft_addr(self):
        return "%s:%d" % (self.ip, netns.RAFT_PORT)

    def url(self):
        return "http://%s:%d" % (self.ip, netns.HTTP_PORT)

    def start(self, skew=0):
        """Starts stsd in the node's namespace; skew: seconds its wall clock is off
        (libfaketime), kept across the re-executions of a deposed leader."""
        env = dict(os.environ)
        if skew:
            env["LD_PRELOAD"] = self.cl.faketime
            env["FAKETIME"] = "%+ds" % skew
            env["FAKETIME_DONT_RESET"] = "1"
            env["FAKETIME_DONT_FAKE_MONOTONIC"] = "1"
        os.makedirs(self.data, exist_ok=True)
        with open(self.log, "ab") as f:
            f.write(("=== start %.3f skew %+d\n" % (time.monotonic(), skew)).encode())
            self.proc = subprocess.Popen(["ip", "netns", "exec", self.ns] + self.args(),
                                         stdin=subprocess.DEVNULL, stdout=f,
                                         stderr=subprocess.STDOUT, env=env)
        self.skew, self.paused = skew, False
        return self

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill(self):
        if self.proc is None:
            return
        if self.alive():
            try:
                os.kill(self.proc.pid, signal.SIGCONT)
                self.proc.kill()
            except ProcessLookupError:
                pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            pass
        self.paused = False

    def stop(self, timeout=8):
        """SIGTERM (a leader hands over first); kill -9 past timeout. Returns the exit
        status, or None when it had to be killed."""
        if not self.alive():
            return self.proc.returncode if self.proc else None
        if self.paused:
            self.resume()
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return None

    def pause(self):
        if self.alive():
            os.kill(self.proc.pid, signal.SIGSTOP)
            self.paused = True

    def resume(self):
        if self.alive():
            os.kill(self.proc.pid, signal.SIGCONT)
        self.paused = False

    def wipe(self):
        """Its state (raft's log and snapshots with it) and its dataset directory gone."""
        shutil.rmtree(self.state, ignore_errors=True)
        shutil.rmtree(self.data, ignore_errors=True)
        os.makedirs(self.data, exist_ok=True)

    def req(self, cmd, params=None, timeout=5.0):
        return request(self.ip, cmd, params, timeout)

    def cluster_view(self, timeout=1.0):
        """CLUSTER?FORMAT=JSON as a dict, or None."""
        ph, st, h, b = self.req("CLUSTER", {"FORMAT": "JSON"}, timeout)
        if st != 200:
            return None
        try:
            return json.loads(b)
        except ValueError:
            return None


class Cluster:
    def __init__(self, stsd, work, n=3, election_ms=1000):
        self.stsd, self.work, self.election_ms = stsd, work, election_ms
        self.faketime = faketime_lib()
        os.makedirs(work, exist_ok=True)
        # The members now (a list replaced whole, never changed in place: client threads
        # read it while the nemesis replaces a node), and every node ever started.
        self.nodes = [Node(self, i) for i in range(1, n + 1)]
        self.every = list(self.nodes)

    def node(self, nid):
        for n in self.every:
            if n.id == nid:
                return n
        raise KeyError(nid)

    def ids(self):
        return [n.id for n in self.nodes]

    def next_id(self):
        return max(n.id for n in self.every) + 1

    def new_node(self, nid):
        n = Node(self, nid)
        n.join = True
        self.every.append(n)
        return n

    def start(self):
        for n in self.nodes:
            n.start()
        return self

    def views(self, timeout=1.0):
        """{nid: CLUSTER dict or None} of every node, asked one after the other."""
        return {n.id: (n.cluster_view(timeout) if n.alive() and not n.paused else None)
                for n in self.nodes}

    def leader(self, timeout=10.0):
        """The id of the node that serves as leader, or None after timeout seconds."""
        end = time.monotonic() + timeout
        while True:
            for nid, v in self.views().items():
                if v and v.get("serving") and v.get("role") == "leader":
                    return nid
            if time.monotonic() > end:
                return None
            time.sleep(0.1)

    def kill_all(self):
        for n in self.every:
            n.kill()
