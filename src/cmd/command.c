/* SPDX-License-Identifier: Apache-2.0 */
/* command.c - the command table, the one place that says what each command is, and the
 * dispatcher that runs the checks they share before their handler. */
#include "cmd/command.h"

#include <string.h>

#include "cmd_answer.h"
#include "cmd_bulk.h"
#include "cmd_columns.h"
#include "cmd_files.h"
#include "cmd_keys.h"
#include "cmd_lists.h"
#include "cmd_meet.h"
#include "cmd_once.h"
#include "cmd_param.h"
#include "cmd_server.h"
#include "guard/csrf.h"

/* Parameters several commands share, as the help page shows them. */
#define P_FILENAME {"FILENAME", "file.csv", 0, "the list (and for files, the file's name)"}
#define P_LINE     {"LINE", "text", 0, "the line, as stored (bytes, no line break)"}
#define P_KEEP     {"KEEP", "TRUE|FALSE", 1, "TRUE puts the line back at the tail; " \
                    "FALSE takes it"}
#define P_TIMEOUT  {"TIMEOUT", "seconds", 1, "wait up to this long (stsd.maxWait) for the " \
                    "list to serve the request whole; 0 answers at once"}
#define P_LEASE    {"LEASE", "seconds", 1, "with KEEP=FALSE: lend the lines, which come " \
                    "back by themselves unless ACKed in time (ids in X-STS-Lease)"}
#define P_FIND_MODE {"FIND_MODE", "SUBSTRING|EQUALS|REGEX_FIND|REGEX_MATCH", 1, \
                     "contains, equals, or a pcre2 regex found anywhere / matching whole"}
#define P_SETTLE_LINE  {"LINE", "text", 1, "settle the oldest lease of this exact line"}
#define P_SETTLE_LEASE {"LEASE", "id", 1, "settle this lease (16 hex digits from X-STS-Lease)"}
#define P_SETTLE_NAME  {"NAME", "key", 1, "instead of FILENAME: settle the counter lease " \
                        "LEASE of this key (RELEASE undoes its increment, ACK keeps it)"}
#define P_NAME     {"NAME", "key", 0, "the key (the rules of FILENAME)"}
#define P_IF_VERSION {"IF_VERSION", "n", 1, "only if the key's version is n (0: only if " \
                      "it does not exist); else a KO saying its version (409)"}
#define P_SETTLE_OWNER {"OWNER", "name", 1, "settle the line this owner holds (alone: no " \
                        "LINE or LEASE)"}
#define P_HEADER   {"HEADER", "FALSE|TRUE", 1, "TRUE: the first line names the columns " \
                    "(COLUMNS; docs/columns.md)"}
#define P_SEPARATOR {"SEPARATOR", ",", 1, "with HEADER=TRUE: the one byte between fields " \
                     "(RFC 4180 quoting)"}
#define P_FIELDS   {"FIELDS", "FALSE|TRUE", 1, "TRUE: one X-STS-Field-<column> header per " \
                    "column of the line, percent-encoded"}
#define P_BARRIER  {"NAME", "b", 0, "the barrier (1 to 1024 bytes), created at its first arrival"}

/* One row per command: a new command is a row here and a handler in its family's file
 * (cmd_lists, cmd_files, cmd_server, cmd_leases, cmd_keys, cmd_meet, cmd_once). The help
 * page (GET /sts/), stsd(8), the access checks and the metrics labels all come from these
 * rows. CMD_REF marks the reference's 11 commands, and only them: it keeps their answers
 * the reference's (HTML whatever Accept says, KO with HTTP 200) unless a key says not. */
static const cmd_def commands[] = {
    {"INITFILE", cmd_initfile, CMD_REF | CMD_CHANGES | CMD_ADMIN, FIELD_COUNT,
     "Load a file of the dataset directory as a list (one line per element), replacing a "
     "list of that name. Answers the number of lines.",
     {P_FILENAME, P_HEADER, P_SEPARATOR}},
    {"READ", cmd_read, CMD_REF | CMD_WAITS | CMD_WAITS_ASKED, FIELD_LINE,
     "Take a line from the head, the tail or anywhere.",
     {P_FILENAME, {"READ_MODE", "FIRST|LAST|RANDOM", 1, "where the line is taken"}, P_KEEP,
      P_TIMEOUT, P_LEASE,
      {"OWNER", "name", 1, "with KEEP=FALSE: 1 to 128 bytes; the first READ lends a line "
       "to this owner, every later one answers that same line (LEASE= renews it; with "
       "TIMEOUT an owner holding none waits for one)"}, P_FIELDS}},
    {"READMULTI", cmd_readmulti, CMD_REF | CMD_WAITS | CMD_WAITS_ASKED, FIELD_MESSAGE,
     "Take NB_LINES lines at once, one per <br /> line.",
     {P_FILENAME, {"NB_LINES", "n", 0, "how many lines (1 or more)"},
      {"READ_MODE", "FIRST|LAST|RANDOM", 1, "where the lines are taken"}, P_KEEP, P_TIMEOUT,
      P_LEASE}},
    {"ADD", cmd_add, CMD_REF | CMD_CHANGES | CMD_FORM, FIELD_MESSAGE,
     "Insert a line at the head or the tail, creating the list. GET or POST only.",
     {P_FILENAME, P_LINE, {"ADD_MODE", "FIRST|LAST", 1, "where the line goes"},
      {"UNIQUE", "FALSE|TRUE|column", 1, "TRUE refuses a line the list already holds; a "
       "column's name, a line whose field of that column it holds"}}},
    {"ADDMULTI", cmd_addmulti, CMD_CHANGES | CMD_JSON | CMD_FORM, FIELD_COUNT,
     "Insert many lines at once, all or none, creating the list: a KO names the first line "
     "refused (line break inside, too long, already there with UNIQUE=TRUE). Answers the "
     "number added (JSON: added). GET or POST only.",
     {P_FILENAME, {"LINES", "text", 1, "the lines, one per line (LF or CRLF; a last line "
      "without a line break counts): a text/plain POST body, or this field"},
      {"LINE", "text", 1, "instead of LINES: one line per LINE=, repeated, in order"},
      {"ADD_MODE", "FIRST|LAST", 1, "where the lines go, as that many ADDs in order would "
       "put them"},
      {"UNIQUE", "FALSE|TRUE", 1, "TRUE refuses them all if one is in the list already or "
       "twice among them"}}},
    {"FIND", cmd_find, CMD_REF | CMD_WAITS | CMD_WAITS_ASKED | CMD_FORM, FIELD_LINE,
     "The first line that matches LINE; KEEP=TRUE moves it to the tail, KEEP=FALSE removes "
     "it. GET or POST only.",
     {P_FILENAME, P_LINE, P_FIND_MODE, P_KEEP, P_TIMEOUT, P_LEASE,
      {"COLUMN", "name", 1, "LINE is the whole value of this column (EQUALS, through the "
       "column's index)"}, P_FIELDS}},
    {"LENGTH", cmd_length, CMD_REF | CMD_LOOKS | CMD_VIEW, FIELD_LENGTH,
     "The number of lines of a list.",
     {P_FILENAME}},
    {"STATUS", cmd_status, CMD_REF | CMD_LOOKS | CMD_JSON | CMD_VIEW_PAGE, FIELD_MESSAGE,
     "Every list and its length, sorted by name (in JSON: also on loan, waiters, rates, "
     "time to empty).",
     {{0}}},
    {"SAVE", cmd_save, CMD_REF | CMD_ADMIN | CMD_JSON, FIELD_COUNT,
     "Write the list to the dataset directory, atomically. Answers the number of lines; "
     "the header X-STS-File names the file written.",
     {P_FILENAME, {"ADD_TIMESTAMP", "true|false", 1, "name the file "
      "yyyyMMddTHHhmmmsss.file.csv, never one that exists: a second SAVE in that second "
      "writes yyyyMMddTHHhmmmsss-2.file.csv (default: jmeterPlugin.sts.addTimestamp)"}}},
    {"RESET", cmd_reset, CMD_REF | CMD_CHANGES | CMD_ADMIN, FIELD_MESSAGE,
     "Empty the list (it stays, with 0 lines).",
     {P_FILENAME}},
    {"CONFIG", cmd_config, CMD_REF | CMD_LOOKS | CMD_ADMIN | CMD_JSON, FIELD_MESSAGE,
     "The configuration in effect.",
     {{0}}},
    {"STOP", cmd_stop, CMD_REF | CMD_ADMIN | CMD_LOCAL, FIELD_MESSAGE,
     "Answer OK, finish the requests in flight, answer every waiter, and exit.",
     {{0}}},
    {"PEEK", cmd_peek, CMD_LOOKS | CMD_JSON | CMD_VIEW, FIELD_MESSAGE,
     "Lines by position (0 is the head) without taking them; with MATCH, only the matching "
     "ones. next_offset says where the next page starts.",
     {P_FILENAME, {"OFFSET", "0", 1, "the first position"},
      {"LIMIT", "100", 1, "at most this many lines (1 to 1000)"},
      {"MATCH", "text", 1, "only lines that match, as FIND would"}, P_FIND_MODE}},
    {"FILES", cmd_files, CMD_LOOKS | CMD_JSON, FIELD_MESSAGE,
     "The files INITFILE can load, with their size and modification time.",
     {{0}}},
    {"INFO", cmd_info, CMD_LOOKS | CMD_JSON, FIELD_MESSAGE,
     "Version, uptime, connections, number of lists and the journal's state.",
     {{0}}},
    {"CLUSTER", cmd_cluster, CMD_LOOKS | CMD_JSON | CMD_LOCAL, FIELD_MESSAGE,
     "The nodes of the cluster as this node sees them: each one's id, URL and role, the "
     "leader, this node's term, commit and applied index, each follower's lag (asked of "
     "the leader), and each node's health: up or unreachable as the leader judges it, "
     "since when, and how long ago it was heard from where this node knows. Answered by "
     "the node asked, never forwarded.",
     {{0}}},
    {"READINDEX", cmd_read_index, CMD_LOOKS | CMD_JSON, FIELD_MESSAGE,
     "The raft index the leader has applied, answered once a record appended after the "
     "question is committed (proof that it still leads): a follower that has applied as "
     "far answers a read itself (stsd.cluster.followerReads). Forwarded to the leader.",
     {{0}}},
    {"CLUSTERADD", cmd_cluster_add, CMD_ADMIN, FIELD_MESSAGE,
     "Add a node to the cluster (on the leader): its URL goes to every node, then raft "
     "adds it as a spare and makes it a voter once it has caught up; answered then. Start "
     "the node first, with stsd.cluster.join=true. stsctl: cluster add NODE RAFT URL.",
     {{"NODE", "4", 0, "the new node's id, 1 to 9, one no node has"},
      {"RAFT", "host:port", 0, "its raft address, as in stsd.cluster.node.N"},
      {"URL", "http://host:port", 0, "its HTTP URL, as in stsd.cluster.node.N"}}},
    {"CLUSTERREMOVE", cmd_cluster_remove, CMD_ADMIN, FIELD_MESSAGE,
     "Remove a node from the cluster (on the leader), a dead one or one to retire; stop "
     "it then. stsctl: cluster remove NODE.",
     {{"NODE", "3", 0, "the node's id"}}},
    {"LOAD", cmd_load, CMD_CHANGES | CMD_ADMIN, FIELD_COUNT,
     "Like INITFILE, with the file sent in the request (multipart part FILE, or a "
     "text/csv body) instead of read from the dataset directory.",
     {P_FILENAME, {"FILE", "bytes", 0, "the file's content"}, P_HEADER, P_SEPARATOR}},
    {"ACK", cmd_ack, CMD_CHANGES, FIELD_MESSAGE,
     "Settle a lease: the line taken with LEASE is done with and never comes back (with "
     "NAME: the counter's increment is kept for good).",
     {P_FILENAME, P_SETTLE_LINE, P_SETTLE_LEASE, P_SETTLE_OWNER, P_SETTLE_NAME}},
    {"RELEASE", cmd_release, CMD_CHANGES, FIELD_MESSAGE,
     "Settle a lease by putting its line back at the head of its list now (with NAME: "
     "by undoing the counter's increment, waking its waiters; or, for a run of ONCE, by "
     "giving the run up to the first waiter or the next caller).",
     {P_FILENAME, P_SETTLE_LINE, P_SETTLE_LEASE, P_SETTLE_OWNER, P_SETTLE_NAME}},
    {"LEASES", cmd_leases, CMD_LOOKS, FIELD_LENGTH,
     "The number of lines of the list on loan (owned lines included).",
     {P_FILENAME}},
    {"SET", cmd_set, CMD_CHANGES | CMD_JSON | CMD_FORM, FIELD_MESSAGE,
     "Set a key's value; answers its new version (1 for a new key, then 1 more at each "
     "change). Drops the key's counter leases. GET or POST only.",
     {P_NAME, {"VALUE", "text", 0, "the value (bytes, up to stsd.maxLineSize)"},
      P_IF_VERSION, {"TTL", "seconds", 1, "the key disappears this long after (up to 30 "
       "days); without it, a SET ends the key's TTL"}}},
    {"GET", cmd_get, CMD_LOOKS | CMD_WAITS | CMD_WAITS_ASKED | CMD_JSON | CMD_VIEW, FIELD_MESSAGE,
     "A key's value, its version in X-STS-Version. With VERSION and TIMEOUT: waits while "
     "the version is still VERSION, then answers the state (also at the timeout).",
     {P_NAME, {"VERSION", "n", 1, "wait while the key's version is n (0: while it does "
      "not exist)"},
      {"TIMEOUT", "seconds", 1, "with VERSION: wait up to this long (stsd.maxWait)"}}},
    {"DEL", cmd_del, CMD_CHANGES | CMD_JSON | CMD_ADMIN_PREFIX, FIELD_MESSAGE,
     "Remove a key (and its counter leases); its watchers wake. With PREFIX (the admin "
     "token, once one is set): every key whose name starts with it; answers how many "
     "(JSON: deleted).",
     {{"NAME", "key", 0, "the key (the rules of FILENAME)"}, P_IF_VERSION,
      {"PREFIX", "text", 1, "instead of NAME: every key whose name starts with it (not "
       "empty)"}}},
    {"EXPIRE", cmd_expire, CMD_CHANGES | CMD_ADMIN | CMD_JSON, FIELD_MESSAGE,
     "Make a key disappear TTL seconds from now (its version unchanged); its watchers wake "
     "then as on DEL. A later SET without TTL ends it.",
     {P_NAME, {"TTL", "seconds", 0, "how long from now (0.001 to 2592000: 30 days)"}}},
    {"KEYS", cmd_keys, CMD_LOOKS | CMD_JSON | CMD_VIEW_PAGE, FIELD_MESSAGE,
     "Every key as name = value, sorted by name (in JSON: with versions).",
     {{"PREFIX", "text", 1, "only the keys whose name starts with it"}}},
    {"INCR", cmd_incr, CMD_CHANGES | CMD_WAITS | CMD_WAITS_ASKED | CMD_JSON, FIELD_MESSAGE,
     "Add BY to a key's value (absent: 0; signed 64-bit) and answer the new value. Outside "
     "[MIN, MAX] it is a KO (409), or with TIMEOUT it waits its turn until it fits.",
     {P_NAME, {"BY", "1", 1, "the increment (may be negative)"},
      {"MIN", "n", 1, "the least value the result may have"},
      {"MAX", "n", 1, "the greatest value the result may have"},
      {"TIMEOUT", "seconds", 1, "wait up to this long (stsd.maxWait) for the result to "
       "fit, first come first served; then a KO (408)"},
      {"LEASE", "seconds", 1, "lend the increment: undone at the deadline unless ACKed "
       "(its id in X-STS-Lease; RELEASE undoes it now)"},
      {"TTL", "seconds", 1, "the key disappears this long after (up to 30 days; not with "
       "LEASE); without it, the key's TTL stays"}}},
    {"BARRIER", cmd_barrier, CMD_WAITS | CMD_JSON, FIELD_MESSAGE,
     "Wait at a cyclic barrier until PARTIES arrivals of this generation are there, then "
     "all are answered at once: the generation (0, 1, ...), and X-STS-Arrival: the place "
     "in arrival order (1 to PARTIES). Clients that have gone do not count.",
     {P_BARRIER, {"PARTIES", "n", 0, "arrivals that open the barrier (1 to stsd.maxParties); "
      "every arrival of a generation must say the same"},
      {"TIMEOUT", "seconds", 1, "wait up to this long (0 to stsd.maxWait, its value by "
       "default); 0: open now or time out now"},
      {"ON_TIMEOUT", "KO|RELEASE", 1, "at the timeout, KO: this arrival leaves with a KO "
       "(408); RELEASE: the generation opens for everyone waiting"}}},
    {"ONCE", cmd_once, CMD_WAITS | CMD_JSON, FIELD_MESSAGE,
     "Run something once among many callers: NAME is done when key NAME exists (DONE, its "
     "value in JSON and, percent-encoded, in X-STS-Value). Else the first caller gets RUN and a run lease in X-STS-Lease; the "
     "others wait for DONE, or for RUN if the run expires or is RELEASEd (NAME=, LEASE=). "
     "The runner keeps its run going with RUN=.",
     {P_NAME, {"TIMEOUT", "seconds", 1, "wait up to this long (0 to stsd.maxWait, its value "
      "by default) while another caller runs; then a KO (408)"},
      {"LEASE", "60", 1, "seconds the run may take (up to stsd.maxLease); past it the "
       "first waiter, or the next caller, runs instead"},
      {"RUN", "id", 1, "renew the run of this lease id instead: it may take LEASE seconds "
       "from now (answers RUN; a KO (409) when the run is no longer its)"},
      {"TTL", "seconds", 1, "the run's DONE makes key NAME disappear this long after, so "
       "that a later run runs again (DONE's own TTL wins)"}}},
    {"DONE", cmd_done, CMD_CHANGES | CMD_JSON | CMD_FORM, FIELD_MESSAGE,
     "End a run that ONCE gave: sets key NAME to VALUE; every waiter and later caller of "
     "ONCE gets DONE. A lease that is not the run's is a KO (409). GET or POST only.",
     {P_NAME, {"LEASE", "id", 0, "the run's lease, as X-STS-Lease gave it"},
      {"VALUE", "text", 1, "the result, as key NAME's value (empty by default)"},
      {"TTL", "seconds", 1, "key NAME disappears this long after (default: ONCE's TTL, "
       "else never), so that the next run runs again"}}},
    {"RUNS", cmd_runs, CMD_LOOKS | CMD_JSON, FIELD_MESSAGE,
     "Every run of ONCE in progress, sorted by name: the time its lease has left and the "
     "ONCE callers waiting for it.",
     {{"PREFIX", "text", 1, "only the runs whose name starts with it"}}},
    {"OPEN", cmd_open, CMD_ADMIN, FIELD_MESSAGE,
     "Open a barrier now for everyone waiting at it (\"released\":\"hand\"). Answers how "
     "many were released.",
     {P_BARRIER}},
    {"DROP", cmd_drop, CMD_CHANGES | CMD_ADMIN | CMD_JSON, FIELD_COUNT,
     "Delete a list, or every list whose name starts with PREFIX: lines, leases, owners and "
     "waiters (they get a KO, 410 in JSON). Answers the number dropped (JSON: dropped); a "
     "later ACK of a lease of it finds none.",
     {{"FILENAME", "file.csv", 1, "the list (a KO, 404, when there is none)"},
      {"PREFIX", "text", 1, "instead of FILENAME: every list whose name starts with it "
       "(not empty)"}}},
    {"BARRIERS", cmd_barriers, CMD_LOOKS | CMD_JSON, FIELD_MESSAGE,
     "Every barrier, sorted by name: its parties, arrivals waiting now and generation.",
     {{0}}},
    {"COLUMNS", cmd_columns, CMD_LOOKS | CMD_JSON | CMD_VIEW, FIELD_MESSAGE,
     "The names of a list's columns (INITFILE HEADER=TRUE), as a header line; none: an "
     "empty answer.",
     {P_FILENAME}},
};
#define N_COMMANDS ((int)(sizeof commands / sizeof commands[0]))

int command_count(void)
{
    return N_COMMANDS;
}

const cmd_def *command_at(int i)
{
    return i >= 0 && i < N_COMMANDS ? &commands[i] : NULL;
}

const char *command_name(int i)
{
    return i >= 0 && i < N_COMMANDS ? commands[i].name : NULL;
}

int command_is_local(int i)
{
    return i >= 0 && i < N_COMMANDS && (commands[i].flags & CMD_LOCAL);
}

int command_viewable(int i, const params *p, int in_json)
{
    if (i < 0 || i >= N_COMMANDS)
        return 0;
    unsigned f = commands[i].flags;
    if (!(f & CMD_VIEW) && !((f & CMD_VIEW_PAGE) && !in_json))
        return 0;
    /* A wait is the leader's: its watchers and waiters live there. */
    return params_get(p, PARAM_TIMEOUT, NULL) == NULL;
}

int command_batchable(int i, const params *p)
{
    if (i < 0 || i >= N_COMMANDS)
        return 0;
    unsigned f = commands[i].flags;
    if (f & (CMD_ADMIN | CMD_LOCAL))
        return 0;
    if (!(f & CMD_WAITS))
        return 1;
    return (f & CMD_WAITS_ASKED) && params_get(p, PARAM_TIMEOUT, NULL) == NULL;
}

const cmd_def *command_lookup(const char *name, size_t len)
{
    for (int i = 0; i < N_COMMANDS; i++)
        if (strlen(commands[i].name) == len && memcmp(commands[i].name, name, len) == 0)
            return &commands[i];
    return NULL;
}

int command_exists(const char *name, size_t len)
{
    return command_lookup(name, len) != NULL;
}

const cmd_def *command_of_path(const char *path, size_t len)
{
    if (len <= 5 || memcmp(path, "/sts/", 5) != 0)
        return NULL;
    return command_lookup(path + 5, len - 5);
}

static int is_help_path(const char *path, size_t len)
{
    return (len == 4 && memcmp(path, "/sts", 4) == 0) ||
           (len == 5 && memcmp(path, "/sts/", 5) == 0);
}

static void result_reset(cmd_result *r)
{
    buf_clear(&r->text);
    buf_clear(&r->headers);
    r->stop = 0;
    r->park = NULL;
    r->lsn = 0;
    r->kind = REPLY_OK;
    r->status = 0;
    r->field = FIELD_MESSAGE;
    r->cmd = -1;
    r->refused = REFUSED_NONE;
    r->verdict = AUTH_OK;
    r->who[0] = '\0';
}

_Static_assert(sizeof(((cmd_result *)0)->who) == AUTH_NAME_SIZE, "cmd_result.who");

/* The access checks of every request, command or not: tokens and roles, disabled
 * commands, then CSRF for what may change state. Returns 1 with r the refusal. */
static int refused(const cmd_server *srv, const cmd_request *q, const cmd_def *c,
                   cmd_result *r)
{
    if (srv->auth && auth_active(srv->auth)) {
        size_t tlen = 0;
        const char *tok = params_get(q->prm, PARAM_TOKEN, &tlen);
        int admin = c && ((c->flags & CMD_ADMIN) ||
                          ((c->flags & CMD_ADMIN_PREFIX) && params_get(q->prm, PARAM_PREFIX,
                                                                       NULL)));
        auth_verdict v = auth_check_named(srv->auth, q->addr, q->addr_len,
                                          c ? c->name : NULL, admin,
                                          q->authorization, tok, tlen, r->who);
        if (v != AUTH_OK) {
            cmd_ko(r, auth_status(v), auth_message(v));
            r->refused = REFUSED_AUTH;
            r->verdict = v;
            return 1;
        }
    }
    if (c && !(c->flags & CMD_LOOKS) &&
        csrf_refuses(q->origin, q->sec_fetch_site, q->ui_header)) {
        cmd_ko(r, CSRF_STATUS, CSRF_BODY);
        r->refused = REFUSED_CSRF;
        return 1;
    }
    return 0;
}

int command_json_by_accept(const config *conf, const cmd_def *c)
{
    return (c && !(c->flags & CMD_REF)) || (conf && conf->json_by_accept);
}

unsigned command_html_ko_status(const config *conf, const cmd_result *r)
{
    const cmd_def *c = command_at(r->cmd);
    /* A replica's 503s (no leader, outcome unknown, leader changed) are no answer of
     * the reference's: a sampler must see them fail, and a client retry them. */
    if (r->status == 503 && conf && conf->cluster_self)
        return 503;
    if ((!c || (c->flags & CMD_REF)) && !(conf && conf->ko_status))
        return 200;
    return r->status ? r->status : 400;
}

int command_admit(const cmd_server *srv, const cmd_request *q, cmd_result *r)
{
    result_reset(r);
    const cmd_def *c = command_of_path(q->path, q->path_len);
    /* Known before FORMAT is read: a bad FORMAT is a KO of this command, with its
     * status in HTML too. */
    if (c && !((c->flags & CMD_FORM) && q->method == CMD_OTHER))
        r->cmd = (int)(c - commands);
    r->json = q->accept_json && command_json_by_accept(srv->conf, c);
    return refused(srv, q, c, r) || cmd_format_param(q->prm, r) != 0;
}

void command_run(const cmd_server *srv, const cmd_request *q, cmd_result *r)
{
    if (command_admit(srv, q, r) == 0)
        command_exec(srv, q, r);
}

void command_exec(const cmd_server *srv, const cmd_request *q, cmd_result *r)
{
    const cmd_def *c = command_at(r->cmd);
    if (is_help_path(q->path, q->path_len)) {
        r->kind = REPLY_HELP;
        return;
    }
    if (r->cmd < 0) {
        cmd_ko(r, 404, MSG_UNKNOWN);
        /* JSON is stsd's own: it may say which, and where the commands are listed. */
        if (r->json) {
            cmd_ko_format(r, "unknown command \"%.*s\": GET /sts/ lists the commands !",
                          (int)(q->path_len > 64 ? 64 : q->path_len), q->path);
            r->status = 404;
        }
        return;
    }
    r->field = c->field;
    if ((c->flags & CMD_CHANGES) && srv->j && journal_broken(srv->j))
        return cmd_ko(r, 503, MSG_JOURNAL);
    c->run(srv, q->prm, r);
    /* An append that failed part way leaves a short page: say so instead. */
    if (r->text.oom)
        cmd_ko(r, 503, MSG_NOMEM);
}
