/* csrf.c - refuses state-changing commands from a browser context without the
 * dashboard's header (see csrf.h). */
#include "guard/csrf.h"

#include <string.h>

/* Commands that change nothing. Any other name, present or future, needs the header
 * from a browser: a new command is refused there until it is listed here. */
static const char *const read_only[] = {"STATUS", "LENGTH", "CONFIG", "PEEK", "FILES", "INFO", "LEASES",
                                        NULL};

static int is_read_only(const char *path, size_t len)
{
    if (len < 5 || memcmp(path, "/sts/", 5) != 0)
        return 1;                 /* not a command: the help page, /metrics, unknown */
    const char *name = path + 5;
    size_t n = len - 5;
    if (n == 0)
        return 1;
    for (int i = 0; read_only[i]; i++)
        if (strlen(read_only[i]) == n && memcmp(read_only[i], name, n) == 0)
            return 1;
    return 0;
}

static int from_browser(const char *origin, const char *sec_fetch_site)
{
    if (origin)
        return 1;
    return sec_fetch_site && strcmp(sec_fetch_site, "same-origin") != 0 &&
           strcmp(sec_fetch_site, "none") != 0;
}

int csrf_refuses(const char *path, size_t len, const char *origin, const char *sec_fetch_site,
                 const char *ui_header)
{
    if (!from_browser(origin, sec_fetch_site) || is_read_only(path, len))
        return 0;
    return !ui_header || strcmp(ui_header, CSRF_HEADER_VALUE) != 0;
}
