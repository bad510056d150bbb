/* SPDX-License-Identifier: Apache-2.0 */
/* cluster_stub.c - TEMPORARY: lets the edge be built before the raft adapter lands. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cluster.h"

cluster_route_kind cluster_route(cluster *c, unsigned *leader, char *url, size_t cap)
{
    const char *u = getenv("STSD_TEST_LEADER_URL");
    (void)c;
    if (!u)
        return CLUSTER_NO_LEADER;
    *leader = 2;
    snprintf(url, cap, "%s", u);
    return CLUSTER_FORWARD;
}
unsigned cluster_self(const cluster *c) { (void)c; return 1; }
int cluster_redirects(const cluster *c) { (void)c; return getenv("STSD_TEST_REDIRECT") != NULL; }
void cluster_set_serving(cluster *c) { (void)c; }
void cluster_get_stats(cluster *c, cluster_stats *s) { (void)c; memset(s, 0, sizeof *s); }
