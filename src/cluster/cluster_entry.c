/* SPDX-License-Identifier: Apache-2.0 */
/* cluster_entry.c - the raft entries stsd proposes: a head, then the data.
 *
 * The head (32 bytes, little-endian): kind and last (a byte each), two zero bytes, the
 * data's length (4 bytes), the proposing process's nonce, a file's id and offset (8 bytes
 * each); then the data, padded with zeros to a multiple of 8 bytes: raft 0.15's disk
 * format pads entries so, and an entry of another length came back from disk misplaced
 * after a restart. */
#include <string.h>

#include "cluster_entry.h"

void cluster_put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

uint64_t cluster_get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

void cluster_entry_head(uint8_t *h, int kind, uint64_t nonce, uint64_t id, uint64_t off,
                        int last, uint32_t len)
{
    memset(h, 0, CLUSTER_ENTRY_HEAD);
    h[0] = (uint8_t)kind;
    h[1] = (uint8_t)(last != 0);
    for (int i = 0; i < 4; i++)
        h[4 + i] = (uint8_t)(len >> (8 * i));
    cluster_put64(h + CLUSTER_ENTRY_NONCE, nonce);
    cluster_put64(h + 16, id);
    cluster_put64(h + 24, off);
}

size_t cluster_entry_size(size_t len)
{
    return (CLUSTER_ENTRY_HEAD + len + 7) & ~(size_t)7;
}

int cluster_entry_read(const uint8_t *p, size_t size, cluster_entry *e)
{
    if (size < CLUSTER_ENTRY_HEAD)
        return -1;
    e->kind = p[0];
    e->last = p[1];
    e->len = (size_t)p[4] | (size_t)p[5] << 8 | (size_t)p[6] << 16 | (size_t)p[7] << 24;
    e->nonce = cluster_get64(p + CLUSTER_ENTRY_NONCE);
    e->id = cluster_get64(p + 16);
    e->off = cluster_get64(p + 24);
    e->data = p + CLUSTER_ENTRY_HEAD;
    return cluster_entry_size(e->len) == size ? 0 : -1;
}
