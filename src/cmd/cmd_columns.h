/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_columns.h - named columns: COLUMNS, and the fields of lines in READ's, READMULTI's
 * and FIND's answers. Private to cmd/. */
#ifndef STSD_CMD_COLUMNS_H
#define STSD_CMD_COLUMNS_H

#include "cmd/command.h"

void cmd_columns(const cmd_server *srv, const params *p, cmd_result *r);

/* FIELDS= of READ and FIND into *on (0 when absent). Returns 0, or -1 with the KO set. */
int cmd_fields_param(const params *p, cmd_result *r, int *on);

/* After a READ, READMULTI or FIND of list name answered OK in r: in JSON, each line's
 * fields beside it ("fields"); with headers (FIELDS=TRUE, one line), an X-STS-Field-<name>
 * header per column. Nothing for a list without columns; out of memory: a KO. */
void cmd_fields_answer(const cmd_server *srv, cmd_result *r, const char *name, int headers);

/* HEADER= and SEPARATOR= of INITFILE and LOAD: *sep the separator, or 0 without
 * HEADER=TRUE. Returns 0, or -1 with the KO set. */
int cmd_header_params(const params *p, cmd_result *r, char *sep);

#endif
