/* command_lease.c - leases at the HTTP edge: LEASE= on READ, READMULTI and FIND, the
 * X-STS-Lease ids, and the ACK, RELEASE and LEASES commands. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "command_int.h"

#define MSG_LEASE_VALUE "LEASE value has to be a number of seconds above 0 up to %d !"
#define MSG_LEASE_KEEP  "LEASE needs KEEP=FALSE !"
#define MSG_LEASE_LINES "LEASE takes at most %d lines at once !"
#define MSG_SETTLE_ARGS "LINE or LEASE parameter was missing !"
#define MSG_NO_LEASE    "No such lease (settled already, expired, or of another list) !"

/* A 400 KO with a formatted message. Returns -1. */
__attribute__((format(printf, 2, 3)))
static int ko_format(cmd_result *r, const char *fmt, ...)
{
    char msg[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    command_ko(r, 400, msg);
    return -1;
}

int cmd_lease_param(const cmd_server *srv, const params *p, int keep, long n, cmd_result *r,
                    int64_t *ms)
{
    size_t len;
    const char *v = params_get(p, PARAM_LEASE, &len);
    *ms = 0;
    if (!v)
        return 0;
    if (cmd_parse_seconds(v, len, srv->conf->max_lease, ms) != 0 || *ms == 0)
        return ko_format(r, MSG_LEASE_VALUE, srv->conf->max_lease);
    if (keep) {
        command_ko(r, 400, MSG_LEASE_KEEP);
        return -1;
    }
    /* Each id is 17 bytes of the X-STS-Lease header, which must fit in libmicrohttpd's
     * connection memory (32 KiB): past it the answer could not be sent, its lines leased. */
    if (n > CMD_LEASE_MAX_LINES)
        return ko_format(r, MSG_LEASE_LINES, CMD_LEASE_MAX_LINES);
    return 0;
}

void cmd_lease_ids(cmd_result *r, const buf *ids)
{
    buf_clear(&r->lease);
    for (size_t off = 0; off + sizeof(uint64_t) <= ids->len; off += sizeof(uint64_t)) {
        uint64_t id;
        memcpy(&id, ids->data + off, sizeof id);
        buf_printf(&r->lease, "%s%016llx", off ? "," : "", (unsigned long long)id);
    }
}

/* A lease id as the header gave it: 16 hex digits. 0 when it cannot be one. */
static uint64_t parse_id(const char *v, size_t len)
{
    uint64_t id = 0;
    if (len != 16)
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = v[i];
        int d = c >= '0' && c <= '9' ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                     : -1;
        if (d < 0)
            return 0;
        id = id << 4 | (uint64_t)d;
    }
    return id;
}

/* ACK and RELEASE: the lease named by LEASE=id, or the oldest of LINE. */
static void settle(const cmd_server *srv, const params *p, cmd_result *r, int release)
{
    size_t nlen, llen = 0, ilen = 0;
    const char *name = command_list_name(p, r, &nlen);
    if (!name)
        return;
    const char *line = params_get(p, PARAM_LINE, &llen);
    const char *idv = params_get(p, PARAM_LEASE, &ilen);
    if (!line && !idv)
        return command_ko(r, 400, MSG_SETTLE_ARGS);
    store_rc rc = STORE_NOT_LOADED;
    if (strlen(name) == nlen) {
        uint64_t id = idv ? parse_id(idv, ilen) : 0;
        rc = idv ? (id ? store_settle(srv->st, name, release, id, NULL, 0, &r->lsn)
                       : STORE_NO_LEASE)
                 : store_settle(srv->st, name, release, 0, line, llen, &r->lsn);
    }
    if (rc == STORE_NO_LEASE)
        return command_ko(r, 404, MSG_NO_LEASE);
    if (rc != STORE_OK)
        return command_ko_store(r, rc, name, nlen);
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
    const char *name = command_list_name(p, r, &nlen);
    if (!name)
        return;
    store_rc rc = strlen(name) == nlen ? store_leases(srv->st, name, &n) : STORE_NOT_LOADED;
    if (rc != STORE_OK)
        return command_ko_store(r, rc, name, nlen);
    r->kind = REPLY_OK;
    buf_printf(&r->text, "%zu", n);
}
