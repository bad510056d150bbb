/* SPDX-License-Identifier: Apache-2.0 */
/* tmpl.h - the template loop mkman and mkdocs share: a page is its template with some
 * whole lines replaced by what the tables make, and @VERSION@ by stsd's version. */
#ifndef STSD_TMPL_H
#define STSD_TMPL_H

/* Writes the template at path to stdout: each line for which line_fn returns 1 it has
 * replaced (written itself), every other line as it is, @VERSION@ replaced. Returns 0,
 * or 1 after a read or write error (said on stderr with prog's name). */
int tmpl_expand(const char *prog, const char *path, int (*line_fn)(const char *line));

#endif
