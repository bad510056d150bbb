/* SPDX-License-Identifier: Apache-2.0 */
/* iplimit.c - per-address connection counts: a chained hash table under one mutex,
 * an entry for each address with connections open. */
#include "guard/iplimit.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "guard/addr.h"

#define IPLIMIT_BUCKETS 1024

typedef struct ip_key {
    unsigned char b[ADDR_KEY_SIZE];
} ip_key;

typedef struct ip_entry {
    struct ip_entry *next;
    ip_key key;
    unsigned open;
} ip_entry;

struct iplimit {
    pthread_mutex_t mu;
    unsigned max;
    ip_entry *bucket[IPLIMIT_BUCKETS];
};

static unsigned bucket_of(const ip_key *k)
{
    return (unsigned)(hash_fnv1a(k->b, ADDR_KEY_SIZE) % IPLIMIT_BUCKETS);
}

/* The entry for k, or NULL; *link is where it hangs (to unlink it). Under mu. */
static ip_entry *find(iplimit *l, const ip_key *k, ip_entry ***link)
{
    ip_entry **p = &l->bucket[bucket_of(k)];
    while (*p && memcmp((*p)->key.b, k->b, ADDR_KEY_SIZE) != 0)
        p = &(*p)->next;
    if (link)
        *link = p;
    return *p;
}

iplimit *iplimit_new(unsigned max)
{
    iplimit *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    pthread_mutex_init(&l->mu, NULL);
    l->max = max;
    return l;
}

void iplimit_free(iplimit *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < IPLIMIT_BUCKETS; i++)
        for (ip_entry *e = l->bucket[i]; e;) {
            ip_entry *next = e->next;
            free(e);
            e = next;
        }
    pthread_mutex_destroy(&l->mu);
    free(l);
}

unsigned iplimit_count(iplimit *l, const struct sockaddr *addr, socklen_t len)
{
    ip_key k;
    if (addr_key(addr, len, k.b) != 0)
        return 0;
    pthread_mutex_lock(&l->mu);
    ip_entry *e = find(l, &k, NULL);
    unsigned n = e ? e->open : 0;
    pthread_mutex_unlock(&l->mu);
    return n;
}

int iplimit_admits(iplimit *l, const struct sockaddr *addr, socklen_t len)
{
    return iplimit_count(l, addr, len) < l->max;
}

int iplimit_open(iplimit *l, const struct sockaddr *addr, socklen_t len)
{
    ip_key k;
    if (addr_key(addr, len, k.b) != 0)
        return -1;
    int rc = 0;
    pthread_mutex_lock(&l->mu);
    ip_entry **link;
    ip_entry *e = find(l, &k, &link);
    if (!e && (e = calloc(1, sizeof *e)) != NULL) {
        e->key = k;
        *link = e;
    }
    if (e)
        e->open++;
    else
        rc = -1;
    pthread_mutex_unlock(&l->mu);
    return rc;
}

void iplimit_close(iplimit *l, const struct sockaddr *addr, socklen_t len)
{
    ip_key k;
    if (addr_key(addr, len, k.b) != 0)
        return;
    pthread_mutex_lock(&l->mu);
    ip_entry **link;
    ip_entry *e = find(l, &k, &link);
    if (e && --e->open == 0) {
        *link = e->next;
        free(e);
    }
    pthread_mutex_unlock(&l->mu);
}
