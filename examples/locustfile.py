"""locustfile.py - stsd as Locust's shared test data: unique logins, a producer/consumer
queue whose consumers wait (TIMEOUT) instead of polling, every job consumed once, leased
jobs ACKed when done, a preparation run once across users and injectors (ONCE, DONE),
and a SAVE of what is left when the test stops.

Run it against `make run` (Debian: apt-get install python3-locust; or pip install locust):

    RUN_ID=nightly-42 locust -f examples/locustfile.py --host http://localhost:9191 \\
        --headless -u 12 -r 12 -t 30s --stop-timeout 5

Against a cluster (docs/cluster.md), --host is any node's URL (followers forward to the
leader), and STSD_NODES may list every node's, comma separated: while the node asked is
down or the cluster elects a leader, a request goes to the next one (a refused connection,
or a 503 behind which no change lies; never a 503 "Outcome unknown", whose change may
have been made).

RUN_ID (default demo) prefixes the names of this run's barrier and ONCE: RUN_ID.locust,
RUN_ID.dataset-ready; at the end test_stop deletes them (DEL PREFIX=RUN_ID.), so the next
run prepares again (examples/README.md, "Run ids").

--stop-timeout lets each user finish the job in hand when the test stops: without it a
user killed between READ and its bookkeeping drops a job, which is what LEASE is for.
The user classes (name some after the options to run only those):
  LoginUser      READ logins.csv (KEEP=TRUE): each iteration gets the next account
  Producer       ADD queue.csv: new jobs at the tail
  Consumer       READ queue.csv KEEP=FALSE TIMEOUT=1, then records the job in done.csv
  LeaseConsumer  READ queue.csv KEEP=FALSE LEASE=30, records it, then ACK (needs an stsd
                 with leases, `stsd.maxLease`)
  Rendezvous     BARRIER NAME=RUN_ID.locust PARTIES=$RENDEZVOUS_PARTIES (default 4): the users of
                 this class (in every injector) meet, then all do the step at once (needs
                 an stsd with BARRIER; run as many of them as PARTIES says, or more)
  PrepareOnce    on_start: ONCE NAME=RUN_ID.dataset-ready; the one user (of every injector) that
                 gets RUN prepares (ADD prepared.csv) and sends DONE, the others wait
                 and get DONE (needs an stsd with ONCE)
A job is recorded with ADD done.csv UNIQUE=TRUE, so a job consumed twice fails a request;
any answer a plan does not expect fails too, and `locust` then exits with status 1.
"""
import os
import re
import time
import urllib.request
import uuid

from locust import HttpUser, constant, events, task

BODY = re.compile(r"<body>(.*)</body>", re.S)
LOGIN = re.compile(r"login\d+;password\d+")
QUEUE = "queue.csv"  # the example dataset: 10 orders, then what producers add
DONE = "done.csv"    # every job consumed, once
RUN_ID = os.environ.get("RUN_ID", "demo")


def key(name):
    """The name of a key, barrier or ONCE of this run: RUN_ID.name."""
    return "%s.%s" % (RUN_ID, name)


# A cluster's nodes (STSD_NODES, comma separated), tried in turn; empty: --host alone.
NODES = [u.strip().rstrip("/") for u in os.environ.get("STSD_NODES", "").split(",")
         if u.strip()]


def retryable(r):
    """No answer from that node, or a 503 that no change lies behind (no leader yet, or
    the leader changed under a waiting request)."""
    return r.status_code == 0 or (r.status_code == 503 and
                                  "Outcome unknown" not in (r.text or ""))


def judge(r, allow):
    """(body, response) for an OK page, (None, response) for a KO whose message is in
    `allow` (counted as a success); anything else is counted as a failure."""
    m = BODY.search(r.text or "")
    body = m.group(1) if m else ""
    if r.status_code == 200 and "<title>OK</title>" in r.text:
        r.success()
        return body, r
    if r.status_code == 200 and body in allow:
        r.success()
    else:
        r.failure("HTTP %d: %s" % (r.status_code, body or r.text[:80]))
    return None, r


def sts(user, command, name, allow=(), **params):
    """GETs /sts/COMMAND?params as one request named `name` in the statistics: see
    judge. With STSD_NODES, an answer that is retryable goes to the next node, for 3
    rounds a second apart (each try counted as a request of its own)."""
    urls = [n + "/sts/" + command for n in NODES] or ["/sts/" + command]
    tries = 3 * len(urls) if NODES else 1
    for attempt in range(tries):
        with user.client.get(urls[attempt % len(urls)], params=params, name=name,
                             catch_response=True) as r:
            if attempt == tries - 1 or not retryable(r):
                return judge(r, allow)
            r.success()           # that node is down, or no leader yet: not an answer
        if (attempt + 1) % len(urls) == 0:
            time.sleep(1)


class LoginUser(HttpUser):
    """Unique logins: READ with KEEP=TRUE hands out the next account and puts it back at
    the tail, so N users cycle through the accounts."""
    wait_time = constant(0.05)

    @task
    def log_in(self):
        body, r = sts(self, "READ", "READ logins.csv", FILENAME="logins.csv")
        if body is not None and not LOGIN.fullmatch(body):
            r.failure("not a login;password line: %r" % body)


class Producer(HttpUser):
    """Producers ADD jobs at the tail of the queue."""
    wait_time = constant(0.05)

    @task
    def produce(self):
        sts(self, "ADD", "ADD queue.csv", FILENAME=QUEUE, LINE="job-" + uuid.uuid4().hex,
            ADD_MODE="LAST")


class Consumer(HttpUser):
    """Consumers take a job for good (KEEP=FALSE). TIMEOUT=1 waits up to a second for one
    when the queue is empty, instead of a polling loop; the answer after the wait is the
    usual KO, which is no failure."""
    wait_time = constant(0)

    @task
    def consume(self):
        job, _ = sts(self, "READ", "READ queue.csv TIMEOUT", allow=("Error : No more line !",),
                     FILENAME=QUEUE, KEEP="FALSE", TIMEOUT="1")
        if job is not None:
            sts(self, "ADD", "ADD done.csv UNIQUE", FILENAME=DONE, LINE=job, UNIQUE="TRUE")


class LeaseConsumer(HttpUser):
    """Leased jobs: the line leaves the queue but is only on loan; ACK settles it once the
    work is done. A user that dies before the ACK loses nothing: at the lease's deadline
    the job is back at the head of the queue for another consumer."""
    wait_time = constant(0)

    @task
    def consume(self):
        job, r = sts(self, "READ", "READ queue.csv LEASE", allow=("Error : No more line !",),
                     FILENAME=QUEUE, KEEP="FALSE", TIMEOUT="1", LEASE="30")
        if job is None:
            return
        lease = r.headers.get("X-STS-Lease")
        if not lease:
            r.failure("no X-STS-Lease header: is this stsd built with leases?")
            return
        sts(self, "ADD", "ADD done.csv UNIQUE", FILENAME=DONE, LINE=job, UNIQUE="TRUE")
        sts(self, "ACK", "ACK queue.csv", FILENAME=QUEUE, LEASE=lease)


class Rendezvous(HttpUser):
    """A rendezvous: each iteration waits at the barrier until PARTIES users (of every
    injector) are there, then all do the step at once. The request's own timeout (40 s)
    is above TIMEOUT (30 s): a barrier that does not fill answers before Locust gives
    up, and with ON_TIMEOUT=RELEASE it lets the users that came go on anyway."""
    wait_time = constant(0)
    parties = int(os.environ.get("RENDEZVOUS_PARTIES", "4"))

    @task
    def meet(self):
        with self.client.get("/sts/BARRIER", name="BARRIER locust", timeout=40,
                             catch_response=True,
                             params={"NAME": key("locust"), "PARTIES": self.parties,
                                     "TIMEOUT": 30, "ON_TIMEOUT": "RELEASE"}) as r:
            if r.status_code != 200 or "<title>OK</title>" not in r.text:
                r.failure("BARRIER: %s" % (r.text or "")[:80])
                return
            r.success()
        # The step all of them do at once goes here; X-STS-Arrival is this user's place.
        sts(self, "READ", "READ logins.csv", FILENAME="logins.csv", KEEP="TRUE")


class PrepareOnce(HttpUser):
    """A preparation run once: every user calls ONCE in on_start. Exactly one (of every
    injector, JMeter and k6 ones too, with this RUN_ID) gets RUN with a lease id
    in X-STS-Lease, prepares and sends DONE with that lease; the others wait, parked, up
    to TIMEOUT (under the request's own timeout), and get DONE; later callers get DONE at
    once. LEASE=120: if the runner dies, another caller gets RUN after 120 s. TTL=43200:
    the result lasts 12 hours, longer than the test, so that a late injector finds it
    done, then goes even if test_stop never ran; test_stop deletes it sooner."""
    wait_time = constant(0.5)
    ran = 0     # users of this process that got RUN
    waited = 0  # users of this process that got DONE

    def on_start(self):
        with self.client.get("/sts/ONCE", name="ONCE dataset-ready", timeout=310,
                             catch_response=True,
                             params={"NAME": key("dataset-ready"), "LEASE": 120,
                                     "TIMEOUT": 300, "TTL": 43200}) as r:
            m = BODY.search(r.text or "")
            state = m.group(1) if m else ""
            if r.status_code != 200 or state not in ("RUN", "DONE"):
                r.failure("ONCE: %s" % (r.text or "")[:80])
                return
            r.success()
        if state == "DONE":
            PrepareOnce.waited += 1
            return
        PrepareOnce.ran += 1
        lease = r.headers.get("X-STS-Lease")
        # The preparation goes here (load a data set, create a tenant...): here an ADD,
        # and a second of work, so that the other users are seen waiting.
        sts(self, "ADD", "ADD prepared.csv", FILENAME="prepared.csv",
            LINE="locust-%s" % uuid.uuid4(), ADD_MODE="LAST")
        time.sleep(1)
        sts(self, "DONE", "DONE dataset-ready", NAME=key("dataset-ready"), LEASE=lease, VALUE="ok")

    @task
    def use(self):
        # The prepared data is there for every user: its value is the key's.
        body, _ = sts(self, "GET", "GET dataset-ready", NAME=key("dataset-ready"))
        if body is not None and body != "ok":
            print("dataset-ready is %r, not 'ok'" % body)


@events.test_stop.add_listener
def once_summary(**_kwargs):
    if PrepareOnce.ran or PrepareOnce.waited:
        print("once: %d ran the preparation, %d got DONE" % (PrepareOnce.ran, PrepareOnce.waited))


@events.test_stop.add_listener
def save_leftovers(environment, **_kwargs):
    """At the end, once every user has stopped: SAVE what is left of the queue (to a
    timestamped file in stsd's dataset directory) and say how long the lists are."""
    added = environment.stats.get("ADD queue.csv", "GET")
    print("jobs produced: %d" % (added.num_requests - added.num_failures))
    base = environment.host.rstrip("/") + "/sts/"
    for query in ("SAVE?FILENAME=%s&ADD_TIMESTAMP=true" % QUEUE, "STATUS"):
        with urllib.request.urlopen(base + query, timeout=10) as f:
            page = f.read().decode("utf-8", "replace")
        m = BODY.search(page)
        print("stsd %s: %s" % (query.split("?")[0],
                               (m.group(1) if m else page).replace("<br />", "").strip()))


@events.test_stop.add_listener
def clean_up(environment, **_kwargs):
    """Last: delete this run's keys, so that the next run with the same RUN_ID starts
    clean. With tokens on, DEL PREFIX needs the admin token (examples/README.md)."""
    url = environment.host.rstrip("/") + "/sts/DEL?PREFIX=" + RUN_ID + "."
    with urllib.request.urlopen(url, timeout=10) as f:
        m = BODY.search(f.read().decode("utf-8", "replace"))
    print("stsd DEL PREFIX=%s.: %s keys deleted" % (RUN_ID, m.group(1) if m else "?"))
