/* SPDX-License-Identifier: Apache-2.0 */
/* replica.h - the app's side of the cluster: the journal of a replica, what a node does
 * when it comes to lead (load the store) and when it stops leading (empty it, or restart
 * when that cannot be done safely). */
#ifndef STSD_REPLICA_H
#define STSD_REPLICA_H

#include <stdatomic.h>

#include "cluster/cluster.h"
#include "cmd/command.h"
#include "journal/journal.h"

/* What the requests waiting on a node that stopped leading are answered (503). */
#define REPLICA_LEADER_CHANGED "Leader changed: this node no longer leads; the request " \
    "was not served, retry !"

typedef struct replica {
    cluster *c;                  /* NULL: alone */
    cmd_server *srv;             /* its store and journal; srv->cluster is c */
    void (*request_stop)(void);  /* wakes main */
    atomic_int *stopping;        /* main's: a stop was asked for */
    atomic_int restart;          /* the node must start again from raft's copy: main
                                  * executes stsd again */
} replica;

/* Opens the state directory of a replica (its logs and snapshot files removed: raft
 * writes them again) into *out, attached to st. Returns 0, or -1 with the reason logged. */
int replica_open_journal(const char *state_dir, store *st, struct journal **out);

/* Starts raft for srv->conf, sets srv->cluster. raft's data goes to stsd.cluster.dir, or
 * <state_dir>/raft. Returns 0, or -1 with the reason logged. */
int replica_start(replica *r, const char *state_dir);

/* A planned stop: hands the leadership over first (up to 2 s). */
void replica_handover(replica *r);

/* Stops raft; the journal stays the caller's. */
void replica_stop(replica *r);

#endif
