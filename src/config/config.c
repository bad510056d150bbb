/* SPDX-License-Identifier: Apache-2.0 */
/* config.c - stsd's settings: the table of keys, their values, properties files, CONFIG. */
#include "config/config.h"
#include "config_core.h"
#include "base/csv.h"
#include "base/log.h"
#include "base/num.h"
#include "config/properties.h"
#include "config_cluster.h"
#include "config_near.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <iconv.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define KIB 1024ULL
#define MIB (1024ULL * KIB)
#define GIB (1024ULL * MIB)

#define F(field) offsetof(config, field)

/* One row per node id: each is a key of its own in files, -D and CONFIG; --help and the
 * documentation show them as one, stsd.cluster.node.N. */
#define NODE_ROW(n)                                                                          \
    {CONF_NODE_PREFIX #n, CONF_NODE_PREFIX #n, CT_NODE, F(cluster_node[n]), 0, 0, "",        \
     "a node of the cluster, N = 1..9: its raft address and its HTTP URL, e.g. "             \
     "10.0.0.1:9201 http://10.0.0.1:9191; empty = no such node"}
_Static_assert(CONF_CLUSTER_MAX == 9, "one NODE_ROW per node id, 1..CONF_CLUSTER_MAX");

/* The rows are in the order CONFIG shows them. */
const conf_key conf_keys[] = {
    {JP "port", "port", CT_INT, F(port), 0, 65535, "9191",
     "TCP port to listen on; 0 = any free port (see stsd.portFile)"},
    {JP "datasetDirectory", "datasetDirectory", CT_STRING, F(dataset_dir), 0, 0, ".",
     "directory where INITFILE reads and SAVE writes"},
    {JP "addTimestamp", "addTimestamp", CT_BOOL, F(add_timestamp), 0, 1, "true",
     "SAVE prefixes the file name with a timestamp unless ADD_TIMESTAMP=false"},
    {JP "daemon", "daemon", CT_BOOL, F(daemon), 0, 1, "false",
     "false: ENTER on the terminal stops the server; true: run until STOP or a signal"},
    {JP "charsetEncodingHttpResponse", "charsetEncodingHttpResponse", CT_CHARSET,
     F(charset_response), 0, 0, "UTF-8", "charset of responses, named in Content-Type"},
    {JP "charsetEncodingReadFile", "charsetEncodingReadFile", CT_CHARSET, F(charset_read),
     0, 0, "UTF-8", "charset of the files INITFILE reads"},
    {JP "charsetEncodingWriteFile", "charsetEncodingWriteFile", CT_CHARSET, F(charset_write),
     0, 0, "UTF-8", "charset of the files SAVE writes"},
    {JP "initFileAtStartup", "initFileAtStartup", CT_STRING, F(init_file_at_startup), 0, 0, "",
     "files to load at start: a comma-separated list, or a regex (next key)"},
    {JP "initFileAtStartupRegex", "initFileAtStartupRegex", CT_BOOL,
     F(init_file_at_startup_regex), 0, 1, "false",
     "true: initFileAtStartup is a regex matched against whole file names"},
    {JP "loadAndRunOnStartup", NULL, CT_IGNORED, 0, 0, 0, "false",
     "accepted and ignored: it tells JMeter whether to start the reference"},
    {"stsd.initFileHeader", "stsd.initFileHeader", CT_BOOL, F(init_file_header), 0, 1,
     "false", "true: the first line of each initFileAtStartup file names its columns "
     "(INITFILE HEADER=TRUE)"},
    {"stsd.initFileSeparator", "stsd.initFileSeparator", CT_STRING, F(init_file_separator),
     0, 0, ",", "with stsd.initFileHeader: the byte between fields (SEPARATOR=)"},
    {"stsd.bind", "stsd.bind", CT_ADDR, F(bind), 0, 0, "::",
     "IPv4 or IPv6 address to listen on; :: = every address, IPv4 and IPv6; 0.0.0.0 = IPv4 only"},
    {"stsd.portFile", "stsd.portFile", CT_STRING, F(port_file), 0, 0, "",
     "if set, the bound port is written to this file once listening"},
    {"stsd.threads", "stsd.threads", CT_INT, F(threads), 0, 1024, "0",
     "HTTP threads; 0 = one per CPU core"},
    {"stsd.maxConnections", "stsd.maxConnections", CT_INT, F(max_connections), 1, 1000000,
     "4096", "open connections at most"},
    {"stsd.maxConnectionsPerIp", "stsd.maxConnectionsPerIp", CT_INT,
     F(max_connections_per_ip), 0, 1000000, "0", "open connections per client address; 0 = no limit"},
    {"stsd.connectionTimeout", "stsd.connectionTimeout", CT_INT, F(connection_timeout), 0,
     86400, "60", "seconds an idle connection is kept; 0 = forever"},
    {"stsd.maxBodySize", "stsd.maxBodySize", CT_SIZE, F(max_body), KIB, GIB, "16M",
     "largest request body (POST) accepted"},
    {"stsd.maxLineSize", "stsd.maxLineSize", CT_SIZE, F(max_line), 1, GIB, "1M",
     "longest LINE that ADD accepts (files loaded by INITFILE are not limited)"},
    {"stsd.maxLists", "stsd.maxLists", CT_COUNT, F(max_lists), 1, 100000000, "100000",
     "number of lists at most"},
    {"stsd.maxKeys", "stsd.maxKeys", CT_COUNT, F(max_keys), 1, 100000000, "100000",
     "number of keys (SET, INCR) at most"},
    {"stsd.maxBytes", "stsd.maxBytes", CT_SIZE, F(max_bytes), 0, 1024 * 1024 * GIB, "0",
     "bytes of lines and keys stored at most, over all lists and keys; 0 = no limit"},
    {"stsd.journal", "stsd.journal", CT_ONOFF, F(journal), 0, 1, "off",
     "on: log every change to disk so a restart gets the lists back"},
    {"stsd.journal.fsync", "stsd.journal.fsync", CT_FSYNC, F(journal_fsync), 0, 0, "everysec",
     "when the journal is flushed to disk: always, everysec or no (left to the OS)"},
    {"stsd.stateDirectory", "stsd.stateDirectory", CT_STRING, F(state_dir), 0, 0, "",
     "where the journal lives; empty = <datasetDirectory>/.stsd"},
    {"stsd.maxWait", "stsd.maxWait", CT_INT, F(max_wait), 0, 86400, "600",
     "longest TIMEOUT (seconds) a READ, READMULTI, FIND or BARRIER may wait"},
    {"stsd.maxParties", "stsd.maxParties", CT_INT, F(max_parties), 1, 10000000, "100000",
     "largest PARTIES a BARRIER may ask (arrivals that wait for each other)"},
    {"stsd.maxLease", "stsd.maxLease", CT_INT, F(max_lease), 1, 31 * 86400, "3600",
     "longest LEASE (seconds) a line taken with KEEP=FALSE may stay on loan"},
    {"stsd.metrics.maxLists", "stsd.metrics.maxLists", CT_COUNT, F(metrics_max_lists), 0,
     100000000, "10000", "lists with their own series in /metrics; the rest add up in list=\"_other\""},
    {"stsd.log.format", "stsd.log.format", CT_LOGFMT, F(log_json), 0, 1, "text",
     "log lines as text, or json (one object per line: time, level, event, fields)"},
    {"stsd.jsonByAccept", "stsd.jsonByAccept", CT_BOOL, F(json_by_accept), 0, 1, "false",
     "true: Accept preferring application/json gets JSON from the reference's 11 commands too"},
    {"stsd.koStatus", "stsd.koStatus", CT_BOOL, F(ko_status), 0, 1, "false",
     "true: the reference's 11 commands answer an HTML KO with its JSON status, not 200"},
    {"stsd.token", "stsd.token", CT_STRING, F(token), 0, 0, "",
     "comma-separated tokens clients must send (Authorization: Bearer, or TOKEN=)"},
    {"stsd.adminToken", "stsd.adminToken", CT_STRING, F(admin_token), 0, 0, "",
     "tokens for INITFILE, LOAD, SAVE, RESET, STOP, CONFIG, OPEN (and all else)"},
    {"stsd.tokenFile", "stsd.tokenFile", CT_STRING, F(token_file), 0, 0, "",
     "file holding more stsd.token values (e.g. a systemd credential)"},
    {"stsd.adminTokenFile", "stsd.adminTokenFile", CT_STRING, F(admin_token_file), 0, 0, "",
     "file holding more stsd.adminToken values"},
    {"stsd.allow", "stsd.allow", CT_STRING, F(allow), 0, 0, "",
     "comma-separated CIDRs allowed to connect (IPv4, IPv6); empty = any"},
    {"stsd.disabledCommands", "stsd.disabledCommands", CT_STRING, F(disabled_commands), 0, 0,
     "", "commands refused (403) to everyone, e.g. STOP,RESET"},
    {"stsd.tls.cert", "stsd.tls.cert", CT_STRING, F(tls_cert), 0, 0, "",
     "PEM certificate (chain) file: the port speaks HTTPS"},
    {"stsd.tls.key", "stsd.tls.key", CT_STRING, F(tls_key), 0, 0, "",
     "PEM private key file of stsd.tls.cert"},
    {"stsd.tls.priorities", "stsd.tls.priorities", CT_STRING, F(tls_priorities), 0, 0, "",
     "GnuTLS priority string; empty = TLS 1.2 and 1.3 only"},
    {"stsd.auditLog", "stsd.auditLog", CT_STRING, F(audit_log), 0, 0, "",
     "file getting one JSON line per line handed out or changed (docs/audit.md); empty = off"},
    {"stsd.auditLog.lines", "stsd.auditLog.lines", CT_AUDITLINES, F(audit_hash), 0, 1, "plain",
     "lines in the audit log as they are (plain), or as their SHA-256 in hex (hash)"},
    {"stsd.auditLog.maxBytes", "stsd.auditLog.maxBytes", CT_SIZE, F(audit_max_bytes), KIB,
     1024 * GIB, "100M", "size at which the audit log is rotated (PATH.1, PATH.2: 3 files kept)"},
    {"stsd.cluster.self", "stsd.cluster.self", CT_INT, F(cluster_self), 0, CONF_CLUSTER_MAX,
     "0", "which stsd.cluster.node.N this node is; 0 = alone, no cluster"},
    NODE_ROW(1), NODE_ROW(2), NODE_ROW(3), NODE_ROW(4), NODE_ROW(5),
    NODE_ROW(6), NODE_ROW(7), NODE_ROW(8), NODE_ROW(9),
    {"stsd.cluster.dir", "stsd.cluster.dir", CT_STRING, F(cluster_dir), 0, 0, "",
     "where raft keeps its log and snapshots; empty = <stateDirectory>/raft"},
    {"stsd.cluster.electionTimeout", "stsd.cluster.electionTimeout", CT_INT,
     F(cluster_election_ms), 100, 60000, "1000",
     "milliseconds without a word from the leader before a follower stands for election"},
    {"stsd.cluster.forward", "stsd.cluster.forward", CT_FORWARD, F(cluster_redirect), 0, 1,
     "proxy", "how a follower passes a request on: proxy (asks the leader, relays its "
     "answer) or redirect (307 to the leader's URL)"},
    {"stsd.cluster.join", "stsd.cluster.join", CT_BOOL, F(cluster_join), 0, 1, "false",
     "true: this node joins a running cluster (CLUSTERADD on its leader) instead of "
     "founding one with the listed nodes at its first start"},
    {"stsd.cluster.snapshotEntries", "stsd.cluster.snapshotEntries", CT_INT,
     F(cluster_snapshot_entries), 16, 1000000, "8192",
     "raft entries (each a batch of changes) between two snapshots of the state, which a "
     "node far behind or new catches up from"},
    {"stsd.cluster.pipeline", "stsd.cluster.pipeline", CT_INT, F(cluster_pipeline), 1, 64,
     "1", "batches of changes the leader has on their way to the followers at once, each "
     "answered once committed, in order; 1: each waits for the one before (on one disk "
     "per node, one big batch per fsync beats several small ones: docs/benchmarks.md)"},
    {"stsd.cluster.forwardBatches", "stsd.cluster.forwardBatches", CT_INT,
     F(cluster_forward_batches), 0, 16, "2",
     "batches a follower has on their way to the leader at once, each with the requests "
     "answered at once that came while the others were out (one request, one commit for "
     "them all); 0: each request goes alone"},
    {"stsd.cluster.forwardWithin", "stsd.cluster.forwardWithin", CT_INT,
     F(cluster_forward_within), 100, 3600000, "3000",
     "milliseconds within which a request a follower passes on must start running on the "
     "leader, counted from its arrival at the follower; later, the leader refuses it and "
     "it is not run (503, retry): set it below the clients' own timeouts, so that no "
     "request runs after its client gave up on it"},
    {"stsd.cluster.followerReads", "stsd.cluster.followerReads", CT_BOOL,
     F(cluster_follower_reads), 0, 1, "true",
     "true: a follower answers LENGTH, STATUS, GET, PEEK, KEYS and COLUMNS itself (STATUS "
     "and KEYS in HTML), from its hot standby, "
     "once it has applied what the leader had applied when asked (READINDEX, one question "
     "for every read that came meanwhile); false: it passes them to the leader"},
    {"stsd.cluster.compactBytes", "stsd.cluster.compactBytes", CT_SIZE,
     F(cluster_compact_bytes), 64 * KIB, 1024 * GIB, "64M",
     "log size in the state directory past which the leader compacts it, once the log "
     "has also grown by more than the last compaction wrote: a snapshot of every list "
     "replicated to every node, older logs and files removed everywhere"},
};
#define N_KEYS (sizeof conf_keys / sizeof conf_keys[0])
const size_t conf_nkeys = N_KEYS;

/* How CONFIG shows a key, beside the table so that its rows keep their shape. */
#define CF_HIDE_UNSET 1u     /* left out while it is empty: configured as before, shown as before */
#define CF_SECRET 2u         /* a mask, never the value */
#define CF_AUDIT 4u          /* left out while stsd.auditLog is off, as that key is */
static const struct {
    const char *name;
    unsigned flags;
} conf_flags[] = {
    {"stsd.token", CF_HIDE_UNSET | CF_SECRET},     {"stsd.adminToken", CF_HIDE_UNSET | CF_SECRET},
    {"stsd.tokenFile", CF_HIDE_UNSET},             {"stsd.adminTokenFile", CF_HIDE_UNSET},
    {"stsd.allow", CF_HIDE_UNSET},                 {"stsd.disabledCommands", CF_HIDE_UNSET},
    {"stsd.tls.cert", CF_HIDE_UNSET},              {"stsd.tls.key", CF_HIDE_UNSET},
    {"stsd.tls.priorities", CF_HIDE_UNSET},        {"stsd.auditLog", CF_HIDE_UNSET},
    {"stsd.auditLog.lines", CF_AUDIT},             {"stsd.auditLog.maxBytes", CF_AUDIT},
};

static unsigned key_flags(const conf_key *k)
{
    for (size_t i = 0; i < sizeof conf_flags / sizeof conf_flags[0]; i++)
        if (strcmp(conf_flags[i].name, k->name) == 0)
            return conf_flags[i].flags;
    return 0;
}

static const char *const fsync_names[] = {"always", "everysec", "no"};
static const char *const logfmt_names[] = {"text", "json"};
static const char *const lines_names[] = {"plain", "hash"};
static const char *const forward_names[] = {"proxy", "redirect"};

/* The words of the types that take one of a few, in the order of the values they stand
 * for. */
static const struct {
    const char *const *names;
    size_t n;
} conf_words[] = {
    [CT_FSYNC] = {fsync_names, 3}, [CT_LOGFMT] = {logfmt_names, 2},
    [CT_AUDITLINES] = {lines_names, 2}, [CT_FORWARD] = {forward_names, 2},
};

const conf_key *conf_key_find(const char *name)
{
    for (size_t i = 0; i < N_KEYS; i++)
        if (strcmp(conf_keys[i].name, name) == 0)
            return &conf_keys[i];
    return NULL;
}

/* Case-insensitive, so that a wrongly cased key is an error rather than silently foreign. */
int conf_key_is_ours(const char *name)
{
    return strncasecmp(name, JP, strlen(JP)) == 0 || strncasecmp(name, "stsd.", 5) == 0;
}

static void *field(config *c, const conf_key *k)
{
    return (char *)c + k->off;
}

static const void *cfield(const config *c, const conf_key *k)
{
    return (const char *)c + k->off;
}

/* Whitespace as Java's String.trim() sees it: JMeter trims every property it reads. */
static int is_trim(unsigned char ch)
{
    return ch <= ' ';
}

/* Java's legal charset names; also keeps CR/LF and "//" suffixes out of Content-Type. */
static int charset_name_ok(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
              strchr("-+:_.", *s)))
            return 0;
    return 1;
}

/* The index of s[0..n) among the count names (letter case aside), or -1. */
static int name_index(const char *s, size_t n, const char *const *names, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (n == strlen(names[i]) && strncasecmp(s, names[i], n) == 0)
            return (int)i;
    return -1;
}

static int addr_ok(const char *s)
{
    unsigned char a[sizeof(struct in6_addr)];
    return inet_pton(AF_INET, s, a) == 1 || inet_pton(AF_INET6, s, a) == 1;
}

/* Parses text for k into *num or *str; shows `name` (a key or an option) in messages. */
static int value_parse(const conf_key *k, const char *name, const char *text,
                       unsigned long long *num, char **str, buf *err)
{
    const char *s = text;
    size_t n = strlen(s);
    while (n && is_trim((unsigned char)*s))
        s++, n--;
    while (n && is_trim((unsigned char)s[n - 1]))
        n--;
    char lo[32], hi[32];
    uint64_t v;
    switch (k->type) {
    case CT_INT:
    case CT_COUNT:
        if (num_parse_u64(s, n, k->min, k->max, &v) == 0)
            return *num = v, 0;
        buf_printf(err, "%s: \"%s\" is not an integer in %llu..%llu", name, text, k->min, k->max);
        return -1;
    case CT_SIZE:
        if (num_parse_size(s, n, k->min, k->max, &v) == 0 && v <= SIZE_MAX)
            return *num = v, 0;
        num_size_text(lo, sizeof lo, k->min);
        num_size_text(hi, sizeof hi, k->max);
        buf_printf(err, "%s: \"%s\" is not a size in %s..%s bytes (digits with an optional "
                   "K, M or G suffix)", name, text, lo, hi);
        return -1;
    case CT_BOOL:
    case CT_ONOFF: {
        static const char *const bools[] = {"false", "true"}, *const onoff[] = {"off", "on"};
        const char *const *names = k->type == CT_BOOL ? bools : onoff;
        int i = name_index(s, n, names, 2);
        if (i >= 0)
            return *num = (unsigned)i, 0;
        buf_printf(err, "%s: \"%s\" is not %s or %s", name, text, names[1], names[0]);
        return -1;
    }
    case CT_FSYNC: case CT_LOGFMT: case CT_AUDITLINES: case CT_FORWARD: {
        const char *const *names = conf_words[k->type].names;
        size_t count = conf_words[k->type].n;
        int i = name_index(s, n, names, count);
        if (i >= 0)
            return *num = (unsigned)i, 0;
        buf_printf(err, "%s: \"%s\" is not ", name, text);
        for (size_t j = 0; j < count; j++)
            buf_printf(err, "%s%s", j == 0 ? "" : j + 1 < count ? ", " : " or ", names[j]);
        return -1;
    }
    case CT_NODE: {
        /* Empty: no such node, so that -D may take one out of a shared file's list. */
        if (n == 0)
            return *str = NULL, 0;
        buf why = BUF_INIT;
        if ((*str = strndup(s, n)) && conf_cluster_node_check(*str, &why) == 0)
            return 0;
        buf_printf(err, "%s: %s", name, why.data ? why.data : "out of memory");
        buf_free(&why);
        free(*str);
        *str = NULL;
        return -1;
    }
    case CT_STRING:
    case CT_CHARSET:
    case CT_ADDR:
        *str = strndup(s, n);
        if (!*str) {
            buf_printf(err, "%s: out of memory", name);
            return -1;
        }
        if (k->type == CT_CHARSET && !charset_name_ok(*str)) {
            buf_printf(err, "%s: \"%s\" is not a charset name", name, text);
        } else if (k->type == CT_ADDR && !addr_ok(*str)) {
            buf_printf(err, "%s: \"%s\" is not an IPv4 or IPv6 address", name, text);
        } else {
            return 0;
        }
        free(*str);
        *str = NULL;
        return -1;
    case CT_IGNORED:
        return 0;
    }
    return -1;
}

static void value_store(config *c, const conf_key *k, unsigned long long num, char *str)
{
    void *f = field(c, k);
    switch (k->type) {
    case CT_INT: case CT_BOOL: case CT_ONOFF: case CT_LOGFMT: case CT_AUDITLINES:
    case CT_FORWARD:
        *(int *)f = (int)num;
        break;
    case CT_COUNT: case CT_SIZE: *(size_t *)f = (size_t)num; break;
    case CT_FSYNC: *(conf_fsync *)f = (conf_fsync)num; break;
    case CT_STRING: case CT_CHARSET: case CT_ADDR: case CT_NODE:
        free(*(char **)f);
        *(char **)f = str;
        break;
    case CT_IGNORED: break;
    }
}

const char *config_key_lookalike(const char *key)
{
    return conf_near_key(key, conf_keys, N_KEYS);
}

int conf_foreign_key(const char *where, const char *key, int strict, buf *err)
{
    const char *known = config_key_lookalike(key);
    if (!known)
        return 0;
    if (strict) {
        buf_printf(err, "%sunknown key %s: did you mean %s? (--strict-keys refuses it)", where,
                   key, known);
        return -1;
    }
    log_warn("%sunknown key %s ignored: did you mean %s?", where, key, known);
    return 0;
}

int conf_set_as(config *c, const conf_key *k, const char *name, const char *value, buf *err)
{
    unsigned long long num = 0;
    char *str = NULL;
    if (value_parse(k, name, value, &num, &str, err) != 0)
        return -1;
    value_store(c, k, num, str);
    return 0;
}

int config_set(config *c, const char *key, const char *value, buf *err)
{
    const conf_key *k = conf_key_find(key);
    if (k)
        return conf_set_as(c, k, key, value, err);
    const char *near = config_key_lookalike(key);
    /* stsd.cluster.node.0, .10, .x: an id out of range, not a misspelling of node.1. */
    if (strncmp(key, CONF_NODE_PREFIX, strlen(CONF_NODE_PREFIX)) == 0)
        buf_printf(err, "unknown key \"%s\" (the nodes are " CONF_NODE_PREFIX "1 to "
                   CONF_NODE_PREFIX "%d)", key, CONF_CLUSTER_MAX);
    else if (near)
        buf_printf(err, "unknown key \"%s\" (did you mean %s?)", key, near);
    else
        buf_printf(err, "unknown key \"%s\"", key);
    return -1;
}

int config_defaults(config *c)
{
    buf err = BUF_INIT;
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < N_KEYS; i++)
        if (config_set(c, conf_keys[i].name, conf_keys[i].def, &err) != 0) {
            buf_free(&err);
            config_free(c);
            return -1;
        }
    buf_free(&err);
    return 0;
}

void config_free(config *c)
{
    for (size_t i = 0; i < N_KEYS; i++) {
        conf_type t = conf_keys[i].type;
        if (t == CT_STRING || t == CT_CHARSET || t == CT_ADDR || t == CT_NODE) {
            char **p = field(c, &conf_keys[i]);
            free(*p);
            *p = NULL;
        }
    }
}

typedef struct plain_ctx {
    int (*fn)(const char *key, const char *value, void *ctx);
    void *ctx;
    int fn_rc;
} plain_ctx;

static int plain_pair(const char *key, const char *value, size_t line, void *ctx)
{
    plain_ctx *p = ctx;
    p->fn_rc = p->fn(key, value, p->ctx);
    return p->fn_rc;
}

int config_parse_properties(const char *text, size_t len,
                            int (*fn)(const char *key, const char *value, void *ctx),
                            void *ctx, buf *err)
{
    plain_ctx p = {fn, ctx, 0};
    buf msg = BUF_INIT;
    size_t line = 0;
    int rc = properties_parse(text, len, plain_pair, &p, &msg, &line);
    if (rc != 0 && p.fn_rc == 0)
        buf_printf(err, "line %zu: %s", line, msg.data ? msg.data : "error");
    buf_free(&msg);
    return p.fn_rc ? p.fn_rc : rc;
}

typedef struct load_ctx {
    config *c;
    const char *path;
    buf *err;
    buf msg;
    int has_secret;     /* the file set a CF_SECRET key to a non-empty value */
    int strict;         /* --strict-keys: a key that looks like ours is an error */
} load_ctx;

static int load_pair(const char *key, const char *value, size_t line, void *ctx)
{
    load_ctx *l = ctx;
    buf_clear(&l->msg);
    if (!conf_key_is_ours(key)) {
        char where[4200];
        snprintf(where, sizeof where, "%s:%zu: ", l->path, line);
        if (conf_foreign_key(where, key, l->strict, l->err) == 0)
            return 0;
        return 1;
    }
    const conf_key *k = conf_key_find(key);
    if (k && (key_flags(k) & CF_SECRET) && *value)
        l->has_secret = 1;
    if (config_set(l->c, key, value, &l->msg) == 0)
        return 0;
    buf_printf(l->err, "%s:%zu: %s", l->path, line, l->msg.data);
    return 1;
}

/* Bigger than any sane properties file; stops `--config /dev/zero` from eating memory. */
#define CONF_FILE_MAX (16 * 1024 * 1024)

int config_load_file(config *c, const char *path, buf *err)
{
    return conf_load_file(c, path, 0, err);
}

int conf_load_file(config *c, const char *path, int strict, buf *err)
{
    buf text = BUF_INIT, msg = BUF_INIT;
    load_ctx l = {c, path, err, BUF_INIT, 0, strict};
    struct stat fst;
    size_t line = 0;
    int rc = -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        buf_printf(err, "%s: %s", path, strerror(errno));
        goto cleanup;
    }
    for (;;) {
        if (text.len > CONF_FILE_MAX) {
            buf_printf(err, "%s: larger than %d bytes", path, CONF_FILE_MAX);
            goto cleanup;
        }
        if (buf_reserve(&text, 65536) != 0) {
            buf_printf(err, "%s: out of memory", path);
            goto cleanup;
        }
        ssize_t n = read(fd, text.data + text.len, text.cap - text.len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            buf_printf(err, "%s: %s", path, strerror(errno));
            goto cleanup;
        }
        if (n == 0)
            break;
        text.len += (size_t)n;
    }
    rc = properties_parse(text.data, text.len, load_pair, &l, &msg, &line);
    if (rc == -1)
        buf_printf(err, "%s:%zu: %s", path, line, msg.data ? msg.data : "error");
    rc = rc ? -1 : 0;
    /* Tokens in a file others can read are no secret. */
    if (rc == 0 && l.has_secret && fstat(fd, &fst) == 0 && (fst.st_mode & 077))
        log_warn("%s holds tokens but is readable by group or others (mode %03o): "
                 "chmod 600 it", path, (unsigned)(fst.st_mode & 0777));
cleanup:
    if (fd >= 0)
        close(fd);
    buf_free(&text);
    buf_free(&msg);
    buf_free(&l.msg);
    return rc;
}

/* ---- command line ---- */

/* ---- checks against the system, CONFIG listing, usage ---- */

static int charset_check(const char *name, const char *cs, buf *err)
{
    if (!cs || !charset_name_ok(cs)) {
        buf_printf(err, "%s: \"%s\" is not a charset name", name, cs ? cs : "");
        return -1;
    }
    iconv_t to = iconv_open(cs, "UTF-8");
    iconv_t from = iconv_open("UTF-8", cs);
    int ok = to != (iconv_t)-1 && from != (iconv_t)-1;
    if (to != (iconv_t)-1)
        iconv_close(to);
    if (from != (iconv_t)-1)
        iconv_close(from);
    if (!ok)
        buf_printf(err, "%s: \"%s\" is not a charset iconv knows (use a name such as UTF-8, "
                   "ISO-8859-1, ISO-8859-15 or windows-1252)", name, cs);
    return ok ? 0 : -1;
}

int config_validate(const config *c, buf *err)
{
    char lo[32], hi[32];
    for (size_t i = 0; i < N_KEYS; i++) {
        const conf_key *k = &conf_keys[i];
        const void *f = cfield(c, k);
        unsigned long long v;
        /* Fields may have been set by code, not by config_set: check the bounds again. */
        switch (k->type) {
        case CT_INT: case CT_BOOL: case CT_ONOFF: case CT_LOGFMT: case CT_AUDITLINES:
        case CT_FORWARD:
            if (*(const int *)f < 0 || (unsigned long long)*(const int *)f < k->min ||
                (unsigned long long)*(const int *)f > k->max) {
                buf_printf(err, "%s: %d is not in %llu..%llu", k->name, *(const int *)f, k->min,
                           k->max);
                return -1;
            }
            break;
        case CT_COUNT: case CT_SIZE:
            v = *(const size_t *)f;
            if (v < k->min || v > k->max) {
                num_size_text(lo, sizeof lo, k->min);
                num_size_text(hi, sizeof hi, k->max);
                buf_printf(err, "%s: %llu is not in %s..%s", k->name, v, lo, hi);
                return -1;
            }
            break;
        case CT_FSYNC:
            if ((unsigned)*(const conf_fsync *)f > CONF_FSYNC_NO) {
                buf_printf(err, "%s: not always, everysec or no", k->name);
                return -1;
            }
            break;
        case CT_CHARSET:
            if (charset_check(k->name, *(char *const *)f, err) != 0)
                return -1;
            break;
        case CT_ADDR:
            if (!*(char *const *)f || !addr_ok(*(char *const *)f)) {
                buf_printf(err, "%s: \"%s\" is not an IPv4 or IPv6 address", k->name,
                           *(char *const *)f ? *(char *const *)f : "");
                return -1;
            }
            break;
        case CT_STRING: case CT_NODE: case CT_IGNORED:   /* nodes: conf_cluster_validate */
            break;
        }
    }
    if (conf_cluster_validate(c, err) != 0)
        return -1;
    const char *sep = c->init_file_separator ? c->init_file_separator : "";
    if (strlen(sep) != 1 || !csv_sep_ok(*sep)) {
        buf_printf(err, "stsd.initFileSeparator: \"%s\" is not one byte other than a quote, "
                   "CR or LF", sep);
        return -1;
    }
    struct stat st;
    const char *dir = c->dataset_dir ? c->dataset_dir : "";
    if (stat(dir, &st) != 0) {
        buf_printf(err, JP "datasetDirectory: \"%s\": %s", dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        buf_printf(err, JP "datasetDirectory: \"%s\" is not a directory", dir);
        return -1;
    }
    return 0;
}

/* config_each, or with full, config_each_key. */
static void each(const config *c, int full,
                 void (*fn)(const char *key, const char *value, void *ctx), void *ctx)
{
    char num[32];
    for (size_t i = 0; i < N_KEYS; i++) {
        const conf_key *k = &conf_keys[i];
        const void *f = cfield(c, k);
        const char *v = num;
        if (!k->show)
            continue;
        /* Keys added after the reference's set stay out of CONFIG until used, so that
         * a server configured as before answers as before. */
        if ((key_flags(k) & CF_HIDE_UNSET) && k->type == CT_STRING &&
            (!*(char *const *)f || !**(char *const *)f))
            continue;
        if ((key_flags(k) & CF_AUDIT) && (!c->audit_log || !*c->audit_log))
            continue;
        /* The cluster's keys while this node is one of a cluster; of the nodes, those set. */
        if (strncmp(k->name, "stsd.cluster.", 13) == 0 &&
            (!c->cluster_self || (k->type == CT_NODE && !*(char *const *)f)))
            continue;
        /* The reference closes its own keys with stopExit; ours follow. */
        if (!full && i > 0 && strncmp(k->name, "stsd.", 5) == 0 &&
            strncmp(conf_keys[i - 1].name, "stsd.", 5) != 0)
            fn("stopExit", "true", ctx);
        switch (k->type) {
        case CT_INT: snprintf(num, sizeof num, "%d", *(const int *)f); break;
        case CT_COUNT: case CT_SIZE: snprintf(num, sizeof num, "%zu", *(const size_t *)f); break;
        case CT_BOOL: v = *(const int *)f ? "true" : "false"; break;
        case CT_ONOFF: v = *(const int *)f ? "on" : "off"; break;
        case CT_FSYNC: v = fsync_names[(unsigned)*(const conf_fsync *)f % 3]; break;
        case CT_LOGFMT: case CT_AUDITLINES: case CT_FORWARD:
            v = conf_words[k->type].names[*(const int *)f ? 1 : 0];
            break;
        case CT_STRING: case CT_CHARSET: case CT_ADDR: case CT_NODE:
            v = *(char *const *)f ? *(char *const *)f : "";
            break;
        case CT_IGNORED: continue;
        }
        if (key_flags(k) & CF_SECRET)
            v = "********";
        fn(full ? k->name : k->show, v, ctx);
        if (!full && k->off == F(dataset_dir)) {
            char *real = realpath(v, NULL);
            fn("datasetDirectory (canonical)", real ? real : v, ctx);
            free(real);
        }
    }
}

void config_each(const config *c, void (*fn)(const char *key, const char *value, void *ctx),
                 void *ctx)
{
    each(c, 0, fn, ctx);
}

void config_each_key(const config *c,
                     void (*fn)(const char *key, const char *value, void *ctx), void *ctx)
{
    each(c, 1, fn, ctx);
}
