/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_server.c - the whole server at a glance (STATUS, CONFIG, INFO) and STOP. */
#include "cmd_server.h"

#include <stdint.h>
#include <stdio.h>

#include "base/log.h"
#include "base/stats.h"
#include "base/version.h"
#include "cmd_answer.h"
#include "store/keys.h"

static void status_entry(const char *name, size_t len, void *ctx)
{
    char n[32];
    snprintf(n, sizeof n, "%zu", len);
    cmd_entry_s(ctx, name, " = ", n);
}

static void status_one(const store_list_stats *s, void *ctx)
{
    json *j = ctx;
    json_obj_begin(j);
    cmd_json_name(j, s->name);
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

static void status_json(const cmd_server *srv, cmd_result *r)
{
    json j;
    cmd_json_start(r, &j);
    json_key(&j, "lists");
    json_arr_begin(&j);
    long n = store_stats(srv->st, 1, status_one, &j);
    json_arr_end(&j);
    json_obj_end(&j);
    if (n < 0)
        cmd_ko(r, 503, MSG_NOMEM);
}

void cmd_status(const cmd_server *srv, const params *p, cmd_result *r)
{
    if (r->json)
        return status_json(srv, r);
    long n = store_status(srv->st, status_entry, &r->text);
    if (n < 0)
        return cmd_ko(r, 400, MSG_NOMEM);
    if (n == 0)
        return cmd_ko(r, 400, MSG_DB_EMPTY);
    r->kind = REPLY_LISTING;
}

static void config_entry(const char *key, const char *value, void *ctx)
{
    cmd_entry_s(ctx, key, "=", value);
}

static void config_one(const char *key, const char *value, void *ctx)
{
    json *j = ctx;
    json_key(j, key);
    json_cstr(j, value);
}

static void config_json(const cmd_server *srv, cmd_result *r)
{
    json j;
    cmd_json_start(r, &j);
    json_key(&j, "config");
    json_obj_begin(&j);
    config_each_key(srv->conf, config_one, &j);
    json_obj_end(&j);
    json_key(&j, "databaseIsEmpty");
    json_bool(&j, store_count(srv->st) == 0);
    json_obj_end(&j);
}

void cmd_config(const cmd_server *srv, const params *p, cmd_result *r)
{
    if (r->json)
        return config_json(srv, r);
    config_each(srv->conf, config_entry, &r->text);
    /* The reference also tells whether any list exists. */
    cmd_entry_s(&r->text, "databaseIsEmpty", "=", store_count(srv->st) ? "false" : "true");
    r->kind = REPLY_LISTING;
}

void cmd_stop(const cmd_server *srv, const params *p, cmd_result *r)
{
    log_info("STOP requested");
    r->stop = 1;
    cmd_ok(r, "");
}

static const char *const fsync_names[] = {"always", "everysec", "no"};

void cmd_info(const cmd_server *srv, const params *p, cmd_result *r)
{
    journal_stats js = {.policy = srv->conf->journal_fsync, .writable = 1,
                        .last_fsync_seconds = -1};
    if (srv->j)
        journal_get_stats(srv->j, &js);
    const char *fs = fsync_names[(unsigned)js.policy % 3];
    uint64_t uptime = (uint64_t)stats_uptime();
    long conns = stats_connections();
    size_t lists = store_count(srv->st);
    size_t keys = store_key_count(srv->st);
    if (r->json) {
        json j;
        cmd_json_start(r, &j);
        json_key(&j, "version");
        json_cstr(&j, STSD_VERSION);
        json_key(&j, "uptime_s");
        json_uint(&j, uptime);
        json_key(&j, "connections");
        json_int(&j, conns);
        json_key(&j, "lists");
        json_uint(&j, lists);
        json_key(&j, "keys");
        json_uint(&j, keys);
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
    cmd_entry_s(b, "version", "=", STSD_VERSION);
    snprintf(v, sizeof v, "%llu", (unsigned long long)uptime);
    cmd_entry_s(b, "uptime_s", "=", v);
    snprintf(v, sizeof v, "%ld", conns);
    cmd_entry_s(b, "connections", "=", v);
    snprintf(v, sizeof v, "%zu", lists);
    cmd_entry_s(b, "lists", "=", v);
    snprintf(v, sizeof v, "%zu", keys);
    cmd_entry_s(b, "keys", "=", v);
    cmd_entry_s(b, "journal.enabled", "=", srv->j ? "true" : "false");
    cmd_entry_s(b, "journal.fsync", "=", fs);
    snprintf(v, sizeof v, "%llu", (unsigned long long)js.bytes);
    cmd_entry_s(b, "journal.bytes", "=", v);
    if (js.last_fsync_seconds < 0)
        snprintf(v, sizeof v, "null");
    else
        snprintf(v, sizeof v, "%.6f", js.last_fsync_seconds);
    cmd_entry_s(b, "journal.last_fsync_seconds", "=", v);
    snprintf(v, sizeof v, "%llu", (unsigned long long)js.errors);
    cmd_entry_s(b, "journal.errors", "=", v);
    cmd_entry_s(b, "journal.writable", "=", js.writable ? "true" : "false");
    snprintf(v, sizeof v, "%llu", (unsigned long long)js.records);
    cmd_entry_s(b, "journal.records", "=", v);
    snprintf(v, sizeof v, "%llu", (unsigned long long)js.log_syncs);
    cmd_entry_s(b, "journal.log_syncs", "=", v);
}
