/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_meet.c - BARRIER, OPEN and BARRIERS: an arrival at a barrier (meet/barrier.h) is
 * parked (park.h) until its generation opens, its deadline passes, or the server stops;
 * whoever opens a generation answers every arrival the table hands back.
 *
 * Who ends an arrival. The table decides which generation an arrival belongs to and how
 * it ended, under its lock; the slot's claim only decides who writes the answer. An
 * arrival handed back in a batch whose slot the deadline or the shutdown claimed first is
 * answered by that expire callback, with the outcome the batch gave it. So an arrival
 * holds two references once queued: its membership (dropped by whoever takes it out of
 * the table: a batch's answerer, or expire after barrier_leave) and its slot's expire
 * context (dropped by expire, or by whoever wins the claim, since expire never runs then). */
#include "cmd_meet.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "hold/commit.h"
#include "hold/park.h"
#include "journal/journal.h"
#include "cmd_answer.h"
#include "cmd_param.h"
#include "meet/barrier.h"

#define MSG_BAD_NAME      "NAME has to be 1 to 1024 bytes, none of them NUL !"
#define MSG_NO_PARTIES    "PARTIES parameter was missing !"
#define MSG_PARTIES       "PARTIES value has to be a number from 1 to %d !"
#define MSG_ON_TIMEOUT    "ON_TIMEOUT value has to be KO or RELEASE !"
#define MSG_NO_WAIT       "Cannot wait: the server is stopping (or out of memory), nothing changed !"
#define MSG_TOO_MANY      "Too many barriers (stsd.maxLists), nothing changed !"
#define NAME_MAX_BYTES    1024

static const char *const on_timeout_values[] = {"KO", "RELEASE", NULL};
static const char *const released_names[] = {"full", "timeout", "hand"};

typedef struct meet_arrival {
    barrier_arrival ba;        /* first: the table hands it back */
    atomic_int refs;
    const cmd_server *srv;
    park_slot *slot;           /* NULL until parked; the caller's reference */
    cmd_result *r;             /* the handler's result, for arm (on the handler's thread) */
    int64_t deadline;
    int json;                  /* the client asked for JSON */
    size_t nlen;
    char name[];
} meet_arrival;

static void meet_unref(meet_arrival *m)
{
    if (atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) != 1)
        return;
    if (m->slot)
        park_unref(m->slot);
    free(m);
}

/* A KO of status whose message is the barrier's name between two texts. */
static void ko_named(cmd_result *r, unsigned status, const char *before, const char *name,
                     size_t nlen, const char *after)
{
    cmd_ko(r, status, before);
    buf_append(&r->text, name, nlen);
    buf_puts(&r->text, after);
}

/* The answer of an arrival handed back with outcome a->outcome. */
static void answer_outcome(cmd_result *r, const meet_arrival *m)
{
    const barrier_arrival *a = &m->ba;
    buf_clear(&r->headers);
    if (a->outcome == BARRIER_DROPPED) {   /* nobody reads it: its client has gone */
        ko_named(r, 410, "Client gone before barrier ", m->name, m->nlen, " opened !");
        return;
    }
    char n[24];
    snprintf(n, sizeof n, "%u", a->arrival);
    cmd_header(r, "X-STS-Arrival", n);
    if (m->json) {
        json j;
        cmd_json_start(r, &j);
        json_key(&j, "generation");
        json_uint(&j, a->generation);
        json_key(&j, "arrival");
        json_uint(&j, a->arrival);
        json_key(&j, "parties");
        json_uint(&j, a->parties);
        json_key(&j, "released");
        json_cstr(&j, released_names[a->outcome]);
        json_obj_end(&j);
    } else {
        buf_clear(&r->text);
        r->kind = REPLY_OK;
        buf_printf(&r->text, "%llu", (unsigned long long)a->generation);
    }
    if (r->text.oom || r->headers.oom)
        cmd_ko(r, 503, MSG_NOMEM);
}

/* Answers every arrival of batch whose slot is still open, and drops the batch's
 * membership references. On a replica the answers wait for a record shipped after the
 * barrier opened (journal_fence), as reads do: a leader cut off from the others, which a
 * new leader may already have replaced, opens no barrier that counts. */
static void answer_batch(barrier_arrival *batch)
{
    uint64_t fence = 0;
    int fenced = 0, no_leader = 0;
    for (barrier_arrival *a = batch, *nx; a; a = nx) {
        nx = a->next;
        meet_arrival *m = (meet_arrival *)a;
        if (park_claim(m->slot)) {
            cmd_result *r = park_result(m->slot);
            struct journal *j = m->srv->j;
            answer_outcome(r, m);
            if (!fenced && journal_replicated(j)) {
                fenced = 1;
                no_leader = journal_fence(j, &fence) != 0;
            }
            if (no_leader) {
                buf_clear(&r->headers);
                cmd_ko(r, 503, COMMIT_NO_LEADER);
                park_finish(m->slot);
            } else {
                commit_finish(j, m->slot, fence);
            }
            meet_unref(m);                     /* expire will not run */
        }
        meet_unref(m);
    }
}

static void ko_timed_out(cmd_result *r, const meet_arrival *m, uint32_t arrived)
{
    ko_named(r, 408, "Barrier ", m->name, m->nlen, "");
    buf_printf(&r->text, " timed out with %u of %u arrived !", arrived, m->ba.parties);
}

/* Deadline or shutdown. */
static void on_expire(park_slot *s, park_why why, cmd_result *r, void *ctx)
{
    meet_arrival *m = ctx;
    barrier_table *t = m->srv->barriers;
    uint32_t arrived = 0;
    barrier_arrival *batch = NULL;
    if (why == PARK_SHUTDOWN || !m->ba.release_on_timeout) {
        if (barrier_leave(t, &m->ba, &arrived)) {
            if (why == PARK_SHUTDOWN)
                ko_named(r, 503, "Server is stopping: barrier ", m->name, m->nlen,
                         " did not open !");
            else
                ko_timed_out(r, m, arrived);
            meet_unref(m);                     /* out of the table */
        } else {
            answer_outcome(r, m);
        }
    } else {
        barrier_expire(t, &m->ba, &batch);
        answer_outcome(r, m);
        answer_batch(batch);                   /* m among them: its claim is ours */
    }
    meet_unref(m);
}

static int on_arm(barrier_arrival *a)
{
    meet_arrival *m = (meet_arrival *)a;
    if (!m->srv->lot)
        return -1;
    m->slot = park_new(m->srv->lot, m->r, m->deadline, on_expire, m);
    if (!m->slot)
        return -1;
    m->r->park = m->slot;
    atomic_store_explicit(&m->refs, 2, memory_order_relaxed);
    return 0;
}

static int on_gone(barrier_arrival *a)
{
    return park_client_gone(((meet_arrival *)a)->slot);
}

/* NAME: 1 to NAME_MAX_BYTES bytes without NUL, or NULL with the KO set. */
static const char *meet_name(const params *p, cmd_result *r, size_t *len)
{
    const char *name = params_get(p, PARAM_NAME, len);
    if (!name)
        cmd_ko(r, 400, MSG_NO_NAME);
    else if (*len == 0 || *len > NAME_MAX_BYTES || memchr(name, '\0', *len))
        cmd_ko(r, 400, MSG_BAD_NAME);
    else
        return name;
    return NULL;
}

void cmd_barrier(const cmd_server *srv, const params *p, cmd_result *r)
{
    size_t nlen, parties;
    int64_t wait_ms;
    const char *name = meet_name(p, r, &nlen);
    if (!name)
        return;
    if (!params_get(p, PARAM_PARTIES, NULL))
        return cmd_ko(r, 400, MSG_NO_PARTIES);
    if (cmd_size_param(p, PARAM_PARTIES, 1, (size_t)srv->conf->max_parties, 0, &parties) != 0)
        return cmd_ko_format(r, MSG_PARTIES, srv->conf->max_parties);
    if (cmd_timeout_param(srv, p, r, &wait_ms) != 0)
        return;
    if (!params_get(p, PARAM_TIMEOUT, NULL))
        wait_ms = (int64_t)srv->conf->max_wait * 1000;
    int release = cmd_choice_param(p, PARAM_ON_TIMEOUT, on_timeout_values, 0);
    if (release < 0)
        return cmd_ko(r, 400, MSG_ON_TIMEOUT);

    meet_arrival *m = calloc(1, sizeof *m + nlen + 1);
    if (!m)
        return cmd_ko(r, 503, MSG_NOMEM);
    memcpy(m->name, name, nlen);
    m->nlen = nlen;
    atomic_init(&m->refs, 1);
    m->srv = srv;
    m->r = r;
    m->json = r->json;
    m->deadline = clock_now_ms() + wait_ms;
    m->ba.release_on_timeout = release;
    m->ba.arm = on_arm;
    m->ba.gone = on_gone;
    m->ba.parties = (uint32_t)parties;
    uint32_t arrived = 0, gen_parties = 0;
    barrier_arrival *batch = NULL;
    barrier_rc rc = barrier_arrive(srv->barriers, name, nlen, (uint32_t)parties,
                                   &m->ba, wait_ms > 0, &arrived, &gen_parties, &batch);
    switch (rc) {
    case BARRIER_WAITING:                      /* m belongs to the table and its slot */
        answer_batch(batch);                   /* the gone ones it dropped, if any */
        return;
    case BARRIER_OK:
        answer_outcome(r, m);
        break;
    case BARRIER_MISMATCH:
        cmd_ko(r, 409, "");
        buf_printf(&r->text, "PARTIES=%zu differs from the PARTIES=%u of the arrivals "
                   "waiting at barrier ", parties, gen_parties);
        buf_append(&r->text, name, nlen);
        buf_puts(&r->text, " !");
        break;
    case BARRIER_TIMED_OUT:
        ko_timed_out(r, m, arrived);
        break;
    case BARRIER_FULL:
        cmd_ko(r, 413, MSG_TOO_MANY);
        break;
    default:
        cmd_ko(r, 503, srv->lot ? MSG_NO_WAIT : MSG_NOMEM);
        break;
    }
    free(m);                                   /* never queued */
    answer_batch(batch);
}

void cmd_open(const cmd_server *srv, const params *p, cmd_result *r)
{
    size_t nlen;
    const char *name = meet_name(p, r, &nlen);
    if (!name)
        return;
    barrier_arrival *batch;
    uint32_t released;
    uint64_t gen;
    if (barrier_open(srv->barriers, name, nlen, &batch, &released, &gen) != BARRIER_OK)
        return ko_named(r, 404, "Barrier ", name, nlen, " not found !");
    answer_batch(batch);
    if (r->json) {
        json j;
        cmd_json_start(r, &j);
        json_key(&j, "released");
        json_uint(&j, released);
        json_key(&j, "generation");
        json_uint(&j, gen);
        json_obj_end(&j);
        return;
    }
    r->kind = REPLY_OK;
    buf_printf(&r->text, "%u", released);
}

static void barrier_entry(const barrier_info *b, void *ctx)
{
    char v[96];
    snprintf(v, sizeof v, "%u of %u arrived, generation %llu", b->arrived, b->parties,
             (unsigned long long)b->generation);
    cmd_entry(ctx, b->name, b->name_len, " = ", v, strlen(v));
}

static void barrier_one(const barrier_info *b, void *ctx)
{
    json *j = ctx;
    json_obj_begin(j);
    cmd_json_name(j, b->name);          /* names hold no NUL: a C string */
    json_key(j, "parties");
    json_uint(j, b->parties);
    json_key(j, "arrived");
    json_uint(j, b->arrived);
    json_key(j, "generation");
    json_uint(j, b->generation);
    json_obj_end(j);
}

void cmd_barriers(const cmd_server *srv, const params *p, cmd_result *r)
{
    barrier_table *t = srv->barriers;
    if (!r->json) {
        r->kind = REPLY_LISTING;
        barrier_each(t, barrier_entry, &r->text);
        return;
    }
    json j;
    cmd_json_start(r, &j);
    json_key(&j, "barriers");
    json_arr_begin(&j);
    barrier_each(t, barrier_one, &j);
    json_arr_end(&j);
    json_obj_end(&j);
}
