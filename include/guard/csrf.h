/* SPDX-License-Identifier: Apache-2.0 */
/* csrf.h - keeps foreign pages from changing data through a visitor's browser: a
 * command that changes state, sent from a browser context, must carry the dashboard's
 * own header, which a cross-site form or image cannot set. */
#ifndef STSD_CSRF_H
#define STSD_CSRF_H

#include <stddef.h>

/* The header the dashboard sends with every write, and its value. */
#define CSRF_HEADER "X-STS-UI"
#define CSRF_HEADER_VALUE "1"

/* The answer to a refused request: HTTP 403 with this JSON body. */
#define CSRF_STATUS 403
#define CSRF_BODY "{\"ok\":false,\"error\":\"Cross-site request refused: a change from a " \
                  "browser needs the X-STS-UI header !\"}"

/* For a command that may change state (the dispatcher asks only for those): 1 if the
 * request must be refused, because it comes from a browser context (an Origin header, or
 * a Sec-Fetch-Site other than same-origin or none) and ui_header (X-STS-UI, NULL when
 * absent) is not "1". Clients that are no browser (JMeter, curl) send neither header and
 * always pass. */
int csrf_refuses(const char *origin, const char *sec_fetch_site, const char *ui_header);

#endif
