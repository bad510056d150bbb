/* SPDX-License-Identifier: Apache-2.0 */
/* cluster_fsm.h - raft's state machine: entries as pieces of the journal (cluster_fsm.c). */
#ifndef STSD_CLUSTER_FSM_H
#define STSD_CLUSTER_FSM_H

#include "cluster_int.h"

/* Fills c->fsm: apply writes committed pieces into c->j (and the nodes' table, SAVE's
 * files), snapshot and restore are the table and the state directory's image. */
void cluster_fsm_init(cluster *c);
/* This node stopped leading: on the loop's thread, before any other leader's entry is
 * applied. A new nonce, the journal demoted (journal_demote), the hooks' thread woken
 * for the deposed hook; no promotion until cluster_demoted. */
void cluster_fsm_demote(cluster *c);
/* Raft's thread: raft index idx is applied; wakes cluster_wait_applied's waiters. */
void cluster_note_applied(cluster *c, uint64_t idx);
/* Frees what snapshots kept between them; after raft stopped. */
void cluster_fsm_close(void);

#endif
