/* SPDX-License-Identifier: Apache-2.0 */
/* metrics.c - the Prometheus text format (0.0.4) of the counters other modules keep:
 * formatting only, the counting happens where the events do. */
#include "http/metrics.h"

#include "audit/audit.h"
#include "guard/auth.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/hist.h"
#include "base/version.h"
#include "cluster/cluster.h"
#include "journal/journal.h"
#include "base/stats.h"
#include "base/utf8.h"
#include "meet/keys.h"
#include "meet/barrier.h"
#include "store/store.h"

/* Appends v in decimal: the scrape writes ~30,000 numbers for 10,000 lists, too many
 * for printf. */
static void put_u64(buf *b, uint64_t v)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (buf_reserve(b, (size_t)n) != 0)
        return;
    for (int i = 0; i < n; i++)
        b->data[b->len + (size_t)i] = tmp[n - 1 - i];
    b->len += (size_t)n;
    b->data[b->len] = '\0';
}

static void family(buf *b, const char *name, const char *type, const char *help)
{
    buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value: \\, \" and \n escaped; bytes that are not UTF-8 written as the text
 * \xNN, so that the exposition stays valid UTF-8 and distinct names stay distinct. */
static void label_value(buf *b, const char *s, size_t len)
{
    size_t i = 0;
    while (i < len && (unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x7f &&
           s[i] != '\\' && s[i] != '"')
        i++;
    if (i == len)                       /* the usual name: as it is */
        return (void)buf_append(b, s, len);
    i = 0;
    while (i < len) {
        unsigned char c = (unsigned char)s[i];
        size_t n = utf8_seq(s + i, len - i);
        if (c == '\\' || c == '"') {
            char e[2] = {'\\', (char)c};
            buf_append(b, e, 2);
        } else if (c == '\n') {
            buf_append(b, "\\n", 2);
        } else if (n == 0) {
            buf_printf(b, "\\\\x%02x", c);
            n = 1;
        } else {
            buf_append(b, s + i, n);
            i += n;
            continue;
        }
        i += n ? n : 1;
    }
}

static void histogram(buf *b, const char *name, const char *labels, const hist_sum *h)
{
    uint64_t cum = 0;
    const char *sep = *labels ? "," : "";
    for (int i = 0; i < HIST_BUCKETS; i++) {
        cum += h->n[i];
        buf_printf(b, "%s_bucket{%s%sle=\"%g\"} %llu\n", name, labels, sep, hist_bounds[i],
                   (unsigned long long)cum);
    }
    cum += h->n[HIST_BUCKETS];
    buf_printf(b, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, labels, sep,
               (unsigned long long)cum);
    const char *open = *labels ? "{" : "", *close = *labels ? "}" : "";
    buf_printf(b, "%s_sum%s%s%s %.9f\n", name, open, labels, close, (double)h->sum_ns / 1e9);
    buf_printf(b, "%s_count%s%s%s %llu\n", name, open, labels, close, (unsigned long long)cum);
}

static const char *slot_name(int slot)
{
    const char *n = command_name(slot - 1);
    return n ? n : "other";
}

static void requests(buf *b)
{
    static stats_cmd sum[STATS_SLOTS];      /* big: not on the stack; scrapes serialize */
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&mu);
    stats_sum(sum);
    int slots = command_count() + 1 < STATS_SLOTS ? command_count() + 1 : STATS_SLOTS;
    family(b, "stsd_requests_total", "counter",
           "Requests answered, by command (other: the help page and unknown commands) "
           "and result (ok or ko).");
    for (int i = 0; i < slots; i++) {
        buf_printf(b, "stsd_requests_total{command=\"%s\",result=\"ok\"} %llu\n",
                   slot_name(i), (unsigned long long)sum[i].ok);
        buf_printf(b, "stsd_requests_total{command=\"%s\",result=\"ko\"} %llu\n",
                   slot_name(i), (unsigned long long)sum[i].ko);
    }
    family(b, "stsd_request_duration_seconds", "histogram",
           "Time from a request's arrival at an HTTP thread to its answer, by command.");
    for (int i = 0; i < slots; i++) {
        char labels[64];
        snprintf(labels, sizeof labels, "command=\"%s\"", slot_name(i));
        histogram(b, "stsd_request_duration_seconds", labels, &sum[i].dur);
    }
    pthread_mutex_unlock(&mu);
}

/* The per-list families are written side by side in one pass over the lists, into
 * buffers kept from one scrape to the next (under lists_lock). */
static pthread_mutex_t lists_lock = PTHREAD_MUTEX_INITIALIZER;
static buf keep_lines, keep_added, keep_removed, keep_leased, keep_waiters;

typedef struct lists_walk {
    buf *lines, *added, *removed, *leased, *waiters;
    size_t shown, max;
    size_t other_lines, other_leased, other_waiters;
    uint64_t other_added, other_removed;
    int any_other;
} lists_walk;

/* One series of a per-list family: family{list="name"} value. */
static void list_series(buf *b, const char *family, const char *name, size_t len,
                        uint64_t value)
{
    buf_puts(b, family);
    buf_append(b, "{list=\"", 7);
    label_value(b, name, len);
    buf_append(b, "\"} ", 3);
    put_u64(b, value);
    buf_append(b, "\n", 1);
}

static void list_one(const store_list_stats *s, void *ctx)
{
    lists_walk *w = ctx;
    if (w->shown >= w->max) {
        w->any_other = 1;
        w->other_lines += s->lines;
        w->other_added += s->added_total;
        w->other_removed += s->removed_total;
        w->other_leased += s->leased;
        w->other_waiters += s->waiters;
        return;
    }
    w->shown++;
    size_t len = strlen(s->name);
    list_series(w->lines, "stsd_list_lines", s->name, len, s->lines);
    list_series(w->added, "stsd_list_added_total", s->name, len, s->added_total);
    list_series(w->removed, "stsd_list_removed_total", s->name, len, s->removed_total);
    list_series(w->leased, "stsd_list_leased", s->name, len, s->leased);
    list_series(w->waiters, "stsd_list_waiters", s->name, len, s->waiters);
}

static int lists(const cmd_server *srv, buf *b)
{
    pthread_mutex_lock(&lists_lock);
    buf_clear(&keep_lines);
    buf_clear(&keep_added);
    buf_clear(&keep_removed);
    buf_clear(&keep_leased);
    buf_clear(&keep_waiters);
    lists_walk w = {&keep_lines, &keep_added, &keep_removed, &keep_leased, &keep_waiters, 0,
                    srv->conf->metrics_max_lists, 0, 0, 0, 0, 0, 0};
    long n = store_stats(srv->st, 0, list_one, &w);
    if (w.any_other) {
        buf_printf(w.lines, "stsd_list_lines{list=\"_other\"} %zu\n", w.other_lines);
        buf_printf(w.added, "stsd_list_added_total{list=\"_other\"} %llu\n",
                   (unsigned long long)w.other_added);
        buf_printf(w.removed, "stsd_list_removed_total{list=\"_other\"} %llu\n",
                   (unsigned long long)w.other_removed);
        buf_printf(w.leased, "stsd_list_leased{list=\"_other\"} %zu\n", w.other_leased);
        buf_printf(w.waiters, "stsd_list_waiters{list=\"_other\"} %zu\n", w.other_waiters);
    }
    /* Room for the whole page at once rather than doubling through it. */
    buf_reserve(b, w.lines->len + w.added->len + w.removed->len + w.leased->len +
                       w.waiters->len + 16384);
    family(b, "stsd_lists", "gauge", "Number of lists.");
    buf_printf(b, "stsd_lists %ld\n", n < 0 ? 0 : n);
    family(b, "stsd_keys", "gauge", "Number of keys (SET, INCR).");
    buf_printf(b, "stsd_keys %zu\n", keys_count(srv->st));
    family(b, "stsd_key_watchers", "gauge",
           "Requests waiting on keys: GET with VERSION and TIMEOUT, INCR with TIMEOUT.");
    buf_printf(b, "stsd_key_watchers %zu\n", keys_waiters(srv->st));
    family(b, "stsd_list_lines", "gauge",
           "Lines in each list (lists past stsd.metrics.maxLists by name add up in _other).");
    buf_append(b, w.lines->data ? w.lines->data : "", w.lines->len);
    family(b, "stsd_list_added_total", "counter", "Lines added to each list by ADD.");
    buf_append(b, w.added->data ? w.added->data : "", w.added->len);
    family(b, "stsd_list_removed_total", "counter",
           "Lines taken from each list by READ, READMULTI and FIND with KEEP=FALSE.");
    buf_append(b, w.removed->data ? w.removed->data : "", w.removed->len);
    family(b, "stsd_list_leased", "gauge",
           "Lines of each list on loan (taken with LEASE, not yet acked or released).");
    buf_append(b, w.leased->data ? w.leased->data : "", w.leased->len);
    family(b, "stsd_list_waiters", "gauge",
           "Requests waiting for lines of each list (READ, READMULTI, FIND with TIMEOUT).");
    buf_append(b, w.waiters->data ? w.waiters->data : "", w.waiters->len);
    int failed = n < 0 || w.lines->oom || w.added->oom || w.removed->oom || w.leased->oom ||
                 w.waiters->oom;
    pthread_mutex_unlock(&lists_lock);
    return failed ? -1 : 0;
}

typedef struct barriers_walk {
    buf *arrived, *parties;
} barriers_walk;

static void barrier_series(const barrier_info *bi, void *ctx)
{
    barriers_walk *w = ctx;
    buf_puts(w->arrived, "stsd_barrier_arrived{barrier=\"");
    label_value(w->arrived, bi->name, bi->name_len);
    buf_puts(w->arrived, "\"} ");
    put_u64(w->arrived, bi->arrived);
    buf_puts(w->arrived, "\n");
    buf_puts(w->parties, "stsd_barrier_parties{barrier=\"");
    label_value(w->parties, bi->name, bi->name_len);
    buf_puts(w->parties, "\"} ");
    put_u64(w->parties, bi->parties);
    buf_puts(w->parties, "\n");
}

/* The barriers' families, each a block: the arrivals waiting at each, and its PARTIES. */
static int barrier_metrics(const cmd_server *srv, buf *b)
{
    buf parties = BUF_INIT;
    family(b, "stsd_barrier_arrived", "gauge",
           "Arrivals waiting at each barrier in its gathering generation (BARRIER).");
    barriers_walk w = {b, &parties};
    barrier_each(srv->barriers, barrier_series, &w);
    family(b, "stsd_barrier_parties", "gauge",
           "PARTIES of each barrier's gathering generation: it opens when that many arrived.");
    buf_append(b, parties.data ? parties.data : "", parties.len);
    int failed = parties.oom;
    buf_free(&parties);
    return failed ? -1 : 0;
}

static void journal_metrics(const cmd_server *srv, buf *b)
{
    journal_stats js = {.writable = 1, .last_fsync_seconds = -1};
    if (srv->j)
        journal_get_stats(srv->j, &js);
    family(b, "stsd_journal_enabled", "gauge", "1 when the journal (stsd.journal) is on.");
    buf_printf(b, "stsd_journal_enabled %d\n", srv->j != NULL);
    family(b, "stsd_journal_bytes", "gauge", "Size of the current journal log file.");
    buf_printf(b, "stsd_journal_bytes %llu\n", (unsigned long long)js.bytes);
    family(b, "stsd_journal_writable", "gauge",
           "1 while changes are accepted; 0 while refused after a write error.");
    buf_printf(b, "stsd_journal_writable %d\n", js.writable);
    family(b, "stsd_journal_errors_total", "counter", "Journal write and fsync errors.");
    buf_printf(b, "stsd_journal_errors_total %llu\n", (unsigned long long)js.errors);
    family(b, "stsd_journal_records_total", "counter",
           "Change records appended to the journal log.");
    buf_printf(b, "stsd_journal_records_total %llu\n", (unsigned long long)js.records);
    family(b, "stsd_journal_log_syncs_total", "counter",
           "fdatasyncs that made the log's records durable (group commit: one per batch).");
    buf_printf(b, "stsd_journal_log_syncs_total %llu\n", (unsigned long long)js.log_syncs);
    family(b, "stsd_journal_fsync_seconds", "histogram", "Time each fsync of the journal took.");
    histogram(b, "stsd_journal_fsync_seconds", "", &js.fsync);
}

static long count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    long n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1;              /* the walk's own descriptor */
}

/* Replicas: this node's view (cluster/): present only in a cluster. */
static void cluster_metrics(const cmd_server *srv, buf *b)
{
    if (!srv->cluster)
        return;
    cluster_stats s;
    cluster_get_stats(srv->cluster, &s);
    static const char *const roles[] = {"leader", "follower", "candidate", "unavailable"};
    family(b, "stsd_cluster_role", "gauge",
           "1 for this node's raft role (role label), 0 for the others.");
    for (size_t i = 0; i < sizeof roles / sizeof roles[0]; i++)
        buf_printf(b, "stsd_cluster_role{role=\"%s\"} %d\n", roles[i],
                   strcmp(roles[i], s.role) == 0);
    family(b, "stsd_cluster_serving", "gauge",
           "1 when this node leads with its state loaded: it answers requests itself.");
    buf_printf(b, "stsd_cluster_serving %d\n", s.serving);
    family(b, "stsd_cluster_leader", "gauge", "The leader's node id as this node knows it; 0: none.");
    buf_printf(b, "stsd_cluster_leader %u\n", s.leader);
    family(b, "stsd_cluster_term", "gauge", "raft's current term on this node.");
    buf_printf(b, "stsd_cluster_term %llu\n", (unsigned long long)s.term);
    family(b, "stsd_cluster_commit_index", "gauge", "The highest raft entry known committed.");
    buf_printf(b, "stsd_cluster_commit_index %llu\n", (unsigned long long)s.commit);
    family(b, "stsd_cluster_applied_index", "gauge",
           "The highest raft entry written into this node's state directory.");
    buf_printf(b, "stsd_cluster_applied_index %llu\n", (unsigned long long)s.applied);
    family(b, "stsd_cluster_leader_changes_total", "counter",
           "Times this node saw the leader change to a known one.");
    buf_printf(b, "stsd_cluster_leader_changes_total %llu\n",
               (unsigned long long)s.leader_changes);
    family(b, "stsd_cluster_local_reads_total", "counter",
           "Reads this follower answered from its hot standby after a ReadIndex round.");
    buf_printf(b, "stsd_cluster_local_reads_total %llu\n", (unsigned long long)s.local_reads);
    family(b, "stsd_cluster_read_index_rounds_total", "counter",
           "This follower's READINDEX questions to the leader, one for every read that came "
           "while the last was out (result: ok, or failed: those reads got a 503).");
    buf_printf(b, "stsd_cluster_read_index_rounds_total{result=\"ok\"} %llu\n",
               (unsigned long long)(s.read_rounds - s.read_rounds_failed));
    buf_printf(b, "stsd_cluster_read_index_rounds_total{result=\"failed\"} %llu\n",
               (unsigned long long)s.read_rounds_failed);
    family(b, "stsd_cluster_forwarded_total", "counter",
           "Requests this node sent the leader: in batches (way=\"batch\"), or alone (a "
           "wait, an admin command, another method).");
    buf_printf(b, "stsd_cluster_forwarded_total{way=\"batch\"} %llu\n",
               (unsigned long long)s.fwd_batched);
    buf_printf(b, "stsd_cluster_forwarded_total{way=\"alone\"} %llu\n",
               (unsigned long long)s.fwd_alone);
    family(b, "stsd_cluster_forward_batches_total", "counter",
           "Batches this node sent the leader: each one request with the others that came "
           "while the batches before it were on their way.");
    buf_printf(b, "stsd_cluster_forward_batches_total %llu\n",
               (unsigned long long)s.fwd_batches);
    family(b, "stsd_cluster_forward_late_total", "counter",
           "What a follower sent the leader and was not run because it came after its "
           "deadline (stsd.cluster.forwardWithin): refused by this node as the leader "
           "(a batch or a request alone), or dropped by this node before it was sent.");
    buf_printf(b, "stsd_cluster_forward_late_total{way=\"refused\"} %llu\n",
               (unsigned long long)s.late_refused);
    buf_printf(b, "stsd_cluster_forward_late_total{way=\"dropped\"} %llu\n",
               (unsigned long long)s.late_dropped);
    family(b, "stsd_cluster_commit_seconds", "histogram",
           "On the leader: each batch of changes from its hand-over to raft until a majority "
           "has it on disk and it is applied here.");
    histogram(b, "stsd_cluster_commit_seconds", "", &s.commits);
    family(b, "stsd_cluster_node_up", "gauge",
           "Each node as the leader sees it: 1 up, 0 unreachable (nothing heard from it for "
           "three election timeouts); on a follower, the leader's last verdict.");
    for (size_t i = 0; i < s.n; i++)
        if (s.nodes[i].health)
            buf_printf(b, "stsd_cluster_node_up{node=\"%u\"} %d\n", s.nodes[i].id,
                       strcmp(s.nodes[i].health, "up") == 0);
    family(b, "stsd_cluster_node_heard_seconds", "gauge",
           "Seconds since each node was last heard from: on the leader every node, on a "
           "follower its leader.");
    for (size_t i = 0; i < s.n; i++)
        if (s.nodes[i].heard_ms >= 0)
            buf_printf(b, "stsd_cluster_node_heard_seconds{node=\"%u\"} %.3f\n",
                       s.nodes[i].id, (double)s.nodes[i].heard_ms / 1000);
    family(b, "stsd_cluster_follower_lag_entries", "gauge",
           "On the leader: entries committed that each follower (node label) does not have yet.");
    for (size_t i = 0; i < s.n; i++)
        if (s.nodes[i].known && s.nodes[i].id != s.self)
            buf_printf(b, "stsd_cluster_follower_lag_entries{node=\"%u\"} %llu\n", s.nodes[i].id,
                       (unsigned long long)(s.commit > s.nodes[i].match ?
                                            s.commit - s.nodes[i].match : 0));
}

static void process_metrics(buf *b)
{
    char text[1024];
    unsigned long utime = 0, stime = 0, vsize = 0;
    long rss = 0;
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, text, sizeof text - 1) : -1;
    if (fd >= 0)
        close(fd);
    /* Fields after the command name (which may hold spaces): from the last ')'. */
    char *p = n > 0 ? (text[n] = '\0', strrchr(text, ')')) : NULL;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu %*d %*d "
                            "%*d %*d %*d %*d %*u %lu %ld", &utime, &stime, &vsize, &rss) != 4)
        utime = stime = vsize = 0, rss = 0;
    double tick = (double)sysconf(_SC_CLK_TCK);
    struct rlimit rl;
    long fds = count_fds();
    family(b, "process_cpu_seconds_total", "counter", "User and system CPU time spent.");
    buf_printf(b, "process_cpu_seconds_total %.2f\n", (double)(utime + stime) / tick);
    family(b, "process_resident_memory_bytes", "gauge", "Resident memory size.");
    buf_printf(b, "process_resident_memory_bytes %ld\n", rss * sysconf(_SC_PAGESIZE));
    family(b, "process_virtual_memory_bytes", "gauge", "Virtual memory size.");
    buf_printf(b, "process_virtual_memory_bytes %lu\n", vsize);
    family(b, "process_open_fds", "gauge", "Open file descriptors.");
    buf_printf(b, "process_open_fds %ld\n", fds < 0 ? 0 : fds);
    family(b, "process_max_fds", "gauge", "Most file descriptors the process may open.");
    buf_printf(b, "process_max_fds %llu\n",
               getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
                   ? (unsigned long long)rl.rlim_cur : 0ULL);
    family(b, "process_start_time_seconds", "gauge", "Start time, in seconds since the epoch.");
    buf_printf(b, "process_start_time_seconds %.3f\n", stats_start_time());
}

void metrics_shutdown(void)
{
    pthread_mutex_lock(&lists_lock);
    buf_free(&keep_lines);
    buf_free(&keep_added);
    buf_free(&keep_removed);
    buf_free(&keep_waiters);
    pthread_mutex_unlock(&lists_lock);
}

int metrics_render(const cmd_server *srv, buf *out)
{
    buf_clear(out);
    family(out, "stsd_build_info", "gauge", "Always 1; the version of stsd as a label.");
    buf_puts(out, "stsd_build_info{version=\"");
    label_value(out, STSD_VERSION, strlen(STSD_VERSION));
    buf_puts(out, "\"} 1\n");
    requests(out);
    family(out, "stsd_connections", "gauge", "Open HTTP connections.");
    buf_printf(out, "stsd_connections %ld\n", stats_connections());
    family(out, "stsd_auth_failures_total", "counter",
           "Requests refused with 401 (no token, or a wrong one), from every address.");
    buf_printf(out, "stsd_auth_failures_total %llu\n", auth_failures_total());
    family(out, "stsd_audit_lines_total", "counter",
           "Lines written to the audit log (stsd.auditLog; 0 when it is off).");
    buf_printf(out, "stsd_audit_lines_total %llu\n", audit_lines_total(srv->audit));
    family(out, "stsd_audit_dropped_total", "counter",
           "Audit log lines lost: its buffer was full (the writer fell behind) or a write failed.");
    buf_printf(out, "stsd_audit_dropped_total %llu\n", audit_dropped_total(srv->audit));
    int rc = lists(srv, out);
    if (barrier_metrics(srv, out) != 0)
        rc = -1;
    journal_metrics(srv, out);
    cluster_metrics(srv, out);
    process_metrics(out);
    return rc != 0 || out->oom ? -1 : 0;
}
