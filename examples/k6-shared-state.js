// k6-shared-state.js - stsd as the state every k6 instance shares (keys and counters): a
// global order id (INCR), a semaphore of 3 seats around a step (INCR MAX TIMEOUT LEASE,
// then RELEASE), a per-user sticky login (READ KEEP=FALSE OWNER=... LEASE=60) and an
// abort flag watched without polling (GET VERSION TIMEOUT) that stops the test. Every
// answer is checked; the thresholds fail the run if one check fails.
//
// Run it against `make run` (https://k6.io), on one machine or many (name each injector):
//     k6 run examples/k6-shared-state.js
//     k6 run -e STS=http://HOST:9191 -e INJECTOR=box-2 examples/k6-shared-state.js
//     k6 run -e RUN_ID=nightly-42 examples/k6-shared-state.js     this run's keys
//     curl 'localhost:9191/sts/SET?NAME=nightly-42.abort&VALUE=stop&TTL=300'  # stops all
// RUN_ID (default demo) prefixes every key: RUN_ID.orderId, RUN_ID.seats, RUN_ID.abort. The
// abort flag's TTL (5 minutes) outlives the run, so every instance sees it, yet it is gone
// before the next; teardown() deletes the run's keys (DEL PREFIX=RUN_ID.), so a second
// run with the same RUN_ID starts clean (examples/README.md, "Run ids").
// Sticky logins need an stsd with READ ... OWNER=; the rest needs keys and counters.
import http from 'k6/http';
import exec from 'k6/execution';
import { check, sleep } from 'k6';

const STS = (__ENV.STS || 'http://localhost:9191') + '/sts';
const INJECTOR = __ENV.INJECTOR || 'k6';
const RUN_ID = __ENV.RUN_ID || 'demo';
const key = (name) => `${RUN_ID}.${name}`;
const SEATS = 3;

export const options = {
    scenarios: {
        orders: { executor: 'constant-vus', exec: 'order', vus: 4, duration: '60s' },
        seats: { executor: 'constant-vus', exec: 'guardedStep', vus: 6, duration: '60s',
                 gracefulStop: '15s' },
        logins: { executor: 'constant-vus', exec: 'stickyLogin', vus: 5, duration: '60s' },
        abort: { executor: 'constant-vus', exec: 'watchAbort', vus: 1, duration: '60s',
                 gracefulStop: '10s' },
    },
    thresholds: { checks: ['rate==1.0'] },
};

// The text between <body> and </body>: the value, or "Error : ..." on KO.
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
    return http.get(`${STS}/${command}?${query}`, { tags: { name: name } });
}

// A global order id: no other VU on any instance ever gets the same one.
export function order() {
    const r = sts('INCR', { NAME: key('orderId') }, 'INCR orderId');
    check(r, { 'INCR orderId: an id': (x) => ok(x) && /^\d+$/.test(body(x)) });
    // ... place order number body(r) ...
    sleep(0.05);
}

// At most SEATS VUs in the step, across every instance. The seat is lent (LEASE=30): a
// VU that dies inside gives it back by itself when the lease ends.
export function guardedStep() {
    const r = sts('INCR', { NAME: key('seats'), MAX: SEATS, TIMEOUT: '10', LEASE: '30' },
                  'INCR seats (take)');
    if (!ok(r)) {
        check(r, { 'INCR seats: a seat, or none after the wait': (x) =>
            x.status === 408 && /stayed at its bound/.test(body(x)) });
        return;
    }
    const lease = r.headers['X-Sts-Lease'];
    check(r, { 'INCR seats: leased': () => !!lease });
    // ... the guarded step: at most SEATS of us here at once ...
    sleep(0.2);
    const g = sts('RELEASE', { NAME: key('seats'), LEASE: lease }, 'RELEASE seats');
    check(g, { 'RELEASE seats: OK': ok });
}

// A login per VU for the whole test, never held by two VUs at once. LEASE=60: each READ
// renews the loan; a VU that stops reading gives its login back a minute later.
const mine = {};
export function stickyLogin() {
    const owner = `${INJECTOR}-${exec.vu.idInTest}`;
    const r = sts('READ', { FILENAME: 'logins.csv', KEEP: 'FALSE', OWNER: owner, LEASE: '60' },
                  'READ logins.csv OWNER');
    const login = body(r);
    check(r, {
        'READ logins.csv OWNER: a login;password': (x) => ok(x) && /^login\d+;password\d+$/.test(login),
        'READ logins.csv OWNER: the same login every time': () =>
            (mine[owner] = mine[owner] || login) === login,
    });
    // ... log in as login ...
    sleep(0.5);
}

// One VU per instance waits for the key RUN_ID.abort to change (stsd holds the GET until the
// change or the TIMEOUT) and aborts the test when it says stop.
let version = '0';
export function watchAbort() {
    const r = sts('GET', { NAME: key('abort'), VERSION: version, TIMEOUT: '10' }, 'GET abort (watch)');
    if (!ok(r)) {
        check(r, { 'GET abort: absent until the wait ends': (x) =>
            x.status === 404 && body(x).includes(`Key ${key('abort')} not found`) });
        version = '0';
        return;
    }
    version = r.headers['X-Sts-Version'] || '0';
    if (body(r) === 'stop') {
        exec.test.abort(`the abort flag is set (version ${version})`);
    }
}

// At the end: delete the run's keys (with tokens on, DEL PREFIX needs the admin token:
// examples/README.md). A run that ends without teardown() leaves its flag for 5 minutes.
export function teardown() {
    const d = sts('DEL', { PREFIX: `${RUN_ID}.` }, 'DEL PREFIX');
    console.log(`DEL PREFIX=${RUN_ID}.: ${body(d)} keys deleted`);
}
