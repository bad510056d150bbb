#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""checker.py - the rules a history of the fault checker must keep (docs/faults.md).

check(ops, events) returns the violations: each names its rule, says what broke it and
lists the operations that show it (the smallest window of the history we can point at).
Run alone on a saved history to check it again:

    tests/faults/checker.py WORKDIR/history.jsonl

An op is a dict: id, t (thread), f (what: add, read, lease, ack, release, drain, incr,
get, cas, once, done, once_release, barrier, final), node (asked), inv and end
(monotonic seconds), type (ok, fail, unknown), leader (X-STS-Leader), and what the
answer said (line, val, version, lease, gen, arrival, state...)."""
import bisect
import collections
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import linear    # noqa: E402

EPS = 0.25            # clock granularity: ms deadlines, timer ticks, our own timestamps
# A client that gave up may still count at the server this long: through a follower, its
# forwarded request is cut when the forwarder next looks for clients gone (every 200 ms,
# FORWARD_GONE_MS), then the leader sees the cut (seed 79415: 0.3 s was seen).
BARRIER_SLACK = 1.0
RULES = {
    "lost": "every line whose ADD was OK is consumed exactly once (an OK READ KEEP=FALSE, "
            "an ACKed lease, the final drain, or a consuming request whose outcome is unknown)",
    "duplicate": "no line is consumed twice",
    "taken-after-consumed": "a line consumed (READ KEEP=FALSE, ACK of its lease) is never "
                            "handed out again",
    "phantom": "no line, value or token appears that no request sent",
    "failed-applied": "a request answered as not done (a KO, No leader, Leader changed) "
                      "has no effect",
    "early-lease": "a leased line comes back only after its RELEASE or its deadline "
                   "(allowing for the clock skew the test injected)",
    "incr-duplicate": "no INCR value is answered twice",
    "incr-order": "INCR values answered OK increase in real-time order",
    "incr-count": "the counter's final value counts every OK INCR once, and no failed one",
    "cas": "a SET IF_VERSION answered OK was applied exactly once, at the version it "
           "answered, on the value it read",
    "stale-read": "a GET sees every change answered OK before it was sent",
    "once-overlap": "at most one ONCE run is outstanding at any time",
    "once-done": "after an OK DONE, ONCE answers DONE with that value; DONE succeeds once",
    "barrier": "a BARRIER with PARTIES=4 opens only with 4 arrivals waiting, each with "
               "its own place",
    "stale-leader": "an isolated or paused old leader answers no request OK",
    "linearizable": "each object (the queue fq.csv, each key cas-K-E, the counter) has a "
                    "linearization: one order of its operations, each at an instant between "
                    "its invocation and its answer, that its sequential model answers "
                    "alike (linear.py)",
    "diverged": "after the heal, every node holds the same lists, keys and leases",
    "unavailable": "after the heal, the cluster elects a leader and serves again",
}


class Violation:
    def __init__(self, rule, text, ops=(), t=None, focus=None):
        self.rule, self.text, self.ops, self.t = rule, text, list(ops), t
        self.focus = focus        # where the events worth showing begin (default: lo)

    def window(self):
        ts = [o["inv"] for o in self.ops] + [o["end"] for o in self.ops]
        if self.t is not None:
            ts.append(self.t)
        return (min(ts), max(ts)) if ts else (None, None)


class Skew:
    """Each node's clock offset over time, from the nemesis' restart events."""

    def __init__(self, events):
        self.spans = collections.defaultdict(list)     # node -> [(start, end, offset)]
        starts = sorted((e for e in events if e.get("ev") in ("start", "kill", "stop")),
                        key=lambda e: e["t"])
        cur = {}
        for e in starts:
            n = e["node"]
            if n in cur:
                t0, off = cur.pop(n)
                if off:
                    self.spans[n].append((t0, e["t"], off))
            if e["ev"] == "start":
                cur[n] = (e["t"], e.get("skew", 0))
        for n, (t0, off) in cur.items():
            if off:
                self.spans[n].append((t0, float("inf"), off))
        self.any = any(self.spans.values())

    def offsets(self, node, t0, t1):
        """The offsets node had during [t0, t1] (0 included when it ran unskewed)."""
        out = set()
        covered = 0.0
        for s, e, off in self.spans.get(node, ()):
            if s <= t1 and e >= t0:
                out.add(off)
                covered += min(e, t1) - max(s, t0)
        if covered < (t1 - t0) - 1e-6 or not out:
            out.add(0)
        return out


class Leaders:
    """Who led when: (time, node) from the answers' X-STS-Leader and the monitor."""

    def __init__(self, ops, events):
        obs = [(o["end"], o["leader"]) for o in ops if o.get("leader")]
        obs += [(e["t"], e["node"]) for e in events
                if e.get("ev") == "view" and e.get("role") == "leader"]
        obs.sort()
        self.t = [x[0] for x in obs]
        self.n = [x[1] for x in obs]
        self.all = set(self.n)

    def between(self, t0, t1):
        i, j = bisect.bisect_left(self.t, t0), bisect.bisect_right(self.t, t1)
        return set(self.n[i:j])


def allowance(skew, leaders, taker, t_take, t0, t1):
    """How much earlier than its deadline a lease taken by leader taker at t_take may end
    when some leader between t0 and t1 ends it. The deadline is the taker's wall clock
    plus the lease; a leader whose clock is d seconds ahead of the taker's ends it d
    seconds early (in real time)."""
    if not skew.any:
        return 0.0
    takers = {taker} if taker else leaders.all or {1, 2, 3}
    enders = leaders.between(t0, t1) | takers
    a = min(min(skew.offsets(n, t_take, t_take)) for n in takers)
    b = max(max(skew.offsets(n, t0, t1)) for n in enders)
    return max(0.0, float(b - a))


def check(ops, events, t0=0.0, linear_out=None):
    """The violations of the history (ops and events); t0: the time the clients started,
    which the texts count from. linear_out, a list, receives linear.py's results and
    the time they took."""
    v = []
    ops = sorted(ops, key=lambda o: o["inv"])
    by_id = {o["id"]: o for o in ops}
    skew, leaders = Skew(events), Leaders(ops, events)
    check_lines(ops, by_id, skew, leaders, v)
    check_incr(ops, v)
    check_cas(ops, v)
    check_once(ops, by_id, skew, leaders, v)
    check_barrier(ops, v)
    check_stale_leader(ops, events, t0, v)
    check_linear(ops, t0, v, linear_out)
    for e in events:
        if e.get("ev") == "violation":
            v.append(Violation(e["rule"], e["text"], t=e["t"]))
    return v


def check_linear(ops, t0, v, out):
    t = time.monotonic()
    results = linear.check_history(ops)
    if out is not None:
        out.extend([results, time.monotonic() - t])
    for r in results:
        if r.verdict != "linearizable":
            v.append(Violation("linearizable", "\n    ".join(linear.explain(r, t0)), r.window()))


# --- lines: ADD, READ KEEP=FALSE, leases, the drain ------------------------------------
def check_lines(ops, by_id, skew, leaders, v):
    adds = collections.defaultdict(list)
    takes = collections.defaultdict(list)
    settle = collections.defaultdict(list)      # lease op id -> ack/release ops
    unknown_reads = collections.defaultdict(list)
    unknown_takes = collections.defaultdict(list)     # any take of unknown outcome, by list
    for o in ops:
        f = o["f"]
        if f == "add":
            adds[o["line"]].append(o)
        elif f in ("read", "lease", "drain"):
            if o["type"] == "ok" and o.get("line") is not None:
                takes[o["line"]].append(o)
            elif o["type"] == "unknown":
                unknown_takes[o["p"]["FILENAME"]].append(o)
                if f in ("read", "drain"):
                    unknown_reads[o["p"]["FILENAME"]].append(o)
        elif f in ("ack", "release"):
            settle[o["of"]].append(o)

    lost = []
    for line, ts in takes.items():
        a = adds.get(line)
        if not a:
            v.append(Violation("phantom", "line %r was handed out but no ADD sent it" % line, ts[:2]))
            continue
        if all(x["type"] == "fail" for x in a):
            v.append(Violation("failed-applied", "line %r was handed out, but its ADD was "
                               "answered as not done (%s)" % (line, a[0].get("msg")), a + ts[:1]))
    for line, a in adds.items():
        ts = sorted(takes.get(line, []), key=lambda o: o["end"])
        consumed, maybe = [], 0
        for t in ts:
            if t["f"] in ("read", "drain"):
                consumed.append((t["end"], t, None))
            else:
                for s in settle.get(t["id"], []):
                    if s["f"] == "ack" and s["type"] == "ok":
                        consumed.append((s["end"], t, s))
                    elif s["f"] == "ack" and s["type"] == "unknown":
                        maybe += 1
        consumed.sort(key=lambda c: c[0])
        if len(consumed) > 1:
            c1, c2 = consumed[0], consumed[1]
            v.append(Violation("duplicate", "line %r consumed twice" % line,
                               a + [x for x in (c1[1], c1[2], c2[1], c2[2]) if x]))
        if consumed:
            c_end, c_op, c_ack = consumed[0]
            for t in ts:
                if t is not c_op and t["inv"] > c_end:
                    what = "its lease was ACKed OK" if c_ack else "it was consumed"
                    v.append(Violation("taken-after-consumed", "line %r handed out again after "
                                       "%s" % (line, what),
                                       a + [x for x in (c_op, c_ack, t) if x]))
                    break
        # Leases: the next hand-out after a lease comes after its deadline or a RELEASE.
        for i, t1 in enumerate(ts):
            if t1["f"] != "lease":
                continue
            later = [t for t in ts if t["inv"] > t1["end"]]
            if not later:
                continue
            t2 = min(later, key=lambda t: t["end"])
            rel = [s for s in settle.get(t1["id"], []) if s["f"] == "release"
                   and s["type"] in ("ok", "unknown") and s["inv"] < t2["end"]]
            if rel:
                continue
            allow = allowance(skew, leaders, t1.get("leader"), t1["end"], t1["inv"], t2["end"])
            due = t1["inv"] + t1["secs"] - allow - EPS
            if t2["end"] < due:
                v.append(Violation("early-lease", "line %r leased for %gs came back %.3fs after "
                                   "the lease was asked for (allowed skew %gs), with no RELEASE"
                                   % (line, t1["secs"], t2["end"] - t1["inv"], allow),
                                   a + [t1] + settle.get(t1["id"], []) + [t2]))
        if any(x["type"] == "ok" for x in a) and not consumed and not maybe:
            lost.append((max(x["inv"] for x in a if x["type"] == "ok"), line, a, ts))
    # A line nobody took may have gone to a consuming READ whose outcome is unknown on its
    # list, one line per such READ, answered after the ADD was sent.
    lost.sort(key=lambda x: -x[0])
    pools = {k: sorted(u["end"] for u in us) for k, us in unknown_reads.items()}
    used = collections.Counter()
    for add_inv, line, a, ts in lost:
        lst = a[0]["p"]["FILENAME"]
        ends = pools.get(lst, [])
        avail = len(ends) - bisect.bisect_right(ends, add_inv) - used[lst]
        if avail > 0:
            used[lst] += 1
            continue
        last = ts[-1:] if ts else []
        # Show where it may have gone: the first takes of unknown outcome on its list
        # after it was last seen (a lease's return included).
        since = max([a[0]["inv"]] + [t["end"] for t in last])
        near = [u for u in unknown_takes.get(lst, []) if u["end"] > since][:3]
        v.append(Violation("lost", "line %r was added OK and never consumed (%d hand-outs; "
                           "the %d consuming READs of unknown outcome on %s are all matched "
                           "to other lines; a lease of unknown outcome gives its line back)"
                           % (line, len(ts), len(ends), lst), a + last + near,
                           focus=since))


# --- INCR ---------------------------------------------------------------------------
def check_incr(ops, v):
    incrs = [o for o in ops if o["f"] == "incr"]
    ok = [o for o in incrs if o["type"] == "ok"]
    seen = {}
    for o in ok:
        if o["val"] in seen:
            v.append(Violation("incr-duplicate", "INCR answered %s twice" % o["val"], [seen[o["val"]], o]))
        else:
            seen[o["val"]] = o
    # Real time: a completed before b was sent => a's value < b's.
    by_end = sorted(ok, key=lambda o: o["end"])
    best, j = None, 0
    for b in sorted(ok, key=lambda o: o["inv"]):
        while j < len(by_end) and by_end[j]["end"] < b["inv"]:
            if best is None or by_end[j]["val"] > best["val"]:
                best = by_end[j]
            j += 1
        if best is not None and best["val"] >= b["val"] and best is not b:
            v.append(Violation("incr-order", "INCR answered %s after an INCR that had "
                               "completed with %s" % (b["val"], best["val"]), [best, b]))
            break
    final = [o for o in ops if o["f"] == "final" and o["p"].get("NAME") == "ctr"]
    if not final:
        return
    fo = final[-1]
    if fo["type"] == "fail" and fo.get("status") == 404:
        value = 0
    elif fo["type"] == "ok":
        value = int(fo["val"])
    else:
        v.append(Violation("unavailable", "the final GET of the counter failed: %s"
                           % fo.get("msg"), [fo]))
        return
    nok = len(ok)
    nunk = sum(1 for o in incrs if o["type"] == "unknown")
    if value < nok or value > nok + nunk:
        v.append(Violation("incr-count", "the counter ends at %d with %d INCRs answered OK "
                           "and %d of unknown outcome (%d failed)" %
                           (value, nok, nunk, len(incrs) - nok - nunk), [fo]))
    high = [o for o in ok if o["val"] > value]
    if high:
        v.append(Violation("incr-count", "INCR answered %s but the counter ends at %d"
                           % (high[0]["val"], value), [high[0], fo]))


# --- SET IF_VERSION (compare-and-set) -----------------------------------------------------
def check_cas(ops, v):
    keys = collections.defaultdict(lambda: {"get": [], "cas": [], "final": None})
    for o in ops:
        if o["f"] in ("get", "cas"):
            keys[o["key"]][o["f"]].append(o)
        elif o["f"] == "final" and o["p"].get("NAME", "").startswith("cas-"):
            keys[o["p"]["NAME"]]["final"] = o
    for key, k in keys.items():
        fo = k["final"]
        if fo is None:
            continue
        if fo["type"] == "ok":
            chain = fo["val"].split("|") if fo["val"] else []
            if fo.get("version") != len(chain):
                v.append(Violation("cas", "key %s ends at version %s with %d tokens in its "
                                   "value" % (key, fo.get("version"), len(chain)), [fo]))
        elif fo["type"] == "fail" and fo.get("status") == 404:
            chain = []
        else:
            v.append(Violation("unavailable", "the final GET of %s failed: %s"
                               % (key, fo.get("msg")), [fo]))
            continue
        by_token = {o["token"]: o for o in k["cas"]}
        pos = {}
        for i, tok in enumerate(chain):
            if tok in pos:
                v.append(Violation("cas", "key %s: token %s applied twice (versions %d and %d)"
                                   % (key, tok, pos[tok] + 1, i + 1),
                                   [by_token[tok], fo] if tok in by_token else [fo]))
                continue
            pos[tok] = i
            s = by_token.get(tok)
            if s is None:
                v.append(Violation("phantom", "key %s: token %r at version %d was sent by no SET"
                                   % (key, tok, i + 1), [fo]))
            elif s["type"] == "fail":
                v.append(Violation("failed-applied", "key %s: the SET of token %s was answered "
                                   "as not done (%s) but is at version %d" %
                                   (key, tok, s.get("msg"), i + 1), [s, fo]))
        for s in k["cas"]:
            if s["type"] != "ok":
                continue
            ver = s.get("version")
            read = s["read"].split("|") if s["read"] else []
            if s["token"] not in pos:
                v.append(Violation("cas", "key %s: SET of token %s answered OK (version %s) is "
                                   "not in the final value" % (key, s["token"], ver), [s, fo]))
            elif pos[s["token"]] + 1 != ver or chain[:ver - 1] != read:
                v.append(Violation("cas", "key %s: SET of token %s answered version %s, on a "
                                   "value of %d tokens; the final value has it at version %d"
                                   % (key, s["token"], ver, len(read), pos[s["token"]] + 1), [s, fo]))
        # Reads: each GET saw a prefix of the chain, no older than any OK SET before it.
        sets = sorted((s for s in k["cas"] if s["type"] == "ok" and s.get("version")),
                      key=lambda s: s["end"])
        ends = [s["end"] for s in sets]
        best = []
        for s in sets:
            best.append(s if not best or s["version"] > best[-1]["version"] else best[-1])
        for g in k["get"]:
            if g["type"] == "ok":
                ver, val = g.get("version"), g.get("val", "")
            elif g["type"] == "fail" and g.get("status") == 404:
                ver, val = 0, ""
            else:
                continue
            got = val.split("|") if val else []
            if ver is None or got != chain[:ver] or len(got) != ver:
                v.append(Violation("stale-read", "key %s: GET answered version %s with a value "
                                   "that is not the first %s tokens of the final one"
                                   % (key, ver, ver), [g, fo]))
                continue
            i = bisect.bisect_left(ends, g["inv"])
            if i and best[i - 1]["version"] > ver:
                v.append(Violation("stale-read", "key %s: GET answered version %d after a SET "
                                   "had completed with version %d" %
                                   (key, ver, best[i - 1]["version"]), [best[i - 1], g]))


# --- ONCE and DONE ------------------------------------------------------------------------
def check_once(ops, by_id, skew, leaders, v):
    names = collections.defaultdict(lambda: {"once": [], "end": collections.defaultdict(list)})
    for o in ops:
        if o["f"] == "once":
            names[o["key"]]["once"].append(o)
        elif o["f"] in ("done", "once_release"):
            names[o["key"]]["end"][o["of"]].append(o)
    for name, n in names.items():
        runs = [o for o in n["once"] if o["type"] == "ok" and o.get("state") == "run"]
        dones = [d for ds in n["end"].values() for d in ds if d["f"] == "done"]
        ids = {}
        for r in runs:
            if r.get("lease") in ids:
                v.append(Violation("once-overlap", "%s: lease %s answered RUN twice" %
                                   (name, r["lease"]), [ids[r["lease"]], r]))
            ids[r.get("lease")] = r

        def end_lb(r):
            ends = [e["inv"] for e in n["end"].get(r["id"], [])]
            allow = allowance(skew, leaders, r.get("leader"), r["end"], r["inv"],
                              r["inv"] + r["secs"] + 60)
            return min(ends + [r["inv"] + r["secs"] - allow - EPS])
        runs.sort(key=lambda r: r["inv"])
        for i, r1 in enumerate(runs):
            e1 = end_lb(r1)
            for r2 in runs[i + 1:]:
                if r2["inv"] > e1:
                    break
                if r2["end"] < e1 and r1["end"] < end_lb(r2):
                    v.append(Violation("once-overlap", "%s: two runs outstanding at once"
                                       % name, [r1] + n["end"].get(r1["id"], []) + [r2]))
        ok_dones = sorted((d for d in dones if d["type"] == "ok"), key=lambda d: d["end"])
        if len(ok_dones) > 1:
            v.append(Violation("once-done", "%s: DONE answered OK twice" % name, ok_dones[:2]))
        tokens = {d["token"]: d for d in dones}
        for o in n["once"]:
            if o["type"] != "ok":
                continue
            if ok_dones and o["inv"] > ok_dones[0]["end"]:
                if o.get("state") == "run":
                    v.append(Violation("once-done", "%s: RUN answered after DONE was answered OK"
                                       % name, [ok_dones[0], o]))
                elif o.get("val") != ok_dones[0]["token"]:
                    v.append(Violation("once-done", "%s: DONE answered value %r, not the %r "
                                       "of the DONE answered OK" % (name, o.get("val"),
                                                                    ok_dones[0]["token"]),
                                       [ok_dones[0], o]))
            if o.get("state") == "done":
                d = tokens.get(o.get("val"))
                if d is None:
                    v.append(Violation("phantom", "%s: ONCE answered DONE with value %r that no "
                                       "DONE sent" % (name, o.get("val")), [o]))
                elif d["type"] == "fail":
                    v.append(Violation("failed-applied", "%s: ONCE answered the value %r of a "
                                       "DONE answered as not done (%s)" %
                                       (name, o.get("val"), d.get("msg")), [d, o]))


# --- BARRIER -------------------------------------------------------------------------------
def check_barrier(ops, v):
    bs = [o for o in ops if o["f"] == "barrier"]
    threads = sorted({o["t"] for o in bs})
    per = {t: sorted((o for o in bs if o["t"] == t and o["type"] in ("ok", "unknown")),
                     key=lambda o: o["inv"]) for t in threads}
    invs = {t: [o["inv"] for o in per[t]] for t in threads}

    def span(o):
        return o["inv"], o["end"] + (BARRIER_SLACK if o["type"] == "unknown" else 0.0)
    for a in bs:
        if a["type"] != "ok":
            continue
        lo, hi = a["inv"], a["end"]
        choices = []
        for t in threads:
            if t == a["t"]:
                continue
            # A thread has one request at a time: the ones sent before hi, latest first.
            j = bisect.bisect_right(invs[t], hi)
            c = []
            for o in reversed(per[t][max(0, j - 4):j]):
                if span(o)[1] >= lo and (o["type"] == "unknown" or (
                        o.get("gen") == a.get("gen") and o.get("leader") == a.get("leader"))):
                    c.append(span(o))
            choices.append(c)
        if len(choices) < 3 or not common_point(choices, lo, hi):
            v.append(Violation("barrier", "BARRIER answered generation %s (arrival %s) with "
                               "fewer than 4 arrivals waiting at any one time"
                               % (a.get("gen"), a.get("arrival")),
                               [o for o in bs if o["inv"] <= hi and o["end"] >= lo]))
            break
    groups = collections.defaultdict(list)
    for o in bs:
        if o["type"] == "ok":
            groups[(o.get("leader"), o.get("gen"))].append(o)
    for key, g in groups.items():
        g.sort(key=lambda o: o["end"])
        cluster = [g[0]]
        for o in g[1:] + [None]:
            if o is not None and o["end"] - cluster[-1]["end"] < 1.0:
                cluster.append(o)
                continue
            arr = [c.get("arrival") for c in cluster]
            if len(cluster) > 4 or len(set(arr)) != len(arr):
                v.append(Violation("barrier", "generation %s of leader %s answered %d arrivals "
                                   "with places %s" % (key[1], key[0], len(cluster), arr), cluster))
                return
            cluster = [o]


def common_point(choices, lo, hi):
    """Whether one interval from each list and [lo, hi] share a point."""
    def rec(i, lo, hi):
        if lo > hi:
            return False
        if i == len(choices):
            return True
        return any(rec(i + 1, max(lo, s), min(hi, e)) for s, e in choices[i])
    return rec(0, lo, hi)


# --- old leaders ---------------------------------------------------------------------------
def check_stale_leader(ops, events, t0, v):
    windows = []
    for e in events:
        if e.get("ev") == "partition" and e.get("end"):
            for n in e.get("minority", []):
                windows.append((n, e["start"], e["end"], "isolated"))
        elif e.get("ev") == "pause" and e.get("end") and e.get("was_leader"):
            new = [x["t"] for x in events if x.get("ev") == "view" and x.get("role") == "leader"
                   and x.get("serving") and x["node"] != e["node"] and e["start"] < x["t"] < e["end"]]
            if new:
                windows.append((e["node"], min(new), e["end"] + 0.5, "paused and replaced"))
    for n, s, t, why in windows:
        bad = [o for o in ops if o["type"] == "ok" and o.get("leader") == n and o["inv"] > s
               and o["end"] < t and o["f"] not in ("final",)]
        if bad:
            v.append(Violation("stale-leader", "node %d, %s from %.3f to %.3f s, answered %d "
                               "requests OK as the leader" % (n, why, s - t0, t - t0, len(bad)),
                               bad[:5], t=s))


# --- the report ------------------------------------------------------------------------------
def describe(o, t0):
    p = " ".join("%s=%s" % (k, str(x)[:40]) for k, x in o["p"].items())
    res = o["type"]
    for k in ("line", "val", "version", "gen", "arrival", "state", "lease"):
        if o.get(k) is not None:
            res += " %s=%s" % (k, str(o[k])[:60])
    if o.get("msg"):
        res += " (%s)" % o["msg"][:80]
    return "%9.3f %9.3f  #%-6d t%-3s %-12s via n%s leader %s  %s -> %s" % (
        o["inv"] - t0, o["end"] - t0, o["id"], o["t"], o["f"], o["node"], o.get("leader"),
        p, res)


def report(v, events, t0, out):
    lo, hi = v.window()
    out.write("  rule %s: %s\n" % (v.rule, RULES.get(v.rule, "")))
    out.write("  broken: %s\n" % v.text)
    if lo is None:
        return
    out.write("  history from %.3f to %.3f s (invoke, end, op, thread, what, node asked, "
              "X-STS-Leader, parameters -> outcome):\n" % (lo - t0, hi - t0))
    rows = [(o["inv"], describe(o, t0)) for o in v.ops]
    lo = v.focus if v.focus is not None else lo
    for e in events:
        if e.get("ev") in ("view", "violation", "state"):
            continue
        te = e.get("start", e["t"])
        if lo - 2 <= te <= hi + 0.5 or (e.get("end") and e["start"] <= hi and e["end"] >= lo):
            rows.append((te, "%9.3f %9s  nemesis %s" % (te - t0, "", nemesis_text(e))))
    for e in events:
        if e.get("ev") == "view" and lo - 2 <= e["t"] <= hi:
            rows.append((e["t"], "%9.3f %9s  node %d: %s, leader %s, term %s%s" % (
                e["t"] - t0, "", e["node"], e.get("role"), e.get("leader"), e.get("term"),
                "" if e.get("serving") or e.get("role") != "leader" else " (not serving yet)")))
    for _, r in sorted(rows, key=lambda x: x[0]):
        out.write("    " + r + "\n")


def nemesis_text(e):
    d = {k: x for k, x in e.items() if k not in ("t", "ev", "start")}
    if "end" in d and d["end"]:
        d["end"] = "+%.3f" % (d["end"] - e.get("start", e["t"]))
    return e["ev"] + " " + " ".join("%s=%s" % kv for kv in sorted(d.items()))


def load(path):
    meta, events, ops = {}, [], []
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if "meta" in r:
                meta = r["meta"]
            elif "event" in r:
                events.append(r["event"])
            else:
                ops.append(r["op"])
    return meta, events, ops


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: checker.py HISTORY.jsonl\n")
        return 2
    meta, events, ops = load(argv[1])
    t0 = meta.get("t0", 0)
    lin = []
    vs = check(ops, events, t0, lin)
    print("seed %s: %d operations, %d violations" % (meta.get("seed"), len(ops), len(vs)))
    print("linearizability: " + linear.summary(*lin))
    for x in vs:
        report(x, events, t0, sys.stdout)
    return 1 if vs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
