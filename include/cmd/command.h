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
    struct audit *audit;  /* stsd.auditLog (NULL: off) */
    struct cluster *cluster; /* replicas (NULL: alone): set before serving, never changed */
    struct barrier_table *barriers; /* BARRIER (meet/barrier.h): not journaled, no list's */
    struct journal *view; /* a follower's read (CMD_VIEW): lists and keys are read from this
                           * journal's hot standby, held by journal_view_begin, not from st */
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
    int accept_json;              /* Accept strictly prefers application/json to text/html */
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
    CMD_REF     = 1 << 6,  /* one of the reference's 11 commands, whose plans expect its
                            * answers: Accept asks for JSON only with stsd.jsonByAccept, and
                            * an HTML KO is HTTP 200 unless stsd.koStatus */
    CMD_ADMIN_PREFIX = 1 << 7,  /* with PREFIX= it is an admin command (DEL PREFIX=): a
                                 * change of many at once */
    CMD_LOCAL   = 1 << 8,  /* in a cluster, answered by the node asked: never forwarded to
                            * the leader, no read fence (STOP, CLUSTER) */
    CMD_VIEW    = 1 << 9,  /* changes nothing and reads only lists and keys: a follower
                            * answers it from its hot standby after a ReadIndex round
                            * (stsd.cluster.followerReads), unless it waits (TIMEOUT=) */
    CMD_VIEW_PAGE = 1 << 10, /* the same, for its HTML answer only (its JSON document holds
                              * what only the leader knows: rates, waiters) */
    CMD_WAITS_ASKED = 1 << 11, /* CMD_WAITS only with TIMEOUT=: without it, answered at
                                * once (READ, READMULTI, FIND, GET, INCR) */
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
 * disabled commands, CSRF: r->refused says which refused), JSON or HTML (r->json: FORMAT,
 * else q->accept_json where it counts, command_json_by_accept), the help page, the
 * method, the journal's state, then the command's handler. Never fails: errors become KO
 * results, and out of memory becomes a KO with our own message. */
void command_run(const cmd_server *srv, const cmd_request *q, cmd_result *r);

/* command_run in two steps, for the HTTP edge of a cluster node, which decides between
 * them whether the request runs here or goes to the leader (its access checks are made
 * here either way: a bad token never costs the leader a failure counted against this
 * node's address). command_admit resets r, sets r->cmd and r->json (Accept, FORMAT) and
 * runs the access checks; it returns 0 when the request may run, 1 when r holds its
 * answer already (a refusal: r->refused; or a bad FORMAT's KO). command_exec runs a
 * request command_admit let through, with the same r. */
int command_admit(const cmd_server *srv, const cmd_request *q, cmd_result *r);
void command_exec(const cmd_server *srv, const cmd_request *q, cmd_result *r);

/* 1 if the Accept header may ask command c (NULL: the help page or an unknown command,
 * answered as the reference answers them) for JSON under configuration conf. */
int command_json_by_accept(const config *conf, const cmd_def *c);

/* The HTTP status of KO result r answered in HTML: its JSON status (400 when it has none)
 * for a command beyond the reference's, 200 for the reference's 11 (and for no command)
 * unless stsd.koStatus. conf may be NULL (defaults). */
unsigned command_html_ko_status(const config *conf, const cmd_result *r);

/* The audit log's lines for the answer r about to be sent for a request with parameters p
 * from addr (addr_len bytes; NULL if unknown): one per line handed out or changed, when
 * srv->audit is on and r is an OK of a command that hands out or changes data (the rule
 * is in cmd_audit.c and docs/audit.md). Called by the HTTP edge once r is final, parked
 * or not. Never fails the request: a line that cannot be made is counted as dropped. */
void command_audit(const cmd_server *srv, const params *p, const cmd_result *r,
                   const struct sockaddr *addr, socklen_t addr_len);

/* The audit log's line for a line lease that ended at its deadline (the store's hook of
 * expiries, store.h): command LEASE_EXPIRED, the list, the line put back, the lease and
 * its owner; no client, no token. Nothing when srv->audit is off. */
void command_audit_expired(const cmd_server *srv, const char *name, const char *line,
                           size_t len, uint64_t id, const char *owner, size_t owner_len);

/* Number of commands in the table, and row i (NULL past the end). */
int command_count(void);
const cmd_def *command_at(int i);
/* The name of command i (NULL past the end): the metrics label. */
const char *command_name(int i);
/* Whether command i (from cmd_result.cmd; -1: none) is CMD_LOCAL. */
int command_is_local(int i);
/* Whether a follower may answer command i with parameters p (and json, the result's) from
 * its hot standby: CMD_VIEW, or CMD_VIEW_PAGE unless in_json, and no TIMEOUT. */
int command_viewable(int i, const params *p, int in_json);
/* Whether a follower may pass command i with parameters p to the leader among others, in
 * one batch (http_forward.h): answered at once (no CMD_WAITS, or CMD_WAITS_ASKED without
 * TIMEOUT), neither CMD_ADMIN (long work: INITFILE, SAVE, LOAD) nor CMD_LOCAL. The
 * leader asks it again of each request of a batch. */
int command_batchable(int i, const params *p);

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
