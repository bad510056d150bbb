/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_cluster.c - CLUSTER: each node's id, URL and role, this node's term and indexes,
 * and, on the leader, how far each follower lags. Answered by the node asked, never
 * forwarded, so that it works while there is no leader. */
#include "cmd_cluster.h"

#include <stdio.h>

#include "cluster/cluster.h"
#include "cmd_answer.h"

#define MSG_ALONE "No cluster: this stsd runs alone (stsd.cluster.self is not set) !"

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
