/* SPDX-License-Identifier: Apache-2.0 */
/* commit.h - the answer to a change goes out only once the change's journal record is as
 * durable as the fsync policy promises; meanwhile the request waits, holding no HTTP
 * thread, while the journal's writer syncs whole batches (group commit). */
#ifndef STSD_COMMIT_H
#define STSD_COMMIT_H

#include <stdint.h>

#include "cmd/result.h"
#include "journal/journal.h"

/* The KO of a change that could not be made durable. */
#define COMMIT_NOT_DURABLE "Journal not writable, changes refused !"
/* The same in a cluster, where the leader lost its leadership with the change in flight. */
#define COMMIT_UNKNOWN "Outcome unknown: the leader changed before this change was " \
    "committed; it may or may not have been made !"

/* A replica that no longer leads, asked to answer a read. */
#define COMMIT_NO_LEADER "No leader: the cluster is electing one, retry !"

/* After a command ran (and did not park r): takes r's change (r->lsn, cleared) into
 * *lsn. fence: with a replicated journal, an answer that changed nothing waits too, for
 * a record shipped after it (journal_fence), so that only a node that still leads
 * answers it (CLUSTER and STOP, answered by whichever node is asked, do not). Returns 0 if r may be answered now: no change, or durable as the fsync policy
 * promises, or never to be (r is then the KO that says so). Returns 1 if the change is
 * not durable yet: the caller waits, without a thread, asking commit_ready at each of
 * its turns; the journal's answer hook (journal_set_answer_hook) says when to ask. */
int commit_begin(struct journal *j, cmd_result *r, uint64_t *lsn, int fence);

/* Asks again, without a lock: 1 if the change at lsn is still not durable; 0 if r may
 * be answered now (as it is, or as the KO commit_begin would have made it). */
int commit_ready(struct journal *j, cmd_result *r, uint64_t lsn);

/* For an ender that claimed parked slot s and wrote its answer, reporting a change at lsn
 * (0: none): finishes s (park_finish) once lsn is durable, now or from the journal's
 * writer; if it never will be, with the KO that says so instead. */
void commit_finish(struct journal *j, park_slot *s, uint64_t lsn);

/* Turns r, whose change could not be made durable, into the KO that says so (503 and
 * "outcome unknown" when j is replicated). */
void commit_ko_not_durable(struct journal *j, cmd_result *r);

#endif
