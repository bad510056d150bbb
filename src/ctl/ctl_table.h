/* SPDX-License-Identifier: Apache-2.0 */
/* ctl_table.h - stsctl's view of the server's commands (rows generated at build time from
 * src/cmd/command.c by scripts/mkctl.c into build/gen/ctl_commands.h), its own options,
 * and the rules that turn a command's parameters into a verb's arguments. */
#ifndef STSCTL_TABLE_H
#define STSCTL_TABLE_H

#include <stddef.h>

/* The flags and answer kinds of a row, as the server's table says (cmd/command.h). */
enum { CTL_LOOKS = 1, CTL_CHANGES = 2, CTL_ADMIN = 4, CTL_WAITS = 8, CTL_JSON = 16,
       CTL_FORM = 32 };
enum { CTL_FIELD_MESSAGE, CTL_FIELD_LINE, CTL_FIELD_LENGTH, CTL_FIELD_COUNT };

#define CTL_MAX_PARAMS 8

typedef struct ctl_param {
    const char *name;      /* the server's, e.g. "READ_MODE"; NULL ends the list */
    const char *value;     /* "FIRST|LAST|RANDOM", "seconds", "text" */
    int optional;
    const char *help;
} ctl_param;

typedef struct ctl_command {
    const char *name;      /* "READ": the path /sts/READ */
    unsigned flags;
    int field;
    const char *summary;
    ctl_param params[CTL_MAX_PARAMS];
} ctl_command;

/* stsctl's own options, before the verb: the one list --help, stsctl(1) and the
 * completion are written from. */
typedef struct ctl_option {
    const char *name;      /* "url" for --url */
    const char *arg;       /* "URL", or NULL for a flag */
    const char *env;       /* the variable it defaults from, or NULL */
    const char *help;
    char letter;           /* 'h' for -h as well as --help, or 0 */
} ctl_option;

extern const ctl_option ctl_options[];   /* ends with a row whose name is NULL */

/* The option whose one-letter form is argv word a ("-h"), or NULL. */
const ctl_option *ctl_option_of_letter(const char *a);

/* What a verb prints by default when its answer is one result among other fields (the
 * rest with --long): the member of the JSON answer that is the result. */
typedef struct ctl_result {
    const char *command;   /* the row's name, "GET" */
    const char *member;    /* "value": printed bare (a "value_base64" as its bytes) */
    const char *what;      /* "the value", for the help and stsctl(1) */
} ctl_result;

/* The result of the command named command, or NULL (the answer prints whole). */
const ctl_result *ctl_result_of(const char *command);

/* 1 if parameter p stands in for the parameter named name: its help starts with
 * "instead of NAME" (RELEASE's NAME instead of FILENAME), so that name may be left out
 * when p is given. */
int ctl_param_instead_of(const ctl_param *p, const char *name);

/* What a parameter is on the command line. */
typedef enum ctl_kind {
    CTL_POSITIONAL,   /* a required parameter: an argument in the row's order */
    CTL_BOOL,         /* TRUE|FALSE: --keep, --keep=false, --no-keep */
    CTL_CHOICE,       /* A|B|C: --mode first (any case; sent as the row spells it) */
    CTL_VALUE,        /* anything else: --timeout 5 */
} ctl_kind;

ctl_kind ctl_param_kind(const ctl_param *p);
/* 1 if p's last alternative is a placeholder ("FALSE|TRUE|column"): a flag of it also
 * takes any value written as --opt=value. */
int ctl_param_free_value(const ctl_param *p);

/* The long option of parameter p of row c, written to out (size n): lower case, '_' as
 * '-', and a lone "*_MODE" as "mode" (READ_MODE, FIND_MODE, ADD_MODE). */
void ctl_option_name(const ctl_command *c, const ctl_param *p, char *out, size_t n);

/* The verb of row c: its name in lower case, written to out (size n). */
void ctl_verb_name(const ctl_command *c, char *out, size_t n);

/* Verbs of stsctl's own, beside the server's: "load" replaces LOAD's parameters with a
 * local file and --as; "top" has none. NULL-terminated. */
typedef struct ctl_extra {
    const char *verb;
    const char *usage;     /* after the verb */
    const char *summary;
    const char *options[4][2];   /* {"--as NAME", "help"}, NULL-terminated */
} ctl_extra;

extern const ctl_extra ctl_extras[];

/* The extra verb named verb, or NULL. */
const ctl_extra *ctl_extra_of(const char *verb);

#endif
