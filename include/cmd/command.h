/* command.h - the STS commands: one table from name to handler, and the dispatcher that
 * runs the checks every command shares. Handlers speak in results, never in HTML. */
#ifndef STSD_COMMAND_H
#define STSD_COMMAND_H

#include <stddef.h>

#include "base/buf.h"
#include "base/config.h"
#include "journal/journal.h"
#include "store/dataset.h"
#include "cmd/params.h"
#include "cmd/result.h"
#include "store/store.h"

typedef enum cmd_method { CMD_GET, CMD_POST, CMD_OTHER } cmd_method;


struct journal;

/* What handlers work on. */
typedef struct cmd_server {
    store *st;
    dataset *ds;
    const config *conf;
    park_lot *lot;        /* where handlers park requests that must wait (NULL: none) */
    struct journal *j;    /* NULL when the journal is off */
} cmd_server;

/* Runs the request for path (decoded, e.g. "/sts/READ") with method m and parameters p,
 * filling r (whose text is cleared first). Never fails: errors become KO results, and
 * out of memory becomes a KO with our own message. */
void command_run(const cmd_server *srv, const char *path, size_t path_len, cmd_method m,
                 const params *p, cmd_result *r);

/* Number of commands in the table, and the name of command i (NULL past the end). */
int command_count(void);
const char *command_name(int i);

/* 1 if name (len bytes, any case) is a command of the table, else 0. */
int command_exists(const char *name, size_t len);

/* Turns r, whose change could not be made durable, into the KO that says so. */
void command_not_durable(cmd_result *r);

/* Loads the files initFileAtStartup names (comma list, or a regex over the directory's
 * file names), logging each with its line count and time. Returns 0, or -1 if one
 * could not be loaded (the message is logged). */
int command_init_at_startup(const cmd_server *srv);

#endif
