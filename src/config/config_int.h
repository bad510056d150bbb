/* SPDX-License-Identifier: Apache-2.0 */
/* config_int.h - what config.c (the key table, values, files) shares with config_args.c
 * (the command line, --help, the man page's lists); nothing else includes it. */
#ifndef STSD_CONFIG_INT_H
#define STSD_CONFIG_INT_H

#include <stddef.h>

#include "base/buf.h"
#include "config/config.h"

#define JP "jmeterPlugin.sts."

/* A value's type decides its parser, its bounds' meaning and how CONFIG prints it. */
typedef enum conf_type {
    CT_INT,      /* int, plain decimal within [min, max] */
    CT_COUNT,    /* size_t, plain decimal within [min, max] */
    CT_SIZE,     /* size_t bytes, decimal with an optional K, M or G suffix */
    CT_BOOL,     /* int 0/1 from true|false */
    CT_ONOFF,    /* int 0/1 from on|off */
    CT_FSYNC,    /* conf_fsync from always|everysec|no */
    CT_LOGFMT,   /* int 0/1 from text|json */
    CT_AUDITLINES, /* int 0/1 from plain|hash */
    CT_FORWARD,  /* int 0/1 from proxy|redirect */
    CT_STRING,   /* char *, any text */
    CT_CHARSET,  /* char *, a charset name; iconv is asked in config_validate */
    CT_ADDR,     /* char *, a numeric IPv4 or IPv6 address */
    CT_NODE,     /* char *, "RAFT_HOST:PORT http(s)://HOST:PORT"; empty text: NULL */
    CT_IGNORED   /* no field: a reference key that means nothing to a standalone server */
} conf_type;

typedef struct conf_key {
    const char *name;        /* full key, as in files and -D */
    const char *show;        /* name CONFIG shows; NULL = not shown */
    conf_type type;
    size_t off;              /* offsetof(config, field) */
    unsigned long long min, max;
    const char *def;         /* default, parsed by the same code as user input */
    const char *help;
} conf_key;

#endif
