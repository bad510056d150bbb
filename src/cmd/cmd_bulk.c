/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_bulk.c - the commands on many lines or lists at once: ADDMULTI (lines from a
 * text/plain body or repeated LINE=, all or none, in one record) and DROP (a list, or
 * every list of a prefix, deleted with its leases and waiters). */
#include "cmd_bulk.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "cmd_answer.h"
#include "cmd_param.h"

#define MSG_TWO_SOURCES  "Send the lines as LINE= or as a text/plain body, not both !"
#define MSG_BULK_CR      "Line %zu holds a line break, nothing added !"
#define MSG_BULK_LONG    "Line %zu is too long, nothing added !"
#define MSG_BULK_DUP     "Line %zu is in the list already, nothing added !"
#define MSG_BULK_FIELDS  "Line %zu has fewer fields than the list has columns, or a quote not closed, nothing added !"
#define MSG_DROP_WHICH   "DROP takes FILENAME or PREFIX, not both !"
#define MSG_EMPTY_PREFIX "PREFIX must not be empty, nothing dropped !"

/* The lines of a text/plain body: split at LF, a CR before the LF dropped, a last line
 * without LF kept. Appends spans into *v (grown with realloc). Returns the number of
 * lines, or SIZE_MAX on ENOMEM. */
static size_t split_body(const char *s, size_t len, store_span **v)
{
    size_t n = 0, cap = 0;
    const char *end = s + len;
    while (s < end) {
        const char *lf = memchr(s, '\n', (size_t)(end - s));
        const char *stop = lf ? lf : end;
        size_t l = (size_t)(stop - s);
        if (lf && l && s[l - 1] == '\r')
            l--;
        if (n == cap) {
            cap = cap ? cap * 2 : 256;
            store_span *nv = realloc(*v, cap * sizeof *nv);
            if (!nv)
                return SIZE_MAX;
            *v = nv;
        }
        (*v)[n++] = (store_span){s, l};
        s = lf ? lf + 1 : end;
    }
    return n;
}

/* The lines of repeated LINE=, in the order sent, into *v. SIZE_MAX on ENOMEM. */
static size_t line_params(const params *p, store_span **v)
{
    size_t n = params_line_count(p);
    if (!(*v = malloc((n ? n : 1) * sizeof **v)))
        return SIZE_MAX;
    for (size_t i = 0; i < n; i++)
        (*v)[i].s = params_line_at(p, i, &(*v)[i].len);
    return n;
}

size_t cmd_bulk_lines(const params *p, store_span **v)
{
    size_t blen;
    const char *body = params_get(p, PARAM_LINES, &blen);
    *v = NULL;
    return body ? split_body(body, blen, v) : line_params(p, v);
}

/* The first line (1-based in *bad) that no list may hold: a line break inside (1), or
 * longer than maxLineSize (2). 0 when all are fine. */
static int refused_line(const cmd_server *srv, const store_span *v, size_t n, size_t *bad)
{
    for (size_t i = 0; i < n; i++) {
        *bad = i + 1;
        if (memchr(v[i].s, '\r', v[i].len) || memchr(v[i].s, '\n', v[i].len))
            return 1;
        if (srv->conf->max_line && v[i].len > srv->conf->max_line)
            return 2;
    }
    return 0;
}

/* A count's answer: n as the page, or {"ok":true,"<field>":n}. */
static void count_answer(cmd_result *r, const char *field, size_t n)
{
    if (r->json) {
        json j;
        cmd_json_start(r, &j);
        json_key(&j, field);
        json_uint(&j, n);
        json_obj_end(&j);
        return;
    }
    char num[32];
    snprintf(num, sizeof num, "%zu", n);
    cmd_ok(r, num);
}

void cmd_addmulti(const cmd_server *srv, const params *p, cmd_result *r)
{
    size_t nlen, blen, n, bad;
    store_span *v = NULL;
    const char *name = cmd_list_name(p, r, &nlen);
    if (!name)
        return;
    int at_tail = cmd_choice_param(p, PARAM_ADD_MODE, cmd_add_modes, 0);
    if (at_tail < 0)
        return cmd_ko(r, 400, MSG_ADD_MODE);
    int unique = cmd_flag_param(p, PARAM_UNIQUE, 0);
    if (unique < 0)
        return cmd_ko(r, 400, MSG_UNIQUE);
    if (strlen(name) != nlen)
        return cmd_ko_illegal(r, "FILENAME", name, nlen);
    if (params_get(p, PARAM_LINES, &blen) && params_line_count(p))
        return cmd_ko(r, 400, MSG_TWO_SOURCES);
    n = cmd_bulk_lines(p, &v);
    if (n == SIZE_MAX) {
        cmd_ko(r, 503, MSG_NOMEM);
    } else if (n == 0) {
        cmd_ko(r, 400, MSG_NO_LINE);
    } else {
        int why = refused_line(srv, v, n, &bad);
        store_rc rc = why ? STORE_OK
                    : store_add_many(srv->st, name, v, n, at_tail, unique, &bad, &r->lsn);
        if (why == 1) {
            cmd_ko_format(r, MSG_BULK_CR, bad);
        } else if (why == 2) {
            cmd_ko_format(r, MSG_BULK_LONG, bad);
            r->status = 413;                 /* as ADD's LINE too long */
        } else if (rc == STORE_EXISTS) {
            cmd_ko_format(r, MSG_BULK_DUP, bad + 1);
            r->status = 409;                 /* as ADD UNIQUE=TRUE's */
        } else if (rc == STORE_FIELDS) {
            cmd_ko_format(r, MSG_BULK_FIELDS, bad + 1);
            r->status = 400;                 /* as ADD's line that does not fill the columns */
        } else if (rc != STORE_OK)
            cmd_ko_store(r, rc, name, nlen);
        else
            count_answer(r, "added", n);
    }
    free(v);
}

void cmd_drop(const cmd_server *srv, const params *p, cmd_result *r)
{
    size_t nlen, plen;
    const char *prefix = params_get(p, PARAM_PREFIX, &plen);
    if (prefix && params_get(p, PARAM_FILENAME, NULL))
        return cmd_ko(r, 400, MSG_DROP_WHICH);
    if (prefix) {
        if (plen == 0)
            return cmd_ko(r, 400, MSG_EMPTY_PREFIX);
        if (strlen(prefix) != plen)
            return cmd_ko_illegal(r, "PREFIX", prefix, plen);
        size_t n;
        store_rc rc = store_drop_prefix(srv->st, prefix, &n, &r->lsn);
        if (n)
            log_info("DROP PREFIX=%s: %zu lists", prefix, n);
        if (rc != STORE_OK)
            return cmd_ko_store(r, rc, prefix, plen);
        return count_answer(r, "dropped", n);
    }
    const char *name = cmd_list_name(p, r, &nlen);
    if (!name)
        return;
    store_rc rc = strlen(name) == nlen ? store_drop(srv->st, name, &r->lsn) : STORE_NOT_LOADED;
    if (rc != STORE_OK)
        return cmd_ko_store(r, rc, name, nlen);
    log_info("DROP %s", name);
    count_answer(r, "dropped", 1);
}
