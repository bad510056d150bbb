/* SPDX-License-Identifier: Apache-2.0 */
/* main.c - start-up, the wait for a stop (STOP, a signal, ENTER), graceful shutdown. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "app/access.h"
#include "audit/audit.h"
#include "cmd/command.h"
#include "config/config.h"
#include "dataset/dataset.h"
#include "http/http.h"
#include "http/metrics.h"
#include "app/notify.h"
#include "app/replica.h"
#include "meet/barrier.h"
#include "meet/keys.h"
#include "meet/lease_timer.h"
#include "hold/park.h"
#include "journal/journal.h"
#include "base/log.h"
#include "http/reply.h"
#include "base/stats.h"
#include "list/rx.h"
#include "store/store.h"
#include "base/version.h"

/* Signals, STOP and ENTER all end up as a byte in this pipe, which main waits on. */
static int stop_pipe[2] = {-1, -1};
/* Set as soon as a stop is asked for (from the signal handler, before main wakes): an
 * INITFILE or LOAD still reading looks at it (dataset_set_stop) and gives up. A
 * lock-free atomic store is async-signal-safe. */
static atomic_int stopping;

static void request_stop(void)
{
    char c = 's';
    ssize_t w = write(stop_pipe[1], &c, 1);
    (void)w;
}

static void on_signal(int sig)
{
    int saved = errno;
    char c = sig == SIGHUP ? 'h' : 's';
    if (c == 's')
        atomic_store_explicit(&stopping, 1, memory_order_relaxed);
    ssize_t w = write(stop_pipe[1], &c, 1);
    (void)w;
    errno = saved;
}

/* SIGHUP reloads the TLS pair and reopens the audit log; with neither it keeps its
 * default action (exit). SIGTTIN and SIGTTOU are ignored: a job in the background of a
 * terminal (`stsd &`) is never stopped by the terminal, whatever it reads or logs (a
 * read gets EIO instead). */
static int install_signals(int with_hup)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGTERM, &sa, NULL) != 0 || sigaction(SIGINT, &sa, NULL) != 0 ||
        (with_hup && sigaction(SIGHUP, &sa, NULL) != 0))
        return -1;
    sa.sa_handler = SIG_IGN;
    return sigaction(SIGPIPE, &sa, NULL) != 0 || sigaction(SIGTTIN, &sa, NULL) != 0 ||
           sigaction(SIGTTOU, &sa, NULL) != 0 ? -1 : 0;
}

/* Whether stdin is a terminal whose foreground is our process group: only then is a
 * line typed there meant for us (in the background it is the shell's). */
static int stdin_is_foreground(void)
{
    pid_t fg = tcgetpgrp(STDIN_FILENO);
    return fg != -1 && fg == getpgrp();
}

/* How often a job in the background of its terminal looks whether `fg` brought it to
 * the foreground, from where ENTER stops it again. */
#define FOREGROUND_CHECK_MS 500

/* Blocks until a stop is asked for; with watch_stdin (stdin is a terminal), ENTER (or
 * EOF) on it counts too, while stsd is the terminal's foreground job. A SIGHUP on the way
 * calls on_hup. */
static void wait_for_stop(int watch_stdin, void (*on_hup)(void *), void *hup_ctx)
{
    struct pollfd fds[2] = {{stop_pipe[0], POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}};
    for (;;) {
        int fg = watch_stdin && stdin_is_foreground();
        /* In the background stdin is not even polled (its input is the shell's); the
         * timeout only brings the foreground check round again. */
        int n = poll(fds, fg ? 2 : 1, watch_stdin ? FOREGROUND_CHECK_MS : -1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return;
        if (fds[0].revents) {
            char c = 's';
            if (read(stop_pipe[0], &c, 1) == 1 && c == 'h' && on_hup) {
                on_hup(hup_ctx);
                continue;
            }
            return;
        }
        /* Checked again: `bg` may have moved us since the poll began. */
        if (fg && fds[1].revents && stdin_is_foreground()) {
            char line[256];
            ssize_t r = read(STDIN_FILENO, line, sizeof line);
            if (r < 0 && (errno == EINTR || errno == EAGAIN || !stdin_is_foreground()))
                continue;
            if (r <= 0 || memchr(line, '\n', (size_t)r)) {
                log_info("ENTER pressed on the terminal");
                return;
            }
        }
    }
}

static int write_port_file(const char *path, int port)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -1;
    fprintf(f, "%d\n", port);
    if (fclose(f) != 0 || rename(tmp, path) != 0)
        return -1;
    return 0;
}

/* The pages to open, logged once the port is bound: one row per page the binary serves. */
static const struct start_url {
    const char *path;
    const char *what;
} start_urls[] = {
    {"/", "the dashboard (lists live; browse, search, load)"},
    {"/sts/", "the API (help page; /sts/STATUS lists the lists)"},
    {"/metrics", "Prometheus metrics"},
};

/* Logs the URLs of start_urls, with a host a browser can use for the bound address. */
static void log_urls(const config *conf)
{
    const char *host = conf->bind, *open = "", *close = "";
    if (strcmp(host, "0.0.0.0") == 0 || strcmp(host, "::") == 0)
        host = "localhost";
    else if (strchr(host, ':'))
        open = "[", close = "]";
    const char *scheme = conf->tls_cert && *conf->tls_cert ? "https" : "http";
    for (size_t i = 0; i < sizeof start_urls / sizeof start_urls[0]; i++)
        log_info("open %s://%s%s%s:%d%s  - %s", scheme, open, host, close, conf->port,
                 start_urls[i].path, start_urls[i].what);
}

/* Opens the journal (recovering the lists into st) when stsd.journal is on; the state
 * directory defaults to <canonical datasetDirectory>/.stsd. Returns 0 (with *out NULL
 * when the journal is off) or -1 with the reason logged. */
static int open_journal(const config *conf, const config_cli *cli, const dataset *ds,
                        store *st, journal **out, buf *dir)
{
    buf err = BUF_INIT;
    int rc = -1;
    *out = NULL;
    if (!conf->journal && !conf->cluster_self) {
        if (cli->fresh)
            log_warn("--fresh has no effect: the journal is off (stsd.journal)");
        return 0;
    }
    if (conf->state_dir && *conf->state_dir)
        buf_puts(dir, conf->state_dir);
    else
        buf_printf(dir, "%s/.stsd", dataset_path(ds));
    if (dir->oom) {
        log_error("out of memory");
        goto cleanup;
    }
    if (conf->cluster_self) {
        /* A replica's journal is raft's committed log, whatever stsd.journal says. */
        if (cli->fresh)
            log_warn("--fresh has no effect in a cluster: the state is raft's");
        rc = replica_open_journal(dir->data, st, out);
        goto cleanup;
    }
    *out = journal_open(dir->data, conf->journal_fsync, st, cli->fresh, &err);
    if (!*out) {
        log_error("%s", err.data ? err.data : "out of memory");
        goto cleanup;
    }
    journal_attach(*out, st);
    rc = 0;
cleanup:
    buf_free(&err);
    return rc;
}

/* Raises the soft limit of open files to the hard one (each connection, parked ones
 * included, holds a socket) and logs how many connections fit. */
static void raise_open_files(const config *conf)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return;
    if (rl.rlim_cur < rl.rlim_max) {
        rlim_t was = rl.rlim_cur;
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            rl.rlim_cur = was;
    }
    /* Some descriptors go to the listening socket, epoll, the journal and the logs. */
    unsigned long files = rl.rlim_cur == RLIM_INFINITY ? (unsigned long)-1 : rl.rlim_cur;
    unsigned long fit = files > 64 ? files - 64 : 0;
    if (fit > (unsigned long)conf->max_connections)
        fit = (unsigned long)conf->max_connections;
    log_info("open files limit %lu: up to %lu connections at once (stsd.maxConnections %d)",
             files, fit, conf->max_connections);
}

/* Everything one run of the server holds, from the command line to the shutdown. */
typedef struct app {
    config conf;
    config_cli cli;
    buf err;
    dataset *ds;
    store *st;
    http_server *http;
    park_lot *lot;
    lease_timer *leases;
    barrier_table *barriers;
    journal *j;
    access_rules acc;
    audit *audit;             /* stsd.auditLog, NULL: off */
    cmd_server srv;
    buf state_dir;            /* the journal's, when it is on */
    replica rep;              /* the cluster's side (rep.c NULL: alone) */
    int listen_fd;            /* the port bound by open_state until start_serving listens */
} app;

/* SIGHUP: the TLS pair again, and the audit log at its path (logrotate moved it). */
static void on_hup(void *ctx)
{
    app *a = ctx;
    if (a->acc.http.tls || !a->audit)
        access_reload(&a->acc);
    if (a->audit) {
        audit_reopen(a->audit);
        log_info("SIGHUP: the audit log is reopened at %s", a->conf.audit_log);
    }
}

/* Opens stsd.auditLog when it is set. Returns 0, or -1 with the reason in a->err. */
static int open_audit(app *a)
{
    if (!a->conf.audit_log || !*a->conf.audit_log)
        return 0;
    audit_settings s = {a->conf.audit_log, a->conf.audit_max_bytes, a->conf.audit_hash, 0};
    a->audit = audit_open(&s, &a->err);
    return a->audit ? 0 : -1;
}

/* --help, --version, --check-journal: the runs that serve nothing. Returns the status. */
static int run_other_action(const app *a)
{
    if (a->cli.action == CONFIG_HELP) {
        fputs(config_usage(), stdout);
        return 0;
    }
    if (a->cli.action == CONFIG_VERSION) {
        printf("stsd %s\n", STSD_VERSION);
        return 0;
    }
    return journal_check(a->cli.check_dir, a->cli.repair);
}

/* Checks the settings, builds the access rules and sets up the signals, before anything
 * is logged: a mistake here goes to stderr. Returns 0, or -1 with the reason written. */
static int prepare(app *a)
{
    if (config_validate(&a->conf, &a->err) != 0 ||
        reply_set_charset(a->conf.charset_response) != 0) {
        fprintf(stderr, "stsd: %s\n", a->err.len ? a->err.data : "bad response charset");
        return -1;
    }
    if (access_setup(&a->conf, &a->acc, &a->err) != 0 || open_audit(a) != 0) {
        fprintf(stderr, "stsd: %s\n", a->err.data ? a->err.data : "out of memory");
        return -1;
    }
    if (pipe2(stop_pipe, O_CLOEXEC) != 0 ||
        install_signals(a->acc.http.tls != NULL || a->audit != NULL) != 0) {
        fprintf(stderr, "stsd: cannot set up signals: %s\n", strerror(errno));
        return -1;
    }
    return 0;
}

/* The lists: the dataset directory, the store, the journal's recovery, the parking lot,
 * then initFileAtStartup. Returns 0, or -1 with the reason logged. */
static int open_state(app *a)
{
    const config *conf = &a->conf;
    stats_start();
    log_json_install(conf->log_json);
    log_info("stsd %s starting", STSD_VERSION);
    /* The port before anything else: a busy one must not cost the wait of a big load. */
    a->listen_fd = http_bind(conf->bind, conf->port, &a->conf.port, &a->err);
    if (a->listen_fd < 0) {
        log_error("%s", a->err.data);
        return -1;
    }
    a->ds = dataset_open(conf->dataset_dir, conf->charset_read, conf->charset_write, &a->err);
    if (!a->ds) {
        log_error("%s", a->err.data);
        return -1;
    }
    dataset_set_stop(a->ds, &stopping);
    store_limits limits = {conf->max_lists, conf->max_bytes, conf->max_keys};
    a->st = store_create(&limits);
    if (!a->st || keys_attach(a->st) != 0 ||
        !(a->barriers = barrier_table_create(conf->max_lists))) {
        log_error("out of memory");
        return -1;
    }
    if (open_journal(conf, &a->cli, a->ds, a->st, &a->j, &a->state_dir) != 0)
        return -1;
    raise_open_files(conf);
    if (!(a->lot = park_lot_create(&a->err))) {
        log_error("%s", a->err.data);
        return -1;
    }
    a->srv = (cmd_server){a->st, a->ds, conf, a->lot, a->j, a->acc.http.auth, a->audit, NULL,
                         a->barriers, NULL};
    /* A replica loads the files when it first comes to lead (app/replica.c). */
    if (conf->cluster_self)
        return 0;
    /* The recovered state wins over the files: they were loaded (and journaled) by an
     * earlier start, and the lists have changed since. */
    if (store_count(a->st) > 0 && conf->init_file_at_startup && *conf->init_file_at_startup)
        log_info("initFileAtStartup skipped: %zu lists were recovered from the journal "
                 "(start with --fresh to load the files again)", store_count(a->st));
    else if (command_init_at_startup(&a->srv) != 0)
        return -1;
    return 0;
}

/* The store's hook of expired leases: the audit log's line (command_audit_expired). */
static void on_lease_expired(void *ctx, const char *name, const char *line, size_t len,
                             uint64_t id, const char *owner, size_t owner_len)
{
    command_audit_expired(ctx, name, line, len, id, owner, owner_len);
}

/* Binds the port, starts the HTTP, journal and lease threads, writes the port file and
 * tells systemd. Returns 0, or -1 with the reason logged. */
static int start_serving(app *a)
{
    config *conf = &a->conf;
    /* Bound in open_state, so that CONFIG shows the port really bound when 0 asked for
     * any; listening only now that the lists are loaded. */
    int fd = a->listen_fd;
    a->listen_fd = -1;  /* http_start takes it, even when it fails */
    if (http_listen_bound(fd, conf->bind, conf->port, &a->err) != 0) {
        log_error("%s", a->err.data);
        close(fd);
        return -1;
    }
    a->rep = (replica){NULL, &a->srv, request_stop, &stopping, 0};
    if (conf->cluster_self && replica_start(&a->rep, a->state_dir.data) != 0) {
        close(fd);
        return -1;
    }
    if (fd < 0 ||
        !(a->http = http_start(conf, &a->srv, &a->acc.http, fd, request_stop, &a->err))) {
        log_error("%s", a->err.data);
        return -1;
    }
    if (a->j && journal_start(a->j, a->st) != 0) {
        log_error("cannot start the journal's threads");
        return -1;
    }
    if (a->audit)
        store_set_expiry_hook(a->st, on_lease_expired, &a->srv);
    if (!(a->leases = lease_timer_start(a->st, &a->err))) {
        log_error("%s", a->err.data);
        return -1;
    }
    log_info("listening on %s port %d%s, dataset directory %s", conf->bind, conf->port,
             a->acc.http.tls ? " (https)" : "", dataset_path(a->ds));
    access_log_start(conf, &a->acc);
    if (conf->port_file && *conf->port_file && write_port_file(conf->port_file, conf->port) != 0) {
        log_error("cannot write the port to %s: %s", conf->port_file, strerror(errno));
        return -1;
    }
    /* Ready: the port accepts connections and the journal has been recovered. */
    if (notify_send("READY=1") < 0)
        log_warn("cannot tell systemd that stsd is ready ($NOTIFY_SOCKET): %s",
                 strerror(errno));
    return 0;
}

/* Serves until STOP, a signal or ENTER; then answers the parked requests and lets the
 * requests in flight finish (up to 5 s). */
static void serve_until_stop(app *a)
{
    int watch_stdin = !a->conf.daemon && isatty(STDIN_FILENO);
    if (watch_stdin && stdin_is_foreground())
        log_info("press ENTER or Ctrl-C to stop");
    else if (watch_stdin)
        log_info("running in the background of the terminal: stop it with STOP or a signal "
                 "(after fg, ENTER stops it)");
    log_urls(&a->conf);
    wait_for_stop(watch_stdin, on_hup, a);
    /* STOP and ENTER come here without the signal handler: readers learn of it now. */
    atomic_store_explicit(&stopping, 1, memory_order_relaxed);
    if (!atomic_load(&a->rep.restart))
        replica_handover(&a->rep);
    if (notify_send("STOPPING=1") < 0)
        log_warn("cannot tell systemd that stsd is stopping: %s", strerror(errno));
    log_info("stopping: answering %zu waiting requests, finishing requests in flight",
             park_lot_count(a->lot));
    if (atomic_load(&a->rep.restart)) {
        journal_cancel_waits(a->j);       /* their changes' outcome is the cluster's now */
        park_lot_shutdown_answer(a->lot, 503, REPLICA_LEADER_CHANGED);
    }
    park_lot_shutdown(a->lot);
    http_stop(a->http, 5000);
    a->http = NULL;
}

/* Frees whatever the run got to, in the reverse order; after a failed start too. */
static void shut_down(app *a, int status)
{
    park_lot_shutdown(a->lot);
    http_stop(a->http, 0);
    lease_timer_stop(a->leases);
    /* No request is running any more: raft stops before the journal it writes into. */
    replica_stop(&a->rep);
    park_lot_free(a->lot);
    if (a->listen_fd >= 0)       /* a start that failed between the bind and the listen */
        close(a->listen_fd);
    /* No request is running any more: what the audit log holds goes to its file. */
    audit_close(a->audit);
    a->audit = NULL;
    /* No request is running any more: the last records get flushed and fsynced. */
    if (a->j) {
        journal_attach(NULL, a->st);
        journal_close(a->j);
    }
    if (status == 0 && a->cli.action == CONFIG_RUN)
        log_info("stopped");
    access_free(&a->acc);
    store_free(a->st);
    barrier_table_free(a->barriers);
    dataset_close(a->ds);
    rx_shutdown();
    stats_shutdown();
    metrics_shutdown();
    config_free(&a->conf);
    buf_free(&a->err);
    buf_free(&a->state_dir);
}

int main(int argc, char **argv)
{
    app a = {.cli = {CONFIG_RUN, 0, 0, NULL}, .err = BUF_INIT, .acc = ACCESS_RULES_INIT,
             .state_dir = BUF_INIT, .listen_fd = -1};
    int status = 1;
    if (config_defaults(&a.conf) != 0) {
        fprintf(stderr, "stsd: out of memory\n");
        return 1;
    }
    if (config_from_args(&a.conf, argc, argv, &a.cli, &a.err) != 0) {
        fprintf(stderr, "stsd: %s\nTry 'stsd --help'.\n", a.err.data);
    } else if (a.cli.action != CONFIG_RUN) {
        status = run_other_action(&a);
    } else if (prepare(&a) == 0 && open_state(&a) == 0 && start_serving(&a) == 0) {
        serve_until_stop(&a);
        status = 0;
    } else if (atomic_load(&stopping)) {
        /* SIGTERM during the start (initFileAtStartup cut short): a stop, not a failure. */
        log_info("stopping during the start: asked for before the server was ready");
        status = 0;
    }
    int restart = atomic_load(&a.rep.restart);
    shut_down(&a, status);
    if (restart) {
        /* Deposed: the same program and arguments again, as a follower (app/replica.c). */
        log_info("restarting");
        execv("/proc/self/exe", argv);
        log_error("cannot restart: %s", strerror(errno));
        return 1;
    }
    return status;
}
