/* SPDX-License-Identifier: Apache-2.0 */
/* config_cluster.h - what config_cluster.c offers config.c: the form of a
 * stsd.cluster.node.N value, and the checks that tie the cluster's keys together. */
#ifndef STSD_CONFIG_CLUSTER_H
#define STSD_CONFIG_CLUSTER_H

#include "base/buf.h"
#include "config/config.h"

/* The keys of the nodes: CONF_NODE_PREFIX followed by the id, 1..CONF_CLUSTER_MAX. */
#define CONF_NODE_PREFIX "stsd.cluster.node."

/* Whether value (already trimmed) is "RAFT_HOST:PORT http(s)://HOST:PORT[/]". Returns 0,
 * or -1 with why it is not in err (without the key's name: the caller puts it first). */
int conf_cluster_node_check(const char *value, buf *err);

/* The checks between the cluster's keys: stsd.cluster.self names a node that is set,
 * nodes are set only with stsd.cluster.self, no two nodes share a raft address or a URL.
 * Each node's own form is checked by the caller. Returns 0, or -1 with a message naming
 * the key in err. */
int conf_cluster_validate(const config *c, buf *err);

#endif
