/* SPDX-License-Identifier: Apache-2.0 */
/* cluster_members.c - the nodes: who they are, where raft and HTTP reach them, and their
 * changes (CLUSTER ADD, CLUSTER REMOVE).
 *
 * raft's configuration knows ids and raft addresses; a follower that forwards a request
 * also needs the leader's URL. So the table of nodes is replicated too, as a
 * CLUSTER_NODES entry holding it whole, and travels in snapshots. A new node is added as
 * raft advises: its URL first (so that every node can reach it once it leads), then a
 * spare that receives the log, then a voter once it has caught up. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cluster.h"
#include "cluster_entry.h"
#include "cluster_members.h"
#include "cluster_queue.h"
#include "base/log.h"

int cluster_members_from_config(cluster *c, const config *conf, buf *err)
{
    c->n = 0;
    for (int id = 1; id <= CONF_CLUSTER_MAX; id++) {
        if (!conf->cluster_node[id] || !*conf->cluster_node[id])
            continue;
        cluster_node *n = &c->nodes[c->n];
        if (config_cluster_node(conf, id, n->raft, sizeof n->raft, n->url, sizeof n->url)
            != 0) {
            buf_printf(err, "stsd.cluster.node.%d: not RAFT_ADDRESS HTTP_URL", id);
            return -1;
        }
        n->id = (unsigned)id;
        c->n++;
    }
    return 0;
}

int cluster_member_url(cluster *c, unsigned id, char *url, size_t cap)
{
    int rc = -1;
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < c->n; i++)
        if (c->nodes[i].id == id) {
            snprintf(url, cap, "%s", c->nodes[i].url);
            rc = 0;
        }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

static void encode_locked(const cluster_node *v, size_t n, buf *out)
{
    for (size_t i = 0; i < n; i++)
        buf_printf(out, "%u %s %s\n", v[i].id, v[i].raft, v[i].url);
}

void cluster_members_encode(cluster *c, buf *out)
{
    pthread_mutex_lock(&c->mu);
    encode_locked(c->nodes, c->n, out);
    pthread_mutex_unlock(&c->mu);
}

int cluster_members_apply(cluster *c, const uint8_t *data, size_t len)
{
    cluster_node v[CONF_CLUSTER_MAX];
    size_t n = 0;
    const char *p = (const char *)data, *end = p + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        char line[600];
        size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
        unsigned id;
        if (n == CONF_CLUSTER_MAX || l >= sizeof line)
            return -1;
        memcpy(line, p, l);
        line[l] = '\0';
        /* Widths from cluster_node's fields. */
        if (sscanf(line, "%u %263s %279s", &id, v[n].raft, v[n].url) != 3 || id == 0 ||
            id > CONF_CLUSTER_MAX)
            return -1;
        v[n++].id = id;
        p += l + (nl != NULL);
    }
    pthread_mutex_lock(&c->mu);
    memcpy(c->nodes, v, n * sizeof *v);
    c->n = n;
    pthread_mutex_unlock(&c->mu);
    return 0;
}

/* Proposes the table v[0..n) and waits for its commit. */
static int propose_table(cluster *c, const cluster_node *v, size_t n)
{
    buf b = BUF_INIT;
    encode_locked(v, n, &b);
    int rc = b.oom ? -1 : cluster_propose(c, CLUSTER_NODES, 0, 0, 1, b.data, b.len);
    buf_free(&b);
    return rc;
}

int cluster_add_node(cluster *c, unsigned id, const char *raft, const char *url, buf *msg)
{
    cluster_node v[CONF_CLUSTER_MAX];
    char why[256];
    pthread_mutex_lock(&c->mu);
    size_t n = c->n;
    memcpy(v, c->nodes, n * sizeof *v);
    pthread_mutex_unlock(&c->mu);
    for (size_t i = 0; i < n; i++)
        if (v[i].id == id || strcmp(v[i].raft, raft) == 0 || strcmp(v[i].url, url) == 0) {
            buf_printf(msg, "Node %u is already in the cluster, or its address or URL is "
                       "node %u's !", id, v[i].id);
            return 409;
        }
    if (n == CONF_CLUSTER_MAX) {
        buf_printf(msg, "The cluster has %d nodes already, the most it may have !",
                   CONF_CLUSTER_MAX);
        return 409;
    }
    v[n].id = id;
    snprintf(v[n].raft, sizeof v[n].raft, "%s", raft);
    snprintf(v[n].url, sizeof v[n].url, "%s", url);
    if (propose_table(c, v, n + 1) != 0) {
        buf_printf(msg, "Outcome unknown: the leader changed before node %u's URL was "
                   "committed !", id);
        return 503;
    }
    log_info("cluster: adding node %u (raft %s, %s)", id, raft, url);
    if (cluster_change(c, CLUSTER_OP_ADD, id, raft, why, sizeof why) != 0) {
        buf_printf(msg, "Node %u could not be added: %s !", id, why);
        return 503;
    }
    /* raft promotes it once it has caught up, in rounds of at most an election timeout. */
    if (cluster_change(c, CLUSTER_OP_VOTER, id, NULL, why, sizeof why) != 0) {
        buf_printf(msg, "Node %u was added as a spare, but not made a voter: %s; remove it "
                   "and add it again once it runs !", id, why);
        return 503;
    }
    log_info("cluster: node %u is a voter", id);
    buf_printf(msg, "Node %u added: a voter, caught up", id);
    return 0;
}

int cluster_remove_node(cluster *c, unsigned id, buf *msg)
{
    cluster_node v[CONF_CLUSTER_MAX];
    char why[256];
    size_t n = 0, found = 0;
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < c->n; i++)
        if (c->nodes[i].id == id)
            found = 1;
        else
            v[n++] = c->nodes[i];
    pthread_mutex_unlock(&c->mu);
    if (!found) {
        buf_printf(msg, "No node %u in the cluster !", id);
        return 404;
    }
    if (n == 0) {
        buf_printf(msg, "Node %u is the last node: stop it instead !", id);
        return 409;
    }
    if (cluster_change(c, CLUSTER_OP_REMOVE, id, NULL, why, sizeof why) != 0) {
        buf_printf(msg, "Node %u could not be removed: %s !", id, why);
        return 503;
    }
    log_info("cluster: node %u removed", id);
    if (id != c->self && propose_table(c, v, n) != 0) {
        buf_printf(msg, "Node %u was removed, but the table of URLs was not updated: the "
                   "leader changed !", id);
        return 503;
    }
    buf_printf(msg, "Node %u removed", id);
    return 0;
}
