/* SPDX-License-Identifier: Apache-2.0 */
/* mkdocs.c - writes docs/commands.md and docs/configuration.md from their templates,
 * filling in the commands, options and keys from the tables stsd runs on (as mkman does
 * for stsd(8)), so that the reference in docs/ cannot drift from the binary.
 * Usage: mkdocs TEMPLATE > PAGE.md (lines @COMMANDS@, @COMMAND_INDEX@, @OPTIONS@ and
 * @KEYS@, and @VERSION@ anywhere). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/command.h"
#include "config/config.h"
#include "tmpl.h"

/* s as Markdown text: the characters that would start markup, and | in tables, escaped. */
static void md_text(const char *s)
{
    for (; *s; s++) {
        if (strchr("\\`*_[]<>|", *s))
            putchar('\\');
        putchar(*s);
    }
}

/* s as a code span: backquotes cannot occur in our names and values, so one pair does;
 * inside a table, | must still be escaped (GitHub's tables split on it first). */
static void md_code(const char *s, int in_table)
{
    putchar('`');
    for (; *s; s++) {
        if (*s == '|' && in_table)
            putchar('\\');
        putchar(*s);
    }
    putchar('`');
}

static const char *field_doc(reply_field f)
{
    switch (f) {
    case FIELD_LINE:
        return "`line` (or `line_base64` for bytes that are not UTF-8)";
    case FIELD_LENGTH:
        return "`length`, a number";
    case FIELD_COUNT:
        return "`message`, and `lines`: the number of lines";
    case FIELD_MESSAGE:
        break;
    }
    return "`message`";
}

static void put_index(void)
{
    fputs("| command | what it does |\n|---|---|\n", stdout);
    for (int i = 0; i < command_count(); i++) {
        const cmd_def *c = command_at(i);
        printf("| [%s](#", c->name);
        for (const char *p = c->name; *p; p++)
            putchar(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
        fputs(") | ", stdout);
        md_text(c->summary);
        fputs(" |\n", stdout);
    }
}

static void put_command(const cmd_def *c)
{
    printf("### %s\n\n", c->name);
    fputs("    GET /sts/", stdout);
    fputs(c->name, stdout);
    for (int i = 0; i < CMD_MAX_PARAMS && c->params[i].name; i++) {
        const cmd_param *p = &c->params[i];
        printf("%s%s%s=%s%s", i == 0 ? "?" : "&", p->optional ? "[" : "",
               p->name, p->value, "");
        if (p->optional)
            putchar(']');
    }
    fputs("\n\n", stdout);
    md_text(c->summary);
    fputs("\n\n", stdout);
    for (int i = 0; i < CMD_MAX_PARAMS && c->params[i].name; i++) {
        const cmd_param *p = &c->params[i];
        fputs("- ", stdout);
        md_code(p->name, 0);
        fputs(p->optional ? " (optional): " : ": ", stdout);
        md_text(p->help);
        putchar('\n');
    }
    if (c->params[0].name)
        putchar('\n');
    fputs("- From the reference: ", stdout);
    fputs(c->flags & CMD_REF ? "yes, answered byte for byte as the Java STS does.\n"
                                : "no, a command stsd adds.\n", stdout);
    fputs("- Changes data: ", stdout);
    fputs(c->flags & CMD_CHANGES ? "yes (journaled; refused while the journal cannot be "
                                   "written).\n"
                                 : c->flags & CMD_LOOKS ? "no.\n" : "it may.\n", stdout);
    if (c->flags & CMD_WAITS)
        fputs("- May wait (its TIMEOUT): the request is parked, holding no thread.\n", stdout);
    if (c->flags & CMD_ADMIN)
        fputs("- Needs the admin token, once tokens are set.\n", stdout);
    if (c->flags & CMD_FORM)
        fputs("- GET or POST (urlencoded or multipart) only.\n", stdout);
    printf("- JSON (`FORMAT=JSON`): %s.\n\n",
           c->flags & CMD_JSON ? "a document of its own (docs/json.md)" : field_doc(c->field));
}

static void put_option(const config_opt_doc *o, void *ctx)
{
    fputs("| ", stdout);
    if (o->alias) {
        md_code(o->alias, 1);
        fputs(", ", stdout);
    }
    md_code(o->name, 1);
    if (o->arg) {
        putchar(' ');
        md_code(o->arg, 1);
    }
    fputs(" | ", stdout);
    if (o->key)
        md_code(o->key, 1);
    fputs(" | ", stdout);
    md_text(o->help);
    fputs(" |\n", stdout);
}

static void put_key(const config_key_doc *k, void *ctx)
{
    fputs("| ", stdout);
    md_code(k->name, 1);
    fputs(" | ", stdout);
    md_text(k->values);
    fputs(" | ", stdout);
    if (*k->def)
        md_code(k->def, 1);
    else
        fputs("(empty)", stdout);
    fputs(" | ", stdout);
    md_text(k->help);
    fputs(" |\n", stdout);
}

/* The template's lines that the tables replace. */
static int docs_line(const char *line)
{
    if (strcmp(line, "@COMMAND_INDEX@\n") == 0) {
        put_index();
    } else if (strcmp(line, "@COMMANDS@\n") == 0) {
        for (int i = 0; i < command_count(); i++)
            put_command(command_at(i));
    } else if (strcmp(line, "@OPTIONS@\n") == 0) {
        fputs("| option | sets | what it does |\n|---|---|---|\n", stdout);
        config_doc_options(put_option, NULL);
    } else if (strcmp(line, "@KEYS@\n") == 0) {
        fputs("| key | accepts | default | what it does |\n|---|---|---|---|\n", stdout);
        config_doc_keys(put_key, NULL);
    } else {
        return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: mkdocs TEMPLATE > PAGE.md\n");
        return 2;
    }
    return tmpl_expand("mkdocs", argv[1], docs_line);
}
