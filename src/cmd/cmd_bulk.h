/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_bulk.h - the commands on many lines or lists at once: ADDMULTI and DROP. Private to
 * cmd/ (the table in command.c names them). */
#ifndef STSD_CMD_BULK_H
#define STSD_CMD_BULK_H

#include "cmd/command.h"

void cmd_addmulti(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_drop(const cmd_server *srv, const params *p, cmd_result *r);

#endif
