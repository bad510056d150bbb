/* SPDX-License-Identifier: Apache-2.0 */
/* recover_map.c - the replay's state: its lists by name and their open leases by (list,
 * id), so that each record finds what it changes at once, among a million, and a list
 * record applied to them (the same rules for a start's replay and a standby's records as
 * they come); its keys, whose records each carry the key's state after the change, so
 * that applying them in log order (a compaction's copies included) gives the state at the
 * end of the log. */
#include "recover_map.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "wal.h"

/* ---- names to lists --------------------------------------------------------------------- */

rent *recover_map_find(const recover_map *m, const char *name, size_t len)
{
    if (!m->nb)
        return NULL;
    for (rent *e = m->b[hash_fnv1a(name, len) & (m->nb - 1)]; e; e = e->next)
        if (e->name_len == len && memcmp(e->name, name, len) == 0)
            return e;
    return NULL;
}

rent *recover_map_get(recover_map *m, const char *name, size_t len)
{
    rent *e = recover_map_find(m, name, len);
    if (e)
        return e;
    if (m->n >= m->nb) {
        size_t nb = m->nb ? m->nb * 2 : 256;
        rent **b = calloc(nb, sizeof *b);
        if (!b)
            return NULL;
        for (size_t i = 0; i < m->nb; i++)
            for (rent *o = m->b[i], *next; o; o = next) {
                next = o->next;
                size_t k = hash_fnv1a(o->name, o->name_len) & (nb - 1);
                o->next = b[k];
                b[k] = o;
            }
        free(m->b);
        m->b = b;
        m->nb = nb;
    }
    if (!(e = calloc(1, sizeof *e + len + 1)))
        return NULL;
    size_t k = hash_fnv1a(name, len) & (m->nb - 1);
    memcpy(e->name, name, len);
    e->name_len = len;
    e->next = m->b[k];
    m->b[k] = e;
    m->n++;
    return e;
}

/* ---- open leases by (list, id) ----------------------------------------------------------- */

static size_t lease_slot(const void *owner, uint64_t id, size_t nb)
{
    uint64_t h = id ^ ((uint64_t)(uintptr_t)owner * 0x9E3779B97F4A7C15ULL);
    h *= 0xFF51AFD7ED558CCDULL;
    return (size_t)(h >> 32) & (nb - 1);
}

rlease *recover_lease_find(const recover_map *m, const rent *e, uint64_t id)
{
    if (!m->lnb)
        return NULL;
    for (rlease *l = m->lb[lease_slot(e, id, m->lnb)]; l; l = l->hnext)
        if (l->id == id && l->owner == e)
            return l;
    return NULL;
}

int recover_lease_add(recover_map *m, rent *e, rlease *l)
{
    if (m->ln >= m->lnb) {
        size_t nb = m->lnb ? m->lnb * 2 : 1024;
        rlease **b = calloc(nb, sizeof *b);
        if (!b)
            return -1;
        for (size_t i = 0; i < m->lnb; i++)
            for (rlease *o = m->lb[i], *next; o; o = next) {
                next = o->hnext;
                size_t k = lease_slot(o->owner, o->id, nb);
                o->hnext = b[k];
                b[k] = o;
            }
        free(m->lb);
        m->lb = b;
        m->lnb = nb;
    }
    size_t k = lease_slot(e, l->id, m->lnb);
    l->owner = e;
    l->hnext = m->lb[k];
    m->lb[k] = l;
    m->ln++;
    l->prev = NULL;
    l->next = e->leases;
    if (e->leases)
        e->leases->prev = l;
    e->leases = l;
    e->nleases++;
    return 0;
}

void recover_lease_remove(recover_map *m, rent *e, rlease *l)
{
    if (m->lnb) {
        rlease **pp = &m->lb[lease_slot(e, l->id, m->lnb)];
        while (*pp && *pp != l)
            pp = &(*pp)->hnext;
        if (*pp) {
            *pp = l->hnext;
            m->ln--;
        }
    }
    if (l->prev)
        l->prev->next = l->next;
    else
        e->leases = l->next;
    if (l->next)
        l->next->prev = l->prev;
    e->nleases--;
    free(l);
}

void recover_drop_leases(recover_map *m, rent *e)
{
    while (e->leases)
        recover_lease_remove(m, e, e->leases);
}

void recover_map_free(recover_map *m)
{
    free(m->lb);            /* the leases are freed with their lists below */
    m->lb = NULL;
    m->lnb = m->ln = 0;
    for (size_t i = 0; i < m->nb; i++)
        for (rent *e = m->b[i], *next; e; e = next) {
            next = e->next;
            recover_drop_leases(m, e);
            list_free(e->l);
            free(e);
        }
    free(m->b);
    m->b = NULL;
    m->nb = m->n = 0;
}

/* ---- a list record applied ------------------------------------------------------------- */

/* A TAKE: positions one after the other, each in the list as left by the last. */
static int apply_take(const wal_rec *r, list *l, char *why, size_t wl)
{
    const uint8_t *p = r->data, *end = r->data + r->data_len;
    for (uint64_t i = 0; i < r->n; i++) {
        uint64_t pos;
        if (wal_get_varint(&p, end, &pos) != 0)
            return snprintf(why, wl, "malformed positions"), RECOVER_BAD;
        if (!l || pos >= list_length(l)) {
            snprintf(why, wl, "takes line %llu of a list of %zu lines",
                     (unsigned long long)pos, l ? list_length(l) : 0);
            return RECOVER_BAD;
        }
        if ((r->flag ? list_move_to_back(l, (size_t)pos) : list_remove(l, (size_t)pos)) != 0)
            return RECOVER_NOMEM;
    }
    return p == end ? 0 : (snprintf(why, wl, "malformed positions"), RECOVER_BAD);
}

/* A LEASE or an OWN (a line on loan, to an owner for OWN: its TAKE came before), a RENEW
 * (a new deadline; a lease unknown has been settled) or a SETTLE (ACK forgets the lease;
 * RELEASE also puts its line back at the head, even if the lease is unknown). */
static int apply_lease(recover_map *m, const wal_rec *r, rent *e)
{
    rlease *known = recover_lease_find(m, e, r->id);
    if (r->type == WAL_RENEW) {
        if (known)
            known->until = (int64_t)r->n;
        return 0;
    }
    if (r->type == WAL_LEASE || r->type == WAL_OWN) {
        if (known)
            return 0;               /* carried again by a compaction */
        rlease *l = malloc(sizeof *l + r->data_len + r->owner_len + 1);
        if (!l)
            return RECOVER_NOMEM;
        l->id = r->id;
        l->until = (int64_t)r->n;
        l->len = r->data_len;
        l->who_len = r->owner_len;
        memcpy(l->line, r->data, r->data_len);
        if (r->owner_len)
            memcpy(l->line + r->data_len, r->owner, r->owner_len);
        if (recover_lease_add(m, e, l) != 0) {
            free(l);
            return RECOVER_NOMEM;
        }
        return 0;
    }
    if (known)
        recover_lease_remove(m, e, known);
    if (r->flag) {
        if (!e->l && !(e->l = list_create()))
            return RECOVER_NOMEM;
        if (list_push_front(e->l, (const char *)r->data, r->data_len) != 0)
            return RECOVER_NOMEM;
    }
    return 0;
}

int recover_map_apply(recover_map *m, rent *e, const wal_rec *r, list *def, char *why,
                      size_t wl)
{
    list *fresh = NULL;
    const char *cwhy = "out of memory";
    if (r->type == WAL_DROP) {  /* its defining record or not: the list is gone */
        list_free(def);
        list_free(e->l);        /* nothing of it is handed over unless it comes back */
        e->l = NULL;
        recover_drop_leases(m, e);
        return 0;
    } else if (def) {
        fresh = def;
    } else if (r->type == WAL_REPLACE || r->type == WAL_SNAPSHOT) {
        return 0;               /* not its list's definition: the state holds it already */
    } else if (r->type == WAL_RESET ||
               ((r->type == WAL_PUSH || r->type == WAL_PUSH_MANY) && !e->l)) {
        /* RESET empties a list and keeps its columns, as the store does. */
        if (!(fresh = list_create()) ||
            (r->type == WAL_RESET && e->l && list_copy_columns(fresh, e->l) != 0)) {
            list_free(fresh);
            return RECOVER_NOMEM;
        }
    }
    if (fresh) {
        list_free(e->l);
        e->l = fresh;
        if (r->type != WAL_PUSH && r->type != WAL_PUSH_MANY)
            recover_drop_leases(m, e);
    }
    if (r->type == WAL_LEASE || r->type == WAL_SETTLE || r->type == WAL_OWN ||
        r->type == WAL_RENEW)
        return apply_lease(m, r, e);
    if (r->type == WAL_COLUMNS) {
        /* The columns of the list its REPLACE or SNAPSHOT just defined. One after the
         * SNAPSHOT of a compaction left unfinished names the columns the list had then,
         * which replay has reached too: setting them again changes nothing. */
        if (!e->l && !(e->l = list_create()))
            return RECOVER_NOMEM;
        if (wal_columns_apply(r, e->l, &cwhy) != 0)
            return snprintf(why, wl, "%s", cwhy), RECOVER_BAD;
        return 0;
    }
    if (r->type == WAL_PUSH) {
        const char *s = (const char *)r->data;
        if ((r->flag ? list_push_back(e->l, s, r->data_len)
                     : list_push_front(e->l, s, r->data_len)) != 0)
            return RECOVER_NOMEM;
    } else if (r->type == WAL_PUSH_MANY) {
        /* wal_decode checked that the count and the lines agree. */
        const uint8_t *p = r->data, *end = r->data + r->data_len;
        const char *s;
        size_t len;
        while (wal_next_line(&p, end, &s, &len) == 1)
            if ((r->flag ? list_push_back(e->l, s, len) : list_push_front(e->l, s, len)) != 0)
                return RECOVER_NOMEM;
    } else if (r->type == WAL_TAKE) {
        return apply_take(r, e->l, why, wl);
    }
    return 0;
}

/* ---- the keys ------------------------------------------------------------------------- */

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

int rkeys_get(const rkeys *m, const char *name, size_t len, buf *out, uint64_t *version)
{
    for (const rkey *k = m->b[hash_fnv1a(name, len) & (m->nb - 1)]; k; k = k->next)
        if (k->name_len == len && memcmp(k->name, name, len) == 0 && k->version) {
            buf_append(out, k->value, k->len);
            *version = k->version;
            return 1;
        }
    return 0;
}

/* Names in byte order, a prefix first: as KEYS sorts a store's keys (keys_view.c). */
static int by_key_name(const void *a, const void *b)
{
    const rkey *x = *(const rkey *const *)a, *y = *(const rkey *const *)b;
    int c = memcmp(x->name, y->name, x->name_len < y->name_len ? x->name_len : y->name_len);
    return c ? c : (x->name_len > y->name_len) - (x->name_len < y->name_len);
}

long rkeys_list(const rkeys *m, const char *prefix, void (*fn)(const key_info *k, void *ctx),
                void *ctx)
{
    size_t plen = prefix ? strlen(prefix) : 0, n = 0;
    const rkey **v = malloc((m->n ? m->n : 1) * sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < m->nb; i++)
        for (const rkey *k = m->b[i]; k; k = k->next)
            if (k->version && k->name_len >= plen && n < m->n &&
                (!plen || memcmp(k->name, prefix, plen) == 0))
                v[n++] = k;
    qsort(v, n, sizeof *v, by_key_name);
    for (size_t i = 0; i < n; i++) {
        key_info ki = {v[i]->name, v[i]->value ? v[i]->value : "", v[i]->len, v[i]->version,
                       0, 0};
        fn(&ki, ctx);
    }
    free(v);
    return (long)n;
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
