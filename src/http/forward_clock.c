/* SPDX-License-Identifier: Apache-2.0 */
/* forward_clock.c - the leader's clock as a follower reckons it, and the deadlines of the
 * requests it passes on. */
#include "forward_clock.h"

#include <string.h>

#include "base/num.h"

void forward_clock_note(forward_clock *fc, unsigned node, int64_t node_ms, int64_t local_ms)
{
    *fc = (forward_clock){.known = 1, .node = node, .node_ms = node_ms, .local_ms = local_ms};
}

void forward_clock_absent(forward_clock *fc, unsigned node)
{
    *fc = (forward_clock){.known = 1, .absent = 1, .node = node};
}

int forward_clock_ready(const forward_clock *fc, unsigned node)
{
    return fc->known && fc->node == node;
}

int forward_clock_deadline(const forward_clock *fc, unsigned node, int64_t arrived_ms,
                           int64_t within_ms, int64_t *dl)
{
    if (!forward_clock_ready(fc, node) || fc->absent)
        return 0;
    int64_t d = fc->node_ms + (arrived_ms - fc->local_ms) + within_ms;
    *dl = d > 0 ? d : 0;
    return 1;
}

int forward_clock_in_time(const char *dl, int64_t now_ms)
{
    uint64_t ms;
    if (!dl)
        return 1;
    /* Digits only, as forward_clock_deadline writes it. */
    if (num_parse_u64(dl, strlen(dl), 0, INT64_MAX, &ms) != 0)
        return -1;
    return now_ms <= (int64_t)ms;
}
