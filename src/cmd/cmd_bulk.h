/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_bulk.h - the commands on many lines or lists at once: ADDMULTI and DROP. Private to
 * cmd/ (the table in command.c names them). */
#ifndef STSD_CMD_BULK_H
#define STSD_CMD_BULK_H

#include <stddef.h>

#include "cmd/command.h"
#include "store/store.h"

void cmd_addmulti(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_drop(const cmd_server *srv, const params *p, cmd_result *r);

/* ADDMULTI's lines: LINES split at LF (a CR before it dropped, a last line without LF
 * kept), else the repeated LINE= in the order sent; spans into p's own memory, in *v,
 * which the caller frees. Returns their number, or SIZE_MAX on ENOMEM. */
size_t cmd_bulk_lines(const params *p, store_span **v);

#endif
