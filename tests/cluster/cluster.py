# SPDX-License-Identifier: Apache-2.0
"""cluster.py - three (or more) real stsd processes on loopback for the cluster tests:
start, kill -9, SIGTERM, SIGSTOP/SIGCONT, restart on the same disk; requests through any
node; who leads, as each node's CLUSTER says."""
import http.client
import json
import os
import signal
import socket
import subprocess
import time
import urllib.parse


_given = set()


def free_port():
    """A TCP port nothing listens on now (the kernel's pick), on 127.0.0.1, and never one
    this process handed out before: the kernel may pick a closed port again at once, and
    two nodes given the same one refuse to start (stsd says the URL is another node's)."""
    for _ in range(100):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in _given:
            _given.add(port)
            return port
    raise RuntimeError("no free port the kernel would give that was not given already")


def is_ok(body):
    """An STS answer that says OK (HTML title or JSON's "ok":true)."""
    return b"<title>OK</title>" in body or body.lstrip().startswith(b'{"ok":true')


def body_text(body):
    """The text between <body> and </body> of an HTML answer (bytes), else the answer."""
    a, b = body.find(b"<body>"), body.rfind(b"</body>")
    return body[a + 6:b] if a >= 0 and b > a else body


class Node:
    def __init__(self, cl, nid):
        self.cl, self.id = cl, nid
        self.http_port, self.raft_port = free_port(), free_port()
        self.url = "http://127.0.0.1:%d" % self.http_port
        self.dir = os.path.join(cl.work, "n%d" % nid)
        self.data = os.path.join(self.dir, "data")
        self.state = os.path.join(self.dir, "state")
        os.makedirs(self.data, exist_ok=True)
        self.proc = None
        self.logf = None
        self.log = os.path.join(cl.work, "n%d.log" % nid)

    def args(self, extra=()):
        args = [self.cl.stsd, "-DjmeterPlugin.sts.daemon=true",
                "-DjmeterPlugin.sts.port=%d" % self.http_port, "-Dstsd.bind=127.0.0.1",
                "-DjmeterPlugin.sts.datasetDirectory=%s" % self.data,
                "-Dstsd.stateDirectory=%s" % self.state,
                "-Dstsd.cluster.self=%d" % self.id,
                "-Dstsd.cluster.electionTimeout=%d" % self.cl.election_ms]
        for n in self.cl.nodes:
            args.append("-Dstsd.cluster.node.%d=%s:%d %s" % (n.id, self.cl.raft_host, n.raft_port,
                                                              n.url))
        return args + list(self.cl.extra) + list(extra)

    def start(self, extra=()):
        """Starts (or starts again, on the same ports and directories) this node."""
        if self.alive():
            raise RuntimeError("node %d is running already" % self.id)
        if self.logf:
            self.logf.close()
        self.logf = open(self.log, "ab")
        self.logf.write(b"==== test harness: start at %.3f\n" % time.time())
        self.logf.flush()
        self.proc = subprocess.Popen(self.args(extra), stdin=subprocess.DEVNULL,
                                     stdout=self.logf, stderr=subprocess.STDOUT)
        return self

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill(self):
        """kill -9, and reaped."""
        if self.alive():
            self.proc.kill()
            self.proc.wait(10)

    def stop(self, timeout=10):
        """SIGTERM; returns the exit status (None when it was never started)."""
        if not self.alive():
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def pause(self):
        os.kill(self.proc.pid, signal.SIGSTOP)

    def resume(self):
        os.kill(self.proc.pid, signal.SIGCONT)

    def req(self, cmd, params=None, method="GET", body=None, headers=None, timeout=10):
        """One request on a connection of its own; returns (status, headers dict
        (lower-case names), body bytes), or (None, {}, error text) when the connection
        failed (refused, cut, timed out)."""
        path = "/sts/" + cmd
        if params:
            path += "?" + urllib.parse.urlencode(params)
        c = http.client.HTTPConnection("127.0.0.1", self.http_port, timeout=timeout)
        if headers is None and self.cl.token:
            headers = {"Authorization": "Bearer %s" % self.cl.token}
        try:
            c.request(method, path, body=body, headers=headers or {})
            r = c.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
        except (OSError, http.client.HTTPException) as e:
            return None, {}, ("%s: %s" % (type(e).__name__, e)).encode()
        finally:
            c.close()

    def info(self, timeout=2):
        """This node's CLUSTER as a dict, or None when it does not answer."""
        st, h, b = self.req("CLUSTER", {"FORMAT": "JSON"}, timeout=timeout)
        if st != 200:
            return None
        try:
            return json.loads(b)
        except ValueError:
            return None

    def wait_follower(self, timeout=15.0):
        """Waits until this node answers CLUSTER as a follower of a known leader; returns
        its CLUSTER, or None at the timeout."""
        end = time.time() + timeout
        while time.time() < end:
            i = self.info() if self.alive() else None
            if i and i.get("role") == "follower" and i.get("leader"):
                return i
            time.sleep(0.05)
        return None

    def tail(self, n=30):
        try:
            with open(self.log, "rb") as f:
                return b"".join(f.readlines()[-n:]).decode("utf-8", "replace")
        except OSError:
            return ""


class Cluster:
    def __init__(self, stsd, work, n=3, election_ms=1000, extra=(), raft_host="127.0.0.1",
                 token=None):
        """raft_host: the host of every node's raft address (a name: stsd resolves it).
        token: stsd.token of every node, sent by req unless its headers say otherwise."""
        self.stsd, self.work, self.election_ms, self.extra = stsd, work, election_ms, extra
        self.raft_host = raft_host
        self.token = token
        if token:
            self.extra = tuple(extra) + ("-Dstsd.token=%s" % token,)
        os.makedirs(work, exist_ok=True)
        self.nodes = []
        for i in range(1, n + 1):
            self.nodes.append(Node(self, i))

    def node(self, nid):
        return self.nodes[nid - 1]

    def start(self):
        for n in self.nodes:
            n.start()
        return self

    def leader(self, timeout=10.0, among=None):
        """The node that serves as leader (asked through CLUSTER on each live node), or
        None after timeout seconds."""
        end = time.time() + timeout
        while True:
            for n in among or self.nodes:
                if not n.alive():
                    continue
                i = n.info()
                if i and i.get("serving") and i.get("role") == "leader":
                    return n
            if time.time() >= end:
                return None
            time.sleep(0.05)

    def others(self, node):
        return [n for n in self.nodes if n is not node]

    def forwarding(self, leader):
        """Whether followers forward requests to the leader: a follower's answer to a
        command carries X-STS-Leader."""
        for n in self.others(leader):
            if n.alive():
                st, h, b = n.req("LENGTH", {"FILENAME": "forwarding-probe.csv"}, timeout=5)
                return st is not None and "x-sts-leader" in h
        return False

    def kill(self):
        """kill -9 every node (the cleanup of a test, pass or fail)."""
        for n in self.nodes:
            try:
                n.kill()
            except Exception:
                pass
            if n.logf:
                n.logf.close()
                n.logf = None

    def stop(self):
        for n in self.nodes:
            try:
                n.stop(10)
            except Exception:
                n.kill()
