/* SPDX-License-Identifier: Apache-2.0 */
/* cluster_core.h - what cluster.c offers the cluster's other files. */
#ifndef STSD_CLUSTER_CORE_H
#define STSD_CLUSTER_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "cluster_int.h"

/* Proposes one piece (kind: a journal_piece or CLUSTER_SAVE) and waits for its commit.
 * Returns 0, or -1 if it never will be known to be (not leading, stopping). Any thread
 * but the loop's. */
int cluster_propose(cluster *c, int kind, uint64_t id, uint64_t off, int last,
                    const void *data, size_t len);

#endif
