/* SPDX-License-Identifier: Apache-2.0 */
/* test_cluster_health.c - the leader's verdicts on which nodes answer, their table as a
 * raft entry applied on every node, and what each node shows (cluster_health.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cluster/cluster_entry.h"
#include "cluster/cluster_health.h"
#include "base/clock.h"

/* A cluster of nodes 1, 2, 3 as this node (self) sees it, raft not started: what raft
 * says of each node is given to cluster_health_note by hand. */
static void setup(cluster *c, unsigned self)
{
    memset(c, 0, sizeof *c);
    c->self = self;
    c->election_ms = 100;
    c->n = 3;
    for (unsigned i = 0; i < 3; i++)
        c->nodes[i].id = i + 1;
}

static void stats_of(cluster *c, cluster_stats *s, int leading)
{
    memset(s, 0, sizeof *s);
    s->n = 3;
    s->leader = leading ? c->self : 0;
    for (unsigned i = 0; i < 3; i++)
        s->nodes[i].id = i + 1;
    cluster_health_fill(c, s, leading);
}

static void put_item(uint8_t *p, uint64_t id, uint64_t since_ms, int up)
{
    cluster_put64(p, id);
    cluster_put64(p + 8, since_ms << 1 | (uint64_t)(up != 0));
}

static void test_leader_verdicts(void **state)
{
    static cluster c;
    cluster_stats s;
    (void)state;
    setup(&c, 1);
    int64_t t = clock_now_ms();
    /* A leadership begins: every node up, heard from now. */
    for (unsigned id = 1; id <= 3; id++)
        assert_int_equal(cluster_health_note(&c, id, 1, t), 0);
    stats_of(&c, &s, 1);
    for (unsigned i = 0; i < 3; i++)
        assert_string_equal(s.nodes[i].health, "up");
    /* Three election timeouts of silence are not yet too many; one more millisecond is. */
    assert_int_equal(cluster_health_note(&c, 3, 0, t + 300), 0);
    assert_int_equal(cluster_health_note(&c, 2, 1, t + 301), 0);
    assert_int_equal(cluster_health_note(&c, 3, 0, t + 301), 1);
    assert_int_equal(cluster_health_note(&c, 3, 0, t + 400), 0);     /* said once */
    stats_of(&c, &s, 1);
    assert_string_equal(s.nodes[1].health, "up");
    assert_string_equal(s.nodes[2].health, "unreachable");
    assert_true(s.nodes[2].heard_ms > s.nodes[1].heard_ms);
    /* Heard from again: up at once, said once. */
    assert_int_equal(cluster_health_note(&c, 3, 1, t + 500), 1);
    assert_int_equal(cluster_health_note(&c, 3, 1, t + 600), 0);
    stats_of(&c, &s, 1);
    assert_string_equal(s.nodes[2].health, "up");
    /* A follower has no verdicts of its own: unknown, but itself up. */
    cluster_health_tick(&c, 0, 0);
    stats_of(&c, &s, 0);
    assert_null(s.nodes[1].health);
    assert_string_equal(s.nodes[0].health, "up");
}

static void test_table_applied(void **state)
{
    static cluster c;
    cluster_stats s;
    uint8_t e[3 * 16];
    (void)state;
    setup(&c, 2);
    put_item(e, 1, 1796660700311ull, 0);
    put_item(e + 16, 2, 1796660600000ull, 1);
    put_item(e + 32, 3, 1796660600000ull, 1);
    assert_int_equal(cluster_health_apply(&c, e, sizeof e), 0);
    stats_of(&c, &s, 0);
    assert_string_equal(s.nodes[0].health, "unreachable");
    assert_true(s.nodes[0].health_since > 1796660700.3 && s.nodes[0].health_since < 1796660700.4);
    assert_string_equal(s.nodes[2].health, "up");
    /* Malformed tables change nothing: a cut item, a node 0, more nodes than there may be. */
    assert_int_equal(cluster_health_apply(&c, e, sizeof e - 1), -1);
    uint8_t bad[16];
    put_item(bad, 0, 5, 1);
    assert_int_equal(cluster_health_apply(&c, bad, sizeof bad), -1);
    static uint8_t many[(CONF_CLUSTER_MAX + 1) * 16];
    for (unsigned i = 0; i <= CONF_CLUSTER_MAX; i++)
        put_item(many + 16 * i, i + 1, 5, 1);
    assert_int_equal(cluster_health_apply(&c, many, sizeof many), -1);
    stats_of(&c, &s, 0);
    assert_string_equal(s.nodes[0].health, "unreachable");
    /* A later table without node 3: not known any more. */
    assert_int_equal(cluster_health_apply(&c, e, 32), 0);
    stats_of(&c, &s, 0);
    assert_null(s.nodes[2].health);
    assert_string_equal(s.nodes[1].health, "up");    /* itself */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_leader_verdicts),
        cmocka_unit_test(test_table_applied),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
