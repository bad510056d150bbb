/* SPDX-License-Identifier: Apache-2.0 */
/* cluster.c - the raft adapter: raft and its libuv loop on a thread of their own, work
 * handed to it through a queue, its state copied out for the other threads.
 *
 * raft has no locks: only the loop's thread calls it. Other threads queue a piece of the
 * journal (ship) and wake the loop with uv_async_send, then wait on `cv` for the piece's
 * commit. The loop's tick (a twentieth of the election timeout) copies raft's state out under
 * `mu` and sees roles change, since raft 0.15 has no callback for that: a node that
 * starts leading appends a barrier, and once every entry of the terms before is applied
 * the promote hook loads the store; a node that stops leading calls the deposed hook.
 * Hooks run on the `stsd-cluster` thread, never the loop's, which must go on answering
 * heartbeats while a store loads. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <netdb.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "cluster_entry.h"
#include "cluster_fsm.h"
#include "cluster_health.h"
#include "cluster_members.h"
#include "cluster_net.h"
#include "cluster_queue.h"
#include "cluster_save.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/thread.h"
#include "journal/journal.h"


/* raft snapshots the state directory every stsd.cluster.snapshotEntries entries (each a
 * whole batch of records), keeping a quarter of that after it for followers a little
 * behind. */

static double wall_now(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

/* ---- the loop's side ---------------------------------------------------------------------- */

static void on_barrier(struct raft_barrier *req, int status)
{
    cluster *c = req->data;
    if (status != 0 || raft_state(&c->raft) != RAFT_LEADER || !c->promoting) {
        c->promoting = 0;                     /* the tick sees what became of it */
        return;
    }
    log_info("cluster: node %u won the election (term %llu); taking the committed state",
             c->self, (unsigned long long)c->raft.current_term);
    pthread_mutex_lock(&c->mu);
    c->want_promote = 1;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

static const char *role_name(int state)
{
    switch (state) {
    case RAFT_LEADER: return "leader";
    case RAFT_FOLLOWER: return "follower";
    case RAFT_CANDIDATE: return "candidate";
    default: return "unavailable";
    }
}

/* Copies raft's state out; called on the loop's thread only. */
static void refresh_stats(cluster *c, int state)
{
    raft_id leader = 0;
    const char *addr = NULL;
    raft_leader(&c->raft, &leader, &addr);
    pthread_mutex_lock(&c->mu);
    cluster_stats *s = &c->stats;
    if (s->leader != (unsigned)leader) {
        if (leader)
            s->leader_changes++;
        s->leader_since = wall_now();
    }
    s->leader = (unsigned)leader;
    s->role = role_name(state);
    s->serving = atomic_load(&c->serving);
    s->term = c->raft.current_term;
    s->commit = c->raft.commit_index;
    s->applied = raft_last_applied(&c->raft);
    s->last_index = raft_last_index(&c->raft);
    s->n = c->n;
    for (size_t i = 0; i < c->n; i++) {
        cluster_node_stats *ns = &s->nodes[i];
        ns->id = c->nodes[i].id;
        memcpy(ns->raft, c->nodes[i].raft, sizeof ns->raft);
        memcpy(ns->url, c->nodes[i].url, sizeof ns->url);
        ns->known = 0;
        ns->match = 0;
        ns->role = c->nodes[i].id == c->self ? s->role :
                   c->nodes[i].id == (unsigned)leader ? "leader" : "?";
        const struct raft_configuration *conf = &c->raft.configuration;
        for (unsigned k = 0; k < conf->n; k++) {
            if (conf->servers[k].id != c->nodes[i].id)
                continue;
            if (conf->servers[k].role != RAFT_VOTER && c->nodes[i].id != c->self)
                ns->role = conf->servers[k].role == RAFT_SPARE ? "spare" : "standby";
            if (state != RAFT_LEADER)
                continue;
            ns->match = c->nodes[i].id == c->self ? s->last_index :
                        c->raft.leader_state.progress[k].match_index;
            ns->known = 1;
            if (c->nodes[i].id != c->self && conf->servers[k].role == RAFT_VOTER)
                ns->role = "follower";
        }
    }
    cluster_health_fill(c, s, state == RAFT_LEADER);
    pthread_mutex_unlock(&c->mu);
}

static void on_tick(uv_timer_t *t)
{
    cluster *c = t->data;
    int state = raft_state(&c->raft);
    /* A leadership counts from its barrier: one won while the last is still being
     * wound up (deposed) starts once it is. */
    if (state == RAFT_LEADER && !c->was_leader && !c->promoting && !atomic_load(&c->deposed)) {
        c->promoting = 1;
        c->was_leader = 1;
        c->barrier.data = c;
        if (raft_barrier(&c->raft, &c->barrier, on_barrier) != 0)
            c->promoting = c->was_leader = 0;
    }
    if (state != RAFT_LEADER && c->was_leader) {
        c->was_leader = 0;
        log_warn("cluster: node %u no longer leads (now %s, term %llu)", c->self,
                 role_name(state), (unsigned long long)c->raft.current_term);
        cluster_fsm_demote(c);
    }
    /* Entries the state machine does not see (barriers, configurations) move it too. */
    cluster_note_applied(c, raft_last_applied(&c->raft));
    cluster_health_tick(c, state == RAFT_LEADER && c->was_leader, atomic_load(&c->serving));
    refresh_stats(c, state);
}

static void on_handle_closed(uv_handle_t *h)
{
    (void)h;
}

static void on_raft_closed(struct raft *r)
{
    cluster *c = r->data;
    raft_uv_close(&c->io);
    cluster_net_free(&c->transport);
    uv_close((uv_handle_t *)&c->wake, on_handle_closed);
    uv_close((uv_handle_t *)&c->tick, on_handle_closed);
}

static void on_transferred(struct raft_transfer *req)
{
    cluster *c = req->data;
    pthread_mutex_lock(&c->mu);
    c->transferred = 1;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

static void on_wake(uv_async_t *a)
{
    cluster *c = a->data;
    cluster_queue_run(c);
    pthread_mutex_lock(&c->mu);
    int stop = c->stop, transfer = c->transferring == 1;
    if (transfer)
        c->transferring = 2;
    pthread_mutex_unlock(&c->mu);
    if (transfer) {
        c->transfer.data = c;
        if (raft_state(&c->raft) != RAFT_LEADER ||
            raft_transfer(&c->raft, &c->transfer, 0, on_transferred) != 0)
            on_transferred(&c->transfer);
    }
    if (stop && !uv_is_closing((uv_handle_t *)&c->tick)) {
        uv_timer_stop(&c->tick);
        raft_close(&c->raft, on_raft_closed);
    }
}

static void *loop_main(void *arg)
{
    cluster *c = arg;
    uv_run(&c->loop, UV_RUN_DEFAULT);
    return NULL;
}

/* ---- the hooks' thread -------------------------------------------------------------------- */

static void *hook_main(void *arg)
{
    cluster *c = arg;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        if (c->want_deposed) {
            c->want_deposed = 0;
            pthread_mutex_unlock(&c->mu);
            if (c->hooks.deposed)
                c->hooks.deposed(c->hooks.ctx);
            pthread_mutex_lock(&c->mu);
            continue;
        }
        if (c->want_promote) {
            c->want_promote = 0;
            pthread_mutex_unlock(&c->mu);
            if (!atomic_load(&c->deposed) && c->hooks.promote)
                c->hooks.promote(c->hooks.ctx);
            pthread_mutex_lock(&c->mu);
            continue;
        }
        if (c->hooks_stop)
            break;
        pthread_cond_wait(&c->cv, &c->mu);
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* ---- the other threads' side -------------------------------------------------------------- */

/* The journal's hooks: snapshot files (INITFILE's, a compaction's) in pieces, a
 * compaction's steps, and batches, several on their way at once (journal.h). */
static int ship_file(void *ctx, uint64_t id, int fd, uint64_t size)
{
    return cluster_propose_file(ctx, JOURNAL_FILE, id, fd, size, NULL, 0);
}

static int ship_piece(void *ctx, journal_piece kind, uint64_t id, const void *data,
                      size_t len)
{
    return cluster_propose(ctx, (int)kind, id, 0, 1, data, len);
}

/* A batch committed or lost: the journal counts it. */
static void batch_done(void *ctx, uint64_t upto, int rc)
{
    cluster *c = ctx;
    journal_shipped(c->j, upto, rc);
}

static int ship_batch(void *ctx, const void *data, size_t len, uint64_t upto)
{
    return cluster_propose_async(ctx, JOURNAL_BATCH, data, len, batch_done, ctx, upto);
}

int cluster_replicate_save(cluster *c, const char *dir, const char *name)
{
    size_t nl = strlen(name);
    char path[4096];
    uint8_t prefix[2 + 256];
    if (!cluster_save_name_ok(name, nl) ||
        snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
        return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        log_error("cluster: cannot read %s to replicate it: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    prefix[0] = (uint8_t)nl;
    prefix[1] = (uint8_t)(nl >> 8);
    memcpy(prefix + 2, name, nl);
    int rc = cluster_propose_file(c, CLUSTER_SAVE, 0, fd, (uint64_t)st.st_size, prefix,
                                  2 + nl);
    close(fd);
    return rc;
}

cluster_route_kind cluster_route(cluster *c, unsigned *leader, char *url, size_t cap)
{
    if (atomic_load(&c->serving) && !atomic_load(&c->deposed) && !atomic_load(&c->draining)) {
        *leader = c->self;
        return CLUSTER_SERVE;
    }
    pthread_mutex_lock(&c->mu);
    unsigned id = c->stats.leader;
    pthread_mutex_unlock(&c->mu);
    *leader = id;
    if (!id || id == c->self || cluster_member_url(c, id, url, cap) != 0)
        return CLUSTER_NO_LEADER;            /* none, this node still loading, or no URL */
    return CLUSTER_FORWARD;
}

unsigned cluster_self(const cluster *c)
{
    return c->self;
}

uint64_t cluster_term(cluster *c)
{
    pthread_mutex_lock(&c->mu);
    uint64_t term = c->stats.term;
    pthread_mutex_unlock(&c->mu);
    return term;
}

uint64_t cluster_applied(cluster *c)
{
    return atomic_load(&c->applied);
}

int cluster_wait_applied(cluster *c, uint64_t idx, int64_t deadline_ms)
{
    if (atomic_load(&c->applied) >= idx)
        return 0;
    struct timespec until = clock_deadline_at_ms(deadline_ms);
    int rc = 0;
    pthread_mutex_lock(&c->applied_mu);
    atomic_fetch_add(&c->applied_waiters, 1);
    while (atomic_load(&c->applied) < idx && rc == 0)
        if (pthread_cond_timedwait(&c->applied_cv, &c->applied_mu, &until) == ETIMEDOUT)
            rc = atomic_load(&c->applied) >= idx ? 0 : -1;
    atomic_fetch_sub(&c->applied_waiters, 1);
    pthread_mutex_unlock(&c->applied_mu);
    return rc;
}

int cluster_redirects(const cluster *c)
{
    return c->redirect;
}

void cluster_set_serving(cluster *c)
{
    atomic_store(&c->serving, 1);
    uv_async_send(&c->wake);
}

int cluster_must_restart(cluster *c)
{
    return atomic_load(&c->restart);
}

void cluster_demoted(cluster *c)
{
    pthread_mutex_lock(&c->mu);
    /* A promotion asked before the leadership ended is that leadership's. */
    c->want_promote = 0;
    atomic_store(&c->serving, 0);
    atomic_store(&c->deposed, 0);
    pthread_mutex_unlock(&c->mu);
    uv_async_send(&c->wake);
}

void cluster_get_stats(cluster *c, cluster_stats *s)
{
    pthread_mutex_lock(&c->mu);
    *s = c->stats;
    pthread_mutex_unlock(&c->mu);
    s->serving = atomic_load(&c->serving);
    s->local_reads = atomic_load(&c->local_reads);
    s->read_rounds = atomic_load(&c->read_rounds);
    s->read_rounds_failed = atomic_load(&c->read_rounds_failed);
    s->fwd_batches = atomic_load(&c->fwd_batches);
    s->fwd_batched = atomic_load(&c->fwd_batched);
    s->fwd_alone = atomic_load(&c->fwd_alone);
    s->late_refused = atomic_load(&c->late_refused);
    s->late_dropped = atomic_load(&c->late_dropped);
    memset(&s->commits, 0, sizeof s->commits);
    hist_add_to(&c->commits, &s->commits);
}

void cluster_count_reads(cluster *c, size_t n, int ok)
{
    atomic_fetch_add(&c->read_rounds, 1);
    if (ok)
        atomic_fetch_add(&c->local_reads, n);
    else
        atomic_fetch_add(&c->read_rounds_failed, 1);
}

void cluster_count_forward(cluster *c, size_t n)
{
    if (!n) {
        atomic_fetch_add(&c->fwd_alone, 1);
        return;
    }
    atomic_fetch_add(&c->fwd_batches, 1);
    atomic_fetch_add(&c->fwd_batched, n);
}

void cluster_count_late(cluster *c, int refused)
{
    if (c)
        atomic_fetch_add(refused ? &c->late_refused : &c->late_dropped, 1);
}

/* ---- start and stop ----------------------------------------------------------------------- */

static const cluster_node *node_of(const cluster *c, unsigned id)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->nodes[i].id == id)
            return &c->nodes[i];
    return NULL;
}

/* raft's io->random, which it uses for its randomized election timeouts in [min, max).
 * raft 0.15 refuses a vote (a pre-vote too) while it still has a leader, which a follower
 * forgets only when its own timeout fires: the first candidate after a leader dies is
 * always refused, and wins only on its second try, or the second follower wins on its
 * first if it is as up to date. So node k of n draws in the k-th of n narrow slices at
 * the start of the range, each a quarter of it divided by n: the two followers stand
 * apart (no split vote), soon after each other, and a second try comes early. */
static int (*spread_draw)(struct raft_io *io, int min, int max);
static long spread_k, spread_n = 1;

static int spread_random(struct raft_io *io, int min, int max)
{
    int r = spread_draw(io, min, max);
    long width = ((long)max - min) / (4 * spread_n);
    if (width < 2)
        return r;
    return min + (int)(width * spread_k + ((long)r - min) % width);
}

/* Whether the raft address is free, before the first start bootstraps anything: raft
 * would bootstrap, then fail to listen, and keep that configuration for good. */
static int raft_port_free(const char *address, buf *err)
{
    char host[264];
    const char *colon = strrchr(address, ':');
    if (!colon || (size_t)(colon - address) >= sizeof host)
        return 0;
    memcpy(host, address, (size_t)(colon - address));
    host[colon - address] = '\0';
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai;
    if (getaddrinfo(host, colon + 1, &hints, &ai) != 0)
        return 0;                 /* raft says what is wrong with it */
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1, rc = 0;
    if (fd >= 0) {
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
            buf_printf(err, "cluster: cannot listen on %s: %s", address, strerror(errno));
            rc = -1;
        }
        close(fd);
    }
    freeaddrinfo(ai);
    return rc;
}

/* raft_init, raft_bootstrap (the first start only) and raft_start. Returns 0, or -1 with
 * the reason in err. */
static int start_raft(cluster *c, const char *dir, buf *err)
{
    /* A copy: raft_start may restore a snapshot, and with it a table of nodes that
     * predates this node's entry (cluster_start). */
    const cluster_node self = *node_of(c, c->self), *me = &self;
    int rv;
    if ((rv = uv_loop_init(&c->loop)) != 0) {
        buf_printf(err, "cluster: libuv: %s", uv_strerror(rv));
        return -1;
    }
    c->wake.data = c->tick.data = c;
    if (uv_async_init(&c->loop, &c->wake, on_wake) != 0 ||
        uv_timer_init(&c->loop, &c->tick) != 0 ||
        cluster_net_init(&c->transport, &c->loop,
                         c->election_ms > 1000 ? c->election_ms : 1000) != 0) {
        buf_puts(err, "cluster: cannot set up libuv");
        return -1;
    }
    if ((rv = raft_uv_init(&c->io, &c->loop, dir, &c->transport)) != 0) {
        buf_printf(err, "cluster: raft's directory %s: %s", dir, c->io.errmsg);
        return -1;
    }
    /* raft keeps the last two snapshots, each an image of the state directory: LZ4 (on
     * raft's worker threads) makes them a fraction of it (docs/benchmarks.md). */
    if ((rv = raft_uv_set_snapshot_compression(&c->io, true)) != 0)
        log_warn("cluster: raft's snapshots stay uncompressed: %s", raft_strerror(rv));
    for (size_t i = 0; i < c->n; i++)
        if (c->nodes[i].id != c->self)
            cluster_net_resolve(&c->transport, c->nodes[i].raft);
    /* Each node draws its election timeouts from a slice of raft's range of its own
     * (spread_random): with the shared range, 3 kills in 33 took 3.1-3.5 s. */
    spread_draw = c->io.random;
    spread_n = c->n ? (long)c->n : 1;
    for (size_t i = 0; i < c->n; i++)
        if (c->nodes[i].id == c->self)
            spread_k = (long)i;
    c->io.random = spread_random;
    cluster_fsm_init(c);
    c->raft.data = c;
    if ((rv = raft_init(&c->raft, &c->io, &c->fsm, c->self, me->raft)) != 0) {
        const char *m = raft_errmsg(&c->raft);
        buf_printf(err, "cluster: raft cannot start in %s: %s%s", dir, m && *m ? m :
                   raft_strerror(rv), strstr(m ? m : "", "io_setup") ? " (raft needs "
                   "Linux asynchronous I/O: raise /proc/sys/fs/aio-max-nr, or allow "
                   "io_setup in the container's seccomp profile)" : "");
        return -1;
    }
    struct raft_configuration rc;
    raft_configuration_init(&rc);
    for (size_t i = 0; i < c->n; i++)
        if (raft_configuration_add(&rc, c->nodes[i].id, c->nodes[i].raft, RAFT_VOTER) != 0) {
            raft_configuration_close(&rc);
            buf_puts(err, "cluster: out of memory");
            return -1;
        }
    if (raft_port_free(me->raft, err) != 0) {
        buf_printf(err, " [stsd.cluster.node.%u]", c->self);
        raft_configuration_close(&rc);
        return -1;
    }
    /* A joining node starts with no configuration: the leader's log brings it. */
    rv = c->join ? RAFT_CANTBOOTSTRAP : raft_bootstrap(&c->raft, &rc);
    raft_configuration_close(&rc);
    if (rv != 0 && rv != RAFT_CANTBOOTSTRAP) {
        buf_printf(err, "cluster: cannot bootstrap in %s: %s", dir, raft_errmsg(&c->raft));
        return -1;
    }
    if (rv == 0)
        log_info("cluster: a new cluster of %zu nodes bootstrapped in %s", c->n, dir);
    raft_set_election_timeout(&c->raft, c->election_ms);
    raft_set_heartbeat_timeout(&c->raft, c->election_ms / 10 ? c->election_ms / 10 : 1);
    raft_set_pre_vote(&c->raft, true);
    /* raft waits this long for a follower's answer to a snapshot before sending it
     * again (30 s by default: a node restored from one then waited 30 s for the log). */
    raft_set_install_snapshot_timeout(&c->raft, c->election_ms * 10 > 10000 ?
                                      c->election_ms * 10 : 10000);
    raft_set_snapshot_threshold(&c->raft, c->snapshot_entries);
    raft_set_snapshot_trailing(&c->raft, c->snapshot_entries / 4);
    if ((rv = raft_start(&c->raft)) != 0) {
        const char *m = raft_errmsg(&c->raft);
        buf_printf(err, "cluster: raft cannot start: %s", m && *m ? m :
                   rv == RAFT_IOERR ? "I/O error (is the raft address of "
                   "stsd.cluster.node.N for this node in use by another process?)" :
                   raft_strerror(rv));
        if (rv == RAFT_IOERR || (m && strstr(m, "address")))
            buf_printf(err, " [stsd.cluster.node.%u=%s]", c->self, me->raft);
        return -1;
    }
    /* A twentieth of the election timeout: a new leader starts loading, and followers
     * forward to it, at most this long after raft knows (50 ms by default). */
    unsigned every = c->election_ms / 20 ? c->election_ms / 20 : 1;
    uv_timer_start(&c->tick, on_tick, every, every);
    return 0;
}

cluster *cluster_start(const config *conf, const char *dir, struct journal *j,
                       const char *dataset_dir, const cluster_hooks *h, buf *err)
{
    cluster *c = calloc(1, sizeof *c);
    if (!c) {
        buf_puts(err, "out of memory");
        return NULL;
    }
    c->self = (unsigned)conf->cluster_self;
    c->redirect = conf->cluster_redirect;
    c->election_ms = (unsigned)conf->cluster_election_ms;
    c->snapshot_entries = (unsigned)conf->cluster_snapshot_entries;
    c->join = conf->cluster_join;
    c->j = j;
    c->dataset_dir = strdup(dataset_dir);
    c->hooks = *h;
    c->stats.self = c->self;
    c->stats.role = "unavailable";
    if (getrandom(&c->nonce, sizeof c->nonce, 0) != sizeof c->nonce)
        c->nonce = (uint64_t)wall_now() ^ (uint64_t)getpid() << 32;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    pthread_mutex_init(&c->applied_mu, NULL);
    if (clock_cond_init(&c->applied_cv) != 0) {
        buf_puts(err, "cannot make a condition variable");
        free(c);
        return NULL;
    }
    if (cluster_members_from_config(c, conf, err) != 0 || !node_of(c, c->self)) {
        if (!err->len)
            buf_printf(err, "stsd.cluster.self=%u names no stsd.cluster.node.%u", c->self,
                       c->self);
        free(c);
        return NULL;
    }
    /* Its own address as configured: raft_start may restore a snapshot whose table of
     * nodes predates this node's joining (its entry comes later in the log). */
    char self_raft[sizeof c->nodes[0].raft];
    snprintf(self_raft, sizeof self_raft, "%s", node_of(c, c->self)->raft);
    journal_ship_hooks hooks = {ship_piece, ship_batch, ship_file, conf->cluster_pipeline};
    journal_set_ship(j, &hooks, c);
    journal_set_compact_threshold(j, conf->cluster_compact_bytes);
    if (start_raft(c, dir, err) != 0) {
        journal_set_ship(j, NULL, NULL);
        /* Whatever raft and libuv got to stays allocated: the process is about to exit. */
        return NULL;
    }
    /* Said before the threads start: the loop may change the table of nodes. */
    log_info("cluster: node %u of %zu, raft on %s, data in %s, election timeout %u ms, "
             "forwarding by %s", c->self, c->n, self_raft, dir,
             c->election_ms, c->redirect ? "redirect" : "proxy");
    if (thread_start(&c->hook_thread, "stsd-cluster", hook_main, c) != 0 ||
        thread_start(&c->loop_thread, "stsd-raft", loop_main, c) != 0) {
        buf_puts(err, "cluster: cannot start its threads");
        return NULL;
    }
    c->hook_started = c->loop_started = 1;
    return c;
}

void cluster_handover(cluster *c, int ms)
{
    if (!atomic_load(&c->serving) || atomic_load(&c->deposed))
        return;
    /* New requests get a retryable 503 (or, once the leader moved, go to the new one);
     * those already taken get committed before raft hands over, so that none is left
     * "outcome unknown". */
    atomic_store(&c->draining, 1);
    if (journal_quiesce(c->j, ms / 2) != 0)
        log_warn("cluster: changes still in flight after %d ms; handing over anyway", ms / 2);
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += ms / 1000;
    t.tv_nsec += (long)(ms % 1000) * 1000000;
    if (t.tv_nsec >= 1000000000) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&c->mu);
    c->transferring = 1;
    pthread_mutex_unlock(&c->mu);
    uv_async_send(&c->wake);
    pthread_mutex_lock(&c->mu);
    while (!c->transferred)
        if (pthread_cond_timedwait(&c->cv, &c->mu, &t) != 0)
            break;
    int done = c->transferred;
    pthread_mutex_unlock(&c->mu);
    atomic_store(&c->serving, 0);
    log_info("cluster: leadership handed over%s", done ? "" : " (timed out)");
}

/* What a journal ships to once its cluster has stopped: nothing gets committed. */
static int piece_stopped(void *ctx, journal_piece kind, uint64_t id, const void *data,
                         size_t len)
{
    (void)ctx, (void)kind, (void)id, (void)data, (void)len;
    return -1;
}

static int batch_stopped(void *ctx, const void *data, size_t len, uint64_t upto)
{
    (void)ctx, (void)data, (void)len, (void)upto;
    return -1;
}

static int file_stopped(void *ctx, uint64_t id, int fd, uint64_t size)
{
    (void)ctx, (void)id, (void)fd, (void)size;
    return -1;
}

void cluster_stop(cluster *c)
{
    if (!c)
        return;
    atomic_store(&c->serving, 0);
    pthread_mutex_lock(&c->mu);
    c->stop = 1;
    c->hooks_stop = 1;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    if (c->loop_started) {
        uv_async_send(&c->wake);
        pthread_join(c->loop_thread, NULL);
        uv_loop_close(&c->loop);
    }
    if (c->hook_started)
        pthread_join(c->hook_thread, NULL);
    static const journal_ship_hooks stopped = {piece_stopped, batch_stopped, file_stopped, 1};
    journal_set_ship(c->j, &stopped, NULL);
    cluster_fsm_close();
    free(c->dataset_dir);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->applied_mu);
    pthread_cond_destroy(&c->applied_cv);
    free(c);
}
