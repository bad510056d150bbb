/* SPDX-License-Identifier: Apache-2.0 */
/* test_protocol.c - every command, check order and KO message on a real stsd, beyond the
 * reference transcript: methods, binary values, limits, files, charsets, STOP. */
#include <dirent.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "testlib.h"

static daemon_proc d;

static int setup(void **state)
{
    if (td_mkdirs(&d) != 0)
        return -1;
    td_write_file(&d, "logins.csv", "l1\nl2\nl3\nl4\nl5\n", 15);
    td_write_file(&d, "dups.csv", "a\nx\nb\nx\nc\n", 10);
    return td_start(&d, NULL);
}

static int teardown(void **state)
{
    td_cleanup(&d);
    return 0;
}

/* GETs target and checks the whole body. */
static void expect_get(const char *target, const char *body)
{
    http_reply r;
    assert_int_equal(http_get(d.port, target, &r), 0);
    assert_int_equal(r.status, 200);
    if (strcmp(r.body, body) != 0)
        fail_msg("GET %s\n want: %s\n got:  %s", target, body, r.body);
    http_reply_free(&r);
}

static void expect_ok(const char *target, const char *payload)
{
    char want[4096];
    page_ok(want, sizeof want, payload);
    expect_get(target, want);
}

static void expect_ko(const char *target, const char *msg)
{
    char want[4096];
    page_ko(want, sizeof want, msg);
    expect_get(target, want);
}

static void test_headers(void **state)
{
    http_reply r;
    assert_int_equal(http_get(d.port, "/sts/LENGTH?FILENAME=none", &r), 0);
    char v[128];
    assert_int_equal(http_header(&r, "Content-Type", v, sizeof v), 0);
    assert_string_equal(v, "text/html; charset=UTF-8");
    assert_int_equal(http_header(&r, "Cache-Control", v, sizeof v), 0);
    assert_string_equal(v, "no-cache, no-store, must-revalidate");
    assert_int_equal(http_header(&r, "Pragma", v, sizeof v), 0);
    assert_string_equal(v, "no-cache");
    assert_int_equal(http_header(&r, "Expires", v, sizeof v), 0);
    assert_string_equal(v, "0");
    http_reply_free(&r);
}

static void test_methods(void **state)
{
    http_reply r;
    const char *put = "PUT /sts/ADD?FILENAME=m.csv&LINE=x HTTP/1.1\r\nHost: h\r\n"
                      "Connection: close\r\nContent-Length: 0\r\n\r\n";
    assert_int_equal(http_raw(d.port, put, strlen(put), &r), 0);
    assert_non_null(strstr(r.body, "Error : unknown command !"));
    http_reply_free(&r);
    const char *del = "DELETE /sts/FIND?FILENAME=logins.csv&LINE=l HTTP/1.1\r\nHost: h\r\n"
                      "Connection: close\r\n\r\n";
    assert_int_equal(http_raw(d.port, del, strlen(del), &r), 0);
    assert_non_null(strstr(r.body, "Error : unknown command !"));
    http_reply_free(&r);
    /* Other commands take any method. */
    const char *len = "PUT /sts/LENGTH?FILENAME=ghost HTTP/1.1\r\nHost: h\r\n"
                      "Connection: close\r\nContent-Length: 0\r\n\r\n";
    assert_int_equal(http_raw(d.port, len, strlen(len), &r), 0);
    assert_non_null(strstr(r.body, "Error : ghost not loaded yet !"));
    http_reply_free(&r);
    const char *help = "POST /sts HTTP/1.1\r\nHost: h\r\nConnection: close\r\n"
                       "Content-Length: 0\r\n\r\n";
    assert_int_equal(http_raw(d.port, help, strlen(help), &r), 0);
    assert_memory_equal(r.body, "<html><head><title>Help URL for the dataset</title><head>", 57);
    /* After the reference's prefix, lines a terminal can show: none over 1,000 bytes. */
    int lines = 0;
    size_t longest = 0;
    for (const char *l = r.body; *l; lines++) {
        size_t n = strcspn(l, "\n");
        longest = n > longest ? n : longest;
        l += n + (l[n] == '\n');
    }
    assert_true(lines > 100);
    assert_true(longest < 1000);
    http_reply_free(&r);
    expect_ko("/sts/READ/extra?FILENAME=logins.csv", "unknown command !");
    expect_ko("/stsREAD", "unknown command !");
    expect_ko("/dashboard", "unknown command !");     /* "/" is the dashboard's (test_dashboard) */
}

static void test_read_modes(void **state)
{
    expect_ok("/sts/INITFILE?FILENAME=logins.csv", "5");
    expect_ok("/sts/READ?FILENAME=logins.csv", "l1");                       /* -> l2..l5 l1 */
    expect_ok("/sts/READ?FILENAME=logins.csv&READ_MODE=LAST&KEEP=TRUE", "l1");
    expect_ok("/sts/READ?FILENAME=logins.csv&READ_MODE=LAST&KEEP=FALSE", "l1");
    expect_ok("/sts/READ?FILENAME=logins.csv&KEEP=FALSE", "l2");
    expect_ok("/sts/LENGTH?FILENAME=logins.csv", "3");
    /* Exact upper case only, as the reference. */
    expect_ko("/sts/READ?FILENAME=logins.csv&KEEP=true", "KEEP value has to be TRUE or FALSE !");
    expect_ko("/sts/READ?FILENAME=logins.csv&READ_MODE=first",
              "READ_MODE value has to be FIRST, LAST or RANDOM !");
    /* List state comes before parameter checks. */
    expect_ko("/sts/READ?FILENAME=ghost&READ_MODE=BAD", "ghost not loaded yet !");
    expect_ok("/sts/RESET?FILENAME=logins.csv", "");
    expect_ko("/sts/READ?FILENAME=logins.csv&READ_MODE=BAD", "No more line !");
}

static void test_random_keeps_order(void **state)
{
    expect_ok("/sts/INITFILE?FILENAME=logins.csv", "5");
    http_reply r;
    assert_int_equal(http_get(d.port, "/sts/READ?FILENAME=logins.csv&READ_MODE=RANDOM&KEEP=FALSE",
                              &r), 0);
    char taken[8] = "";
    assert_int_equal(sscanf(r.body, "<html><title>OK</title>\n<body>%7[^<]", taken), 1);
    http_reply_free(&r);
    /* The other four keep their order. */
    char want[512] = "<html><title>OK</title>\n<body>\n";
    const char *all[] = {"l1", "l2", "l3", "l4", "l5"};
    for (int i = 0; i < 5; i++)
        if (strcmp(all[i], taken) != 0) {
            strcat(want, all[i]);
            strcat(want, "<br />\n");
        }
    strcat(want, "</body>\n</html>");
    expect_get("/sts/READMULTI?FILENAME=logins.csv&NB_LINES=4&KEEP=FALSE", want);
}

static void test_readmulti(void **state)
{
    expect_ok("/sts/INITFILE?FILENAME=logins.csv", "5");
    /* LAST with KEEP=TRUE: l5, l4 are read, then appended in read order. */
    expect_get("/sts/READMULTI?FILENAME=logins.csv&NB_LINES=2&READ_MODE=LAST",
               "<html><title>OK</title>\n<body>\nl5<br />\nl4<br />\n</body>\n</html>");
    expect_get("/sts/READMULTI?FILENAME=logins.csv&NB_LINES=5",
               "<html><title>OK</title>\n<body>\nl1<br />\nl2<br />\nl3<br />\nl5<br />\n"
               "l4<br />\n</body>\n</html>");
    expect_ko("/sts/READMULTI?FILENAME=logins.csv&NB_LINES=2147483648",
              "Can't parse integer parameter NB_LINES : 2147483648 !");
    expect_ko("/sts/READMULTI?FILENAME=logins.csv&NB_LINES=%201",
              "Can't parse integer parameter NB_LINES :  1 !");
    expect_ko("/sts/READMULTI?FILENAME=logins.csv&NB_LINES=-2147483648",
              "Parameter NB_LINES must be greater or equals than 1 : -2147483648 !");
    expect_ko("/sts/READMULTI?FILENAME=logins.csv&NB_LINES=2147483647",
              "Number lines to read greater than file size, 2147483647 greater than 5 !");
    expect_ko("/sts/READMULTI?FILENAME=logins.csv&NB_LINES=x&KEEP=BAD",
              "KEEP value has to be TRUE or FALSE !");
}

static void test_add(void **state)
{
    expect_ok("/sts/ADD?FILENAME=add.csv&LINE=b", "");
    expect_ok("/sts/ADD?FILENAME=add.csv&LINE=a&ADD_MODE=FIRST", "");
    expect_ok("/sts/ADD?FILENAME=add.csv&LINE=c&ADD_MODE=LAST&UNIQUE=TRUE", "");
    expect_ko("/sts/ADD?FILENAME=add.csv&LINE=c&ADD_MODE=LAST&UNIQUE=TRUE",
              "ENTRY already exists !");
    expect_ko("/sts/ADD?FILENAME=add.csv&LINE=c&ADD_MODE=last", "ADD_MODE value has to be FIRST or LAST !");
    expect_ko("/sts/ADD?FILENAME=add.csv&ADD_MODE=BAD", "LINE parameter was missing !");
    expect_ko("/sts/ADD?LINE=x&ADD_MODE=BAD", "FILENAME parameter was missing !");
    expect_ko("/sts/ADD?FILENAME=a%00b&LINE=x", "Illegal character found !");
    expect_get("/sts/READMULTI?FILENAME=add.csv&NB_LINES=3",
               "<html><title>OK</title>\n<body>\na<br />\nb<br />\nc<br />\n</body>\n</html>");
    /* Names are just names for ADD: the reference allows any. */
    expect_ok("/sts/ADD?FILENAME=dir%2Fname&LINE=x", "");
    expect_ok("/sts/LENGTH?FILENAME=dir%2Fname", "1");
}

static void test_binary_line(void **state)
{
    /* Any byte but a line break (test_answers: CR and LF are refused). */
    expect_ok("/sts/ADD?FILENAME=bin.csv&LINE=a%00b%FF%09%0Bc&ADD_MODE=LAST", "");
    http_reply r;
    assert_int_equal(http_get(d.port, "/sts/READ?FILENAME=bin.csv&KEEP=FALSE", &r), 0);
    const char want[] = "<html><title>OK</title>\n<body>a\0b\xff\t\vc</body>\n</html>";
    assert_int_equal(r.body_len, sizeof want - 1);
    assert_memory_equal(r.body, want, sizeof want - 1);
    http_reply_free(&r);
}

static void test_find(void **state)
{
    expect_ok("/sts/INITFILE?FILENAME=dups.csv", "5");
    /* EQUALS takes the first occurrence and moves it to the tail. */
    expect_ok("/sts/FIND?FILENAME=dups.csv&LINE=x&FIND_MODE=EQUALS", "x");
    expect_get("/sts/READMULTI?FILENAME=dups.csv&NB_LINES=5",
               "<html><title>OK</title>\n<body>\na<br />\nb<br />\nx<br />\nc<br />\nx<br />\n"
               "</body>\n</html>");
    expect_ok("/sts/FIND?FILENAME=dups.csv&LINE=%5E%5Bbc%5D%24&FIND_MODE=REGEX_FIND&KEEP=FALSE",
              "b");
    expect_ok("/sts/LENGTH?FILENAME=dups.csv", "4");
    expect_ko("/sts/FIND?FILENAME=dups.csv&LINE=(&FIND_MODE=REGEX_MATCH", "Regex compile error !");
    expect_ko("/sts/FIND?FILENAME=dups.csv&LINE=x&FIND_MODE=equals",
              "FIND_MODE value has to be EQUALS, SUBSTRING, REGEX_FIND or REGEX_MATCH !");
    expect_ko("/sts/FIND?FILENAME=ghost&LINE=", "ghost not loaded yet !");
    /* An alternation must still match the whole line in REGEX_MATCH. */
    expect_ok("/sts/FIND?FILENAME=dups.csv&LINE=c%7Ccx&FIND_MODE=REGEX_MATCH", "c");
}

static void test_regex_limit(void **state)
{
    char target[8192] = "/sts/ADD?FILENAME=evil.csv&LINE=";
    size_t n = strlen(target);
    for (int i = 0; i < 3000; i++)
        target[n++] = 'a';
    strcpy(target + n, "%21&ADD_MODE=LAST");
    expect_ok(target, "");
    /* Exponential backtracking, and no literal pcre2 could use to give up early. */
    expect_ko("/sts/FIND?FILENAME=evil.csv&LINE=%5E%28a%7Caa%29%2B%24&FIND_MODE=REGEX_FIND",
              "Regex too complex for this line (match limit reached) !");
    /* The list is intact. */
    expect_ok("/sts/LENGTH?FILENAME=evil.csv", "1");
}

static void test_status_sorted(void **state)
{
    http_reply r;
    assert_int_equal(http_get(d.port, "/sts/STATUS", &r), 0);
    assert_memory_equal(r.body, "<html><title>OK</title>\n<body>\n", 31);
    /* Entries in strcmp order, and the page ends without a newline before </html>. */
    char prev[256] = "";
    for (char *line = strstr(r.body, "<body>\n") + 7; strncmp(line, "</body>", 7) != 0;) {
        char *end = strstr(line, "<br />\n");
        assert_non_null(end);
        char name[256];
        assert_int_equal(sscanf(line, "%255[^ ] = %*d", name), 1);
        assert_true(strcmp(prev, name) < 0);
        strcpy(prev, name);
        line = end + 7;
    }
    assert_non_null(strstr(r.body, "</body></html>"));
    http_reply_free(&r);
}

static void test_files(void **state)
{
    expect_ko("/sts/INITFILE?FILENAME=a%00b", "Illegal character found !");
    expect_ko("/sts/INITFILE?FILENAME=a%0Ab", "Illegal character found !");
    expect_ko("/sts/INITFILE?FILENAME=", "Illegal character found !");
    char link[600];
    snprintf(link, sizeof link, "%s/escape.csv", d.data);
    assert_int_equal(symlink("/etc/passwd", link), 0);
    expect_ko("/sts/INITFILE?FILENAME=escape.csv", "FILENAME leads outside the dataset directory !");
    expect_ok("/sts/INITFILE?FILENAME=logins.csv", "5");
    expect_ko("/sts/SAVE?FILENAME=out.csv&ADD_TIMESTAMP=false", "LinkedList not found !");
    expect_ok("/sts/READ?FILENAME=logins.csv&KEEP=FALSE", "l1");
    expect_ok("/sts/ADD?FILENAME=logins.csv&LINE=l1&ADD_MODE=LAST", "");
    expect_ok("/sts/SAVE?FILENAME=logins.csv&ADD_TIMESTAMP=false", "5");
    char *saved = td_read_file(&d, "logins.csv", NULL);
    assert_non_null(saved);
    assert_string_equal(saved, "l2\nl3\nl4\nl5\nl1\n");
    free(saved);
    /* With a timestamp: yyyyMMdd'T'HH'h'mm'm'ss's.'NAME */
    expect_ok("/sts/SAVE?FILENAME=logins.csv&ADD_TIMESTAMP=TRUE", "5");
    regex_t re;
    assert_int_equal(regcomp(&re, "^[0-9]{8}T[0-9]{2}h[0-9]{2}m[0-9]{2}s\\.logins\\.csv$",
                             REG_EXTENDED | REG_NOSUB), 0);
    DIR *dir = opendir(d.data);
    int found = 0, temp = 0;
    struct dirent *e;
    while ((e = readdir(dir))) {
        found += regexec(&re, e->d_name, 0, NULL, 0) == 0;
        temp += strstr(e->d_name, ".tmp") != NULL;
    }
    closedir(dir);
    regfree(&re);
    assert_int_equal(found, 1);
    assert_int_equal(temp, 0);
}

/* SAVE once, its page the reference's; the file it names (X-STS-File) into name. */
static void save_named(const char *target, char *name, size_t size)
{
    http_reply r;
    char page[256];
    assert_int_equal(http_get(d.port, target, &r), 0);
    assert_int_equal(r.status, 200);
    page_ok(page, sizeof page, "5");
    assert_string_equal(r.body, page);
    assert_int_equal(http_header(&r, "X-STS-File", name, size), 0);
    http_reply_free(&r);
}

/* Two timestamped SAVEs in one second leave two files, each answer naming its own: the
 * second is "<stamp>-2.<name>", never the first's file replaced. */
static void test_save_names_its_file(void **state)
{
    (void)state;
    expect_ok("/sts/INITFILE?FILENAME=logins.csv", "5");
    char a[256], b[256];
    for (int tries = 0;; tries++) {
        save_named("/sts/SAVE?FILENAME=logins.csv&ADD_TIMESTAMP=true", a, sizeof a);
        save_named("/sts/SAVE?FILENAME=logins.csv&ADD_TIMESTAMP=true", b, sizeof b);
        /* The same second, unless the clock turned between the two: then again. */
        if (strncmp(a, b, 18) == 0)
            break;
        assert_true(tries < 5);
    }
    /* The second of the second carries a suffix; the first may too, when the SAVE of
     * test_files took the bare name in the same second. */
    assert_string_not_equal(a, b);
    assert_int_equal(b[18], '-');
    assert_non_null(strstr(b + 18, ".logins.csv"));
    char *ta = td_read_file(&d, a, NULL), *tb = td_read_file(&d, b, NULL);
    assert_non_null(ta);
    assert_non_null(tb);
    assert_int_equal(strlen(ta), 15);
    assert_string_equal(ta, tb);
    free(ta);
    free(tb);
    /* Without a timestamp the header names the client's own name, replaced as before. */
    save_named("/sts/SAVE?FILENAME=logins.csv&ADD_TIMESTAMP=false", a, sizeof a);
    assert_string_equal(a, "logins.csv");
    /* JSON carries it as "file". */
    http_reply r;
    assert_int_equal(http_get(d.port, "/sts/SAVE?FILENAME=logins.csv&FORMAT=JSON", &r), 0);
    assert_int_equal(http_header(&r, "X-STS-File", b, sizeof b), 0);
    char field[300];
    snprintf(field, sizeof field, "\"file\":\"%s\"", b);
    assert_non_null(strstr(r.body, field));
    assert_non_null(strstr(r.body, "\"lines\":5"));
    http_reply_free(&r);
}

static void test_bad_requests(void **state)
{
    http_reply r;
    assert_int_equal(http_get(d.port, "/sts/ADD?FILENAME=x&LINE=%G0", &r), 0);
    assert_int_equal(r.status, 400);
    http_reply_free(&r);
    expect_ko("/sts/LENGTH?FILENAME=x", "x not loaded yet !");   /* nothing was created */
    const char *post = "POST /sts/ADD HTTP/1.1\r\nHost: h\r\nConnection: close\r\n"
                       "Content-Type: multipart/form-data; boundary=zz\r\n"
                       "Content-Length: 10\r\n\r\n--zz\r\nabcd";
    assert_int_equal(http_raw(d.port, post, strlen(post), &r), 0);
    assert_int_equal(r.status, 400);
    http_reply_free(&r);
}

static void test_config_page(void **state)
{
    http_reply r;
    assert_int_equal(http_get(d.port, "/sts/CONFIG", &r), 0);
    char want[64];
    snprintf(want, sizeof want, "<html><title>OK</title>\n<body>\nport=%d<br />\n", d.port);
    assert_memory_equal(r.body, want, strlen(want));
    assert_non_null(strstr(r.body, "<br />\ndatasetDirectory="));
    assert_non_null(strstr(r.body, "<br />\ncharsetEncodingHttpResponse=UTF-8<br />\n"));
    assert_non_null(strstr(r.body, "<br />\nstsd.threads="));
    assert_non_null(strstr(r.body, "</body></html>"));
    http_reply_free(&r);
}

static void test_stop(void **state)
{
    expect_ok("/sts/STOP", "");
    assert_int_equal(td_wait(&d, 5000), 0);
}

/* A server whose files and answers use legacy charsets. */
static void test_charsets(void **state)
{
    daemon_proc c;
    assert_int_equal(td_mkdirs(&c), 0);
    assert_int_equal(td_write_file(&c, "latin.csv", "Zo\xeb\n\xa4uro\n", 9), 0);
    const char *extra[] = {"-DjmeterPlugin.sts.charsetEncodingReadFile=ISO-8859-15",
                           "-DjmeterPlugin.sts.charsetEncodingWriteFile=windows-1252",
                           "-DjmeterPlugin.sts.charsetEncodingHttpResponse=ISO-8859-1", NULL};
    assert_int_equal(td_start(&c, extra), 0);
    http_reply r;
    assert_int_equal(http_get(c.port, "/sts/INITFILE?FILENAME=latin.csv", &r), 0);
    http_reply_free(&r);
    assert_int_equal(http_get(c.port, "/sts/READ?FILENAME=latin.csv", &r), 0);
    char v[128];
    assert_int_equal(http_header(&r, "Content-Type", v, sizeof v), 0);
    assert_string_equal(v, "text/html; charset=ISO-8859-1");
    assert_string_equal(r.body, "<html><title>OK</title>\n<body>Zo\xeb</body>\n</html>");
    http_reply_free(&r);
    /* 0xA4 in ISO-8859-15 is the euro sign; stored as UTF-8, written as windows-1252 0x80. */
    assert_int_equal(http_get(c.port, "/sts/SAVE?FILENAME=latin.csv&ADD_TIMESTAMP=false", &r), 0);
    http_reply_free(&r);
    char *saved = td_read_file(&c, "latin.csv", NULL);
    assert_non_null(saved);
    assert_string_equal(saved, "\x80uro\nZo\xeb\n");
    free(saved);
    assert_int_equal(td_stop(&c, 0), 0);
    td_cleanup(&c);
}

static void test_startup_errors(void **state)
{
    daemon_proc c;
    assert_int_equal(td_mkdirs(&c), 0);
    const char *bad_port[] = {"-DjmeterPlugin.sts.port=91x1", NULL};
    assert_int_not_equal(td_start(&c, bad_port), 0);
    const char *bad_charset[] = {"-DjmeterPlugin.sts.charsetEncodingReadFile=KLINGON", NULL};
    assert_int_not_equal(td_start(&c, bad_charset), 0);
    const char *missing_init[] = {"-DjmeterPlugin.sts.initFileAtStartup=nothere.csv", NULL};
    assert_int_not_equal(td_start(&c, missing_init), 0);
    td_cleanup(&c);
}

/* A port in use: the message names it and the ways to choose another, and comes before
 * any list is loaded (a big initFileAtStartup is not waited for in vain). */
static void test_busy_port(void **state)
{
    (void)state;
    daemon_proc c;
    assert_int_equal(td_mkdirs(&c), 0);
    td_write_file(&c, "a1.csv", "x\n", 2);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = td_sockaddr4("127.0.0.1");
    socklen_t len = sizeof sa;
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(fd, 1), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    char port[48];
    snprintf(port, sizeof port, "-DjmeterPlugin.sts.port=%d", ntohs(sa.sin_port));
    const char *busy[] = {port, "-DjmeterPlugin.sts.initFileAtStartup=a1.csv", NULL};
    int status;
    assert_int_not_equal(td_start_as(&c, "127.0.0.1", busy, &status), 0);
    assert_int_equal(status, 1);
    const char *log = td_log(&c);
    char said[96];
    snprintf(said, sizeof said, "port %d: Address already in use", ntohs(sa.sin_port));
    assert_non_null(strstr(log, said));
    assert_non_null(strstr(log, "make run RUN_ARGS=--port=N"));
    assert_non_null(strstr(log, "stsd --port N"));
    assert_non_null(strstr(log, "jmeterPlugin.sts.port=N"));
    assert_null(strstr(log, "INITFILE"));
    close(fd);
    td_cleanup(&c);
}

static void test_init_at_startup(void **state)
{
    daemon_proc c;
    assert_int_equal(td_mkdirs(&c), 0);
    td_write_file(&c, "a1.csv", "x\n", 2);
    td_write_file(&c, "a2.csv", "x\ny\n", 4);
    td_write_file(&c, "b.txt", "z\n", 2);
    const char *regex[] = {"-DjmeterPlugin.sts.initFileAtStartup=a[0-9]\\.csv",
                           "-DjmeterPlugin.sts.initFileAtStartupRegex=true", NULL};
    assert_int_equal(td_start(&c, regex), 0);
    http_reply r;
    assert_int_equal(http_get(c.port, "/sts/STATUS", &r), 0);
    assert_string_equal(r.body, "<html><title>OK</title>\n<body>\na1.csv = 1<br />\n"
                                "a2.csv = 2<br />\n</body></html>");
    http_reply_free(&r);
    /* One line is a line in the log, two are lines. */
    assert_non_null(strstr(td_log(&c), "INITFILE a1.csv: 1 line in "));
    assert_non_null(strstr(td_log(&c), "INITFILE a2.csv: 2 lines in "));
    assert_int_equal(td_stop(&c, 0), 0);
    const char *list[] = {"-DjmeterPlugin.sts.initFileAtStartup=b.txt, a2.csv", NULL};
    assert_int_equal(td_start(&c, list), 0);
    assert_int_equal(http_get(c.port, "/sts/STATUS", &r), 0);
    assert_string_equal(r.body, "<html><title>OK</title>\n<body>\na2.csv = 2<br />\n"
                                "b.txt = 1<br />\n</body></html>");
    http_reply_free(&r);
    assert_int_equal(td_stop(&c, 0), 0);
    td_cleanup(&c);
}

/* Starts stsd on a pseudo-terminal, as a user at a shell does; returns its pid and sets
 * *master, or -1. */
static pid_t start_on_terminal(daemon_proc *c, int *master, const char *daemon_flag)
{
    const char *bin = getenv("STSD") ? getenv("STSD") : "build/stsd";
    char ds[700], pf[700], port_file[600];
    snprintf(port_file, sizeof port_file, "%s/port", c->dir);
    snprintf(ds, sizeof ds, "--dataset-dir=%s", c->data);
    snprintf(pf, sizeof pf, "--port-file=%s", port_file);
    unlink(port_file);
    pid_t pid = forkpty(master, NULL, NULL, NULL);
    if (pid == 0) {
        execl(bin, bin, "--port=0", "--bind=127.0.0.1", ds, pf, daemon_flag, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; pid > 0 && i < 500; i++) {
        FILE *f = fopen(port_file, "r");
        if (f) {
            int ok = fscanf(f, "%d", &c->port) == 1;
            fclose(f);
            if (ok)
                return pid;
        }
        usleep(10000);
    }
    return -1;
}

/* Waits up to 5 s for pid; its exit status, or -1. Any other status than 0 shows the end
 * of what the daemon wrote to its terminal. */
static int wait_exit(pid_t pid, int master)
{
    static char tail[8192];
    size_t have = 0;
    for (int i = 0; i < 500; i++) {
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            if (rc != 0)
                fprintf(stderr, "stsd ended with %d; its terminal's last output:\n%.*s\n", rc,
                        (int)have, tail);
            return rc;
        }
        /* Keep the terminal's buffer from filling with the log, keeping its end. */
        struct pollfd p = {master, POLLIN, 0};
        if (poll(&p, 1, 10) > 0) {
            if (have > sizeof tail / 2) {
                memmove(tail, tail + have - sizeof tail / 4, sizeof tail / 4);
                have = sizeof tail / 4;
            }
            ssize_t n = read(master, tail + have, sizeof tail - have);
            if (n > 0)
                have += (size_t)n;
            else
                usleep(10000);
        }
    }
    kill(pid, SIGKILL);
    return -1;
}

static void test_enter_and_signals(void **state)
{
    daemon_proc c;
    assert_int_equal(td_mkdirs(&c), 0);
    int master;
    /* daemon=false on a terminal: ENTER stops it, with status 0. */
    pid_t pid = start_on_terminal(&c, &master, "-DjmeterPlugin.sts.daemon=false");
    assert_true(pid > 0);
    http_reply r;
    assert_int_equal(http_get(c.port, "/sts/ADD?FILENAME=a&LINE=x", &r), 0);
    http_reply_free(&r);
    assert_int_equal(write(master, "\n", 1), 1);
    assert_int_equal(wait_exit(pid, master), 0);
    close(master);
    /* daemon=true on a terminal: ENTER is ignored; SIGINT stops it, with status 0. */
    pid = start_on_terminal(&c, &master, "-DjmeterPlugin.sts.daemon=true");
    assert_true(pid > 0);
    assert_int_equal(write(master, "\n", 1), 1);
    usleep(200000);
    assert_int_equal(http_get(c.port, "/sts/STATUS", &r), 0);
    assert_string_equal(r.body, "<html><title>KO</title>\n<body>Error : Database was empty !"
                                "</body>\n</html>");
    http_reply_free(&r);
    kill(pid, SIGINT);
    assert_int_equal(wait_exit(pid, master), 0);
    close(master);
    td_cleanup(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_headers),
        cmocka_unit_test(test_methods),
        cmocka_unit_test(test_read_modes),
        cmocka_unit_test(test_random_keeps_order),
        cmocka_unit_test(test_readmulti),
        cmocka_unit_test(test_add),
        cmocka_unit_test(test_binary_line),
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_regex_limit),
        cmocka_unit_test(test_status_sorted),
        cmocka_unit_test(test_files),
        cmocka_unit_test(test_save_names_its_file),
        cmocka_unit_test(test_bad_requests),
        cmocka_unit_test(test_config_page),
        cmocka_unit_test(test_stop),
        cmocka_unit_test(test_charsets),
        cmocka_unit_test(test_startup_errors),
        cmocka_unit_test(test_busy_port),
        cmocka_unit_test(test_init_at_startup),
        cmocka_unit_test(test_enter_and_signals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
