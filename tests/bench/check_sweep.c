/*
 * check_sweep.c -- the one sweep runner (bench/harness/bench_sweep.c),
 * linked in: the cross product counts as an odometer, the last list
 * fastest; every round runs every item once, in the order of the list
 * without shuffle and in an order of its own with it, the same for the
 * same seed; an item's place and the total are what the JSON lines
 * number runs by; a run that asks to stop stops the sweep; and a signal,
 * once the handler is installed, stops it too and calls the hook with
 * the signal.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "testutil.h"

START_TEST(test_cross_pick)
{
    const size_t counts[] = {2, 1, 3};
    size_t pick[3], seen[6][3];
    for (size_t idx = 0; idx < 6; idx++) {
        bench_cross_pick(counts, 3, idx, pick);
        memcpy(seen[idx], pick, sizeof pick);
    }
    ck_assert(seen[0][0] == 0 && seen[0][2] == 0);
    ck_assert(seen[1][0] == 0 && seen[1][2] == 1); /* the last list fastest */
    ck_assert(seen[3][0] == 1 && seen[3][2] == 0);
    ck_assert(seen[5][0] == 1 && seen[5][1] == 0 && seen[5][2] == 2);
}
END_TEST

/* A repeatable flag's values, joined by ';' in the order given, are
 * owned by the parsed command line: each join replaces the one before it
 * and bench_cli_free frees the last (under AddressSanitizer a join left
 * behind fails this test as a leak). */
START_TEST(test_repeated_flag_joined)
{
    char *argv[] = {"bench", "--pg-set", "a=1", "--pg-set", "b=2", "--pg-set", "c=3", "--engine", "commitlab", NULL};
    struct bench_cli c;
    bench_cli_parse("bench", 9, argv, 0, &c);
    ck_assert_str_eq(c.base.pg_set, "a=1;b=2;c=3");
    ck_assert_ptr_eq(c.base.pg_set, c.joined[K_PG_SET]);
    ck_assert_uint_eq(c.n, 1);
    ck_assert_str_eq(c.cfgs[0].pg_set, "a=1;b=2;c=3");
    bench_cli_free(&c);
    ck_assert_ptr_null(c.joined[K_PG_SET]);
}
END_TEST

struct trace {
    size_t order[64], pos[64], n;
    unsigned rounds[64];
    size_t stop_at;               /* stop when this many have run (0: never) */
};

static int record(struct bench_sweep *s, size_t i, unsigned round)
{
    struct trace *t = s->ctx;
    ck_assert_uint_eq(s->item, i);
    ck_assert_uint_eq(s->round, round);
    t->order[t->n] = i;
    t->pos[t->n] = s->pos;
    t->rounds[t->n] = round;
    t->n++;
    return t->stop_at && t->n == t->stop_at ? -1 : 0;
}

static void sweep(struct trace *t, size_t n, unsigned rounds, int shuffle, uint64_t seed, int want)
{
    memset(t->order, 0, sizeof t->order);
    t->n = 0;
    struct bench_sweep s = {.n = n, .rounds = rounds, .shuffle = shuffle, .seed = seed, .run = record, .ctx = t,
                            .quiet = 1};
    ck_assert_int_eq(bench_sweep_run(&s), want);
    ck_assert_uint_eq(s.total, n * (rounds ? rounds : 1));
}

START_TEST(test_rounds)
{
    struct trace a, b;
    a.stop_at = b.stop_at = 0;
    sweep(&a, 5, 1, 0, 7, 0);
    ck_assert_uint_eq(a.n, 5);
    for (size_t i = 0; i < 5; i++)
        ck_assert(a.order[i] == i && a.pos[i] == i); /* no shuffle: the list's order */

    sweep(&a, 8, 3, 1, 7, 0);
    ck_assert_uint_eq(a.n, 24);
    int shuffled = 0;
    for (unsigned r = 0; r < 3; r++) {
        int hit[8] = {0};
        for (size_t i = 0; i < 8; i++) {
            ck_assert_uint_eq(a.rounds[r * 8 + i], r);
            ck_assert_uint_eq(a.pos[r * 8 + i], r * 8 + i);
            hit[a.order[r * 8 + i]]++;
            shuffled |= a.order[r * 8 + i] != i;
        }
        for (size_t i = 0; i < 8; i++)
            ck_assert_msg(hit[i] == 1, "round %u ran item %zu %d times", r, i, hit[i]);
    }
    ck_assert_msg(shuffled, "three rounds of eight in the list's order");
    sweep(&b, 8, 3, 1, 7, 0);
    ck_assert(memcmp(a.order, b.order, sizeof a.order) == 0); /* the same seed, the same orders */
    sweep(&b, 8, 3, 1, 8, 0);
    ck_assert(memcmp(a.order, b.order, sizeof a.order) != 0);
}
END_TEST

START_TEST(test_run_stops)
{
    struct trace t = {.stop_at = 3};
    sweep(&t, 5, 2, 0, 1, -1);
    ck_assert_uint_eq(t.n, 3);
}
END_TEST

static int stopped_with, ran;

static void on_stop(struct bench_sweep *s, int sig)
{
    (void)s;
    stopped_with = sig;
}

static int raise_at_second(struct bench_sweep *s, size_t i, unsigned round)
{
    (void)i;
    (void)round;
    ran++;
    if (s->pos == 1)
        raise(SIGTERM);
    return 0;
}

/* Last: an interrupt cannot be taken back in this process. */
START_TEST(test_signal_stops)
{
    bench_stop_on_signals();
    struct bench_sweep s = {.n = 4, .run = raise_at_second, .on_stop = on_stop, .quiet = 1};
    ck_assert_int_eq(bench_sweep_run(&s), -EINTR);
    ck_assert_int_eq(stopped_with, SIGTERM);
    ck_assert_int_eq(bench_stop_signal(), SIGTERM);
    ck_assert_int_eq(ran, 2); /* the third item never started */
    ck_assert(bench_interrupted());
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bench/sweep");
    TCase *tc = tcase_create("sweep");
    tcase_add_test(tc, test_cross_pick);
    tcase_add_test(tc, test_repeated_flag_joined);
    tcase_add_test(tc, test_rounds);
    tcase_add_test(tc, test_run_stops);
    tcase_add_test(tc, test_signal_stops);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
