/* SPDX-License-Identifier: Apache-2.0 */
/* audit_record.c - the audit log's lines: a change as one JSON object, through base/json. */
#include "audit/audit_record.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/digest.h"
#include "base/json.h"

/* The date and time of one second, kept per thread: the calendar conversion (gmtime_r,
 * which takes glibc's time zone lock) then runs once a second per HTTP thread, not once
 * per change. */
static __thread int64_t cached_sec = -1;
static __thread char cached_text[AUDIT_TIME_SIZE];

void audit_time_text(int64_t wall_ms, char out[AUDIT_TIME_SIZE])
{
    int64_t sec = wall_ms >= 0 ? wall_ms / 1000 : (wall_ms - 999) / 1000;
    int ms = (int)(wall_ms - sec * 1000);
    if (sec != cached_sec) {
        struct tm tm;
        time_t t = (time_t)sec;
        if (!gmtime_r(&t, &tm) ||
            strftime(cached_text, sizeof cached_text, "%Y-%m-%dT%H:%M:%S", &tm) != 19)
            memcpy(cached_text, "0000-00-00T00:00:00", 20);
        cached_sec = sec;
    }
    memcpy(out, cached_text, 19);
    out[19] = '.';
    out[20] = (char)('0' + ms / 100);
    out[21] = (char)('0' + ms / 10 % 10);
    out[22] = (char)('0' + ms % 10);
    out[23] = 'Z';
    out[24] = '\0';
}

int audit_addr_text(const struct sockaddr *a, socklen_t len, char out[AUDIT_ADDR_SIZE])
{
    out[0] = '\0';
    if (a && a->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)a;
        return inet_ntop(AF_INET, &v4->sin_addr, out, AUDIT_ADDR_SIZE) ? 0 : -1;
    }
    if (a && a->sa_family == AF_INET6 && len >= (socklen_t)sizeof(struct sockaddr_in6)) {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)a;
        /* A dual-stack listener sees IPv4 clients as ::ffff:a.b.c.d: grep finds them by
         * the address they know. */
        if (IN6_IS_ADDR_V4MAPPED(&v6->sin6_addr))
            return inet_ntop(AF_INET, v6->sin6_addr.s6_addr + 12, out, AUDIT_ADDR_SIZE) ? 0
                                                                                         : -1;
        return inet_ntop(AF_INET6, &v6->sin6_addr, out, AUDIT_ADDR_SIZE) ? 0 : -1;
    }
    return -1;
}

/* A line or a value: as it is (or base64 when not UTF-8), or its hash. */
static int put_data(json *j, const char *key, const char *s, size_t len, int hash)
{
    if (!hash) {
        json_line(j, key, s, len);
        return 0;
    }
    char name[32], hex[DIGEST_SHA256_HEX];
    snprintf(name, sizeof name, "%s_sha256", key);
    if (digest_sha256_hex(s, len, hex) != 0)
        return -1;
    json_key(j, name);
    json_str(j, hex, 64);
    return 0;
}

int audit_format(buf *out, const audit_record *r, int hash)
{
    char when[AUDIT_TIME_SIZE], addr[AUDIT_ADDR_SIZE];
    json j;
    int rc = 0;
    audit_time_text(r->wall_ms, when);
    json_init(&j, out);
    json_obj_begin(&j);
    json_key(&j, "time");
    json_cstr(&j, when);
    json_key(&j, "addr");
    if (audit_addr_text(r->addr, r->addr_len, addr) == 0)
        json_cstr(&j, addr);
    else
        json_null(&j);
    json_key(&j, "token");
    if (r->token)
        json_cstr(&j, r->token);
    else
        json_null(&j);
    json_key(&j, "cmd");
    json_cstr(&j, r->cmd);
    if (r->list) {
        json_key(&j, "list");
        json_str(&j, r->list, r->list_len);
    }
    if (r->key) {
        json_key(&j, "key");
        json_str(&j, r->key, r->key_len);
    }
    if (r->prefix) {
        json_key(&j, "prefix");
        json_str(&j, r->prefix, r->prefix_len);
    }
    if (r->line && put_data(&j, "line", r->line, r->line_len, hash) != 0)
        rc = -1;
    if (r->value && put_data(&j, "value", r->value, r->value_len, hash) != 0)
        rc = -1;
    if (r->keep >= 0) {
        json_key(&j, "keep");
        json_bool(&j, r->keep);
    }
    if (r->lease) {
        json_key(&j, "lease");
        json_str(&j, r->lease, r->lease_len);
    }
    if (r->owner) {
        json_key(&j, "owner");
        json_str(&j, r->owner, r->owner_len);
    }
    json_obj_end(&j);
    buf_puts(out, "\n");
    return rc != 0 || out->oom ? -1 : 0;
}
