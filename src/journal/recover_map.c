/* SPDX-License-Identifier: Apache-2.0 */
/* recover_map.c - the replay's lists by name and their open leases by (list, id), so that
 * each record finds what it changes at once, among a million. */
#include "recover_map.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"

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
