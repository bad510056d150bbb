/* command_int.h - what the command table (command.c) and the commands that look without
 * changing anything (browse.c) share; private to them. */
#ifndef STSD_COMMAND_INT_H
#define STSD_COMMAND_INT_H

#include "server/command.h"

typedef void (*cmd_handler)(const cmd_server *srv, const params *p, cmd_result *r);

/* A KO with message msg; status is its HTTP status when answered in JSON. */
void command_ko(cmd_result *r, unsigned status, const char *msg);
/* The KO for store error rc concerning list name[0..len). */
void command_ko_store(cmd_result *r, store_rc rc, const char *name, size_t len);

/* FILENAME (len bytes, may hold NUL), or NULL with the reference's KO set when absent. */
const char *command_list_name(const params *p, cmd_result *r, size_t *len);

/* FIND_MODE: 0 SUBSTRING (the default), 1 EQUALS, 2 REGEX_FIND, 3 REGEX_MATCH; -1 with
 * the reference's KO set when invalid. */
int command_find_mode(const params *p, cmd_result *r);
/* The reference's KO for a pattern that does not compile. */
void command_ko_regex(cmd_result *r);

/* STATUS and CONFIG in JSON (browse.c). */
void browse_status_json(const cmd_server *srv, cmd_result *r);
void browse_config_json(const cmd_server *srv, cmd_result *r);

/* PEEK, FILES and INFO (browse.c). */
void browse_peek(const cmd_server *srv, const params *p, cmd_result *r);
void browse_files(const cmd_server *srv, const params *p, cmd_result *r);
void browse_info(const cmd_server *srv, const params *p, cmd_result *r);

#endif
