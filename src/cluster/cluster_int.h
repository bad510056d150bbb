/* SPDX-License-Identifier: Apache-2.0 */
/* cluster_int.h - the cluster's state, shared by cluster.c and cluster_fsm.c. Types only. */
#ifndef STSD_CLUSTER_INT_H
#define STSD_CLUSTER_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <raft.h>
#include <raft/uv.h>
#include <uv.h>

#include "base/hist.h"
#include "cluster/cluster.h"

struct piece;

typedef struct cluster_node {
    unsigned id;
    char raft[264];              /* HOST:PORT raft listens on */
    char url[280];               /* its HTTP URL, no trailing slash */
} cluster_node;

/* One node's health (cluster_health.c), by id; all of it the loop's own. */
typedef struct cluster_health_node {
    unsigned id;
    int64_t heard_ms;            /* leading: clock_now_ms() when it last answered */
    uint64_t match_seen;         /* leading: its match index at the last tick */
    int64_t changed_ms;          /* leading: clock_now_ms() of the verdict's last change */
    int64_t since_ms;            /* leading: the same on the wall clock (ms) */
    int up;                      /* leading: the verdict, logged and proposed */
    int rep_known, rep_up;       /* the replicated table's verdict */
    int64_t rep_since_ms;        /* and since when (the leader's wall clock, ms) */
} cluster_health_node;

struct cluster {
    unsigned self;
    int redirect;
    unsigned election_ms;
    unsigned snapshot_entries;
    int join;                    /* stsd.cluster.join: no bootstrap */
    size_t n;
    cluster_node nodes[CONF_CLUSTER_MAX];
    struct journal *j;
    char *dataset_dir;           /* where SAVE's files go (NULL: nowhere) */
    cluster_hooks hooks;
    /* Written into every entry this process proposes: an entry applied with it is one
     * whose records the journal counted already (see journal_mirror_batch). */
    uint64_t nonce;              /* the loop's: a new one each time the node stops leading */
    uint64_t stale_upto;         /* the loop's: batches ending at or before this lsn are
                                  * of a leadership that ended (journal_demote) */

    /* The loop's own: raft, its io, and the handles that wake it. */
    uv_loop_t loop;
    uv_async_t wake;
    uv_timer_t tick;
    struct raft_uv_transport transport;
    struct raft_io io;
    struct raft_fsm fsm;
    struct raft raft;
    struct raft_barrier barrier;
    struct raft_transfer transfer;
    int was_leader;              /* raft said leader at the last tick */
    int health_leading;          /* cluster_health_tick: this leadership's verdicts set */
    int health_proposed;         /* and its first table proposed */
    struct raft_barrier health_barrier;  /* an entry while idle (cluster_health.c) */
    int health_barrier_out;
    uint64_t health_last_index;  /* raft's last index at the last tick, and since when */
    int64_t health_last_ms;
    size_t health_n;
    cluster_health_node health[CONF_CLUSTER_MAX];
    int promoting;               /* barrier asked or store loading: not yet serving */
    pthread_t loop_thread;
    int loop_started;

    /* Shared: guarded by mu. */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct piece *queue, *queue_tail;   /* pieces for the loop to propose */
    int stop;                    /* the loop closes raft and ends */
    int transferring, transferred;
    cluster_stats stats;         /* the loop's copy, refreshed each tick */
    atomic_int serving;          /* leader with its store loaded: answers requests */
    atomic_int deposed;          /* stopped leading: the store is being emptied, no new
                                  * promotion until cluster_demoted (or, with restart,
                                  * for good) */
    atomic_int restart;          /* the directory no longer follows raft's log: the
                                  * node must start again from raft's copy */
    atomic_int draining;         /* a planned handover: new requests are not served */

    /* The raft index applied to the state machine (raft's last_applied), published by
     * the loop for the other threads: a ReadIndex read waits for it (cluster_applied). */
    _Atomic uint64_t applied;
    atomic_int applied_waiters;
    pthread_mutex_t applied_mu;
    pthread_cond_t applied_cv;
    /* A follower's reads (cluster_count_reads). */
    _Atomic uint64_t local_reads, read_rounds, read_rounds_failed;
    _Atomic uint64_t fwd_batches, fwd_batched, fwd_alone;
    _Atomic uint64_t late_refused, late_dropped;   /* cluster_count_late */
    /* The leader's batches: each from its hand-over to the loop to its commit and apply
     * here (stsd_cluster_commit_seconds). */
    hist commits;

    /* The hooks' thread: promote and deposed run there, one at a time, deposed first
     * when both are wanted. */
    pthread_t hook_thread;
    int hook_started;
    int want_promote, want_deposed, hooks_stop;
};

#endif
