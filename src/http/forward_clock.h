/* SPDX-License-Identifier: Apache-2.0 */
/* forward_clock.h - a follower's reckoning of the leader's clock, and the deadlines of the
 * requests it passes on (stsd.cluster.forwardWithin); the leader's check of one. Pure
 * arithmetic on milliseconds, no thread of its own: the forwarding thread owns a
 * forward_clock (http_forward.c). Private to http/. */
#ifndef STSD_FORWARD_CLOCK_H
#define STSD_FORWARD_CLOCK_H

#include <stdint.h>

/* The last sample of one node's clock (clock_now_ms there), and this node's clock when
 * it came. */
typedef struct forward_clock {
    int known;
    int absent;               /* that node answers with no clock: an older version */
    unsigned node;
    int64_t node_ms, local_ms;
} forward_clock;

/* A sample: node's clock read node_ms, and its answer came here at local_ms. */
void forward_clock_note(forward_clock *fc, unsigned node, int64_t node_ms, int64_t local_ms);

/* That node answered with no clock at all (an older version, during a rolling upgrade):
 * its requests go without a deadline, which it could not check anyway. */
void forward_clock_absent(forward_clock *fc, unsigned node);

/* Whether requests for node may go: its clock is sampled, or known to be absent. */
int forward_clock_ready(const forward_clock *fc, unsigned node);

/* The deadline on node's clock of a request that came here at arrived_ms and must start
 * within within_ms of it: the sample plus the time elapsed here since, plus within_ms
 * (an underestimate of node's time by the answer's one-way delay: never later than
 * meant). Returns 1 with it in *dl, or 0 when there is none to give (no sample, or an
 * absent clock). */
int forward_clock_deadline(const forward_clock *fc, unsigned node, int64_t arrived_ms,
                           int64_t within_ms, int64_t *dl);

/* On the node that gets a request: whether it may still start at now_ms, by the deadline
 * header's value dl (NULL: none, yes). Returns 1 yes, 0 too late, -1 malformed. */
int forward_clock_in_time(const char *dl, int64_t now_ms);

#endif
