/* SPDX-License-Identifier: Apache-2.0 */
/* cluster_health.h - which nodes answer: the leader's verdicts (up, or unreachable past
 * three election timeouts without a word), logged once each way and replicated in a
 * CLUSTER_HEALTH entry so that every node shows what the leader knows. */
#ifndef STSD_CLUSTER_HEALTH_H
#define STSD_CLUSTER_HEALTH_H

#include <stddef.h>
#include <stdint.h>

#include "cluster_int.h"

/* On raft's loop, each tick: the leader's note of who answered since the last (raft's
 * recent_recv), its verdicts, a line in the log and a CLUSTER_HEALTH entry proposed when
 * one changes or a leadership begins (serving: this node's store is loaded, so that the
 * queue proposes). */
void cluster_health_tick(cluster *c, int leading, int serving);

/* The leader's note of node id at clock_now_ms() now: heard from (answered_now) or not;
 * its verdict changes (logged) past three election timeouts of silence, or at its first
 * word after. Returns 1 if the verdict changed. On raft's loop; cluster_health_tick's. */
int cluster_health_note(cluster *c, unsigned id, int answered_now, int64_t now);

/* Applies a committed CLUSTER_HEALTH entry (data, len bytes): the table every node shows.
 * Deterministic: the entry holds the verdicts and their times. Returns 0, or -1 if it is
 * malformed (nothing changed). On raft's loop. */
int cluster_health_apply(cluster *c, const uint8_t *data, size_t len);

/* Fills each node's health in s (s->nodes[0..s->n) with their ids set), as this node
 * knows it: its own verdicts when it leads, the replicated table otherwise, and on a
 * follower the time since the leader was last heard from. On raft's loop, mu held. */
void cluster_health_fill(cluster *c, cluster_stats *s, int leading);

#endif
