/* SPDX-License-Identifier: Apache-2.0 */
/* cluster.h - replicas: this node among stsd.cluster.node.N, over Canonical's C raft.
 *
 * The one room that sees raft and libuv. Raft runs on a thread of its own (its loop);
 * other threads hand it work through a queue and uv_async_send, and read what it knows
 * (role, term, leader, indexes) from a copy refreshed under a mutex.
 *
 * What is replicated is the journal: each group-commit batch of records is one raft
 * entry (journal_set_ship), INITFILE's snapshot files go as chunks of about 1 MiB before
 * the record that names them, and every node writes the committed entries into its own
 * state directory (journal_mirror_*); followers apply them to a hot standby as well. Only
 * the leader has a live store: it is taken from the standby when the node wins an
 * election (the promote hook). A node that loses the leadership has its journal demoted
 * on raft's thread (journal_demote) and its store emptied (the deposed hook), so that
 * nothing not committed survives in its memory, and follows on in the same process.
 * Followers forward requests to the leader. */
#ifndef STSD_CLUSTER_H
#define STSD_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/hist.h"
#include "config/config.h"

struct journal;
typedef struct cluster cluster;

/* Called from a thread of the cluster's own, never raft's: promote once this node leads
 * and has applied every entry before its term (load the store from the journal, then
 * cluster_set_serving); deposed once it has stopped leading (or promote failed). */
typedef struct cluster_hooks {
    void (*promote)(void *ctx);
    void (*deposed)(void *ctx);
    void *ctx;
} cluster_hooks;

/* The deposed hook asks whether the node must start again from raft's copy (its
 * directory no longer follows the log) rather than follow on in the same process. */
int cluster_must_restart(cluster *c);
/* The deposed hook is done: the store holds nothing of the leadership that ended, and
 * the node may be promoted again. */
void cluster_demoted(cluster *c);

/* Starts raft for conf (conf->cluster_self != 0) with its data in dir: bootstraps the
 * cluster on the first start, rejoins it later. j is the journal whose directory the
 * committed entries are written to (its ship hook is set here); SAVE's files go to
 * dataset_dir. Returns NULL with the
 * reason in err (a refused io_setup is named as such). */
cluster *cluster_start(const config *conf, const char *dir, struct journal *j,
                       const char *dataset_dir, const cluster_hooks *h, buf *err);

/* Hands the leadership to the most up-to-date follower if this node leads, waiting up to
 * ms for it. From then on the node answers nothing itself. */
void cluster_handover(cluster *c, int ms);
/* Stops raft and frees c; j's changes fail from then on. NULL: nothing. */
void cluster_stop(cluster *c);

/* Where a request must go. CLUSTER_SERVE: this node leads and has its store loaded.
 * CLUSTER_FORWARD: to the leader, whose id and HTTP URL (no trailing slash) are set.
 * CLUSTER_NO_LEADER: none known, or this node is still loading (503). */
typedef enum cluster_route_kind { CLUSTER_SERVE, CLUSTER_FORWARD, CLUSTER_NO_LEADER } cluster_route_kind;
cluster_route_kind cluster_route(cluster *c, unsigned *leader, char *url, size_t cap);

/* SAVE in a cluster: the file name (written by the leader into dir, its dataset
 * directory) goes to every node, each writing it into its own dataset directory (given
 * given to cluster_start) once committed. Returns 0, or -1 (logged) if it may not
 * have reached the others (no longer leading). */
int cluster_replicate_save(cluster *c, const char *dir, const char *name);

/* Membership, on the leader (CLUSTER ADD, CLUSTER REMOVE): node id with its raft
 * address and URL joins (its URL replicated, then a spare, then a voter once caught up:
 * this waits for it), or leaves. Return 0 with msg set, or an HTTP status for the KO in
 * msg (404 no such node, 409 a conflict, 503 not done or not known to be). */
int cluster_add_node(cluster *c, unsigned id, const char *raft, const char *url, buf *msg);
int cluster_remove_node(cluster *c, unsigned id, buf *msg);

/* This node's id; whether forwarding answers 307 (stsd.cluster.forward=redirect). */
unsigned cluster_self(const cluster *c);
/* The raft term as of raft's loop's last tick. */
uint64_t cluster_term(cluster *c);

/* The raft index this node has applied: on a leader, at least every change it has
 * acknowledged (the answer of a write goes after its entry is applied), so that a
 * follower that has applied as far has seen them all (READINDEX, a follower's read). */
uint64_t cluster_applied(cluster *c);
/* Waits until this node has applied raft index idx, or until deadline_ms
 * (clock_now_ms()). Returns 0, or -1 on the deadline or when the cluster stops. */
int cluster_wait_applied(cluster *c, uint64_t idx, int64_t deadline_ms);
/* Counts a ReadIndex round of this follower for n reads: ok, they were answered here;
 * else each got a 503 (cluster_stats, the metrics). */
void cluster_count_reads(cluster *c, size_t n, int ok);
/* Counts a request this node sent the leader: n > 0 in one batch of n, 0 alone. */
void cluster_count_forward(cluster *c, size_t n);

/* Counts what came after its deadline (stsd.cluster.forwardWithin) and was not run:
 * refused, a batch or a request a follower sent this node as the leader; else dropped,
 * a request that waited on this node for a batch too long to be sent at all. */
void cluster_count_late(cluster *c, int refused);
int cluster_redirects(const cluster *c);

/* Set by the promote hook once the store is loaded: this node answers from now on. */
void cluster_set_serving(cluster *c);

/* What CLUSTER, /metrics and the dashboard show. */
typedef struct cluster_node_stats {
    unsigned id;
    char raft[264];
    char url[280];
    const char *role;          /* "leader", "follower", "candidate", "unavailable" or "?" */
    uint64_t match;            /* leader only: highest entry it has; lag = commit - match */
    int known;                 /* match is known (this node leads) */
    const char *health;        /* "up", "unreachable", or NULL: not known here */
    double health_since;       /* wall-clock seconds of the verdict's last change; 0 */
    int64_t heard_ms;          /* ms since it was last heard from; -1: not known here */
} cluster_node_stats;
typedef struct cluster_stats {
    unsigned self, leader;     /* leader 0: none known */
    const char *role;          /* this node's */
    int serving;
    uint64_t term, commit, applied, last_index;
    uint64_t leader_changes;   /* times the known leader changed since start */
    uint64_t local_reads;      /* reads this node answered from its standby */
    uint64_t read_rounds, read_rounds_failed;  /* READINDEX rounds for them */
    uint64_t fwd_batches, fwd_batched, fwd_alone;  /* requests sent to the leader */
    uint64_t late_refused, late_dropped;           /* cluster_count_late */
    hist_sum commits;          /* the journal's batches this node proposed, committed */
    double leader_since;       /* wall-clock seconds of the last change */
    size_t n;
    cluster_node_stats nodes[CONF_CLUSTER_MAX];
} cluster_stats;
void cluster_get_stats(cluster *c, cluster_stats *s);

#endif
