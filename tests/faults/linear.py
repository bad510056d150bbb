#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""linear.py - searches a fault run's history for a linearization, object by object.

A history is linearizable when every operation can be given one instant between its
invocation and its answer such that, taken in the order of those instants, the answers
are the ones a single copy of each object would have given. We search for that order as
Wing and Gong did, with Lowe's memo of the configurations already tried (the set of
operations placed so far and the state they leave), and check each object on its own:
linearizability is compositional, so a history is linearizable if and only if each
object's sub-history is (Herlihy and Wing), which keeps each search small.

The objects and their sequential models:
- the list fq.csv, a FIFO queue: ADD ADD_MODE=LAST appends; READ KEEP=FALSE (FIRST)
  removes the head and answers it; READ KEEP=TRUE (FIRST) answers the head and moves it
  to the end (the reference's rotation); LENGTH counts. Before its first ADD the list
  does not exist ("not loaded yet"); once empty it answers "No more line".
- the keys cas-K-E, registers with versions: GET answers the value and version (absent:
  404, version 0); SET IF_VERSION=v sets only at version v (else a 409 that names the
  version), answering v+1.
- the counter ctr: INCR adds one and answers the new value; the final GET reads it.

What the answers mean: an OK, a 404 that says the list or key is absent or empty, and a
409 of a SET are observations, each placed between its invocation and its answer. A
request answered as not done (a 4xx or a 503 that says nothing was done, no connection)
is left out: if it did take effect, an answer that follows shows it and the search
fails. A request whose outcome is unknown (a timeout, a lost connection, "Outcome
unknown") may have taken effect at any instant after its invocation, or never: it is
open-ended, and its answer, if any, is not checked.

The search is bounded: STEPS_PER_OP model steps per operation of the object, at most
MAX_STEPS. Past it the object's result is "unknown", which fails the run as a violation
would: a search too large never passes silently.

Alone, on a saved history:  tests/faults/linear.py WORKDIR/history.jsonl"""
import json
import sys
import time

INF = float("inf")
QUEUE = "fq.csv"
COUNTER = "ctr"
STEPS_PER_OP = 3000
MAX_STEPS = 2000000


class Op:
    """One operation as the search sees it: kind and argument, the answer to check
    (None: open-ended, not checked), its interval, and the history record."""
    __slots__ = ("kind", "arg", "res", "inv", "end", "raw", "i", "hint", "after")

    def __init__(self, kind, arg, res, raw, open_ended=False):
        self.kind, self.arg, self.res, self.raw = kind, arg, res, raw
        self.inv = raw["inv"]
        self.end = INF if open_ended else raw["end"]
        self.i = 0
        self.hint = None         # where the answers say it goes among ops of its kind
        self.after = ()          # ops that must be placed before this one

    def text(self):
        if self.kind == "add":
            s = "ADD %s" % self.arg
        elif self.kind in ("pop", "rot"):
            s = "READ KEEP=%s" % ("FALSE" if self.kind == "pop" else "TRUE")
        elif self.kind == "len":
            s = "LENGTH"
        elif self.kind == "get":
            s = "GET"
        elif self.kind == "set":
            s = "SET %r IF_VERSION=%s" % (self.arg[0][-24:], self.arg[1])
        elif self.kind == "conflict":
            s = "SET IF_VERSION=%s" % self.arg
        else:
            s = self.kind.upper()
        return s + (" -> %s" % (fmt(self.res),) if self.res is not None else
                    " -> (outcome unknown)" if self.end == INF else "")


def fmt(x):
    if isinstance(x, tuple) and len(x) == 2 and isinstance(x[1], int):
        return "%r at version %d" % (x[0][-40:] if isinstance(x[0], str) else x[0], x[1])
    return repr(x)


# --- the models: step(state, op) -> (new state, None) or (None, what the model says) ---
def queue_step(s, op):
    k, r = op.kind, op.res
    if k == "add":
        return (s or ()) + (op.arg,), None
    if k == "len":
        n = "missing" if s is None else len(s)
        return (s, None) if r is None or r == n else (None, "LENGTH %s" % n)
    # pop and rot: the head, or why there is none
    head = "missing" if s is None else "empty" if not s else s[0]
    if r is not None and r != head:
        return None, "READ answers %s" % (repr(head) if s else head)
    if not s:
        return s, None                   # a KO: nothing taken
    return (s[1:] if k == "pop" else s[1:] + (s[0],)), None


def register_step(s, op):
    value, version = s
    k = op.kind
    if k == "get":
        return (s, None) if op.res == s else (None, "GET answers %s" % fmt(s))
    if k == "conflict":
        if version == op.arg:
            return None, "SET IF_VERSION=%d succeeds (version %d)" % (op.arg, version)
        if op.res is not None and op.res != version:
            return None, "the 409 names version %d" % version
        return s, None
    # set
    new, if_version = op.arg
    if version != if_version:
        if op.res is None:
            return s, None               # open-ended: it would have been a 409
        return None, "SET IF_VERSION=%d is a 409 (version %d)" % (if_version, version)
    if op.res is not None and op.res != version + 1:
        return None, "SET answers version %d" % (version + 1)
    return (new, version + 1), None


def counter_step(s, op):
    value, version = s
    if op.kind == "get":
        return (s, None) if op.res == s else (None, "GET answers %d at version %d" % s)
    if op.res is not None and op.res != value + 1:
        return None, "INCR answers %d" % (value + 1)
    return (value + 1, version + 1), None


# --- from the history's records to each object's operations ----------------------------
def absent(o):
    return o["type"] == "fail" and o.get("status") == 404


def queue_op(o):
    f, t = o["f"], o["type"]
    if f == "qadd":
        return Op("add", o["line"], None, o, t == "unknown") if t != "fail" else None
    kind = {"qread": "pop", "qpeek": "rot", "qlen": "len"}[f]
    if t == "ok":
        res = o.get("val") if f == "qlen" else o.get("line")
        return Op(kind, None, res, o)
    if absent(o):
        msg = o.get("msg", "")
        res = "missing" if "not loaded" in msg else "empty" if "No more line" in msg else None
        return Op(kind, None, res, o) if res else None
    if t == "unknown" and kind != "len":
        return Op(kind, None, None, o, True)
    return None


def key_op(o):
    f, t = o["f"], o["type"]
    if f in ("get", "final"):
        if t == "ok":
            return Op("get", None, (o.get("val") or "", o.get("version")), o)
        return Op("get", None, ("", 0), o) if absent(o) else None
    # cas: a SET IF_VERSION
    if t == "ok":
        return Op("set", (o["p"]["VALUE"], o["from_version"]), o.get("version"), o)
    if t == "unknown":
        return Op("set", (o["p"]["VALUE"], o["from_version"]), None, o, True)
    if o.get("status") == 409:
        msg, named = o.get("msg", ""), None
        if " is at version " in msg:
            try:
                named = int(msg.split(" is at version ", 1)[1].split()[0].rstrip(",."))
            except ValueError:
                named = None
        return Op("conflict", o["from_version"], named, o)
    return None


def counter_op(o):
    f, t = o["f"], o["type"]
    if f == "final":
        if t == "ok":
            try:
                return Op("get", None, (int(o.get("val")), o.get("version")), o)
            except (TypeError, ValueError):
                return Op("get", None, (o.get("val"), o.get("version")), o)
        return Op("get", None, (0, 0), o) if absent(o) else None
    if t == "ok":
        return Op("incr", None, o.get("val"), o)
    return Op("incr", None, None, o, True) if t == "unknown" else None


MODELS = {"queue": (queue_step, None), "register": (register_step, ("", 0)),
          "counter": (counter_step, (0, 0))}


def objects(history):
    """{name: (model, [Op])} of the operations in the history that a model covers."""
    objs = {}

    def put(name, model, op):
        if op is not None:
            objs.setdefault(name, (model, []))[1].append(op)
    for o in history:
        f = o["f"]
        if f in ("qadd", "qread", "qpeek", "qlen"):
            put(QUEUE, "queue", queue_op(o))
        elif f in ("get", "cas"):
            put(o["key"], "register", key_op(o))
        elif f == "incr":
            put(COUNTER, "counter", counter_op(o))
        elif f == "final":
            name = o["p"].get("NAME", "")
            if name == COUNTER:
                put(COUNTER, "counter", counter_op(o))
            elif name.startswith("cas-"):
                put(name, "register", key_op(o))
    for model, ops in objs.values():
        close_seen(model, ops)
        hint_order(model, ops)
        if model == "queue":
            order_adds(ops)
    return objs


def hint_order(model, ops):
    """The order to try first among candidates of one kind, from what the answers show
    (only an order of trial: every order is still searched). The ADDs in the order their
    lines were first read, since a queue gives them back in the order it took them; the
    INCRs by the value they answered; the SETs by the version they answered. Each kind
    keeps the places the answers' order gave it, and is reordered among them."""
    if model == "queue":
        seen = {}                        # line -> the ends of its readers, in order
        for o in sorted(ops, key=lambda o: o.end):
            if o.kind in ("pop", "rot") and o.end != INF and o.res is not None:
                seen.setdefault(o.res, []).append(o.end)
        for o in ops:
            if o.kind == "add":
                o.hint = (seen.get(o.arg, [INF])[0], o.end)
            elif o.kind == "rot" and o.end != INF and o.res in seen:
                # a rotation puts its line back at the end, as an ADD would: it goes
                # among the ADDs by when that line is read next
                later = [e for e in seen[o.res] if e > o.end]
                o.hint = (later[0] if later else INF, o.end)
    else:
        for o in ops:
            if o.kind in ("incr", "set"):
                o.hint = (INF if o.res is None else o.res, o.end)


def order_adds(ops):
    """A queue's lines first reach its head in the order they were added (a rotation only
    moves lines already seen). So when every reader of line b had answered before any
    reader of line a was sent, b was added before a: the search may not place a's ADD
    while b's is not placed. Only ADDs that overlap need saying (real time orders the
    rest). An open-ended READ KEEP=TRUE may have rotated a line unseen, which breaks the
    premise: then nothing is said."""
    if any(o.kind == "rot" and o.end == INF for o in ops):
        return
    seen_end, seen_inv = {}, {}
    for o in ops:
        if o.kind in ("pop", "rot") and o.end != INF and isinstance(o.res, str) \
                and o.res not in ("empty", "missing"):
            seen_end[o.res] = min(seen_end.get(o.res, INF), o.end)
            seen_inv[o.res] = min(seen_inv.get(o.res, INF), o.inv)
    adds = sorted((o for o in ops if o.kind == "add" and o.arg in seen_end and o.end != INF),
                  key=lambda o: o.inv)
    for k, a in enumerate(adds):
        before = []
        for b in adds[k + 1:]:           # invoked after a, yet perhaps placed before it
            if b.inv > a.end:
                break
            if seen_end[b.arg] < seen_inv[a.arg]:
                before.append(b)
        for b in adds[:k]:               # invoked before a, still running when a began
            if b.end >= a.inv and seen_end[b.arg] < seen_inv[a.arg]:
                before.append(b)
        a.after = tuple(before)


def close_seen(model, ops):
    """An open-ended ADD whose line an answer shows (or a SET whose value a GET shows) did
    take effect, before that answer: it gets that answer's end as its own. The lines and
    the tokens are unique, so this is sound, and it saves the search from trying the op
    at every later instant."""
    if model == "queue":
        made, seen_by = "add", ("pop", "rot")
    elif model == "register":
        made, seen_by = "set", ("get",)
    else:
        return
    first = {}
    for o in ops:
        if o.kind in seen_by and o.end != INF and o.res is not None:
            v = o.res[0] if model == "register" else o.res
            first[v] = min(first.get(v, INF), o.end)
    for o in ops:
        if o.kind == made and o.end == INF:
            v = o.arg[0] if model == "register" else o.arg
            if first.get(v, INF) < INF:
                o.end = max(first[v], o.inv)


# --- the search ------------------------------------------------------------------------
class Result:
    def __init__(self, name, model, ops):
        self.name, self.model, self.n = name, model, len(ops)
        self.verdict, self.steps, self.secs = None, 0, 0.0
        self.blocked = None         # the operation that could not be placed
        self.state = None           # the state the deepest attempt reached
        self.placed = []            # the operations placed last before it
        self.tried = []             # [(op, what the model said)] at that point

    def window(self):
        """The history records to show for a failure: the last placed, then the tried."""
        seen, out = set(), []
        for op in self.placed + [op for op, _ in self.tried] + [self.blocked]:
            if op is not None and id(op) not in seen:
                seen.add(id(op))
                out.append(op.raw)
        return out


def check_object(name, model, ops, max_steps=None):
    """Searches ops (one object's) for a linearization: a Result whose verdict is
    "linearizable", "not linearizable" or "unknown" (the step budget ran out).

    What is placed is kept small, since it is half of every memo key: the answered ops
    (closed) up to a watermark in invocation order, the few placed beyond it, and a bit
    for each open-ended op placed. A frame is [state, watermark, placed beyond it, open
    bits, first unplaced in answer order, candidates, next candidate, op placed]."""
    t_start = time.monotonic()
    step, init = MODELS[model]
    res = Result(name, model, ops)
    budget = max_steps or min(MAX_STEPS, STEPS_PER_OP * max(1, len(ops)))
    closed = sorted((o for o in ops if o.end != INF), key=lambda o: o.inv)
    opens = sorted((o for o in ops if o.end == INF), key=lambda o: o.inv)
    for i, op in enumerate(closed):
        op.i = i
    for i, op in enumerate(opens):
        op.i = -1 - i                    # bit i of the open bits
    by_end = sorted(closed, key=lambda o: o.end)

    def frame(state, mark, beyond, obits, lo_end):
        """The frame after placing what mark, beyond and obits say, or None when every
        answered op is placed. Candidates: the unplaced ops invoked before the first
        unplaced answer, answered ones first (earliest answer first), then open ones."""
        while lo_end < len(by_end) and (by_end[lo_end].i < mark or by_end[lo_end].i in beyond):
            lo_end += 1
        if lo_end == len(by_end):
            return None
        bound = by_end[lo_end].end
        firsts = []
        j = mark
        while j < len(closed) and closed[j].inv <= bound:
            if j not in beyond:
                firsts.append(closed[j])
            j += 1
        firsts.sort(key=lambda o: o.end)
        hinted = [k for k, o in enumerate(firsts) if o.hint is not None]
        if len(hinted) > 1:
            for k, o in zip(hinted, sorted((firsts[k] for k in hinted), key=lambda o: o.hint)):
                firsts[k] = o
        for k, o in enumerate(opens):
            if o.inv > bound:
                break
            if not obits >> k & 1:
                firsts.append(o)
        return [state, mark, beyond, obits, lo_end, firsts, 0, None]

    root = frame(init, 0, frozenset(), 0, 0)
    if root is None:
        res.verdict = "linearizable"
        return res
    stack, memo, deepest = [root], set(), -1
    while stack:
        fr = stack[-1]
        cands = fr[5]
        if fr[6] >= len(cands):
            stack.pop()
            continue
        op = cands[fr[6]]
        fr[6] += 1
        res.steps += 1
        if res.steps > budget:
            res.verdict = "unknown"
            break
        mark, beyond, obits = fr[1], fr[2], fr[3]
        if op.after and any(b.i >= mark and b.i not in beyond for b in op.after):
            continue
        ns, why = step(fr[0], op)
        if why is not None:
            continue
        if op.i < 0:
            obits |= 1 << (-1 - op.i)
        elif op.i == mark:
            mark += 1
            while mark in beyond:
                beyond = beyond - {mark}
                mark += 1
        else:
            beyond = beyond | {op.i}
        key = (mark, beyond, obits, ns)
        if key in memo:
            continue
        memo.add(key)
        nxt = frame(ns, mark, beyond, obits, fr[4])
        if nxt is None:
            res.verdict = "linearizable"
            break
        nxt[7] = op
        stack.append(nxt)
        if nxt[4] > deepest:
            deepest = nxt[4]
            res.blocked, res.state = by_end[nxt[4]], ns
            res.placed = [f[7] for f in stack[-6:] if f[7] is not None]
            res.tried = nxt[5]
    if res.verdict is None:
        res.verdict = "not linearizable"
        if deepest < 0:                  # nothing could be placed first
            res.blocked, res.state, res.tried = by_end[root[4]], init, root[5]
    if res.verdict != "linearizable" and res.tried:
        res.tried = [(o, step(res.state, o)[1]) for o in res.tried]
    res.secs = time.monotonic() - t_start
    return res


def check_history(history, max_steps=None):
    """Every object's Result, by name."""
    return [check_object(name, model, ops, max_steps)
            for name, (model, ops) in sorted(objects(history).items())]


def explain(r, t0=0.0):
    """The lines that say why r is not linearizable (or was not decided)."""
    if r.verdict == "unknown":
        out = ["%s: unknown: no linearization found within %d model steps (%d operations); "
               "the search is too large to decide" % (r.name, r.steps - 1, r.n)]
        if r.blocked is not None:
            out.append("  the furthest it got: the %s answered at %.3f s" % (
                r.blocked.text(), r.blocked.end - t0))
        return out
    b = r.blocked
    out = ["%s: not linearizable: the %s answered at %.3f s (invoked at %.3f s) cannot be "
           "placed: whatever was placed first, the state reached is at best %s"
           % (r.name, b.text(), b.end - t0, b.inv - t0, fmt(r.state) if r.model != "queue"
              else "a list of %s" % ("none (not loaded)" if r.state is None else
                                     "%d lines, head %r" % (len(r.state), r.state[0])
                                     if r.state else "0 lines"))]
    for op in r.placed[-3:]:
        out.append("  placed last: %s (%.3f-%.3f s)" % (op.text(), op.inv - t0, op.end - t0))
    for op, why in r.tried[:8]:
        out.append("  tried next: %s (%.3f-%s s): %s" % (
            op.text(), op.inv - t0, "open" if op.end == INF else "%.3f" % (op.end - t0),
            "the model %s" % why if why else "fits, but leads nowhere"))
    return out


def summary(results, secs):
    n = sum(r.n for r in results)
    each = ", ".join("%s %d %s" % (r.name, r.n, r.verdict) for r in results)
    return "%d operations on %d objects checked in %.1f s: %s" % (n, len(results), secs, each)


def dump(results, path):
    with open(path, "w") as f:
        for r in results:
            f.write(json.dumps({"object": r.name, "model": r.model, "ops": r.n,
                                "verdict": r.verdict, "steps": r.steps,
                                "secs": round(r.secs, 3),
                                "window": [o["id"] for o in r.window()]
                                if r.verdict != "linearizable" else []}) + "\n")


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: linear.py HISTORY.jsonl\n")
        return 2
    t0, ops = 0.0, []
    with open(argv[1]) as f:
        for line in f:
            rec = json.loads(line)
            if "meta" in rec:
                t0 = rec["meta"].get("t0", 0.0)
            elif "op" in rec:
                ops.append(rec["op"])
    t = time.monotonic()
    results = check_history(ops)
    print(summary(results, time.monotonic() - t))
    bad = [r for r in results if r.verdict != "linearizable"]
    for r in bad:
        print("\n".join(explain(r, t0)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
