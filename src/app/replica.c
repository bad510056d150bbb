/* SPDX-License-Identifier: Apache-2.0 */
/* replica.c - the app's side of the cluster: a replica's journal, its store loaded when it
 * comes to lead and emptied when it stops.
 *
 * The leader applies a change to its store before raft commits it, so a leader deposed
 * with changes in flight holds in memory what the cluster may never commit. The cluster
 * demotes the journal on raft's thread (journal_demote: the uncommitted records dropped,
 * their answers "outcome unknown", the hot standby rebuilt from the committed directory);
 * here, the requests still parked are answered 503, and the store and the keys are
 * emptied without a record, so that the next promotion takes the committed state from
 * the standby. The process, its connections and its metrics stay. When the directory
 * itself no longer follows raft's log, or the journal could not be demoted, the node
 * executes itself again instead, starting from raft's copy. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "app/replica.h"
#include "base/clock.h"
#include "base/log.h"
#include "dataset/dataset.h"
#include "hold/park.h"
#include "meet/keys.h"
#include "store/store.h"

/* How long a planned stop waits for a follower to take the leadership. */
#define HANDOVER_MS 2000

/* mkdir -p: raft wants its directory made. */
static int make_dir(const char *path)
{
    char p[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof p)
        return -1;
    memcpy(p, path, n + 1);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            if (mkdir(p, 0700) != 0 && errno != EEXIST)
                return -1;
            *s = '/';
        }
    return mkdir(p, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

int replica_open_journal(const char *state_dir, store *st, struct journal **out)
{
    buf err = BUF_INIT;
    *out = journal_open_replica(state_dir, st, &err);
    if (!*out) {
        log_error("%s", err.data ? err.data : "out of memory");
        buf_free(&err);
        return -1;
    }
    journal_attach(*out, st);
    buf_free(&err);
    return 0;
}

/* Starts stsd again from raft's copy (main executes itself). */
static void restart(replica *r, const char *why)
{
    log_warn("cluster: restarting: %s", why);
    atomic_store(&r->restart, 1);
    r->request_stop();
}

static void on_promote(void *ctx)
{
    replica *r = ctx;
    cmd_server *srv = r->srv;
    buf err = BUF_INIT;
    /* The recorder stays attached: the lease timer may end an adopted lease past its
     * deadline at once, and that change must be in the log like any other (the store's
     * adoption records nothing). */
    int rc = journal_reload(srv->j, srv->st, &err);
    if (rc != 0) {
        log_error("cluster: cannot load the state to lead: %s",
                  err.data ? err.data : "out of memory");
        buf_free(&err);
        /* Deposed meanwhile: the deposed hook, next, empties the store. */
        if (!journal_leading(srv->j) || cluster_must_restart(r->c))
            return;
        restart(r, "the state could not be loaded");
        return;
    }
    buf_free(&err);
    cluster_set_serving(r->c);
    size_t lists = store_count(srv->st);
    log_info("cluster: node %u leads, term %llu; serving %zu list%s from memory",
             cluster_self(r->c), (unsigned long long)cluster_term(r->c), lists,
             lists == 1 ? "" : "s");
    /* A new cluster's first leader loads the files, as a lone stsd does at its start;
     * later leaders find them in the journal. */
    if (store_count(srv->st) == 0 && srv->conf->init_file_at_startup &&
        *srv->conf->init_file_at_startup && command_init_at_startup(srv) != 0)
        log_error("cluster: initFileAtStartup failed on the new leader");
}

static void on_deposed(void *ctx)
{
    replica *r = ctx;
    cmd_server *srv = r->srv;
    size_t lists = 0;
    if (atomic_load(r->stopping))
        return;                   /* a planned stop handed the leadership over */
    if (cluster_must_restart(r->c)) {
        restart(r, "the state directory no longer follows the cluster's log");
        return;
    }
    /* A promotion that began before the leadership ended and set the journal leading
     * after raft's thread demoted it: its records cannot be told apart here. */
    if (journal_leading(srv->j)) {
        restart(r, "the journal still counts a leadership that ended");
        return;
    }
    uint64_t t0 = clock_now_ns();
    /* Waiting requests first (READ, GET, INCR, ONCE with TIMEOUT, BARRIER): whatever
     * they would find next is no longer this node's to give. Requests forwarded to the
     * leader go on. */
    park_lot_end(srv->lot, 503, REPLICA_LEADER_CHANGED);
    if (store_clear(srv->st, &lists) != 0) {
        restart(r, "no memory to empty the store");
        return;
    }
    size_t keys = keys_clear(srv->st);
    cluster_demoted(r->c);
    log_info("cluster: node %u follows, in the same process: %zu lists and %zu keys of "
             "its leadership dropped from memory in %.1f ms", cluster_self(r->c), lists, keys,
             (double)(clock_now_ns() - t0) / 1e6);
}

int replica_start(replica *r, const char *state_dir)
{
    const config *conf = r->srv->conf;
    buf err = BUF_INIT, dir = BUF_INIT;
    if (conf->cluster_dir && *conf->cluster_dir)
        buf_puts(&dir, conf->cluster_dir);
    else
        buf_printf(&dir, "%s/raft", state_dir);
    cluster_hooks h = {on_promote, on_deposed, r};
    if (!dir.oom && make_dir(dir.data) != 0)
        log_warn("cluster: cannot create %s", dir.data);
    r->c = dir.oom ? NULL : cluster_start(conf, dir.data, r->srv->j,
                                            dataset_path(r->srv->ds), &h, &err);
    if (!r->c)
        log_error("%s", err.data ? err.data : "out of memory");
    r->srv->cluster = r->c;
    buf_free(&err);
    buf_free(&dir);
    return r->c ? 0 : -1;
}

void replica_handover(replica *r)
{
    if (r->c)
        cluster_handover(r->c, HANDOVER_MS);
}

void replica_stop(replica *r)
{
    cluster_stop(r->c);
    r->c = NULL;
}
