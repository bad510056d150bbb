/* SPDX-License-Identifier: Apache-2.0 */
/* mkctl.c - writes what stsctl knows of the server from the server's own command table
 * (src/cmd/command.c), so that a command added there becomes a verb, a line of --help,
 * an entry of stsctl(1) and a completion with nothing copied by hand.
 * Usage: mkctl header > ctl_commands.h | mkctl man TEMPLATE > stsctl.1 | mkctl bash */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/command.h"
#include "ctl/ctl_doc.h"

_Static_assert(CMD_MAX_PARAMS <= CTL_MAX_PARAMS,
               "a command row may hold more parameters than stsctl's: raise CTL_MAX_PARAMS "
               "in src/ctl/ctl_table.h");

/* s as a C string literal. */
static void c_str(const char *s)
{
    if (!s) {
        fputs("NULL", stdout);
        return;
    }
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            printf("\\%03o", (unsigned char)*s);
        else
            putchar(*s);
    }
    putchar('"');
}

static unsigned ctl_flags(unsigned f)
{
    return (f & CMD_LOOKS ? CTL_LOOKS : 0) | (f & CMD_CHANGES ? CTL_CHANGES : 0) |
           (f & CMD_ADMIN ? CTL_ADMIN : 0) | (f & CMD_WAITS ? CTL_WAITS : 0) |
           (f & CMD_JSON ? CTL_JSON : 0) | (f & CMD_FORM ? CTL_FORM : 0);
}

/* Fields added later (a value, a count of keys) print by their JSON's shape: MESSAGE.
 * No switch, so that a new reply_field does not stop the build here. */
static int ctl_field(reply_field f)
{
    if (f == FIELD_LINE)
        return CTL_FIELD_LINE;
    if (f == FIELD_LENGTH)
        return CTL_FIELD_LENGTH;
    if (f == FIELD_COUNT)
        return CTL_FIELD_COUNT;
    return CTL_FIELD_MESSAGE;
}

/* The server's rows as stsctl's (the strings stay the table's). */
static ctl_command *rows(int *n)
{
    *n = command_count();
    ctl_command *out = calloc((size_t)*n + 1, sizeof *out);
    if (!out)
        return NULL;
    for (int i = 0; i < *n; i++) {
        const cmd_def *c = command_at(i);
        out[i].name = c->name;
        out[i].flags = ctl_flags(c->flags);
        out[i].field = ctl_field(c->field);
        out[i].summary = c->summary;
        for (int k = 0; k < CMD_MAX_PARAMS && k < CTL_MAX_PARAMS && c->params[k].name; k++) {
            out[i].params[k].name = c->params[k].name;
            out[i].params[k].value = c->params[k].value;
            out[i].params[k].optional = c->params[k].optional;
            out[i].params[k].help = c->params[k].help;
        }
    }
    return out;
}

static void header(const ctl_command *c, int n)
{
    puts("/* ctl_commands.h - written by scripts/mkctl from src/cmd/command.c: do not edit. */");
    printf("#define CTL_N_COMMANDS %d\n", n);
    puts("static const ctl_command ctl_commands[] = {");
    for (int i = 0; i < n; i++) {
        fputs("    {", stdout);
        c_str(c[i].name);
        printf(", %uu, %d, ", c[i].flags, c[i].field);
        c_str(c[i].summary);
        fputs(", {", stdout);
        for (int k = 0; k < CTL_MAX_PARAMS && c[i].params[k].name; k++) {
            fputs(k ? ", {" : "{", stdout);
            c_str(c[i].params[k].name);
            fputs(", ", stdout);
            c_str(c[i].params[k].value);
            printf(", %d, ", c[i].params[k].optional);
            c_str(c[i].params[k].help);
            fputs("}", stdout);
        }
        if (!c[i].params[0].name)
            fputs("{0}", stdout);
        puts("}},");
    }
    puts("};");
}

int main(int argc, char **argv)
{
    int n;
    ctl_command *c = rows(&n);
    if (!c) {
        fputs("mkctl: out of memory\n", stderr);
        return 1;
    }
    int rc = 0;
    if (argc == 2 && strcmp(argv[1], "header") == 0) {
        header(c, n);
    } else if (argc == 2 && strcmp(argv[1], "bash") == 0) {
        ctl_doc_bash(stdout, c, n);
    } else if (argc == 3 && strcmp(argv[1], "man") == 0) {
        FILE *in = fopen(argv[2], "r");
        if (!in) {
            perror(argv[2]);
            return 1;
        }
        rc = ctl_doc_man(stdout, in, c, n) != 0;
        fclose(in);
    } else {
        fputs("usage: mkctl header|bash|man TEMPLATE\n", stderr);
        return 2;
    }
    free(c);
    if (fflush(stdout) != 0 || ferror(stdout) || rc) {
        fputs("mkctl: read or write error\n", stderr);
        return 1;
    }
    return 0;
}
