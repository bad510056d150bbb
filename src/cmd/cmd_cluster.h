/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_cluster.h - CLUSTER: the nodes of a cluster as this node sees them. */
#ifndef STSD_CMD_CLUSTER_H
#define STSD_CMD_CLUSTER_H

#include "cmd/command.h"

void cmd_cluster(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_cluster_add(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_cluster_remove(const cmd_server *srv, const params *p, cmd_result *r);

#endif
