/* cmd_keys.h - the commands on keys: SET, GET, DEL, KEYS, INCR, and settling counter
 * leases for ACK and RELEASE with NAME=. Private to cmd/ (the table in command.c names
 * them). */
#ifndef STSD_CMD_KEYS_H
#define STSD_CMD_KEYS_H

#include "cmd/command.h"

void cmd_set(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_get(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_del(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_keys(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_incr(const cmd_server *srv, const params *p, cmd_result *r);
/* ACK (release 0) or RELEASE (1) of the counter lease LEASE=id of key NAME. */
void cmd_key_settle(const cmd_server *srv, const params *p, cmd_result *r, int release);

#endif
