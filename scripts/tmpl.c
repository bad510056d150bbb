/* SPDX-License-Identifier: Apache-2.0 */
/* tmpl.c - the template loop of mkman and mkdocs (tmpl.h). */
#include "tmpl.h"

#include <stdio.h>
#include <string.h>

#include "base/version.h"

int tmpl_expand(const char *prog, const char *path, int (*line_fn)(const char *line))
{
    FILE *in = fopen(path, "r");
    if (!in) {
        fprintf(stderr, "%s: %s: ", prog, path);
        perror(NULL);
        return 1;
    }
    char line[4096];
    while (fgets(line, sizeof line, in)) {
        if (line_fn(line))
            continue;
        char *at = strstr(line, "@VERSION@");
        if (at) {
            *at = '\0';
            printf("%s%s%s", line, STSD_VERSION, at + strlen("@VERSION@"));
        } else {
            fputs(line, stdout);
        }
    }
    int bad = ferror(in) || fclose(in) != 0;
    if (fflush(stdout) != 0 || ferror(stdout) || bad) {
        fprintf(stderr, "%s: read or write error\n", prog);
        return 1;
    }
    return 0;
}
