/* SPDX-License-Identifier: Apache-2.0 */
/* ctl_once.c - `stsctl once`: ONCE NAME, and on RUN, COMMAND in a child while the run is
 * renewed (ONCE RUN=id) every third of its lease, so that a COMMAND longer than any lease
 * fails over only if this machine dies; then DONE with COMMAND's status. */
#include "ctl_once.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/num.h"
#include "ctl_json.h"
#include "ctl_out.h"

/* Renewals come at least this far apart, whatever the lease. */
#define RENEW_MIN_MS 10

typedef struct run {
    const ctl_conn *c;
    const char *name;
    char id[40];              /* the run's lease, as X-STS-Lease gave it */
    int64_t lease_ms;         /* 0: the server did not say; nothing renews then */
    int lost;                 /* a renewal was refused: the run is no longer ours */
} run;

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* ONCE with query q: 0 with the answer's JSON in *v (its "state" a string), or the exit
 * status of a failure, said on stderr as any verb says it. */
static int once_ask(const ctl_conn *c, const buf *q, cj **v)
{
    ctl_answer a;
    int rc = 0;
    *v = NULL;
    if (q->oom)
        return CTL_EXIT_SERVER;
    if (ctl_request(c, "ONCE", q->data, 1, NULL, 0, &a) != 0) {
        fprintf(stderr, "stsctl: %s\n", a.error);
        rc = CTL_EXIT_SERVER;
    } else {
        *v = cj_parse(a.body.data ? a.body.data : "", a.body.len);
        const cj *st = cj_get(*v, "state");
        if (!st || st->type != CJ_STRING) {
            cj_free(*v);
            *v = NULL;
            rc = ctl_finish(&a, c->url, NULL);
            if (rc == CTL_EXIT_OK)
                rc = CTL_EXIT_SERVER;        /* an OK without a state: not stsd's ONCE */
        }
    }
    ctl_answer_free(&a);
    return rc;
}

/* DONE or RELEASE of the run, with VALUE value (DONE); a refusal is said, not fatal. */
static void run_end(const run *r, const char *command, const char *value)
{
    buf q = BUF_INIT;
    ctl_answer a;
    ctl_query_add(&q, "NAME", r->name);
    ctl_query_add(&q, "LEASE", r->id);
    if (value)
        ctl_query_add(&q, "VALUE", value);
    ctl_query_add(&q, "FORMAT", "JSON");
    if (q.oom) {
        fprintf(stderr, "stsctl: once: %s not sent: out of memory\n", command);
    } else if (ctl_request(r->c, command, q.data, 1, NULL, 0, &a) != 0) {
        fprintf(stderr, "stsctl: once: %s not sent: %s\n", command, a.error);
    } else {
        cj *d = cj_parse(a.body.data ? a.body.data : "", a.body.len);
        const cj *ok = cj_get(d, "ok"), *err = cj_get(d, "error");
        if (!ok || ok->type != CJ_BOOL || !ok->b)
            fprintf(stderr, "stsctl: once: %s refused: %s\n", command,
                    err && err->type == CJ_STRING ? err->s : "not an answer of stsd");
        cj_free(d);
        ctl_answer_free(&a);
    }
    buf_free(&q);
}

/* ONCE RUN=id: the run may take lease_ms more. A refusal is said once and ends the
 * renewals; a server out of reach is said and tried again at the next turn. */
static void run_renew(run *r)
{
    char secs[32];
    buf q = BUF_INIT;
    cj *v;
    snprintf(secs, sizeof secs, "%lld.%03lld", (long long)(r->lease_ms / 1000),
             (long long)(r->lease_ms % 1000));
    ctl_query_add(&q, "NAME", r->name);
    ctl_query_add(&q, "RUN", r->id);
    ctl_query_add(&q, "LEASE", secs);
    ctl_query_add(&q, "FORMAT", "JSON");
    int rc = once_ask(r->c, &q, &v);
    if (rc == CTL_EXIT_KO) {
        r->lost = 1;
        fprintf(stderr, "stsctl: once: the run of %s is no longer this caller's; COMMAND "
                "goes on, but another caller may run it too\n", r->name);
    }
    cj_free(v);
    buf_free(&q);
}

static int exit_status(int st)
{
    return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;
}

/* Runs cmd to its end, renewing r every third of its lease. *sig: a signal that asked
 * stsctl to stop meanwhile (0: none). Returns cmd's exit status (127: could not start). */
static int run_command(run *r, char **cmd, int *sig)
{
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    signal(SIGCHLD, SIG_DFL);      /* an inherited SIG_IGN would reap cmd before we do */
    sigprocmask(SIG_BLOCK, &set, &old);
    fflush(NULL);
    pid_t p = fork();
    if (p == 0) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        execvp(cmd[0], cmd);
        fprintf(stderr, "stsctl: once: %s: %m\n", cmd[0]);
        _exit(127);
    }
    if (p < 0) {
        fprintf(stderr, "stsctl: once: cannot start %s: %m\n", cmd[0]);
        sigprocmask(SIG_SETMASK, &old, NULL);
        return 127;
    }
    int64_t every = r->lease_ms / 3 > RENEW_MIN_MS ? r->lease_ms / 3 : RENEW_MIN_MS;
    int64_t next = now_ms() + every;
    int st = 0;
    pid_t w;
    while ((w = waitpid(p, &st, WNOHANG)) == 0 || (w < 0 && errno == EINTR)) {
        int64_t left = next - now_ms();
        if (left <= 0) {
            if (r->lease_ms && !r->lost)
                run_renew(r);
            next = now_ms() + every;
            continue;
        }
        struct timespec ts = {left / 1000, (long)(left % 1000) * 1000000};
        siginfo_t si;
        int s = sigtimedwait(&set, &si, &ts);
        if (s > 0 && s != SIGCHLD) {
            *sig = s;
            /* A terminal's signal reached cmd's process group already; pass on the rest. */
            if (si.si_code == SI_USER || si.si_code == SI_QUEUE)
                kill(p, s);
        }
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    return w == p ? exit_status(st) : 1;
}

/* A done run's value as an exit status: a number 0..255 is one; anything else is 0. */
static int status_of(const cj *v)
{
    const cj *val = cj_get(v, "value");
    uint64_t n;
    if (val && val->type == CJ_STRING && num_parse_u64(val->s, val->len, 0, 255, &n) == 0)
        return (int)n;
    return 0;
}

/* The run ONCE gave in v: its lease, and how long it lasts (for the renewals). */
static void run_from(run *r, const cj *v)
{
    const cj *id = cj_get(v, "lease"), *ms = cj_get(v, "lease_ms");
    uint64_t n;
    snprintf(r->id, sizeof r->id, "%s", id && id->type == CJ_STRING ? id->s : "");
    r->lease_ms = ms && ms->type == CJ_NUMBER &&
                  num_parse_u64(ms->s, ms->len, 1, INT64_MAX / 2, &n) == 0 ? (int64_t)n : 0;
}

int ctl_once(const ctl_conn *c, const char *name, const char *timeout, const char *lease,
             char **cmd)
{
    buf q = BUF_INIT;
    cj *v;
    ctl_query_add(&q, "NAME", name);
    if (timeout)
        ctl_query_add(&q, "TIMEOUT", timeout);
    if (lease)
        ctl_query_add(&q, "LEASE", lease);
    ctl_query_add(&q, "FORMAT", "JSON");
    int rc = once_ask(c, &q, &v);
    buf_free(&q);
    if (rc != 0)
        return rc;
    if (strcmp(cj_get(v, "state")->s, "done") == 0) {
        rc = status_of(v);
        cj_free(v);
        return rc;
    }
    run r = {c, name, "", 0, 0};
    run_from(&r, v);
    cj_free(v);
    int sig = 0, status = run_command(&r, cmd, &sig);
    if (sig) {
        /* Interrupted, not finished: another caller runs COMMAND now, not at the lease's
         * end. */
        run_end(&r, "RELEASE", NULL);
        return 128 + sig;
    }
    /* DONE even when COMMAND failed: its status is the result every caller exits with.
     * A DONE refused (the run was lost and another caller took over) is said; this
     * caller still exits with its own COMMAND's status. */
    char num[8];
    snprintf(num, sizeof num, "%d", status);
    run_end(&r, "DONE", num);
    return status;
}
