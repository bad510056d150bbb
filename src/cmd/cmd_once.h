/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_once.h - ONCE and DONE: run something once among many callers, and RUNS, the runs
 * in progress (cmd_once.c). */
#ifndef STSD_CMD_ONCE_H
#define STSD_CMD_ONCE_H

#include "cmd/command.h"

void cmd_once(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_done(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_runs(const cmd_server *srv, const params *p, cmd_result *r);

#endif
