/* SPDX-License-Identifier: Apache-2.0 */
/* test_stop.c - a stop in every state (issue 23): SIGTERM must end in exit status 0
 * within 5 s, and after a restart on the same state directory nothing acknowledged is
 * lost, when it arrives
 *  - during an INITFILE of 10,000,000 lines (and then within 1 s, the INITFILE answered
 *    with a KO that says the server is stopping, its list as it was: issue 32);
 *  - during the upload of a 50 MB LOAD;
 *  - with 2,000 READs parked (TIMEOUT on an empty list);
 *  - with a million leases open;
 *  - during a stretch of fsync failures (tests/proto/failsync.c, preloaded);
 *  - during a compaction;
 *  - under a stream of new connections: each one is refused or answered, none cut.
 * Each case runs writers that ADD ids to ack.csv (fsync=always unless said) until the
 * stop: every id answered OK must be there after the restart, once.
 * The slower tier of `make test` (make test-stop): about a minute, most of it making
 * the big inputs. Stop times go to stderr (the test's log). */
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
#include <sys/resource.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "testlib.h"

#define WRITERS 4
#define MAX_IDS 400000
#define STOP_LIMIT_MS 5000
/* A stop while INITFILE or LOAD is reading a file (issue 32): the reading gives up. */
#define STOP_READING_MS 1000

enum { NONE, SENT, OK };

static atomic_uchar ids[MAX_IDS];
static atomic_int next_id, stop_writers, oks;
static pthread_t writer_threads[WRITERS];
static int port;

static void *writer(void *arg)
{
    http_conn c;
    char target[128], ok[128];
    page_ok(ok, sizeof ok, "");
    if (http_conn_open(&c, port) != 0)
        return NULL;
    while (!atomic_load(&stop_writers)) {
        int id = atomic_fetch_add(&next_id, 1);
        if (id >= MAX_IDS)
            break;
        atomic_store(&ids[id], SENT);
        snprintf(target, sizeof target, "/sts/ADD?FILENAME=ack.csv&LINE=id%d", id);
        http_reply r;
        if (http_conn_get(&c, target, &r) != 0)
            break;                  /* the stop: this one may or may not be there */
        if (strcmp(r.body, ok) == 0) {
            atomic_store(&ids[id], OK);
            atomic_fetch_add(&oks, 1);
        }
        http_reply_free(&r);
    }
    http_conn_close(&c);
    return NULL;
}

/* No id sent yet, none answered OK. */
static void reset_ids(void)
{
    atomic_store(&next_id, 0);
    atomic_store(&oks, 0);
    for (int i = 0; i < MAX_IDS; i++)
        atomic_store(&ids[i], NONE);
}

static void start_writers(int p)
{
    port = p;
    atomic_store(&stop_writers, 0);
    reset_ids();
    for (int i = 0; i < WRITERS; i++)
        assert_int_equal(pthread_create(&writer_threads[i], NULL, writer, NULL), 0);
}

static void join_writers(void)
{
    atomic_store(&stop_writers, 1);
    for (int i = 0; i < WRITERS; i++)
        pthread_join(writer_threads[i], NULL);
}

/* The journal's arguments: state in d->dir/state, fsync policy, then more (NULL ends). */
static void start_journal(daemon_proc *d, const char *fsync, ...)
{
    static char so[400], fo[100];
    const char *args[16] = {"--journal=on", so, fo};
    int n = 3;
    snprintf(so, sizeof so, "--state-dir=%s/state", d->dir);
    snprintf(fo, sizeof fo, "-Dstsd.journal.fsync=%s", fsync);
    va_list ap;
    va_start(ap, fsync);
    for (const char *a; (a = va_arg(ap, const char *)) && n < 15;)
        args[n++] = a;
    va_end(ap);
    args[n] = NULL;
    assert_int_equal(td_start(d, args), 0);
}

/* SIGTERM: exit 0 within STOP_LIMIT_MS; the time it took, in ms. */
static int64_t stop_timed(daemon_proc *d, const char *when)
{
    int64_t t0 = td_now_ms();
    int rc = td_stop(d, 0);
    int64_t took = td_now_ms() - t0;
    fprintf(stderr, "stop %s: exit %d after %lld ms\n", when, rc, (long long)took);
    if (rc != 0 || took > STOP_LIMIT_MS)
        fprintf(stderr, "log:\n%s\n", td_log(d));
    assert_int_equal(rc, 0);
    assert_true(took <= STOP_LIMIT_MS);
    return took;
}

/* After the restart: every id answered OK is in ack.csv once. */
static void check_acked(daemon_proc *d, const char *when)
{
    int exists, lost = 0, dup = 0, n = atomic_load(&next_id);
    unsigned char *count = td_saved_id_counts(d, "ack.csv", MAX_IDS, &exists);
    assert_non_null(count);
    for (int id = 0; id < n && id < MAX_IDS; id++) {
        lost += atomic_load(&ids[id]) == OK && count[id] == 0;
        dup += count[id] > 1;
    }
    fprintf(stderr, "%s: %d ADDs answered OK, %d missing, %d twice\n", when,
            atomic_load(&oks), lost, dup);
    assert_true(atomic_load(&oks) > 0);
    assert_int_equal(lost, 0);
    assert_int_equal(dup, 0);
    free(count);
}

static long length_of(int p, const char *name)
{
    char target[256];
    http_reply r;
    snprintf(target, sizeof target, "/sts/LENGTH?FILENAME=%s&FORMAT=JSON", name);
    if (http_get(p, target, &r) != 0)
        return -1;
    const char *s = strstr(r.body, "\"length\":");
    long n = s ? atol(s + 9) : -1;
    http_reply_free(&r);
    return n;
}

/* A dataset file of n lines "<prefix><i>". */
static void write_lines(daemon_proc *d, const char *name, long n, const char *prefix)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s", d->data, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (long i = 0; i < n; i++)
        fprintf(f, "%s%ld\n", prefix, i);
    assert_int_equal(fclose(f), 0);
}

static int connect_local(int p)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)p)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    struct timeval tv = {10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

/* ---- the cases ------------------------------------------------------------------- */

/* Whether process pid has a file ending in /name open: the moment it is reading it. */
static int has_open(pid_t pid, const char *name)
{
    char dir[64], link[400], target[1024];
    snprintf(dir, sizeof dir, "/proc/%d/fd", (int)pid);
    DIR *dp = opendir(dir);
    struct dirent *e;
    int found = 0;
    size_t n = strlen(name);
    while (dp && !found && (e = readdir(dp)) != NULL) {
        snprintf(link, sizeof link, "%s/%s", dir, e->d_name);
        ssize_t len = readlink(link, target, sizeof target - 1);
        found = len > (ssize_t)n && target[len - n - 1] == '/' &&
                memcmp(target + len - n, name, n) == 0;
    }
    if (dp)
        closedir(dp);
    return found;
}

/* SIGTERM while INITFILE is reading 10M lines into a list that holds 3: the reading gives
 * up within STOP_READING_MS, the INITFILE gets a KO saying the server is stopping, the
 * exit is 0, and after the restart the list still holds its 3 lines (and every ADD
 * answered OK is there). */
static void test_stop_during_initfile(void **state)
{
    daemon_proc d;
    char target[128], ok[128];
    http_reply r;
    assert_int_equal(td_mkdirs(&d), 0);
    write_lines(&d, "big.csv", 10000000, "");
    start_journal(&d, "always", NULL);
    page_ok(ok, sizeof ok, "");
    for (int i = 0; i < 3; i++) {
        snprintf(target, sizeof target, "/sts/ADD?FILENAME=big.csv&LINE=old%d", i);
        assert_int_equal(http_get(d.port, target, &r), 0);
        assert_string_equal(r.body, ok);
        http_reply_free(&r);
    }
    start_writers(d.port);
    td_sleep_ms(300);
    http_conn c;
    assert_int_equal(http_conn_open(&c, d.port), 0);
    assert_int_equal(http_conn_send(&c, "/sts/INITFILE?FILENAME=big.csv"), 0);
    int64_t t0 = td_now_ms();
    while (!has_open(d.pid, "big.csv") && td_now_ms() - t0 < 5000)
        ;                                     /* into reading the file */
    assert_true(has_open(d.pid, "big.csv"));
    int64_t took = stop_timed(&d, "during a 10M-line INITFILE (from its reading)");
    join_writers();
    int answered = http_conn_ready(&c, 0) && http_conn_recv(&c, &r) == 0;
    if (!answered)
        fail_msg("the INITFILE got no answer");
    fprintf(stderr, "INITFILE answered: %s\n", r.body);
    char ko[256];
    page_ko(ko, sizeof ko, "Server is stopping: the file was not read to its end, "
                           "the list is unchanged !");
    assert_string_equal(r.body, ko);
    http_reply_free(&r);
    http_conn_close(&c);
    assert_true(took < STOP_READING_MS);
    start_journal(&d, "always", NULL);
    check_acked(&d, "after a stop during INITFILE");
    long n = length_of(d.port, "big.csv");
    fprintf(stderr, "big.csv has %ld lines after the restart (3 before the INITFILE)\n", n);
    assert_int_equal(n, 3);
    for (int i = 0; i < 3; i++) {           /* ADD puts a line first by default */
        char line[16];
        snprintf(line, sizeof line, "old%d", 2 - i);
        page_ok(ok, sizeof ok, line);
        assert_int_equal(http_get(d.port, "/sts/READ?FILENAME=big.csv", &r), 0);
        assert_string_equal(r.body, ok);
        http_reply_free(&r);
    }
    stop_timed(&d, "after the restart");
    td_cleanup(&d);
}

static int upload_fd;
static atomic_long uploaded;
#define UPLOAD_BYTES (50L * 1000 * 1000)

static void *uploader(void *arg)
{
    char chunk[65536];
    for (size_t i = 0; i < sizeof chunk; i += 16)
        memcpy(chunk + i, "upload-line-xyz\n", 16);
    for (long sent = 0; sent < UPLOAD_BYTES;) {
        size_t n = UPLOAD_BYTES - sent < (long)sizeof chunk ? (size_t)(UPLOAD_BYTES - sent)
                                                             : sizeof chunk;
        ssize_t w = send(upload_fd, chunk, n, MSG_NOSIGNAL);
        if (w <= 0)
            break;
        sent += w;
        atomic_store(&uploaded, sent);
        if (sent % (1 << 20) < (long)sizeof chunk)
            td_sleep_ms(200);                 /* about 10 s for the whole file */
    }
    return NULL;
}

static void test_stop_during_load_upload(void **state)
{
    daemon_proc d;
    assert_int_equal(td_mkdirs(&d), 0);
    start_journal(&d, "always", "-Dstsd.maxBodySize=64M", NULL);
    start_writers(d.port);
    upload_fd = connect_local(d.port);
    assert_true(upload_fd >= 0);
    char head[256];
    int n = snprintf(head, sizeof head, "POST /sts/LOAD?FILENAME=up.csv HTTP/1.1\r\n"
                     "Host: x\r\nContent-Type: text/csv\r\nContent-Length: %ld\r\n\r\n",
                     UPLOAD_BYTES);
    assert_int_equal(send(upload_fd, head, (size_t)n, MSG_NOSIGNAL), n);
    atomic_store(&uploaded, 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, uploader, NULL), 0);
    while (atomic_load(&uploaded) < UPLOAD_BYTES / 5)
        td_sleep_ms(5);
    stop_timed(&d, "during a 50 MB LOAD upload");
    pthread_join(t, NULL);
    close(upload_fd);
    join_writers();
    start_journal(&d, "always", NULL);
    check_acked(&d, "after a stop during a LOAD upload");
    long len = length_of(d.port, "up.csv");
    fprintf(stderr, "up.csv: %ld lines after the restart (the upload was cut)\n", len);
    assert_true(len <= 0 || len == UPLOAD_BYTES / 16);   /* -1: no such list */
    stop_timed(&d, "after the restart");
    td_cleanup(&d);
}

#define WAITERS 2000

static void test_stop_with_parked_waiters(void **state)
{
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < WAITERS + 200) {
        rl.rlim_cur = rl.rlim_max < WAITERS + 200 ? rl.rlim_max : WAITERS + 200;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    assert_true(rl.rlim_cur >= WAITERS + 100);
    daemon_proc d;
    assert_int_equal(td_mkdirs(&d), 0);
    start_journal(&d, "always", NULL);
    start_writers(d.port);
    static int fds[WAITERS];
    char req[256];
    /* Ten empty lists (STATUS counts waiters on lists that exist). */
    for (int i = 0; i < 10; i++) {
        http_reply r;
        snprintf(req, sizeof req, "/sts/ADD?FILENAME=empty%d.csv&LINE=x", i);
        assert_int_equal(http_get(d.port, req, &r), 0);
        http_reply_free(&r);
        snprintf(req, sizeof req, "/sts/READ?FILENAME=empty%d.csv&KEEP=FALSE", i);
        assert_int_equal(http_get(d.port, req, &r), 0);
        http_reply_free(&r);
    }
    for (int i = 0; i < WAITERS; i++) {
        fds[i] = connect_local(d.port);
        assert_true(fds[i] >= 0);
        int n = snprintf(req, sizeof req, "GET /sts/READ?FILENAME=empty%d.csv&KEEP=FALSE"
                         "&TIMEOUT=30 HTTP/1.1\r\nHost: x\r\n\r\n", i % 10);
        assert_int_equal(send(fds[i], req, (size_t)n, MSG_NOSIGNAL), n);
    }
    /* All parked: STATUS counts them. */
    int waiting = 0;
    for (int tries = 0; tries < 200 && waiting < WAITERS; tries++) {
        http_reply r;
        assert_int_equal(http_get(d.port, "/sts/STATUS?FORMAT=JSON", &r), 0);
        waiting = 0;
        for (const char *s = r.body; (s = strstr(s, "\"waiters\":")); s += 10)
            waiting += atoi(s + 10);
        http_reply_free(&r);
        if (waiting < WAITERS)
            td_sleep_ms(50);
    }
    fprintf(stderr, "%d READs parked\n", waiting);
    assert_int_equal(waiting, WAITERS);
    stop_timed(&d, "with 2,000 parked READs");
    int answered = 0;
    char buf[512];
    for (int i = 0; i < WAITERS; i++) {
        ssize_t n = recv(fds[i], buf, sizeof buf - 1, MSG_DONTWAIT);
        answered += n > 12 && strncmp(buf, "HTTP/1.1 200", 12) == 0;
        close(fds[i]);
    }
    fprintf(stderr, "%d of the parked READs answered at the stop\n", answered);
    assert_int_equal(answered, WAITERS);
    join_writers();
    start_journal(&d, "always", NULL);
    check_acked(&d, "after a stop with parked READs");
    stop_timed(&d, "after the restart");
    td_cleanup(&d);
}

#define LEASES 1000000
#define ACKED 100

#define PER_READ 100        /* X-STS-Lease of 100 ids fits testlib's 4 KiB of headers */

static char lease_ids[ACKED][40];
static atomic_int leaser_errors;

static void *leaser(void *arg)
{
    long k = (long)arg;
    http_conn c;
    char target[128], h[4096];
    snprintf(target, sizeof target, "/sts/READMULTI?FILENAME=jobs.csv&NB_LINES=%d&KEEP=FALSE"
             "&LEASE=3600", PER_READ);
    if (http_conn_open(&c, port) != 0) {
        atomic_fetch_add(&leaser_errors, 1);
        return NULL;
    }
    for (long i = k; i < LEASES / PER_READ; i += 4) {
        http_reply r;
        if (http_conn_get(&c, target, &r) != 0) {
            atomic_fetch_add(&leaser_errors, 1);
            break;
        }
        if (http_header(&r, "X-STS-Lease", h, sizeof h) != 0)
            atomic_fetch_add(&leaser_errors, 1);
        else if (i == 0)
            for (int j = 0; j < ACKED; j++)
                snprintf(lease_ids[j], sizeof lease_ids[j], "%.16s", h + 17 * j);
        http_reply_free(&r);
    }
    http_conn_close(&c);
    return NULL;
}

static void test_stop_with_a_million_leases(void **state)
{
    daemon_proc d;
    assert_int_equal(td_mkdirs(&d), 0);
    write_lines(&d, "jobs.csv", LEASES, "job");
    start_journal(&d, "everysec", NULL);
    http_reply r;
    assert_int_equal(http_get(d.port, "/sts/INITFILE?FILENAME=jobs.csv", &r), 0);
    http_reply_free(&r);
    port = d.port;
    pthread_t t[4];
    int64_t t0 = td_now_ms();
    for (long i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, leaser, (void *)i), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(atomic_load(&leaser_errors), 0);
    fprintf(stderr, "%d leases opened in %lld ms\n", LEASES, (long long)(td_now_ms() - t0));
    char target[256];
    for (int j = 0; j < ACKED; j++) {
        snprintf(target, sizeof target, "/sts/ACK?FILENAME=jobs.csv&LEASE=%.16s", lease_ids[j]);
        assert_int_equal(http_get(d.port, target, &r), 0);
        assert_non_null(strstr(r.body, "<title>OK</title>"));
        http_reply_free(&r);
    }
    start_writers(d.port);
    td_sleep_ms(300);
    stop_timed(&d, "with a million open leases");
    join_writers();
    start_journal(&d, "everysec", NULL);
    check_acked(&d, "after a stop with a million leases");
    assert_int_equal(http_get(d.port, "/sts/LEASES?FILENAME=jobs.csv&FORMAT=JSON", &r), 0);
    fprintf(stderr, "LEASES after the restart: %s\n", r.body);
    http_reply_free(&r);
    assert_int_equal(length_of(d.port, "jobs.csv"), 0);
    /* An ACKed lease stays settled. */
    snprintf(target, sizeof target, "/sts/ACK?FILENAME=jobs.csv&LEASE=%.16s", lease_ids[0]);
    assert_int_equal(http_get(d.port, target, &r), 0);
    assert_non_null(strstr(r.body, "No such lease"));
    http_reply_free(&r);
    stop_timed(&d, "after the restart");
    td_cleanup(&d);
}

/* Starts stsd (fsync=always) with the failsync shim preloaded, looking at flag. */
static void start_with_shim(daemon_proc *d, const char *flag)
{
    static char so[400];
    snprintf(so, sizeof so, "--state-dir=%s/state", d->dir);
    const char *args[] = {"--journal=on", so, "-Dstsd.journal.fsync=always", NULL};
    assert_int_equal(td_start_failsync(d, flag, args), 0);
}

static void test_stop_during_fsync_failures(void **state)
{
    daemon_proc d;
    char flag[400];
    assert_int_equal(td_mkdirs(&d), 0);
    snprintf(flag, sizeof flag, "%s/failsync.on", d.dir);
    start_with_shim(&d, flag);
    start_writers(d.port);
    td_sleep_ms(400);
    FILE *f = fopen(flag, "w");
    assert_non_null(f);
    fclose(f);
    td_sleep_ms(800);                 /* the writers' answers are held or refused */
    int before = atomic_load(&oks);
    stop_timed(&d, "during fsync failures");
    join_writers();
    unlink(flag);
    fprintf(stderr, "%d OKs before the stop, %d in all\n", before, atomic_load(&oks));
    start_journal(&d, "always", NULL);
    check_acked(&d, "after a stop during fsync failures");
    stop_timed(&d, "after the restart");
    td_cleanup(&d);
}

static void test_stop_during_compaction(void **state)
{
    daemon_proc d;
    assert_int_equal(td_mkdirs(&d), 0);
    start_journal(&d, "everysec", NULL);
    start_writers(d.port);
    /* 80 MB of log in 400 KB lines: past the 64 MiB that starts a compaction. */
    size_t line = 400 * 1000, cap = line + 64;
    char *body = malloc(cap);
    assert_non_null(body);
    int n = snprintf(body, cap, "FILENAME=big.csv&LINE=");
    int big_ok = 0, started = 0;
    for (int i = 0; i < 400 && !started; i++) {
        memset(body + n, 'a' + i % 26, line);
        body[n + line] = '\0';
        http_reply r;
        assert_int_equal(http_post(d.port, "/sts/ADD", body, &r), 0);
        big_ok += strstr(r.body, "<title>OK</title>") != NULL;
        http_reply_free(&r);
        started = strstr(td_log(&d), "compaction into") != NULL;
    }
    free(body);
    for (int i = 0; i < 500 && !started; i++) {
        td_sleep_ms(10);
        started = strstr(td_log(&d), "compaction into") != NULL;
    }
    assert_true(started);
    int done = strstr(td_log(&d), "compaction done") != NULL;
    fprintf(stderr, "compaction started after %d big ADDs (%s at the stop)\n", big_ok,
            done ? "done already" : "running");
    stop_timed(&d, "during a compaction");
    join_writers();
    start_journal(&d, "everysec", NULL);
    check_acked(&d, "after a stop during a compaction");
    assert_int_equal(length_of(d.port, "big.csv"), big_ok);
    stop_timed(&d, "after the restart");
    td_cleanup(&d);
}

/* ---- new connections during the stop -------------------------------------------- */

#define CONNECTORS 6
#define CONNECT_ROUNDS 5

static atomic_int refused_n, answered_n, cut_n;

/* One connection per ADD, as a client without keep-alive makes them. A stop must leave
 * each one refused at connect (nothing ran) or answered: a connection cut without an
 * answer leaves its client not knowing whether its ADD ran. */
static void *connector(void *arg)
{
    (void)arg;
    char req[256], ans[4096], ok[128];
    page_ok(ok, sizeof ok, "");
    while (!atomic_load(&stop_writers)) {
        int fd = connect_local(port);
        if (fd < 0) {
            atomic_fetch_add(&refused_n, 1);
            td_sleep_ms(5);
            continue;
        }
        int id = atomic_fetch_add(&next_id, 1);
        if (id >= MAX_IDS) {
            close(fd);
            break;
        }
        atomic_store(&ids[id], SENT);
        int n = snprintf(req, sizeof req, "GET /sts/ADD?FILENAME=ack.csv&LINE=id%d HTTP/1.1\r\n"
                         "Host: x\r\nConnection: close\r\n\r\n", id);
        size_t have = 0;
        ssize_t got = 1;
        if (td_send_all(fd, req, (size_t)n) == 0)
            while (have < sizeof ans - 1 && (got = recv(fd, ans + have, sizeof ans - 1 - have, 0)) > 0)
                have += (size_t)got;
        close(fd);
        ans[have] = '\0';
        if (got < 0 || strncmp(ans, "HTTP/1.1 ", 9) != 0) {
            if (atomic_fetch_add(&cut_n, 1) < 3)
                fprintf(stderr, "id%d: cut after %zu bytes (%s)\n", id, have,
                        got < 0 ? strerror(errno) : "closed");
            continue;
        }
        atomic_fetch_add(&answered_n, 1);
        if (strstr(ans, ok)) {
            atomic_store(&ids[id], OK);
            atomic_fetch_add(&oks, 1);
        }
    }
    return NULL;
}

/* SIGTERM while clients open a connection for each ADD, five times: none is cut (the
 * connections the kernel completed before the listening socket closed get an answer),
 * and after each restart every ADD answered OK is there. */
static void test_stop_under_new_connections(void **state)
{
    daemon_proc d;
    pthread_t th[CONNECTORS];
    assert_int_equal(td_mkdirs(&d), 0);
    reset_ids();
    for (int round = 0; round < CONNECT_ROUNDS; round++) {
        start_journal(&d, "no", NULL);
        port = d.port;
        atomic_store(&stop_writers, 0);
        for (int i = 0; i < CONNECTORS; i++)
            assert_int_equal(pthread_create(&th[i], NULL, connector, NULL), 0);
        td_sleep_ms(300);
        stop_timed(&d, "under new connections");
        td_sleep_ms(50);          /* connections tried on the closed port: refused */
        atomic_store(&stop_writers, 1);
        for (int i = 0; i < CONNECTORS; i++)
            pthread_join(th[i], NULL);
    }
    fprintf(stderr, "%d stops: %d connections answered, %d refused, %d cut\n",
            CONNECT_ROUNDS, atomic_load(&answered_n), atomic_load(&refused_n),
            atomic_load(&cut_n));
    start_journal(&d, "no", NULL);
    check_acked(&d, "after stops under new connections");
    stop_timed(&d, "after the restart");
    td_cleanup(&d);
    assert_int_equal(atomic_load(&cut_n), 0);
    assert_true(atomic_load(&refused_n) > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stop_during_initfile),
        cmocka_unit_test(test_stop_during_load_upload),
        cmocka_unit_test(test_stop_with_parked_waiters),
        cmocka_unit_test(test_stop_with_a_million_leases),
        cmocka_unit_test(test_stop_during_fsync_failures),
        cmocka_unit_test(test_stop_during_compaction),
        cmocka_unit_test(test_stop_under_new_connections),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
