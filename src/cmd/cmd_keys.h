/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_keys.h - the commands on keys: SET, GET, DEL, KEYS, INCR, and settling counter
 * leases for ACK and RELEASE with NAME=. Private to cmd/ (the table in command.c names
 * them). */
#ifndef STSD_CMD_KEYS_H
#define STSD_CMD_KEYS_H

#include "cmd/command.h"
#include "hold/park.h"
#include "meet/keys.h"

/* A request parked on a key: a GET watching it, an INCR waiting to fit, a ONCE waiting for
 * the run (cmd_once.c). The store serves it through kw; the ops say how it answers. */
typedef struct cmd_kwaiter cmd_kwaiter;
typedef struct cmd_kwait_ops {
    /* The answer of w served with rc, into r. Returns the lsn of the change it reports,
     * which the answer waits for (0: none). */
    uint64_t (*answer)(cmd_kwaiter *w, store_rc rc, cmd_result *r);
    /* The answer at w's deadline or at shutdown (why); w is out of the key's queue and its
     * client is still there. */
    void (*expire)(cmd_kwaiter *w, park_why why, cmd_result *r);
    int late_refused;   /* a deadline already past: the store answers now, without parking */
} cmd_kwait_ops;

struct cmd_kwaiter {
    key_waiter kw;             /* first: the store hands it back */
    const cmd_server *srv;
    const cmd_kwait_ops *ops;
    park_slot *slot;           /* the caller's reference, dropped in cmd_kwaiter_free */
    cmd_result *r;             /* the handler's result, for arm */
    int64_t deadline;
    char *name;
};

/* A waiter for key name with ops, answering into r, parked until deadline if the store
 * asks it to wait; the caller sets kw's request (incr, version, q, once) before
 * cmd_kwaiter_run. NULL on ENOMEM. */
cmd_kwaiter *cmd_kwaiter_new(const cmd_server *srv, const char *name, int64_t deadline,
                             const cmd_kwait_ops *ops, cmd_result *r);
/* Hands w to the store: STORE_WAITING (w is its slot's now), or the store's answer, w then
 * still the caller's to answer from and free. */
store_rc cmd_kwaiter_run(cmd_kwaiter *w);
void cmd_kwaiter_free(cmd_kwaiter *w);

void cmd_set(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_get(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_del(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_expire(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_keys(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_incr(const cmd_server *srv, const params *p, cmd_result *r);
/* ACK (release 0) or RELEASE (1) of the counter lease LEASE=id of key NAME. */
void cmd_key_settle(const cmd_server *srv, const params *p, cmd_result *r, int release);

#endif
