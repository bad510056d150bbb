/* SPDX-License-Identifier: Apache-2.0 */
/* config_cluster.c - the replicas' keys: the form of stsd.cluster.node.N, the checks
 * between the cluster's keys, and a node's raft address and URL for the cluster room. */
#include "config_cluster.h"
#include "base/num.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* A host name is at most 253 bytes (RFC 1035), each of its labels at most 63. */
#define HOST_MAX 253
#define LABEL_MAX 63

/* A node's value cut in its parts, pointing into the value. */
typedef struct node_parts {
    const char *raft;           /* RAFT_HOST:PORT */
    size_t raft_len;
    const char *url;            /* http(s)://HOST:PORT, without its trailing slash */
    size_t url_len;
    const char *hostport;       /* the URL's HOST:PORT, within url */
    size_t hostport_len;
} node_parts;

/* buf_printf into err when the caller wants a reason (err != NULL). Returns -1. */
static int why(buf *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int why(buf *err, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    if (!err)
        return -1;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    buf_puts(err, text);
    return -1;
}

static int is_blank(char ch)
{
    return ch == ' ' || ch == '\t';
}

static int is_digit(char ch)
{
    return ch >= '0' && ch <= '9';
}

static int ipv4_ok(const char *s, size_t n)
{
    char text[INET_ADDRSTRLEN];
    struct in_addr a;
    if (n >= sizeof text)
        return 0;
    memcpy(text, s, n);
    text[n] = '\0';
    return inet_pton(AF_INET, text, &a) == 1;
}

static int ipv6_ok(const char *s, size_t n)
{
    char text[INET6_ADDRSTRLEN];
    struct in6_addr a;
    if (n >= sizeof text)
        return 0;
    memcpy(text, s, n);
    text[n] = '\0';
    return inet_pton(AF_INET6, text, &a) == 1;
}

/* An IPv4 address in dotted decimal, or a host name: labels of letters, digits and
 * hyphens (none first or last) between dots. A last label of digits only makes the host
 * an IPv4 address, as resolvers and URL parsers read it ("10.1" is 10.0.0.1 to
 * getaddrinfo): then it must be four decimal parts, so that what is written is what is
 * reached. With brackets, an IPv6 address in [] (a URL's host; raft's addresses have
 * none). */
static int host_ok(const char *s, size_t n, int brackets)
{
    if (brackets && n >= 2 && s[0] == '[' && s[n - 1] == ']')
        return ipv6_ok(s + 1, n - 2);
    if (n == 0 || n > HOST_MAX)
        return 0;
    size_t label = 0, digits = 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (ch == '.') {
            if (label == 0 || s[i - 1] == '-')
                return 0;
            label = digits = 0;
            continue;
        }
        if (!is_digit(ch) && ch != '-' && !((ch | 0x20) >= 'a' && (ch | 0x20) <= 'z'))
            return 0;
        if ((label == 0 && ch == '-') || ++label > LABEL_MAX)
            return 0;
        digits += is_digit(ch);
    }
    if (label == 0 || s[n - 1] == '-')
        return 0;
    return digits == label ? ipv4_ok(s, n) : 1;
}

static int port_ok(const char *s, size_t n)
{
    uint64_t port;
    return num_parse_u64(s, n, 1, 65535, &port) == 0;
}

/* RAFT_HOST:PORT, the port required: raft's libuv transport cuts an address at its first
 * ':' (no IPv6, no brackets), resolves IPv4 only, and takes a missing port for 8080. */
static int raft_check(const char *s, size_t n, buf *err)
{
    const char *colon = memrchr(s, ':', n);
    if (!colon)
        return why(err, "raft address \"%.*s\" is not HOST:PORT", (int)n, s);
    size_t hn = (size_t)(colon - s), pn = n - hn - 1;
    if (!host_ok(s, hn, 0))
        return why(err, "raft address \"%.*s\": \"%.*s\" is not an IPv4 address or a host "
                   "name (no brackets, no IPv6)", (int)n, s, (int)hn, s);
    if (!port_ok(colon + 1, pn))
        return why(err, "raft address \"%.*s\": port \"%.*s\" is not in 1..65535", (int)n, s,
                   (int)pn, colon + 1);
    return 0;
}

/* http(s)://HOST:PORT with at most a '/' after it: the node's HTTP edge, to which
 * followers forward requests (or redirect clients); a path would be lost there. Sets
 * p->url_len (the slash left out) and p->hostport. */
static int url_check(const char *s, size_t n, node_parts *p, buf *err)
{
    size_t skip;
    if (n >= 7 && strncasecmp(s, "http://", 7) == 0)
        skip = 7;
    else if (n >= 8 && strncasecmp(s, "https://", 8) == 0)
        skip = 8;
    else
        return why(err, "URL \"%.*s\" does not start with http:// or https://", (int)n, s);
    size_t end = n > skip && s[n - 1] == '/' ? n - 1 : n;
    const char *hp = s + skip;
    size_t hpn = end - skip;
    if (strcspn(hp, "/?#@") < hpn)
        return why(err, "URL \"%.*s\" is not http(s)://HOST:PORT (only a / may follow the "
                   "port)", (int)n, s);
    /* The port's colon is the last one, after an IPv6 address's brackets. */
    const char *from = hpn && hp[0] == '[' ? memchr(hp, ']', hpn) : NULL;
    if (!from)
        from = hp;
    const char *colon = memrchr(from, ':', hpn - (size_t)(from - hp));
    if (!colon)
        return why(err, "URL \"%.*s\" has no :PORT after its host", (int)n, s);
    size_t hn = (size_t)(colon - hp), pn = hpn - hn - 1;
    if (!host_ok(hp, hn, 1))
        return why(err, "URL \"%.*s\": \"%.*s\" is not an IPv4 address, an [IPv6 address] or "
                   "a host name", (int)n, s, (int)hn, hp);
    if (!port_ok(colon + 1, pn))
        return why(err, "URL \"%.*s\": port \"%.*s\" is not in 1..65535", (int)n, s, (int)pn,
                   colon + 1);
    p->url = s;
    p->url_len = end;
    p->hostport = hp;
    p->hostport_len = hpn;
    return 0;
}

/* Cuts value ("RAFT_HOST:PORT URL", blanks around and between) into p. Returns 0, or -1
 * with the reason in err (if not NULL). */
static int node_parse(const char *value, node_parts *p, buf *err)
{
    const char *s = value;
    while (is_blank(*s))
        s++;
    size_t rn = strcspn(s, " \t");
    const char *u = s + rn;
    while (is_blank(*u))
        u++;
    size_t un = strcspn(u, " \t");
    const char *rest = u + un;
    while (is_blank(*rest))
        rest++;
    if (rn == 0 || un == 0 || *rest)
        return why(err, "\"%s\" is not \"RAFT_HOST:PORT http(s)://HOST:PORT\" (the raft "
                   "address, a blank, the HTTP URL)", value);
    p->raft = s;
    p->raft_len = rn;
    if (raft_check(s, rn, err) != 0 || url_check(u, un, p, err) != 0)
        return -1;
    /* Raft and HTTP cannot both listen there. */
    if (p->raft_len == p->hostport_len && strncasecmp(p->raft, p->hostport, rn) == 0)
        return why(err, "raft address %.*s is also the HOST:PORT of its URL", (int)rn, s);
    return 0;
}

int conf_cluster_node_check(const char *value, buf *err)
{
    node_parts p;
    return node_parse(value, &p, err);
}

static int same(const char *a, size_t an, const char *b, size_t bn)
{
    return an == bn && strncasecmp(a, b, an) == 0;
}

/* Two nodes on one address cannot both listen there: raft addresses, the URLs' HOST:PORT
 * (http and https alike), and a raft address that is some node's HTTP HOST:PORT. */
static int clash(const node_parts *p, int id, const node_parts *q, int other, buf *err)
{
    if (same(p->raft, p->raft_len, q->raft, q->raft_len))
        return why(err, CONF_NODE_PREFIX "%d: raft address %.*s is already "
                   CONF_NODE_PREFIX "%d's", id, (int)p->raft_len, p->raft, other);
    if (same(p->url, p->url_len, q->url, q->url_len))
        return why(err, CONF_NODE_PREFIX "%d: URL %.*s is already " CONF_NODE_PREFIX "%d's",
                   id, (int)p->url_len, p->url, other);
    if (same(p->hostport, p->hostport_len, q->hostport, q->hostport_len))
        return why(err, CONF_NODE_PREFIX "%d: URL %.*s has the HOST:PORT of "
                   CONF_NODE_PREFIX "%d's URL, %.*s", id, (int)p->url_len, p->url, other,
                   (int)q->url_len, q->url);
    if (same(p->raft, p->raft_len, q->hostport, q->hostport_len))
        return why(err, CONF_NODE_PREFIX "%d: raft address %.*s is the HOST:PORT of "
                   CONF_NODE_PREFIX "%d's URL", id, (int)p->raft_len, p->raft, other);
    if (same(p->hostport, p->hostport_len, q->raft, q->raft_len))
        return why(err, CONF_NODE_PREFIX "%d: URL %.*s has the HOST:PORT of "
                   CONF_NODE_PREFIX "%d's raft address", id, (int)p->url_len, p->url, other);
    return 0;
}

int conf_cluster_validate(const config *c, buf *err)
{
    node_parts p[CONF_CLUSTER_MAX + 1];
    int set[CONF_CLUSTER_MAX + 1] = {0}, first = 0;
    for (int id = 1; id <= CONF_CLUSTER_MAX; id++) {
        const char *v = c->cluster_node[id];
        if (!v || !*v)
            continue;
        buf reason = BUF_INIT;
        if (node_parse(v, &p[id], &reason) != 0) {
            why(err, CONF_NODE_PREFIX "%d: %s", id, reason.data ? reason.data : "out of memory");
            buf_free(&reason);
            return -1;
        }
        for (int other = 1; other < id; other++)
            if (set[other] && clash(&p[id], id, &p[other], other, err) != 0)
                return -1;
        set[id] = 1;
        if (!first)
            first = id;
    }
    int self = c->cluster_self;
    if (self < 0 || self > CONF_CLUSTER_MAX)
        return why(err, "stsd.cluster.self: %d is not in 0..%d", self, CONF_CLUSTER_MAX);
    /* Each node starts with the same list of nodes; only self tells them apart, and a
     * node that guessed would bootstrap a cluster of its own. */
    if (self == 0 && first)
        return why(err, "stsd.cluster.self is not set: " CONF_NODE_PREFIX "%d is, so say "
                   "which node this one is (1..%d)", first, CONF_CLUSTER_MAX);
    if (self && !set[self])
        return why(err, "stsd.cluster.self is %d, but " CONF_NODE_PREFIX "%d is not set",
                   self, self);
    return 0;
}

int config_cluster_node(const config *c, int id, char *raft, size_t rcap, char *url,
                        size_t ucap)
{
    node_parts p;
    if (id < 1 || id > CONF_CLUSTER_MAX || !c->cluster_node[id] || !*c->cluster_node[id])
        return -1;
    if (node_parse(c->cluster_node[id], &p, NULL) != 0)
        return -1;
    if ((raft && p.raft_len >= rcap) || (url && p.url_len >= ucap))
        return -1;
    if (raft) {
        memcpy(raft, p.raft, p.raft_len);
        raft[p.raft_len] = '\0';
    }
    if (url) {
        memcpy(url, p.url, p.url_len);
        url[p.url_len] = '\0';
    }
    return 0;
}

int config_cluster_parse(const char *raft_url, char *raft, size_t rcap, char *url,
                         size_t ucap, buf *err)
{
    node_parts p;
    if (conf_cluster_node_check(raft_url, err) != 0 || node_parse(raft_url, &p, NULL) != 0)
        return -1;
    if (p.raft_len >= rcap || p.url_len >= ucap) {
        buf_puts(err, "too long");
        return -1;
    }
    memcpy(raft, p.raft, p.raft_len);
    raft[p.raft_len] = '\0';
    memcpy(url, p.url, p.url_len);
    url[p.url_len] = '\0';
    return 0;
}

size_t config_cluster_count(const config *c)
{
    size_t n = 0;
    for (int id = 1; id <= CONF_CLUSTER_MAX; id++)
        n += c->cluster_node[id] && *c->cluster_node[id];
    return n;
}
