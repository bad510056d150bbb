/* SPDX-License-Identifier: Apache-2.0 */
/* cluster_members.h - the nodes' table: ids, raft addresses, URLs (cluster_members.c). */
#ifndef STSD_CLUSTER_MEMBERS_H
#define STSD_CLUSTER_MEMBERS_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "cluster_int.h"

/* The table as configured (stsd.cluster.node.N). Returns 0, or -1 with err set. */
int cluster_members_from_config(cluster *c, const config *conf, buf *err);
/* Node id's URL into url. Returns 0, or -1 if no such node. Takes the mutex. */
int cluster_member_url(cluster *c, unsigned id, char *url, size_t cap);
/* The table as text, one "ID RAFT URL" line per node, appended to out. Takes the mutex. */
void cluster_members_encode(cluster *c, buf *out);
/* Replaces the table by one from cluster_members_encode (a committed CLUSTER_NODES
 * entry, or a snapshot's). Returns 0, or -1 if malformed (the table unchanged). */
int cluster_members_apply(cluster *c, const uint8_t *data, size_t len);

#endif
