/* SPDX-License-Identifier: Apache-2.0 */
/* command.h - the STS commands: one table that says everything about each command (its
 * handler, flags, parameters and help), and the dispatcher that runs the checks every
 * command shares. Handlers speak in results, never in HTML. */
#ifndef STSD_COMMAND_H
#define STSD_COMMAND_H

#include <stddef.h>
#include <sys/socket.h>

#include "base/buf.h"
#include "config/config.h"
#include "cmd/params.h"
#include "cmd/result.h"
#include "guard/auth.h"
#include "journal/journal.h"
#include "dataset/dataset.h"
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
    auth *auth;           /* tokens, roles, disabled commands (NULL: none) */
} cmd_server;

/* One request as the HTTP edge hands it over: what dispatch needs to decide it. */
typedef struct cmd_request {
    const char *path;             /* decoded, e.g. "/sts/READ" */
    size_t path_len;
    cmd_method method;
    const params *prm;
    const struct sockaddr *addr;  /* the client's address, NULL if unknown */
    socklen_t addr_len;
    const char *authorization;    /* the Authorization header, NULL if absent */
    const char *origin;           /* Origin, Sec-Fetch-Site, X-STS-UI (CSRF), or NULL */
    const char *sec_fetch_site;
    const char *ui_header;
} cmd_request;

typedef void (*cmd_handler)(const cmd_server *srv, const params *p, cmd_result *r);

/* What the dispatcher checks, from a command's row. */
enum {
    CMD_LOOKS   = 1 << 0,  /* changes nothing: a browser may send it without the dashboard's
                            * header (every other command needs it, guard/csrf) */
    CMD_CHANGES = 1 << 1,  /* always changes a list: refused while the journal is not
                            * writable (READ and FIND change one only with KEEP=FALSE: the
                            * store refuses those itself) */
    CMD_ADMIN   = 1 << 2,  /* the admin token only, once one is set */
    CMD_WAITS   = 1 << 3,  /* may park (TIMEOUT=) */
    CMD_JSON    = 1 << 4,  /* has its own JSON document with FORMAT=JSON */
    CMD_FORM    = 1 << 5,  /* GET and POST only: other methods get "unknown command" */
    CMD_ADMIN_PREFIX = 1 << 6,  /* with PREFIX= it is an admin command (DEL PREFIX=): a
                                 * change of many at once */
};

#define CMD_MAX_PARAMS 8

/* A parameter as the help page and stsd(8) show it. */
typedef struct cmd_param {
    const char *name;       /* NULL ends the list */
    const char *value;      /* how a value is written; alternatives "A|B", default first */
    int optional;
    const char *help;       /* one line */
} cmd_param;

typedef struct cmd_def {
    const char *name;
    cmd_handler run;
    unsigned flags;
    reply_field field;      /* where an OK's text goes in JSON */
    const char *summary;    /* one line */
    cmd_param params[CMD_MAX_PARAMS];
} cmd_def;

/* Runs request q, filling r (whose text is cleared first): the access checks (tokens,
 * disabled commands, CSRF: r->refused says which refused), FORMAT, the help page, the
 * method, the journal's state, then the command's handler. Never fails: errors become KO
 * results, and out of memory becomes a KO with our own message. */
void command_run(const cmd_server *srv, const cmd_request *q, cmd_result *r);

/* Number of commands in the table, and row i (NULL past the end). */
int command_count(void);
const cmd_def *command_at(int i);
/* The name of command i (NULL past the end): the metrics label. */
const char *command_name(int i);

/* The row of the command name[0..len) (exact: names are upper case), or NULL. */
const cmd_def *command_lookup(const char *name, size_t len);

/* 1 if name (len bytes, exact) is a command of the table, else 0. */
int command_exists(const char *name, size_t len);

/* The row of the command a path ("/sts/NAME") names, or NULL. */
const cmd_def *command_of_path(const char *path, size_t len);

/* Loads the files initFileAtStartup names (comma list, or a regex over the directory's
 * file names), logging each with its line count and time (cmd_files.c). Returns 0, or -1
 * if one could not be loaded (the message is logged). */
int command_init_at_startup(const cmd_server *srv);

#endif
