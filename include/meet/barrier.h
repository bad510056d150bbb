/* SPDX-License-Identifier: Apache-2.0 */
/* barrier.h - named cyclic barriers (BARRIER): the arrivals of each generation in
 * arrival order, until the generation opens (full, timed out with RELEASE, or by hand)
 * and hands its arrivals back to the caller to answer. The table knows nothing of HTTP
 * or of parked requests: arrivals carry callbacks (as store_waiter does). Barriers are
 * not journaled: their waiters are connections.
 *
 * Ownership. The caller owns each barrier_arrival. From barrier_arrive answering
 * BARRIER_WAITING the table keeps a pointer to it until either barrier_leave returns 1
 * (the caller took it out) or a call hands it back in a batch (barrier_arrive,
 * barrier_expire, barrier_open): then the table never touches it again. A batch is a
 * list linked by `next`, in arrival order, each with its outcome set. */
#ifndef STSD_BARRIER_H
#define STSD_BARRIER_H

#include <stddef.h>
#include <stdint.h>

typedef struct barrier_table barrier_table;

typedef enum barrier_rc {
    BARRIER_OK = 0,       /* opened: the arrival's outcome is set */
    BARRIER_WAITING,      /* queued: the answer comes later */
    BARRIER_MISMATCH,     /* PARTIES differs from the gathering generation's (*parties) */
    BARRIER_TIMED_OUT,    /* TIMEOUT=0 and not full: not queued (*arrived) */
    BARRIER_NOT_FOUND,    /* barrier_open: no barrier of that name */
    BARRIER_FULL,         /* too many barriers (the limit given at creation) */
    BARRIER_NOMEM,        /* out of memory, or arm refused: nothing changed */
} barrier_rc;

/* How an arrival's generation ended for it. */
typedef enum barrier_outcome {
    BARRIER_RELEASED_FULL,     /* PARTIES arrivals were there */
    BARRIER_RELEASED_TIMEOUT,  /* an arrival with ON_TIMEOUT=RELEASE timed out */
    BARRIER_RELEASED_HAND,     /* barrier_open */
    BARRIER_DROPPED,           /* its client had gone when the generation opened */
} barrier_outcome;

typedef struct barrier_arrival barrier_arrival;
struct barrier_arrival {
    /* The caller's: */
    int release_on_timeout;    /* ON_TIMEOUT=RELEASE */
    /* Under the table's lock, just before a is queued: 0 to queue it, -1 to refuse
     * (barrier_arrive then answers BARRIER_NOMEM and changes nothing). */
    int (*arm)(barrier_arrival *a);
    /* Under the table's lock: nonzero if nobody will read a's answer (its client left). */
    int (*gone)(barrier_arrival *a);
    /* The outcome, set when handed back (read them after the call that did): */
    barrier_outcome outcome;
    uint64_t generation;       /* the generation that opened */
    uint32_t arrival;          /* 1.. in arrival order among those released */
    uint32_t parties;          /* the generation's PARTIES */
    /* The table's: */
    barrier_arrival *prev, *next;   /* next also links a batch handed back */
    void *where;               /* the barrier it waits at; NULL: not queued */
};

/* A barrier as BARRIERS and /metrics show it. */
typedef struct barrier_info {
    const char *name;          /* NUL-terminated; valid during the callback only */
    size_t name_len;
    uint32_t parties;          /* the gathering generation's (or the last one's) */
    uint32_t arrived;          /* waiting now in the gathering generation */
    uint64_t generation;       /* the gathering generation's number (0, 1, ...) */
} barrier_info;

/* An empty table of at most max_barriers barriers (0: no limit), or NULL on ENOMEM. */
barrier_table *barrier_table_create(size_t max_barriers);
/* Frees the table. No arrival may be queued (the server has stopped). NULL is fine. */
void barrier_table_free(barrier_table *t);

/* a arrives at barrier name[0..len) (created at its first arrival) with PARTIES parties.
 * If it completes the gathering generation (arrivals whose client is gone dropped
 * first), the generation opens: BARRIER_OK, a's outcome set, and *batch the others
 * (outcome set; dropped ones too). Otherwise, with wait, a->arm runs and a is queued:
 * BARRIER_WAITING. Without wait (TIMEOUT=0): with a->release_on_timeout the generation
 * opens as if a had timed out (BARRIER_OK, BARRIER_RELEASED_TIMEOUT), else
 * BARRIER_TIMED_OUT with *arrived the number waiting counting a (a not queued).
 * BARRIER_MISMATCH (PARTIES differs from that of the arrivals waiting, once the gone are
 * dropped) sets *gen_parties to theirs. *batch is NULL when nothing else
 * was handed back. Other errors change nothing. */
barrier_rc barrier_arrive(barrier_table *t, const char *name, size_t len, uint32_t parties,
                          barrier_arrival *a, int wait, uint32_t *arrived, uint32_t *gen_parties,
                          barrier_arrival **batch);

/* Takes queued a out of its generation (its deadline passed with ON_TIMEOUT=KO, or the
 * server stops). Returns 1 with *arrived the number that were waiting counting a, or 0
 * if a was handed back in a batch already (its outcome is set). */
int barrier_leave(barrier_table *t, barrier_arrival *a, uint32_t *arrived);

/* a's deadline passed with ON_TIMEOUT=RELEASE: its generation opens for everyone waiting
 * (BARRIER_RELEASED_TIMEOUT). Returns 1 with *batch every arrival handed back, a among
 * them; 0 if a was handed back already (its outcome is set; *batch NULL). */
int barrier_expire(barrier_table *t, barrier_arrival *a, barrier_arrival **batch);

/* Opens barrier name[0..len) now for everyone waiting (BARRIER_RELEASED_HAND): *batch
 * every arrival handed back, *released how many were released (not dropped), *generation
 * the generation that opened (with none waiting, nothing opens and it is the gathering
 * one). BARRIER_OK, or BARRIER_NOT_FOUND. */
barrier_rc barrier_open(barrier_table *t, const char *name, size_t len, barrier_arrival **batch,
                        uint32_t *released, uint64_t *generation);

/* Calls fn on every barrier, sorted by name (bytes), under the table's lock (fn must not
 * call the table). Returns how many. */
size_t barrier_each(barrier_table *t, void (*fn)(const barrier_info *b, void *ctx), void *ctx);

#endif
