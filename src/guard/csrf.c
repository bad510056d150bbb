/* SPDX-License-Identifier: Apache-2.0 */
/* csrf.c - refuses state-changing commands from a browser context without the
 * dashboard's header (see csrf.h); the command table says which commands change state. */
#include "guard/csrf.h"

#include <string.h>

static int from_browser(const char *origin, const char *sec_fetch_site)
{
    if (origin)
        return 1;
    return sec_fetch_site && strcmp(sec_fetch_site, "same-origin") != 0 &&
           strcmp(sec_fetch_site, "none") != 0;
}

int csrf_refuses(const char *origin, const char *sec_fetch_site, const char *ui_header)
{
    if (!from_browser(origin, sec_fetch_site))
        return 0;
    return !ui_header || strcmp(ui_header, CSRF_HEADER_VALUE) != 0;
}
