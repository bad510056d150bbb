/* SPDX-License-Identifier: Apache-2.0 */
/* replica.c - the app's side of the cluster: a replica's journal, its store loaded when it
 * comes to lead, a restart when it stops leading.
 *
 * Why a restart: the leader applies a change to its store before raft commits it. A
 * leader deposed with changes in flight would keep in memory what the cluster may never
 * commit; starting again from raft's log and snapshot drops exactly that, with the code
 * every start runs. The HTTP port is closed for the moment the new process takes to bind
 * it again; clients see a refused connection or a 503, both retryable. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "app/replica.h"
#include "base/log.h"
#include "dataset/dataset.h"
#include "store/store.h"

/* How long a planned stop waits for a follower to take the leadership. */
#define HANDOVER_MS 2000

/* mkdir -p: raft wants its directory made. */
static int make_dir(const char *path)
{
    char p[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof p)
        return -1;
    memcpy(p, path, n + 1);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            if (mkdir(p, 0700) != 0 && errno != EEXIST)
                return -1;
            *s = '/';
        }
    return mkdir(p, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

int replica_open_journal(const char *state_dir, store *st, struct journal **out)
{
    buf err = BUF_INIT;
    *out = journal_open_replica(state_dir, st, &err);
    if (!*out) {
        log_error("%s", err.data ? err.data : "out of memory");
        buf_free(&err);
        return -1;
    }
    journal_attach(*out, st);
    buf_free(&err);
    return 0;
}

static void on_promote(void *ctx)
{
    replica *r = ctx;
    cmd_server *srv = r->srv;
    buf err = BUF_INIT;
    /* The recorder stays attached: the lease timer may end an adopted lease past its
     * deadline at once, and that change must be in the log like any other (the store's
     * adoption records nothing). */
    int rc = journal_reload(srv->j, srv->st, &err);
    if (rc != 0) {
        log_error("cluster: cannot load the state to lead: %s; restarting",
                  err.data ? err.data : "out of memory");
        buf_free(&err);
        atomic_store(&r->restart, 1);
        r->request_stop();
        return;
    }
    buf_free(&err);
    cluster_set_serving(r->c);
    log_info("cluster: node %u serves as the leader (%zu lists)", cluster_self(r->c),
             store_count(srv->st));
    /* A new cluster's first leader loads the files, as a lone stsd does at its start;
     * later leaders find them in the journal. */
    if (store_count(srv->st) == 0 && srv->conf->init_file_at_startup &&
        *srv->conf->init_file_at_startup && command_init_at_startup(srv) != 0)
        log_error("cluster: initFileAtStartup failed on the new leader");
}

static void on_deposed(void *ctx)
{
    replica *r = ctx;
    if (atomic_load(r->stopping))
        return;                   /* a planned stop handed the leadership over */
    log_warn("cluster: restarting, to follow the new leader without the changes this node "
             "had not got committed");
    atomic_store(&r->restart, 1);
    r->request_stop();
}

int replica_start(replica *r, const char *state_dir)
{
    const config *conf = r->srv->conf;
    buf err = BUF_INIT, dir = BUF_INIT;
    if (conf->cluster_dir && *conf->cluster_dir)
        buf_puts(&dir, conf->cluster_dir);
    else
        buf_printf(&dir, "%s/raft", state_dir);
    cluster_hooks h = {on_promote, on_deposed, r};
    if (!dir.oom && make_dir(dir.data) != 0)
        log_warn("cluster: cannot create %s", dir.data);
    r->c = dir.oom ? NULL : cluster_start(conf, dir.data, r->srv->j,
                                            dataset_path(r->srv->ds), &h, &err);
    if (!r->c)
        log_error("%s", err.data ? err.data : "out of memory");
    r->srv->cluster = r->c;
    buf_free(&err);
    buf_free(&dir);
    return r->c ? 0 : -1;
}

void replica_handover(replica *r)
{
    if (r->c)
        cluster_handover(r->c, HANDOVER_MS);
}

void replica_stop(replica *r)
{
    cluster_stop(r->c);
    r->c = NULL;
}
