/* browse.c - the commands that look without changing anything: STATUS and CONFIG in
 * JSON, PEEK (lines by position, or the matching ones), FILES and INFO. */
#include "command_int.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/version.h"
#include "journal/journal.h"
#include "base/json.h"
#include "base/stats.h"
#include "store/rx.h"

#define PEEK_LIMIT_DEFAULT 100
#define PEEK_LIMIT_MAX     1000
/* A matching PEEK examines at most this many lines, for at most this long (as FIND's
 * regexes are bounded): next_offset then says where to go on. */
#define PEEK_SCAN_MAX      1000000
#define PEEK_BUDGET_MS     50

#define MSG_NOMEM  "Out of memory, nothing changed !"
#define MSG_OFFSET "OFFSET value has to be an integer from 0 !"
#define MSG_LIMIT  "LIMIT value has to be an integer from 1 to 1000 !"

/* Appends one entry (store_next_line format) of a page listing: "<a><sep><b>". */
static void entry(buf *b, const char *a, size_t alen, const char *sep, const char *v,
                  size_t vlen)
{
    size_t len = alen + strlen(sep) + vlen;
    buf_append(b, &len, sizeof len);
    buf_append(b, a, alen);
    buf_puts(b, sep);
    buf_append(b, v, vlen);
}

static void entry_s(buf *b, const char *a, const char *sep, const char *v)
{
    entry(b, a, strlen(a), sep, v, strlen(v));
}

/* Starts a JSON answer {"ok":true, ...} in r's text. */
static void json_start(cmd_result *r, json *j)
{
    buf_clear(&r->text);
    r->kind = REPLY_JSON;
    json_init(j, &r->text);
    json_obj_begin(j);
    json_key(j, "ok");
    json_bool(j, 1);
}

/* A name as "name" (invalid UTF-8 shown as U+FFFD), plus "name_base64" with its exact
 * bytes when it is not UTF-8. */
static void json_name(json *j, const char *name)
{
    size_t len = strlen(name);
    json_key(j, "name");
    json_str(j, name, len);
    if (!json_utf8_valid(name, len))
        json_line(j, "name", name, len);
}

static void status_one(const store_list_stats *s, void *ctx)
{
    json *j = ctx;
    json_obj_begin(j);
    json_name(j, s->name);
    json_key(j, "lines");
    json_uint(j, s->lines);
    json_key(j, "leased");
    json_uint(j, s->leased);
    json_key(j, "waiters");
    json_uint(j, s->waiters);
    json_key(j, "added_per_s");
    json_double(j, s->added_per_s);
    json_key(j, "removed_per_s");
    json_double(j, s->removed_per_s);
    json_key(j, "empty_in_s");
    if (s->empty_in_s < 0)
        json_null(j);
    else
        json_double(j, s->empty_in_s);
    json_obj_end(j);
}

void browse_status_json(const cmd_server *srv, cmd_result *r)
{
    json j;
    json_start(r, &j);
    json_key(&j, "lists");
    json_arr_begin(&j);
    long n = store_stats(srv->st, 1, status_one, &j);
    json_arr_end(&j);
    json_obj_end(&j);
    if (n < 0)
        command_ko(r, 503, MSG_NOMEM);
}

static void config_one(const char *key, const char *value, void *ctx)
{
    json *j = ctx;
    json_key(j, key);
    json_cstr(j, value);
}

void browse_config_json(const cmd_server *srv, cmd_result *r)
{
    json j;
    json_start(r, &j);
    json_key(&j, "config");
    json_obj_begin(&j);
    config_each_key(srv->conf, config_one, &j);
    json_obj_end(&j);
    json_key(&j, "databaseIsEmpty");
    json_bool(&j, store_count(srv->st) == 0);
    json_obj_end(&j);
}

/* A decimal in [min, max] (dflt when absent) into *out; -1 when invalid. */
static int number_param(const params *p, param_id id, size_t min, size_t max, size_t dflt,
                        size_t *out)
{
    size_t len;
    const char *v = params_get(p, id, &len);
    *out = dflt;
    if (!v)
        return 0;
    if (len == 0 || len > 19)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (v[i] < '0' || v[i] > '9')
            return -1;
        n = n * 10 + (size_t)(v[i] - '0');
    }
    if (n < min || n > max)
        return -1;
    *out = n;
    return 0;
}

typedef struct needle {
    const char *s;
    size_t len;
} needle;

static int substring_match(const char *s, size_t len, void *ctx)
{
    const needle *n = ctx;
    return memmem(s, len, n->s, n->len) != NULL;
}

void browse_peek(const cmd_server *srv, const params *p, cmd_result *r)
{
    size_t nlen, offset, limit, mlen = 0;
    const char *name = command_list_name(p, r, &nlen);
    if (!name)
        return;
    if (number_param(p, PARAM_OFFSET, 0, SIZE_MAX / 2, 0, &offset) != 0)
        return command_ko(r, 400, MSG_OFFSET);
    if (number_param(p, PARAM_LIMIT, 1, PEEK_LIMIT_MAX, PEEK_LIMIT_DEFAULT, &limit) != 0)
        return command_ko(r, 400, MSG_LIMIT);
    const char *pattern = params_get(p, PARAM_MATCH, &mlen);
    store_matcher m = {0};
    needle nd = {pattern, mlen};
    rx *re = NULL;
    if (pattern) {
        int mode = command_find_mode(p, r);
        if (mode < 0)
            return;
        if (mode == 1) {
            m.equal = pattern;
            m.equal_len = mlen;
        } else if (mode >= 2) {
            re = rx_get(pattern, mlen, mode == 3);
            if (!re)
                return command_ko_regex(r);
            m.match = rx_match;
            m.ctx = re;
        } else {
            m.match = substring_match;
            m.ctx = &nd;
        }
    }
    store_peek_req q = {offset, limit, pattern ? &m : NULL, PEEK_SCAN_MAX, PEEK_BUDGET_MS};
    buf lines = BUF_INIT;
    size_t length = 0, next = SIZE_MAX;
    store_rc rc = strlen(name) == nlen ? store_peek(srv->st, name, &q, &lines, &length, &next)
                                       : STORE_NOT_LOADED;
    rx_release(re);
    if (rc != STORE_OK) {
        buf_free(&lines);
        return command_ko_store(r, rc, name, nlen);
    }
    size_t off = 0, pos, len;
    const char *s;
    if (r->json) {
        json j;
        json_start(r, &j);
        json_name(&j, name);
        json_key(&j, "length");
        json_uint(&j, length);
        json_key(&j, "offset");
        json_uint(&j, offset);
        json_key(&j, "lines");
        json_arr_begin(&j);
        while ((s = store_next_peek(&lines, &off, &pos, &len))) {
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
    } else {
        char num[32];
        r->kind = REPLY_LINES;
        entry_s(&r->text, "name", " = ", name);
        snprintf(num, sizeof num, "%zu", length);
        entry_s(&r->text, "length", " = ", num);
        snprintf(num, sizeof num, "%zu", offset);
        entry_s(&r->text, "offset", " = ", num);
        if (next == SIZE_MAX)
            snprintf(num, sizeof num, "null");
        else
            snprintf(num, sizeof num, "%zu", next);
        entry_s(&r->text, "next_offset", " = ", num);
        while ((s = store_next_peek(&lines, &off, &pos, &len))) {
            snprintf(num, sizeof num, "%zu", pos);
            entry(&r->text, num, strlen(num), " : ", s, len);
        }
    }
    if (lines.oom)
        r->text.oom = 1;
    buf_free(&lines);
}

typedef struct files_walk {
    const cmd_server *srv;
    cmd_result *r;
    json j;
} files_walk;

static int file_one(const char *name, void *ctx)
{
    files_walk *w = ctx;
    uint64_t size;
    int64_t mtime;
    /* Only what INITFILE could load: the reference's name rules, and still there. */
    if (dataset_check_name(name, strlen(name)) != DATASET_OK ||
        dataset_file_stat(w->srv->ds, name, &size, &mtime) != 0)
        return 0;
    if (w->r->json) {
        json_obj_begin(&w->j);
        json_name(&w->j, name);
        json_key(&w->j, "size");
        json_uint(&w->j, size);
        json_key(&w->j, "mtime");
        json_int(&w->j, mtime);
        json_obj_end(&w->j);
        return 0;
    }
    char v[96], when[32];
    time_t t = (time_t)mtime;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(v, sizeof v, "%llu bytes, modified %s", (unsigned long long)size, when);
    entry_s(&w->r->text, name, " = ", v);
    return 0;
}

void browse_files(const cmd_server *srv, const params *p, cmd_result *r)
{
    files_walk w = {srv, r, {0}};
    if (r->json) {
        json_start(r, &w.j);
        json_key(&w.j, "files");
        json_arr_begin(&w.j);
    } else {
        r->kind = REPLY_LISTING;
    }
    if (dataset_list_files(srv->ds, file_one, &w) != 0) {
        char msg[160];
        snprintf(msg, sizeof msg, "File error: %s !", strerror(dataset_errno()));
        return command_ko(r, 500, msg);
    }
    if (r->json) {
        json_arr_end(&w.j);
        json_obj_end(&w.j);
    }
}

static const char *const fsync_names[] = {"always", "everysec", "no"};

void browse_info(const cmd_server *srv, const params *p, cmd_result *r)
{
    journal_stats js = {.policy = srv->conf->journal_fsync, .writable = 1,
                        .last_fsync_seconds = -1};
    if (srv->j)
        journal_get_stats(srv->j, &js);
    const char *fs = fsync_names[(unsigned)js.policy % 3];
    uint64_t uptime = (uint64_t)stats_uptime();
    long conns = stats_connections();
    size_t lists = store_count(srv->st);
    if (r->json) {
        json j;
        json_start(r, &j);
        json_key(&j, "version");
        json_cstr(&j, STSD_VERSION);
        json_key(&j, "uptime_s");
        json_uint(&j, uptime);
        json_key(&j, "connections");
        json_int(&j, conns);
        json_key(&j, "lists");
        json_uint(&j, lists);
        json_key(&j, "journal");
        json_obj_begin(&j);
        json_key(&j, "enabled");
        json_bool(&j, srv->j != NULL);
        json_key(&j, "fsync");
        json_cstr(&j, fs);
        json_key(&j, "bytes");
        json_uint(&j, js.bytes);
        json_key(&j, "last_fsync_seconds");
        if (js.last_fsync_seconds < 0)
            json_null(&j);
        else
            json_double(&j, js.last_fsync_seconds);
        json_key(&j, "errors");
        json_uint(&j, js.errors);
        json_key(&j, "writable");
        json_bool(&j, js.writable);
        json_key(&j, "records");
        json_uint(&j, js.records);
        json_key(&j, "log_syncs");
        json_uint(&j, js.log_syncs);
        json_obj_end(&j);
        json_obj_end(&j);
        return;
    }
    char v[64];
    r->kind = REPLY_LISTING;
    buf *b = &r->text;
    entry_s(b, "version", "=", STSD_VERSION);
    snprintf(v, sizeof v, "%llu", (unsigned long long)uptime);
    entry_s(b, "uptime_s", "=", v);
    snprintf(v, sizeof v, "%ld", conns);
    entry_s(b, "connections", "=", v);
    snprintf(v, sizeof v, "%zu", lists);
    entry_s(b, "lists", "=", v);
    entry_s(b, "journal.enabled", "=", srv->j ? "true" : "false");
    entry_s(b, "journal.fsync", "=", fs);
    snprintf(v, sizeof v, "%llu", (unsigned long long)js.bytes);
    entry_s(b, "journal.bytes", "=", v);
    if (js.last_fsync_seconds < 0)
        snprintf(v, sizeof v, "null");
    else
        snprintf(v, sizeof v, "%.6f", js.last_fsync_seconds);
    entry_s(b, "journal.last_fsync_seconds", "=", v);
    snprintf(v, sizeof v, "%llu", (unsigned long long)js.errors);
    entry_s(b, "journal.errors", "=", v);
    entry_s(b, "journal.writable", "=", js.writable ? "true" : "false");
    snprintf(v, sizeof v, "%llu", (unsigned long long)js.records);
    entry_s(b, "journal.records", "=", v);
    snprintf(v, sizeof v, "%llu", (unsigned long long)js.log_syncs);
    entry_s(b, "journal.log_syncs", "=", v);
}
