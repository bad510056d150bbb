/* SPDX-License-Identifier: Apache-2.0 */
/* ctl_table.c - stsctl's options and the naming rules from a command row to a verb. */
#include "ctl_table.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

const ctl_option ctl_options[] = {
    {"url", "URL", "STSD_URL", "the server (default http://localhost:9191), or a cluster's nodes, comma separated", 0},
    {"token", "TOKEN", "STSD_TOKEN", "sent as Authorization: Bearer TOKEN", 0},
    {"cacert", "FILE", NULL, "trust the CA certificates in FILE (PEM) for https", 0},
    {"insecure", NULL, NULL, "https without checking the server's certificate", 0},
    {"connect-timeout", "S", NULL, "give up connecting after S seconds (default 3)", 0},
    {"json", NULL, NULL, "print the server's JSON answer unchanged", 0},
    {"long", NULL, NULL, "get, incr, set, barrier, done: every field of the answer as "
     "key<TAB>value lines, not the result alone", 'l'},
    {"print-lease", NULL, NULL, "print a lease id (X-STS-Lease) on stdout after the "
     "answer, one a line, instead of on stderr", 0},
    {"help", NULL, NULL, "print this help, or a verb's with VERB --help, and exit", 'h'},
    {"version", NULL, NULL, "print the version and exit", 0},
    {NULL, NULL, NULL, NULL, 0},
};

const ctl_option *ctl_option_of_letter(const char *a)
{
    if (a[0] != '-' || !a[1] || a[1] == '-' || a[2])
        return NULL;
    for (const ctl_option *o = ctl_options; o->name; o++)
        if (o->letter && o->letter == a[1])
            return o;
    return NULL;
}

/* The answers that carry one result among other fields; every other answer prints as it
 * always did (a line, a count, key<TAB>value lines). */
static const ctl_result results[] = {
    {"GET", "value", "the value"},
    {"INCR", "value", "the new value"},
    {"SET", "version", "the key's new version"},
    {"BARRIER", "generation", "the generation that opened"},
    {"DONE", "version", "the key's new version, as set prints it"},
    {"SAVE", "file", "the name of the file written (--long: its lines too)"},
};

const ctl_result *ctl_result_of(const char *command)
{
    for (size_t i = 0; i < sizeof results / sizeof results[0]; i++)
        if (strcmp(results[i].command, command) == 0)
            return &results[i];
    return NULL;
}

int ctl_param_instead_of(const ctl_param *p, const char *name)
{
    static const char lead[] = "instead of ";
    size_t n = strlen(name);
    if (!p->help || strncmp(p->help, lead, sizeof lead - 1) != 0)
        return 0;
    const char *s = p->help + sizeof lead - 1;
    return strncmp(s, name, n) == 0 && !isalnum((unsigned char)s[n]) && s[n] != '_';
}

const ctl_extra ctl_extras[] = {
    {"load", "LOCALFILE [--as NAME] | NAME LOCALFILE",
     "Send LOCALFILE to the server as a list (LOAD), with a progress bar on a terminal. "
     "LOCALFILE - is standard input (its name then given: load NAME - or --as NAME).",
     {{"--as NAME", "the list's name (default: LOCALFILE's base name)"}, {NULL, NULL}}},
    {"top", "",
     "Every list, key, barrier and run, live, refreshed each second: a list's lines, on "
     "loan, waiters, in/s, out/s and time to empty; a key's value (cut to the screen), "
     "version, watchers and waiters; a barrier's arrivals of its parties and generation; "
     "a ONCE run's lease left and the callers waiting for it; on a node of a cluster, "
     "above them, the nodes (CLUSTER) with their roles and lag, the leader marked *. A "
     "server without KEYS, BARRIERS or RUNS still shows its lists. q quits.",
     {{NULL, NULL}}},
    {"once", "NAME [--timeout S] [--lease S] -- COMMAND...",
     "Run COMMAND on exactly one of the callers of ONCE NAME; the others wait. The runner "
     "ends the run with DONE, VALUE its exit status (failure included: it is the result), "
     "and every caller exits with that status. While COMMAND runs, the run is renewed "
     "every third of its lease: another caller takes over only if this one dies or is cut "
     "off for a whole lease. SIGINT, SIGTERM or SIGHUP: COMMAND gets the signal, the run is "
     "given up (RELEASE) for the next caller, and the exit status is 128 + the signal.",
     {{"--timeout S", "wait up to S seconds for another caller's run (default stsd.maxWait)"},
      {"--lease S", "the run's lease in seconds, renewed while COMMAND runs (default 60, "
       "up to stsd.maxLease): how long the others wait when this caller dies"},
      {NULL, NULL}}},
    {NULL, NULL, NULL, {{NULL, NULL}}},
};

const ctl_extra *ctl_extra_of(const char *verb)
{
    for (const ctl_extra *e = ctl_extras; e->verb; e++)
        if (strcmp(e->verb, verb) == 0)
            return e;
    return NULL;
}

static int is_bool_word(const char *s, size_t n)
{
    return (n == 4 && strncasecmp(s, "TRUE", 4) == 0) ||
           (n == 5 && strncasecmp(s, "FALSE", 5) == 0);
}

/* A lower-case alternative ("column") stands for a value the user writes, as the
 * placeholders of other parameters do ("key", "n"). */
static int is_placeholder(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!islower((unsigned char)s[i]))
            return 0;
    return n > 0;
}

ctl_kind ctl_param_kind(const ctl_param *p)
{
    if (!p->optional)
        return CTL_POSITIONAL;
    const char *bar = strchr(p->value, '|');
    if (!bar)
        return CTL_VALUE;
    const char *bar2 = strchr(bar + 1, '|');
    size_t second = bar2 ? (size_t)(bar2 - bar - 1) : strlen(bar + 1);
    if (is_bool_word(p->value, (size_t)(bar - p->value)) && is_bool_word(bar + 1, second) &&
        (!bar2 || is_placeholder(bar2 + 1, strlen(bar2 + 1))))
        return CTL_BOOL;
    return CTL_CHOICE;
}

int ctl_param_free_value(const ctl_param *p)
{
    const char *last = strrchr(p->value, '|');
    return last && is_placeholder(last + 1, strlen(last + 1));
}

static int is_mode(const char *name)
{
    size_t n = strlen(name);
    return n > 5 && strcmp(name + n - 5, "_MODE") == 0;
}

void ctl_option_name(const ctl_command *c, const ctl_param *p, char *out, size_t n)
{
    int modes = 0;
    for (int i = 0; i < CTL_MAX_PARAMS && c->params[i].name; i++)
        modes += is_mode(c->params[i].name);
    const char *s = modes == 1 && is_mode(p->name) ? "mode" : p->name;
    size_t i = 0;
    for (; s[i] && i + 1 < n; i++)
        out[i] = s[i] == '_' ? '-' : (char)tolower((unsigned char)s[i]);
    out[i] = '\0';
}

void ctl_verb_name(const ctl_command *c, char *out, size_t n)
{
    size_t i = 0;
    for (; c->name[i] && i + 1 < n; i++)
        out[i] = (char)tolower((unsigned char)c->name[i]);
    out[i] = '\0';
}
