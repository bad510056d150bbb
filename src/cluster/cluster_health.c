/* SPDX-License-Identifier: Apache-2.0 */
/* cluster_health.c - which nodes answer. Only the leader hears from every node (raft's
 * recent_recv: a message from that node within the last election timeout), so it gives
 * the verdicts: unreachable after three election timeouts without a word, up again at
 * the first one. Each change is logged once and proposed as a CLUSTER_HEALTH entry,
 * which every node applies: a follower shows the leader's verdicts, with their times,
 * and how long ago it heard from the leader itself.
 *
 * How the leader knows a node answered: raft 0.15 says so (recent_recv: a message from it
 * within the last election timeout). raft 0.22 keeps that table to itself and tells only
 * each node's match index: a node answered if it has every entry, or more than at the
 * last tick; and so that an idle cluster has entries to answer, the leader appends a
 * barrier after an election timeout without one.
 *
 * An entry: per node 16 bytes, its id (u64) and (since << 1 | up) (u64), since being the
 * leader's wall clock in ms when the verdict last changed. */
#include <stdlib.h>

#include "cluster_entry.h"
#include "cluster_health.h"
#include "cluster_queue.h"
#include "base/clock.h"
#include "base/log.h"

#define HEALTH_ITEM 16

/* Node id's slot, made if it is not there yet and create is set; NULL if none. */
static cluster_health_node *slot(cluster *c, unsigned id, int create)
{
    for (size_t i = 0; i < c->health_n; i++)
        if (c->health[i].id == id)
            return &c->health[i];
    if (!create || c->health_n == CONF_CLUSTER_MAX)
        return NULL;
    cluster_health_node *h = &c->health[c->health_n++];
    *h = (cluster_health_node){.id = id};
    return h;
}

/* A proposal that failed (this node no longer leads, or stops): the next tick of a
 * leadership proposes its table again. */
static void on_proposed(void *ctx, uint64_t arg, int rc)
{
    cluster *c = ctx;
    (void)arg;
    if (rc != 0)
        c->health_proposed = 0;
}

static void propose(cluster *c)
{
    uint8_t data[CONF_CLUSTER_MAX * HEALTH_ITEM];
    size_t n = 0;
    for (size_t i = 0; i < c->health_n; i++, n++) {
        cluster_put64(data + n * HEALTH_ITEM, c->health[i].id);
        cluster_put64(data + n * HEALTH_ITEM + 8,
                      (uint64_t)c->health[i].since_ms << 1 | (uint64_t)(c->health[i].up != 0));
    }
    c->health_proposed = 1;
    if (cluster_propose_async(c, CLUSTER_HEALTH, data, n * HEALTH_ITEM, on_proposed, c,
                              CLUSTER_ARG_NONE) != 0)
        c->health_proposed = 0;
}

#ifdef RAFT_VERSION_NUMBER
static void on_barrier(struct raft_barrier *req, int status)
{
    cluster *c = req->data;
    (void)status;
    c->health_barrier_out = 0;
}

/* Whether node id (k-th in raft's configuration) answered since the last tick. */
static int answered(cluster *c, unsigned k, cluster_health_node *h, uint64_t last)
{
    raft_index m = 0;
    (void)k;
    if (raft_match_index(&c->raft, h->id, &m) != 0)
        return 0;
    int yes = m >= last || m > h->match_seen;
    h->match_seen = m;
    return yes;
}

/* An idle leader's barrier: an entry each node answers, every election timeout. */
static void keep_entries_coming(cluster *c, int64_t now, int serving)
{
    uint64_t last = raft_last_index(&c->raft);
    if (last != c->health_last_index) {
        c->health_last_index = last;
        c->health_last_ms = now;
    } else if (serving && !c->health_barrier_out &&
               now - c->health_last_ms >= (int64_t)c->election_ms) {
        c->health_barrier.data = c;
        if (raft_barrier(&c->raft, &c->health_barrier, on_barrier) == 0)
            c->health_barrier_out = 1;
        c->health_last_ms = now;
    }
}
#else
static int answered(cluster *c, unsigned k, cluster_health_node *h, uint64_t last)
{
    (void)h;
    (void)last;
    return c->raft.leader_state.progress[k].recent_recv;
}

static void keep_entries_coming(cluster *c, int64_t now, int serving)
{
    (void)c;
    (void)now;
    (void)serving;
}
#endif

/* A leadership begins: every node counts as heard from now, and keeps the verdict the
 * table it found gives (up if none), so that only a real change is logged. */
static void begin(cluster *c, int64_t now, int64_t wall)
{
    for (size_t i = 0; i < c->n; i++) {
        cluster_health_node *h = slot(c, c->nodes[i].id, 1);
        if (!h)
            continue;
        h->heard_ms = h->changed_ms = now;
        h->up = h->rep_known ? h->rep_up : 1;
        h->since_ms = h->rep_known ? h->rep_since_ms : wall;
    }
    c->health_leading = 1;
    c->health_proposed = 0;
}

int cluster_health_note(cluster *c, unsigned id, int answered_now, int64_t now)
{
    cluster_health_node *h = slot(c, id, 1);
    if (!h)
        return 0;
    if (!c->health_leading)
        begin(c, now, clock_wall_ms());
    if (answered_now)
        h->heard_ms = now;
    int up = now - h->heard_ms <= 3 * (int64_t)c->election_ms;
    if (up == h->up)
        return 0;
    if (up)
        log_info("cluster: node %u answers again, after %.1f s unreachable", h->id,
                 (double)(now - h->changed_ms) / 1000);
    else
        log_warn("cluster: node %u stopped answering: nothing heard from it for %.1f s",
                 h->id, (double)(now - h->heard_ms) / 1000);
    h->up = up;
    h->changed_ms = now;
    h->since_ms = clock_wall_ms();
    return 1;
}

void cluster_health_tick(cluster *c, int leading, int serving)
{
    if (!leading) {
        c->health_leading = c->health_proposed = 0;
        return;
    }
    int64_t now = clock_now_ms();
    if (!c->health_leading)
        begin(c, now, clock_wall_ms());
    keep_entries_coming(c, now, serving);
    const struct raft_configuration *conf = &c->raft.configuration;
    uint64_t last = raft_last_index(&c->raft);
    int changed = 0;
    for (unsigned k = 0; k < conf->n; k++) {
        unsigned id = (unsigned)conf->servers[k].id;
        cluster_health_node *h = slot(c, id, 1);
        if (h)
            changed |= cluster_health_note(c, id, id == c->self || answered(c, k, h, last), now);
    }
    if ((changed || !c->health_proposed) && serving)
        propose(c);
}

int cluster_health_apply(cluster *c, const uint8_t *data, size_t len)
{
    if (len % HEALTH_ITEM != 0 || len / HEALTH_ITEM > CONF_CLUSTER_MAX)
        return -1;
    for (size_t i = 0; i < len / HEALTH_ITEM; i++) {
        uint64_t id = cluster_get64(data + i * HEALTH_ITEM);
        if (id == 0 || id > UINT32_MAX)
            return -1;
    }
    for (size_t i = 0; i < c->health_n; i++)
        c->health[i].rep_known = 0;
    for (size_t i = 0; i < len / HEALTH_ITEM; i++) {
        uint64_t v = cluster_get64(data + i * HEALTH_ITEM + 8);
        cluster_health_node *h = slot(c, (unsigned)cluster_get64(data + i * HEALTH_ITEM), 1);
        if (!h)
            continue;
        h->rep_known = 1;
        h->rep_up = (int)(v & 1);
        h->rep_since_ms = (int64_t)(v >> 1);
    }
    return 0;
}

void cluster_health_fill(cluster *c, cluster_stats *s, int leading)
{
    int64_t now = clock_now_ms();
    for (size_t i = 0; i < s->n; i++) {
        cluster_node_stats *ns = &s->nodes[i];
        cluster_health_node *h = slot(c, ns->id, 0);
        ns->health = NULL;
        ns->health_since = 0;
        ns->heard_ms = -1;
        if (leading && c->health_leading && h) {
            ns->health = h->up ? "up" : "unreachable";
            ns->health_since = (double)h->since_ms / 1000;
            ns->heard_ms = now - h->heard_ms;
            continue;
        }
        if (h && h->rep_known) {
            ns->health = h->rep_up ? "up" : "unreachable";
            ns->health_since = (double)h->rep_since_ms / 1000;
        }
        if (ns->id == c->self) {
            ns->health = "up";
            ns->heard_ms = 0;
        } else if (ns->id == s->leader && raft_state(&c->raft) == RAFT_FOLLOWER) {
            /* raft restarts a follower's election timer at each message from its leader. */
            raft_time t = c->raft.io->time(c->raft.io);
            ns->heard_ms = t > c->raft.election_timer_start ?
                           (int64_t)(t - c->raft.election_timer_start) : 0;
        }
    }
}
