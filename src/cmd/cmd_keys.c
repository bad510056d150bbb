/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_keys.c - the commands on keys: SET, GET (and watching with VERSION and TIMEOUT),
 * DEL, KEYS, INCR (bounds, waiting until it fits, lent increments), and ACK/RELEASE of a
 * counter lease (NAME=). Waiting requests park as READ's do (cmd_wait.c). */
#include "cmd_keys.h"

#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "base/num.h"
#include "hold/commit.h"
#include "hold/park.h"
#include "journal/journal.h"
#include "cmd_answer.h"
#include "cmd_param.h"
#include "meet/keys.h"

#define MSG_NO_VALUE      "VALUE parameter was missing !"
#define MSG_NUMBER        "%s value has to be an integer from %lld to %lld !"
#define MSG_VERSION_WAIT  "VERSION needs TIMEOUT, and TIMEOUT on GET needs VERSION !"
#define MSG_NO_KEY_LEASE  "No such lease (settled already, expired, or of another key) !"
#define MSG_MIN_MAX       "MIN is greater than MAX !"
#define MSG_DEL_WHICH     "DEL takes NAME or PREFIX, not both !"
#define MSG_DEL_PREFIX_IFV "IF_VERSION works with NAME only !"
#define MSG_DEL_EMPTY     "PREFIX must not be empty, nothing deleted !"
#define MSG_NO_TTL        "TTL parameter was missing !"
#define MSG_TTL_LEASE     "TTL and LEASE cannot go together on INCR, nothing changed !"

/* ---- parameters ----------------------------------------------------------------------- */

/* A signed integer parameter in [min, max] into *out (dflt when absent). 0, or -1 with
 * the KO set. */
static int int_param(const params *p, param_id id, const char *pname, int64_t min,
                     int64_t max, int64_t dflt, cmd_result *r, int64_t *out)
{
    size_t len;
    const char *v = params_get(p, id, &len);
    *out = dflt;
    if (!v)
        return 0;
    if (len <= 20 && num_parse_i64(v, len, min, max, out) == 0)
        return 0;
    cmd_ko_format(r, MSG_NUMBER, pname, (long long)min, (long long)max);
    return -1;
}

/* IF_VERSION (-1 when absent). */
static int if_version(const params *p, cmd_result *r, int64_t *out)
{
    return int_param(p, PARAM_IF_VERSION, "IF_VERSION", 0, INT64_MAX, -1, r, out);
}

/* ---- answers -------------------------------------------------------------------------- */

/* The KO for a keys call's rc about key name (version: the key's current one). */
static void ko_key(cmd_result *r, store_rc rc, const char *name, uint64_t version)
{
    buf_clear(&r->text);
    r->kind = REPLY_KO;
    switch (rc) {
    case STORE_NO_KEY:
        r->status = 404;
        buf_printf(&r->text, "Key %s not found !", name);
        break;
    case STORE_VERSION:
        r->status = 409;
        buf_printf(&r->text, "Key %s is at version %llu, nothing changed !", name,
                   (unsigned long long)version);
        break;
    case STORE_NOT_INT:
        r->status = 409;
        buf_printf(&r->text, "Key %s does not hold an integer, nothing changed !", name);
        break;
    case STORE_OVERFLOW:
        r->status = 409;
        buf_printf(&r->text, "Key %s would overflow a signed 64-bit integer, nothing "
                   "changed !", name);
        break;
    case STORE_BOUND:
        r->status = 409;
        buf_printf(&r->text, "Key %s is at its bound, nothing changed !", name);
        break;
    case STORE_NO_LEASE:
        cmd_ko(r, 404, MSG_NO_KEY_LEASE);
        break;
    case STORE_FULL:
        cmd_ko(r, 413, MSG_FULL_KEYS);
        break;
    default:
        cmd_ko_store(r, rc, name, strlen(name));
        break;
    }
}

/* The X-STS-Version header of an answer about a key at version. */
static void version_header(cmd_result *r, uint64_t version)
{
    char v[24];
    snprintf(v, sizeof v, "%llu", (unsigned long long)version);
    cmd_header(r, "X-STS-Version", v);
}

/* A key's value (GET, and watchers): the value, or its JSON document. */
static void value_answer(cmd_result *r, store_rc rc, const char *name, const buf *value,
                         uint64_t version)
{
    if (rc != STORE_OK)
        return ko_key(r, rc, name, version);
    version_header(r, version);
    if (r->json) {
        json j;
        cmd_json_start(r, &j);
        cmd_json_name(&j, name);
        json_line(&j, "value", value->data ? value->data : "", value->len);
        json_key(&j, "version");
        json_uint(&j, version);
        json_obj_end(&j);
        return;
    }
    buf_clear(&r->text);
    r->kind = REPLY_OK;
    buf_append(&r->text, value->data ? value->data : "", value->len);
}

/* A change's answer: text (a number), or JSON with name, the number as field and the
 * version. */
static void number_answer(cmd_result *r, const char *name, const char *field, long long n,
                          uint64_t version)
{
    version_header(r, version);
    if (r->json) {
        json j;
        cmd_json_start(r, &j);
        cmd_json_name(&j, name);
        if (field) {
            json_key(&j, field);
            json_int(&j, n);
        }
        json_key(&j, "version");
        json_uint(&j, version);
        json_obj_end(&j);
        return;
    }
    buf_clear(&r->text);
    r->kind = REPLY_OK;
    buf_printf(&r->text, "%lld", n);
}

/* INCR's answer: the new value, its lease in X-STS-Lease. */
static void incr_answer(cmd_result *r, store_rc rc, const char *name, const key_out *o)
{
    if (rc != STORE_OK)
        return ko_key(r, rc, name, o->version);
    r->lsn = o->lsn;
    number_answer(r, name, "value", (long long)o->value, o->version);
    if (o->lease) {
        char id[24];
        snprintf(id, sizeof id, "%016llx", (unsigned long long)o->lease);
        cmd_header(r, "X-STS-Lease", id);
    }
}

/* ---- waiting: watchers and INCRs that wait to fit -------------------------------------- */

void cmd_kwaiter_free(cmd_kwaiter *w)
{
    if (w->slot)
        park_unref(w->slot);
    buf_free(&w->kw.value);
    free(w->name);
    free(w);
}

static void on_expire(park_slot *s, park_why why, cmd_result *r, void *ctx)
{
    cmd_kwaiter *w = ctx;
    keys_unwait(w->srv->st, &w->kw);
    if (park_client_gone(s))
        cmd_ko(r, 408, "Client gone !");
    else
        w->ops->expire(w, why, r);
    cmd_kwaiter_free(w);
}

static int on_arm(key_waiter *kw)
{
    cmd_kwaiter *w = (cmd_kwaiter *)kw;
    if (!w->srv->lot || (w->ops->late_refused && w->deadline <= clock_now_ms()))
        return -1;
    w->slot = park_new(w->srv->lot, w->r, w->deadline, on_expire, w);
    if (!w->slot)
        return -1;
    w->r->park = w->slot;
    return 0;
}

static int on_claim(key_waiter *kw)
{
    return park_claim(((cmd_kwaiter *)kw)->slot);
}

static int on_gone(key_waiter *kw)
{
    return park_client_gone(((cmd_kwaiter *)kw)->slot);
}

static void on_served(key_waiter *kw, store_rc rc)
{
    cmd_kwaiter *w = (cmd_kwaiter *)kw;
    cmd_result *r = park_result(w->slot);
    uint64_t lsn = w->ops->answer(w, rc, r);
    r->lsn = 0;
    /* The answer reports a change (its own, or the one that woke it): it waits for that
     * change's record, parked still. */
    commit_finish(w->srv->j, w->slot, lsn);
    cmd_kwaiter_free(w);
}

cmd_kwaiter *cmd_kwaiter_new(const cmd_server *srv, const char *name, int64_t deadline,
                             const cmd_kwait_ops *ops, cmd_result *r)
{
    cmd_kwaiter *w = calloc(1, sizeof *w);
    if (!w || !(w->name = strdup(name))) {
        free(w);
        return NULL;
    }
    w->srv = srv;
    w->ops = ops;
    w->r = r;
    w->deadline = deadline;
    w->kw.name = w->name;
    w->kw.arm = on_arm;
    w->kw.claim = on_claim;
    w->kw.gone = on_gone;
    w->kw.served = on_served;
    return w;
}

store_rc cmd_kwaiter_run(cmd_kwaiter *w)
{
    return keys_wait(w->srv->st, &w->kw);
}

/* GET's and INCR's answers once served. */
static uint64_t key_answer(cmd_kwaiter *w, store_rc rc, cmd_result *r)
{
    key_waiter *kw = &w->kw;
    if (kw->incr)
        incr_answer(r, rc, w->name, &kw->o);
    else
        value_answer(r, rc, w->name, &kw->value, kw->o.version);
    return rc == STORE_OK || !kw->incr ? kw->o.lsn : 0;
}

/* Deadline or shutdown: a watcher answers the current state; an INCR has one more try,
 * and at its bound answers that it waited out. */
static void key_expire(cmd_kwaiter *w, park_why why, cmd_result *r)
{
    const cmd_server *srv = w->srv;
    (void)why;
    if (!w->kw.incr) {
        buf value = BUF_INIT;
        uint64_t version;
        store_rc rc = keys_get(srv->st, w->name, &value, &version);
        value_answer(r, rc, w->name, &value, version);
        buf_free(&value);
        return;
    }
    key_out o;
    store_rc rc = keys_incr(srv->st, w->name, &w->kw.q, &o);
    if (rc == STORE_BOUND) {
        buf_clear(&r->text);
        r->kind = REPLY_KO;
        r->status = 408;
        buf_printf(&r->text, "Key %s stayed at its bound until TIMEOUT, nothing "
                   "changed !", w->name);
        return;
    }
    incr_answer(r, rc, w->name, &o);
    if (r->lsn && srv->j && journal_wait(srv->j, r->lsn) != 0)
        commit_ko_not_durable(srv->j, r);
    r->lsn = 0;
}

static const cmd_kwait_ops key_ops = {key_answer, key_expire, 0};

/* Serves a GET's or INCR's request now, or parks it until deadline. */
static void wait_key(const cmd_server *srv, const char *name, int incr, uint64_t version,
                     const key_incr *q, int64_t deadline, cmd_result *r)
{
    cmd_kwaiter *w = cmd_kwaiter_new(srv, name, deadline, &key_ops, r);
    if (!w)
        return ko_key(r, STORE_NOMEM, name, 0);
    w->kw.incr = incr;
    w->kw.version = version;
    if (q)
        w->kw.q = *q;
    store_rc rc = cmd_kwaiter_run(w);
    if (rc == STORE_WAITING)
        return;                         /* w belongs to its slot now */
    key_answer(w, rc, r);
    cmd_kwaiter_free(w);
}

/* ---- the commands ------------------------------------------------------------------- */

void cmd_set(const cmd_server *srv, const params *p, cmd_result *r)
{
    size_t len;
    int64_t ifv;
    uint64_t version = 0;
    const char *name = cmd_key_name(p, r);
    if (!name)
        return;
    const char *value = params_get(p, PARAM_VALUE, &len);
    if (!value)
        return cmd_ko(r, 400, MSG_NO_VALUE);
    if (len > srv->conf->max_line)
        return cmd_ko(r, 400, MSG_VALUE_LONG);
    int64_t ttl_ms;
    if (if_version(p, r, &ifv) != 0 || cmd_ttl_param(p, r, &ttl_ms) != 0)
        return;
    store_rc rc = keys_set_ttl(srv->st, name, value, len, ifv, ttl_ms, &version,
                                    &r->lsn);
    if (rc != STORE_OK)
        return ko_key(r, rc, name, version);
    number_answer(r, name, NULL, (long long)version, version);
}

void cmd_get(const cmd_server *srv, const params *p, cmd_result *r)
{
    int64_t version, ms;
    const char *name = cmd_key_name(p, r);
    if (!name || int_param(p, PARAM_VERSION, "VERSION", 0, INT64_MAX, -1, r, &version) != 0 ||
        cmd_timeout_param(srv, p, r, &ms) != 0)
        return;
    if ((version >= 0) != (params_get(p, PARAM_TIMEOUT, NULL) != NULL))
        return cmd_ko(r, 400, MSG_VERSION_WAIT);
    if (version >= 0 && ms > 0 && srv->lot)
        return wait_key(srv, name, 0, (uint64_t)version, NULL, clock_now_ms() + ms, r);
    buf value = BUF_INIT;
    uint64_t v;
    store_rc rc = srv->view ? journal_view_get(srv->view, name, &value, &v)
                            : keys_get(srv->st, name, &value, &v);
    value_answer(r, rc, name, &value, v);
    buf_free(&value);
}

/* DEL PREFIX=: every key of the prefix; answers how many went. */
static void del_prefix(const cmd_server *srv, const params *p, cmd_result *r,
                       const char *prefix, size_t plen)
{
    size_t n;
    if (params_get(p, PARAM_NAME, NULL))
        return cmd_ko(r, 400, MSG_DEL_WHICH);
    if (params_get(p, PARAM_IF_VERSION, NULL))
        return cmd_ko(r, 400, MSG_DEL_PREFIX_IFV);
    if (plen == 0)
        return cmd_ko(r, 400, MSG_DEL_EMPTY);
    if (strlen(prefix) != plen)
        return cmd_ko_illegal(r, "PREFIX", prefix, plen);
    store_rc rc = keys_del_prefix(srv->st, prefix, &n, &r->lsn);
    if (rc != STORE_OK)
        return ko_key(r, rc, prefix, 0);
    if (r->json) {
        json j;
        cmd_json_start(r, &j);
        json_key(&j, "deleted");
        json_uint(&j, n);
        json_obj_end(&j);
        return;
    }
    r->kind = REPLY_OK;
    buf_printf(&r->text, "%zu", n);
}

void cmd_del(const cmd_server *srv, const params *p, cmd_result *r)
{
    int64_t ifv;
    uint64_t version;
    size_t plen;
    const char *prefix = params_get(p, PARAM_PREFIX, &plen);
    if (prefix)
        return del_prefix(srv, p, r, prefix, plen);
    const char *name = cmd_key_name(p, r);
    if (!name || if_version(p, r, &ifv) != 0)
        return;
    store_rc rc = keys_del(srv->st, name, ifv, &version, &r->lsn);
    if (rc != STORE_OK)
        return ko_key(r, rc, name, version);
    if (r->json)
        return number_answer(r, name, NULL, 0, 0);
    r->kind = REPLY_OK;
}

static void keys_entry(const key_info *k, void *ctx)
{
    cmd_entry(ctx, k->name, strlen(k->name), " = ", k->value, k->len);
}

/* JSON: the watchers (GETs waiting for a change) and waiters (INCRs waiting to fit) are
 * the dashboard's; the text listing stays STATUS's `name = value`. */
static void keys_one(const key_info *k, void *ctx)
{
    json *j = ctx;
    json_obj_begin(j);
    cmd_json_name(j, k->name);
    json_line(j, "value", k->value, k->len);
    json_key(j, "version");
    json_uint(j, k->version);
    json_key(j, "watchers");
    json_uint(j, k->watchers);
    json_key(j, "waiters");
    json_uint(j, k->waiters);
    json_obj_end(j);
}

void cmd_expire(const cmd_server *srv, const params *p, cmd_result *r)
{
    int64_t ttl_ms;
    uint64_t version = 0;
    const char *name = cmd_key_name(p, r);
    if (!name || cmd_ttl_param(p, r, &ttl_ms) != 0)
        return;
    if (!ttl_ms)
        return cmd_ko(r, 400, MSG_NO_TTL);
    store_rc rc = keys_expire(srv->st, name, ttl_ms, &r->lsn);
    if (rc != STORE_OK)
        return ko_key(r, rc, name, version);
    if (r->json)
        return number_answer(r, name, "ttl_ms", (long long)ttl_ms, 0);
    r->kind = REPLY_OK;
}

void cmd_keys(const cmd_server *srv, const params *p, cmd_result *r)
{
    const char *prefix = params_get(p, PARAM_PREFIX, NULL);
    long n;
    if (r->json) {
        json j;
        cmd_json_start(r, &j);
        json_key(&j, "keys");
        json_arr_begin(&j);
        n = keys_list(srv->st, prefix, keys_one, &j);
        json_arr_end(&j);
        json_obj_end(&j);
    } else {
        n = srv->view ? journal_view_keys(srv->view, prefix, keys_entry, &r->text)
                      : keys_list(srv->st, prefix, keys_entry, &r->text);
        r->kind = REPLY_LISTING;
    }
    if (n < 0)
        cmd_ko(r, 503, MSG_NOMEM);
}

void cmd_incr(const cmd_server *srv, const params *p, cmd_result *r)
{
    key_incr q;
    int64_t ms;
    const char *name = cmd_key_name(p, r);
    if (!name || int_param(p, PARAM_BY, "BY", INT64_MIN, INT64_MAX, 1, r, &q.by) != 0 ||
        int_param(p, PARAM_MIN, "MIN", INT64_MIN, INT64_MAX, INT64_MIN, r, &q.min) != 0 ||
        int_param(p, PARAM_MAX, "MAX", INT64_MIN, INT64_MAX, INT64_MAX, r, &q.max) != 0 ||
        cmd_timeout_param(srv, p, r, &ms) != 0 ||
        cmd_lease_param(srv, p, 0, 1, r, &q.lease_ms) != 0 ||
        cmd_ttl_param(p, r, &q.ttl_ms) != 0)
        return;
    if (q.min > q.max)
        return cmd_ko(r, 400, MSG_MIN_MAX);
    /* A lent increment's record (KEY_LEASE) has no room for a deadline: one or the other. */
    if (q.lease_ms && q.ttl_ms)
        return cmd_ko(r, 400, MSG_TTL_LEASE);
    if (ms > 0 && srv->lot)
        return wait_key(srv, name, 1, 0, &q, clock_now_ms() + ms, r);
    key_out o;
    store_rc rc = keys_incr(srv->st, name, &q, &o);
    incr_answer(r, rc, name, &o);
}

void cmd_key_settle(const cmd_server *srv, const params *p, cmd_result *r, int release)
{
    size_t ilen;
    const char *name = cmd_key_name(p, r);
    if (!name)
        return;
    const char *idv = params_get(p, PARAM_LEASE, &ilen);
    if (!idv)
        return cmd_ko(r, 400, MSG_NO_LEASE_ID);
    uint64_t id = cmd_lease_id(idv, ilen);
    key_out o;
    store_rc rc = id ? keys_settle(srv->st, name, release, id, &o) : STORE_NO_LEASE;
    if (rc != STORE_OK)
        return ko_key(r, rc, name, 0);
    r->lsn = o.lsn;
    r->kind = REPLY_OK;
}
