/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_leases.c - settling lent lines (ACK, RELEASE) and counting them (LEASES). LEASE= on
 * READ, READMULTI and FIND is parsed in cmd_param.c. */
#include "cmd_leases.h"

#include <stdint.h>
#include <string.h>

#include "cmd_answer.h"
#include "cmd_keys.h"
#include "cmd_param.h"

#define MSG_SETTLE_ARGS "LINE or LEASE parameter was missing !"
#define MSG_NO_LEASE    "No such lease (settled already, expired, or of another list) !"
#define MSG_NO_OWNER    "This OWNER holds no line of this list (settled already, expired, " \
                        "or never read) !"
#define MSG_OWNER_ALONE "OWNER settles alone: no LINE or LEASE with it !"

/* ACK and RELEASE by OWNER=: the line that owner holds. */
static void settle_owner(const cmd_server *srv, const char *name, size_t nlen,
                         const char *who, size_t wlen, cmd_result *r, int release)
{
    store_rc rc = strlen(name) == nlen
        ? store_settle_owner(srv->st, name, release, who, wlen, &r->lsn)
        : STORE_NOT_LOADED;
    if (rc == STORE_NO_LEASE)
        return cmd_ko(r, 404, MSG_NO_OWNER);
    if (rc != STORE_OK)
        return cmd_ko_store(r, rc, name, nlen);
    r->kind = REPLY_OK;
}

/* ACK and RELEASE: the lease named by LEASE=id, or the oldest of LINE, or OWNER's; with
 * NAME=, the lease of a counter. */
static void settle(const cmd_server *srv, const params *p, cmd_result *r, int release)
{
    if (params_get(p, PARAM_NAME, NULL))
        return cmd_key_settle(srv, p, r, release);      /* a counter's lease */
    size_t nlen, llen = 0, ilen = 0, wlen;
    const char *name = cmd_list_name(p, r, &nlen);
    if (!name)
        return;
    const char *line = params_get(p, PARAM_LINE, &llen);
    const char *idv = params_get(p, PARAM_LEASE, &ilen);
    const char *who;
    if (cmd_owner_param(p, r, &who, &wlen) != 0)
        return;
    if (who && (line || idv))
        return cmd_ko(r, 400, MSG_OWNER_ALONE);
    if (who)
        return settle_owner(srv, name, nlen, who, wlen, r, release);
    if (!line && !idv)
        return cmd_ko(r, 400, MSG_SETTLE_ARGS);
    store_rc rc = STORE_NOT_LOADED;
    if (strlen(name) == nlen) {
        uint64_t id = idv ? cmd_lease_id(idv, ilen) : 0;
        rc = idv ? (id ? store_settle(srv->st, name, release, id, NULL, 0, &r->lsn)
                       : STORE_NO_LEASE)
                 : store_settle(srv->st, name, release, 0, line, llen, &r->lsn);
    }
    if (rc == STORE_NO_LEASE)
        return cmd_ko(r, 404, MSG_NO_LEASE);
    if (rc != STORE_OK)
        return cmd_ko_store(r, rc, name, nlen);
    r->kind = REPLY_OK;
}

void cmd_ack(const cmd_server *srv, const params *p, cmd_result *r)
{
    settle(srv, p, r, 0);
}

void cmd_release(const cmd_server *srv, const params *p, cmd_result *r)
{
    settle(srv, p, r, 1);
}

void cmd_leases(const cmd_server *srv, const params *p, cmd_result *r)
{
    size_t nlen, n;
    const char *name = cmd_list_name(p, r, &nlen);
    if (!name)
        return;
    store_rc rc = strlen(name) == nlen ? store_leases(srv->st, name, &n) : STORE_NOT_LOADED;
    cmd_count_answer(r, rc, name, nlen, n);
}
