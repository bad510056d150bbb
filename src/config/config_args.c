/* SPDX-License-Identifier: Apache-2.0 */
/* config_args.c - the command line: getopt_long over the option table, -Dkey=value,
 * the --help text and the lists stsd(8) is generated from. */
#include "config/config.h"
#include "config_core.h"
#include "base/num.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum opt_kind {
    OPT_SET, OPT_CONFIG, OPT_FRESH, OPT_CHECK, OPT_REPAIR, OPT_STRICT, OPT_HELP, OPT_VERSION
} opt_kind;

typedef struct conf_opt {
    const char *name;
    const char *alias;   /* a short spelling, taken without "=value" */
    opt_kind kind;
    const char *key;     /* OPT_SET: the key it sets */
    const char *arg;     /* NULL = a flag */
    const char *help;
} conf_opt;

static const conf_opt conf_opts[] = {
    {"--config", NULL, OPT_CONFIG, NULL, "FILE", "read a properties file before the other options"},
    {"--port", NULL, OPT_SET, JP "port", "N", "TCP port (0 = any free port)"},
    {"--dataset-dir", NULL, OPT_SET, JP "datasetDirectory", "DIR", "where INITFILE reads, SAVE writes"},
    {"--bind", NULL, OPT_SET, "stsd.bind", "ADDR", "IPv4 or IPv6 address to listen on"},
    {"--threads", NULL, OPT_SET, "stsd.threads", "N", "HTTP threads (0 = one per core)"},
    {"--state-dir", NULL, OPT_SET, "stsd.stateDirectory", "DIR", "where the journal lives"},
    {"--journal", NULL, OPT_SET, "stsd.journal", "on|off", "log changes to disk, replay at start"},
    {"--port-file", NULL, OPT_SET, "stsd.portFile", "FILE", "write the bound port there"},
    {"--fresh", NULL, OPT_FRESH, NULL, NULL, "ignore a saved state and start empty"},
    {"--check-journal", NULL, OPT_CHECK, NULL, "DIR", "check the journal in DIR and exit"},
    {"--repair", NULL, OPT_REPAIR, NULL, NULL, "with --check-journal: cut a damaged log"},
    {"--strict-keys", NULL, OPT_STRICT, NULL, NULL, "a key that looks like a misspelt one of ours is an error"},
    {"--help", "-h", OPT_HELP, NULL, NULL, "print this help and exit"},
    {"--version", "-v", OPT_VERSION, NULL, NULL, "print the version and exit"},
};
#define N_OPTS (sizeof conf_opts / sizeof conf_opts[0])

/* getopt_long's val for conf_opts[i]: above every character, so no short option collides. */
#define OPT_VAL(i) (256 + (int)(i))

/* One walk over argv with getopt_long (which keeps its place in globals: one at a time). */
typedef struct argv_walk {
    int argc;
    char **argv;
    struct option longopts[N_OPTS + 1];
    char shortopts[8 + 2 * N_OPTS];
} argv_walk;

static void walk_start(argv_walk *w, int argc, char **argv)
{
    /* '-': other words come back in order (as errors); ':': a missing value returns ':',
     * and getopt prints nothing (opterr too). */
    size_t ns = strlen(strcpy(w->shortopts, "-:D:"));
    w->argc = argc;
    w->argv = argv;
    for (size_t i = 0; i < N_OPTS; i++) {
        const conf_opt *o = &conf_opts[i];
        w->longopts[i] = (struct option){o->name + 2, o->arg ? required_argument : no_argument,
                                         NULL, OPT_VAL(i)};
        if (o->alias) {
            w->shortopts[ns++] = o->alias[1];
            if (o->arg)
                w->shortopts[ns++] = ':';
        }
    }
    w->longopts[N_OPTS] = (struct option){NULL, 0, NULL, 0};
    w->shortopts[ns] = '\0';
    /* glibc starts afresh when optind is 0, at its next call: make that call now, over no
     * words, so that walk_next may move optind by hand from the first word on. */
    static char prog[] = "stsd";
    char *none[] = {prog, NULL};
    optind = 0;
    opterr = 0;
    getopt_long(1, none, w->shortopts, w->longopts, NULL);
}

/* Whether word a is exactly --name or --name=value: getopt_long also takes an unambiguous
 * prefix (--dataset), which we keep refusing, as before getopt. */
static int word_is(const char *a, const char *name)
{
    size_t n = strlen(name);
    return strncmp(a, name, n) == 0 && (a[n] == '\0' || a[n] == '=');
}

/* The option getopt_long's c (or optopt) stands for, or NULL. */
static const conf_opt *opt_of(int c)
{
    if (c >= OPT_VAL(0) && c < OPT_VAL(N_OPTS))
        return &conf_opts[c - OPT_VAL(0)];
    for (size_t i = 0; c > 0 && c < 256 && i < N_OPTS; i++)
        if (conf_opts[i].alias && conf_opts[i].alias[1] == c)
            return &conf_opts[i];
    return NULL;
}

/* Why word is refused: c is getopt_long's answer (1: not an option, ':' a value missing,
 * '?' unknown or a value given to a flag, 'D' a bad -D), o the option it names or NULL.
 * Returns -1. */
static int walk_error(int c, const conf_opt *o, const char *word, buf *err)
{
    if (c == 1 && word[0] != '-')
        buf_printf(err, "unexpected argument \"%s\" (see --help)", word);
    else if (c == 'D')
        buf_printf(err, "%s: -D needs key=value (with no space after -D)", word);
    else if (c == ':' && o && word_is(word, o->name))
        buf_printf(err, "%s needs a value: %s %s", o->name, o->name, o->arg);
    else if (c == '?' && o && word_is(word, o->name))
        buf_printf(err, "%s takes no value", o->name);
    else
        buf_printf(err, "unknown option \"%s\" (see --help)", word);
    return -1;
}

/* The next option: 1 with *o set (NULL for -Dkey=value, whose text is in *val), 0 at the
 * end, or -1 with a message in err (a later call goes on after the refused word). */
static int walk_next(argv_walk *w, const conf_opt **o, const char **val, buf *err)
{
    int at = optind > 0 ? optind : 1;
    *o = NULL;
    *val = NULL;
    if (at < w->argc && strcmp(w->argv[at], "--") == 0) {
        optind = at + 1;   /* not the end of options here: an unknown option, as before */
        return walk_error('?', NULL, "--", err);
    }
    int c = getopt_long(w->argc, w->argv, w->shortopts, w->longopts, NULL);
    if (c == -1)
        return 0;
    const char *word = w->argv[at];
    if (c == 'D' || (c == ':' && optopt == 'D')) {
        *val = optarg;
        if (c == 'D' && optarg == word + 2 && *optarg != '\0' && *optarg != '=')
            return 1;
        optind = at + 1;   /* "-D key=v": the next word is not -D's value */
        return walk_error('D', NULL, word, err);
    }
    if (c == 1 || c == ':' || c == '?')
        return walk_error(c, c == 1 ? NULL : opt_of(optopt), word, err);
    *o = opt_of(c);
    /* A short spelling stands alone ("-hv" is no -h), a long one is spelt out in full. */
    if (!*o || ((*o)->alias && c < 256 ? strcmp(word, (*o)->alias) != 0
                                        : !word_is(word, (*o)->name)))
        return walk_error('?', NULL, word, err);
    *val = optarg;
    return 1;
}

/* -Dkey=value: our keys must be known; others belong to JMeter-style launchers, unless
 * they look like a misspelling of ours (a warning, or with strict an error). */
static int apply_define(config *c, const char *def, int strict, buf *err)
{
    const char *eq = strchr(def, '=');
    char *key = strndup(def, eq ? (size_t)(eq - def) : strlen(def));
    int rc = 0;
    if (!key) {
        buf_puts(err, "out of memory");
        return -1;
    }
    if (conf_key_is_ours(key))
        rc = config_set(c, key, eq ? eq + 1 : "", err);
    else
        rc = conf_foreign_key("", key, strict, err);
    free(key);
    return rc;
}

/* --help and --version win over everything, even a broken config file; --strict-keys
 * holds for the files and -D options before it too. Sets cli->action and strict_keys. */
static void first_look(int argc, char **argv, config_cli *cli)
{
    argv_walk w;
    const conf_opt *o;
    const char *val;
    buf ignored = BUF_INIT;
    cli->action = CONFIG_RUN;
    cli->strict_keys = 0;
    walk_start(&w, argc, argv);
    for (int rc; cli->action == CONFIG_RUN && (rc = walk_next(&w, &o, &val, &ignored)) != 0;) {
        if (rc > 0 && o && o->kind == OPT_HELP)
            cli->action = CONFIG_HELP;
        else if (rc > 0 && o && o->kind == OPT_VERSION)
            cli->action = CONFIG_VERSION;
        else if (rc > 0 && o && o->kind == OPT_STRICT)
            cli->strict_keys = 1;
        buf_clear(&ignored);
    }
    buf_free(&ignored);
}

/* One option of the last walk (after the files): sets its key or notes it in cli. */
static int apply_opt(config *c, const conf_opt *o, const char *val, config_cli *cli, buf *err)
{
    if (!o)
        return apply_define(c, val, cli->strict_keys, err);
    switch (o->kind) {
    case OPT_SET: return conf_set_as(c, conf_key_find(o->key), o->name, val, err);
    case OPT_FRESH: cli->fresh = 1; break;
    case OPT_REPAIR: cli->repair = 1; break;
    case OPT_CHECK:
        cli->action = CONFIG_CHECK_JOURNAL;
        cli->check_dir = val;
        break;
    case OPT_CONFIG: case OPT_STRICT: case OPT_HELP: case OPT_VERSION: break;
    }
    return 0;
}

int config_from_args(config *c, int argc, char **argv, config_cli *cli, buf *err)
{
    argv_walk w;
    const conf_opt *o;
    const char *val;
    int rc;
    cli->fresh = 0;
    cli->repair = 0;
    cli->check_dir = NULL;
    first_look(argc, argv, cli);
    if (cli->action != CONFIG_RUN)
        return 0;
    /* Files first, so that any option overrides them wherever it stands. */
    walk_start(&w, argc, argv);
    while ((rc = walk_next(&w, &o, &val, err)) > 0)
        if (o && o->kind == OPT_CONFIG && conf_load_file(c, val, cli->strict_keys, err) != 0)
            return -1;
    if (rc < 0)
        return -1;
    walk_start(&w, argc, argv);
    while ((rc = walk_next(&w, &o, &val, err)) > 0)
        if (apply_opt(c, o, val, cli, err) != 0)
            return -1;
    if (rc < 0)
        return -1;
    if (cli->repair && cli->action != CONFIG_CHECK_JOURNAL) {
        buf_puts(err, "--repair goes with --check-journal DIR");
        return -1;
    }
    return 0;
}

/* ---- --help and stsd(8) ---- */

/* The name documentation shows for row i into out, or NULL to leave the row out: a run
 * of rows of one family (stsd.cluster.node.1 .. .9) is shown as its first, with N for
 * its last part. */
static const char *doc_name(size_t i, char *out, size_t cap)
{
    const conf_key *k = &conf_keys[i];
    if (k->type != CT_NODE)
        return k->name;
    if (i > 0 && conf_keys[i - 1].type == CT_NODE)
        return NULL;
    snprintf(out, cap, "%.*sN", (int)(strrchr(k->name, '.') + 1 - k->name), k->name);
    return out;
}

const char *config_usage(void)
{
    /* Built once from the tables so that the help never disagrees with them. */
    static char text[16384];
    size_t n = 0;
    if (text[0])
        return text;
#define ADD(...) (n += (size_t)snprintf(n < sizeof text ? text + n : NULL,                      \
                                           n < sizeof text ? sizeof text - n : 0, __VA_ARGS__))
    ADD("Usage: stsd [OPTION]... [-Dkey=value]...\n"
        "Serves named lists of text lines over HTTP for load tests: a drop-in replacement\n"
        "for the JMeter plugins' HTTP Simple Table Server (http://HOST:PORT/sts/).\n\nOptions:\n");
    for (size_t i = 0; i < N_OPTS; i++) {
        const conf_opt *o = &conf_opts[i];
        char left[64];
        snprintf(left, sizeof left, "%s%s%s%s%s", o->alias ? o->alias : "", o->alias ? ", " : "",
                 o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        ADD("  %-24s %s\n", left, o->help);
    }
    ADD("  %-24s %s\n", "-Dkey=value", "set any key below (as the reference is started)");
    ADD("\n--config files are read first, then the other options from left to right, the last\n"
        "one winning. Keys, for a properties file or -D, with their defaults:\n");
    for (size_t i = 0; i < conf_nkeys; i++) {
        char family[64];
        const char *name = doc_name(i, family, sizeof family);
        if (name)
            ADD("  %s=%s\n      %s\n", name, conf_keys[i].def, conf_keys[i].help);
    }
#undef ADD
    if (n >= sizeof text)
        memcpy(text + sizeof text - 14, "\n(truncated)\n", 14);
    return text;
}

void config_doc_keys(void (*fn)(const config_key_doc *k, void *ctx), void *ctx)
{
    static const char *const kinds[] = {
        [CT_BOOL] = "true|false", [CT_ONOFF] = "on|off", [CT_FSYNC] = "always|everysec|no",
        [CT_LOGFMT] = "text|json", [CT_AUDITLINES] = "plain|hash",
        [CT_FORWARD] = "proxy|redirect", [CT_STRING] = "text",
        [CT_CHARSET] = "a charset name", [CT_ADDR] = "an IPv4 or IPv6 address",
        [CT_NODE] = "RAFT_HOST:PORT http(s)://HOST:PORT", [CT_IGNORED] = "ignored"};
    for (size_t i = 0; i < conf_nkeys; i++) {
        const conf_key *k = &conf_keys[i];
        char family[64];
        config_key_doc d = {doc_name(i, family, sizeof family), k->def, k->help, ""};
        if (!d.name)
            continue;
        char lo[24], hi[24];
        if (k->type == CT_INT || k->type == CT_COUNT) {
            snprintf(d.values, sizeof d.values, "%llu..%llu", k->min, k->max);
        } else if (k->type == CT_SIZE) {
            num_size_text(lo, sizeof lo, k->min);
            num_size_text(hi, sizeof hi, k->max);
            snprintf(d.values, sizeof d.values, "%s..%s bytes", lo, hi);
        } else {
            snprintf(d.values, sizeof d.values, "%s", kinds[k->type]);
        }
        fn(&d, ctx);
    }
}

void config_doc_options(void (*fn)(const config_opt_doc *o, void *ctx), void *ctx)
{
    for (size_t i = 0; i < N_OPTS; i++) {
        const conf_opt *o = &conf_opts[i];
        config_opt_doc d = {o->name, o->alias, o->arg, o->key, o->help};
        fn(&d, ctx);
    }
}
