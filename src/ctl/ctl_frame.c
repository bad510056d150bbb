/* SPDX-License-Identifier: Apache-2.0 */
/* ctl_frame.c - the tables of `stsctl top`: a cluster node's view of the cluster, lists,
 * keys, barriers and ONCE's runs, cut to the screen's rows and columns, each name and
 * value a cell made safe for a terminal (ctl_cell). */
#include "ctl_frame.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_out.h"

#define NAME_WIDTH 32       /* the name column of every table, as STATUS's */
#define KEY_FIXED 60        /* a key's row without its value: name, counts, blanks */
#define VALUE_MIN 8
#define VALUE_MAX 1024

#define BOLD "\033[1m"
#define DIM "\033[2m"
#define PLAIN "\033[0m"

/* One section of the frame: its rows are the items of an array of the answers. */
typedef struct section {
    const char *what;                       /* "keys": "no keys", "... 3 more keys" */
    const cj *items;                        /* NULL: error says why */
    const char *error;
    void (*head)(FILE *out, int cols);      /* the header row, no newline */
    void (*row)(FILE *out, const cj *item, int cols);
} section;

/* A string member of item as a cell ("-" when it has none). */
static void member_cell(char *out, size_t cap, const cj *item, const char *key, int width)
{
    const cj *v = cj_get(item, key);
    if (v && v->type == CJ_STRING)
        ctl_cell(out, cap, v->s, v->len, width, 1);
    else
        ctl_cell(out, cap, "-", 1, width, 1);
}

static const char *num(const cj *item, const char *key)
{
    const cj *v = cj_get(item, key);
    return v && v->type == CJ_NUMBER ? v->s : "-";
}

/* One dim line of printf text, made safe and cut to the width. */
static void dim(FILE *out, int cols, const char *fmt, ...)
{
    char text[512], cell[4 * sizeof text + 1];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    int width = cols < (int)sizeof text ? cols : (int)sizeof text;
    ctl_cell(cell, sizeof cell, text, strlen(text), width, 0);
    fprintf(out, DIM "%s" PLAIN "\n", cell);
}

static void list_head(FILE *out, int cols)
{
    ctl_status_head(out);
}

static void list_row(FILE *out, const cj *l, int cols)
{
    char name[4 * NAME_WIDTH + 1];
    member_cell(name, sizeof name, l, "name", NAME_WIDTH);
    ctl_status_row(out, name, l);
}

/* The value column takes what the other columns leave of the screen's width. */
static int value_width(int cols)
{
    int w = cols - KEY_FIXED;
    return w < VALUE_MIN ? VALUE_MIN : w > VALUE_MAX ? VALUE_MAX : w;
}

static void key_head(FILE *out, int cols)
{
    fprintf(out, "%-*s %-*s %8s %8s %8s", NAME_WIDTH, "KEY", value_width(cols), "VALUE",
            "VERSION", "WATCHERS", "WAITERS");
}

/* A key's value cell: "value", or the bytes of "value_base64" (a value that is not
 * UTF-8), which the cell shows with a '?' for each byte that is not. */
static void value_cell(char *out, size_t cap, const cj *k, int width)
{
    const cj *b = cj_get(k, "value_base64");
    char *bytes = NULL;
    size_t len = 0;
    FILE *f;
    if (!b || b->type != CJ_STRING || !(f = open_memstream(&bytes, &len))) {
        member_cell(out, cap, k, "value", width);
        return;
    }
    int bad = ctl_put_base64(f, b->s, b->len) != 0;
    if (fclose(f) != 0 || bad)
        ctl_cell(out, cap, "-", 1, width, 1);
    else
        ctl_cell(out, cap, bytes, len, width, 1);
    free(bytes);
}

static void key_row(FILE *out, const cj *k, int cols)
{
    char name[4 * NAME_WIDTH + 1], value[4 * VALUE_MAX + 1];
    member_cell(name, sizeof name, k, "name", NAME_WIDTH);
    value_cell(value, sizeof value, k, value_width(cols));
    fprintf(out, "%s %s %8s %8s %8s", name, value, num(k, "version"), num(k, "watchers"),
            num(k, "waiters"));
}

static void barrier_head(FILE *out, int cols)
{
    fprintf(out, "%-*s %9s %10s", NAME_WIDTH, "BARRIER", "ARRIVED", "GENERATION");
}

static void barrier_row(FILE *out, const cj *b, int cols)
{
    char name[4 * NAME_WIDTH + 1], arrived[64];
    member_cell(name, sizeof name, b, "name", NAME_WIDTH);
    snprintf(arrived, sizeof arrived, "%.30s/%.30s", num(b, "arrived"), num(b, "parties"));
    fprintf(out, "%s %9s %10s", name, arrived, num(b, "generation"));
}

static void run_head(FILE *out, int cols)
{
    fprintf(out, "%-*s %9s %8s", NAME_WIDTH, "RUN", "ENDS IN", "WAITING");
}

/* A run's lease left, in the form of a list's time to empty ("0s" past its deadline). */
static void run_row(FILE *out, const cj *r, int cols)
{
    char name[4 * NAME_WIDTH + 1], ends[32] = "-";
    member_cell(name, sizeof name, r, "name", NAME_WIDTH);
    const cj *ms = cj_get(r, "expires_in_ms");
    if (ms && ms->type == CJ_NUMBER)
        ctl_seconds(ends, sizeof ends, strtod(ms->s, NULL) / 1000);
    fprintf(out, "%s %9s %8s", name, ends, num(r, "waiters"));
}

/* text[0..len) as one line cut to the width (bold, or plain), made safe. */
static void put_cut(FILE *out, const char *text, size_t len, int cols, int bold)
{
    char cell[4 * 512 + 1];
    ctl_cell(cell, sizeof cell, text, len, cols < 512 ? cols : 512, 0);
    fprintf(out, bold ? BOLD "%s" PLAIN "\n" : "%s\n", cell);
}

/* One row of s (the header when item is NULL) cut to the width: the row is drawn in a
 * buffer first, since a line wider than the screen would otherwise be the terminal's to
 * cut (it does not wrap) and its last column overwritten. */
static void put_row(FILE *out, const section *s, const cj *item, int cols)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m)
        return (void)fputc('\n', out);
    if (item)
        s->row(m, item, cols);
    else
        s->head(m, cols);
    if (fclose(m) == 0)
        put_cut(out, text, len, cols, !item);
    else
        fputc('\n', out);
    free(text);
}

/* One line of CLUSTER's section, drawn by ctl_out into a buffer, then cut to the width:
 * the line under the rows when line is set (dim), else node's row, or the header (bold)
 * when node is NULL. */
static void cluster_put(FILE *out, const cj *c, const cj *node, int line, int cols)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m)
        return (void)fputc('\n', out);
    if (line)
        ctl_cluster_line(m, c);
    else if (node)
        ctl_cluster_row(m, c, node);
    else
        ctl_cluster_head(m);
    if (fclose(m) != 0)
        fputc('\n', out);
    else if (line)
        dim(out, cols, "%.*s", (int)(len < 500 ? len : 500), text);
    else
        put_cut(out, text, len, cols, !node);
    free(text);
}

/* CLUSTER's section in room lines: the header, a row per node and the line under them;
 * when they do not all fit, that line alone. Returns the lines written. */
static int cluster_draw(FILE *out, const cj *c, int room, int cols)
{
    const cj *nodes = cj_get(c, "nodes");
    size_t n = nodes && nodes->type == CJ_ARRAY ? nodes->n : 0;
    if (n + 2 > (size_t)room) {
        cluster_put(out, c, NULL, 1, cols);
        return 1;
    }
    cluster_put(out, c, NULL, 0, cols);
    for (size_t i = 0; i < n; i++)
        cluster_put(out, c, nodes->items[i], 0, cols);
    cluster_put(out, c, NULL, 1, cols);
    return (int)n + 2;
}

/* Draws s in at most room lines (room >= 1): all of it when it fits, else the header,
 * the rows that fit and "... N more". Returns the lines written. */
static int section_draw(FILE *out, const section *s, int room, int cols)
{
    if (!s->items || s->items->type != CJ_ARRAY) {
        const char *why = s->error && *s->error ? s->error : "not an answer of stsd";
        dim(out, cols, "%s: %s", s->what, why);
        return 1;
    }
    size_t n = s->items->n, shown = n;
    if (n == 0) {
        dim(out, cols, "no %s", s->what);
        return 1;
    }
    if (n + 1 > (size_t)room) {
        if (room < 3) {
            dim(out, cols, "%s: %zu, not shown", s->what, n);
            return 1;
        }
        shown = (size_t)room - 2;
    }
    put_row(out, s, NULL, cols);
    for (size_t i = 0; i < shown; i++)
        put_row(out, s, s->items->items[i], cols);
    if (shown < n)
        dim(out, cols, "... %zu more %s", n - shown, s->what);
    return (int)shown + 1 + (shown < n);
}

int ctl_frame_cluster(FILE *out, const cj *cluster, int rows, int cols)
{
    if (rows < 1)
        return 0;
    int used = cluster_draw(out, cluster, rows, cols);
    if (rows - used < 2)            /* a blank line and nothing under it */
        return used;
    fputc('\n', out);
    return used + 1;
}

int ctl_frame_draw(FILE *out, const ctl_frame *f, int rows, int cols)
{
    const section all[] = {
        {"lists", f->lists, f->lists_error, list_head, list_row},
        {"keys", f->keys, f->keys_error, key_head, key_row},
        {"barriers", f->barriers, f->barriers_error, barrier_head, barrier_row},
        {"runs", f->runs, f->runs_error, run_head, run_row},
    };
    int used = f->cluster ? ctl_frame_cluster(out, f->cluster, rows, cols) : 0;
    if (f->cluster && used >= rows)
        return used;
    for (size_t i = 0; i < sizeof all / sizeof all[0] && used < rows; i++) {
        if (i > 0) {
            if (rows - used < 2)    /* a blank line and nothing under it */
                break;
            fputc('\n', out);
            used++;
        }
        used += section_draw(out, &all[i], rows - used, cols);
    }
    return used;
}
