/* commit.h - the answer to a change goes out only once the change's journal record is as
 * durable as the fsync policy promises; meanwhile the request is parked, holding no
 * HTTP thread, while the journal's writer syncs whole batches (group commit). */
#ifndef STSD_COMMIT_H
#define STSD_COMMIT_H

#include "server/command.h"

/* After a command ran: if r reports a change (r->lsn) that the journal of srv has not
 * made durable yet, parks r (sets r->park; the journal's writer ends the slot with r's
 * answer once the record is on disk); if it never will be, turns r into the KO that
 * says so; otherwise leaves r as it is. Clears r->lsn. Without a lot of parked requests
 * (or out of memory) it blocks the calling thread instead. */
void commit_answer(const cmd_server *srv, cmd_result *r);

/* For an ender that claimed parked slot s and wrote its answer, reporting a change at lsn
 * (0: none): finishes s (park_finish) once lsn is durable, now or from the journal's
 * writer; if it never will be, with the KO that says so instead. */
void commit_finish(const cmd_server *srv, park_slot *s, uint64_t lsn);

#endif
