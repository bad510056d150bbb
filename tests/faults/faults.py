#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""faults.py - a bounded, Jepsen-style fault checker for stsd's cluster (docs/faults.md).

Each run: three real stsd nodes, each in a network namespace of its own (netns.py), 16
client threads (workload.py) for SECONDS, and a nemesis (nemesis.py) whose schedule of
faults comes from the seed: partitions, kill -9, SIGSTOP, delay and loss, clock skew, a
wiped node. Then every fault is healed, the lists are drained through every node, the
nodes' state directories are compared, and the history is checked (checker.py).

Usage: faults.py STSD [--seed N | --runs N] [--seconds S] [--hours H] [--rate R]

  --seed N     one run of seed N (a replay: the same schedule; timing may differ)
  --runs N     N runs of consecutive seeds from a random base (5)
  --seconds S  the clients' time per run (60)
  --hours H    a soak: runs of --seconds each, until H hours have passed or one fails
  --rate R     requests a second for all clients together (at most 2000; 1000)

Needs root (namespaces, iptables): anyone else gets a failure, never a skip. A failed
run keeps its work directory (history.jsonl, the nodes' logs and state); a passed one's
is removed. Everything it set up is torn down even when it fails, and a run starts by
removing what an earlier one left behind (namespaces named stsdf-*)."""
import argparse
import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import checker   # noqa: E402
import linear    # noqa: E402
import nemesis   # noqa: E402
import netns     # noqa: E402
import nodes     # noqa: E402
import workload  # noqa: E402


def log(msg):
    print(msg, flush=True)


class Monitor:
    """Asks every node CLUSTER five times a second; logs each change of a node's role,
    leader, term or serving flag as a "view" event."""

    def __init__(self, cl, hist):
        self.cl, self.hist = cl, hist
        self.last, self.latest = {}, {}
        self.stop_flag = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True, name="monitor")

    def run(self):
        while not self.stop_flag.is_set():
            for n in self.cl.nodes:
                if not n.alive() or n.paused:
                    continue
                v = n.cluster_view(0.5)
                if v is None:
                    continue
                self.latest[n.id] = (time.monotonic(), v)
                key = (v.get("role"), v.get("leader"), v.get("term"), v.get("serving"))
                if self.last.get(n.id) != key:
                    self.last[n.id] = key
                    self.hist.event({"ev": "view", "node": n.id, "role": key[0],
                                     "leader": key[1], "term": key[2], "serving": key[3],
                                     "commit": v.get("commit_index"),
                                     "applied": v.get("applied_index")})
            self.stop_flag.wait(0.2)

    def start(self):
        self.thread.start()

    def stop(self):
        self.stop_flag.set()
        self.thread.join(5)


class Run:
    def __init__(self, args, seed):
        self.args, self.seed = args, seed
        self.steps = nemesis.schedule(seed, args.seconds)
        self.work = tempfile.mkdtemp(prefix="stsd-faults-%d-" % seed)
        self.hist = workload.History()
        self.net = self.cl = self.mon = None
        self.notes = []

    def violation(self, rule, text):
        self.hist.event({"ev": "violation", "rule": rule, "text": text})

    # --- after the faults: heal, converge, drain, compare ----------------------------------
    def heal(self):
        self.net.heal()
        for n in self.cl.nodes:
            if n.paused:
                n.resume()
        for n in self.cl.nodes:
            if n.alive() and n.skew:
                n.kill()
                self.hist.event({"ev": "kill", "node": n.id})
            if not n.alive():
                n.start(0)
                self.hist.event({"ev": "start", "node": n.id, "skew": 0})
        self.hist.event({"ev": "healed"})

    def converged(self, timeout):
        """Waits until every node follows one serving leader and has applied all it
        committed, at the same index on every node. Returns the leader's id or None."""
        end = time.monotonic() + timeout
        last = None
        self.last_view_note = time.monotonic()
        while time.monotonic() < end:
            vs = self.cl.views(1.0)
            if all(vs.values()):
                leaders = {v.get("leader") for v in vs.values()}
                idx = {(v.get("commit_index"), v.get("applied_index")) for v in vs.values()}
                L = leaders.pop() if len(leaders) == 1 else None
                if L and vs[L].get("serving") and len(idx) == 1 and \
                        len(set(next(iter(idx)))) == 1:
                    if last == idx:
                        return L
                    last = idx
                    time.sleep(0.3)
                    continue
            last = None
            if time.monotonic() - self.last_view_note > 3:
                self.last_view_note = time.monotonic()
                self.hist.event({"ev": "waiting", "views": {
                    k: v and [v.get("role"), v.get("leader"), v.get("serving"), v.get("term"),
                              v.get("commit_index"), v.get("applied_index"), v.get("last_index")]
                    for k, v in vs.items()}})
            time.sleep(0.2)
        return None

    def ask(self, client, f, cmd, params, tries=20, ok_status=(404,), **extra):
        """A request of the final phase, through the nodes in turn until it is answered
        (an OK, or a KO of ok_status)."""
        op = None
        for i in range(tries):
            nid = self.cl.nodes[i % len(self.cl.nodes)].id
            op, d = client.call(f, cmd, params, node=nid, **extra)
            if op["type"] == "ok" or op.get("status") in ok_status:
                return op, d
            time.sleep(0.3)
        return op, None

    def settle_leases(self, client, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            out = 0
            for lst in workload.LISTS:
                op, d = self.ask(client, "probe", "LEASES", {"FILENAME": lst}, tries=3)
                out += d.get("length", 0) if d else (0 if op and op.get("status") == 404 else 1)
            op, d = self.ask(client, "probe", "RUNS", {}, tries=3)
            out += len(d.get("runs", [])) if d else 1
            if out == 0:
                return True
            time.sleep(0.5)
        return False

    def drain(self, client):
        # The queue's drain is READs of linear.py's model: the lines left, in their order.
        for lst, f in [(x, "drain") for x in workload.LISTS] + [(workload.QUEUE, "qread")]:
            empties, i, end = 0, 0, time.monotonic() + 60
            while empties < len(self.cl.nodes) and time.monotonic() < end:
                nid = self.cl.nodes[i % len(self.cl.nodes)].id
                i += 1
                op, d = client.call(f, "READ", {"FILENAME": lst, "KEEP": "FALSE"}, node=nid)
                if op["type"] == "ok":
                    op["line"] = d.get("line")
                    empties = 0
                elif op["type"] == "fail" and op.get("status") == 404:
                    empties += 1
                else:
                    time.sleep(0.2)
            if empties < len(self.cl.nodes):
                self.violation("unavailable", "the drain of %s did not finish in 60 s" % lst)

    def final_reads(self, client):
        names = {workload.COUNTER} | {o["key"] for o in self.hist.ops if o["f"] in ("get", "cas")}
        for name in sorted(names):
            op, d = self.ask(client, "final", "GET", {"NAME": name})
            if op["type"] == "ok":
                op["val"], op["version"] = d.get("value"), d.get("version")

    def state_digest(self, n):
        files = []
        for name in sorted(os.listdir(n.state)):
            p = os.path.join(n.state, name)
            if name == "lock" or not os.path.isfile(p):
                continue
            with open(p, "rb") as f:
                files.append((name, os.path.getsize(p), hashlib.sha256(f.read()).hexdigest()[:16]))
        r = subprocess.run([self.args.stsd, "--check-journal", n.state], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=60)
        text = r.stdout.decode(errors="replace").splitlines()[1:]     # past the path line
        return files, r.returncode, text

    def compare_states(self):
        """The state directories hold what raft committed, written by every node alike:
        once all have applied the same index, their journal files are the same bytes, and
        --check-journal finds the same lists and keys in each."""
        for attempt in range(6):
            if not self.converged(15):
                self.violation("unavailable", "the nodes did not reach one applied index "
                               "after the drain")
                return
            ds = {n.id: self.state_digest(n) for n in self.cl.nodes}
            files = {k: d[0] for k, d in ds.items()}
            texts = {k: (d[1], d[2]) for k, d in ds.items()}
            if len({repr(x) for x in files.values()}) == 1 and \
                    len({repr(x) for x in texts.values()}) == 1 and \
                    all(d[1] == 0 for d in ds.values()):
                self.hist.event({"ev": "state", "same": True,
                                 "files": next(iter(files.values()))})
                return
            time.sleep(1)
        lines = []
        for k, (fs, rc, text) in ds.items():
            lines.append("node %d: %s; --check-journal exit %d: %s" % (
                k, ", ".join("%s %d bytes %s" % f for f in fs), rc,
                " | ".join(t.strip() for t in text if t.strip())[:600]))
        self.violation("diverged", "state directories differ after the heal:\n      " +
                       "\n      ".join(lines))

    # --- the whole run ---------------------------------------------------------------------
    def execute(self):
        a = self.args
        log("seed %d: %d s of clients at up to %d requests/s; the schedule:" % (
            self.seed, a.seconds, a.rate))
        for line in nemesis.describe(self.steps):
            log("    " + line)
        netns.cleanup_leftovers(log)
        self.net = netns.Net(use_netem=a.netem)
        self.net.up()
        self.net.enter_clients()
        self.cl = nodes.Cluster(a.stsd, self.work)
        self.cl.start()
        for n in self.cl.nodes:
            self.hist.event({"ev": "start", "node": n.id, "skew": 0})
        if self.cl.leader(30) is None:
            self.violation("unavailable", "no leader 30 s after the cluster's first start")
            return
        self.mon = Monitor(self.cl, self.hist)
        self.mon.start()
        wl = workload.Workload(self.seed, self.cl, self.hist, a.seconds, rate=a.rate)
        nem = nemesis.Nemesis(self.net, self.cl, self.hist, self.steps, log)
        wl.start()
        self.t0 = wl.t0
        nem.start(wl.t0)
        stuck = wl.join()
        self.notes.append("clients stopped %.1f s after their deadline" % wl.joined)
        if not nem.join(60):
            self.notes.append("the nemesis did not finish")
        nem.stop_flag.set()
        nem.join(30)
        if stuck:
            self.violation("unavailable", "client threads still running after the deadline: %s"
                           % ", ".join(stuck))
        if nem.error:
            self.notes.append("nemesis error: " + nem.error)
        t_clients = time.monotonic()
        phase = lambda what: self.notes.append("%s at +%.1f s" % (what, time.monotonic() - t_clients))
        self.heal()
        phase("healed")
        # 45 s: a node restored from a snapshot may wait for raft's install-snapshot
        # timeout (30 s) before it gets the entries after it.
        if self.converged(45) is None:
            self.violation("unavailable", "the nodes did not all follow one leader at one "
                           "applied index 45 s after the heal")
            return
        phase("converged")
        final = workload.Client(wl, 0)
        skewed = any(s["kind"] == "skew" for s in self.steps)
        if not self.settle_leases(final, 45 if skewed else 15):
            self.violation("unavailable", "leases or ONCE runs still out %d s after the heal"
                           % (45 if skewed else 15))
        phase("leases settled")
        self.drain(final)
        phase("drained")
        self.final_reads(final)
        self.compare_states()
        phase("states compared")
        self.hist.event({"ev": "checked-states", "after_clients_s": time.monotonic() - t_clients})

    def teardown(self):
        if self.mon:
            self.mon.stop()
        codes = {}
        if self.cl:
            for n in self.cl.nodes:
                codes[n.id] = n.stop(8) if n.alive() else "down"
            self.cl.kill_all()
        if self.net:
            self.net.down()
        bad = {k: c for k, c in codes.items() if c not in (0, "down")}
        if bad:
            self.notes.append("exit statuses at the final SIGTERM: %s" % bad)


def compaction_summary(r):
    """What the nodes' logs say of compaction, raft's snapshots and leaders that stopped
    leading (in their process, or by executing themselves again) during the run."""
    marks = (("compactions", "compaction into generation"),
             ("restores from a snapshot", "state directory restored from a snapshot"),
             ("demotions in the same process", "follows, in the same process"),
             ("restarts", "cluster: restarting"))
    counts = {k: 0 for k, _ in marks}
    for n in (r.cl.nodes if r.cl else []):
        try:
            with open(n.log, errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        for k, m in marks:
            counts[k] += text.count(m)
    return "nodes' logs: %s, on all nodes" % ", ".join("%d %s" % (v, k) for k, v in counts.items())


def run_one(args, seed):
    t_start = time.monotonic()
    r = Run(args, seed)
    try:
        r.execute()
    except Exception:
        r.violation("unavailable", "the test itself failed: " + traceback.format_exc(limit=4))
    finally:
        r.teardown()
    ops = r.hist.ops
    t0 = getattr(r, "t0", t_start)
    lin = []
    vs = checker.check(ops, r.hist.events, t0, lin)
    r.hist.dump(os.path.join(r.work, "history.jsonl"), {"seed": seed, "t0": t0,
                                                         "steps": r.steps})
    linear.dump(lin[0], os.path.join(r.work, "linear.jsonl"))
    counts = {k: sum(1 for o in ops if o["type"] == k) for k in ("ok", "fail", "unknown")}
    took = time.monotonic() - t_start
    summary = "seed %d: %d requests (%d ok, %d fail, %d unknown; %.0f/s), %d faults, %.0f s" % (
        seed, len(ops), counts["ok"], counts["fail"], counts["unknown"],
        len(ops) / max(1.0, args.seconds), len(r.steps), took)
    lin_text = "    linearizability: " + linear.summary(*lin)
    lin_text += "\n    " + compaction_summary(r)
    for n in r.notes:
        log("    note: " + n)
    if not vs:
        log("  ok    " + summary)
        log(lin_text)
        if args.keep:
            log("    work directory kept: %s" % r.work)
        else:
            shutil.rmtree(r.work, ignore_errors=True)
        return True
    log("  FAIL  " + summary + ": %d rules broken" % len(vs))
    log(lin_text)
    log("    replay: make test-faults SEED=%d    (work directory kept: %s)" % (seed, r.work))
    log("    schedule:")
    for line in nemesis.describe(r.steps):
        log("      " + line)
    by_rule = {}
    for v in vs:
        by_rule.setdefault(v.rule, []).append(v)
    log("    rules broken: " + ", ".join("%s (%d)" % (k, len(x)) for k, x in by_rule.items()))
    log("    each with the smallest window of history that shows it (all of them: %s):"
        % os.path.join(r.work, "violations.txt"))
    for rule, xs in by_rule.items():
        best = min(xs, key=lambda v: (v.window()[1] or 0) - (v.window()[0] or 0))
        checker.report(best, r.hist.events, t0, sys.stdout)
    with open(os.path.join(r.work, "violations.txt"), "w") as f:
        for v in vs:
            checker.report(v, r.hist.events, t0, f)
    sys.stdout.flush()
    return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("stsd")
    ap.add_argument("--seed", type=int)
    ap.add_argument("--seeds", help="comma separated seeds, run in turn")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--hours", type=float)
    ap.add_argument("--rate", type=int, default=1000)
    ap.add_argument("--keep", action="store_true", help="keep a passed run's work directory")
    ap.add_argument("--netem", choices=["auto", "yes", "no"], default="auto")
    args = ap.parse_args()
    # A SIGTERM (a CI time limit) unwinds like an exception: the teardown still runs.
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(143))
    args.netem = {"auto": None, "yes": True, "no": False}[args.netem]
    args.rate = min(args.rate, 2000)
    label = "faults"
    if os.geteuid() != 0:
        log("  FAIL  the fault checker needs root: network namespaces, iptables, tc "
            "(CI runs as root; run `sudo make test-faults`)")
        log("%s: 0 passed, 1 failed, 0 skipped" % label)
        return 1
    missing = [t for t in ("ip", "iptables", "tc") if not shutil.which(t)]
    if nodes.faketime_lib() is None:
        missing.append("faketime (libfaketime)")
    if missing:
        log("  FAIL  missing: %s (scripts/deps.sh test installs iproute2, iptables, "
            "faketime)" % ", ".join(missing))
        log("%s: 0 passed, 1 failed, 0 skipped" % label)
        return 1
    args.stsd = os.path.abspath(args.stsd)
    if args.seed is not None:
        seeds = [args.seed]
    elif args.seeds:
        seeds = [int(x) for x in args.seeds.split(",") if x.strip()]
    else:
        base = random.SystemRandom().randrange(1, 1000000)
        seeds = [base + i for i in range(args.runs)]
    passed = failed = 0
    t_end = time.monotonic() + args.hours * 3600 if args.hours else None
    i = 0
    while True:
        if t_end is None and i >= len(seeds):
            break
        if t_end is not None and (time.monotonic() > t_end or failed):
            break
        seed = seeds[i] if i < len(seeds) else seeds[-1] + (i - len(seeds) + 1)
        i += 1
        if run_one(args, seed):
            passed += 1
        else:
            failed += 1
    log("%s: %d passed, %d failed, 0 skipped" % (label, passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
