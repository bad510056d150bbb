/* SPDX-License-Identifier: Apache-2.0 */
/* cluster_fsm.h - raft's state machine: entries as pieces of the journal (cluster_fsm.c). */
#ifndef STSD_CLUSTER_FSM_H
#define STSD_CLUSTER_FSM_H

#include <stddef.h>
#include <stdint.h>

#include "cluster_int.h"
#include "journal/journal.h"

/* A piece that is no journal's: a SAVE's file (cluster_save.c). */
#define CLUSTER_SAVE 3

/* Bytes before a piece's data in an entry. */
#define CLUSTER_ENTRY_HEAD 32

/* Encodes an entry's head into h (CLUSTER_ENTRY_HEAD bytes) for len bytes of data. */
void cluster_entry_head(uint8_t *h, int kind, uint64_t nonce, uint64_t id,
                        uint64_t off, int last, uint32_t len);
/* An entry's size for len bytes of data: the head, the data, zeros to a multiple of 8. */
size_t cluster_entry_size(size_t len);

/* Fills c->fsm: apply writes committed pieces into c->j, snapshot and restore are the
 * state directory's image. */
void cluster_fsm_init(cluster *c);

#endif
