/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_once.c - ONCE, DONE and RUNS: o is done exactly when key o exists (meet/keys.h).
 * The first caller of an o not done gets a run lease (RUN); later ones park as watchers of
 * the key until it comes to exist (DONE), or until the run ends unfinished (its RELEASE
 * with NAME=, or its deadline) and the store hands the first of them a run of its own.
 * The runner pushes its deadline on with ONCE RUN=id while it works. RUNS lists the runs
 * in progress. */
#include "cmd_once.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/num.h"
#include "hold/commit.h"
#include "hold/park.h"
#include "cmd_answer.h"
#include "cmd_keys.h"
#include "cmd_param.h"
#include "meet/keys.h"

#define MSG_RUN_LEASE     "LEASE value has to be a number of seconds from 0.001 to %d !"
#define ONCE_LEASE_MS     60000
/* X-STS-Value is built in the connection's 32 KiB memory pool (http.c) beside the
 * request: a value whose encoding is longer goes without the header (JSON, GET). */
#define ONCE_VALUE_HEADER_MAX 8192

/* The run's value as X-STS-Value, percent-encoded (cmd_percent). */
static void once_value_header(cmd_result *r, const char *value, size_t len)
{
    if (len == 0 || len > ONCE_VALUE_HEADER_MAX)
        return;                 /* libmicrohttpd refuses a header with an empty value */
    buf enc = BUF_INIT;
    /* The limit is on the encoded length: a value of unreserved bytes encodes as
     * itself, so 8 KiB of them fit as well as 2,730 bytes that take %XX each. */
    if (cmd_percent(&enc, value, len) != 0)
        r->headers.oom = 1;
    else if (enc.len <= ONCE_VALUE_HEADER_MAX)
        cmd_header(r, "X-STS-Value", enc.data);
    buf_free(&enc);
}

/* The answer of a ONCE served with rc: DONE (lease 0) with the key's value, or RUN with
 * the run's lease id and, in JSON, the ms it may take (for the runner's renewals). */
static void once_answer(cmd_result *r, store_rc rc, const char *name, uint64_t lease,
                        int64_t lease_ms, const buf *value)
{
    buf_clear(&r->headers);
    if (rc == STORE_FULL)
        return cmd_ko(r, 413, MSG_FULL_KEYS);
    if (rc != STORE_OK)
        return cmd_ko_store(r, rc, name, strlen(name));
    char id[24];
    if (lease) {
        snprintf(id, sizeof id, "%016llx", (unsigned long long)lease);
        cmd_header(r, "X-STS-Lease", id);
    } else {
        once_value_header(r, value->data ? value->data : "", value->len);
    }
    if (r->json) {
        json j;
        cmd_json_start(r, &j);
        cmd_json_name(&j, name);
        json_key(&j, "state");
        json_cstr(&j, lease ? "run" : "done");
        if (lease) {
            json_key(&j, "lease");
            json_cstr(&j, id);
            json_key(&j, "lease_ms");
            json_uint(&j, (uint64_t)lease_ms);
        } else {
            json_line(&j, "value", value->data ? value->data : "", value->len);
        }
        json_obj_end(&j);
    } else {
        buf_clear(&r->text);
        r->kind = REPLY_OK;
        buf_puts(&r->text, lease ? "RUN" : "DONE");
    }
    if (r->text.oom || r->headers.oom)
        cmd_ko(r, 503, MSG_NOMEM);
}

/* A waiter's answer: its run's record is the change the answer waits for. */
static void once_answer_kw(cmd_result *r, store_rc rc, const char *name, const key_waiter *kw)
{
    if (kw->o.lease)
        r->lsn = kw->o.lsn;
    once_answer(r, rc, name, kw->o.lease, kw->q.lease_ms, &kw->value);
}

static void ko_running(cmd_result *r, const char *name, const char *why)
{
    cmd_ko(r, 408, "");
    buf_printf(&r->text, "The run of %s is still in progress%s, nothing changed !", name, why);
}

/* A ONCE served (by a DONE, a SET, or the run handed over): DONE, RUN, or a KO. */
static uint64_t once_served(cmd_kwaiter *w, store_rc rc, cmd_result *r)
{
    if (rc == STORE_EMPTY)
        cmd_ko(r, 408, "Client gone !");
    else
        once_answer_kw(r, rc, w->name, &w->kw);
    /* DONE reports the change that woke it, RUN its own record: both wait to be durable. */
    return rc == STORE_OK ? w->kw.o.lsn : 0;
}

/* Deadline or shutdown: DONE if o is done by now, else a KO. */
static void once_expire(cmd_kwaiter *w, park_why why, cmd_result *r)
{
    uint64_t version;
    buf_clear(&w->kw.value);
    store_rc rc = keys_get(w->srv->st, w->name, &w->kw.value, &version);
    memset(&w->kw.o, 0, sizeof w->kw.o);
    if (rc == STORE_OK)
        once_answer_kw(r, rc, w->name, &w->kw);
    else if (why == PARK_SHUTDOWN)
        cmd_ko(r, 503, "Server is stopping, nothing changed !");
    else
        ko_running(r, w->name, " at TIMEOUT");
}

static const cmd_kwait_ops once_ops = {once_served, once_expire, 1};

static void ko_not_run(cmd_result *r, const char *name)
{
    cmd_ko(r, 409, "");
    buf_printf(&r->text, "This LEASE is not the run of %s (expired, given up, or %s was set), "
               "nothing changed !", name, name);
}

/* ONCE with RUN=id: the runner keeps its run for lease_ms more; RUN as ONCE gave it. */
static void once_renew(const cmd_server *srv, const char *name, const char *idv, size_t ilen,
                       int64_t lease_ms, cmd_result *r)
{
    uint64_t id = cmd_lease_id(idv, ilen);
    store_rc rc = id ? keys_run_renew(srv->st, name, id, lease_ms, &r->lsn)
                     : STORE_NO_LEASE;
    if (rc == STORE_NO_LEASE)
        return ko_not_run(r, name);
    once_answer(r, rc, name, id, lease_ms, NULL);
}

void cmd_once(const cmd_server *srv, const params *p, cmd_result *r)
{
    int64_t wait_ms, lease_ms = ONCE_LEASE_MS;
    size_t len;
    const char *name = cmd_key_name(p, r);
    if (!name || cmd_timeout_param(srv, p, r, &wait_ms) != 0)
        return;
    if (!params_get(p, PARAM_TIMEOUT, NULL))
        wait_ms = (int64_t)srv->conf->max_wait * 1000;
    const char *lv = params_get(p, PARAM_LEASE, &len);
    if (lv && (num_parse_seconds_ms(lv, len, srv->conf->max_lease, &lease_ms) != 0 ||
               lease_ms == 0))
        return cmd_ko_format(r, MSG_RUN_LEASE, srv->conf->max_lease);
    if (!lv && lease_ms > (int64_t)srv->conf->max_lease * 1000)
        lease_ms = (int64_t)srv->conf->max_lease * 1000;
    int64_t ttl_ms;
    if (cmd_ttl_param(p, r, &ttl_ms) != 0)
        return;
    const char *run = params_get(p, PARAM_RUN, &len);
    if (run)
        return once_renew(srv, name, run, len, lease_ms, r);
    cmd_kwaiter *w = cmd_kwaiter_new(srv, name, clock_now_ms() + wait_ms, &once_ops, r);
    if (!w)
        return cmd_ko(r, 503, MSG_NOMEM);
    w->kw.once = 1;
    w->kw.q.lease_ms = lease_ms;
    w->kw.q.ttl_ms = ttl_ms;
    store_rc rc = cmd_kwaiter_run(w);
    if (rc == STORE_WAITING)
        return;                         /* w belongs to its slot now */
    if (rc == STORE_NO_KEY)
        ko_running(r, name, wait_ms > 0 ? " (cannot wait)" : " (TIMEOUT=0)");
    else
        once_answer_kw(r, rc, name, &w->kw);
    cmd_kwaiter_free(w);
}

void cmd_done(const cmd_server *srv, const params *p, cmd_result *r)
{
    size_t ilen, len = 0;
    const char *name = cmd_key_name(p, r);
    if (!name)
        return;
    const char *idv = params_get(p, PARAM_LEASE, &ilen);
    if (!idv)
        return cmd_ko(r, 400, MSG_NO_LEASE_ID);
    const char *value = params_get(p, PARAM_VALUE, &len);
    if (!value)
        value = "";
    if (len > srv->conf->max_line)
        return cmd_ko(r, 400, MSG_VALUE_LONG);
    int64_t ttl_ms;
    if (cmd_ttl_param(p, r, &ttl_ms) != 0)
        return;
    uint64_t id = cmd_lease_id(idv, ilen), version = 0;
    store_rc rc = id ? keys_done_ttl(srv->st, name, id, value, len, ttl_ms, &version,
                                          &r->lsn)
                     : STORE_NO_LEASE;
    if (rc == STORE_NO_LEASE)
        return ko_not_run(r, name);
    if (rc == STORE_FULL)
        return cmd_ko(r, 413, MSG_FULL_KEYS);
    if (rc != STORE_OK)
        return cmd_ko_store(r, rc, name, strlen(name));
    char v[24];
    snprintf(v, sizeof v, "%llu", (unsigned long long)version);
    cmd_header(r, "X-STS-Version", v);
    once_value_header(r, value, len);   /* what every waiter gets, for the runner too */
    if (r->json) {
        json j;
        cmd_json_start(r, &j);
        cmd_json_name(&j, name);
        json_key(&j, "state");
        json_cstr(&j, "done");
        json_key(&j, "version");
        json_uint(&j, version);
        json_obj_end(&j);
        return;
    }
    r->kind = REPLY_OK;
    buf_puts(&r->text, "DONE");
}

/* RUNS: what a run's lease has left, as of one reading of the wall clock. */
typedef struct runs_walk {
    int64_t now;
    void *out;                  /* RUNS' listing (a buf) or its JSON array (a json) */
} runs_walk;

/* A deadline passed that the lease timer has not acted on yet shows as 0. */
static uint64_t runs_left_ms(const runs_walk *w, const key_run_info *k)
{
    return k->until > w->now ? (uint64_t)(k->until - w->now) : 0;
}

static void runs_entry(const key_run_info *k, void *ctx)
{
    runs_walk *w = ctx;
    uint64_t ms = runs_left_ms(w, k);
    char v[96];
    snprintf(v, sizeof v, "lease ends in %llu.%llu s, %zu waiting",
             (unsigned long long)(ms / 1000), (unsigned long long)(ms % 1000 / 100),
             k->waiters);
    cmd_entry(w->out, k->name, strlen(k->name), " = ", v, strlen(v));
}

static void runs_one(const key_run_info *k, void *ctx)
{
    runs_walk *w = ctx;
    json *j = w->out;
    json_obj_begin(j);
    cmd_json_name(j, k->name);
    json_key(j, "expires_in_ms");
    json_uint(j, runs_left_ms(w, k));
    json_key(j, "waiters");
    json_uint(j, k->waiters);
    json_obj_end(j);
}

void cmd_runs(const cmd_server *srv, const params *p, cmd_result *r)
{
    const char *prefix = params_get(p, PARAM_PREFIX, NULL);
    runs_walk w = {clock_wall_ms(), &r->text};
    long n;
    if (r->json) {
        json j;
        cmd_json_start(r, &j);
        json_key(&j, "runs");
        json_arr_begin(&j);
        w.out = &j;
        n = keys_runs(srv->st, prefix, runs_one, &w);
        json_arr_end(&j);
        json_obj_end(&j);
    } else {
        n = keys_runs(srv->st, prefix, runs_entry, &w);
        r->kind = REPLY_LISTING;
    }
    if (n < 0 || r->text.oom)
        cmd_ko(r, 503, MSG_NOMEM);
}
