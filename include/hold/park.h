/* SPDX-License-Identifier: Apache-2.0 */
/* park.h - parked requests: a request that cannot be answered now keeps its connection
 * suspended, holding no HTTP thread, until some thread ends it with an answer, its
 * deadline passes, or the server stops. Every parked request ends exactly once.
 *
 * The life of a slot:
 *   1. A command handler that cannot answer now calls park_new() and sets r->park to the
 *      slot; it then publishes the slot to whoever will end it (a wait queue, a journal
 *      writer), taking a reference with park_ref() for as long as it keeps the pointer.
 *   2. The HTTP edge suspends the connection and calls park_arm(). The slot may already
 *      have been ended by then: park_arm() then resumes at once.
 *   3. Exactly one ender wins: park_claim() (or park_complete(), which claims) returns 1
 *      to one caller only, whatever the race between a wake-up, the deadline, the
 *      server's shutdown and a client that is gone. The winner, alone, writes the answer
 *      into park_result() and calls park_finish(); the connection then resumes on its
 *      HTTP thread, which sends the answer. A loser does nothing more (it drops its
 *      reference with park_unref() when it forgets the slot).
 *   4. A deadline or a shutdown ends the slot on the lot's timer thread (or on the
 *      thread calling park_lot_shutdown) through the slot's expire callback, which fills
 *      the answer and withdraws the slot from wherever its owner published it.
 *
 * Who may touch what, and until when (the rule every thread keeps):
 *   - A slot lives while it holds a reference (park_ref/park_unref): its creator's, the
 *     HTTP edge's, and one per publisher (a wait queue, the journal) while it keeps the
 *     pointer. Any thread holding one may claim, finish or read the slot.
 *   - A slot never points at the edge's request: park_arm copies into the slot what a
 *     resume needs (the connection and its loop), so an ender's resume reads only the
 *     slot.
 *   - The resume runs under the slot's lock, and park_arm, park_take and park_abandon
 *     take that lock too. So once the edge has taken the answer (park_take) or given the
 *     slot up (park_abandon), no thread is still inside a resume of its connection: from
 *     then on the edge may send, close, reuse or free its request and connection, and
 *     the loop the connection runs on may stop.
 *
 * Locks: the lot's mutex and a slot's lock are the innermost locks of stsd (a slot's lock
 * is never held with the lot's; the resume callback under it takes only
 * libmicrohttpd's own). park_claim, park_finish, park_complete, park_client_gone,
 * park_ref and park_unref may be called under any other lock (a list's, the
 * journal's); expire callbacks run with no lot lock held. */
#ifndef STSD_PARK_H
#define STSD_PARK_H

#include <stdint.h>

#include "base/buf.h"
#include "cmd/result.h"

typedef struct park_lot park_lot;
typedef struct park_slot park_slot;

typedef enum park_why {
    PARK_TIMEOUT,     /* the slot's deadline passed */
    PARK_SHUTDOWN,    /* the server is stopping: answer now */
} park_why;

/* Ends slot s that its deadline or the shutdown claimed: fills r (the slot's result,
 * holding what the handler left in its result) with the answer to send, and withdraws s from wherever
 * its owner published it. Runs once, on the lot's timer thread or in
 * park_lot_shutdown(), with no lot lock held; ctx is park_new()'s. */
typedef void (*park_expire_fn)(park_slot *s, park_why why, cmd_result *r, void *ctx);

/* Resumes the connection of a finished slot (MHD_resume_connection); conn and arg are
 * park_arm's. Any thread, under the slot's lock: it must not take any lock of ours. */
typedef void (*park_resume_fn)(void *conn, void *arg);

/* Starts a lot and its timer thread. Returns NULL with a message in err. */
park_lot *park_lot_create(buf *err);

/* Ends every parked slot that has an expire callback with PARK_SHUTDOWN, at once, and
 * makes park_new() refuse from then on. Slots without a callback are left to their
 * owners. Call before stopping the HTTP server. */
void park_lot_shutdown(park_lot *lot);
/* Makes park_lot_shutdown answer every slot it ends with this KO (status, msg: static
 * text), after its expire callback ran: a replica that stopped leading tells its waiters
 * so, whatever they found. */
void park_lot_shutdown_answer(park_lot *lot, unsigned status, const char *msg);

/* Ends every parked slot that has an expire callback and was not kept (park_keep) as
 * park_lot_shutdown does, answering each with this KO (status, msg: static text), but
 * parks on: a replica that stopped leading tells its waiters so and goes on following. */
void park_lot_end(park_lot *lot, unsigned status, const char *msg);
/* Right after park_new, before s is published: park_lot_end leaves s to its owner (a
 * request forwarded to the leader, whose answer is on its way). */
void park_keep(park_slot *s);
/* Stops the timer thread and frees the lot. Every slot must have ended and been
 * resumed (the HTTP server is stopped). NULL is fine. */
void park_lot_free(park_lot *lot);

/* Number of slots parked now (created and not yet finished). */
size_t park_lot_count(park_lot *lot);

/* Parks the request whose result is r: the slot takes r's contents as its own result
 * (r keeps its other fields but an empty buffer; the edge swaps the results back when
 * the connection resumes, keeping r's fields that say how to answer), so a slot
 * outlives its connection safely. Parks until deadline_ms (clock_now_ms() clock; 0: no deadline). expire
 * ends it at the deadline or at shutdown; NULL: only park_complete/park_finish end it
 * (and shutdown leaves it alone). Returns the slot holding two references, the caller's
 * and the HTTP edge's; NULL on ENOMEM or once the lot is shut down (answer now then). */
park_slot *park_new(park_lot *lot, cmd_result *r, int64_t deadline_ms,
                    park_expire_fn expire, void *ctx);

/* HTTP edge, right after suspending the connection: fd is the client's socket (for
 * park_client_gone), resume(conn, arg) resumes it; conn and arg must outlive the slot's
 * resume (the edge frees them only after park_take or park_abandon). If s already
 * ended, resumes at once. */
void park_arm(park_slot *s, int fd, park_resume_fn resume, void *conn, void *arg);

/* Claims the right to end s. Returns 1 to exactly one caller over s's life, 0 to all
 * others (and for every slot ended already). */
int park_claim(park_slot *s);

/* The slot's result: the claimer writes the answer into it (only after park_claim
 * returned 1). */
cmd_result *park_result(park_slot *s);

/* HTTP edge, once the connection has resumed: the slot's result, holding its answer.
 * Returns only after the resume that woke the connection has returned, so that the
 * edge may then free its request and close the connection. */
cmd_result *park_take(park_slot *s);

/* The claimer's last step: takes s off the timer and resumes its connection (now, or in
 * park_arm if not armed yet). Its answer must be complete. */
void park_finish(park_slot *s);

/* Claims s and ends it with the answer r: r's contents are swapped with the slot's
 * result (r gets the old buffer back, to reuse or free); r NULL keeps the result the
 * handler built. Returns 1, or 0 (nothing changed) when s was ended already. */
int park_complete(park_slot *s, cmd_result *r);

/* 1 if the client of armed slot s has closed its connection (or it failed), 0 if it is
 * still there or s is not armed yet. Only meaningful between a claim and park_finish,
 * or while the caller otherwise knows s is not finished. */
int park_client_gone(park_slot *s);

/* Takes one more reference to s; park_unref drops one (the last frees s). */
void park_ref(park_slot *s);
void park_unref(park_slot *s);

/* HTTP edge: the connection of s is closing without having resumed (the server stops):
 * claims s if still open (so no ender writes into a result about to be freed), makes
 * sure no resume of the connection runs now or later, takes s off the timer and drops
 * the edge's reference. */
void park_abandon(park_slot *s);

#endif
