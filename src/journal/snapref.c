/* SPDX-License-Identifier: Apache-2.0 */
/* snapref.c - the snapshot file defining each list, the superseded ones due for removal,
 * and sets of snapshot ids. */
#include "snapref.h"

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/hash.h"

struct snapref_ent {
    snapref_ent *next;
    uint64_t hash;
    uint64_t id;
    char name[];
};

/* Doubles the buckets (from 64) when the map is as full as it has buckets. */
static int grow(snapref *m)
{
    size_t nb = m->nb ? m->nb * 2 : 64;
    snapref_ent **b = calloc(nb, sizeof *b);
    if (!b)
        return -1;
    for (size_t i = 0; i < m->nb; i++)
        for (snapref_ent *e = m->b[i], *next; e; e = next) {
            next = e->next;
            e->next = b[e->hash & (nb - 1)];
            b[e->hash & (nb - 1)] = e;
        }
    free(m->b);
    m->b = b;
    m->nb = nb;
    return 0;
}

int snapref_set(snapref *m, const char *name, uint64_t id, uint64_t *prev)
{
    uint64_t h = hash_fnv1a_str(name);
    *prev = 0;
    if (m->nb) {
        for (snapref_ent *e = m->b[h & (m->nb - 1)]; e; e = e->next)
            if (e->hash == h && strcmp(e->name, name) == 0) {
                *prev = e->id;
                e->id = id;
                return 0;
            }
    }
    if (m->n >= m->nb && grow(m) != 0)
        return -1;
    size_t len = strlen(name);
    snapref_ent *e = malloc(sizeof *e + len + 1);
    if (!e)
        return -1;
    e->hash = h;
    e->id = id;
    memcpy(e->name, name, len + 1);
    e->next = m->b[h & (m->nb - 1)];
    m->b[h & (m->nb - 1)] = e;
    m->n++;
    return 0;
}

int snapref_retire(snapref *m, uint64_t id, uint64_t lsn)
{
    if (array_grow(&m->old, &m->oldcap, m->nold, sizeof *m->old) != 0)
        return -1;
    /* Records come in lsn order nearly always; keep the queue sorted anyway. */
    size_t i = m->nold;
    while (i > 0 && m->old[i - 1].lsn > lsn) {
        m->old[i] = m->old[i - 1];
        i--;
    }
    m->old[i] = (snapref_old){id, lsn};
    m->nold++;
    return 0;
}

size_t snapref_due(snapref *m, uint64_t durable, uint64_t *out, size_t max)
{
    size_t n = 0;
    while (n < max && n < m->nold && m->old[n].lsn <= durable) {
        out[n] = m->old[n].id;
        n++;
    }
    if (n) {
        memmove(m->old, m->old + n, (m->nold - n) * sizeof *m->old);
        m->nold -= n;
    }
    return n;
}

uint64_t snapref_waiting(const snapref *m)
{
    return m->nold ? m->old[m->nold - 1].lsn : 0;
}

void snapref_free(snapref *m)
{
    for (size_t i = 0; i < m->nb; i++)
        for (snapref_ent *e = m->b[i], *next; e; e = next) {
            next = e->next;
            free(e);
        }
    free(m->b);
    free(m->old);
    *m = (snapref)SNAPREF_INIT;
}

int snapref_ids_add(snapref_ids *s, uint64_t id)
{
    if (array_grow(&s->v, &s->cap, s->n, sizeof *s->v) != 0)
        return -1;
    s->v[s->n++] = id;
    return 0;
}

void snapref_ids_del(snapref_ids *s, uint64_t id)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i] == id) {
            s->v[i] = s->v[--s->n];
            return;
        }
}
