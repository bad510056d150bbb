/* SPDX-License-Identifier: Apache-2.0 */
/* ctl_top.c - `stsctl top`: the lists (STATUS), keys (KEYS), barriers (BARRIERS) and
 * ONCE's runs (RUNS), and on a cluster node the nodes (CLUSTER), redrawn each second in
 * plain ANSI escape codes on the alternate screen, the terminal in non-canonical mode so
 * that a single q quits. STATUS must answer at the start; the others may fail (a server
 * from before them) and their sections say so, but for CLUSTER, whose KO (a lone stsd)
 * draws nothing. The tables: ctl_frame. */
#include "ctl_top.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "ctl_frame.h"
#include "ctl_json.h"
#include "ctl_out.h"

/* One round of answers: the parsed documents (NULL when not had) and why not. */
typedef struct top_docs {
    cj *status, *keys, *barriers, *runs, *cluster;
    char error[512], keys_error[512], barriers_error[512], runs_error[512], cluster_error[512];
} top_docs;

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    stop = sig;
}

static struct termios saved;
static int raw_on;

static void term_restore(void)
{
    if (raw_on)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved);
    raw_on = 0;
    /* cursor back, lines wrap again, main screen back */
    fputs("\033[?25h\033[?7h\033[?1049l", stdout);
    fflush(stdout);
}

static void term_raw(void)
{
    if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0) {
        struct termios t = saved;
        t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
        t.c_cc[VMIN] = 0;
        t.c_cc[VTIME] = 0;
        raw_on = tcsetattr(STDIN_FILENO, TCSAFLUSH, &t) == 0;
    }
    /* Alternate screen, cursor hidden, no wrapping: a line wider than the screen is cut
     * by the terminal instead of taking two rows that the frame did not count. */
    fputs("\033[?1049h\033[?25l\033[?7l", stdout);
}

/* The screen's rows and columns (24 x 80 when unknown). */
static void screen_size(int *rows, int *cols)
{
    struct winsize w;
    int known = ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0;
    *rows = known && w.ws_row > 0 ? w.ws_row : 24;
    *cols = known && w.ws_col > 0 ? w.ws_col : 80;
}

/* command?FORMAT=JSON's answer into *doc (free with cj_free). Returns 0 when the server
 * answered OK (error empty), else -1 with *doc NULL and error filled. */
static int fetch(const ctl_conn *c, const char *command, cj **doc, char *error, size_t n)
{
    ctl_answer a;
    *doc = NULL;
    *error = '\0';
    if (ctl_request(c, command, "FORMAT=JSON", 0, NULL, 0, &a) != 0) {
        snprintf(error, n, "cannot reach the server: %.400s", a.error);
        ctl_answer_free(&a);
        return -1;
    }
    cj *v = cj_parse(a.body.data ? a.body.data : "", a.body.len);
    const cj *ok = cj_get(v, "ok"), *err = cj_get(v, "error");
    if (ok && ok->type == CJ_BOOL && ok->b) {
        *doc = v;
    } else {
        snprintf(error, n, "HTTP %ld: %.400s", a.status,
                 err && err->type == CJ_STRING ? err->s : "not an answer of stsd");
        cj_free(v);
    }
    ctl_answer_free(&a);
    return *doc ? 0 : -1;
}

static void docs_free(top_docs *d)
{
    cj_free(d->status);
    cj_free(d->keys);
    cj_free(d->barriers);
    cj_free(d->runs);
    cj_free(d->cluster);
    d->status = d->keys = d->barriers = d->runs = d->cluster = NULL;
}

/* One round: CLUSTER (answered by the node asked, also while a cluster has no leader and
 * STATUS fails), STATUS, then KEYS, BARRIERS and RUNS unless STATUS failed. Returns
 * STATUS's 0 or -1 (d->error says why); the others' failures are only their errors. */
static int fetch_all(const ctl_conn *c, top_docs *d)
{
    docs_free(d);
    fetch(c, "CLUSTER", &d->cluster, d->cluster_error, sizeof d->cluster_error);
    if (fetch(c, "STATUS", &d->status, d->error, sizeof d->error) != 0)
        return -1;
    fetch(c, "KEYS", &d->keys, d->keys_error, sizeof d->keys_error);
    fetch(c, "BARRIERS", &d->barriers, d->barriers_error, sizeof d->barriers_error);
    fetch(c, "RUNS", &d->runs, d->runs_error, sizeof d->runs_error);
    return 0;
}

/* One frame: the title, the cluster (on a cluster node), then STATUS's error or the tables,
 * cut to the screen. */
static void draw(const ctl_conn *c, const top_docs *d)
{
    char when[32];
    int rows, cols;
    time_t now = time(NULL);
    strftime(when, sizeof when, "%H:%M:%S", localtime(&now));
    screen_size(&rows, &cols);
    fputs("\033[H\033[2J", stdout);
    printf("stsctl top - %s - %s - q quits\n\n", c->url, when);
    if (!d->status) {
        char cell[4 * sizeof d->error + 1];
        if (d->cluster)
            ctl_frame_cluster(stdout, d->cluster, rows - 4, cols);
        ctl_cell(cell, sizeof cell, d->error, strlen(d->error), cols, 0);
        printf("%s\n", cell);
    } else {
        ctl_frame f = {cj_get(d->status, "lists"), cj_get(d->keys, "keys"),
                       cj_get(d->barriers, "barriers"), cj_get(d->runs, "runs"), d->error,
                       d->keys_error, d->barriers_error, d->runs_error, d->cluster};
        /* The title's two lines, and the last row left empty: a newline there scrolls. */
        ctl_frame_draw(stdout, &f, rows - 3, cols);
    }
    fflush(stdout);
}

static void on_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

/* Waits a second, or less when a key comes. Returns 1 for q, 0 to redraw. *in_fd becomes
 * -1 once stdin is closed: the pace is then the clock's alone. */
static int wait_key(int *in_fd)
{
    struct pollfd pf = {*in_fd, POLLIN, 0};
    int r = poll(&pf, 1, 1000);
    if (r > 0) {
        char ch;
        ssize_t got = read(STDIN_FILENO, &ch, 1);
        if (got == 1 && (ch == 'q' || ch == 'Q'))
            return 1;
        if (got <= 0)
            *in_fd = -1;
    } else if (r < 0 && errno != EINTR) {
        return 1;
    }
    return 0;
}

int ctl_top_run(const ctl_conn *c)
{
    if (!isatty(STDOUT_FILENO)) {
        fputs("stsctl: top needs a terminal (for scripts: stsctl status)\n", stderr);
        return 2;
    }
    top_docs d = {0};
    if (fetch_all(c, &d) != 0) {
        fprintf(stderr, "stsctl: %s\n", d.error);
        docs_free(&d);
        return 3;
    }
    on_signals();
    term_raw();
    int in_fd = STDIN_FILENO;
    while (!stop) {
        draw(c, &d);
        if (wait_key(&in_fd))
            break;
        fetch_all(c, &d);
    }
    docs_free(&d);
    term_restore();
    return 0;
}
