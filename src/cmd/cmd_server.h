/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_server.h - the commands about the whole server: STATUS, CONFIG, INFO and STOP,
 * and its cluster: CLUSTER (the nodes as this node sees them), READINDEX (a follower's
 * question before it reads), CLUSTERADD and CLUSTERREMOVE. Private to cmd/ (the table in command.c names them). */
#ifndef STSD_CMD_SERVER_H
#define STSD_CMD_SERVER_H

#include "cmd/command.h"

void cmd_status(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_config(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_info(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_stop(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_cluster(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_read_index(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_cluster_add(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_cluster_remove(const cmd_server *srv, const params *p, cmd_result *r);

#endif
