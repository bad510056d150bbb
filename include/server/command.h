/* command.h - the STS commands: one table from name to handler, and the dispatcher that
 * runs the checks every command shares. Handlers speak in results, never in HTML. */
#ifndef STSD_COMMAND_H
#define STSD_COMMAND_H

#include <stddef.h>

#include "base/buf.h"
#include "base/config.h"
#include "store/dataset.h"
#include "server/params.h"
#include "store/store.h"

typedef enum cmd_method { CMD_GET, CMD_POST, CMD_OTHER } cmd_method;

typedef enum reply_kind {
    REPLY_OK,       /* text is the payload */
    REPLY_KO,       /* text is the message after "Error : " */
    REPLY_LINES,    /* text holds lines (store_next_line format): READMULTI's page */
    REPLY_LISTING,  /* text holds entries (same format): STATUS's and CONFIG's page */
    REPLY_HELP,     /* the help page */
} reply_kind;

typedef struct cmd_result {
    reply_kind kind;
    buf text;       /* owned; reused across requests by whoever owns the result */
    int stop;       /* STOP: shut the server down once this answer is sent */
} cmd_result;

/* What handlers work on. */
typedef struct cmd_server {
    store *st;
    dataset *ds;
    const config *conf;
} cmd_server;

/* Runs the request for path (decoded, e.g. "/sts/READ") with method m and parameters p,
 * filling r (whose text is cleared first). Never fails: errors become KO results, and
 * out of memory becomes a KO with our own message. */
void command_run(const cmd_server *srv, const char *path, size_t path_len, cmd_method m,
                 const params *p, cmd_result *r);

/* Loads the files initFileAtStartup names (comma list, or a regex over the directory's
 * file names), logging each with its line count and time. Returns 0, or -1 if one
 * could not be loaded (the message is logged). */
int command_init_at_startup(const cmd_server *srv);

#endif
