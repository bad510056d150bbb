/* SPDX-License-Identifier: Apache-2.0 */
/* config_core.h - what config.c (the key table, values, files) offers config_args.c
 * (the command line, --help, the man page's lists): the table and its lookups. */
#ifndef STSD_CONFIG_CORE_H
#define STSD_CONFIG_CORE_H

#include "config_int.h"

/* The key table, in the order CONFIG and --help show it. */
extern const conf_key conf_keys[];
extern const size_t conf_nkeys;

/* The row of a key by its exact name, or NULL. */
const conf_key *conf_key_find(const char *name);
/* Whether a key is in our namespaces (jmeterPlugin.sts., stsd.), letter case aside. */
int conf_key_is_ours(const char *name);
/* config_set for row k, naming `name` (the key, or the option that stands for it) in
 * messages. Returns 0, or -1 with a message in err, c unchanged. */
int conf_set_as(config *c, const conf_key *k, const char *name, const char *value, buf *err);
/* config_load_file, where strict (--strict-keys) makes a key that looks like a
 * misspelling of ours (config_key_lookalike) an error instead of a warning. */
int conf_load_file(config *c, const char *path, int strict, buf *err);
/* A key outside our namespaces, found at where ("FILE:LINE: " or ""): if it looks like a
 * misspelling of one of ours, logs a warning naming it, or with strict returns -1 with the
 * message in err. Otherwise (a key that belongs to someone else) 0, silently. */
int conf_foreign_key(const char *where, const char *key, int strict, buf *err);

#endif
