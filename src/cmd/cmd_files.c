/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_files.c - lists from and to the dataset directory: INITFILE, LOAD, SAVE, FILES,
 * and the files loaded at start-up. */
#include "cmd_files.h"

#include "cluster/cluster.h"
#include "hold/commit.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/strlist.h"
#include "cmd_answer.h"
#include "cmd_columns.h"
#include "cmd_param.h"
#include "list/rx.h"

/* Puts l in place of list name (the store owns l from here, also on error), logs verb
 * with the count and the time since t0_ns (clock_now_ns), and answers the count. Returns
 * 0 or -1. */
static int install_list(const cmd_server *srv, const char *verb, const char *name, list *l,
                        uint64_t t0_ns, cmd_result *r)
{
    size_t n = list_length(l);
    store_rc rc = store_replace(srv->st, name, l, &r->lsn);
    if (rc != STORE_OK) {
        cmd_ko_store(r, rc, name, strlen(name));
        return -1;
    }
    log_info("%s %s: %zu %s in %.3f s", verb, name, n, n == 1 ? "line" : "lines",
             (double)(clock_now_ns() - t0_ns) / 1e9);
    r->kind = REPLY_OK;
    buf_printf(&r->text, "%zu", n);
    return 0;
}

/* With sep (HEADER=TRUE), l's first line names its columns: taken off and checked
 * against every line. Returns 0, or -1 with the KO set and l freed. */
static int take_header(list *l, char sep, cmd_result *r)
{
    if (!sep)
        return 0;
    buf why = BUF_INIT;
    int rc = dataset_take_header(l, sep, &why);
    if (rc == -1)
        cmd_ko(r, 400, why.data ? why.data : MSG_NOMEM);
    else if (rc != 0)
        cmd_ko(r, 503, MSG_NOMEM);
    buf_free(&why);
    if (rc != 0)
        list_free(l);
    return rc ? -1 : 0;
}

/* Loads file name into list name, its first line naming the columns with sep (0: no
 * header); shared by INITFILE and start-up. */
static int load_file(const cmd_server *srv, const char *name, char sep, cmd_result *r)
{
    uint64_t t0 = clock_now_ns();
    list *l = NULL;
    dataset_rc drc = dataset_load(srv->ds, name, &l);
    if (drc != DATASET_OK) {
        cmd_ko_dataset(r, drc);
        return -1;
    }
    if (take_header(l, sep, r) != 0)
        return -1;
    return install_list(srv, "INITFILE", name, l, t0, r);
}

void cmd_initfile(const cmd_server *srv, const params *p, cmd_result *r)
{
    char sep;
    const char *name = cmd_file_name(p, r);
    if (name && cmd_header_params(p, r, &sep) == 0)
        load_file(srv, name, sep, r);
}

/* LOAD: like INITFILE, with the file's bytes sent in the request (multipart part FILE,
 * a FILE parameter, or a text/csv body) instead of read from the dataset directory. */
void cmd_load(const cmd_server *srv, const params *p, cmd_result *r)
{
    const char *name = cmd_file_name(p, r);
    if (!name)
        return;
    size_t len;
    char sep;
    const char *text = params_get(p, PARAM_FILE, &len);
    if (!text)
        return cmd_ko(r, 400, MSG_NO_FILE);
    if (cmd_header_params(p, r, &sep) != 0)
        return;
    uint64_t t0 = clock_now_ns();
    list *l = NULL;
    dataset_rc drc = dataset_load_text(srv->ds, text, len, &l);
    if (drc != DATASET_OK)
        return cmd_ko_dataset(r, drc);
    if (take_header(l, sep, r) == 0)
        install_list(srv, "LOAD", name, l, t0, r);
}

/* SAVE's stamp, "yyyyMMddTHHhmmmsss" in local time, as the reference writes it. */
static void save_stamp(char *stamp, size_t size)
{
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    if (strftime(stamp, size, "%Y%m%dT%Hh%Mm%Ss", &tm) == 0)
        stamp[0] = '\0';
}

void cmd_save(const cmd_server *srv, const params *p, cmd_result *r)
{
    const char *name = cmd_file_name(p, r);
    if (!name)
        return;
    size_t tlen;
    const char *ts = params_get(p, PARAM_ADD_TIMESTAMP, &tlen);
    /* Java's Boolean.parseBoolean: "true" in any case is true, anything else false. */
    int stamp = ts ? tlen == 4 && strncasecmp(ts, "true", 4) == 0 : srv->conf->add_timestamp;
    list *copy;
    store_rc rc = store_snapshot(srv->st, name, &copy);
    if (rc == STORE_NOT_LOADED)
        return cmd_ko(r, 404, MSG_NO_LIST);
    if (rc != STORE_OK)
        return cmd_ko_store(r, rc, name, strlen(name));
    /* A timestamped name is the server's choice, so it never replaces a file (the
     * reference's second SAVE in a second replaced the first); a name without one is the
     * client's, replaced as the reference replaces it. */
    char target[NAME_MAX + 1], when[32];
    dataset_rc drc;
    if (stamp) {
        save_stamp(when, sizeof when);
        drc = dataset_save_new(srv->ds, when, name, copy, target, sizeof target);
    } else {
        snprintf(target, sizeof target, "%s", name);
        drc = dataset_save(srv->ds, target, copy);
    }
    size_t n = list_length(copy);
    list_free(copy);
    if (drc != DATASET_OK)
        return cmd_ko_dataset(r, drc);
    log_info("SAVE %s: %zu %s to %s", name, n, n == 1 ? "line" : "lines", target);
    /* Every node keeps the results: answered once the others have the file too. */
    if (srv->cluster && cluster_replicate_save(srv->cluster, dataset_path(srv->ds), target))
        return cmd_ko(r, 503, COMMIT_UNKNOWN);
    /* The file's name: a header beside the reference's page, a field in JSON. */
    buf enc = BUF_INIT;
    if (cmd_percent(&enc, target, strlen(target)) != 0)
        return cmd_ko(r, 503, MSG_NOMEM);
    cmd_header(r, "X-STS-File", enc.data);
    buf_free(&enc);
    if (r->json) {
        json j;
        char num[32];
        snprintf(num, sizeof num, "%zu", n);
        cmd_json_start(r, &j);
        json_key(&j, "message");
        json_str(&j, num, strlen(num));
        json_key(&j, "lines");
        json_uint(&j, n);
        json_line(&j, "file", target, strlen(target));
        json_obj_end(&j);
        return;
    }
    r->kind = REPLY_OK;
    buf_printf(&r->text, "%zu", n);
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
        cmd_json_name(&w->j, name);
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
    cmd_entry_s(&w->r->text, name, " = ", v);
    return 0;
}

void cmd_files(const cmd_server *srv, const params *p, cmd_result *r)
{
    files_walk w = {srv, r, {0}};
    if (r->json) {
        cmd_json_start(r, &w.j);
        json_key(&w.j, "files");
        json_arr_begin(&w.j);
    } else {
        r->kind = REPLY_LISTING;
    }
    if (dataset_list_files(srv->ds, file_one, &w) != 0)
        return cmd_ko_dataset(r, DATASET_IO);
    if (r->json) {
        json_arr_end(&w.j);
        json_obj_end(&w.j);
    }
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
    } else if (load_file(srv, name, srv->conf->init_file_header ?
                                        *srv->conf->init_file_separator : 0, &r) != 0) {
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

static int init_by_regex(const cmd_server *srv, const char *spec)
{
    regex_pick rp = {srv, rx_get(spec, strlen(spec), 1), 0};
    if (!rp.re) {
        log_error("initFileAtStartup: \"%s\" is not a valid regex", spec);
        return -1;
    }
    int rc = dataset_list_files(srv->ds, init_if_match, &rp);
    rx_release(rp.re);
    return rc != 0 || rp.failed ? -1 : 0;
}

int command_init_at_startup(const cmd_server *srv)
{
    const char *spec = srv->conf->init_file_at_startup;
    if (!spec || !*spec)
        return 0;
    if (srv->conf->init_file_at_startup_regex)
        return init_by_regex(srv, spec);
    int failed = 0;
    const char *item;
    size_t len;
    /* Names are trimmed: "a.csv, b.csv" is the natural way to write the list. */
    for (const char *c = spec; strlist_next(&c, &item, &len);) {
        char name[DATASET_NAME_MAX + 2];
        if (len == 0)
            continue;
        if (len > DATASET_NAME_MAX) {
            log_error("initFileAtStartup: a name is longer than %d bytes", DATASET_NAME_MAX);
            failed = 1;
            continue;
        }
        memcpy(name, item, len);
        name[len] = '\0';
        failed |= init_one(name, (void *)srv) != 0;
    }
    return failed ? -1 : 0;
}
