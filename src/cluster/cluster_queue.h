/* SPDX-License-Identifier: Apache-2.0 */
/* cluster_queue.h - work for raft's loop from other threads (cluster_queue.c). */
#ifndef STSD_CLUSTER_QUEUE_H
#define STSD_CLUSTER_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "cluster_int.h"

/* Proposes one piece (kind: see cluster_entry.h) and waits for its commit. Returns 0, or
 * -1 if it never will be known to be (not leading, stopping). Any thread but the loop's. */
int cluster_propose(cluster *c, int kind, uint64_t id, uint64_t off, int last,
                    const void *data, size_t len);

/* Proposes one piece and returns at once: done(ctx, arg, rc) is called on the loop's
 * thread once it is committed and applied here (rc 0) or never will be known to be (rc
 * -1), in the order pieces were proposed. Returns 0, or -1 (done never called) when
 * stopping or out of memory. */
typedef void (*cluster_done_fn)(void *ctx, uint64_t arg, int rc);
/* The arg of a piece that is no journal batch: never taken for a stale one, and not
 * counted in the batches' commit times. */
#define CLUSTER_ARG_NONE UINT64_MAX
int cluster_propose_async(cluster *c, int kind, const void *data, size_t len,
                          cluster_done_fn done, void *ctx, uint64_t arg);

/* Proposes size bytes of file fd in entries of kind (1 MiB of data each after prefix,
 * at their offsets, the last one marked), several in flight, and waits for them all.
 * Returns 0, or -1 (logged) if any was not committed. */
int cluster_propose_file(cluster *c, int kind, uint64_t id, int fd, uint64_t size,
                         const void *prefix, size_t plen);

/* A change of membership, waited for: CLUSTER_OP_ADD (a spare at address),
 * CLUSTER_OP_VOTER (promoted once caught up), CLUSTER_OP_REMOVE. Returns 0, or raft's
 * error code (its message copied into why). */
enum { CLUSTER_OP_APPLY, CLUSTER_OP_ADD, CLUSTER_OP_VOTER, CLUSTER_OP_REMOVE };
int cluster_change(cluster *c, int op, unsigned id, const char *address, char *why,
                   size_t cap);

/* On the loop's thread: starts what was queued; what cannot be (not leading, stopping)
 * fails now. */
void cluster_queue_run(cluster *c);

#endif
