/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_leases.h - the commands on lent lines: ACK, RELEASE and LEASES. Private to cmd/
 * (the table in command.c names them). */
#ifndef STSD_CMD_LEASES_H
#define STSD_CMD_LEASES_H

#include "cmd/command.h"

void cmd_ack(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_release(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_leases(const cmd_server *srv, const params *p, cmd_result *r);

#endif
