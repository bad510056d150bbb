/* SPDX-License-Identifier: Apache-2.0 */
/* ctl_main.c - stsctl: a command-line client of stsd for scripts and admins. Each verb is
 * a row of the server's command table (build/gen/ctl_commands.h), its parameters long
 * options and required ones positional; answers come as JSON and print for scripts.
 * Exit status: 0 OK, 1 KO, 2 usage, 3 unreachable or refused. */
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/num.h"
#include "base/version.h"
#include "ctl_doc.h"
#include "ctl_http.h"
#include "ctl_json.h"
#include "ctl_once.h"
#include "ctl_out.h"
#include "ctl_table.h"
#include "ctl_top.h"

#include "ctl_commands.h"

typedef struct opts {
    ctl_conn conn;
    int json;
    int long_form;         /* --long */
    int print_lease;       /* --print-lease */
} opts;

__attribute__((format(printf, 1, 2)))
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("stsctl: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nTry 'stsctl --help'.\n", stderr);
    return CTL_EXIT_USAGE;
}

/* "--name=value" or "--name value": the value of option name at argv[*i], advancing *i
 * past it. Returns NULL if missing. */
static const char *opt_value(int argc, char **argv, int *i, const char *eq)
{
    if (eq)
        return eq + 1;
    if (*i + 1 >= argc)
        return NULL;
    return argv[++*i];
}

/* An argument that is an option: "--name[=value]", or a one-letter one ("-h"). A lone
 * "-" is an argument (standard input), and so is "-5". */
static int is_option_word(const char *a)
{
    return (strncmp(a, "--", 2) == 0 && a[2]) || ctl_option_of_letter(a);
}

static int is_help(const char *a)
{
    return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0;
}

/* A global option at argv[*i] ("--name", "--name=value" or its letter "-l"). Returns 1
 * if it was one (consumed), 0 if not, -1 on a bad value (message printed), 10 for
 * --help and 11 for --version. */
static int global_option(opts *o, int argc, char **argv, int *i)
{
    const ctl_option *opt = ctl_option_of_letter(argv[*i]);
    const char *eq = NULL;
    if (!opt && strncmp(argv[*i], "--", 2) == 0) {
        const char *a = argv[*i] + 2;
        eq = strchr(a, '=');
        size_t n = eq ? (size_t)(eq - a) : strlen(a);
        for (const ctl_option *x = ctl_options; x->name; x++)
            if (strlen(x->name) == n && strncmp(x->name, a, n) == 0)
                opt = x;
    }
    if (!opt)
        return 0;
    if (!opt->arg) {
        if (eq) {
            usage_error("--%s takes no value", opt->name);
            return -1;
        }
        if (strcmp(opt->name, "insecure") == 0) o->conn.insecure = 1;
        else if (strcmp(opt->name, "json") == 0) o->json = 1;
        else if (strcmp(opt->name, "long") == 0) o->long_form = 1;
        else if (strcmp(opt->name, "print-lease") == 0) o->print_lease = 1;
        else if (strcmp(opt->name, "help") == 0) return 10;
        else if (strcmp(opt->name, "version") == 0) return 11;
        return 1;
    }
    const char *v = opt_value(argc, argv, i, eq);
    if (!v) {
        usage_error("--%s needs a value", opt->name);
        return -1;
    }
    if (strcmp(opt->name, "url") == 0) o->conn.url = v;
    else if (strcmp(opt->name, "token") == 0) o->conn.token = v;
    else if (strcmp(opt->name, "cacert") == 0) {
        if (access(v, R_OK) != 0) {   /* the caller's mistake: said with its path */
            fprintf(stderr, "stsctl: --cacert %s: %m\n", v);
            return -1;
        }
        o->conn.cacert = v;
    }
    else if (strcmp(opt->name, "connect-timeout") == 0) {
        int64_t ms;
        if (num_parse_seconds_ms(v, strlen(v), 3600, &ms) != 0 || ms <= 0) {
            usage_error("--connect-timeout: not a number of seconds: %s", v);
            return -1;
        }
        o->conn.connect_timeout_ms = (long)ms;
    }
    return 1;
}

/* The row of verb (lower case), or NULL. */
static const ctl_command *row_of(const char *verb)
{
    char v[64];
    for (int i = 0; i < CTL_N_COMMANDS; i++) {
        ctl_verb_name(&ctl_commands[i], v, sizeof v);
        if (strcmp(v, verb) == 0)
            return &ctl_commands[i];
    }
    return NULL;
}

/* value matched against the alternatives "A|B|C", any case: the row's spelling into out. */
static int choice(const char *alts, const char *value, char *out, size_t n)
{
    size_t vl = strlen(value);
    for (const char *s = alts; *s;) {
        const char *bar = strchr(s, '|');
        size_t l = bar ? (size_t)(bar - s) : strlen(s);
        if (l == vl && strncasecmp(s, value, l) == 0 && l < n) {
            memcpy(out, s, l);
            out[l] = '\0';
            return 0;
        }
        s += l + (bar ? 1 : 0);
    }
    return -1;
}

static int send_as(const opts *o, const char *command, const buf *q, int post,
                   const char *upload, int quiet)
{
    ctl_answer a;
    int progress = upload && isatty(STDERR_FILENO);
    if (ctl_request(&o->conn, command, q->data ? q->data : "", post, upload, progress, &a) != 0) {
        fprintf(stderr, "stsctl: %s\n", a.error);
        ctl_answer_free(&a);
        /* A local file that cannot be read is the caller's mistake, not the server's. */
        return upload && strstr(a.error, upload) == a.error ? CTL_EXIT_USAGE : CTL_EXIT_SERVER;
    }
    const ctl_result *res = ctl_result_of(command);
    ctl_show show = {o->json, o->long_form, o->print_lease, res ? res->member : NULL, quiet};
    int rc = ctl_finish(&a, o->conn.url, &show);
    ctl_answer_free(&a);
    return rc;
}

static int send(const opts *o, const char *command, const buf *q, int post,
                const char *upload)
{
    return send_as(o, command, q, post, upload, 0);
}

/* load LOCALFILE [--as NAME], or load NAME LOCALFILE as LOAD's row has them; LOCALFILE
 * "-" is standard input, streamed (its name must then be given). */
static int run_load(opts *o, int argc, char **argv, int i)
{
    const char *pos[2] = {NULL, NULL}, *as = NULL;
    int npos = 0;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (is_help(a)) {
            ctl_doc_verb(stdout, NULL, ctl_extra_of("load"));
            return CTL_EXIT_OK;
        }
        if (strncmp(a, "--as", 4) == 0 && (a[4] == '\0' || a[4] == '=')) {
            if (!(as = opt_value(argc, argv, &i, a[4] ? a + 4 : NULL)))
                return usage_error("%s needs a value", "--as");
            continue;
        }
        if (is_option_word(a)) {
            int g = global_option(o, argc, argv, &i);
            if (g < 0)
                return CTL_EXIT_USAGE;
            if (g == 1)
                continue;
            return usage_error("load: unknown option %s", a);
        }
        if (npos == 2)
            return usage_error("load: too many arguments: %s (load NAME LOCALFILE)", a);
        pos[npos++] = a;
    }
    const char *file = npos == 2 ? pos[1] : pos[0], *name = npos == 2 ? pos[0] : as;
    if (!file)
        return usage_error("load: which file? (%s)", ctl_extra_of("load")->usage);
    if (npos == 2 && as)
        return usage_error("load: the name twice (%s and --as %s)", pos[0], as);
    int from_stdin = strcmp(file, "-") == 0;
    if (from_stdin && !name)
        return usage_error("load: standard input needs a name (load NAME - or --as NAME)");
    if (!from_stdin && access(file, R_OK) != 0) {
        fprintf(stderr, "stsctl: %s: %m\n", file);
        return CTL_EXIT_USAGE;
    }
    char *copy = strdup(file);
    if (!copy)
        return CTL_EXIT_SERVER;
    buf q = BUF_INIT;
    ctl_query_add(&q, "FILENAME", name ? name : basename(copy));
    ctl_query_add(&q, "FORMAT", "JSON");
    free(copy);
    int rc = q.oom ? CTL_EXIT_SERVER : send(o, "LOAD", &q, 1, file);
    buf_free(&q);
    return rc;
}

/* once NAME [--timeout S] [--lease S] -- COMMAND... */
static int run_once(opts *o, int argc, char **argv, int i)
{
    const char *name = NULL, *timeout = NULL, *lease = NULL;
    const ctl_extra *e = ctl_extra_of("once");
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *a = argv[i];
        if (is_help(a)) {
            ctl_doc_verb(stdout, NULL, e);
            return CTL_EXIT_OK;
        }
        const char **to = strncmp(a, "--timeout", 9) == 0 && (!a[9] || a[9] == '=') ? &timeout
                        : strncmp(a, "--lease", 7) == 0 && (!a[7] || a[7] == '=') ? &lease
                        : NULL;
        if (to) {
            const char *eq = strchr(a, '=');
            if (!(*to = opt_value(argc, argv, &i, eq)))
                return usage_error("%.*s needs a value", (int)(eq ? eq - a : (long)strlen(a)), a);
            continue;
        }
        if (strncmp(a, "--", 2) == 0 || is_option_word(a)) {
            int g = global_option(o, argc, argv, &i);
            if (g < 0)
                return CTL_EXIT_USAGE;
            if (g == 1)
                continue;
            return usage_error("once: unknown option %s", a);
        }
        if (name)
            return usage_error("once: one NAME only, not also %s (the command goes after --)", a);
        name = a;
    }
    if (!name || i + 1 >= argc)
        return usage_error("once: %s (once %s)", name ? "which command? after --" : "which NAME?",
                           e->usage);
    return ctl_once(&o->conn, name, timeout, lease, argv + i + 1);
}

/* The parameter of c that option "--body" names (n bytes of body, before any '='), or -1.
 * *neg: it was "--no-NAME" of a TRUE|FALSE parameter (no '=' then). */
static int option_of(const ctl_command *c, const char *body, size_t n, int has_eq, int *neg)
{
    char name[64];
    for (int pass = 0; pass < 2; pass++) {
        const char *s = body;
        size_t sl = n;
        if (pass == 1) {
            if (n <= 3 || strncmp(body, "no-", 3) != 0 || has_eq)
                return -1;
            s += 3;
            sl -= 3;
        }
        for (int k = 0; k < CTL_MAX_PARAMS && c->params[k].name; k++) {
            int kind = ctl_param_kind(&c->params[k]);
            if (kind == CTL_POSITIONAL || (pass == 1 && kind != CTL_BOOL))
                continue;
            ctl_option_name(c, &c->params[k], name, sizeof name);
            if (strlen(name) == sl && strncmp(name, s, sl) == 0) {
                *neg = pass;
                return k;
            }
        }
    }
    return -1;
}

/* The npos-th positional parameter of c, or -1 when it has no more. */
static int positional_of(const ctl_command *c, int npos)
{
    for (int k = 0, seen = 0; k < CTL_MAX_PARAMS && c->params[k].name; k++)
        if (ctl_param_kind(&c->params[k]) == CTL_POSITIONAL && seen++ == npos)
            return k;
    return -1;
}

/* Option argv[*i] for parameter p (eq: its '=' or NULL; neg: "--no-"): its value into
 * *val, a choice spelled as the row spells it in chosen[64]. Returns 0 or an exit
 * status (said). */
static int option_value(const ctl_param *p, int neg, const char *eq, int argc, char **argv,
                        int *i, char chosen[64], const char **val)
{
    const char *a = argv[*i], *v;
    switch (ctl_param_kind(p)) {
    case CTL_BOOL:
        /* A flag alone means TRUE; "--keep false" takes the next word only when it is
         * true or false, as "--mode first" takes its choice. */
        if (neg)
            snprintf(chosen, 64, "FALSE");
        else if (!eq && *i + 1 < argc && choice(p->value, argv[*i + 1], chosen, 64) == 0)
            ++*i;
        else if (choice(p->value, eq ? eq + 1 : "TRUE", chosen, 64) != 0) {
            if (!eq || !ctl_param_free_value(p))
                return usage_error("not true or false: %s", a);
            *val = eq + 1;              /* UNIQUE=login: a column's name */
            return 0;
        }
        *val = chosen;
        return 0;
    case CTL_CHOICE:
        if (!(v = opt_value(argc, argv, i, eq)))
            return usage_error("%s needs a value", a);
        if (choice(p->value, v, chosen, 64) != 0) {
            fprintf(stderr, "stsctl: %.*s: %s is not one of %s\n",
                    (int)(eq ? eq - a : (long)strlen(a)), a, v, p->value);
            return CTL_EXIT_USAGE;
        }
        *val = chosen;
        return 0;
    default:
        if (!(*val = opt_value(argc, argv, i, eq)))
            return usage_error("%s needs a value", a);
        return 0;
    }
}

/* The query of row c from val (FORMAT=JSON added), sent; the exit status. */
static int send_row(const opts *o, const ctl_command *c, const char **val)
{
    buf q = BUF_INIT;
    for (int k = 0; k < CTL_MAX_PARAMS && c->params[k].name; k++)
        if (val[k])
            ctl_query_add(&q, c->params[k].name, val[k]);
    ctl_query_add(&q, "FORMAT", "JSON");
    /* Always a urlencoded POST: a long LINE does not meet a URL's limits. */
    int rc = q.oom ? CTL_EXIT_SERVER : send(o, c->name, &q, 1, NULL);
    buf_free(&q);
    return rc;
}

/* The first required parameter of c that val leaves out (and no option given stands
 * in for, as NAME does "instead of FILENAME"), or -1. */
static int missing_of(const ctl_command *c, const char **val)
{
    for (int k = 0; k < CTL_MAX_PARAMS && c->params[k].name; k++) {
        if (ctl_param_kind(&c->params[k]) != CTL_POSITIONAL || val[k])
            continue;
        int stood_in = 0;
        for (int s = 0; s < CTL_MAX_PARAMS && c->params[s].name && !stood_in; s++)
            stood_in = val[s] && ctl_param_instead_of(&c->params[s], c->params[k].name);
        if (!stood_in)
            return k;
    }
    return -1;
}

/* The parameter that "-" reads from standard input, one request per line: the LINE of a
 * row that changes (ADD). -1 when c has none or val does not say "-". */
static int stdin_param(const ctl_command *c, const char **val)
{
    if (!(c->flags & CTL_CHANGES))
        return -1;
    for (int k = 0; k < CTL_MAX_PARAMS && c->params[k].name; k++)
        if (ctl_param_kind(&c->params[k]) == CTL_POSITIONAL &&
            strcmp(c->params[k].name, "LINE") == 0 && val[k] && strcmp(val[k], "-") == 0)
            return k;
    return -1;
}

/* ADD's lines go to ADDMULTI in batches of up to ADD_BATCH lines or bytes: one request
 * and one journal record each instead of one per line. */
#define ADD_BATCH_LINES 1000
#define ADD_BATCH_BYTES (1024 * 1024)

/* The ADDMULTI row when ADD's values val (row c) can all go to it: FILENAME, ADD_MODE and
 * a UNIQUE of TRUE or FALSE (not a column's name, which ADDMULTI does not take). */
static const ctl_command *batch_row(const ctl_command *c, const char **val)
{
    const ctl_command *m = row_of("addmulti");
    if (!m || strcmp(c->name, "ADD") != 0)
        return NULL;
    for (int k = 0; k < CTL_MAX_PARAMS && c->params[k].name; k++) {
        const char *name = c->params[k].name;
        if (!val[k] || strcmp(name, "LINE") == 0 || strcmp(name, "FILENAME") == 0 ||
            strcmp(name, "ADD_MODE") == 0)
            continue;
        if (strcmp(name, "UNIQUE") != 0 ||
            (strcasecmp(val[k], "TRUE") != 0 && strcasecmp(val[k], "FALSE") != 0))
            return NULL;
    }
    return m;
}

/* One ADDMULTI of the lines in batch (each ending in a line break), with ADD's values
 * val of row c that ADDMULTI (row m) shares. Prints nothing on OK (--json: the answer). */
static int send_batch(const opts *o, const ctl_command *c, const ctl_command *m,
                      const char **val, const buf *batch)
{
    buf q = BUF_INIT;
    for (int k = 0; k < CTL_MAX_PARAMS && c->params[k].name; k++) {
        if (!val[k] || strcmp(c->params[k].name, "LINE") == 0)
            continue;
        for (int j = 0; j < CTL_MAX_PARAMS && m->params[j].name; j++)
            if (strcmp(m->params[j].name, c->params[k].name) == 0)
                ctl_query_add(&q, c->params[k].name, val[k]);
    }
    if (ctl_query_add(&q, "LINES", batch->data) != 0)   /* batch ends in a NUL */
        q.oom = 1;
    ctl_query_add(&q, "FORMAT", "JSON");
    int rc = q.oom ? CTL_EXIT_SERVER : send_as(o, m->name, &q, 1, NULL, 1);
    buf_free(&q);
    return rc;
}

/* The next line of standard input into *line (its line break, and a CR before it,
 * dropped), *no counting them: its length, or -1 at the end (or on a read error). */
static ssize_t next_line(char **line, size_t *cap, long *no)
{
    ssize_t n = getline(line, cap, stdin);
    if (n < 0)
        return -1;
    ++*no;
    if (n > 0 && (*line)[n - 1] == '\n')
        (*line)[--n] = '\0';
    if (n > 0 && (*line)[n - 1] == '\r')
        (*line)[--n] = '\0';
    return n;
}

/* Whether line (n bytes, number no of standard input) holds a NUL byte, said on stderr:
 * the query takes C strings, so the line, and in a batch every line after it, would be
 * cut there without a word. */
static int nul_line(const char *verb, const char *line, size_t n, long no, long done)
{
    if (!memchr(line, '\0', n))
        return 0;
    fprintf(stderr, "stsctl: %s: line %ld of standard input holds a NUL byte: stopped "
            "there (%ld done)\n", verb, no, done);
    return 1;
}

/* add LIST -: standard input's lines in ADDMULTI batches, each added whole or not at
 * all. Stops at the first batch not answered OK, saying which lines it held. */
static int send_batches(const opts *o, const ctl_command *c, const ctl_command *m,
                        const char *verb, const char **val)
{
    char *line = NULL;
    size_t cap = 0;
    long no = 0, first = 1, count = 0;
    ssize_t n;
    int rc = CTL_EXIT_OK;
    buf batch = BUF_INIT;
    for (;;) {
        n = next_line(&line, &cap, &no);
        if (n >= 0) {
            if (nul_line(verb, line, n, no, first - 1)) {
                rc = CTL_EXIT_USAGE;
                break;
            }
            buf_append(&batch, line, (size_t)n);
            buf_append(&batch, "\n", 1);
            count++;
        }
        if (count && (n < 0 || count == ADD_BATCH_LINES || batch.len >= ADD_BATCH_BYTES)) {
            buf_append(&batch, "", 1);      /* a C string for the query */
            rc = batch.oom ? CTL_EXIT_SERVER : send_batch(o, c, m, val, &batch);
            if (rc != CTL_EXIT_OK) {
                fprintf(stderr, "stsctl: %s: stopped at lines %ld-%ld of standard input, "
                        "added all or none (%ld done)\n", verb, first, no, first - 1);
                break;
            }
            buf_clear(&batch);
            first = no + 1;
            count = 0;
        }
        if (n < 0)
            break;
    }
    if (rc == CTL_EXIT_OK && ferror(stdin)) {
        fprintf(stderr, "stsctl: %s: standard input: %m\n", verb);
        rc = CTL_EXIT_USAGE;
    }
    buf_free(&batch);
    free(line);
    return rc;
}

/* Row c sent once per line of standard input, the line as parameter k (its line break
 * and a CR before it dropped). Stops at the first line not answered OK, said with its
 * number; the exit status. */
static int send_lines(const opts *o, const ctl_command *c, const char *verb, const char **val,
                      int k)
{
    char *line = NULL;
    size_t cap = 0;
    long no = 0;
    ssize_t n;
    int rc = CTL_EXIT_OK;
    while (rc == CTL_EXIT_OK && (n = next_line(&line, &cap, &no)) >= 0) {
        if (nul_line(verb, line, n, no, no - 1)) {
            rc = CTL_EXIT_USAGE;
            break;
        }
        val[k] = line;
        rc = send_row(o, c, val);
        if (rc != CTL_EXIT_OK)
            fprintf(stderr, "stsctl: %s: stopped at line %ld of standard input (%ld done)\n",
                    verb, no, no - 1);
    }
    if (rc == CTL_EXIT_OK && ferror(stdin)) {
        fprintf(stderr, "stsctl: %s: standard input: %m\n", verb);
        rc = CTL_EXIT_USAGE;
    }
    free(line);
    return rc;
}

/* Any verb of a row: positionals for required parameters, --options for the others. */
static int run_row(opts *o, const ctl_command *c, const char *verb, int argc, char **argv,
                   int i)
{
    const char *val[CTL_MAX_PARAMS] = {0};
    char chosen[CTL_MAX_PARAMS][64];
    int npos = 0, only_pos = 0, bare_flag = -1;  /* argv index of a true/false flag alone */
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (!only_pos && strcmp(a, "--") == 0) {
            only_pos = 1;
        } else if (only_pos || !is_option_word(a)) {
            int k = positional_of(c, npos++);
            /* "--keep maybe": the word was meant for the flag, which takes no such value. */
            if (k < 0 && bare_flag == i - 1)
                return usage_error("%s: %s takes true or false (alone: true; --no-%s: false),"
                                   " not %s", verb, argv[bare_flag], argv[bare_flag] + 2, a);
            if (k < 0)
                return usage_error("%s: too many arguments: %s", verb, a);
            val[k] = a;
        } else if (is_help(a)) {
            ctl_doc_verb(stdout, c, NULL);
            return CTL_EXIT_OK;
        } else if (a[1] != '-') {       /* a letter: one of stsctl's own options */
            if (global_option(o, argc, argv, &i) < 0)
                return CTL_EXIT_USAGE;
        } else {
            const char *eq = strchr(a + 2, '=');
            size_t n = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
            int neg = 0, k = option_of(c, a + 2, n, eq != NULL, &neg), rc;
            if (k >= 0) {
                int at = i;
                rc = option_value(&c->params[k], neg, eq, argc, argv, &i, chosen[k], &val[k]);
                if (rc != 0)
                    return rc;
                if (ctl_param_kind(&c->params[k]) == CTL_BOOL && !neg && !eq && i == at)
                    bare_flag = i;
                continue;
            }
            if ((rc = global_option(o, argc, argv, &i)) < 0)
                return CTL_EXIT_USAGE;
            if (rc != 1) {
                fprintf(stderr, "stsctl: %s: unknown option %s\n", verb, a);
                ctl_doc_verb(stderr, c, NULL);
                return CTL_EXIT_USAGE;
            }
        }
    }
    int k = missing_of(c, val);
    if (k >= 0) {
        fprintf(stderr, "stsctl: %s: missing %s\n", verb, c->params[k].name);
        ctl_doc_verb(stderr, c, NULL);
        return CTL_EXIT_USAGE;
    }
    if ((k = stdin_param(c, val)) >= 0) {
        const ctl_command *m = batch_row(c, val);
        return m ? send_batches(o, c, m, verb, val) : send_lines(o, c, verb, val, k);
    }
    return send_row(o, c, val);
}

int main(int argc, char **argv)
{
    opts o = {{getenv("STSD_URL"), getenv("STSD_TOKEN"), NULL, 0, 3000}, 0, 0, 0};
    if (!o.conn.url || !*o.conn.url)
        o.conn.url = "http://localhost:9191";
    if (o.conn.token && !*o.conn.token)
        o.conn.token = NULL;
    int i = 1;
    for (; i < argc && is_option_word(argv[i]); i++) {
        int g = global_option(&o, argc, argv, &i);
        if (g == 10) {
            ctl_doc_usage(stdout, ctl_commands, CTL_N_COMMANDS);
            return CTL_EXIT_OK;
        }
        if (g == 11) {
            printf("stsctl %s\n", STSD_VERSION);
            return CTL_EXIT_OK;
        }
        if (g < 0)
            return CTL_EXIT_USAGE;
        if (g == 0)
            return usage_error("unknown option %s", argv[i]);
    }
    if (i < argc && strcmp(argv[i], "--") == 0)
        i++;
    if (i >= argc) {
        ctl_doc_usage(stderr, ctl_commands, CTL_N_COMMANDS);
        return CTL_EXIT_USAGE;
    }
    const char *verb = argv[i++];
    if (ctl_http_init() != 0) {
        fputs("stsctl: could not start libcurl\n", stderr);
        return CTL_EXIT_SERVER;
    }
    if (strcmp(verb, "load") == 0)
        return run_load(&o, argc, argv, i);
    if (strcmp(verb, "once") == 0)
        return run_once(&o, argc, argv, i);
    if (strcmp(verb, "top") == 0) {
        for (; i < argc; i++) {
            if (is_help(argv[i])) {
                ctl_doc_verb(stdout, NULL, ctl_extra_of("top"));
                return CTL_EXIT_OK;
            }
            int g = is_option_word(argv[i]) ? global_option(&o, argc, argv, &i) : 0;
            if (g < 0)
                return CTL_EXIT_USAGE;
            if (g != 1)
                return usage_error("top: unknown argument %s", argv[i]);
        }
        return ctl_top_run(&o.conn);
    }
    /* `cluster add` and `cluster remove`: the rows CLUSTERADD and CLUSTERREMOVE. */
    if (strcmp(verb, "cluster") == 0 && i < argc &&
        (strcmp(argv[i], "add") == 0 || strcmp(argv[i], "remove") == 0))
        verb = strcmp(argv[i++], "add") == 0 ? "clusteradd" : "clusterremove";
    const ctl_command *c = row_of(verb);
    if (!c)          /* one line and where the list is: a typo needs no 48 lines */
        return usage_error("unknown verb: %s", verb);
    return run_row(&o, c, verb, argc, argv, i);
}
