/* SPDX-License-Identifier: Apache-2.0 */
/* cluster_entry.h - a raft entry of stsd's: its head and size (cluster_entry.c). */
#ifndef STSD_CLUSTER_ENTRY_H
#define STSD_CLUSTER_ENTRY_H

#include <stddef.h>
#include <stdint.h>

/* Kinds of entries: JOURNAL_BATCH (1), JOURNAL_FILE (2), JOURNAL_GEN (5) and
 * JOURNAL_TIDY (6) are the journal's pieces (journal.h); these are the cluster's own. */
#define CLUSTER_SAVE 3        /* a piece of SAVE's file (cluster_save.c) */
#define CLUSTER_NODES 4       /* the nodes' table: ids, raft addresses, URLs (members) */
#define CLUSTER_HEALTH 7      /* which nodes answer the leader (cluster_health.c) */

/* Bytes before a piece's data in an entry. */
#define CLUSTER_ENTRY_HEAD 32
/* Where the proposing process's nonce is in the head. */
#define CLUSTER_ENTRY_NONCE 8

/* An entry's head, decoded. */
typedef struct cluster_entry {
    int kind, last;
    uint64_t nonce, id, off;
    const uint8_t *data;
    size_t len;
} cluster_entry;

/* Encodes an entry's head into h (CLUSTER_ENTRY_HEAD bytes) for len bytes of data. */
void cluster_entry_head(uint8_t *h, int kind, uint64_t nonce, uint64_t id, uint64_t off,
                        int last, uint32_t len);
/* An entry's size for len bytes of data: the head, the data, zeros to a multiple of 8. */
size_t cluster_entry_size(size_t len);
/* Decodes an entry of size bytes. Returns 0, or -1 if its head and size disagree. */
int cluster_entry_read(const uint8_t *p, size_t size, cluster_entry *e);

void cluster_put64(uint8_t *p, uint64_t v);
uint64_t cluster_get64(const uint8_t *p);

#endif
