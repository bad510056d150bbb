/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_meet.h - meeting points: BARRIER (arrivals parked until PARTIES of them are there),
 * OPEN (a barrier opened by hand) and BARRIERS (the listing). Private to cmd/. */
#ifndef STSD_CMD_MEET_H
#define STSD_CMD_MEET_H

#include "cmd/command.h"

void cmd_barrier(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_open(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_barriers(const cmd_server *srv, const params *p, cmd_result *r);

#endif
