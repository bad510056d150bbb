/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_lists.h - the commands on one list's lines: READ, READMULTI, ADD, FIND, LENGTH,
 * RESET and PEEK, and on its lent lines: ACK, RELEASE and LEASES. Private to cmd/ (the
 * table in command.c names them). */
#ifndef STSD_CMD_LISTS_H
#define STSD_CMD_LISTS_H

#include "cmd/command.h"

void cmd_read(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_readmulti(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_add(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_find(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_length(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_reset(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_peek(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_ack(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_release(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_leases(const cmd_server *srv, const params *p, cmd_result *r);

#endif
