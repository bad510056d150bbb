/* SPDX-License-Identifier: Apache-2.0 */
/* test_faults.c - stsd with fsync=always when the disk fails or is slow under it:
 *  - fsync/fdatasync fail for 2 s (tests/proto/failsync.c, preloaded, also cuts each file
 *    back to its last good sync) under 8 concurrent writers: no OK goes out for a change
 *    that is not on disk, changes are refused meanwhile, writes resume by themselves
 *    after, and after kill -9 (during the fault, and after it) every OK'd line is there
 *    and no refused one;
 *  - a full file system (a small tmpfs; needs root, else skipped): changes get "Journal
 *    not writable", reads go on, writes resume by themselves once there is room, and
 *    after kill -9 every OK'd line is there;
 *  - a slow disk (each fsync 1 s) and a single worker thread: changes waiting for their
 *    fsync (ADD, READ with a lease, ACK, RELEASE) hold no thread, so a LENGTH on another
 *    connection is answered meanwhile. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "testlib.h"

#define WRITERS 8
#define MAX_IDS 200000

enum { NONE, SENT, OK, REFUSED, CUT };   /* CUT: no answer (the kill) */

static struct rec {
    atomic_int state;
    int64_t sent_ns, answered_ns;
} ids[MAX_IDS];
static atomic_int next_id, stop_writers, bad_answers;
static int port;
static char ko_journal[256], ok_page[256];

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void *writer(void *arg)
{
    http_conn c;
    char target[128];
    if (http_conn_open(&c, port) != 0)
        return NULL;
    while (!atomic_load(&stop_writers)) {
        int id = atomic_fetch_add(&next_id, 1);
        if (id >= MAX_IDS)
            break;
        snprintf(target, sizeof target, "/sts/ADD?FILENAME=q.csv&LINE=id%d&ADD_MODE=LAST", id);
        ids[id].sent_ns = now_ns();
        atomic_store(&ids[id].state, SENT);
        http_reply r;
        if (http_conn_get(&c, target, &r) != 0) {
            atomic_store(&ids[id].state, CUT);
            td_sleep_ms(20);            /* killed: the next call reconnects, or fails */
            continue;
        }
        ids[id].answered_ns = now_ns();
        if (strcmp(r.body, ok_page) == 0) {
            atomic_store(&ids[id].state, OK);
        } else if (strcmp(r.body, ko_journal) == 0) {
            atomic_store(&ids[id].state, REFUSED);
        } else {
            fprintf(stderr, "ADD id%d: %s\n", id, r.body);
            atomic_fetch_add(&bad_answers, 1);
        }
        http_reply_free(&r);
    }
    http_conn_close(&c);
    return NULL;
}

static void start_writers(pthread_t *t, int p)
{
    port = p;
    atomic_store(&stop_writers, 0);
    for (int i = 0; i < WRITERS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, writer, NULL), 0);
}

static void stop_all(pthread_t *t)
{
    atomic_store(&stop_writers, 1);
    for (int i = 0; i < WRITERS; i++)
        pthread_join(t[i], NULL);
}

/* How many times each id is in list q now; the list must exist. */
static unsigned char *list_now(daemon_proc *d)
{
    int exists;
    unsigned char *count = td_saved_id_counts(d, "q.csv", MAX_IDS, &exists);
    assert_non_null(count);
    assert_true(exists);
    return count;
}

/* After a restart: every OK'd id is there once, no refused one, no unknown one. */
static void check_list(daemon_proc *d, const char *when)
{
    unsigned char *count = list_now(d);
    int n = atomic_load(&next_id), ok = 0, refused = 0, cut = 0, lost = 0, ghost = 0, dup = 0;
    int kept = 0;
    for (int id = 0; id < MAX_IDS; id++) {
        int s = id < n ? atomic_load(&ids[id].state) : NONE;
        dup += count[id] > 1;
        if (s == OK) {
            ok++;
            lost += count[id] == 0;
        } else if (s == REFUSED) {
            refused++;
            ghost += count[id] > 0;
        } else if (s == CUT || s == SENT) {
            cut++;
            kept += count[id] > 0;
            /* Settled now: later checks count it by what the restart found. */
            atomic_store(&ids[id].state, count[id] ? OK : REFUSED);
        } else {
            ghost += count[id] > 0;
        }
    }
    fprintf(stderr, "%s: %d OK'd (%d missing), %d refused (%d there), %d unanswered (%d "
            "there), %d duplicated\n", when, ok, lost, refused, ghost, cut, kept, dup);
    assert_int_equal(lost, 0);
    assert_int_equal(ghost, 0);
    assert_int_equal(dup, 0);
    free(count);
}

static int64_t read_first_failure(const char *flag)
{
    char path[600];
    long long t = 0;
    snprintf(path, sizeof path, "%s.first", flag);
    FILE *f = fopen(path, "r");
    if (f) {
        if (fscanf(f, "%lld", &t) != 1)
            t = 0;
        fclose(f);
        unlink(path);
    }
    return t;
}

static void set_flag(const char *flag, int on)
{
    if (on) {
        FILE *f = fopen(flag, "w");
        assert_non_null(f);
        fclose(f);
    } else {
        assert_int_equal(unlink(flag), 0);
    }
}

/* Starts stsd (fsync=always) with the shim preloaded; flag is where it looks. */
static void start_with_shim(daemon_proc *d, const char *flag, const char **args)
{
    assert_int_equal(td_start_failsync(d, flag, args), 0);
}

/* OKs received before to for changes sent after from, the first failed sync: none of
 * them can be on disk. (Changes sent before it may have been synced before it; whether
 * an OK'd one is on disk is what the kill -9 checks tell.) */
static int oks_during(int64_t from, int64_t to)
{
    int n = 0, last = atomic_load(&next_id);
    for (int id = 0; id < last && id < MAX_IDS; id++)
        if (atomic_load(&ids[id].state) == OK && ids[id].sent_ns > from &&
            ids[id].answered_ns < to) {
            if (n++ < 5)
                fprintf(stderr, "id%d answered OK %.1f ms into the fault (sent %.1f ms "
                        "before it)\n", id, (double)(ids[id].answered_ns - from) / 1e6,
                        (double)(from - ids[id].sent_ns) / 1e6);
        }
    return n;
}

/* The first OK answered after t, in ms after t (-1: none). */
static double first_ok_after(int64_t t)
{
    int64_t best = -1;
    int last = atomic_load(&next_id);
    for (int id = 0; id < last && id < MAX_IDS; id++)
        if (atomic_load(&ids[id].state) == OK && ids[id].answered_ns > t &&
            (best < 0 || ids[id].answered_ns < best))
            best = ids[id].answered_ns;
    return best < 0 ? -1 : (double)(best - t) / 1e6;
}

static void test_fsync_failure(void **s)
{
    daemon_proc d;
    pthread_t t[WRITERS];
    char flag[400], so[400];
    const char *args[] = {"--journal=on", "-Dstsd.journal.fsync=always", so, NULL};
    page_ko(ko_journal, sizeof ko_journal, "Journal not writable, changes refused !");
    page_ok(ok_page, sizeof ok_page, "");
    assert_int_equal(td_mkdirs(&d), 0);
    snprintf(flag, sizeof flag, "%s/failsync.on", d.dir);
    snprintf(so, sizeof so, "--state-dir=%s/state", d.dir);

    /* 1. The disk fails and stsd is killed before it comes back: nothing OK'd since the
     *    last good sync may be missing, although the log lost its unsynced tail. */
    start_with_shim(&d, flag, args);
    start_writers(t, d.port);
    td_sleep_ms(500);
    set_flag(flag, 1);
    int64_t on = now_ns();
    td_sleep_ms(1500);
    int64_t first = read_first_failure(flag);
    assert_true(first > 0);
    int during = oks_during(first, now_ns());
    assert_int_equal(td_stop(&d, 1), 128 + SIGKILL);
    stop_all(t);
    set_flag(flag, 0);
    fprintf(stderr, "fault 1: first failed sync %.1f ms after the flag; %d OKs during it\n",
            (double)(first - on) / 1e6, during);
    assert_int_equal(during, 0);
    assert_int_equal(td_start(&d, args), 0);
    check_list(&d, "after kill -9 during the fault");
    assert_int_equal(td_stop(&d, 0), 0);

    /* 2. The disk fails for 2 s and comes back: refusals meanwhile, the held answers and
     *    then new changes accepted by themselves, and all of it on disk. */
    start_with_shim(&d, flag, args);
    start_writers(t, d.port);
    td_sleep_ms(500);
    set_flag(flag, 1);
    td_sleep_ms(1000);
    /* The writers all wait for their held answers; another client is refused, and
     * reads go on. */
    http_reply r;
    assert_int_equal(http_get(d.port, "/sts/ADD?FILENAME=q.csv&LINE=probe", &r), 0);
    assert_string_equal(r.body, ko_journal);
    http_reply_free(&r);
    assert_int_equal(http_get(d.port, "/sts/LENGTH?FILENAME=q.csv", &r), 0);
    assert_non_null(strstr(r.body, "<title>OK</title>"));
    http_reply_free(&r);
    td_sleep_ms(1000);
    set_flag(flag, 0);
    int64_t off = now_ns();
    first = read_first_failure(flag);
    assert_true(first > 0);
    td_sleep_ms(2500);
    stop_all(t);
    during = oks_during(first, off);
    double resumed = first_ok_after(off);
    fprintf(stderr, "fault 2: %d OKs during the fault, first OK %.0f ms after the disk came "
            "back\n", during, resumed);
    assert_int_equal(during, 0);
    assert_true(resumed >= 0 && resumed < 2500);
    assert_int_equal(atomic_load(&bad_answers), 0);
    assert_int_equal(td_stop(&d, 1), 128 + SIGKILL);
    assert_int_equal(td_start(&d, args), 0);
    check_list(&d, "after kill -9 once recovered");
    assert_int_equal(td_stop(&d, 0), 0);
    td_cleanup(&d);
}

/* ---- a full file system -------------------------------------------------------------------- */

static int sh(const char *fmt, ...)
{
    char cmd[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void expect_page(int p, const char *target, const char *want_sub)
{
    http_reply r;
    assert_int_equal(http_get(p, target, &r), 0);
    if (!strstr(r.body, want_sub))
        fprintf(stderr, "%s: %s\n", target, r.body);
    assert_non_null(strstr(r.body, want_sub));
    http_reply_free(&r);
}

static char mnt[300];       /* the tmpfs, while mounted */

/* Unmounts the tmpfs even when the test failed half way. */
static int unmount_teardown(void **s)
{
    if (mnt[0])
        sh("umount -l '%s' 2>/dev/null", mnt);
    mnt[0] = '\0';
    return 0;
}

static void test_disk_full(void **s)
{
    daemon_proc d;
    char so[400], target[5000], line[4001];
    const char *args[] = {"--journal=on", "-Dstsd.journal.fsync=always", so, NULL};
    if (geteuid() != 0) {
        print_message("skipped: test_disk_full: mounting a small tmpfs needs root\n");
        skip();
    }
    assert_int_equal(td_mkdirs(&d), 0);
    snprintf(mnt, sizeof mnt, "%s/full", d.dir);
    assert_int_equal(mkdir(mnt, 0700), 0);
    if (sh("mount -t tmpfs -o size=3m stsd-test-full '%s' 2>/dev/null", mnt) != 0) {
        print_message("skipped: test_disk_full: cannot mount a tmpfs here (mount -t tmpfs failed)\n");
        mnt[0] = '\0';
        td_cleanup(&d);
        skip();
    }
    /* Ballast to free later, so that space comes back without stsd doing anything. */
    assert_int_equal(sh("head -c 1200000 /dev/zero > '%s/ballast'", mnt), 0);
    snprintf(so, sizeof so, "--state-dir=%s/state", mnt);
    assert_int_equal(td_start(&d, args), 0);
    memset(line, 'x', sizeof line - 1);
    line[sizeof line - 1] = '\0';
    int oks = 0, refused = 0;
    for (int i = 0; i < 2000 && !refused; i++) {
        http_reply r;
        snprintf(target, sizeof target, "/sts/ADD?FILENAME=big.csv&LINE=%d-%s", i, line);
        assert_int_equal(http_get(d.port, target, &r), 0);
        if (strstr(r.body, "<title>OK</title>"))
            oks++;
        else if (strstr(r.body, "Journal not writable, changes refused !"))
            refused = 1;
        else
            fail_msg("ADD: %s", r.body);
        http_reply_free(&r);
    }
    fprintf(stderr, "disk full after %d ADDs of 4 KB\n", oks);
    assert_true(refused);
    assert_true(oks > 10);
    /* Reads go on; changes stay refused while the disk is full. */
    char n[32];
    snprintf(n, sizeof n, "<body>%d</body>", oks);
    expect_page(d.port, "/sts/LENGTH?FILENAME=big.csv", n);
    expect_page(d.port, "/sts/STATUS", "big.csv = ");
    snprintf(target, sizeof target, "/sts/ADD?FILENAME=big.csv&LINE=more-%s", line);
    expect_page(d.port, target, "Journal not writable");
    /* Room again: changes are accepted by themselves. */
    assert_int_equal(sh("rm '%s/ballast'", mnt), 0);
    int back = 0;
    for (int i = 0; i < 50 && !back; i++) {
        http_reply r;
        assert_int_equal(http_get(d.port, "/sts/ADD?FILENAME=big.csv&LINE=after", &r), 0);
        back = strstr(r.body, "<title>OK</title>") != NULL;
        http_reply_free(&r);
        if (!back)
            td_sleep_ms(100);
    }
    assert_true(back);
    assert_int_equal(td_stop(&d, 1), 128 + SIGKILL);
    assert_int_equal(td_start(&d, args), 0);
    snprintf(n, sizeof n, "<body>%d</body>", oks + 1);
    expect_page(d.port, "/sts/LENGTH?FILENAME=big.csv", n);
    expect_page(d.port, "/sts/READ?FILENAME=big.csv", "<body>after</body>");
    assert_int_equal(td_stop(&d, 0), 0);
    assert_int_equal(sh("umount '%s'", mnt), 0);
    mnt[0] = '\0';
    td_cleanup(&d);
}

/* Sends target on a connection of its own; the answer is read later. */
static void send_on(http_conn *c, const char *target)
{
    assert_int_equal(http_conn_open(c, port), 0);
    assert_int_equal(http_conn_send(c, target), 0);
}

/* LENGTH of q on a new connection, answered within limit_ms while changes wait. */
static void length_meanwhile(const char *want, int limit_ms)
{
    http_reply r;
    int64_t t0 = now_ns();
    assert_int_equal(http_get(port, "/sts/LENGTH?FILENAME=q.csv", &r), 0);
    double ms = (double)(now_ns() - t0) / 1e6;
    if (ms > limit_ms)
        fail_msg("LENGTH took %.0f ms while a change waited for its fsync", ms);
    assert_non_null(strstr(r.body, want));
    http_reply_free(&r);
}

/* Sends target (a change) on a connection of its own; while it waits for its fsync, a
 * LENGTH on another connection is answered, with length_want; then target's answer comes,
 * with want, in *r (the caller frees it). */
static void change_meanwhile(const char *target, const char *length_want, const char *want,
                             http_reply *r)
{
    http_conn c;
    send_on(&c, target);
    td_sleep_ms(100);
    length_meanwhile(length_want, 500);
    assert_int_equal(http_conn_ready(&c, 10000), 1);
    assert_int_equal(http_conn_recv(&c, r), 0);
    if (!strstr(r->body, want))
        fail_msg("wanted %s, got %s", want, r->body);
    http_conn_close(&c);
}

static void test_slow_disk(void **s)
{
    daemon_proc d;
    char flag[400];
    http_reply r;
    const char *args[] = {"--journal=on", "-Dstsd.journal.fsync=always", "--threads=1", NULL};
    assert_int_equal(td_mkdirs(&d), 0);
    snprintf(flag, sizeof flag, "%s/never", d.dir);   /* no failures, only slowness */
    setenv("STSD_SLOWSYNC_MS", "1000", 1);
    start_with_shim(&d, flag, args);
    unsetenv("STSD_SLOWSYNC_MS");
    port = d.port;
    /* An ADD waits for its fsync parked. */
    change_meanwhile("/sts/ADD?FILENAME=q.csv&LINE=one", "<body>1</body>", "<title>OK</title>",
                     &r);
    http_reply_free(&r);
    /* So does a READ with a lease... */
    change_meanwhile("/sts/READ?FILENAME=q.csv&KEEP=FALSE&LEASE=60", "<body>0</body>",
                     "<body>one</body>", &r);
    char id[64], target[160];
    assert_int_equal(http_header(&r, "X-STS-Lease", id, sizeof id), 0);
    http_reply_free(&r);
    /* ... its RELEASE (the line back at once, answered once on disk) ... */
    snprintf(target, sizeof target, "/sts/RELEASE?FILENAME=q.csv&LEASE=%s", id);
    change_meanwhile(target, "<body>1</body>", "<title>OK</title>", &r);
    http_reply_free(&r);
    /* ... and an ACK. */
    assert_int_equal(http_get(port, "/sts/READ?FILENAME=q.csv&KEEP=FALSE&LEASE=60", &r), 0);
    assert_int_equal(http_header(&r, "X-STS-Lease", id, sizeof id), 0);
    http_reply_free(&r);
    snprintf(target, sizeof target, "/sts/ACK?FILENAME=q.csv&LEASE=%s", id);
    change_meanwhile(target, "<body>0</body>", "<title>OK</title>", &r);
    http_reply_free(&r);
    /* All of it on disk: after kill -9 the line is gone for good (ACKed). */
    assert_int_equal(td_stop(&d, 1), 128 + SIGKILL);
    assert_int_equal(td_start(&d, args), 0);
    expect_page(d.port, "/sts/LEASES?FILENAME=q.csv", "<body>0</body>");
    expect_page(d.port, "/sts/LENGTH?FILENAME=q.csv", "<body>0</body>");
    assert_int_equal(td_stop(&d, 0), 0);
    td_cleanup(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fsync_failure),
        cmocka_unit_test(test_slow_disk),
        cmocka_unit_test_teardown(test_disk_full, unmount_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
