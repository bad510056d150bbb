/* SPDX-License-Identifier: Apache-2.0 */
/* bench-columns.c - FIND COLUMN= and ADD UNIQUE=column on the list engine, by list size:
 * the column index's build, then lookups that stay flat from 1,000 to 10M lines, beside
 * a scan of the same column for scale. `make bench-columns`. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/csv.h"
#include "list/list.h"
#include "bench_util.h"

#define LOOKUPS 200000
#define SCANS 3


static void die(const char *what)
{
    fprintf(stderr, "bench-columns: %s failed\n", what);
    exit(1);
}

/* "u<i>,p<i>,<i % 100>": the login column is unique, as a users file's is. */
static size_t user(char *out, size_t outlen, size_t i)
{
    return (size_t)snprintf(out, outlen, "u%zu,p%zu,%zu", i, i, i % 100);
}

static list *build(size_t n)
{
    char s[64];
    list *l = list_create();
    if (!l)
        die("list_create");
    for (size_t i = 0; i < n; i++)
        if (list_push_back(l, s, user(s, sizeof s, i)) < 0)
            die("list_push_back");
    const char *names[] = {"login", "pass", "group"};
    size_t lens[] = {5, 4, 5};
    if (list_set_columns(l, names, lens, 3, ',') != 0)
        die("list_set_columns");
    return l;
}

typedef struct scan_ctx {
    const char *v;
    size_t vlen;
} scan_ctx;

static int login_is(const char *s, size_t len, void *ctx)
{
    const scan_ctx *c = ctx;
    csv_field f;
    return csv_get(s, len, ',', 0, &f) == 0 && csv_field_eq(&f, c->v, c->vlen);
}

int main(int argc, char **argv)
{
    static const size_t sizes[] = {1000, 100000, 1000000, 10000000};
    size_t nsizes = argc > 1 ? (size_t)atoi(argv[1]) : 4;
    char s[64];
    if (nsizes < 1 || nsizes > 4)
        nsizes = 4;
    printf("%-10s %12s %14s %16s %16s %14s\n", "lines", "build ms", "index ms",
           "FIND COLUMN ns", "ADD UNIQUE ns", "scan ns");
    for (size_t z = 0; z < nsizes; z++) {
        size_t n = sizes[z];
        double t0 = bench_now();
        list *l = build(n);
        double t1 = bench_now();
        if (list_find_column(l, 0, "absent", 6) != -1)       /* builds the index */
            die("first lookup");
        double t2 = bench_now();
        /* FIND COLUMN=login KEEP=TRUE: the position, then the line to the tail. */
        for (size_t i = 0; i < LOOKUPS; i++) {
            size_t len = user(s, sizeof s, bench_below(n));
            ssize_t pos = list_find_column(l, 0, s, (size_t)(strchr(s, ',') - s));
            if (pos < 0 || list_move_to_back(l, (size_t)pos) != 0)
                die("FIND COLUMN");
            (void)len;
        }
        double t3 = bench_now();
        /* ADD UNIQUE=login of a new login: the lookup, then the push. */
        for (size_t i = 0; i < LOOKUPS; i++) {
            size_t len = user(s, sizeof s, n + i);
            if (list_contains_column(l, 0, s, (size_t)(strchr(s, ',') - s)) != 0 ||
                list_push_back(l, s, len) != 0)
                die("ADD UNIQUE");
        }
        double t4 = bench_now();
        /* What FIND COLUMN would cost without its index: a scan to a random line. */
        for (size_t i = 0; i < SCANS; i++) {
            user(s, sizeof s, bench_below(n));
            scan_ctx c = {s, (size_t)(strchr(s, ',') - s)};
            if (list_scan(l, login_is, &c) < 0)
                die("scan");
        }
        double t5 = bench_now();
        printf("%-10zu %12.1f %14.1f %16.0f %16.0f %14.0f\n", n, (t1 - t0) * 1e3,
               (t2 - t1) * 1e3, (t3 - t2) / LOOKUPS * 1e9, (t4 - t3) / LOOKUPS * 1e9,
               (t5 - t4) / SCANS * 1e9);
        fflush(stdout);
        list_free(l);
    }
    return 0;
}
