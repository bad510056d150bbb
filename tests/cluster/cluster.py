# SPDX-License-Identifier: Apache-2.0
"""cluster.py - three (or more) real stsd processes on loopback for the cluster tests:
start, kill -9, SIGSTOP, restart with the same disk; requests through any node."""
import http.client
import os
import signal
import socket
import subprocess
import time
import urllib.parse


def free_port():
    """A TCP port nothing listens on now (the kernel's pick), on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Node:
    def __init__(self, cl, nid):
        self.cl, self.id = cl, nid
        self.http_port, self.raft_port = free_port(), free_port()
        self.url = "http://127.0.0.1:%d" % self.http_port
        self.dir = os.path.join(cl.work, "n%d" % nid)
        os.makedirs(os.path.join(self.dir, "data"), exist_ok=True)
        self.proc = None
        self.log = os.path.join(cl.work, "n%d.log" % nid)

    def start(self, extra=()):
        args = [self.cl.stsd, "-Djmeterplugin.sts.daemon=true".replace("plugin", "Plugin"),
                "-DjmeterPlugin.sts.port=%d" % self.http_port, "-Dstsd.bind=127.0.0.1",
                "-DjmeterPlugin.sts.datasetDirectory=%s" % os.path.join(self.dir, "data"),
                "-Dstsd.stateDirectory=%s" % os.path.join(self.dir, "state"),
                "-Dstsd.cluster.self=%d" % self.id,
                "-Dstsd.cluster.electionTimeout=%d" % self.cl.election_ms]
        for n in self.cl.nodes:
            args.append("-Dstsd.cluster.node.%d=127.0.0.1:%d %s" % (n.id, n.raft_port, n.url))
        args += list(self.cl.extra) + list(extra)
        self.logf = open(self.log, "ab")
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self.logf,
                                     stderr=subprocess.STDOUT)
        return self

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill(self):
        if self.alive():
            self.proc.kill()
            self.proc.wait(10)

    def stop(self, timeout=10):
        """SIGTERM; returns the exit status."""
        if not self.alive():
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def pause(self):
        os.kill(self.proc.pid, signal.SIGSTOP)

    def resume(self):
        os.kill(self.proc.pid, signal.SIGCONT)

    def req(self, cmd, params=None, method="GET", body=None, headers=None, timeout=10):
        """One request; returns (status, headers dict (lower-case names), body bytes), or
        (None, {}, error text) when the connection failed."""
        path = "/sts/" + cmd
        if params:
            path += "?" + urllib.parse.urlencode(params)
        c = http.client.HTTPConnection("127.0.0.1", self.http_port, timeout=timeout)
        try:
            c.request(method, path, body=body, headers=headers or {})
            r = c.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
        except (OSError, http.client.HTTPException) as e:
            return None, {}, str(e).encode()
        finally:
            c.close()


class Cluster:
    def __init__(self, stsd, work, n=3, election_ms=1000, extra=()):
        self.stsd, self.work, self.election_ms, self.extra = stsd, work, election_ms, extra
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
        while time.time() < end:
            for n in among or self.nodes:
                if not n.alive():
                    continue
                st, h, b = n.req("CLUSTER", {"FORMAT": "JSON"}, timeout=2)
                if st == 200 and b'"serving":true' in b.replace(b" ", b""):
                    return n
            time.sleep(0.05)
        return None

    def stop(self):
        for n in self.nodes:
            try:
                n.stop(10)
            except subprocess.TimeoutExpired:
                n.kill()
            except Exception:
                n.kill()
