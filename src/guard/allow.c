/* SPDX-License-Identifier: Apache-2.0 */
/* allow.c - stsd.allow: CIDR ranges, and the test a new connection must pass. */
#include "guard/allow.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/strlist.h"
#include "base/num.h"
#include "guard/addr.h"

typedef struct allow_range {
    int family;                    /* AF_INET or AF_INET6 */
    unsigned char addr[16];        /* network bytes, host bits cleared */
    unsigned bits;                 /* prefix length */
} allow_range;

struct allow_list {
    size_t n;
    allow_range r[];
};

/* Parses one CIDR of len bytes into *r. Returns 0, or -1 if it is not one. */
static int range_parse(const char *s, size_t len, allow_range *r)
{
    char text[INET6_ADDRSTRLEN + 8];
    if (len == 0 || len >= sizeof text)
        return -1;
    memcpy(text, s, len);
    text[len] = '\0';
    char *slash = strchr(text, '/');
    if (slash)
        *slash = '\0';
    memset(r, 0, sizeof *r);
    unsigned max;
    if (inet_pton(AF_INET, text, r->addr) == 1) {
        r->family = AF_INET;
        max = 32;
    } else if (inet_pton(AF_INET6, text, r->addr) == 1) {
        r->family = AF_INET6;
        max = 128;
    } else {
        return -1;
    }
    r->bits = max;
    if (slash) {
        uint64_t v;
        size_t n = strlen(slash + 1);
        /* At most three digits, as ever: "/032" is 32, "/0032" is refused. */
        if (n > 3 || num_parse_u64(slash + 1, n, 0, max, &v) != 0)
            return -1;
        r->bits = (unsigned)v;
    }
    /* Clear the host bits so that matching compares whole bytes. */
    for (unsigned i = 0; i < max / 8; i++) {
        unsigned keep = r->bits > i * 8 ? r->bits - i * 8 : 0;
        if (keep < 8)
            r->addr[i] &= (unsigned char)(0xff00u >> keep);
    }
    return 0;
}

allow_list *allow_parse(const char *text, buf *err)
{
    size_t count = 0, len;
    const char *c = text, *item;
    while (strlist_next(&c, &item, &len))
        count++;
    allow_list *a = calloc(1, sizeof *a + count * sizeof a->r[0]);
    if (!a) {
        buf_puts(err, "stsd.allow: out of memory");
        return NULL;
    }
    for (c = text; strlist_next(&c, &item, &len); a->n++)
        if (range_parse(item, len, &a->r[a->n]) != 0) {
            buf_printf(err, "stsd.allow: \"%.*s\" is not an IPv4 or IPv6 address or CIDR "
                       "(such as 10.0.0.0/8 or fd00::/8)", (int)len, item);
            free(a);
            return NULL;
        }
    return a;
}

void allow_free(allow_list *a)
{
    free(a);
}

static int range_has(const allow_range *r, const unsigned char *addr)
{
    unsigned full = r->bits / 8, rest = r->bits % 8;
    if (memcmp(r->addr, addr, full) != 0)
        return 0;
    if (rest == 0)
        return 1;
    unsigned char mask = (unsigned char)(0xff00u >> rest);
    return (addr[full] & mask) == r->addr[full];
}

int allow_match(const allow_list *a, const struct sockaddr *addr, socklen_t len)
{
    unsigned char key[ADDR_KEY_SIZE];
    if (addr_key(addr, len, key) != 0)
        return 0;
    int family = addr_key_is_v4(key) ? AF_INET : AF_INET6;
    const unsigned char *bytes = family == AF_INET ? key + 12 : key;
    for (size_t i = 0; i < a->n; i++)
        if (a->r[i].family == family && range_has(&a->r[i], bytes))
            return 1;
    return 0;
}

int allow_is_loopback_text(const char *addr)
{
    unsigned char b[16];
    if (inet_pton(AF_INET, addr, b) == 1)
        return b[0] == 127;
    if (inet_pton(AF_INET6, addr, b) == 1) {
        static const unsigned char one[16] = {[15] = 1};
        return memcmp(b, one, 16) == 0;
    }
    return 0;
}
