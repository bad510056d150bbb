// k6-script.js - stsd as k6's shared test data: unique logins (READ KEEP=TRUE), producers
// that ADD jobs, consumers that wait for one (TIMEOUT) and lease it until their ACK
// (LEASE), a rendezvous of 4 VUs before a step (BARRIER), a preparation run once across
// injectors in setup() (ONCE, DONE), and a SAVE of what is left in
// teardown. Every answer is checked; the
// thresholds fail the run if one check fails.
//
// Run it against `make run` (https://k6.io):
//     k6 run examples/k6-script.js
//     k6 run -e STS=http://HOST:9191 examples/k6-script.js      another server
//     k6 run -e STS=http://a:9191,http://b:9191,http://c:9191 ...  a cluster's nodes
//     k6 run -e RUN_ID=nightly-42 examples/k6-script.js          this run's names
// RUN_ID (default demo) prefixes the barrier and the ONCE: RUN_ID.k6, RUN_ID.dataset-ready;
// teardown() deletes the run's keys (DEL PREFIX=RUN_ID.), so the next run prepares again
// (examples/README.md, "Run ids").
// The consumers need an stsd with TIMEOUT and LEASE (stsd.maxWait, stsd.maxLease), the
// rendezvous an stsd with BARRIER, setup() an stsd with ONCE.
import http from 'k6/http';
import { check, sleep } from 'k6';

// STS: one stsd, or a cluster's nodes separated by commas (docs/cluster.md). Any node
// answers (followers forward to the leader); while the one asked is down or there is no
// leader, a request goes to the next node: on a refused connection (status 0) or a 503
// behind which no change lies. A 503 "Outcome unknown" is never sent again: its change
// may have been made.
const NODES = (__ENV.STS || 'http://localhost:9191').split(',')
    .map((u) => u.trim().replace(/\/+$/, '') + '/sts');
let node = 0;

function retryable(r) {
    return r.status === 0 || (r.status === 503 && !(r.body || '').includes('Outcome unknown'));
}

// GET path (from /COMMAND on) on the current node, then on the others, 3 rounds.
function get(path, params) {
    let r;
    for (let i = 0; i < 3 * NODES.length; i++) {
        r = http.get(NODES[node] + path, params);
        if (NODES.length === 1 || !retryable(r)) return r;
        node = (node + 1) % NODES.length;
        if (node === 0) sleep(1);
    }
    return r;
}
const RUN_ID = __ENV.RUN_ID || 'demo';
const key = (name) => `${RUN_ID}.${name}`;

export const options = {
    scenarios: {
        logins: { executor: 'constant-vus', exec: 'logins', vus: 5, duration: '20s' },
        producers: { executor: 'constant-arrival-rate', exec: 'produce', rate: 20,
                     timeUnit: '1s', duration: '20s', preAllocatedVUs: 2 },
        consumers: { executor: 'constant-vus', exec: 'consume', vus: 4, duration: '20s',
                     gracefulStop: '10s' },
        rendezvous: { executor: 'constant-vus', exec: 'rendezvous', vus: 4, duration: '20s',
                      gracefulStop: '15s' },
    },
    thresholds: { checks: ['rate==1.0'] },
};

// The text between <body> and </body>: the line, or "Error : ..." on KO.
function body(r) {
    const m = /<body>([\s\S]*)<\/body>/.exec(r.body || '');
    return m ? m[1] : '';
}

function ok(r) {
    return r.status === 200 && (r.body || '').includes('<title>OK</title>');
}

function sts(command, params, name) {
    const query = Object.entries(params)
        .map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
    return get(`/${command}?${query}`, { tags: { name: name } });
}

// Before any scenario, once per injector: ONCE answers RUN (with a lease id in X-STS-Lease)
// to exactly one caller of every injector, JMeter and Locust ones too, with this RUN_ID;
// that one prepares and sends DONE with its lease, the others wait (TIMEOUT, under the
// request's own timeout) and get DONE. LEASE=120: if the runner dies, another caller gets
// RUN after 120 s. TTL=43200: the result lasts 12 hours, longer than the test (a late
// injector finds it done), then goes even if teardown() never ran.
export function setup() {
    const r = get(`/ONCE?NAME=${key('dataset-ready')}&LEASE=120&TIMEOUT=300&TTL=43200`,
                       { timeout: '310s', tags: { name: 'ONCE dataset-ready' } });
    check(r, { 'ONCE dataset-ready: RUN or DONE': (x) => ok(x) && /^(RUN|DONE)$/.test(body(x)) });
    if (body(r) !== 'RUN') return;
    const lease = r.headers['X-Sts-Lease'];
    // The preparation goes here (load a data set, create a tenant...); here an ADD.
    const a = sts('ADD', { FILENAME: 'prepared.csv', LINE: `k6-${Date.now()}`, ADD_MODE: 'LAST' },
                  'ADD prepared.csv');
    check(a, { 'ADD prepared.csv: OK': ok });
    const d = sts('DONE', { NAME: key('dataset-ready'), LEASE: lease, VALUE: 'ok' }, 'DONE dataset-ready');
    check(d, { 'DONE dataset-ready: OK (the lease was still the run)': ok });
}

// Each iteration gets the next account; KEEP=TRUE puts it back at the tail.
export function logins() {
    const r = sts('READ', { FILENAME: 'logins.csv', KEEP: 'TRUE' }, 'READ logins.csv');
    check(r, { 'READ logins.csv: a login;password': (x) => ok(x) && /^login\d+;password\d+$/.test(body(x)) });
}

export function produce() {
    const r = sts('ADD', { FILENAME: 'jobs.csv', LINE: `job-${__VU}-${__ITER}-${Date.now()}`,
                           ADD_MODE: 'LAST' }, 'ADD jobs.csv');
    check(r, { 'ADD jobs.csv: OK': ok });
}

// The 4 VUs (and those of every other injector that says PARTIES=4) meet at the barrier,
// then all do the step at once. The request's timeout is above TIMEOUT; with
// ON_TIMEOUT=RELEASE a barrier that does not fill lets the VUs that came go on.
export function rendezvous() {
    const r = get(`/BARRIER?NAME=${key('k6')}&PARTIES=4&TIMEOUT=10&ON_TIMEOUT=RELEASE`,
                       { timeout: '15s', tags: { name: 'BARRIER k6' } });
    check(r, { 'BARRIER k6: opened, with a place': (x) => ok(x) && /^\d+$/.test(body(x)) &&
                                                         /^\d+$/.test(x.headers['X-Sts-Arrival'] || '') });
    // The step all of them do at once goes here.
}

// TIMEOUT=2 waits for a producer instead of polling; LEASE=30 lends the job: a consumer
// that dies before its ACK loses nothing, the job is back at the head 30 s later.
export function consume() {
    const r = sts('READ', { FILENAME: 'jobs.csv', KEEP: 'FALSE', TIMEOUT: '2', LEASE: '30' },
                  'READ jobs.csv');
    if (!ok(r)) {
        check(r, { 'READ jobs.csv: a job, or none after the wait': (x) =>
            x.status === 200 && /No more line|not loaded/.test(body(x)) });
        return;
    }
    const lease = r.headers['X-Sts-Lease'];
    check(r, { 'READ jobs.csv: leased': () => !!lease });
    // ... the work on body(r) goes here ...
    const a = sts('ACK', { FILENAME: 'jobs.csv', LEASE: lease }, 'ACK jobs.csv');
    check(a, { 'ACK jobs.csv: OK': ok });
}

// Once every scenario is over: what is left goes to a timestamped file, and the run's
// keys are deleted (with tokens on, DEL PREFIX needs the admin token: examples/README.md).
export function teardown() {
    const r = sts('SAVE', { FILENAME: 'jobs.csv', ADD_TIMESTAMP: 'true' }, 'SAVE jobs.csv');
    console.log(`SAVE jobs.csv: ${body(r)} lines left`);
    const d = sts('DEL', { PREFIX: `${RUN_ID}.` }, 'DEL PREFIX');
    console.log(`DEL PREFIX=${RUN_ID}.: ${body(d)} keys deleted`);
}
