/* SPDX-License-Identifier: Apache-2.0 */
/* recover_keys.c - replaying the keys: every key record carries the key's state after the
 * change, so applying them in log order (a compaction's copies included) gives the
 * state at the end of the log. */
#include "recover_keys.h"

#include <stdlib.h>
#include <string.h>

#include "base/hash.h"

typedef struct rklease {
    struct rklease *next;
    uint64_t id;
    int64_t until;
    int64_t by;
} rklease;

typedef struct rkey {
    struct rkey *next;
    uint64_t version;            /* 0: deleted */
    char *value;
    size_t len;
    rklease *leases;
    size_t nleases;
    uint64_t run_id;             /* ONCE's run in progress (0: none) */
    int64_t run_until;
    int64_t run_ttl;             /* the TTL its DONE gives the key */
    int64_t expires;             /* the key's deadline (0: none) */
    size_t name_len;
    char name[];
} rkey;

struct rkeys {
    rkey **b;
    size_t nb, n;
};

static rkey *get(rkeys *m, const char *name, size_t len)
{
    for (rkey *k = m->b[hash_fnv1a(name, len) & (m->nb - 1)]; k; k = k->next)
        if (k->name_len == len && memcmp(k->name, name, len) == 0)
            return k;
    if (m->n >= m->nb) {
        size_t nb = m->nb * 2;
        rkey **b = calloc(nb, sizeof *b);
        if (!b)
            return NULL;
        for (size_t i = 0; i < m->nb; i++)
            for (rkey *o = m->b[i], *next; o; o = next) {
                next = o->next;
                size_t h = hash_fnv1a(o->name, o->name_len) & (nb - 1);
                o->next = b[h];
                b[h] = o;
            }
        free(m->b);
        m->b = b;
        m->nb = nb;
    }
    rkey *k = calloc(1, sizeof *k + len + 1);
    if (!k)
        return NULL;
    memcpy(k->name, name, len);
    k->name_len = len;
    size_t h = hash_fnv1a(name, len) & (m->nb - 1);
    k->next = m->b[h];
    m->b[h] = k;
    m->n++;
    return k;
}

static void drop_leases(rkey *k)
{
    while (k->leases) {
        rklease *next = k->leases->next;
        free(k->leases);
        k->leases = next;
    }
    k->nleases = 0;
}

int rkeys_apply(rkeys **mp, const wal_rec *r)
{
    if (!*mp) {
        rkeys *m = calloc(1, sizeof *m);
        if (!m || !(m->b = calloc(256, sizeof *m->b))) {
            free(m);
            return -1;
        }
        m->nb = 256;
        *mp = m;
    }
    rkey *k = get(*mp, r->name, r->name_len);
    if (!k)
        return -1;
    if (r->type == WAL_KEY_EXPIRE) {
        if (k->version)         /* the deadline the record holds: no clock read here */
            k->expires = (int64_t)r->n;
        return 0;
    }
    k->run_id = r->type == WAL_KEY_RUN ? r->id : 0;
    k->run_until = (int64_t)r->n;
    k->run_ttl = r->type == WAL_KEY_RUN ? r->by : 0;
    if (r->type == WAL_KEY_RUN)
        return 0;
    if (r->type == WAL_KEY_DEL || (r->type == WAL_KEY_SET && r->flag))
        drop_leases(k);
    /* A SET gives the key its TTL= or none; an INCR with TTL= gives it one, without keeps
     * the key's; a DEL ends it. */
    if (r->type == WAL_KEY_DEL || (r->type == WAL_KEY_SET && (r->flag || r->expires)))
        k->expires = r->type == WAL_KEY_SET ? r->expires : 0;
    if (r->type == WAL_KEY_DEL) {
        free(k->value);
        k->value = NULL;
        k->len = 0;
        k->version = 0;
        return 0;
    }
    char *v = malloc(r->data_len ? r->data_len : 1);
    if (!v)
        return -1;
    memcpy(v, r->data, r->data_len);
    free(k->value);
    k->value = v;
    k->len = r->data_len;
    k->version = r->version;
    rklease **pp = &k->leases;
    while (*pp && (*pp)->id != r->id)
        pp = &(*pp)->next;
    if (r->type == WAL_KEY_SETTLE && *pp) {
        rklease *l = *pp;
        *pp = l->next;
        free(l);
        k->nleases--;
    } else if (r->type == WAL_KEY_LEASE && !*pp) {
        rklease *l = malloc(sizeof *l);
        if (!l)
            return -1;
        l->id = r->id;
        l->until = (int64_t)r->n;
        l->by = r->by;
        l->next = k->leases;
        k->leases = l;
        k->nleases++;
    }
    return 0;
}

static int cmp_key(const void *a, const void *b)
{
    return strcmp((*(const rkey *const *)a)->name, (*(const rkey *const *)b)->name);
}

int rkeys_hand_over(rkeys *m, recover_state *rs)
{
    if (!m)
        return 0;
    size_t n = 0, nl = 0, nr = 0;
    for (size_t i = 0; i < m->nb; i++)
        for (rkey *k = m->b[i]; k; k = k->next)
            nr += !k->version && k->run_id;
    rs->runs = calloc(nr ? nr : 1, sizeof *rs->runs);
    if (!rs->runs)
        return -1;
    for (size_t i = 0; i < m->nb; i++)
        for (rkey *k = m->b[i]; k; k = k->next)
            if (!k->version && k->run_id) {
                struct recover_run *o = &rs->runs[rs->nruns];
                if (!(o->name = strdup(k->name)))
                    return -1;
                o->id = k->run_id;
                o->until = k->run_until;
                o->ttl_ms = k->run_ttl;
                rs->nruns++;
            }
    rkey **v = malloc((m->n ? m->n : 1) * sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < m->nb; i++)
        for (rkey *k = m->b[i]; k; k = k->next)
            if (k->version) {
                v[n++] = k;
                nl += k->nleases;
            }
    qsort(v, n, sizeof *v, cmp_key);
    rs->keys = calloc(n ? n : 1, sizeof *rs->keys);
    rs->key_leases = calloc(nl ? nl : 1, sizeof *rs->key_leases);
    if (!rs->keys || !rs->key_leases) {
        free(v);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        struct recover_key *o = &rs->keys[rs->nkeys];
        o->name = v[i]->name;
        o->value = v[i]->value;
        o->len = v[i]->len;
        o->version = v[i]->version;
        o->expires = v[i]->expires;
        if (!(o->name = strdup(v[i]->name)))
            break;
        v[i]->value = NULL;
        rs->nkeys++;
        for (rklease *l = v[i]->leases; l; l = l->next)
            rs->key_leases[rs->nkey_leases++] =
                (struct recover_key_lease){i, l->id, l->until, l->by};
    }
    int rc = rs->nkeys == n ? 0 : -1;
    free(v);
    return rc;
}

void rkeys_free(rkeys *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->nb; i++)
        for (rkey *k = m->b[i], *next; k; k = next) {
            next = k->next;
            drop_leases(k);
            free(k->value);
            free(k);
        }
    free(m->b);
    free(m);
}
