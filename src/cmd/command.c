/* command.c - the STS command table and its handlers. */
#include "cmd/command.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/clock.h"
#include "base/log.h"
#include "command_int.h"
#include "cmd/park.h"
#include "store/rx.h"

/* The reference's messages, byte for byte (typos included: test plans match them). */
#define MSG_UNKNOWN        "unknown command !"
#define MSG_NO_FILENAME    "FILENAME parameter was missing !"
#define MSG_NO_LINE        "LINE parameter was missing !"
#define MSG_ILLEGAL        "Illegal character found !"
#define MSG_TOO_LONG       "Maximum size reached (128) !"
#define MSG_FILE_NOT_FOUND "file not found !"
#define MSG_NOT_LOADED     " not loaded yet !"
#define MSG_NO_MORE_LINE   "No more line !"
#define MSG_READ_MODE      "READ_MODE value has to be FIRST, LAST or RANDOM !"
#define MSG_KEEP           "KEEP value has to be TRUE or FALSE !"
#define MSG_FIND_KEEP      "KEEP has to be TRUE or FALSE !"
#define MSG_ADD_MODE       "ADD_MODE value has to be FIRST or LAST !"
#define MSG_UNIQUE         "UNIQUE value has to be TRUE or FALSE !"
#define MSG_EXISTS         "ENTRY already exists !"
#define MSG_EMPTY_FIND     "Cant't find empty line !"
#define MSG_FIND_MODE      "FIND_MODE value has to be EQUALS, SUBSTRING, REGEX_FIND or REGEX_MATCH !"
#define MSG_REGEX          "Regex compile error !"
#define MSG_NOT_FOUND      "Not find !"
#define MSG_DB_EMPTY       "Database was empty !"
#define MSG_NO_LIST        "LinkedList not found !"
/* Ours, for cases the reference never reports. */
#define MSG_OUTSIDE        "FILENAME leads outside the dataset directory !"
#define MSG_MATCH_LIMIT    "Regex too complex for this line (match limit reached) !"
#define MSG_NOMEM          "Out of memory, nothing changed !"
#define MSG_FULL           "Storage limit reached, nothing changed !"
#define MSG_JOURNAL        "Journal not writable, changes refused !"
#define MSG_LINE_TOO_LONG  "LINE is too long !"
#define MSG_CHARSET        "File has bytes invalid in the configured charset !"
#define MSG_FORMAT         "FORMAT value has to be HTML or JSON !"
#define MSG_TIMEOUT        "TIMEOUT value has to be a number of seconds from 0 to %d !"
#define MSG_NO_FILE        "FILE parameter was missing !"

typedef struct cmd_def {
    const char *name;
    cmd_handler run;
    int get_post_only;      /* other methods answer "unknown command" (FIND, ADD) */
    reply_field field;      /* where an OK's text goes in JSON */
} cmd_def;

static void ok(cmd_result *r, const char *payload)
{
    r->kind = REPLY_OK;
    buf_puts(&r->text, payload);
}

/* A KO; in JSON its HTTP status is 400 (a bad parameter) unless ko_as says otherwise. */
static void ko(cmd_result *r, const char *msg)
{
    buf_clear(&r->text);
    r->kind = REPLY_KO;
    r->status = 400;
    buf_puts(&r->text, msg);
}

static void ko_as(cmd_result *r, unsigned status, const char *msg)
{
    ko(r, msg);
    r->status = status;
}

static void ko_not_loaded(cmd_result *r, const char *name, size_t len)
{
    buf_clear(&r->text);
    r->kind = REPLY_KO;
    r->status = 404;
    buf_append(&r->text, name, len);
    buf_puts(&r->text, MSG_NOT_LOADED);
}

static void ko_store(cmd_result *r, store_rc rc, const char *name, size_t len)
{
    switch (rc) {
    case STORE_NOT_LOADED:  ko_not_loaded(r, name, len); break;
    case STORE_EMPTY:       ko_as(r, 404, MSG_NO_MORE_LINE); break;
    case STORE_EXISTS:      ko_as(r, 409, MSG_EXISTS); break;
    case STORE_NO_MATCH:    ko_as(r, 404, MSG_NOT_FOUND); break;
    case STORE_MATCH_LIMIT: ko(r, MSG_MATCH_LIMIT); break;
    case STORE_FULL:        ko_as(r, 413, MSG_FULL); break;
    case STORE_JOURNAL:     ko_as(r, 503, MSG_JOURNAL); break;
    case STORE_NOMEM:
    default:                ko_as(r, 503, MSG_NOMEM); break;
    }
}

void command_ko(cmd_result *r, unsigned status, const char *msg)
{
    ko_as(r, status, msg);
}

void command_ko_store(cmd_result *r, store_rc rc, const char *name, size_t len)
{
    ko_store(r, rc, name, len);
}

/* The value of a TRUE/FALSE-like parameter: 1/0, dflt when absent, -1 when invalid.
 * Like the reference, only exact upper case is accepted. */
static int flag_param(const params *p, param_id id, int dflt)
{
    size_t len;
    const char *v = params_get(p, id, &len);
    if (!v)
        return dflt;
    if (len == 4 && memcmp(v, "TRUE", 4) == 0)
        return 1;
    if (len == 5 && memcmp(v, "FALSE", 5) == 0)
        return 0;
    return -1;
}

/* Index of the value of parameter id among choices, dflt when absent, -1 when none. */
static int choice_param(const params *p, param_id id, const char *const *choices, int dflt)
{
    size_t len;
    const char *v = params_get(p, id, &len);
    if (!v)
        return dflt;
    for (int i = 0; choices[i]; i++)
        if (strlen(choices[i]) == len && memcmp(choices[i], v, len) == 0)
            return i;
    return -1;
}

static const char *const read_modes[] = {"FIRST", "LAST", "RANDOM", NULL};
static const char *const add_modes[] = {"FIRST", "LAST", NULL};
static const char *const find_modes[] = {"SUBSTRING", "EQUALS", "REGEX_FIND", "REGEX_MATCH",
                                         NULL};

int command_find_mode(const params *p, cmd_result *r)
{
    int mode = choice_param(p, PARAM_FIND_MODE, find_modes, FIND_SUBSTRING);
    if (mode < 0)
        ko(r, MSG_FIND_MODE);
    return mode;
}

void command_ko_regex(cmd_result *r)
{
    ko(r, MSG_REGEX);
}

/* FILENAME as a C string for the store, or NULL (with the KO set) when missing.
 * A name holding NUL can name no list: ADD refuses it, and lookups find nothing. */
static const char *list_name(const params *p, cmd_result *r, size_t *len)
{
    const char *name = params_get(p, PARAM_FILENAME, len);
    if (!name)
        ko(r, MSG_NO_FILENAME);
    return name;
}

const char *command_list_name(const params *p, cmd_result *r, size_t *len)
{
    return list_name(p, r, len);
}

/* The KO that comes first when some parameter is invalid: the list's own state
 * (not loaded, empty) is checked before parameters, as the reference does. */
static int ko_list_state(const cmd_server *srv, cmd_result *r, const char *name, size_t nlen)
{
    size_t len = 0;
    store_rc rc = strlen(name) == nlen ? store_length(srv->st, name, &len) : STORE_NOT_LOADED;
    if (rc != STORE_OK || len == 0) {
        ko_store(r, rc != STORE_OK ? rc : STORE_EMPTY, name, nlen);
        return 1;
    }
    return 0;
}

/* Java's Integer.parseInt: optional sign, decimal digits, 32-bit range. */
static int parse_int32(const char *s, size_t len, long *out)
{
    size_t i = 0;
    int neg = 0;
    if (len && (s[0] == '+' || s[0] == '-'))
        neg = s[i++] == '-';
    if (i == len)
        return -1;
    long v = 0;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
        if (v > (long)INT_MAX + 1)
            return -1;
    }
    v = neg ? -v : v;
    if (v > INT_MAX || v < INT_MIN)
        return -1;
    *out = v;
    return 0;
}

/* READ and FIND answer the bare line: drop the length header the store wrote. */
static void ok_single_line(cmd_result *r)
{
    size_t off = 0, len;
    const char *line = store_next_line(&r->text, &off, &len);
    memmove(r->text.data, line, len);
    r->text.len = len;
    r->kind = REPLY_OK;
}

/* TIMEOUT in ms into *ms (0 when absent); 0, or -1 with the KO set. */
static int timeout_param(const cmd_server *srv, const params *p, cmd_result *r, int64_t *ms)
{
    size_t len;
    const char *v = params_get(p, PARAM_TIMEOUT, &len);
    *ms = 0;
    if (!v || cmd_parse_seconds(v, len, srv->conf->max_wait, ms) == 0)
        return 0;
    buf_clear(&r->text);
    r->kind = REPLY_KO;
    r->status = 400;
    buf_printf(&r->text, MSG_TIMEOUT, srv->conf->max_wait);
    return -1;
}

void cmd_read_answer(cmd_result *r, store_rc rc, const char *name, size_t nlen, long n,
                     size_t count, int multi)
{
    if (rc == STORE_TOO_FEW) {
        buf_clear(&r->text);
        r->kind = REPLY_KO;
        r->status = 409;
        buf_printf(&r->text, "Number lines to read greater than file size, %ld greater than %zu !",
                   n, count);
        return;
    }
    if (rc != STORE_OK)
        return ko_store(r, rc, name, nlen);
    if (multi)
        r->kind = REPLY_LINES;
    else
        ok_single_line(r);
}

static void do_read(const cmd_server *srv, const params *p, cmd_result *r, int multi)
{
    size_t nlen, vlen = 0;
    const char *name = list_name(p, r, &nlen);
    if (!name)
        return;
    int64_t wait_ms;
    if (timeout_param(srv, p, r, &wait_ms) != 0)
        return;
    int end = choice_param(p, PARAM_READ_MODE, read_modes, STORE_FIRST);
    int keep = flag_param(p, PARAM_KEEP, 1);
    long n = 1;
    const char *nb = multi ? params_get(p, PARAM_NB_LINES, &vlen) : NULL;
    int nb_bad = multi && (!nb || parse_int32(nb, vlen, &n) != 0);
    if (end < 0 || keep < 0 || nb_bad || n < 1) {
        if (ko_list_state(srv, r, name, nlen))
            return;
        if (end < 0)
            return ko(r, MSG_READ_MODE);
        if (keep < 0)
            return ko(r, MSG_KEEP);
        r->kind = REPLY_KO;
        r->status = 400;
        if (nb_bad) {
            buf_puts(&r->text, "Can't parse integer parameter NB_LINES : ");
            if (nb)
                buf_append(&r->text, nb, vlen);
            else
                buf_puts(&r->text, "null");
            buf_puts(&r->text, " !");
        } else {
            buf_printf(&r->text, "Parameter NB_LINES must be greater or equals than 1 : %ld !", n);
        }
        return;
    }
    int64_t lease_ms;
    if (cmd_lease_param(srv, p, keep, n, r, &lease_ms) != 0)
        return;
    if (strlen(name) != nlen)
        return ko_not_loaded(r, name, nlen);
    if (wait_ms > 0 && srv->lot) {
        cmd_read_req q = {name, nlen, (store_end)end, keep, n, multi, lease_ms};
        return cmd_wait_read(srv, &q, clock_now_ms() + wait_ms, r);
    }
    size_t count;
    store_rc rc;
    if (lease_ms) {
        buf ids = BUF_INIT;
        rc = store_read_leased(srv->st, name, (store_end)end, (size_t)n, lease_ms, &r->text,
                               &count, &ids, &r->lsn);
        if (rc == STORE_OK)
            cmd_lease_ids(r, &ids);
        buf_free(&ids);
    } else {
        rc = store_read(srv->st, name, (store_end)end, keep, (size_t)n, &r->text, &count,
                        &r->lsn);
    }
    cmd_read_answer(r, rc, name, nlen, n, count, multi);
}

static void cmd_read(const cmd_server *srv, const params *p, cmd_result *r)
{
    do_read(srv, p, r, 0);
}

static void cmd_readmulti(const cmd_server *srv, const params *p, cmd_result *r)
{
    do_read(srv, p, r, 1);
}

static void cmd_add(const cmd_server *srv, const params *p, cmd_result *r)
{
    size_t nlen, llen;
    const char *name = list_name(p, r, &nlen);
    if (!name)
        return;
    const char *line = params_get(p, PARAM_LINE, &llen);
    if (!line)
        return ko(r, MSG_NO_LINE);
    int at_tail = choice_param(p, PARAM_ADD_MODE, add_modes, 0);
    if (at_tail < 0)
        return ko(r, MSG_ADD_MODE);
    int unique = flag_param(p, PARAM_UNIQUE, 0);
    if (unique < 0)
        return ko(r, MSG_UNIQUE);
    if (strlen(name) != nlen)
        return ko(r, MSG_ILLEGAL);
    if (srv->conf->max_line && llen > srv->conf->max_line)
        return ko_as(r, 413, MSG_LINE_TOO_LONG);
    store_rc rc = store_add(srv->st, name, line, llen, at_tail, unique, &r->lsn);
    if (rc != STORE_OK)
        return ko_store(r, rc, name, nlen);
    ok(r, "");
}

static int substring_match(const char *s, size_t len, void *ctx)
{
    const params *p = ctx;
    size_t nlen;
    const char *needle = params_get(p, PARAM_LINE, &nlen);
    return memmem(s, len, needle, nlen) != NULL;
}

void cmd_find_answer(cmd_result *r, store_rc rc, const char *name, size_t nlen)
{
    if (rc != STORE_OK)
        return ko_store(r, rc, name, nlen);
    ok_single_line(r);
}

static void cmd_find(const cmd_server *srv, const params *p, cmd_result *r)
{
    size_t nlen, llen = 0;
    const char *name = list_name(p, r, &nlen);
    if (!name)
        return;
    int64_t wait_ms;
    if (timeout_param(srv, p, r, &wait_ms) != 0)
        return;
    const char *line = params_get(p, PARAM_LINE, &llen);
    int mode = choice_param(p, PARAM_FIND_MODE, find_modes, FIND_SUBSTRING);
    int keep = flag_param(p, PARAM_KEEP, 1);
    rx *re = NULL;
    if (line && llen && mode >= FIND_REGEX_FIND && keep >= 0)
        re = rx_get(line, llen, mode == FIND_REGEX_MATCH);
    if (!line || !llen || mode < 0 || keep < 0 || (mode >= FIND_REGEX_FIND && !re)) {
        if (ko_list_state(srv, r, name, nlen))
            return;
        if (!line || !llen)
            return ko(r, MSG_EMPTY_FIND);
        if (mode < 0)
            return ko(r, MSG_FIND_MODE);
        if (keep < 0)
            return ko(r, MSG_FIND_KEEP);
        return ko(r, MSG_REGEX);
    }
    int64_t lease_ms;
    if (cmd_lease_param(srv, p, keep, 1, r, &lease_ms) != 0) {
        rx_release(re);
        return;
    }
    if (wait_ms > 0 && srv->lot && strlen(name) == nlen) {
        rx_release(re);
        cmd_find_req q = {name, nlen, line, llen, mode, keep, lease_ms};
        return cmd_wait_find(srv, &q, clock_now_ms() + wait_ms, r);
    }
    store_matcher m = {0};
    if (mode == FIND_EQUALS) {
        m.equal = line;
        m.equal_len = llen;
    } else if (re) {
        m.match = rx_match;
        m.ctx = re;
    } else {
        m.match = substring_match;
        m.ctx = (void *)p;
    }
    store_rc rc = STORE_NOT_LOADED;
    if (strlen(name) == nlen && lease_ms) {
        buf ids = BUF_INIT;
        rc = store_find_leased(srv->st, name, &m, lease_ms, &r->text, &ids, &r->lsn);
        if (rc == STORE_OK)
            cmd_lease_ids(r, &ids);
        buf_free(&ids);
    } else if (strlen(name) == nlen) {
        rc = store_find(srv->st, name, &m, keep, &r->text, &r->lsn);
    }
    rx_release(re);
    cmd_find_answer(r, rc, name, nlen);
}

static void cmd_length(const cmd_server *srv, const params *p, cmd_result *r)
{
    size_t nlen, len;
    const char *name = list_name(p, r, &nlen);
    if (!name)
        return;
    store_rc rc = strlen(name) == nlen ? store_length(srv->st, name, &len) : STORE_NOT_LOADED;
    if (rc != STORE_OK)
        return ko_store(r, rc, name, nlen);
    r->kind = REPLY_OK;
    buf_printf(&r->text, "%zu", len);
}

/* Appends one STATUS/CONFIG entry in store_next_line format. */
static void listing_entry(buf *b, const char *a, const char *sep, const char *v)
{
    size_t len = strlen(a) + strlen(sep) + strlen(v);
    buf_append(b, &len, sizeof len);
    buf_puts(b, a);
    buf_puts(b, sep);
    buf_puts(b, v);
}

static void status_entry(const char *name, size_t len, void *ctx)
{
    char n[32];
    snprintf(n, sizeof n, "%zu", len);
    listing_entry(ctx, name, " = ", n);
}

static void cmd_status(const cmd_server *srv, const params *p, cmd_result *r)
{
    if (r->json)
        return browse_status_json(srv, r);
    long n = store_status(srv->st, status_entry, &r->text);
    if (n < 0)
        return ko(r, MSG_NOMEM);
    if (n == 0)
        return ko(r, MSG_DB_EMPTY);
    r->kind = REPLY_LISTING;
}

static void config_entry(const char *key, const char *value, void *ctx)
{
    listing_entry(ctx, key, "=", value);
}

static void cmd_config(const cmd_server *srv, const params *p, cmd_result *r)
{
    if (r->json)
        return browse_config_json(srv, r);
    config_each(srv->conf, config_entry, &r->text);
    /* The reference also tells whether any list exists. */
    listing_entry(&r->text, "databaseIsEmpty", "=", store_count(srv->st) ? "false" : "true");
    r->kind = REPLY_LISTING;
}

/* Checks FILENAME for INITFILE and SAVE; NULL with the KO set when it fails. */
static const char *file_name(const params *p, cmd_result *r)
{
    size_t len;
    const char *name = list_name(p, r, &len);
    if (!name)
        return NULL;
    switch (dataset_check_name(name, len)) {
    case DATASET_OK:       return name;
    case DATASET_TOO_LONG: ko(r, MSG_TOO_LONG); return NULL;
    default:               ko(r, MSG_ILLEGAL); return NULL;
    }
}

static void ko_dataset(cmd_result *r, dataset_rc rc)
{
    switch (rc) {
    case DATASET_NOT_FOUND: ko_as(r, 404, MSG_FILE_NOT_FOUND); break;
    case DATASET_OUTSIDE:   ko(r, MSG_OUTSIDE); break;
    case DATASET_CHARSET:   ko_as(r, 422, MSG_CHARSET); break;
    case DATASET_NOMEM:     ko_as(r, 503, MSG_NOMEM); break;
    default:
        buf_clear(&r->text);
        r->kind = REPLY_KO;
        r->status = 500;
        buf_printf(&r->text, "File error: %s !", strerror(dataset_errno()));
        break;
    }
}

/* Puts l in place of list name (the store owns l from here, also on error), logs verb
 * with the count and the time since t0_ns (clock_now_ns), and answers the count. Returns
 * 0 or -1. */
static int install_list(const cmd_server *srv, const char *verb, const char *name, list *l,
                        uint64_t t0_ns, cmd_result *r)
{
    size_t n = list_length(l);
    store_rc rc = store_replace(srv->st, name, l, &r->lsn);
    if (rc != STORE_OK) {
        ko_store(r, rc, name, strlen(name));
        return -1;
    }
    log_info("%s %s: %zu lines in %.3f s", verb, name, n,
             (double)(clock_now_ns() - t0_ns) / 1e9);
    r->kind = REPLY_OK;
    buf_printf(&r->text, "%zu", n);
    return 0;
}

/* Loads file name into list name; shared by INITFILE and start-up. */
static int load_file(const cmd_server *srv, const char *name, cmd_result *r)
{
    uint64_t t0 = clock_now_ns();
    list *l = NULL;
    dataset_rc drc = dataset_load(srv->ds, name, &l);
    if (drc != DATASET_OK) {
        ko_dataset(r, drc);
        return -1;
    }
    return install_list(srv, "INITFILE", name, l, t0, r);
}

static void cmd_initfile(const cmd_server *srv, const params *p, cmd_result *r)
{
    const char *name = file_name(p, r);
    if (name)
        load_file(srv, name, r);
}

/* LOAD: like INITFILE, with the file's bytes sent in the request (multipart part FILE,
 * a FILE parameter, or a text/csv body) instead of read from the dataset directory. */
static void cmd_load(const cmd_server *srv, const params *p, cmd_result *r)
{
    const char *name = file_name(p, r);
    if (!name)
        return;
    size_t len;
    const char *text = params_get(p, PARAM_FILE, &len);
    if (!text)
        return ko(r, MSG_NO_FILE);
    uint64_t t0 = clock_now_ns();
    list *l = NULL;
    dataset_rc drc = dataset_load_text(srv->ds, text, len, &l);
    if (drc != DATASET_OK)
        return ko_dataset(r, drc);
    install_list(srv, "LOAD", name, l, t0, r);
}

static void cmd_save(const cmd_server *srv, const params *p, cmd_result *r)
{
    const char *name = file_name(p, r);
    if (!name)
        return;
    size_t tlen;
    const char *ts = params_get(p, PARAM_ADD_TIMESTAMP, &tlen);
    /* Java's Boolean.parseBoolean: "true" in any case is true, anything else false. */
    int stamp = ts ? tlen == 4 && strncasecmp(ts, "true", 4) == 0 : srv->conf->add_timestamp;
    list *copy;
    store_rc rc = store_snapshot(srv->st, name, &copy);
    if (rc == STORE_NOT_LOADED)
        return ko_as(r, 404, MSG_NO_LIST);
    if (rc != STORE_OK)
        return ko_store(r, rc, name, strlen(name));
    char target[DATASET_NAME_MAX + 32];
    size_t off = 0;
    if (stamp) {
        time_t now = time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        off = strftime(target, sizeof target, "%Y%m%dT%Hh%Mm%Ss.", &tm);
    }
    snprintf(target + off, sizeof target - off, "%s", name);
    dataset_rc drc = dataset_save(srv->ds, target, copy);
    size_t n = list_length(copy);
    list_free(copy);
    if (drc != DATASET_OK)
        return ko_dataset(r, drc);
    log_info("SAVE %s: %zu lines to %s", name, n, target);
    r->kind = REPLY_OK;
    buf_printf(&r->text, "%zu", n);
}

static void cmd_reset(const cmd_server *srv, const params *p, cmd_result *r)
{
    size_t nlen;
    const char *name = list_name(p, r, &nlen);
    if (!name)
        return;
    if (strlen(name) == nlen) {
        store_rc rc = store_reset(srv->st, name, &r->lsn);
        if (rc != STORE_OK)
            return ko_store(r, rc, name, nlen);
        log_info("RESET %s", name);
    }
    ok(r, "");
}

static void cmd_stop(const cmd_server *srv, const params *p, cmd_result *r)
{
    log_info("STOP requested");
    r->stop = 1;
    ok(r, "");
}

/* One row per command: a new command is a row here and a handler above (or in
 * browse.c). */
static const cmd_def commands[] = {
    {"INITFILE",  cmd_initfile,  0, FIELD_COUNT},
    {"READ",      cmd_read,      0, FIELD_LINE},
    {"READMULTI", cmd_readmulti, 0, FIELD_MESSAGE},
    {"ADD",       cmd_add,       1, FIELD_MESSAGE},
    {"FIND",      cmd_find,      1, FIELD_LINE},
    {"LENGTH",    cmd_length,    0, FIELD_LENGTH},
    {"STATUS",    cmd_status,    0, FIELD_MESSAGE},
    {"SAVE",      cmd_save,      0, FIELD_COUNT},
    {"RESET",     cmd_reset,     0, FIELD_MESSAGE},
    {"CONFIG",    cmd_config,    0, FIELD_MESSAGE},
    {"STOP",      cmd_stop,      0, FIELD_MESSAGE},
    {"PEEK",      browse_peek,   0, FIELD_MESSAGE},
    {"FILES",     browse_files,  0, FIELD_MESSAGE},
    {"INFO",      browse_info,   0, FIELD_MESSAGE},
    {"LOAD",      cmd_load,      0, FIELD_COUNT},
    {"ACK",       cmd_ack,       0, FIELD_MESSAGE},
    {"RELEASE",   cmd_release,   0, FIELD_MESSAGE},
    {"LEASES",    cmd_leases,    0, FIELD_LENGTH},
};
#define N_COMMANDS ((int)(sizeof commands / sizeof commands[0]))

int command_count(void)
{
    return N_COMMANDS;
}

const char *command_name(int i)
{
    return i >= 0 && i < N_COMMANDS ? commands[i].name : NULL;
}

/* FORMAT=JSON|HTML (any case) overrides what Accept asked for. Returns 0, or -1 with
 * the KO set. */
static int format_param(const params *p, cmd_result *r)
{
    size_t len;
    const char *v = params_get(p, PARAM_FORMAT, &len);
    if (!v)
        return 0;
    if (len == 4 && strncasecmp(v, "JSON", 4) == 0)
        r->json = 1;
    else if (len == 4 && strncasecmp(v, "HTML", 4) == 0)
        r->json = 0;
    else {
        ko(r, MSG_FORMAT);
        return -1;
    }
    return 0;
}

void command_run(const cmd_server *srv, const char *path, size_t path_len, cmd_method m,
                 const params *p, cmd_result *r)
{
    buf_clear(&r->text);
    buf_clear(&r->lease);
    r->stop = 0;
    r->park = NULL;
    r->lsn = 0;
    r->kind = REPLY_OK;
    r->status = 0;
    r->field = FIELD_MESSAGE;
    r->cmd = -1;
    if (format_param(p, r) != 0)
        return;
    if ((path_len == 4 && memcmp(path, "/sts", 4) == 0) ||
        (path_len == 5 && memcmp(path, "/sts/", 5) == 0)) {
        r->kind = REPLY_HELP;
        return;
    }
    if (path_len > 5 && memcmp(path, "/sts/", 5) == 0) {
        const char *name = path + 5;
        size_t len = path_len - 5;
        for (int i = 0; i < N_COMMANDS; i++) {
            const cmd_def *c = &commands[i];
            if (strlen(c->name) != len || memcmp(c->name, name, len) != 0)
                continue;
            if (c->get_post_only && m == CMD_OTHER)
                break;
            r->cmd = i;
            r->field = c->field;
            c->run(srv, p, r);
            /* An append that failed part way leaves a short page: say so instead. */
            if (r->text.oom)
                ko_as(r, 503, MSG_NOMEM);
            return;
        }
    }
    ko_as(r, 404, MSG_UNKNOWN);
}

int command_exists(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strlen(commands[i].name) == len && strncasecmp(commands[i].name, name, len) == 0)
            return 1;
    return 0;
}

void command_not_durable(cmd_result *r)
{
    r->lsn = 0;
    ko(r, MSG_JOURNAL);
}

/* Loads one startup file, logging its failure; ctx is the cmd_server. */
static int init_one(const char *name, void *ctx)
{
    const cmd_server *srv = ctx;
    cmd_result r = {0};
    int rc = 0;
    if (dataset_check_name(name, strlen(name)) != DATASET_OK) {
        log_error("initFileAtStartup: \"%s\" is not a valid file name", name);
        rc = -1;
    } else if (load_file(srv, name, &r) != 0) {
        log_error("initFileAtStartup: %s: %s", name, r.text.data ? r.text.data : "error");
        rc = -1;
    } else if (r.lsn && srv->j && journal_wait(srv->j, r.lsn) != 0) {
        log_error("initFileAtStartup: %s: the journal could not make it durable", name);
        rc = -1;
    }
    buf_free(&r.text);
    return rc;
}

typedef struct regex_pick {
    const cmd_server *srv;
    rx *re;
    int failed;
} regex_pick;

static int init_if_match(const char *name, void *ctx)
{
    regex_pick *rp = ctx;
    if (rx_match(name, strlen(name), rp->re) == 1 && init_one(name, (void *)rp->srv) != 0)
        rp->failed = 1;
    return 0;
}

int command_init_at_startup(const cmd_server *srv)
{
    const char *spec = srv->conf->init_file_at_startup;
    if (!spec || !*spec)
        return 0;
    if (srv->conf->init_file_at_startup_regex) {
        regex_pick rp = {srv, rx_get(spec, strlen(spec), 1), 0};
        if (!rp.re) {
            log_error("initFileAtStartup: \"%s\" is not a valid regex", spec);
            return -1;
        }
        int rc = dataset_list_files(srv->ds, init_if_match, &rp);
        rx_release(rp.re);
        return rc != 0 || rp.failed ? -1 : 0;
    }
    int failed = 0;
    const char *s = spec;
    while (*s) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        /* Names are trimmed: "a.csv, b.csv" is the natural way to write the list. */
        while (len && (*s == ' ' || *s == '\t')) {
            s++;
            len--;
        }
        while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
            len--;
        if (len) {
            char name[DATASET_NAME_MAX + 2];
            if (len > DATASET_NAME_MAX) {
                log_error("initFileAtStartup: a name is longer than %d bytes", DATASET_NAME_MAX);
                failed = 1;
            } else {
                memcpy(name, s, len);
                name[len] = '\0';
                failed |= init_one(name, (void *)srv) != 0;
            }
        }
        if (!comma)
            break;
        s = comma + 1;
    }
    return failed ? -1 : 0;
}
