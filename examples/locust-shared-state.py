"""locust-shared-state.py - stsd as the state every Locust worker shares (keys and
counters): a global order id (INCR), a semaphore of 3 seats around a step (INCR MAX
TIMEOUT LEASE, then RELEASE), a per-user sticky login (READ KEEP=FALSE OWNER=...) and an
abort flag every user watches without polling (GET VERSION TIMEOUT).

Run it against `make run` (Debian: apt-get install python3-locust; or pip install locust),
one process or many workers on many machines, all with the same --host:

    RUN_ID=nightly-42 locust -f examples/locust-shared-state.py \\
        --host http://localhost:9191 --headless -u 12 -r 12 -t 60s --stop-timeout 5
    curl 'localhost:9191/sts/SET?NAME=nightly-42.abort&VALUE=stop&TTL=300'  # stops them all

RUN_ID (default demo) prefixes every key: RUN_ID.orderId, RUN_ID.seats, RUN_ID.abort. The
abort flag's TTL (5 minutes) outlives the run, so every injector sees it, yet it is gone
before the next; at the end test_stop deletes the run's keys (DEL PREFIX=RUN_ID.), so a
second run with the same RUN_ID starts clean (examples/README.md, "Run ids").

The user classes (name some after the options to run only those):
  OrderUser         INCR orderId: an id no other user on any injector ever gets
  SeatUser          at most SEATS users in the guarded step, across every injector: INCR
                    seats MAX=3 TIMEOUT=10 LEASE=30, the step, RELEASE seats LEASE=id; a
                    user that dies inside gives its seat back when its lease ends
  StickyLoginUser   READ logins.csv KEEP=FALSE OWNER=host-n: the first READ takes a login
                    and lends it to this user, every later one answers the same login;
                    RELEASE ... OWNER=... puts it back when the user stops (needs an stsd
                    with OWNER)
  AbortWatcher      one per process: GET abort VERSION=v TIMEOUT=5 waits for the key to
                    change; when it says "stop", the test stops (runner.quit)
Every answer is checked; one that is not what the plan expects fails a request, and
`locust` then exits with status 1. At the end the file prints what it saw (ids taken and
distinct, the most users in the step at once, the sticky logins).
"""
import itertools
import os
import re
import urllib.request
import socket

import gevent
from locust import HttpUser, constant, events, task
from locust.exception import StopUser

BODY = re.compile(r"<body>(.*)</body>", re.S)
SEATS = 3
RUN_ID = os.environ.get("RUN_ID", "demo")


def key(name):
    """The name of a key of this run: RUN_ID.name."""
    return "%s.%s" % (RUN_ID, name)


NOT_FOUND = "Error : Key %s not found !" % key("abort")
AT_BOUND = "Error : Key %s stayed at its bound until TIMEOUT, nothing changed !" % key("seats")

# What this process saw, printed at the end (tests/examples/test-examples.sh reads it).
seen = {"ids": [], "inside": 0, "most_inside": 0, "logins": {}, "sticky_reads": 0,
        "sticky_changed": 0}
user_numbers = itertools.count(1)


def sts(user, command, name, allow=(), **params):
    """GETs /sts/COMMAND?params as one request named `name` in the statistics. Returns
    (body, response) for an OK page, (None, response) for a KO whose message is in
    `allow` (counted as a success); anything else is counted as a failure. A KO of
    stsd's own commands (INCR, GET...) comes with its HTTP status (408, 404...)."""
    with user.client.get("/sts/" + command, params=params, name=name,
                         catch_response=True) as r:
        m = BODY.search(r.text or "")
        body = m.group(1) if m else ""
        if r.status_code == 200 and "<title>OK</title>" in r.text:
            r.success()
            return body, r
        if "<title>KO</title>" in r.text and body in allow:
            r.success()
        else:
            r.failure("HTTP %d: %s" % (r.status_code, body or r.text[:80]))
        return None, r


class OrderUser(HttpUser):
    """A global order id: INCR answers each value once, whichever injector asks."""
    wait_time = constant(0.02)

    @task
    def order(self):
        body, r = sts(self, "INCR", "INCR orderId", NAME=key("orderId"))
        if body is None:
            return
        if not re.fullmatch(r"\d+", body):
            r.failure("not an id: %r" % body)
            return
        seen["ids"].append(int(body))


class SeatUser(HttpUser):
    """A semaphore across every injector: a seat is an increment of `seats` bounded by
    MAX, lent with LEASE so that a user that dies gives it back by itself."""
    wait_time = constant(0.02)

    @task
    def guarded_step(self):
        body, r = sts(self, "INCR", "INCR seats (take)", allow=(AT_BOUND,), NAME=key("seats"),
                      MAX=str(SEATS), TIMEOUT="10", LEASE="30")
        if body is None:
            return          # waited 10 s for a seat: try again
        lease = r.headers.get("X-STS-Lease")
        if not lease:
            r.failure("no X-STS-Lease header")
            return
        try:
            # The guarded step: never more than SEATS users here at once.
            seen["inside"] += 1
            seen["most_inside"] = max(seen["most_inside"], seen["inside"])
            if seen["inside"] > SEATS:
                r.failure("%d users in the step, SEATS is %d" % (seen["inside"], SEATS))
            gevent.sleep(0.05)
        finally:
            seen["inside"] -= 1
            sts(self, "RELEASE", "RELEASE seats", NAME=key("seats"), LEASE=lease)


class StickyLoginUser(HttpUser):
    """A login per virtual user for the whole test, never held by two users at once: the
    owner is this machine and this user's number, unique within the process (JMeter's
    ${__machineName}-${__threadName}: a thread's name is unique within an engine, its
    __threadNum only within its thread group)."""
    wait_time = constant(0.05)

    def on_start(self):
        self.owner = "%s-%d" % (socket.gethostname(), next(user_numbers))
        self.login = None

    @task
    def log_in(self):
        body, r = sts(self, "READ", "READ logins.csv OWNER", FILENAME="logins.csv",
                      KEEP="FALSE", OWNER=self.owner)
        if body is None:
            return
        seen["sticky_reads"] += 1
        if self.login is None:
            self.login = body
            seen["logins"][self.owner] = body
        elif body != self.login:
            seen["sticky_changed"] += 1
            r.failure("owner %s got %r, then %r" % (self.owner, self.login, body))

    def on_stop(self):
        if self.login is not None:
            sts(self, "RELEASE", "RELEASE logins.csv OWNER", FILENAME="logins.csv",
                OWNER=self.owner)


class AbortWatcher(HttpUser):
    """One per process: waits for the key RUN_ID.abort to change (no polling: the GET is held
    by stsd until the change or the TIMEOUT), and stops the test when it says stop."""
    fixed_count = 1
    wait_time = constant(0)

    def on_start(self):
        self.version = "0"        # 0: wait while the key does not exist

    @task
    def watch(self):
        body, r = sts(self, "GET", "GET abort (watch)", allow=(NOT_FOUND,), NAME=key("abort"),
                      VERSION=self.version, TIMEOUT="5")
        if body is None:
            self.version = "0"
            return
        self.version = r.headers.get("X-STS-Version", "0")
        if body == "stop":
            print("abort flag seen (version %s): stopping" % self.version)
            # From a greenlet of its own: quit() stops every user, this one included.
            gevent.spawn(self.environment.runner.quit)
            raise StopUser()


@events.test_stop.add_listener
def report(environment, **_kwargs):
    ids = seen["ids"]
    print("order ids: %d taken, %d distinct" % (len(ids), len(set(ids))))
    print("seats: at most %d users in the step at once (SEATS %d)"
          % (seen["most_inside"], SEATS))
    logins = seen["logins"]
    print("sticky logins: %d owners, %d distinct logins, %d reads, %d changed"
          % (len(logins), len(set(logins.values())), seen["sticky_reads"],
             seen["sticky_changed"]))


@events.test_stop.add_listener
def clean_up(environment, **_kwargs):
    """Last: delete this run's keys (the counters, the flag), so that the next run with
    the same RUN_ID starts clean. With tokens on, DEL PREFIX needs the admin token
    (examples/README.md)."""
    url = environment.host.rstrip("/") + "/sts/DEL?PREFIX=" + RUN_ID + "."
    with urllib.request.urlopen(url, timeout=10) as f:
        m = BODY.search(f.read().decode("utf-8", "replace"))
    print("stsd DEL PREFIX=%s.: %s keys deleted" % (RUN_ID, m.group(1) if m else "?"))
