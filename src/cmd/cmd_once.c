/* cmd_once.c - ONCE and DONE: o is done exactly when key o exists (store/keys.h). The
 * first caller of an o not done gets a run lease (RUN); later ones park as watchers of the
 * key until it comes to exist (DONE), or until the run ends unfinished (its RELEASE with
 * NAME=, or its deadline) and the store hands the first of them a run of its own. */
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
#include "cmd_param.h"
#include "store/keys.h"

#define MSG_NO_NAME       "NAME parameter was missing !"
#define MSG_NO_LEASE_ID   "LEASE parameter was missing !"
#define MSG_VALUE_LONG    "VALUE is too long !"
#define MSG_RUN_LEASE     "LEASE value has to be a number of seconds from 0.001 to %d !"
#define MSG_FULL_KEYS     "Key limit reached (stsd.maxKeys or stsd.maxBytes), nothing changed !"
#define ONCE_LEASE_MS     60000

typedef struct once_waiter {
    key_waiter kw;             /* first: the store hands it back */
    const cmd_server *srv;
    park_slot *slot;           /* the caller's reference */
    cmd_result *r;             /* the handler's result, for arm */
    int64_t deadline;
    char *name;
} once_waiter;

static void ow_free(once_waiter *w)
{
    if (w->slot)
        park_unref(w->slot);
    buf_free(&w->kw.value);
    free(w->name);
    free(w);
}

/* NAME, checked as FILENAME is for files (as the keys' names); NULL with the KO set. */
static const char *once_name(const params *p, cmd_result *r)
{
    size_t len;
    const char *name = params_get(p, PARAM_NAME, &len);
    if (!name) {
        cmd_ko(r, 400, MSG_NO_NAME);
        return NULL;
    }
    switch (dataset_check_name(name, len)) {
    case DATASET_OK:       return name;
    case DATASET_TOO_LONG: cmd_ko(r, 400, MSG_TOO_LONG); return NULL;
    default:               cmd_ko(r, 400, MSG_ILLEGAL); return NULL;
    }
}

/* The answer of a ONCE served with rc: DONE (o.lease 0, the value), or RUN (o.lease). */
static void once_answer(cmd_result *r, store_rc rc, const char *name, const key_waiter *kw)
{
    buf_clear(&r->headers);
    if (rc == STORE_FULL)
        return cmd_ko(r, 413, MSG_FULL_KEYS);
    if (rc != STORE_OK)
        return cmd_ko_store(r, rc, name, strlen(name));
    char id[24];
    if (kw->o.lease) {
        snprintf(id, sizeof id, "%016llx", (unsigned long long)kw->o.lease);
        cmd_header(r, "X-STS-Lease", id);
        r->lsn = kw->o.lsn;
    }
    if (r->json) {
        json j;
        cmd_json_start(r, &j);
        cmd_json_name(&j, name);
        json_key(&j, "state");
        json_cstr(&j, kw->o.lease ? "run" : "done");
        if (kw->o.lease) {
            json_key(&j, "lease");
            json_cstr(&j, id);
        } else {
            json_line(&j, "value", kw->value.data ? kw->value.data : "", kw->value.len);
        }
        json_obj_end(&j);
    } else {
        buf_clear(&r->text);
        r->kind = REPLY_OK;
        buf_puts(&r->text, kw->o.lease ? "RUN" : "DONE");
    }
    if (r->text.oom || r->headers.oom)
        cmd_ko(r, 503, MSG_NOMEM);
}

static void ko_running(cmd_result *r, const char *name, const char *why)
{
    cmd_ko(r, 408, "");
    buf_printf(&r->text, "The run of %s is still in progress%s, nothing changed !", name, why);
}

/* Deadline or shutdown: DONE if o is done by now, else a KO. */
static void on_expire(park_slot *s, park_why why, cmd_result *r, void *ctx)
{
    once_waiter *w = ctx;
    store_key_unwait(w->srv->st, &w->kw);
    uint64_t version;
    buf_clear(&w->kw.value);
    store_rc rc = store_key_get(w->srv->st, w->name, &w->kw.value, &version);
    memset(&w->kw.o, 0, sizeof w->kw.o);
    if (park_client_gone(s))
        cmd_ko(r, 408, "Client gone !");
    else if (rc == STORE_OK)
        once_answer(r, rc, w->name, &w->kw);
    else if (why == PARK_SHUTDOWN)
        cmd_ko(r, 503, "Server is stopping, nothing changed !");
    else
        ko_running(r, w->name, " at TIMEOUT");
    ow_free(w);
}

static int on_arm(key_waiter *kw)
{
    once_waiter *w = (once_waiter *)kw;
    if (!w->srv->lot || w->deadline <= clock_now_ms())
        return -1;
    w->slot = park_new(w->srv->lot, w->r, w->deadline, on_expire, w);
    if (!w->slot)
        return -1;
    w->r->park = w->slot;
    return 0;
}

static int on_claim(key_waiter *kw)
{
    return park_claim(((once_waiter *)kw)->slot);
}

static int on_gone(key_waiter *kw)
{
    return park_client_gone(((once_waiter *)kw)->slot);
}

static void on_served(key_waiter *kw, store_rc rc)
{
    once_waiter *w = (once_waiter *)kw;
    cmd_result *r = park_result(w->slot);
    if (rc == STORE_EMPTY)
        cmd_ko(r, 408, "Client gone !");
    else
        once_answer(r, rc, w->name, kw);
    r->lsn = 0;
    /* DONE reports the change that woke it, RUN its own record: both wait to be durable. */
    commit_finish(w->srv->j, w->slot, rc == STORE_OK ? kw->o.lsn : 0);
    ow_free(w);
}

void cmd_once(const cmd_server *srv, const params *p, cmd_result *r)
{
    int64_t wait_ms, lease_ms = ONCE_LEASE_MS;
    size_t len;
    const char *name = once_name(p, r);
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
    once_waiter *w = calloc(1, sizeof *w);
    if (!w || !(w->name = strdup(name))) {
        free(w);
        return cmd_ko(r, 503, MSG_NOMEM);
    }
    w->srv = srv;
    w->r = r;
    w->deadline = clock_now_ms() + wait_ms;
    w->kw.name = w->name;
    w->kw.once = 1;
    w->kw.q.lease_ms = lease_ms;
    w->kw.arm = on_arm;
    w->kw.claim = on_claim;
    w->kw.gone = on_gone;
    w->kw.served = on_served;
    store_rc rc = store_key_wait(srv->st, &w->kw);
    if (rc == STORE_WAITING)
        return;                         /* w belongs to its slot now */
    if (rc == STORE_NO_KEY)
        ko_running(r, name, wait_ms > 0 ? " (cannot wait)" : " (TIMEOUT=0)");
    else
        once_answer(r, rc, name, &w->kw);
    ow_free(w);
}

void cmd_done(const cmd_server *srv, const params *p, cmd_result *r)
{
    size_t ilen, len = 0;
    const char *name = once_name(p, r);
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
    uint64_t id = cmd_lease_id(idv, ilen), version = 0;
    store_rc rc = id ? store_key_done(srv->st, name, id, value, len, &version, &r->lsn)
                     : STORE_NO_LEASE;
    if (rc == STORE_NO_LEASE) {
        cmd_ko(r, 409, "");
        buf_printf(&r->text, "This LEASE is not the run of %s (expired, given up, or %s "
                   "was set), nothing changed !", name, name);
        return;
    }
    if (rc == STORE_FULL)
        return cmd_ko(r, 413, MSG_FULL_KEYS);
    if (rc != STORE_OK)
        return cmd_ko_store(r, rc, name, strlen(name));
    char v[24];
    snprintf(v, sizeof v, "%llu", (unsigned long long)version);
    cmd_header(r, "X-STS-Version", v);
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
