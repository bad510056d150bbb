# SPDX-License-Identifier: Apache-2.0
"""netns.py - the network the fault checker builds and tears down: a namespace per node,
one for the clients and one for the bridge between them, in a private /24 that exists
only inside those namespaces. Partitions are iptables DROP rules inside the node
namespaces; delay and loss are tc netem on the nodes' links when the kernel has it,
else an NFQUEUE delayer (nfqdelay.py) in the node's namespace.

Every name starts with PREFIX, so that a run that died (kill -9, power) is cleaned up by
the next one: cleanup_leftovers() deletes every namespace of that prefix and the
processes still in them."""
import ctypes
import os
import signal
import subprocess
import sys
import time

PREFIX = "stsdf-"
SUBNET = "10.213.117"          # a /24 that exists only inside our namespaces
BRIDGE_NS = PREFIX + "br"
CLIENT_NS = PREFIX + "cl"
CLIENT_IP = SUBNET + ".100"
HTTP_PORT = 9191
RAFT_PORT = 9201
CLONE_NEWNET = 0x40000000
HERE = os.path.dirname(os.path.abspath(__file__))

_libc = ctypes.CDLL(None, use_errno=True)


def node_ns(nid):
    return "%sn%d" % (PREFIX, nid)


def node_ip(nid):
    return "%s.%d" % (SUBNET, 10 + nid)


def sh(*args, check=True, quiet=False, timeout=20):
    """Runs a command; returns its CompletedProcess. check: raise on a non-zero exit."""
    r = subprocess.run(list(args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout)
    if check and r.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(args), r.returncode,
                                                r.stderr.decode(errors="replace").strip()))
    return r


def in_ns(ns, *args, **kw):
    return sh("ip", "netns", "exec", ns, *args, **kw)


def setns(path):
    """Moves the calling thread (and the threads it starts later) into the network
    namespace at path."""
    fd = os.open(path, os.O_RDONLY)
    try:
        if _libc.setns(fd, CLONE_NEWNET) != 0:
            e = ctypes.get_errno()
            raise OSError(e, "setns(%s): %s" % (path, os.strerror(e)))
    finally:
        os.close(fd)


def pids_in_ns(ns):
    r = sh("ip", "netns", "pids", ns, check=False)
    return [int(p) for p in r.stdout.split()] if r.returncode == 0 else []


def cleanup_leftovers(log=print):
    """Kills the processes left in our namespaces and deletes the namespaces (a run that
    died before its teardown). Returns how many namespaces it deleted."""
    r = sh("ip", "netns", "list", check=False)
    names = [l.split()[0] for l in r.stdout.decode().splitlines() if l.strip()]
    ours = [n for n in names if n.startswith(PREFIX)]
    for ns in ours:
        for pid in pids_in_ns(ns):
            if pid == os.getpid():
                continue
            try:
                os.kill(pid, signal.SIGCONT)
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    for ns in ours:
        for _ in range(50):
            if not pids_in_ns(ns):
                break
            time.sleep(0.1)
        sh("ip", "netns", "del", ns, check=False)
    if ours:
        log("faults: removed %d namespaces left by an earlier run: %s" % (len(ours), " ".join(ours)))
    return len(ours)


def netem_available():
    """Whether this kernel has tc's netem (some VM kernels are built without it)."""
    ns = PREFIX + "probe"
    sh("ip", "netns", "add", ns, check=False)
    try:
        in_ns(ns, "ip", "link", "set", "lo", "up", check=False)
        r = in_ns(ns, "tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms",
                  check=False)
        return r.returncode == 0
    finally:
        sh("ip", "netns", "del", ns, check=False)


class Net:
    """The namespaces of one run: nodes 1..n, the clients, the bridge."""

    def __init__(self, n=3, use_netem=None):
        self.ids = list(range(1, n + 1))      # the node namespaces made so far
        self.use_netem = netem_available() if use_netem is None else use_netem
        self.delayers = {}          # nid -> Popen of nfqdelay.py
        self.netem_on = set()
        self.root_ns_fd = None

    def up(self):
        sh("ip", "netns", "add", BRIDGE_NS)
        in_ns(BRIDGE_NS, "ip", "link", "set", "lo", "up")
        in_ns(BRIDGE_NS, "ip", "link", "add", "br0", "type", "bridge")
        in_ns(BRIDGE_NS, "ip", "link", "set", "br0", "up")
        # The bridge forwards at once (no STP learning delay on a fresh port).
        in_ns(BRIDGE_NS, "ip", "link", "set", "br0", "type", "bridge", "forward_delay", "0",
              check=False)
        self.plug(CLIENT_NS, "vc", CLIENT_IP)
        for i in self.ids:
            self.plug(node_ns(i), "v%d" % i, node_ip(i))

    def plug(self, ns, port, ip):
        """A namespace with its veth on the bridge and its address."""
        sh("ip", "netns", "add", ns)
        in_ns(ns, "ip", "link", "set", "lo", "up")
        sh("ip", "-n", BRIDGE_NS, "link", "add", port, "type", "veth", "peer", "name",
           "eth0", "netns", ns)
        sh("ip", "-n", BRIDGE_NS, "link", "set", port, "master", "br0", "up")
        in_ns(ns, "ip", "addr", "add", ip + "/24", "dev", "eth0")
        in_ns(ns, "ip", "link", "set", "eth0", "up")
        if ns != CLIENT_NS:
            # Our chains, so that a heal flushes exactly what the faults added.
            for chain, hook in (("FAULTS-IN", "INPUT"), ("FAULTS-OUT", "OUTPUT")):
                in_ns(ns, "iptables", "-N", chain)
                in_ns(ns, "iptables", "-A", hook, "-j", chain)
        end = time.time() + 10
        while time.time() < end:
            r = in_ns(ns, "ip", "-o", "link", "show", "eth0", check=False)
            if b"LOWER_UP" in r.stdout:
                break
            time.sleep(0.05)

    def add_node(self, nid):
        """The namespace of a node that joins later (a replacement under a new id)."""
        if nid not in self.ids:
            self.plug(node_ns(nid), "v%d" % nid, node_ip(nid))
            self.ids.append(nid)

    def enter_clients(self):
        """Moves this process's calling thread into the clients' namespace, keeping a way
        back (leave_clients)."""
        self.root_ns_fd = os.open("/proc/self/ns/net", os.O_RDONLY)
        setns("/run/netns/" + CLIENT_NS)

    def leave_clients(self):
        if self.root_ns_fd is not None:
            _libc.setns(self.root_ns_fd, CLONE_NEWNET)
            os.close(self.root_ns_fd)
            self.root_ns_fd = None

    # --- partitions ---------------------------------------------------------------
    def cut(self, a, b):
        """Drops every packet between nodes a and b, both ways, in both namespaces."""
        for x, y in ((a, b), (b, a)):
            ns = node_ns(x)
            in_ns(ns, "iptables", "-I", "FAULTS-IN", "-s", node_ip(y), "-j", "DROP")
            in_ns(ns, "iptables", "-I", "FAULTS-OUT", "-d", node_ip(y), "-j", "DROP")

    def isolate(self, a, members):
        for b in members:
            if b != a:
                self.cut(a, b)

    def heal_partitions(self):
        for i in self.ids:
            for chain in ("FAULTS-IN", "FAULTS-OUT"):
                in_ns(node_ns(i), "iptables", "-F", chain, check=False)

    # --- delay and loss ------------------------------------------------------------
    def slow(self, nid, delay_ms, jitter_ms, loss_pct):
        """Delay (ms, with jitter) and loss (percent) on everything node nid sends."""
        ns = node_ns(nid)
        if self.use_netem:
            in_ns(ns, "tc", "qdisc", "replace", "dev", "eth0", "root", "netem", "delay",
                  "%dms" % delay_ms, "%dms" % jitter_ms, "loss", "%g%%" % loss_pct)
            self.netem_on.add(nid)
            return
        self.unslow(nid)
        p = subprocess.Popen(["ip", "netns", "exec", ns, sys.executable,
                              os.path.join(HERE, "nfqdelay.py"), "0", str(delay_ms),
                              str(jitter_ms), str(loss_pct)],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT)
        line = p.stdout.readline()         # "bound" once it listens on its queue
        if not line.startswith(b"bound"):
            p.kill()
            p.wait()
            raise RuntimeError("nfqdelay in %s: %r" % (ns, line))
        self.delayers[nid] = p
        # Partition rules are inserted at the top, so they still drop before the queue.
        in_ns(ns, "iptables", "-A", "FAULTS-OUT", "-o", "eth0", "-j", "NFQUEUE",
              "--queue-num", "0", "--queue-bypass")

    def unslow(self, nid):
        ns = node_ns(nid)
        if nid in self.netem_on:
            in_ns(ns, "tc", "qdisc", "del", "dev", "eth0", "root", check=False)
            self.netem_on.discard(nid)
        p = self.delayers.pop(nid, None)
        if p:
            in_ns(ns, "iptables", "-D", "FAULTS-OUT", "-o", "eth0", "-j", "NFQUEUE",
                  "--queue-num", "0", "--queue-bypass", check=False)
            time.sleep(0.3)                # the packets it holds go out first
            p.terminate()
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def heal(self):
        for nid in list(self.netem_on) + list(self.delayers):
            self.unslow(nid)
        self.heal_partitions()

    def down(self):
        """Tears everything down: the delayers, the processes left in the namespaces,
        the namespaces (their veths and the bridge go with them)."""
        self.leave_clients()
        for nid in list(self.delayers):
            p = self.delayers.pop(nid)
            p.kill()
            p.wait()
        cleanup_leftovers(log=lambda *a: None)
