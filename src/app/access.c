/* SPDX-License-Identifier: Apache-2.0 */
/* access.c - turns the access and TLS keys into rules for the HTTP server, and logs them. */
#include "app/access.h"

#include <stdlib.h>

#include "base/log.h"
#include "cmd/command.h"

int access_setup(const config *conf, access_rules *a, buf *err)
{
    *a = (access_rules)ACCESS_RULES_INIT;
    a->http.auth = auth_create(conf, command_exists, err);
    if (!a->http.auth)
        goto fail;
    if (conf->allow && *conf->allow) {
        a->allow = allow_parse(conf->allow, err);
        if (!a->allow)
            goto fail;
        a->http.allow = a->allow;
    }
    if (tls_wanted(conf)) {
        a->http.tls = tls_create(conf, err);
        if (!a->http.tls)
            goto fail;
    }
    return 0;
fail:
    access_free(a);
    return -1;
}

void access_log_start(const config *conf, const access_rules *a)
{
    size_t data, admin;
    auth_counts(a->http.auth, &data, &admin);
    if (data || admin)
        log_info("access: %zu data token%s, %zu admin token%s", data, data == 1 ? "" : "s",
                 admin, admin == 1 ? "" : "s");
    if (a->allow)
        log_info("access: only clients in stsd.allow (%s) may connect", conf->allow);
    if (conf->disabled_commands && *conf->disabled_commands)
        log_info("access: disabled commands: %s", conf->disabled_commands);
    if (a->http.tls)
        log_info("tls: serving %s (priorities %s); SIGHUP reloads it", conf->tls_cert,
                 tls_priorities(a->http.tls));
    if (!data && !admin && !allow_is_loopback_text(conf->bind))
        log_warn("listening on %s with no stsd.token: anyone who can reach port %d can "
                 "read, change and stop it (see docs/security.md)", conf->bind, conf->port);
    else if (!data && !allow_is_loopback_text(conf->bind))
        log_warn("listening on %s with no stsd.token: anyone who can reach port %d can "
                 "read and change the lists (see docs/security.md)", conf->bind, conf->port);
}

void access_reload(void *ctx)
{
    access_rules *a = ctx;
    buf err = BUF_INIT;
    if (!a->http.tls) {
        log_info("SIGHUP: nothing to reload (no stsd.tls.cert)");
        return;
    }
    if (tls_reload(a->http.tls, &err) == 0)
        log_info("SIGHUP: TLS certificate and key reloaded; new handshakes use them");
    else
        log_error("SIGHUP: %s; the previous certificate and key stay in use",
                  err.data ? err.data : "out of memory");
    buf_free(&err);
}

void access_free(access_rules *a)
{
    auth_free(a->http.auth);
    allow_free(a->allow);
    tls_free(a->http.tls);
    *a = (access_rules)ACCESS_RULES_INIT;
}
