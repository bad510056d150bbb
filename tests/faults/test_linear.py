#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""test_linear.py - linear.py against hand-written histories, linearizable or not.

Among them the classic ones: the queue histories of Herlihy and Wing's paper, the
register races that Knossos and porcupine test with, and histories whose operations'
outcomes are unknown. Each case says what it expects; the run fails on any other
verdict. No server: these are the checker's own unit tests (make test-linear)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import linear  # noqa: E402

Q = linear.QUEUE
IDS = iter(range(1, 1 << 30))


def op(f, inv, end, typ="ok", **kw):
    o = {"id": next(IDS), "t": 1, "f": f, "node": 1, "p": {}, "inv": float(inv),
         "end": float(end), "type": typ, "status": 200 if typ == "ok" else None}
    o.update(kw)
    return o


# The queue's operations, as workload.py records them.
def add(line, inv, end, typ="ok"):
    return op("qadd", inv, end, typ, line=line, p={"FILENAME": Q, "LINE": line})


def pop(line, inv, end, typ="ok"):
    """READ KEEP=FALSE answering line; "empty" and "missing" are its 404s."""
    return read("qread", line, inv, end, typ)


def peek(line, inv, end, typ="ok"):
    return read("qpeek", line, inv, end, typ)


def read(f, line, inv, end, typ):
    if line == "empty":
        return op(f, inv, end, "fail", status=404, msg="No more line !")
    if line == "missing":
        return op(f, inv, end, "fail", status=404, msg="fq.csv not loaded yet !")
    return op(f, inv, end, typ, line=line if typ == "ok" else None)


def length(n, inv, end):
    if n == "missing":
        return op("qlen", inv, end, "fail", status=404, msg="fq.csv not loaded yet !")
    return op("qlen", inv, end, val=n)


# A key's: GET and SET IF_VERSION (workload.py's cas()).
def get(key, value, version, inv, end, typ="ok"):
    if version == 0:
        return op("get", inv, end, "fail", status=404, key=key, msg="Key %s not found !" % key)
    return op("get", inv, end, typ, key=key, val=value, version=version)


def cas(key, value, if_version, inv, end, typ="ok", version=None, at=None):
    """typ "ok" answers version (if_version + 1 unless given), "conflict" a 409 naming
    the version at."""
    kw = {"key": key, "p": {"NAME": key, "VALUE": value, "IF_VERSION": if_version},
          "from_version": if_version, "token": value}
    if typ == "conflict":
        return op("cas", inv, end, "fail", status=409,
                  msg="Key %s is at version %s, nothing changed !" % (key, at), **kw)
    if typ == "ok":
        kw["version"] = if_version + 1 if version is None else version
    return op("cas", inv, end, typ, **kw)


def incr(val, inv, end, typ="ok"):
    return op("incr", inv, end, typ, val=val if typ == "ok" else None, p={"NAME": "ctr"})


def final_ctr(val, version, inv, end):
    return op("final", inv, end, val=str(val), version=version, p={"NAME": "ctr"})


CASES = []


def case(name, verdict, history, obj=None, max_steps=None):
    CASES.append((name, verdict, history, obj, max_steps))


# --- the queue -------------------------------------------------------------------------
case("one add, then its read", "linearizable", [add("a", 0, 1), pop("a", 2, 3)])
case("a read overlapping the add it answers", "linearizable", [add("a", 0, 2), pop("a", 1, 3)])
case("a read answering a line before its add began", "not linearizable",
     [pop("a", 0, 1), add("a", 2, 3)])
# Herlihy and Wing, figure 1 (a): enq(x) and enq(y) overlap, so y may be first.
case("Herlihy-Wing (a): overlapping enqueues, dequeued in either order", "linearizable",
     [add("x", 0, 3), add("y", 1, 4), pop("y", 5, 7), pop("x", 6, 8)])
# (b): x was enqueued strictly before y, yet y comes out first.
case("Herlihy-Wing (b): FIFO broken", "not linearizable",
     [add("x", 0, 1), add("y", 2, 3), pop("y", 4, 5)])
# (c): a dequeue overlapping the enqueue it answers.
case("Herlihy-Wing (c): dequeue overlapping its enqueue", "linearizable",
     [add("x", 0, 3), pop("x", 1, 4)])
# (d): enq(x) then enq(y) by A; B's deq overlaps enq(y) but must see x first.
case("Herlihy-Wing (d): a dequeue that skips the head", "not linearizable",
     [add("x", 0, 1), add("y", 2, 3), pop("y", 1.5, 4)])
case("the same line read twice", "not linearizable",
     [add("a", 0, 1), pop("a", 2, 3), pop("a", 4, 5)])
case("the same line read twice by overlapping reads", "not linearizable",
     [add("a", 0, 1), pop("a", 2, 4), pop("a", 3, 5)])
case("a line that was never added", "not linearizable", [add("a", 0, 1), pop("b", 2, 3)])
case("before any ADD the list is not loaded", "linearizable",
     [pop("missing", 0, 1), length("missing", 0.5, 1.5), add("a", 2, 3)])
case("an empty answer after an ADD ended", "not linearizable",
     [add("a", 0, 1), pop("empty", 2, 3)])
case("an empty answer once the line is taken", "linearizable",
     [add("a", 0, 1), pop("a", 2, 3), pop("empty", 4, 5)])
case("an empty answer overlapping the ADD", "linearizable",
     [add("a", 1, 3), add("b", 0, 0.5), pop("b", 0.6, 0.9), pop("empty", 2, 4)])
case("KEEP=TRUE rotates: a, then b, then a", "linearizable",
     [add("a", 0, 1), add("b", 2, 3), peek("a", 4, 5), pop("b", 6, 7), pop("a", 8, 9)])
case("KEEP=TRUE that does not rotate", "not linearizable",
     [add("a", 0, 1), add("b", 2, 3), peek("a", 4, 5), pop("a", 6, 7)])
case("LENGTH after two ADDs", "linearizable", [add("a", 0, 1), add("b", 2, 3), length(2, 4, 5)])
case("LENGTH missing an ADD answered before it", "not linearizable",
     [add("a", 0, 1), add("b", 2, 3), length(1, 4, 5)])
case("LENGTH overlapping the second ADD", "linearizable",
     [add("a", 0, 1), add("b", 2, 5), length(1, 4, 6)])
case("a stale LENGTH: the list unknown after an ADD answered OK", "not linearizable",
     [add("a", 0, 1), length("missing", 2, 3)])
case("an ADD whose outcome is unknown, read later", "linearizable",
     [add("a", 0, 1, "unknown"), pop("a", 5, 6)])
case("an ADD whose outcome is unknown, never seen", "linearizable",
     [add("a", 0, 1, "unknown"), add("b", 2, 3), length(1, 4, 5), pop("b", 6, 7),
      pop("empty", 8, 9)])
case("an unknown ADD takes effect long after its timeout", "linearizable",
     [add("a", 0, 1, "unknown"), length("missing", 2, 3), pop("a", 10, 11)])
case("an unknown ADD cannot take effect before it was sent", "not linearizable",
     [pop("a", 0, 1), add("a", 2, 3, "unknown")])
case("an ADD answered as not done, yet read", "not linearizable",
     [add("a", 0, 1, "fail"), pop("a", 2, 3)])
case("a READ whose outcome is unknown took the head", "linearizable",
     [add("a", 0, 1), add("b", 2, 3), pop(None, 4, 5, "unknown"), pop("b", 6, 7),
      pop("empty", 8, 9)])
case("a READ whose outcome is unknown took nothing", "linearizable",
     [add("a", 0, 1), add("b", 2, 3), pop(None, 4, 5, "unknown"), pop("a", 6, 7),
      pop("b", 8, 9)])
case("an unknown READ cannot take a line twice", "not linearizable",
     [add("a", 0, 1), add("b", 2, 3), pop(None, 4, 5, "unknown"), pop("b", 6, 7),
      pop("a", 8, 9)])
case("four clients, interleaved, one order fits", "linearizable",
     [add("a", 0, 4), add("b", 1, 2), add("c", 3, 5), pop("b", 2.5, 6), pop("a", 4.5, 7),
      length(1, 6.5, 8), pop("c", 7.5, 9)])

# --- a key: GET and SET IF_VERSION -------------------------------------------------------
K = "cas-0-0"
case("SET then GET", "linearizable", [cas(K, "x", 0, 0, 1), get(K, "x", 1, 2, 3)], K)
case("a stale GET: absent after a SET answered OK", "not linearizable",
     [cas(K, "x", 0, 0, 1), get(K, "", 0, 2, 3)], K)
case("a GET overlapping the SET sees either", "linearizable",
     [cas(K, "x", 0, 0, 3), get(K, "", 0, 1, 2), get(K, "x", 1, 1.5, 4)], K)
# Knossos' classic race: once a read has seen the new value, a later read cannot see
# the old one, even while the write is still in flight.
case("new then old while the SET is in flight", "not linearizable",
     [cas(K, "x", 0, 0, 10), get(K, "x", 1, 1, 2), get(K, "", 0, 3, 4)], K)
case("two SET IF_VERSION=0 both answered OK", "not linearizable",
     [cas(K, "x", 0, 0, 2), cas(K, "y", 0, 1, 3)], K)
case("two SET IF_VERSION=0, one a 409 naming version 1", "linearizable",
     [cas(K, "x", 0, 0, 2), cas(K, "y", 0, 1, 3, "conflict", at=1)], K)
case("a 409 at the version it asked for", "not linearizable",
     [cas(K, "x", 0, 0, 1), cas(K, "y", 1, 2, 3, "conflict", at=1)], K)
case("a 409 naming a version the key never had then", "not linearizable",
     [cas(K, "x", 0, 0, 1), cas(K, "y", 0, 2, 3, "conflict", at=2)], K)
case("a SET answering the wrong version", "not linearizable",
     [cas(K, "x", 0, 0, 1), cas(K, "y", 1, 2, 3, version=3)], K)
case("a chain of SETs", "linearizable",
     [cas(K, "a", 0, 0, 1), cas(K, "a|b", 1, 2, 3), get(K, "a|b", 2, 4, 5),
      cas(K, "a|b|c", 2, 6, 7), get(K, "a|b|c", 3, 8, 9)], K)
case("an unknown SET, seen later", "linearizable",
     [cas(K, "x", 0, 0, 1, "unknown"), get(K, "", 0, 2, 3), get(K, "x", 1, 4, 5)], K)
case("an unknown SET seen, then unseen", "not linearizable",
     [cas(K, "x", 0, 0, 1, "unknown"), get(K, "x", 1, 2, 3), get(K, "", 0, 4, 5)], K)
case("an unknown SET at the wrong version has no effect", "linearizable",
     [cas(K, "x", 0, 0, 1), cas(K, "y", 0, 2, 3, "unknown"), get(K, "x", 1, 4, 5)], K)

# --- the counter -------------------------------------------------------------------------
C = "ctr"
case("INCRs in order", "linearizable", [incr(1, 0, 1), incr(2, 2, 3), final_ctr(2, 2, 4, 5)], C)
case("INCR answers going back", "not linearizable", [incr(2, 0, 1), incr(1, 2, 3)], C)
case("INCR answered twice", "not linearizable", [incr(1, 0, 2), incr(1, 1, 3)], C)
case("overlapping INCRs in either order", "linearizable", [incr(2, 0, 2), incr(1, 1, 3)], C)
case("an unknown INCR counted", "linearizable",
     [incr(1, 0, 1), incr(None, 2, 3, "unknown"), incr(3, 4, 5)], C)
case("an unknown INCR not counted", "linearizable",
     [incr(1, 0, 1), incr(None, 2, 3, "unknown"), incr(2, 4, 5), final_ctr(2, 2, 6, 7)], C)
case("the final GET misses an INCR", "not linearizable",
     [incr(1, 0, 1), incr(2, 2, 3), final_ctr(1, 1, 4, 5)], C)

# --- the search's bound ------------------------------------------------------------------
# Twenty overlapping ADDs, then a READ no order can answer: every order of the twenty
# must be tried before "not linearizable"; a budget of 5,000 steps says "unknown".
many = [add("m%d" % i, 0, 10) for i in range(20)] + [pop("nothing", 11, 12)]
case("too large a search is unknown, not a pass", "unknown", many, max_steps=5000)
case("a large linearizable history", "linearizable",
     [x for i in range(2000) for x in (add("l%d" % i, 3 * i, 3 * i + 2),
                                       pop("l%d" % i, 3 * i + 1, 3 * i + 2.5))])


def run_cases():
    passed = failed = 0
    for name, verdict, history, obj, max_steps in CASES:
        objs = linear.objects(history)
        model, ops = objs[obj or Q]
        r = linear.check_object(obj or Q, model, ops, max_steps)
        if r.verdict == verdict:
            passed += 1
        else:
            failed += 1
            print("  FAIL  %s: %s, expected %s" % (name, r.verdict, verdict))
            if r.verdict != "linearizable":
                print("\n".join("        " + x for x in linear.explain(r)))
    return passed, failed


def run_checks():
    """What the report of a failure says, and how a history splits into objects."""
    passed = failed = 0

    def check(name, cond):
        nonlocal passed, failed
        if cond:
            passed += 1
        else:
            failed += 1
            print("  FAIL  " + name)
    h = [add("x", 0, 1), add("y", 2, 3), pop("y", 4, 5)]
    r = linear.check_history(h)[0]
    text = "\n".join(linear.explain(r)) if r.verdict != "linearizable" else ""
    check("the report names the READ it could not place", "READ KEEP=FALSE -> 'y'" in text)
    check("the report says what the model answers", "READ answers 'x'" in text)
    check("the window holds the READ and the ADDs",
          {o["id"] for o in r.window()} >= {h[2]["id"], h[1]["id"]})
    mixed = h + [cas(K, "a", 0, 0, 1), incr(1, 0, 1), get("cas-1-0", "", 0, 0, 1),
                 op("add", 0, 1, line="z", p={"FILENAME": "fa.csv"})]
    objs = linear.objects(mixed)
    check("one object per list and key, other lists left out",
          sorted(objs) == ["cas-0-0", "cas-1-0", "ctr", Q])
    rs = linear.check_history(mixed)
    check("compositional: only the queue fails",
          [x.name for x in rs if x.verdict != "linearizable"] == [Q])
    check("the summary names each object",
          all(n in linear.summary(rs, 0.1) for n in ("cas-0-0 1 linearizable",
                                                     "fq.csv 3 not linearizable")))
    check("a 404 other than absent or empty is left out",
          linear.queue_op(op("qread", 0, 1, "fail", status=404, msg="other")) is None)
    check("a 503 answered as not done is left out",
          linear.queue_op(op("qread", 0, 1, "fail", status=503, msg="No leader")) is None)
    return passed, failed


def main():
    p1, f1 = run_cases()
    p2, f2 = run_checks()
    print("linear: %d passed, %d failed, 0 skipped" % (p1 + p2, f1 + f2))
    return 1 if f1 + f2 else 0


if __name__ == "__main__":
    sys.exit(main())
