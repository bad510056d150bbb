/* SPDX-License-Identifier: Apache-2.0 */
/* mkman.c - writes stsd(8) from docs/stsd.8.in, filling in the options and keys from the
 * same tables that print --help and dispatch the commands, so the page and the binary
 * cannot disagree.
 * Usage: mkman TEMPLATE > stsd.8 (lines @OPTIONS@, @KEYS@ and @COMMANDS@, and @VERSION@
 * anywhere). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "cmd/command.h"
#include "tmpl.h"

/* Writes s as man(7) text: backslashes and hyphens escaped (so options copy as ASCII),
 * a control character at the start of a line defused. */
static void man_text(const char *s)
{
    if (*s == '.' || *s == '\'')
        fputs("\\&", stdout);
    for (; *s; s++) {
        if (*s == '\\')
            fputs("\\e", stdout);
        else if (*s == '-')
            fputs("\\-", stdout);
        else
            putchar(*s);
    }
}

static void bold(const char *s)
{
    fputs("\\fB", stdout);
    man_text(s);
    fputs("\\fR", stdout);
}

static void put_option(const config_opt_doc *o, void *ctx)
{
    fputs(".TP\n", stdout);
    if (o->alias) {
        bold(o->alias);
        fputs(", ", stdout);
    }
    bold(o->name);
    if (o->arg) {
        fputs(" \\fI", stdout);
        man_text(o->arg);
        fputs("\\fR", stdout);
    }
    putchar('\n');
    man_text(o->help);
    if (o->key) {
        fputs("; sets ", stdout);
        bold(o->key);
    }
    fputs(".\n", stdout);
}

static void put_key(const config_key_doc *k, void *ctx)
{
    fputs(".TP\n", stdout);
    bold(k->name);
    fputs(" (", stdout);
    man_text(k->values);
    fputs("; default ", stdout);
    if (*k->def)
        bold(k->def);
    else
        fputs("empty", stdout);
    fputs(")\n", stdout);
    man_text(k->help);
    fputs(".\n", stdout);
}

/* One command: its usage (optional parameters in brackets), its line of help, and each
 * parameter's. */
static void put_command(const cmd_def *c)
{
    fputs(".TP\n.B ", stdout);
    man_text(c->name);
    for (int i = 0; i < CMD_MAX_PARAMS && c->params[i].name; i++) {
        const cmd_param *p = &c->params[i];
        fputs(p->optional ? " \\fR[\\fP" : " ", stdout);
        man_text(p->name);
        fputs("\\fR=\\fI", stdout);
        man_text(p->value);
        fputs(p->optional ? "\\fR]\\fP" : "\\fP", stdout);
    }
    putchar('\n');
    man_text(c->summary);
    if (c->flags & CMD_ADMIN)
        fputs("\nNeeds the admin token, once one is set.", stdout);
    putchar('\n');
    if (!c->params[0].name)
        return;
    fputs(".RS\n.PD 0\n", stdout);
    for (int i = 0; i < CMD_MAX_PARAMS && c->params[i].name; i++) {
        fputs(".IP \\(bu 2\n", stdout);
        bold(c->params[i].name);
        fputs(": ", stdout);
        man_text(c->params[i].help);
        putchar('\n');
    }
    fputs(".PD\n.RE\n", stdout);
}

/* The template's lines that the tables replace. */
static int man_line(const char *line)
{
    if (strcmp(line, "@OPTIONS@\n") == 0)
        config_doc_options(put_option, NULL);
    else if (strcmp(line, "@COMMANDS@\n") == 0)
        for (int i = 0; i < command_count(); i++)
            put_command(command_at(i));
    else if (strcmp(line, "@KEYS@\n") == 0)
        config_doc_keys(put_key, NULL);
    else
        return 0;
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: mkman TEMPLATE > stsd.8\n");
        return 2;
    }
    return tmpl_expand("mkman", argv[1], man_line);
}
