/* SPDX-License-Identifier: Apache-2.0 */
/* config.h - stsd's configuration: one table of keys, read from a Java-style properties
 * file, -Dkey=value overrides and long options. */
#ifndef STSD_CONFIG_H
#define STSD_CONFIG_H

#include <stddef.h>

#include "base/buf.h"

/* The most nodes a cluster may name (stsd.cluster.node.1 .. .9). */
#define CONF_CLUSTER_MAX 9

typedef enum conf_fsync { CONF_FSYNC_ALWAYS, CONF_FSYNC_EVERYSEC, CONF_FSYNC_NO } conf_fsync;

typedef struct config {
    /* The reference's keys (jmeterPlugin.sts.*). */
    int port;                        /* port: 0..65535, 9191; 0 = any free port */
    char *dataset_dir;               /* datasetDirectory: "." */
    int add_timestamp;               /* addTimestamp: true */
    int daemon;                      /* daemon: false */
    char *init_file_at_startup;      /* initFileAtStartup: "" */
    int init_file_at_startup_regex;  /* initFileAtStartupRegex: false */
    int init_file_header;            /* stsd.initFileHeader: false (first line names columns) */
    char *init_file_separator;       /* stsd.initFileSeparator: "," (one byte) */
    char *charset_response;          /* charsetEncodingHttpResponse: UTF-8 */
    char *charset_read;              /* charsetEncodingReadFile: UTF-8 */
    char *charset_write;             /* charsetEncodingWriteFile: UTF-8 */
    /* Our own keys (stsd.*). */
    char *bind;                      /* stsd.bind: "::" (IPv4 and IPv6), or one address */
    char *port_file;                 /* stsd.portFile: "" (write the bound port there) */
    int threads;                     /* stsd.threads: 0 = number of cores */
    int max_connections;             /* stsd.maxConnections: 4096 */
    int max_connections_per_ip;      /* stsd.maxConnectionsPerIp: 0 = unlimited */
    int connection_timeout;          /* stsd.connectionTimeout: seconds idle, 60 */
    size_t max_body;                 /* stsd.maxBodySize: bytes, 16 MiB */
    size_t max_line;                 /* stsd.maxLineSize: bytes, 1 MiB */
    int max_wait;                    /* stsd.maxWait: seconds a TIMEOUT may ask, 600 */
    int max_parties;                 /* stsd.maxParties: largest BARRIER PARTIES, 100000 */
    int max_lease;                   /* stsd.maxLease: seconds a LEASE may ask, 3600 */
    size_t max_lists;                /* stsd.maxLists: 100000 */
    size_t max_keys;                 /* stsd.maxKeys: 100000 */
    size_t max_bytes;                /* stsd.maxBytes: bytes of lines stored, 0 = unlimited */
    int journal;                     /* stsd.journal: on|off, off */
    conf_fsync journal_fsync;        /* stsd.journal.fsync: always|everysec|no, everysec */
    char *state_dir;                 /* stsd.stateDirectory: "" = <datasetDirectory>/.stsd */
    size_t metrics_max_lists;        /* stsd.metrics.maxLists: 10000; more go to _other */
    int log_json;                    /* stsd.log.format: text|json, text */
    int json_by_accept;              /* stsd.jsonByAccept: false (Accept alone never turns
                                      * the reference's 11 commands to JSON) */
    int ko_status;                   /* stsd.koStatus: false (their HTML KO is HTTP 200) */
    /* Access and TLS (server/auth, server/allow, server/tls); "" = not used. */
    char *token;                     /* stsd.token: comma list of data tokens (secret) */
    char *admin_token;               /* stsd.adminToken: comma list of admin tokens (secret) */
    char *token_file;                /* stsd.tokenFile: file with more data tokens */
    char *admin_token_file;          /* stsd.adminTokenFile: file with more admin tokens */
    char *allow;                     /* stsd.allow: comma list of CIDRs */
    char *disabled_commands;         /* stsd.disabledCommands: comma list of commands */
    char *tls_cert;                  /* stsd.tls.cert: PEM certificate chain file */
    char *tls_key;                   /* stsd.tls.key: PEM private key file */
    char *tls_priorities;            /* stsd.tls.priorities: "" = TLS 1.2 and 1.3 */
    /* The audit log (audit/): "" = off. */
    char *audit_log;                 /* stsd.auditLog: the file's path */
    int audit_hash;                  /* stsd.auditLog.lines: plain|hash, plain (0) */
    size_t audit_max_bytes;          /* stsd.auditLog.maxBytes: rotation size, 100 MiB */
    /* Replicas (cluster/): off while cluster_self is 0. */
    char *cluster_node[CONF_CLUSTER_MAX + 1]; /* stsd.cluster.node.N: "RAFT_ADDRESS HTTP_URL"
                                      * for N in 1..CONF_CLUSTER_MAX; NULL: no such node */
    int cluster_self;                /* stsd.cluster.self: which node this is, 0 = alone */
    char *cluster_dir;               /* stsd.cluster.dir: raft's data, "" = <state>/raft */
    int cluster_election_ms;         /* stsd.cluster.electionTimeout: ms, 1000 */
    int cluster_redirect;            /* stsd.cluster.forward: proxy (0) | redirect (1) */
    int cluster_snapshot_entries;    /* stsd.cluster.snapshotEntries: 8192 */
    size_t cluster_compact_bytes;    /* stsd.cluster.compactBytes: 64 MiB */
    int cluster_pipeline;            /* stsd.cluster.pipeline: batches in flight, 1 */
    int cluster_join;                /* stsd.cluster.join: false (true: no bootstrap) */
    int cluster_follower_reads;      /* stsd.cluster.followerReads: true */
    int cluster_forward_within;      /* stsd.cluster.forwardWithin: ms, 3000 */
    int cluster_forward_batches;     /* stsd.cluster.forwardBatches: in flight, 2; 0: off */
} config;

/* Fills c with every default. Returns 0, or -1 on ENOMEM. */
int config_defaults(config *c);
/* Frees the strings c owns. */
void config_free(config *c);

/* Sets one key (full name, e.g. "jmeterPlugin.sts.port" or "stsd.threads") from text.
 * Returns 0; or -1 with a message in err (unknown key, bad value), c unchanged. */
int config_set(config *c, const char *key, const char *value, buf *err);

/* Reads a Java properties file (key=value, key: value, key value, # and ! comments,
 * backslash continuations and escapes, \uXXXX) and sets each key. Unknown keys outside
 * jmeterPlugin.sts. and stsd. are ignored (a shared JMeter file holds many), with a
 * warning naming file, line and our key when one looks like a misspelling of ours
 * (config_key_lookalike). Returns 0, or -1 with a message naming the file and line in err. */
int config_load_file(config *c, const char *path, buf *err);

/* The known key that key looks like a misspelling of, or NULL (key is known, or is
 * nothing like ours): within two edits of a known key (letter case aside; a swap of two
 * neighbours is one edit), or a known key's last part after a prefix that reads as ours
 * gone wrong ("jmeter" with an "sts" part: jmeter.sts.daemon, jmeterPlugins.sts.port; a
 * first part within two edits of jmeterPlugin; "sts" or "stsd..."). JMeter's own keys
 * (jmeterengine.nongui.port, jmeter.save.saveresults.*) are none of these. */
const char *config_key_lookalike(const char *key);

/* Parses a properties text (as config_load_file) and calls fn for every key/value pair
 * in file order. Returns 0, or fn's nonzero value, or -1 on a syntax error/ENOMEM with
 * a message in err. Exposed for tests. */
int config_parse_properties(const char *text, size_t len,
                            int (*fn)(const char *key, const char *value, void *ctx),
                            void *ctx, buf *err);

/* What the command line asked for besides settings. */
typedef enum config_action {
    CONFIG_RUN, CONFIG_HELP, CONFIG_VERSION, CONFIG_CHECK_JOURNAL
} config_action;

typedef struct config_cli {
    config_action action;
    int fresh;                /* --fresh: ignore a saved state and start empty */
    int repair;               /* --repair, with --check-journal: cut a damaged log */
    const char *check_dir;    /* --check-journal DIR */
    int strict_keys;          /* --strict-keys: a misspelt-looking key is an error */
} config_cli;

/* Applies argv: --config FILE first (wherever it stands), then -Dkey=value, --port N,
 * --dataset-dir DIR, --bind ADDR, --threads N, --state-dir DIR, --journal on|off,
 * --port-file FILE, --fresh, --check-journal DIR [--repair], --strict-keys, --help,
 * --version, in order
 * (--opt=value or --opt value; options spelt in full, -h and -v alone). Returns 0, or -1
 * with a message in err. Uses getopt_long: not for two threads at once. */
int config_from_args(config *c, int argc, char **argv, config_cli *cli, buf *err);

/* Checks values that depend on each other or on the system (charsets iconv knows,
 * dataset directory exists). Returns 0, or -1 with a message in err. */
int config_validate(const config *c, buf *err);

/* Node id's raft address ("HOST:PORT") into raft[rcap] and HTTP URL ("http(s)://HOST:PORT",
 * its trailing slash left out) into url[ucap]; either may be NULL, not wanted. Returns 0,
 * or -1 with nothing written: id outside 1..CONF_CLUSTER_MAX, no such node, a value not
 * of that form (config_validate refuses it), or a part longer than its buffer. */
int config_cluster_node(const config *c, int id, char *raft, size_t rcap, char *url,
                        size_t ucap);
/* A node given outside the keys (CLUSTER ADD): raft_url as a stsd.cluster.node.N value,
 * checked the same way; its raft address and URL (no trailing slash) into raft and url.
 * Returns 0, or -1 with why not in err. */
int config_cluster_parse(const char *raft_url, char *raft, size_t rcap, char *url,
                         size_t ucap, buf *err);
/* How many stsd.cluster.node.N keys are set (0: no cluster). */
size_t config_cluster_count(const config *c);

/* Calls fn(key, value) for each effective setting, in the order CONFIG shows them:
 * the reference's short names first (port, datasetDirectory, ...), then stsd.* keys. */
void config_each(const config *c, void (*fn)(const char *key, const char *value, void *ctx),
                 void *ctx);

/* Calls fn(key, value) for each setting as config_each does, but with the full key names
 * (jmeterPlugin.sts.port, stsd.threads, ...) and nothing else. */
void config_each_key(const config *c,
                     void (*fn)(const char *key, const char *value, void *ctx), void *ctx);

/* The usage text for --help. */
const char *config_usage(void);

/* One key of the table, as documentation shows it (stsd(8) is generated from these). */
typedef struct config_key_doc {
    const char *name;    /* full key: "jmeterPlugin.sts.port" */
    const char *def;     /* default, as written in a properties file ("" = empty) */
    const char *help;    /* one line */
    char values[64];     /* what it accepts: "0..65535", "1K..1G bytes", "true|false", ... */
} config_key_doc;

/* One long option, as --help shows it. */
typedef struct config_opt_doc {
    const char *name;    /* "--port" */
    const char *alias;   /* "-h", or NULL */
    const char *arg;     /* "N", or NULL for a flag */
    const char *key;     /* the key it sets, or NULL */
    const char *help;
} config_opt_doc;

/* Calls fn for every key, in the order --help lists them. */
void config_doc_keys(void (*fn)(const config_key_doc *k, void *ctx), void *ctx);
/* Calls fn for every long option, in the order --help lists them. */
void config_doc_options(void (*fn)(const config_opt_doc *o, void *ctx), void *ctx);

#endif
