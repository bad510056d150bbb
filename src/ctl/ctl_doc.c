/* SPDX-License-Identifier: Apache-2.0 */
/* ctl_doc.c - help, manual page and completion of stsctl, from the command rows. */
#include "ctl_doc.h"

#include <ctype.h>
#include <string.h>

#include "base/version.h"

static void lower(const char *s, char *out, size_t n)
{
    size_t i = 0;
    for (; s[i] && i + 1 < n; i++)
        out[i] = (char)tolower((unsigned char)s[i]);
    out[i] = '\0';
}

/* The synopsis of row c after its verb: "FILENAME [--mode first|last] [--keep[=true|false]]". */
static void synopsis(FILE *out, const ctl_command *c)
{
    char opt[64], val[128];
    for (int i = 0; i < CTL_MAX_PARAMS && c->params[i].name; i++) {
        const ctl_param *p = &c->params[i];
        ctl_option_name(c, p, opt, sizeof opt);
        switch (ctl_param_kind(p)) {
        case CTL_POSITIONAL:
            fprintf(out, " %s", p->name);
            break;
        case CTL_BOOL:
            fprintf(out, " [--%s[=true|false]]", opt);
            break;
        case CTL_CHOICE:
            lower(p->value, val, sizeof val);
            fprintf(out, " [--%s %s]", opt, val);
            break;
        case CTL_VALUE:
            fprintf(out, " [--%s %s]", opt, p->value);
            break;
        }
    }
}

static void verb_line(FILE *out, const ctl_command *c, char *verb, size_t n)
{
    ctl_verb_name(c, verb, n);
}

/* "  verb       The summary's first sentence." (VERB --help has the rest). */
static void first_sentence(FILE *out, const char *verb, const char *summary)
{
    const char *end = strstr(summary, ". ");
    int len = end ? (int)(end - summary + 1) : (int)strlen(summary);
    fprintf(out, "  %-10s %.*s\n", verb, len, summary);
}

void ctl_doc_usage(FILE *out, const ctl_command *cmds, int n)
{
    char verb[64];
    fputs("Usage: stsctl [OPTION]... VERB [ARGUMENT]... [--PARAMETER VALUE]...\n"
          "A client for stsd (the HTTP Simple Table Server) for scripts and terminals.\n"
          "Exit status: 0 OK, 1 the server answered KO (its message on stderr), 2 usage,\n"
          "3 the server could not be reached or refused the request (HTTP 401/403...).\n\n"
          "Options:\n", out);
    for (const ctl_option *o = ctl_options; o->name; o++) {
        char left[64];
        snprintf(left, sizeof left, "%s%c%s--%s%s%s", o->letter ? "-" : "",
                 o->letter ? o->letter : ' ', o->letter ? ", " : "   ", o->name,
                 o->arg ? " " : "", o->arg ? o->arg : "");
        fprintf(out, "  %-24s %s%s%s\n", left, o->help, o->env ? "; default $" : "",
                o->env ? o->env : "");
    }
    fputs("\nVerbs (stsctl VERB --help for one's parameters):\n", out);
    for (int i = 0; i < n; i++) {
        verb_line(out, &cmds[i], verb, sizeof verb);
        const ctl_extra *e = ctl_extra_of(verb);
        first_sentence(out, verb, e ? e->summary : cmds[i].summary);
    }
    for (const ctl_extra *e = ctl_extras; e->verb; e++) {
        int row = 0;
        for (int i = 0; i < n && !row; i++) {
            verb_line(out, &cmds[i], verb, sizeof verb);
            row = strcmp(verb, e->verb) == 0;
        }
        if (!row)
            first_sentence(out, e->verb, e->summary);
    }
}

void ctl_doc_verb(FILE *out, const ctl_command *c, const ctl_extra *e)
{
    char verb[64], opt[64];
    if (e) {
        fprintf(out, "Usage: stsctl [OPTION]... %s %s\n%s\n", e->verb, e->usage, e->summary);
        for (int i = 0; e->options[i][0]; i++)
            fprintf(out, "  %-22s %s\n", e->options[i][0], e->options[i][1]);
        return;
    }
    ctl_verb_name(c, verb, sizeof verb);
    fprintf(out, "Usage: stsctl [OPTION]... %s", verb);
    synopsis(out, c);
    fprintf(out, "\n%s%s\n", c->summary,
            c->flags & CTL_ADMIN ? " Needs the admin token, once one is set." : "");
    const ctl_result *res = ctl_result_of(c->name);
    if (res)
        fprintf(out, "Prints %s; --long every field of the answer.\n", res->what);
    for (int i = 0; i < CTL_MAX_PARAMS && c->params[i].name; i++) {
        const ctl_param *p = &c->params[i];
        char left[96];
        ctl_option_name(c, p, opt, sizeof opt);
        if (ctl_param_kind(p) == CTL_POSITIONAL)
            snprintf(left, sizeof left, "%s", p->name);
        else
            snprintf(left, sizeof left, "--%s", opt);
        fprintf(out, "  %-22s %s (%s=%s)\n", left, p->help, p->name, p->value);
    }
}

/* man(7) text: backslashes and hyphens escaped, a leading control character defused. */
static void man_text(FILE *out, const char *s)
{
    if (*s == '.' || *s == '\'')
        fputs("\\&", out);
    for (; *s; s++) {
        if (*s == '\\')
            fputs("\\e", out);
        else if (*s == '-')
            fputs("\\-", out);
        else
            fputc(*s, out);
    }
}

static void man_options(FILE *out)
{
    for (const ctl_option *o = ctl_options; o->name; o++) {
        if (o->letter)
            fprintf(out, ".TP\n\\fB\\-%c\\fR, \\fB\\-\\-", o->letter);
        else
            fputs(".TP\n\\fB\\-\\-", out);
        man_text(out, o->name);
        fputs("\\fR", out);
        if (o->arg) {
            fputs(" \\fI", out);
            man_text(out, o->arg);
            fputs("\\fR", out);
        }
        fputc('\n', out);
        man_text(out, o->help);
        if (o->env) {
            fputs("; default \\fB$", out);
            man_text(out, o->env);
            fputs("\\fR", out);
        }
        fputs(".\n", out);
    }
}

static void man_verb(FILE *out, const ctl_command *c)
{
    char verb[64], opt[64];
    ctl_verb_name(c, verb, sizeof verb);
    const ctl_extra *e = ctl_extra_of(verb);
    fputs(".TP\n.B ", out);
    man_text(out, verb);
    if (e) {
        fputc(' ', out);
        man_text(out, e->usage);
        fputc('\n', out);
        man_text(out, e->summary);
        fputc('\n', out);
        for (int i = 0; e->options[i][0]; i++) {
            fputs(i ? ".IP \\(bu 2\n" : ".RS\n.PD 0\n.IP \\(bu 2\n", out);
            man_text(out, e->options[i][0]);
            fputs(": ", out);
            man_text(out, e->options[i][1]);
            fputc('\n', out);
            if (!e->options[i + 1][0])
                fputs(".PD\n.RE\n", out);
        }
        return;
    }
    for (int i = 0; i < CTL_MAX_PARAMS && c->params[i].name; i++) {
        const ctl_param *p = &c->params[i];
        ctl_option_name(c, p, opt, sizeof opt);
        fputc(' ', out);
        if (ctl_param_kind(p) == CTL_POSITIONAL) {
            fputs("\\fI", out);
            man_text(out, p->name);
            fputs("\\fP", out);
        } else {
            fputs("\\fR[\\fP\\-\\-", out);
            man_text(out, opt);
            if (ctl_param_kind(p) != CTL_BOOL) {
                char val[128];
                lower(p->value, val, sizeof val);
                fputs(" \\fI", out);
                man_text(out, ctl_param_kind(p) == CTL_CHOICE ? val : p->value);
                fputs("\\fP", out);
            }
            fputs("\\fR]\\fP", out);
        }
    }
    fputc('\n', out);
    man_text(out, c->summary);
    if (c->flags & CTL_ADMIN)
        fputs("\nNeeds the admin token, once one is set.", out);
    const ctl_result *res = ctl_result_of(c->name);
    if (res) {
        fputs("\nPrints ", out);
        man_text(out, res->what);
        fputs("; \\fB\\-\\-long\\fR every field of the answer.", out);
    }
    fputc('\n', out);
    if (!c->params[0].name)
        return;
    fputs(".RS\n.PD 0\n", out);
    for (int i = 0; i < CTL_MAX_PARAMS && c->params[i].name; i++) {
        const ctl_param *p = &c->params[i];
        ctl_option_name(c, p, opt, sizeof opt);
        fputs(".IP \\(bu 2\n\\fB", out);
        if (ctl_param_kind(p) == CTL_POSITIONAL)
            man_text(out, p->name);
        else {
            fputs("\\-\\-", out);
            man_text(out, opt);
        }
        fputs("\\fR: ", out);
        man_text(out, p->help);
        fputs(" (", out);
        man_text(out, p->name);
        fputs(").\n", out);
    }
    fputs(".PD\n.RE\n", out);
}

int ctl_doc_man(FILE *out, FILE *in, const ctl_command *cmds, int n)
{
    char line[4096];
    while (fgets(line, sizeof line, in)) {
        if (strcmp(line, "@OPTIONS@\n") == 0) {
            man_options(out);
            continue;
        }
        if (strcmp(line, "@VERBS@\n") == 0) {
            for (int i = 0; i < n; i++)
                man_verb(out, &cmds[i]);
            for (const ctl_extra *e = ctl_extras; e->verb; e++) {
                ctl_command fake = {e->verb, 0, 0, e->summary, {{0}}};
                int row = 0;
                char verb[64];
                for (int i = 0; i < n && !row; i++) {
                    ctl_verb_name(&cmds[i], verb, sizeof verb);
                    row = strcmp(verb, e->verb) == 0;
                }
                if (!row)
                    man_verb(out, &fake);
            }
            continue;
        }
        char *at = strstr(line, "@VERSION@");
        if (at) {
            *at = '\0';
            fprintf(out, "%s%s%s", line, STSD_VERSION, at + strlen("@VERSION@"));
        } else {
            fputs(line, out);
        }
    }
    return ferror(in) || fflush(out) != 0 || ferror(out) ? -1 : 0;
}

/* "--url|--token|...": the options that take a value (files only: those whose value is
 * a FILE), as a case pattern. */
static void with_arg(FILE *out, int files)
{
    int first = 1;
    for (const ctl_option *o = ctl_options; o->name; o++)
        if (o->arg && (!files || strcmp(o->arg, "FILE") == 0)) {
            fprintf(out, "%s--%s", first ? "" : "|", o->name);
            first = 0;
        }
}

/* The completion of one verb: its options, and the values of its choices. */
static void bash_verb(FILE *out, const ctl_command *c)
{
    char verb[64], opt[64], val[128];
    ctl_verb_name(c, verb, sizeof verb);
    fprintf(out, "        %s)\n", verb);
    if (ctl_extra_of(verb)) {
        /* An extra verb's options are words like "--as NAME". */
        const ctl_extra *e = ctl_extra_of(verb);
        fputs("            [[ $cur == -* ]] && COMPREPLY=($(compgen -W '--help", out);
        for (int k = 0; e->options[k][0]; k++) {
            const char *sp = strchr(e->options[k][0], ' ');
            fprintf(out, " %.*s", sp ? (int)(sp - e->options[k][0]) : (int)strlen(e->options[k][0]),
                    e->options[k][0]);
        }
        fputs("' -- \"$cur\")) || COMPREPLY=($(compgen -f -- \"$cur\"))\n            ;;\n", out);
        return;
    }
    fputs("            case $prev in\n", out);
    for (int k = 0; k < CTL_MAX_PARAMS && c->params[k].name; k++) {
        const ctl_param *p = &c->params[k];
        if (ctl_param_kind(p) != CTL_CHOICE)
            continue;
        ctl_option_name(c, p, opt, sizeof opt);
        lower(p->value, val, sizeof val);
        for (char *b = val; *b; b++)
            if (*b == '|')
                *b = ' ';
        fprintf(out, "                --%s) COMPREPLY=($(compgen -W '%s' -- \"$cur\")); return ;;\n",
                opt, val);
    }
    fputs("            esac\n            COMPREPLY=($(compgen -W '--help", out);
    for (int k = 0; k < CTL_MAX_PARAMS && c->params[k].name; k++) {
        const ctl_param *p = &c->params[k];
        if (ctl_param_kind(p) == CTL_POSITIONAL)
            continue;
        ctl_option_name(c, p, opt, sizeof opt);
        fprintf(out, " --%s", opt);
        if (ctl_param_kind(p) == CTL_BOOL)
            fprintf(out, " --no-%s", opt);
    }
    fputs("' -- \"$cur\"))\n            ;;\n", out);
}

void ctl_doc_bash(FILE *out, const ctl_command *cmds, int n)
{
    char verb[64];
    fputs("# bash completion for stsctl: written by scripts/mkctl from the command table.\n"
          "_stsctl()\n{\n"
          "    local cur prev verb i\n"
          "    cur=${COMP_WORDS[COMP_CWORD]}\n"
          "    prev=${COMP_WORDS[COMP_CWORD-1]}\n"
          "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
          "        case ${COMP_WORDS[i]} in\n"
          "            ", out);
    with_arg(out, 0);
    fputs(") ((i++)) ;;\n"
          "            -*) ;;\n"
          "            *) verb=${COMP_WORDS[i]}; break ;;\n"
          "        esac\n"
          "    done\n"
          "    if [[ -z $verb ]]; then\n"
          "        case $prev in\n"
          "            ", out);
    with_arg(out, 1);
    fputs(") COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n"
          "            ", out);
    with_arg(out, 0);
    fputs(") return ;;\n"
          "        esac\n"
          "        if [[ $cur == -* ]]; then\n"
          "            COMPREPLY=($(compgen -W '", out);
    for (const ctl_option *o = ctl_options; o->name; o++)
        fprintf(out, "%s--%s", o == ctl_options ? "" : " ", o->name);
    fputs("' -- \"$cur\"))\n        else\n            COMPREPLY=($(compgen -W '", out);
    for (int i = 0; i < n; i++) {
        ctl_verb_name(&cmds[i], verb, sizeof verb);
        fprintf(out, "%s%s", i ? " " : "", verb);
    }
    for (const ctl_extra *e = ctl_extras; e->verb; e++) {
        int row = 0;
        for (int i = 0; i < n && !row; i++) {
            ctl_verb_name(&cmds[i], verb, sizeof verb);
            row = strcmp(verb, e->verb) == 0;
        }
        if (!row)
            fprintf(out, " %s", e->verb);
    }
    fputs("' -- \"$cur\"))\n        fi\n        return\n    fi\n    case $verb in\n", out);
    for (int i = 0; i < n; i++)
        bash_verb(out, &cmds[i]);
    fputs("    esac\n}\ncomplete -F _stsctl stsctl\n", out);
}
