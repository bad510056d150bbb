# SPDX-License-Identifier: Apache-2.0
"""workload.py - the clients of the fault checker and the history they write.

Every operation is logged as one record: its invoke time and its end time (monotonic
seconds), and its outcome: "ok", "fail" (definitely not done) or "unknown" (maybe done).
See classify() for which answers are which.

Threads (at most 16): MIXED threads loop over ADD of unique lines, READ KEEP=FALSE, READ
with LEASE then ACK, RELEASE or nothing, INCR, GET then SET with IF_VERSION (a CAS whose
value is the chain of every token that won), ONCE then DONE, RELEASE or nothing, and the
queue fq.csv (ADD LAST, READ KEEP=FALSE, READ KEEP=TRUE, LENGTH: linear.py's); four
more meet at one BARRIER with PARTIES=4. Each request goes to a node picked at random
(followers forward to the leader). A token bucket keeps the total under RATE requests a
second. Each thread stops by itself at the deadline."""
import itertools
import json
import random
import threading
import time

from nodes import request

LISTS = ["fa.csv", "fb.csv"]
QUEUE = "fq.csv"                   # no leases: a plain FIFO queue, for linear.py
COUNTER = "ctr"
CAS_KEYS = 3
BARRIER = "bar"
PARTIES = 4
LEASES = (1.0, 2.0, 3.0)           # seconds a READ lends its line
ONCE_LEASE = 2.0
ONCE_PERIOD = 2.0                  # a new ONCE name every this many seconds
CLIENT_TIMEOUT = 8.0               # above every server-side wait we ask for (3 s)

# Answers that say nothing was done (503s whose text the server reserves for that).
DEFINITE_503 = ("No leader", "Leader changed", "503 stopping", "Server is stopping",
                "Journal not writable")


def now():
    return time.monotonic()


def classify(phase, status, headers, body):
    """(outcome, message, parsed JSON or None) of one request's result."""
    if phase == "connect":
        return "fail", "no connection: " + body.decode(errors="replace")[:80], None
    if phase == "sent":
        return "unknown", "no answer: " + body.decode(errors="replace")[:80], None
    d, msg = None, ""
    ctype = headers.get("content-type", "")
    if "json" in ctype:
        try:
            d = json.loads(body)
            msg = d.get("error", "") if isinstance(d, dict) else ""
        except ValueError:
            d = None
    if d is None:
        text = body.decode(errors="replace")
        if "<body>" in text:
            text = text.split("<body>", 1)[1].split("</body>", 1)[0]
        msg = text.replace("Error : ", "").strip()
    if status == 200 and isinstance(d, dict) and d.get("ok") is True:
        return "ok", "", d
    if status == 503:
        for m in DEFINITE_503:
            if msg.startswith(m):
                return "fail", msg[:120], d
        return "unknown", msg[:120], d
    if status is not None and 400 <= status < 500:
        return "fail", msg[:120], d
    return "unknown", ("HTTP %s: " % status) + msg[:120], d


class History:
    def __init__(self):
        self.ops = []
        self.events = []              # nemesis steps and cluster views
        self.ids = itertools.count(1)

    def event(self, rec):
        rec.setdefault("t", now())
        self.events.append(rec)
        return rec

    def dump(self, path, meta):
        with open(path, "w") as f:
            f.write(json.dumps({"meta": meta}) + "\n")
            for e in self.events:
                f.write(json.dumps({"event": e}) + "\n")
            for o in self.ops:
                f.write(json.dumps({"op": o}) + "\n")


class Limiter:
    """A token bucket shared by every thread: at most rate requests a second."""

    def __init__(self, rate):
        self.rate, self.lock = float(rate), threading.Lock()
        self.next = now()

    def take(self):
        with self.lock:
            t = now()
            self.next = max(self.next + 1.0 / self.rate, t - 0.05)
            wait = self.next - t
        if wait > 0:
            time.sleep(wait)


class Client:
    def __init__(self, wl, tid):
        self.wl, self.tid = wl, tid
        self.rnd = random.Random("%d/%d" % (wl.seed, tid))
        self.seq = 0

    def call(self, f, cmd, params, node=None, **extra):
        wl = self.wl
        nid = node or self.rnd.choice(wl.cl.ids())
        ip = wl.cl.node(nid).ip
        p = dict(params)
        p["FORMAT"] = "JSON"
        wl.limiter.take()
        op = {"id": next(wl.hist.ids), "t": self.tid, "f": f, "node": nid, "p": params,
              "inv": now()}
        ph, st, h, b = request(ip, cmd, p, CLIENT_TIMEOUT)
        op["end"] = now()
        typ, msg, d = classify(ph, st, h, b)
        op["type"], op["status"] = typ, st
        if msg:
            op["msg"] = msg
        ld = h.get("x-sts-leader")
        op["leader"] = int(ld) if ld and ld.isdigit() else None
        if h.get("x-sts-lease"):
            op["lease"] = h["x-sts-lease"]
        op.update(extra)
        wl.hist.ops.append(op)
        return op, d

    def uniq(self):
        self.seq += 1
        return "r%d-t%d-%d" % (self.wl.seed, self.tid, self.seq)

    # --- the operations ---------------------------------------------------------------
    def add(self):
        line = self.uniq()
        self.call("add", "ADD", {"FILENAME": self.rnd.choice(LISTS), "LINE": line,
                                 "ADD_MODE": self.rnd.choice(["FIRST", "LAST"])},
                  line=line)

    def read(self):
        op, d = self.call("read", "READ", {"FILENAME": self.rnd.choice(LISTS), "KEEP": "FALSE"})
        if op["type"] == "ok":
            op["line"] = d.get("line")

    def lease(self):
        L = self.rnd.choice(LEASES)
        op, d = self.call("lease", "READ", {"FILENAME": self.rnd.choice(LISTS), "KEEP": "FALSE",
                                            "LEASE": "%g" % L}, secs=L)
        if op["type"] != "ok":
            return
        op["line"] = d.get("line")
        if "lease" not in op:
            return
        r = self.rnd.random()
        self.think(0.0, L * (0.8 if self.rnd.random() < 0.1 else 0.1))
        if r < 0.5:
            self.call("ack", "ACK", {"FILENAME": op["p"]["FILENAME"], "LEASE": op["lease"]},
                      of=op["id"], line=op["line"])
        elif r < 0.8:
            self.call("release", "RELEASE", {"FILENAME": op["p"]["FILENAME"],
                                             "LEASE": op["lease"]},
                      of=op["id"], line=op["line"])
        # else: abandoned, the line comes back at its deadline

    def incr(self):
        op, d = self.call("incr", "INCR", {"NAME": COUNTER})
        if op["type"] == "ok":
            op["val"], op["version"] = d.get("value"), d.get("version")

    def queue(self):
        """One operation on QUEUE; more READ KEEP=FALSE than ADDs, so that it stays
        short: the order of overlapping ADDs shows only when their lines are read, and
        linear.py's search grows with what is still undecided."""
        r = self.rnd.random()
        if r < 0.35:
            line = self.uniq()
            self.call("qadd", "ADD", {"FILENAME": QUEUE, "LINE": line, "ADD_MODE": "LAST"},
                      line=line)
        elif r < 0.88:
            keep = "FALSE" if r < 0.8 else "TRUE"
            op, d = self.call("qread" if keep == "FALSE" else "qpeek", "READ",
                              {"FILENAME": QUEUE, "READ_MODE": "FIRST", "KEEP": keep})
            if op["type"] == "ok":
                op["line"] = d.get("line")
        else:
            op, d = self.call("qlen", "LENGTH", {"FILENAME": QUEUE})
            if op["type"] == "ok":
                op["val"] = d.get("length")

    def cas(self):
        key = "cas-%d-%d" % (self.rnd.randrange(CAS_KEYS), int(self.wl.elapsed() // 60))
        g, d = self.call("get", "GET", {"NAME": key}, key=key)
        if g["type"] == "ok":
            value, version = d.get("value", ""), d.get("version")
        elif g["type"] == "fail" and g["status"] == 404:
            value, version = "", 0
        else:
            return
        g["val"], g["version"] = value, version
        token = "%d.%d" % (self.tid, self.seq)
        self.seq += 1
        new = value + "|" + token if value else token
        s, d = self.call("cas", "SET", {"NAME": key, "VALUE": new, "IF_VERSION": version},
                         key=key, token=token, read=value, from_version=version)
        if s["type"] == "ok":
            s["version"] = d.get("version")

    def once(self):
        k = int(self.wl.elapsed() // ONCE_PERIOD) - (1 if self.rnd.random() < 0.2 else 0)
        name = "once-%d" % max(0, k)
        op, d = self.call("once", "ONCE", {"NAME": name, "LEASE": "%g" % ONCE_LEASE,
                                           "TIMEOUT": "3"}, key=name, secs=ONCE_LEASE)
        if op["type"] != "ok":
            return
        op["state"] = d.get("state")
        if op["state"] == "done":
            op["val"] = d.get("value")
            return
        if op["state"] != "run":
            return
        lease = d.get("lease") or op.get("lease")
        op["lease"] = lease
        r = self.rnd.random()
        self.think(0.0, ONCE_LEASE * (0.6 if self.rnd.random() < 0.1 else 0.1))
        if r < 0.7:
            token = "v%d.%d" % (self.tid, self.seq)
            self.seq += 1
            self.call("done", "DONE", {"NAME": name, "LEASE": lease, "VALUE": token},
                      key=name, of=op["id"], token=token)
        elif r < 0.85:
            self.call("once_release", "RELEASE", {"NAME": name, "LEASE": lease},
                      key=name, of=op["id"])
        # else: the runner "dies"; the run fails over at its deadline

    def think(self, lo, hi):
        t = self.rnd.uniform(lo, hi)
        end = now() + t
        while now() < end and not self.wl.stopped():
            time.sleep(min(0.05, max(0.0, end - now())))

    def run_mixed(self):
        ops = [(self.add, 30), (self.read, 18), (self.lease, 15), (self.incr, 10),
               (self.cas, 15), (self.once, 8), (self.queue, 20)]
        total = sum(w for _, w in ops)
        while not self.wl.stopped():
            r = self.rnd.uniform(0, total)
            for fn, w in ops:
                r -= w
                if r <= 0:
                    fn()
                    break

    def run_barrier(self):
        while not self.wl.stopped():
            op, d = self.call("barrier", "BARRIER", {"NAME": BARRIER, "PARTIES": PARTIES,
                                                     "TIMEOUT": "3"})
            if op["type"] == "ok":
                op["gen"], op["arrival"] = d.get("generation"), d.get("arrival")
            # A few openings a second: the barrier costs no journal, it would crowd out
            # the rest.
            self.think(0.1, 0.6)


class Workload:
    def __init__(self, seed, cl, hist, seconds, rate=1000, mixed=12):
        self.seed, self.cl, self.hist, self.seconds = seed, cl, hist, seconds
        self.limiter = Limiter(rate)
        self.mixed = mixed
        self.t0 = None
        self.threads = []

    def elapsed(self):
        return now() - self.t0

    def stopped(self):
        return now() - self.t0 >= self.seconds

    def start(self):
        self.t0 = now()
        for i in range(self.mixed):
            c = Client(self, i + 1)
            self.threads.append(threading.Thread(target=c.run_mixed, daemon=True,
                                                 name="mixed-%d" % (i + 1)))
        for i in range(PARTIES):
            c = Client(self, 100 + i)
            self.threads.append(threading.Thread(target=c.run_barrier, daemon=True,
                                                 name="barrier-%d" % i))
        for t in self.threads:
            t.start()

    def join(self):
        """Waits for every thread: each stops by itself at the deadline, and a request
        takes at most CLIENT_TIMEOUT."""
        end = self.t0 + self.seconds + CLIENT_TIMEOUT * 2 + 10
        for t in self.threads:
            t.join(max(0.1, end - now()))
        self.joined = now() - self.t0 - self.seconds
        return [t.name for t in self.threads if t.is_alive()]
