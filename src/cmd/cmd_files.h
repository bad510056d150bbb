/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_files.h - the commands between lists and the dataset directory: INITFILE, LOAD,
 * SAVE and FILES. Private to cmd/ (the table in command.c names them). */
#ifndef STSD_CMD_FILES_H
#define STSD_CMD_FILES_H

#include "cmd/command.h"

void cmd_initfile(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_load(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_save(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_files(const cmd_server *srv, const params *p, cmd_result *r);

#endif
