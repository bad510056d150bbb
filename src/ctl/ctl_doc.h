/* SPDX-License-Identifier: Apache-2.0 */
/* ctl_doc.h - stsctl's help, stsctl(1) and its bash completion, all written from the
 * command rows and ctl_options, so that none of them is copied by hand. */
#ifndef STSCTL_DOC_H
#define STSCTL_DOC_H

#include <stdio.h>

#include "ctl_table.h"

/* stsctl --help: the options and every verb with its summary. */
void ctl_doc_usage(FILE *out, const ctl_command *cmds, int n);

/* stsctl VERB --help: the verb's arguments and options with their help. c is the row,
 * or NULL for an extra verb e. */
void ctl_doc_verb(FILE *out, const ctl_command *c, const ctl_extra *e);

/* stsctl(1) from template in (lines @OPTIONS@ and @VERBS@, @VERSION@ anywhere).
 * Returns 0, or -1 on a read or write error. */
int ctl_doc_man(FILE *out, FILE *in, const ctl_command *cmds, int n);

/* The bash completion script: verbs, options, and each verb's options and choices. */
void ctl_doc_bash(FILE *out, const ctl_command *cmds, int n);

#endif
