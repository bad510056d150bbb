# SPDX-License-Identifier: Apache-2.0
"""nemesis.py - the faults of one run: a schedule drawn from the seed, then carried out
against the cluster while the clients run, every step logged in the history.

The schedule is a pure function of (seed, seconds): `make test-faults SEED=n` replays
the same faults at the same offsets; which node "the leader" is, and the exact timing,
may differ. Its first two faults are KINDS[2*seed % 7] and KINDS[(2*seed + 1) % 7], so
that any four consecutive seeds cover every kind; the rest are drawn at random."""
import random
import threading
import time

KINDS = ["isolate-leader", "split", "kill", "pause-leader", "slow", "skew", "wipe"]
START = 4.0                  # seconds of calm before the first fault
TAIL = 8.0                   # the last fault ends this long before the clients stop


def schedule(seed, seconds):
    rnd = random.Random(seed)
    forced = [KINDS[(2 * seed) % 7], KINDS[(2 * seed + 1) % 7]]
    steps, t = [], START
    while True:
        kind = forced.pop(0) if forced else rnd.choice(KINDS)
        # Leases a skewed leader wrote must end within the run, not stall the drain; a
        # wiped node may wait for raft's install-snapshot timeout (30 s) before it gets
        # the log after its snapshot, and should have caught up by the final comparison.
        if (kind == "skew" and t > seconds * 0.55) or (kind == "wipe" and t > seconds - 38):
            kind = rnd.choice([k for k in KINDS if k not in ("skew", "wipe")])
        s = {"at": round(t, 2), "kind": kind}
        if kind == "isolate-leader":
            s["dur"] = rnd.uniform(3, 8)
        elif kind == "split":
            s["variant"] = rnd.choice(["minority-follower", "bridge"])
            s["pick"] = rnd.randrange(2)
            s["dur"] = rnd.uniform(3, 8)
        elif kind == "kill":
            s["target"] = rnd.choice(["leader", "follower"])
            s["pick"] = rnd.randrange(2)
            s["dur"] = rnd.uniform(1, 5)          # down this long
        elif kind == "pause-leader":
            s["dur"] = rnd.uniform(2.5, 5)        # more than 2 election timeouts
        elif kind == "slow":
            s["delay"] = rnd.randrange(20, 150)
            s["jitter"] = rnd.randrange(0, s["delay"] // 4 + 1)
            s["loss"] = rnd.choice([0, 2, 5, 10])
            s["where"] = rnd.choice(["all", "leader"])
            s["then"] = rnd.choice([None, None, "isolate-leader", "pause-leader", "kill-leader"])
            s["dur"] = rnd.uniform(5, 10)
        elif kind == "skew":
            s["offset"] = rnd.choice([-30, 30])
            s["pick"] = rnd.randrange(2)
            s["lead"] = rnd.random() < 0.7      # try to make the skewed node the leader
            s["dur"] = rnd.uniform(10, 16)
        elif kind == "wipe":
            s["pick"] = rnd.randrange(2)
            s["dur"] = rnd.uniform(1, 3)          # down this long before its replacement
        s["dur"] = round(s["dur"], 2)
        gap = rnd.uniform(3, 5)
        if t + s["dur"] > seconds - TAIL:
            break
        steps.append(s)
        t += s["dur"] + gap
    return steps


def describe(steps):
    out = []
    for s in steps:
        extra = " ".join("%s=%s" % (k, v) for k, v in s.items() if k not in ("at", "kind", "dur"))
        out.append("%6.2fs %-15s for %5.2fs %s" % (s["at"], s["kind"], s["dur"], extra))
    return out


class Nemesis:
    def __init__(self, net, cluster, hist, steps, log):
        self.net, self.cl, self.hist, self.steps, self.log = net, cluster, hist, steps, log
        self.thread = None
        self.t0 = None
        self.stop_flag = threading.Event()
        self.error = None

    # --- helpers -----------------------------------------------------------------------
    def ev(self, **kw):
        return self.hist.event(kw)

    def leader(self, timeout=5.0):
        return self.cl.leader(timeout)

    def followers(self, leader):
        return [n.id for n in self.cl.nodes if n.id != leader]

    def sleep_until(self, t):
        while not self.stop_flag.is_set():
            left = t - time.monotonic()
            if left <= 0:
                return True
            time.sleep(min(left, 0.1))
        return False

    def start_node(self, nid, skew=0):
        n = self.cl.node(nid)
        n.start(skew)
        self.ev(ev="start", node=nid, skew=skew)

    def kill_node(self, nid):
        n = self.cl.node(nid)
        n.kill()
        self.ev(ev="kill", node=nid)

    def partition(self, cuts, minority):
        e = self.ev(ev="partition", cuts=cuts, minority=minority, start=None, end=None)
        for a, b in cuts:
            self.net.cut(a, b)
        e["start"] = e["t"] = time.monotonic()
        return e

    def heal_partition(self, e):
        self.net.heal_partitions()
        e["end"] = time.monotonic()

    # --- the faults ---------------------------------------------------------------------
    def isolate_leader(self, dur):
        L = self.leader()
        if not L:
            self.ev(ev="skipped", what="isolate-leader: no leader")
            return
        e = self.partition([[L, f] for f in self.followers(L)], [L])
        self.sleep_until(e["start"] + dur)
        self.heal_partition(e)

    def split(self, s):
        L = self.leader()
        if not L:
            self.ev(ev="skipped", what="split: no leader")
            return
        fs = self.followers(L)
        f = fs[s["pick"] % len(fs)]
        if s["variant"] == "minority-follower":
            e = self.partition([[f, x] for x in self.cl.ids() if x != f], [f])
        else:
            # The leader loses one follower, which still sees the other: no minority.
            e = self.partition([[L, f]], [])
        self.sleep_until(e["start"] + s["dur"])
        self.heal_partition(e)

    def kill(self, s):
        L = self.leader()
        if s["target"] == "leader" and L:
            nid = L
        else:
            fs = self.followers(L) if L else self.cl.ids()
            nid = fs[s["pick"] % len(fs)]
        self.kill_node(nid)
        self.sleep_until(time.monotonic() + s["dur"])
        self.start_node(nid, self.cl.node(nid).skew)

    def pause_leader(self, dur):
        L = self.leader()
        if not L:
            self.ev(ev="skipped", what="pause-leader: no leader")
            return
        n = self.cl.node(L)
        e = self.ev(ev="pause", node=L, was_leader=True, start=None, end=None)
        n.pause()
        e["start"] = e["t"] = time.monotonic()
        self.sleep_until(e["start"] + dur)
        n.resume()
        e["end"] = time.monotonic()

    def slow(self, s):
        L = self.leader()
        where = self.cl.ids() if s["where"] == "all" or not L else [L]
        e = self.ev(ev="slow", nodes=where, delay_ms=s["delay"], jitter_ms=s["jitter"],
                    loss_pct=s["loss"], start=None, end=None)
        for nid in where:
            self.net.slow(nid, s["delay"], s["jitter"], s["loss"])
        e["start"] = e["t"] = time.monotonic()
        half = e["start"] + s["dur"] / 2
        then = s.get("then")
        self.sleep_until(half - (2.5 if then else 0))
        if then == "isolate-leader":
            self.isolate_leader(3.0)
        elif then == "pause-leader":
            self.pause_leader(3.0)
        elif then == "kill-leader":
            self.kill({"target": "leader", "pick": 0, "dur": 2.0})
        self.sleep_until(e["start"] + s["dur"])
        for nid in where:
            self.net.unslow(nid)
        e["end"] = time.monotonic()

    def skew(self, s):
        L = self.leader()
        fs = self.followers(L) if L else self.cl.ids()
        nid = fs[s["pick"] % len(fs)]
        end = time.monotonic() + s["dur"]
        self.kill_node(nid)
        self.start_node(nid, s["offset"])
        # Make the skewed node lead, when asked: kill -9 whoever leads instead (each
        # time the other node wins, bring the killed one back first), a few times.
        for _ in range(3 if s["lead"] else 0):
            if not self.sleep_until(time.monotonic() + 2.0) or time.monotonic() > end - 4:
                break
            L = self.leader(3.0)
            if L is None or L == nid:
                break
            self.kill_node(L)
            self.sleep_until(time.monotonic() + 1.5)
            self.start_node(L, self.cl.node(L).skew)
        self.sleep_until(end)
        self.kill_node(nid)
        self.start_node(nid, 0)

    def wipe(self, s):
        """A follower's host lost: kill -9, its disk gone; a new node under a new id, in a
        namespace and at an address of its own, joins (CLUSTERADD), then the dead one is
        removed (CLUSTERREMOVE), as docs/cluster.md says to replace a dead node."""
        L = self.leader()
        fs = self.followers(L) if L else self.cl.ids()
        nid = fs[s["pick"] % len(fs)]
        self.kill_node(nid)
        self.cl.node(nid).wipe()
        self.ev(ev="wipe", node=nid)
        self.sleep_until(time.monotonic() + s["dur"])
        new = self.cl.next_id()
        self.net.add_node(new)
        n = self.cl.new_node(new)
        n.start(0)
        self.ev(ev="start", node=new, skew=0, joins=True)
        t = time.monotonic()
        ok = self.admin("CLUSTERADD", {"NODE": new, "RAFT": n.raft_addr(), "URL": n.url()}, 90)
        self.ev(ev="added", node=new, ok=ok, took=round(time.monotonic() - t, 2))
        if not ok:
            self.ev(ev="violation", rule="unavailable", text="CLUSTERADD of node %d, the "
                    "replacement of node %d, not answered OK in 90 s" % (new, nid))
            return
        self.cl.nodes = [x for x in self.cl.nodes if x.id != nid] + [n]
        ok = self.admin("CLUSTERREMOVE", {"NODE": nid}, 30)
        self.ev(ev="removed", node=nid, ok=ok)

    def admin(self, cmd, params, timeout):
        """A membership command, through the leader (any live member while none is
        known), again until it is answered OK or timeout seconds have passed. A 409 or
        404 on a retry means an earlier try did it."""
        end = time.monotonic() + timeout
        tries = 0
        while time.monotonic() < end and not self.stop_flag.is_set():
            L = self.leader(2.0)
            targets = [L] if L else [x for x in self.cl.ids() if self.cl.node(x).alive()]
            for nid in targets:
                p = dict(params, FORMAT="JSON")
                ph, st, h, b = self.cl.node(nid).req(cmd, p, max(1.0, end - time.monotonic()))
                self.log("nemesis: %s %s through node %s: %s %s" % (
                    cmd, params.get("NODE"), nid, st, b[:120].decode(errors="replace")))
                if st == 200 or (tries and st in (404, 409)):
                    return True
                tries += 1
            time.sleep(0.5)
        return False

    # --- the run --------------------------------------------------------------------------
    def run(self):
        try:
            for s in self.steps:
                if not self.sleep_until(self.t0 + s["at"]):
                    return
                self.log("nemesis %6.2fs: %s" % (time.monotonic() - self.t0, describe([s])[0].strip()))
                step = self.ev(ev="step", kind=s["kind"], start=time.monotonic(), end=None)
                k = s["kind"]
                if k == "isolate-leader":
                    self.isolate_leader(s["dur"])
                elif k == "split":
                    self.split(s)
                elif k == "kill":
                    self.kill(s)
                elif k == "pause-leader":
                    self.pause_leader(s["dur"])
                elif k == "slow":
                    self.slow(s)
                elif k == "skew":
                    self.skew(s)
                elif k == "wipe":
                    self.wipe(s)
                step["end"] = time.monotonic()
        except Exception as e:               # the driver reports it; the heal still runs
            self.error = "%s: %s" % (type(e).__name__, e)
            self.log("nemesis: error: " + self.error)

    def start(self, t0):
        self.t0 = t0
        self.thread = threading.Thread(target=self.run, daemon=True, name="nemesis")
        self.thread.start()

    def join(self, timeout):
        self.thread.join(timeout)
        return not self.thread.is_alive()
