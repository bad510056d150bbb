/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_server.c - the whole server at a glance (STATUS, CONFIG, INFO), STOP, and its
 * cluster (CLUSTER, CLUSTERADD, CLUSTERREMOVE). */
#include "cmd_server.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "base/num.h"
#include "base/stats.h"
#include "base/version.h"
#include "cluster/cluster.h"
#include "cmd_answer.h"
#include "config/config.h"
#include "journal/journal.h"
#include "meet/keys.h"

#define MSG_ALONE "No cluster: this stsd runs alone (stsd.cluster.self is not set) !"

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
    long n = srv->view ? journal_view_status(srv->view, status_entry, &r->text)
                       : store_status(srv->st, status_entry, &r->text);
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
    size_t keys = keys_count(srv->st);
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

/* ---- the cluster: each node's id, URL and role, this node's term and indexes, and, on
 * the leader, how far each follower lags. Answered by the node asked, never forwarded,
 * so that it works while there is no leader. ------------------------------------- */

/* Wall-clock seconds as an ISO 8601 UTC date with milliseconds. */
static const char *iso_time(char *out, size_t cap, double t)
{
    time_t sec = (time_t)t;
    struct tm tm;
    gmtime_r(&sec, &tm);
    size_t n = strftime(out, cap, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out + n, cap - n, ".%03dZ", (int)((t - (double)sec) * 1000));
    return out;
}

static void answer_json(const cluster_stats *s, cmd_result *r)
{
    char since[40];
    json j;
    cmd_json_start(r, &j);
    json_key(&j, "self");
    json_uint(&j, s->self);
    json_key(&j, "leader");
    if (s->leader)
        json_uint(&j, s->leader);
    else
        json_null(&j);
    json_key(&j, "role");
    json_cstr(&j, s->role);
    json_key(&j, "serving");
    json_bool(&j, s->serving);
    json_key(&j, "term");
    json_uint(&j, s->term);
    json_key(&j, "commit_index");
    json_uint(&j, s->commit);
    json_key(&j, "applied_index");
    json_uint(&j, s->applied);
    json_key(&j, "last_index");
    json_uint(&j, s->last_index);
    json_key(&j, "leader_changes");
    json_uint(&j, s->leader_changes);
    json_key(&j, "leader_since");
    json_fixed(&j, s->leader_since, 3);
    json_key(&j, "nodes");
    json_arr_begin(&j);
    for (size_t i = 0; i < s->n; i++) {
        const cluster_node_stats *n = &s->nodes[i];
        json_obj_begin(&j);
        json_key(&j, "id");
        json_uint(&j, n->id);
        json_key(&j, "url");
        json_cstr(&j, n->url);
        json_key(&j, "raft");
        json_cstr(&j, n->raft);
        json_key(&j, "role");
        json_cstr(&j, n->role);
        json_key(&j, "match_index");
        if (n->known)
            json_uint(&j, n->match);
        else
            json_null(&j);
        json_key(&j, "lag");
        if (n->known)
            json_uint(&j, s->commit > n->match ? s->commit - n->match : 0);
        else
            json_null(&j);
        /* The leader's verdict (or this node's of itself, or unknown: null). */
        json_key(&j, "health");
        if (n->health)
            json_cstr(&j, n->health);
        else
            json_null(&j);
        json_key(&j, "health_since");
        if (n->health_since > 0)
            json_cstr(&j, iso_time(since, sizeof since, n->health_since));
        else
            json_null(&j);
        json_key(&j, "heard_ms_ago");
        if (n->heard_ms >= 0)
            json_uint(&j, (uint64_t)n->heard_ms);
        else
            json_null(&j);
        json_obj_end(&j);
    }
    json_arr_end(&j);
    json_obj_end(&j);
}

static void entry_u(buf *b, const char *key, unsigned long long v)
{
    char t[32];
    snprintf(t, sizeof t, "%llu", v);
    cmd_entry_s(b, key, "=", t);
}

void cmd_cluster(const cmd_server *srv, const params *p, cmd_result *r)
{
    (void)p;
    if (!srv->cluster) {
        cmd_ko(r, 400, MSG_ALONE);
        return;
    }
    cluster_stats s;
    cluster_get_stats(srv->cluster, &s);
    if (r->json) {
        answer_json(&s, r);
        return;
    }
    char k[64], v[640];
    r->kind = REPLY_LISTING;
    buf *b = &r->text;
    entry_u(b, "self", s.self);
    entry_u(b, "leader", s.leader);
    cmd_entry_s(b, "role", "=", s.role);
    cmd_entry_s(b, "serving", "=", s.serving ? "true" : "false");
    entry_u(b, "term", s.term);
    entry_u(b, "commit_index", s.commit);
    entry_u(b, "applied_index", s.applied);
    entry_u(b, "leader_changes", s.leader_changes);
    if (s.leader_since > 0)
        cmd_entry_s(b, "leader_since", "=", iso_time(v, sizeof v, s.leader_since));
    for (size_t i = 0; i < s.n; i++) {
        const cluster_node_stats *n = &s.nodes[i];
        snprintf(k, sizeof k, "node.%u", n->id);
        int at = n->known ? snprintf(v, sizeof v, "%s %s %s lag=%llu", n->role, n->url, n->raft,
                                     (unsigned long long)(s.commit > n->match ?
                                                          s.commit - n->match : 0))
                          : snprintf(v, sizeof v, "%s %s %s", n->role, n->url, n->raft);
        /* Up or unreachable, as the leader sees it; how long since it was heard from,
         * where this node knows. */
        if (n->health && at > 0 && (size_t)at < sizeof v)
            at += snprintf(v + at, sizeof v - (size_t)at, " health=%s", n->health);
        if (n->heard_ms >= 0 && at > 0 && (size_t)at < sizeof v)
            snprintf(v + at, sizeof v - (size_t)at, " heard=%.1fs", (double)n->heard_ms / 1000);
        cmd_entry_s(b, k, "=", v);
    }
}

/* NODE=: a node id, 1..CONF_CLUSTER_MAX. Returns it, or 0 with the KO in r. */
void cmd_read_index(const cmd_server *srv, const params *p, cmd_result *r)
{
    (void)p;
    if (!srv->cluster)
        return cmd_ko(r, 400, MSG_ALONE);
    /* Read before the fence the edge adds (commit_begin): every change answered before
     * this question came is at or below it. */
    uint64_t idx = cluster_applied(srv->cluster);
    if (r->json) {
        json j;
        cmd_json_start(r, &j);
        json_key(&j, "index");
        json_uint(&j, idx);
        json_obj_end(&j);
        return;
    }
    r->kind = REPLY_OK;
    buf_printf(&r->text, "%llu", (unsigned long long)idx);
}

static unsigned node_param(const params *p, cmd_result *r)
{
    size_t len;
    const char *v = params_get(p, PARAM_NODE, &len);
    uint64_t id;
    if (!v) {
        cmd_ko(r, 400, "NODE is missing: the node's id !");
        return 0;
    }
    if (num_parse_u64(v, len, 1, CONF_CLUSTER_MAX, &id) != 0) {
        cmd_ko_format(r, "NODE must be a node id from 1 to %d !", CONF_CLUSTER_MAX);
        return 0;
    }
    return (unsigned)id;
}

static void answer_change(int rc, buf *msg, cmd_result *r)
{
    if (rc == 0) {
        r->kind = REPLY_OK;
        buf_puts(&r->text, msg->data ? msg->data : "");
    } else {
        cmd_ko(r, (unsigned)rc, msg->data ? msg->data : "out of memory");
    }
}

void cmd_cluster_add(const cmd_server *srv, const params *p, cmd_result *r)
{
    if (!srv->cluster)
        return cmd_ko(r, 400, MSG_ALONE);
    unsigned id = node_param(p, r);
    if (!id)
        return;
    size_t rl, ul;
    const char *raft = params_get(p, PARAM_RAFT, &rl), *url = params_get(p, PARAM_URL, &ul);
    if (!raft || !url)
        return cmd_ko(r, 400, "RAFT and URL are needed: the node's raft address and URL !");
    buf value = BUF_INIT, why = BUF_INIT, msg = BUF_INIT;
    char ra[264], ur[280];
    buf_printf(&value, "%.*s %.*s", (int)rl, raft, (int)ul, url);
    if (value.oom || memchr(value.data, '\0', value.len) ||
        config_cluster_parse(value.data, ra, sizeof ra, ur, sizeof ur, &why) != 0) {
        cmd_ko_format(r, "Not a node: %s !", why.data ? why.data : "out of memory");
    } else {
        answer_change(cluster_add_node(srv->cluster, id, ra, ur, &msg), &msg, r);
    }
    buf_free(&value);
    buf_free(&why);
    buf_free(&msg);
}

void cmd_cluster_remove(const cmd_server *srv, const params *p, cmd_result *r)
{
    if (!srv->cluster)
        return cmd_ko(r, 400, MSG_ALONE);
    unsigned id = node_param(p, r);
    if (!id)
        return;
    buf msg = BUF_INIT;
    answer_change(cluster_remove_node(srv->cluster, id, &msg), &msg, r);
    buf_free(&msg);
}
