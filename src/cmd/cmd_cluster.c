/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_cluster.c - CLUSTER: each node's id, URL and role, this node's term and indexes,
 * and, on the leader, how far each follower lags. Answered by the node asked, never
 * forwarded, so that it works while there is no leader. */
#include "cmd_cluster.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cluster/cluster.h"
#include "cmd_answer.h"
#include "base/num.h"
#include "config/config.h"

#define MSG_ALONE "No cluster: this stsd runs alone (stsd.cluster.self is not set) !"

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
        if (n->known)
            snprintf(v, sizeof v, "%s %s %s lag=%llu", n->role, n->url, n->raft,
                     (unsigned long long)(s.commit > n->match ? s.commit - n->match : 0));
        else
            snprintf(v, sizeof v, "%s %s %s", n->role, n->url, n->raft);
        cmd_entry_s(b, k, "=", v);
    }
}

/* NODE=: a node id, 1..CONF_CLUSTER_MAX. Returns it, or 0 with the KO in r. */
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
