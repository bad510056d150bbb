/* ctl_top.c - `stsctl top` in plain ANSI escape codes: STATUS's JSON (lines, on loan,
 * waiters, in/s, out/s, time to empty) redrawn each second on the alternate screen; the
 * terminal in non-canonical mode so that a single q quits. */
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

#include "ctl_json.h"
#include "ctl_out.h"

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
    fputs("\033[?25h\033[?1049l", stdout);   /* cursor back, main screen back */
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
    fputs("\033[?1049h\033[?25l", stdout);   /* alternate screen, cursor hidden */
}

/* The screen's rows (24 when unknown). */
static int rows(void)
{
    struct winsize w;
    return ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_row > 0 ? w.ws_row : 24;
}

/* One frame: the title, then the table cut to the screen. */
static void draw(const ctl_conn *c, const char *table, size_t len, const char *error)
{
    char when[32];
    time_t now = time(NULL);
    strftime(when, sizeof when, "%H:%M:%S", localtime(&now));
    fputs("\033[H\033[2J", stdout);
    printf("stsctl top - %s - %s - q quits\n\n", c->url, when);
    if (error) {
        printf("%s\n", error);
        fflush(stdout);
        return;
    }
    int room = rows() - 3, shown = 0, total = 0;
    for (size_t i = 0; i < len; i++)
        total += table[i] == '\n';
    const char *p = table, *end = table + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (shown == room - 1 && total - shown > 1) {
            printf("... %d more lists\n", total - shown);
            break;
        }
        printf("%.*s\n", (int)l, p);
        shown++;
        p += l + 1;
    }
    fflush(stdout);
}

/* STATUS as the table ctl_print writes for a terminal, into *out (malloc'd). Returns 0,
 * or -1 with error filled. */
static int fetch(const ctl_conn *c, char **out, size_t *len, char *error, size_t n)
{
    ctl_answer a;
    *out = NULL;
    if (ctl_request(c, "STATUS", "FORMAT=JSON", 0, NULL, 0, &a) != 0) {
        snprintf(error, n, "cannot reach the server: %.400s", a.error);
        ctl_answer_free(&a);
        return -1;
    }
    cj *v = cj_parse(a.body.data ? a.body.data : "", a.body.len);
    const cj *ok = cj_get(v, "ok"), *err = cj_get(v, "error");
    int rc = -1;
    if (!ok || ok->type != CJ_BOOL || !ok->b) {
        snprintf(error, n, "HTTP %ld: %.400s", a.status,
                 err && err->type == CJ_STRING ? err->s : "not an answer of stsd");
    } else {
        FILE *f = open_memstream(out, len);
        if (f) {
            ctl_print(f, v, 1);
            rc = fclose(f) == 0 ? 0 : -1;
        }
        if (rc != 0)
            snprintf(error, n, "out of memory");
    }
    cj_free(v);
    ctl_answer_free(&a);
    return rc;
}

int ctl_top_run(const ctl_conn *c)
{
    if (!isatty(STDOUT_FILENO)) {
        fputs("stsctl: top needs a terminal (for scripts: stsctl status)\n", stderr);
        return 2;
    }
    char error[512];
    char *table;
    size_t len;
    if (fetch(c, &table, &len, error, sizeof error) != 0) {
        fprintf(stderr, "stsctl: %s\n", error);
        free(table);
        return 3;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    term_raw();
    int failed = 0, in_fd = STDIN_FILENO;
    while (!stop) {
        draw(c, table, len, failed ? error : NULL);
        free(table);
        table = NULL;
        /* A second, or less when a key comes: q quits, anything else redraws. */
        struct pollfd pf = {in_fd, POLLIN, 0};
        int r = poll(&pf, 1, 1000);
        if (r > 0) {
            char ch;
            ssize_t got = read(STDIN_FILENO, &ch, 1);
            if (got == 1 && (ch == 'q' || ch == 'Q'))
                break;
            if (got <= 0)   /* stdin closed: keep the pace on the clock alone */
                in_fd = -1;
        } else if (r < 0 && errno != EINTR) {
            break;
        }
        failed = fetch(c, &table, &len, error, sizeof error) != 0;
    }
    free(table);
    term_restore();
    return 0;
}
