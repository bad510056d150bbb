/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_lists.c - the commands on one list's lines: take, add, find, count, empty, look;
 * settle lent ones (ACK, RELEASE) and count them (LEASES). */
#include "cmd_lists.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/num.h"
#include "cmd_answer.h"
#include "cmd_columns.h"
#include "cmd_keys.h"
#include "cmd_param.h"
#include "cmd_wait.h"
#include "journal/journal.h"

#define PEEK_LIMIT_DEFAULT 100
#define PEEK_LIMIT_MAX     1000
/* A matching PEEK examines at most this many lines, for at most this long (as FIND's
 * regexes are bounded): next_offset then says where to go on. */
#define PEEK_SCAN_MAX      1000000
#define PEEK_BUDGET_MS     50

#define MSG_OFFSET "OFFSET value has to be an integer from 0 !"
#define MSG_OWNER_KEEP "OWNER needs KEEP=FALSE !"
#define MSG_LIMIT  "LIMIT value has to be an integer from 1 to 1000 !"
#define MSG_COLUMN_MODE "COLUMN matches with FIND_MODE=EQUALS only !"
#define MSG_COLUMN_UNKNOWN "COLUMN is not a column of the list !"
#define MSG_UNIQUE_COLUMN "UNIQUE value has to be TRUE, FALSE or a column of the list !"
#define MSG_SETTLE_ARGS "LINE or LEASE parameter was missing !"
#define MSG_NO_LEASE    "No such lease (settled already, expired, or of another list) !"
#define MSG_NO_OWNER    "This OWNER holds no line of this list (settled already, expired, " \
                        "or never read) !"
#define MSG_OWNER_ALONE "OWNER settles alone: no LINE or LEASE with it !"

/* The KO that comes first when some parameter is invalid: the list's own state
 * (not loaded, empty) is checked before parameters, as the reference does. */
static int ko_list_state(const cmd_server *srv, cmd_result *r, const char *name, size_t nlen)
{
    size_t len = 0;
    store_rc rc = strlen(name) != nlen ? STORE_NOT_LOADED
                : srv->view            ? journal_view_length(srv->view, name, &len)
                                       : store_length(srv->st, name, &len);
    if (rc != STORE_OK || len == 0) {
        cmd_ko_store(r, rc != STORE_OK ? rc : STORE_EMPTY, name, nlen);
        return 1;
    }
    return 0;
}

/* FILENAME and TIMEOUT (in *wait_ms) of a command that may wait: the name, or NULL with
 * the KO set. */
static const char *waiting_list(const cmd_server *srv, const params *p, cmd_result *r,
                                size_t *nlen, int64_t *wait_ms)
{
    const char *name = cmd_list_name(p, r, nlen);
    if (!name || cmd_timeout_param(srv, p, r, wait_ms) != 0)
        return NULL;
    return name;
}

/* The KO for READ's and READMULTI's parameters, in the reference's order. */
static void ko_read_params(cmd_result *r, int end, int keep, const char *nb, size_t vlen,
                           int nb_bad, long n)
{
    if (end < 0)
        return cmd_ko(r, 400, MSG_READ_MODE);
    if (keep < 0)
        return cmd_ko(r, 400, MSG_KEEP);
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
}

/* Takes now what q asks, or fails as the store says. */
static void read_now(const cmd_server *srv, const cmd_read_req *q, cmd_result *r)
{
    size_t count;
    buf ids = BUF_INIT;
    store_rc rc = q->lease_ms
        ? store_read_leased(srv->st, q->name, q->end, (size_t)q->n, q->lease_ms, &r->text,
                            &count, &ids, &r->lsn)
        : store_read(srv->st, q->name, q->end, q->keep, (size_t)q->n, &r->text, &count,
                     &r->lsn);
    if (rc == STORE_OK && q->lease_ms)
        cmd_lease_ids(r, &ids);
    buf_free(&ids);
    cmd_read_answer(r, rc, q->name, q->nlen, q->n, count, q->multi);
    if (rc == STORE_OK)
        cmd_fields_answer(srv, r, q->name, q->fields);
}

/* READ OWNER= without TIMEOUT: the owner's line, taken now if it holds none; its lease id
 * in the X-STS-Lease header. */
static void read_owned(const cmd_server *srv, const cmd_read_req *q, cmd_result *r)
{
    size_t count;
    buf ids = BUF_INIT;
    store_rc rc = cmd_read_owned(srv, q, &r->text, &ids, &count, &r->lsn);
    if (rc == STORE_OK)
        cmd_lease_ids(r, &ids);
    buf_free(&ids);
    cmd_read_answer(r, rc, q->name, q->nlen, 1, count, 0);
    if (rc == STORE_OK)
        cmd_fields_answer(srv, r, q->name, q->fields);
}

/* OWNER= of a READ (keep: its KEEP) into *who: 0, or -1 with the KO set. READMULTI has
 * no owners. */
static int owner_of_read(const params *p, cmd_result *r, int multi, int keep, const char **who,
                         size_t *wlen)
{
    if (cmd_owner_param(p, r, who, wlen) != 0)
        return -1;
    if (!*who)
        return 0;
    if (multi)
        cmd_ko(r, 400, MSG_OWNER_ONLY);
    else if (keep)
        cmd_ko(r, 400, MSG_OWNER_KEEP);
    else
        return 0;
    return -1;
}

static void do_read(const cmd_server *srv, const params *p, cmd_result *r, int multi)
{
    size_t nlen, vlen = 0;
    int64_t wait_ms;
    const char *name = waiting_list(srv, p, r, &nlen, &wait_ms);
    if (!name)
        return;
    int end = cmd_choice_param(p, PARAM_READ_MODE, cmd_read_modes, STORE_FIRST);
    int keep = cmd_flag_param(p, PARAM_KEEP, 1);
    int32_t n32 = 1;
    const char *nb = multi ? params_get(p, PARAM_NB_LINES, &vlen) : NULL;
    int nb_bad = multi && (!nb || num_parse_int32(nb, vlen, &n32) != 0);
    long n = n32;
    if (end < 0 || keep < 0 || nb_bad || n < 1) {
        if (!ko_list_state(srv, r, name, nlen))
            ko_read_params(r, end, keep, nb, vlen, nb_bad, n);
        return;
    }
    cmd_read_req q = {name, nlen, (store_end)end, keep, n, multi, 0, NULL, 0, 0};
    if ((!multi && cmd_fields_param(p, r, &q.fields) != 0) ||
        owner_of_read(p, r, multi, keep, &q.owner, &q.olen) != 0 ||
        cmd_lease_param(srv, p, keep, n, r, &q.lease_ms) != 0)
        return;
    if (strlen(name) != nlen)
        return cmd_ko_store(r, STORE_NOT_LOADED, name, nlen);
    if (wait_ms > 0 && srv->lot)
        return cmd_wait_read(srv, &q, clock_now_ms() + wait_ms, r);
    if (q.owner)
        return read_owned(srv, &q, r);
    read_now(srv, &q, r);
}

void cmd_read(const cmd_server *srv, const params *p, cmd_result *r)
{
    do_read(srv, p, r, 0);
}

void cmd_readmulti(const cmd_server *srv, const params *p, cmd_result *r)
{
    do_read(srv, p, r, 1);
}

/* Whether UNIQUE= (neither TRUE nor FALSE) names a column of list name: 1 if so, -1 if
 * the list has columns but not that one, 0 if it has none (or is not loaded), which keeps
 * the reference's KO for any other value. */
static int unique_column(const cmd_server *srv, const params *p, const char *name,
                         size_t nlen, size_t *ulen)
{
    list *cols = NULL;
    const char *u = params_get(p, PARAM_UNIQUE, ulen);
    int known = strlen(name) != nlen || store_columns(srv->st, name, &cols) != STORE_OK ? 0
              : list_column_index(cols, u, *ulen) >= 0 ? 1
              : list_column_count(cols) ? -1 : 0;
    list_free(cols);
    return known;
}

void cmd_add(const cmd_server *srv, const params *p, cmd_result *r)
{
    size_t nlen, llen;
    const char *name = cmd_list_name(p, r, &nlen);
    if (!name)
        return;
    const char *line = params_get(p, PARAM_LINE, &llen);
    if (!line)
        return cmd_ko(r, 400, MSG_NO_LINE);
    int at_tail = cmd_choice_param(p, PARAM_ADD_MODE, cmd_add_modes, 0);
    if (at_tail < 0)
        return cmd_ko(r, 400, MSG_ADD_MODE);
    size_t ulen = 0;
    const char *ucol = NULL;
    int unique = cmd_flag_param(p, PARAM_UNIQUE, 0);
    int col = unique < 0 ? unique_column(srv, p, name, nlen, &ulen) : 0;
    if (col > 0)
        ucol = params_get(p, PARAM_UNIQUE, &ulen);
    else if (col < 0)
        return cmd_ko(r, 400, MSG_UNIQUE_COLUMN);
    else if (unique < 0)
        return cmd_ko(r, 400, MSG_UNIQUE);
    if (strlen(name) != nlen)
        return cmd_ko_illegal(r, "FILENAME", name, nlen);
    if (srv->conf->max_line && llen > srv->conf->max_line)
        return cmd_ko(r, 413, MSG_LINE_TOO_LONG);
    /* A stored line holding a break would come back from SAVE as two lines (a
     * deliberate difference from the reference, which stores it: docs/differences.md). */
    if (memchr(line, '\n', llen) || memchr(line, '\r', llen))
        return cmd_ko(r, 400, MSG_LINE_BREAK);
    store_rc rc = ucol ? store_add_unique(srv->st, name, line, llen, at_tail, ucol, ulen, &r->lsn)
                       : store_add(srv->st, name, line, llen, at_tail, unique, &r->lsn);
    if (rc != STORE_OK)
        return cmd_ko_store(r, rc, name, nlen);
    cmd_ok(r, "");
}

/* Finds now with matcher m what q asks, or fails as the store says. */
static void find_now(const cmd_server *srv, const cmd_find_req *q, const store_matcher *m,
                     cmd_result *r)
{
    buf ids = BUF_INIT;
    store_rc rc = strlen(q->name) != q->nlen ? STORE_NOT_LOADED
                : q->lease_ms ? store_find_leased(srv->st, q->name, m, q->lease_ms, &r->text,
                                                  &ids, &r->lsn)
                              : store_find(srv->st, q->name, m, q->keep, &r->text, &r->lsn);
    if (rc == STORE_OK && q->lease_ms)
        cmd_lease_ids(r, &ids);
    buf_free(&ids);
    cmd_find_answer(r, rc, q->name, q->nlen);
    if (rc == STORE_OK)
        cmd_fields_answer(srv, r, q->name, q->fields);
}

/* COLUMN= of FIND into q (mode: FIND_MODE's; absent, EQUALS) and cm, set up for EQUALS:
 * its number and separator as list name has them now. Returns 0, or -1 with the KO set
 * (the list's state first, as for FIND's other parameters). */
static int find_column(const cmd_server *srv, const params *p, cmd_find_req *q,
                       cmd_matcher *cm, cmd_result *r)
{
    size_t mlen;
    list *cols = NULL;
    if (params_get(p, PARAM_FIND_MODE, &mlen) && q->mode != FIND_EQUALS) {
        if (!ko_list_state(srv, r, q->name, q->nlen))
            cmd_ko(r, 400, MSG_COLUMN_MODE);
        return -1;
    }
    if (ko_list_state(srv, r, q->name, q->nlen))
        return -1;
    long k = store_columns(srv->st, q->name, &cols) == STORE_OK
           ? list_column_index(cols, q->column, q->clen) : -1;
    if (k >= 0) {
        q->col = (size_t)k;
        q->sep = list_column_sep(cols);
        cmd_matcher_column(cm, q->column, q->clen, q->col, q->sep);
    }
    list_free(cols);
    if (k < 0)
        cmd_ko(r, 400, MSG_COLUMN_UNKNOWN);
    return k < 0 ? -1 : 0;
}

void cmd_find(const cmd_server *srv, const params *p, cmd_result *r)
{
    size_t nlen, llen = 0;
    int64_t wait_ms;
    const char *name = waiting_list(srv, p, r, &nlen, &wait_ms);
    if (!name)
        return;
    const char *line = params_get(p, PARAM_LINE, &llen);
    size_t clen = 0, mlen;
    const char *column = params_get(p, PARAM_COLUMN, &clen);
    /* COLUMN= compares whole fields: EQUALS is its mode, and the only one it takes. */
    int mode = column && !params_get(p, PARAM_FIND_MODE, &mlen) ? FIND_EQUALS
                                                                : cmd_find_mode_of(p);
    int keep = cmd_flag_param(p, PARAM_KEEP, 1);
    cmd_matcher cm;
    int bad_rx = line && llen && mode >= 0 && keep >= 0 &&
                 cmd_matcher_init(&cm, mode, line, llen) != 0;
    if (!line || !llen || mode < 0 || keep < 0 || bad_rx) {
        if (ko_list_state(srv, r, name, nlen))
            return;
        if (!line || !llen)
            return cmd_ko(r, 400, MSG_EMPTY_FIND);
        if (mode < 0)
            return cmd_ko(r, 400, MSG_FIND_MODE);
        if (keep < 0)
            return cmd_ko(r, 400, MSG_FIND_KEEP);
        return cmd_ko_regex(r, line, llen, mode == FIND_REGEX_MATCH);
    }
    cmd_find_req q = {name, nlen, line, llen, mode, keep, 0, 0, column, clen, 0, ','};
    size_t wlen;
    if (params_get(p, PARAM_OWNER, &wlen)) {
        cmd_matcher_free(&cm);
        return cmd_ko(r, 400, MSG_OWNER_ONLY);
    }
    if (cmd_fields_param(p, r, &q.fields) != 0 ||
        (column && find_column(srv, p, &q, &cm, r) != 0)) {
        cmd_matcher_free(&cm);
        return;
    }
    if (cmd_lease_param(srv, p, keep, 1, r, &q.lease_ms) != 0) {
        cmd_matcher_free(&cm);
        return;
    }
    if (wait_ms > 0 && srv->lot && strlen(name) == nlen) {
        cmd_matcher_free(&cm);
        return cmd_wait_find(srv, &q, clock_now_ms() + wait_ms, r);
    }
    find_now(srv, &q, &cm.m, r);
    cmd_matcher_free(&cm);
}

void cmd_length(const cmd_server *srv, const params *p, cmd_result *r)
{
    size_t nlen, len;
    const char *name = cmd_list_name(p, r, &nlen);
    if (!name)
        return;
    store_rc rc = strlen(name) != nlen ? STORE_NOT_LOADED
                : srv->view            ? journal_view_length(srv->view, name, &len)
                                       : store_length(srv->st, name, &len);
    cmd_count_answer(r, rc, name, nlen, len);
}

void cmd_reset(const cmd_server *srv, const params *p, cmd_result *r)
{
    size_t nlen;
    const char *name = cmd_list_name(p, r, &nlen);
    if (!name)
        return;
    if (strlen(name) == nlen) {
        store_rc rc = store_reset(srv->st, name, &r->lsn);
        if (rc != STORE_OK)
            return cmd_ko_store(r, rc, name, nlen);
        log_info("RESET %s", name);
    }
    cmd_ok(r, "");
}

/* PEEK's page: the list's length, where it started and where the next page starts, then
 * each line with its position. */
static void peek_page(cmd_result *r, const char *name, size_t length, size_t offset,
                      size_t next, const buf *lines)
{
    size_t off = 0, pos, len;
    const char *s;
    char num[32];
    r->kind = REPLY_LINES;
    cmd_entry_s(&r->text, "name", " = ", name);
    snprintf(num, sizeof num, "%zu", length);
    cmd_entry_s(&r->text, "length", " = ", num);
    snprintf(num, sizeof num, "%zu", offset);
    cmd_entry_s(&r->text, "offset", " = ", num);
    if (next == SIZE_MAX)
        snprintf(num, sizeof num, "null");
    else
        snprintf(num, sizeof num, "%zu", next);
    cmd_entry_s(&r->text, "next_offset", " = ", num);
    while ((s = store_next_peek(lines, &off, &pos, &len))) {
        snprintf(num, sizeof num, "%zu", pos);
        cmd_entry(&r->text, num, strlen(num), " : ", s, len);
    }
}

static void peek_json(cmd_result *r, const char *name, size_t length, size_t offset,
                      size_t next, const buf *lines)
{
    size_t off = 0, pos, len;
    const char *s;
    json j;
    cmd_json_start(r, &j);
    cmd_json_name(&j, name);
    json_key(&j, "length");
    json_uint(&j, length);
    json_key(&j, "offset");
    json_uint(&j, offset);
    json_key(&j, "lines");
    json_arr_begin(&j);
    while ((s = store_next_peek(lines, &off, &pos, &len))) {
        json_obj_begin(&j);
        json_key(&j, "pos");
        json_uint(&j, pos);
        json_line(&j, "line", s, len);
        json_obj_end(&j);
    }
    json_arr_end(&j);
    json_key(&j, "next_offset");
    if (next == SIZE_MAX)
        json_null(&j);
    else
        json_uint(&j, next);
    json_obj_end(&j);
}

void cmd_peek(const cmd_server *srv, const params *p, cmd_result *r)
{
    size_t nlen, offset, limit, mlen = 0;
    const char *name = cmd_list_name(p, r, &nlen);
    if (!name)
        return;
    if (cmd_size_param(p, PARAM_OFFSET, 0, SIZE_MAX / 2, 0, &offset) != 0)
        return cmd_ko(r, 400, MSG_OFFSET);
    if (cmd_size_param(p, PARAM_LIMIT, 1, PEEK_LIMIT_MAX, PEEK_LIMIT_DEFAULT, &limit) != 0)
        return cmd_ko(r, 400, MSG_LIMIT);
    const char *pattern = params_get(p, PARAM_MATCH, &mlen);
    cmd_matcher cm = {0};
    if (pattern) {
        int mode = cmd_find_mode(p, r);
        if (mode < 0)
            return;
        if (cmd_matcher_init(&cm, mode, pattern, mlen) != 0)
            return cmd_ko_regex(r, pattern, mlen, mode == FIND_REGEX_MATCH);
    }
    store_peek_req q = {offset, limit, pattern ? &cm.m : NULL, PEEK_SCAN_MAX, PEEK_BUDGET_MS};
    buf lines = BUF_INIT;
    size_t length = 0, next = SIZE_MAX;
    store_rc rc = strlen(name) != nlen ? STORE_NOT_LOADED
                : srv->view ? journal_view_peek(srv->view, name, &q, &lines, &length, &next)
                            : store_peek(srv->st, name, &q, &lines, &length, &next);
    cmd_matcher_free(&cm);
    if (rc == STORE_OK && r->json)
        peek_json(r, name, length, offset, next, &lines);
    else if (rc == STORE_OK)
        peek_page(r, name, length, offset, next, &lines);
    else
        cmd_ko_store(r, rc, name, nlen);
    if (lines.oom)
        r->text.oom = 1;
    buf_free(&lines);
}

/* ---- lent lines: ACK, RELEASE, LEASES (LEASE= on READ, READMULTI and FIND is parsed in
 * cmd_param.c) ---------------------------------------------------------------------- */

/* ACK and RELEASE by OWNER=: the line that owner holds. */
static void settle_owner(const cmd_server *srv, const char *name, size_t nlen,
                         const char *who, size_t wlen, cmd_result *r, int release)
{
    store_rc rc = strlen(name) == nlen
        ? store_settle_owner(srv->st, name, release, who, wlen, &r->lsn)
        : STORE_NOT_LOADED;
    if (rc == STORE_NO_LEASE)
        return cmd_ko(r, 404, MSG_NO_OWNER);
    if (rc != STORE_OK)
        return cmd_ko_store(r, rc, name, nlen);
    r->kind = REPLY_OK;
}

/* ACK and RELEASE: the lease named by LEASE=id, or the oldest of LINE, or OWNER's; with
 * NAME=, the lease of a counter. */
static void settle(const cmd_server *srv, const params *p, cmd_result *r, int release)
{
    if (params_get(p, PARAM_NAME, NULL))
        return cmd_key_settle(srv, p, r, release);      /* a counter's lease */
    size_t nlen, llen = 0, ilen = 0, wlen;
    const char *name = cmd_list_name(p, r, &nlen);
    if (!name)
        return;
    const char *line = params_get(p, PARAM_LINE, &llen);
    const char *idv = params_get(p, PARAM_LEASE, &ilen);
    const char *who;
    if (cmd_owner_param(p, r, &who, &wlen) != 0)
        return;
    if (who && (line || idv))
        return cmd_ko(r, 400, MSG_OWNER_ALONE);
    if (who)
        return settle_owner(srv, name, nlen, who, wlen, r, release);
    if (!line && !idv)
        return cmd_ko(r, 400, MSG_SETTLE_ARGS);
    store_rc rc = STORE_NOT_LOADED;
    if (strlen(name) == nlen) {
        uint64_t id = idv ? cmd_lease_id(idv, ilen) : 0;
        rc = idv ? (id ? store_settle(srv->st, name, release, id, NULL, 0, &r->lsn)
                       : STORE_NO_LEASE)
                 : store_settle(srv->st, name, release, 0, line, llen, &r->lsn);
    }
    if (rc == STORE_NO_LEASE)
        return cmd_ko(r, 404, MSG_NO_LEASE);
    if (rc != STORE_OK)
        return cmd_ko_store(r, rc, name, nlen);
    r->kind = REPLY_OK;
}

void cmd_ack(const cmd_server *srv, const params *p, cmd_result *r)
{
    settle(srv, p, r, 0);
}

void cmd_release(const cmd_server *srv, const params *p, cmd_result *r)
{
    settle(srv, p, r, 1);
}

void cmd_leases(const cmd_server *srv, const params *p, cmd_result *r)
{
    size_t nlen, n;
    const char *name = cmd_list_name(p, r, &nlen);
    if (!name)
        return;
    store_rc rc = strlen(name) == nlen ? store_leases(srv->st, name, &n) : STORE_NOT_LOADED;
    cmd_count_answer(r, rc, name, nlen, n);
}
