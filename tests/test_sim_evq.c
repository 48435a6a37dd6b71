/*
 * test_sim_evq.c: the event order (time, priority, sequence), lazy cancellation, the run loop's
 * `until` bound and sim_stop, and the always-on check that refuses an event in the past.
 *
 * The order is checked three ways: hand-written ties; 100k random events with many ties against
 * a reference sort (qsort on the documented key); and random interleaved push/pop/cancel against
 * a brute-force minimum over the live set, with sim_evq_check along the way (once with some
 * events kept beside the heap by sim_evq_push_side).
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "evq.h"
#include "rng.h"
#include "sim.h"
#include "test_main.h"

/* Deterministic inputs for the tests (the random streams under test are not used for this). */
static uint64_t rnd_state;
static uint64_t rnd(void)
{
    return sim_splitmix64(rnd_state++);
}
static int64_t rnd_range(int64_t lo, int64_t hi) /* uniform in [lo, hi] */
{
    return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

static void nop(sim_ctx *ctx, void *obj, int64_t arg) {}

/* What the reference keeps of an event: the documented key, and arg as its identity. */
typedef struct ref {
    int64_t t;
    int prio;
    uint64_t seq;
    int64_t arg;
} ref;

static int ref_cmp(const void *a, const void *b)
{
    const ref *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->prio != y->prio)
        return x->prio < y->prio ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* n reference records (the caller frees them). */
static ref *refs(size_t n)
{
    ref *r = malloc(n * sizeof *r);
    assert_non_null(r);
    return r;
}

/* Pushes an event at (t, prio) carrying arg onto q, and records it in *r. */
static void push_ref(sim_evq *q, ref *r, int64_t t, int prio, int64_t arg)
{
    *r = (ref){.t = t, .prio = prio, .arg = arg};
    r->seq = sim_evq_push(q, t, prio, nop, NULL, arg);
}

static void expect_event(const sim_event *ev, const ref *r)
{
    assert_int_equal(ev->t, r->t);
    assert_int_equal(sim_event_prio(ev), r->prio);
    assert_int_equal(sim_event_seq(ev), r->seq);
    assert_int_equal(ev->arg, r->arg);
}

/* Equal times: lower priority first; equal (time, priority): push order. */
static void test_order_ties_by_hand(void **state)
{
    sim_evq *q = sim_evq_new();
    /* out = the position it must come out at: the two (5, 3) events keep their push order,
     * as do the three (10, 0) events */
    static const struct {
        int64_t t;
        int prio;
        int64_t out;
    } in[] = {
        {10, 0, 5}, {10, 0, 6}, {5, 3, 2},  {10, -1, 4},           {5, 3, 3},
        {0, 0, 0},  {10, 0, 7}, {5, -7, 1}, {20, SIM_PRIO_MIN, 8}, {20, SIM_PRIO_MAX, 10},
        {20, 0, 9},
    };
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++)
        sim_evq_push(q, in[i].t, in[i].prio, nop, NULL, in[i].out);
    assert_int_equal(sim_evq_size(q), sizeof in / sizeof in[0]);
    assert_int_equal(sim_evq_check(q), 0);
    sim_event ev;
    for (int64_t k = 0; k < (int64_t)(sizeof in / sizeof in[0]); k++) {
        assert_true(sim_evq_pop(q, &ev));
        assert_int_equal(ev.arg, k);
        assert_int_equal(sim_evq_check(q), 0);
    }
    assert_false(sim_evq_pop(q, &ev));
    assert_int_equal(sim_evq_peek_time(q), SIM_TIME_MAX);
    sim_evq_free(q);
}

/* Sequence numbers start at 1 and grow by one per push; the key encodes the priority. */
static void test_ids_and_key(void **state)
{
    sim_evq *q = sim_evq_new();
    for (uint64_t i = 1; i <= 1000; i++) {
        int prio = (int)rnd_range(SIM_PRIO_MIN, SIM_PRIO_MAX);
        assert_int_equal(sim_evq_push(q, 7, prio, nop, NULL, prio), i);
    }
    sim_event ev;
    int last = SIM_PRIO_MIN;
    uint64_t n = 0;
    while (sim_evq_pop(q, &ev)) {
        assert_int_equal(sim_event_prio(&ev), ev.arg);
        assert_true(sim_event_prio(&ev) >= last);
        last = sim_event_prio(&ev);
        n++;
    }
    assert_int_equal(n, 1000);
    sim_evq_free(q);
}

/* 100k random events, few distinct times and priorities (so most keys tie on (t, prio)): all
 * pushed, then all popped, must come out exactly in the reference sort. */
static void test_order_reference_sort_100k(void **state)
{
    enum { N = 100000 };
    ref *r = refs(N);
    sim_evq *q = sim_evq_new();
    for (int64_t i = 0; i < N; i++) {
        int64_t t = rnd_range(-50, 200);
        push_ref(q, &r[i], t, (int)rnd_range(-3, 3), i);
    }
    assert_int_equal(sim_evq_check(q), 0);
    assert_int_equal(sim_evq_size(q), N);
    qsort(r, N, sizeof *r, ref_cmp);
    sim_event ev;
    for (size_t i = 0; i < N; i++) {
        assert_true(sim_evq_pop(q, &ev));
        expect_event(&ev, &r[i]);
        if (i % 4096 == 0)
            assert_int_equal(sim_evq_check(q), 0);
    }
    assert_false(sim_evq_pop(q, &ev));
    assert_int_equal(sim_evq_size(q), 0);
    free(r);
    sim_evq_free(q);
}

/* Interleaved the way a simulation uses the queue: each new event is at or after the last one
 * popped, and at the same time only at an equal or higher priority (so it cannot precede the
 * event that is "running"). Then the pops form one increasing sequence that must equal the
 * reference sort of everything pushed. */
static void test_order_interleaved_reference_sort(void **state)
{
    enum { N = 100000 };
    ref *r = refs(N), *out = refs(N);
    sim_evq *q = sim_evq_new();
    size_t pushed = 0, popped = 0;
    int64_t now = 0;
    int now_prio = -3;
    sim_event ev;
    while (popped < N) {
        if (pushed < N && (sim_evq_size(q) == 0 || rnd() % 100 < 55)) {
            int64_t t = now + rnd_range(0, 3); /* many ties on time */
            push_ref(q, &r[pushed], t, (int)rnd_range(t == now ? now_prio : -3, 3),
                     (int64_t)pushed);
            pushed++;
        } else {
            assert_true(sim_evq_pop(q, &ev));
            now = ev.t;
            now_prio = sim_event_prio(&ev);
            out[popped++] = (ref){ev.t, now_prio, sim_event_seq(&ev), ev.arg};
        }
        if ((pushed + popped) % 1024 == 0)
            assert_int_equal(sim_evq_check(q), 0);
    }
    assert_false(sim_evq_pop(q, &ev));
    qsort(r, N, sizeof *r, ref_cmp);
    for (size_t i = 0; i < N; i++) {
        assert_int_equal(out[i].arg, r[i].arg);
        assert_int_equal(out[i].seq, r[i].seq);
    }
    free(out);
    free(r);
    sim_evq_free(q);
}

/* Arbitrary interleaving (times may precede the last pop) with cancellations, against a
 * brute-force reference: every pop must return the minimum of the live set; cancelling a
 * popped, already-cancelled, zero or never-issued id must change nothing. */
static void interleaved_bruteforce(int use_side)
{
    enum { OPS = 200000, CAP = 4096 };
    ref *live = refs(CAP);
    uint64_t *gone = malloc(OPS * sizeof *gone); /* ids popped or cancelled */
    assert_non_null(gone);
    size_t nlive = 0, ngone = 0;
    sim_evq *q = sim_evq_new();
    sim_event ev;
    for (int op = 0; op < OPS; op++) {
        uint64_t c = rnd() % 100;
        /* keep the live set between a few and a hundred events */
        if (nlive < 100 && (nlive < 5 || c < 45)) {
            int64_t t = rnd_range(0, 40);
            ref *r = &live[nlive++];
            push_ref(q, r, t, (int)rnd_range(-2, 2), op);
            if (use_side && c % 3 == 0) { /* the same event again, beside the heap if free */
                sim_evq_cancel(q, r->seq);
                r->seq = sim_evq_push_side(q, t, r->prio, nop, NULL, op);
            }
        } else if (c < 75) {
            size_t m = 0;
            for (size_t i = 1; i < nlive; i++)
                if (ref_cmp(&live[i], &live[m]) < 0)
                    m = i;
            assert_int_equal(sim_evq_peek_time(q), live[m].t);
            assert_true(sim_evq_pop(q, &ev));
            expect_event(&ev, &live[m]);
            gone[ngone++] = live[m].seq;
            live[m] = live[--nlive];
        } else if (c < 90) {
            size_t k = (size_t)rnd() % nlive;
            sim_evq_cancel(q, live[k].seq);
            gone[ngone++] = live[k].seq;
            live[k] = live[--nlive];
        } else if (c < 97 && ngone > 0) {
            sim_evq_cancel(q, gone[rnd() % ngone]); /* already ran or cancelled: no-op */
        } else {
            sim_evq_cancel(q, 0);
            sim_evq_cancel(q, UINT64_C(1) << 40); /* never issued */
        }
        assert_int_equal(sim_evq_size(q), nlive);
        if (op % 16 == 0) /* the walk covers tombstones too, which pile up at late times */
            assert_int_equal(sim_evq_check(q), 0);
    }
    while (nlive > 0) {
        size_t m = 0;
        for (size_t i = 1; i < nlive; i++)
            if (ref_cmp(&live[i], &live[m]) < 0)
                m = i;
        assert_true(sim_evq_pop(q, &ev));
        expect_event(&ev, &live[m]);
        live[m] = live[--nlive];
    }
    assert_false(sim_evq_pop(q, &ev));
    assert_int_equal(sim_evq_size(q), 0);
    free(gone);
    free(live);
    sim_evq_free(q);
}

static void test_interleaved_push_pop_cancel_bruteforce(void **state)
{
    interleaved_bruteforce(0);
}

/* The same with a third of the events pushed by sim_evq_push_side (beside the heap while no
 * other event is there): the order, the cancellations and the live count are the same as with
 * every event in the heap. */
static void test_interleaved_side_bruteforce(void **state)
{
    interleaved_bruteforce(1);
}

/* The side event keeps its place among the heap's by (time, priority, sequence): an arrival
 * stream beside the heap runs in the order of sim_schedule, ties included, and with the same
 * ids; a cancelled side event does not run, and the slot takes the next one. */
static int64_t side_log[16];
static int side_nlog;
static void log_arg(sim_ctx *ctx, void *obj, int64_t arg)
{
    side_log[side_nlog++] = arg;
}

static void test_side_event_order(void **state)
{
    sim_ctx *ctx = sim_new(1);
    side_nlog = 0;
    sim_schedule(ctx, 10, 0, log_arg, NULL, 1);
    sim_event_id s = sim_schedule_side(ctx, 10, 0, log_arg, NULL, 2); /* after 1: pushed later */
    assert_int_equal(s, 2);
    sim_schedule(ctx, 10, 0, log_arg, NULL, 3);
    sim_schedule_side(ctx, 5, 1, log_arg, NULL, 4); /* the slot is taken: into the heap */
    sim_schedule(ctx, 10, -1, log_arg, NULL, 5);
    assert_int_equal(sim_events_pending(ctx), 5);
    assert_int_equal(sim_next_time(ctx), 5);
    sim_run(ctx, SIM_TIME_MAX);
    int64_t want[] = {4, 5, 1, 2, 3};
    assert_int_equal(side_nlog, 5);
    for (int i = 0; i < 5; i++)
        assert_int_equal(side_log[i], want[i]);

    side_nlog = 0;
    s = sim_schedule_side(ctx, 20, 0, log_arg, NULL, 6);
    sim_schedule(ctx, 30, 0, log_arg, NULL, 7);
    sim_cancel(ctx, s);
    assert_int_equal(sim_events_pending(ctx), 1);
    assert_int_equal(sim_next_time(ctx), 30); /* the cancelled side event is dropped */
    sim_schedule_side(ctx, 25, 0, log_arg, NULL, 8);
    assert_int_equal(sim_advance_before(ctx, 25), 0);
    assert_int_equal(sim_run(ctx, 25), 1); /* until: the side event at 25, not the one at 30 */
    assert_int_equal(side_nlog, 1);
    assert_int_equal(side_log[0], 8);
    sim_run(ctx, SIM_TIME_MAX);
    assert_int_equal(side_nlog, 2);
    assert_int_equal(side_log[1], 7);
    sim_free(ctx);
}

/* Events that stay pending while many more are pushed and run (a timer far ahead among a
 * stream of short-lived events): the queue's pending set keeps only its most recent numbers as
 * bits and moves older pending ones aside; they must run in order, cancel once, and a second
 * cancel, or one of an old number already run, must change nothing. */
static void test_long_pending_events(void **state)
{
    enum { LONG = 8, SHORT = 50000 };
    sim_evq *q = sim_evq_new();
    sim_event ev;
    uint64_t id[LONG];
    for (int i = 0; i < LONG; i++) /* far ahead: time 1e9 + i, pushed first */
        id[i] = sim_evq_push(q, 1000000000 + i, 0, nop, NULL, -1 - i);
    uint64_t ran_short = 0;
    for (int64_t i = 0; i < SHORT; i++) {
        uint64_t s = sim_evq_push(q, i, 0, nop, NULL, i);
        if (i % 3 == 0) { /* some run at once, some are cancelled, some pile up a while */
            assert_true(sim_evq_pop(q, &ev));
            assert_true(ev.arg >= 0); /* a short one */
        } else if (i % 3 == 1) {
            sim_evq_cancel(q, s);
            sim_evq_cancel(q, s); /* again: no-op */
        }
        if (i == 20000) {
            ran_short = s;
            sim_evq_cancel(q, id[1]); /* an old pending number, long out of the recent ones */
            sim_evq_cancel(q, id[1]);
        }
        if (i % 1000 == 0)
            assert_int_equal(sim_evq_check(q), 0);
    }
    /* the short ones left, then the long ones but id[1], in time order */
    int64_t last = -1;
    while (sim_evq_size(q) > LONG - 1) {
        assert_true(sim_evq_pop(q, &ev));
        assert_true(ev.t > last && ev.t < SHORT);
        last = ev.t;
    }
    sim_evq_cancel(q, ran_short); /* long run or cancelled: no-op */
    assert_int_equal(sim_evq_size(q), LONG - 1);
    for (int i = 0; i < LONG; i++) {
        if (i == 1)
            continue;
        assert_int_equal(sim_evq_peek_time(q), 1000000000 + i);
        assert_true(sim_evq_pop(q, &ev));
        assert_int_equal(ev.arg, -1 - i);
        assert_int_equal(sim_event_seq(&ev), id[i]);
        sim_evq_cancel(q, id[i]); /* already run: no-op */
        assert_int_equal(sim_evq_check(q), 0);
    }
    assert_false(sim_evq_pop(q, &ev));
    assert_int_equal(sim_evq_size(q), 0);
    sim_evq_free(q);
}

/* ---- the run loop ---- */

typedef struct trace {
    int64_t arg[64];
    int64_t t[64];
    int n;
    sim_event_id victim; /* cancelled by the handler with arg 100 */
    int stop_at;         /* handler with this arg calls sim_stop */
} trace;

static void record(sim_ctx *ctx, void *obj, int64_t arg)
{
    trace *tr = obj;
    assert_true(tr->n < 64);
    tr->arg[tr->n] = arg;
    tr->t[tr->n] = sim_now(ctx);
    tr->n++;
    if (arg == 100)
        sim_cancel(ctx, tr->victim);
    if (arg == tr->stop_at)
        sim_stop(ctx);
}

static void test_cancel_semantics(void **state)
{
    sim_ctx *ctx = sim_new(1);
    trace tr = {.stop_at = -1};
    sim_event_id a = sim_schedule(ctx, 10, 0, record, &tr, 1);
    sim_event_id b = sim_schedule(ctx, 20, 0, record, &tr, 2);
    sim_event_id c = sim_schedule(ctx, 30, 0, record, &tr, 3);
    assert_int_not_equal(a, 0);
    assert_int_equal(sim_events_pending(ctx), 3);

    sim_cancel(ctx, a); /* the head */
    assert_int_equal(sim_events_pending(ctx), 2);
    sim_cancel(ctx, a); /* twice: no-op */
    sim_cancel(ctx, 0); /* never valid: no-op */
    assert_int_equal(sim_events_pending(ctx), 2);

    assert_int_equal(sim_run(ctx, 20), 1); /* runs b only */
    assert_int_equal(tr.n, 1);
    assert_int_equal(tr.arg[0], 2);
    assert_int_equal(sim_now(ctx), 20);

    sim_cancel(ctx, b); /* already ran: no-op, and must not hide anything later */
    sim_cancel(ctx, a);
    assert_int_equal(sim_events_pending(ctx), 1);
    sim_event_id d = sim_schedule(ctx, 25, 0, record, &tr, 4);
    assert_int_equal(sim_events_pending(ctx), 2);

    assert_int_equal(sim_run(ctx, SIM_TIME_MAX), 2);
    assert_int_equal(tr.n, 3);
    assert_int_equal(tr.arg[1], 4);
    assert_int_equal(tr.arg[2], 3);
    sim_cancel(ctx, c);
    sim_cancel(ctx, d);
    assert_int_equal(sim_events_pending(ctx), 0);
    assert_int_equal(sim_events_run(ctx), 3);
    assert_int_equal(sim_run(ctx, SIM_TIME_MAX), 0);
    sim_free(ctx);
}

/* A handler cancels an event due at the same time: the tombstone is skipped. */
static void test_cancel_from_handler(void **state)
{
    sim_ctx *ctx = sim_new(1);
    trace tr = {.stop_at = -1};
    sim_schedule(ctx, 5, 0, record, &tr, 100);
    tr.victim = sim_schedule(ctx, 5, 0, record, &tr, 7);
    sim_schedule(ctx, 5, 1, record, &tr, 8);
    assert_int_equal(sim_run(ctx, SIM_TIME_MAX), 2);
    assert_int_equal(tr.n, 2);
    assert_int_equal(tr.arg[0], 100);
    assert_int_equal(tr.arg[1], 8);
    sim_free(ctx);
}

static void count(sim_ctx *ctx, void *obj, int64_t arg)
{
    int64_t *seen = obj;
    assert_true(arg > seen[0]); /* ascending args = ascending (t, seq) here */
    seen[0] = arg;
    seen[1]++;
}

/* Cancel every other of 10k events (in a shuffled order), then run: the rest run in order. */
static void test_cancel_many_then_run(void **state)
{
    enum { N = 10000 };
    sim_ctx *ctx = sim_new(1);
    sim_event_id *id = malloc(N * sizeof *id);
    size_t *perm = malloc(N / 2 * sizeof *perm);
    assert_non_null(id);
    assert_non_null(perm);
    int64_t seen[2] = {-1, 0};
    for (int64_t i = 0; i < N; i++)
        id[i] = sim_schedule(ctx, i / 3, 0, count, seen, i);
    for (size_t i = 0; i < N / 2; i++)
        perm[i] = 2 * i;
    for (size_t i = N / 2 - 1; i > 0; i--) {
        size_t j = (size_t)(rnd() % (i + 1)), tmp = perm[i];
        perm[i] = perm[j];
        perm[j] = tmp;
    }
    for (size_t i = 0; i < N / 2; i++)
        sim_cancel(ctx, id[perm[i]]);
    assert_int_equal(sim_events_pending(ctx), N / 2);
    assert_int_equal(sim_run(ctx, SIM_TIME_MAX), N / 2);
    assert_int_equal(seen[1], N / 2);
    assert_int_equal(sim_events_run(ctx), N / 2);
    assert_int_equal(sim_events_pending(ctx), 0);
    free(perm);
    free(id);
    sim_free(ctx);
}

/* `until` is inclusive; tombstones beyond it are not counted; the clock stays at the last
 * event run. */
static void test_run_until(void **state)
{
    sim_ctx *ctx = sim_new(1);
    trace tr = {.stop_at = -1};
    sim_schedule(ctx, 10, 0, record, &tr, 1);
    sim_schedule(ctx, 20, 1, record, &tr, 3);
    sim_schedule(ctx, 20, 0, record, &tr, 2);
    sim_event_id x = sim_schedule(ctx, 25, 0, record, &tr, 9);
    sim_schedule(ctx, 30, 0, record, &tr, 4);
    assert_int_equal(sim_run(ctx, 9), 0);
    assert_int_equal(sim_now(ctx), 0);
    assert_int_equal(sim_run(ctx, 20), 3);
    assert_int_equal(sim_now(ctx), 20);
    sim_cancel(ctx, x);
    assert_int_equal(sim_run(ctx, 29), 0);
    assert_int_equal(sim_now(ctx), 20);
    assert_int_equal(sim_run(ctx, 30), 1);
    assert_int_equal(tr.n, 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(tr.arg[i], i + 1);
    assert_int_equal(tr.t[1], 20);
    assert_int_equal(tr.t[3], 30);
    assert_int_equal(sim_run(ctx, SIM_TIME_MAX), 0);
    sim_free(ctx);
}

/* sim_stop returns after the current event; the next sim_run carries on from there. */
static void test_stop(void **state)
{
    sim_ctx *ctx = sim_new(1);
    trace tr = {.stop_at = 2};
    for (int64_t i = 1; i <= 5; i++)
        sim_schedule(ctx, 10 * i, 0, record, &tr, i);
    sim_schedule(ctx, 20, 1, record, &tr, 22); /* same time as the stopper, runs later */
    assert_int_equal(sim_run(ctx, SIM_TIME_MAX), 2);
    assert_int_equal(tr.n, 2);
    assert_int_equal(sim_now(ctx), 20);
    assert_int_equal(sim_events_pending(ctx), 4);
    tr.stop_at = -1;
    assert_int_equal(sim_run(ctx, SIM_TIME_MAX), 4);
    assert_int_equal(tr.arg[2], 22);
    assert_int_equal(tr.arg[5], 5);
    sim_free(ctx);
}

/* Handlers schedule at their own time (prio below theirs included): it runs next, not before. */
static void chain(sim_ctx *ctx, void *obj, int64_t arg)
{
    trace *tr = obj;
    tr->arg[tr->n] = arg;
    tr->t[tr->n++] = sim_now(ctx);
    if (arg < 5)
        sim_schedule(ctx, sim_now(ctx), arg % 2 ? -5 : 5, chain, tr, arg + 1);
}

static void test_schedule_now_from_handler(void **state)
{
    sim_ctx *ctx = sim_new(1);
    trace tr = {.stop_at = -1};
    sim_schedule(ctx, 3, 0, chain, &tr, 0);
    sim_schedule(ctx, 4, -100, record, &tr, 50);
    assert_int_equal(sim_run(ctx, SIM_TIME_MAX), 7);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(tr.arg[i], i);
        assert_int_equal(tr.t[i], 3);
    }
    assert_int_equal(tr.arg[6], 50);
    sim_free(ctx);
}

#ifdef SIM_DEBUG
static void checker(void *arg)
{
    (*(int *)arg)++;
}
#endif

/* The debug build calls the check hook after every event. */
static void test_check_hook(void **state)
{
#ifdef SIM_DEBUG
    sim_ctx *ctx = sim_new(1);
    int calls = 0;
    trace tr = {.stop_at = -1};
    sim_set_check(ctx, checker, &calls);
    for (int64_t i = 0; i < 10; i++)
        sim_schedule(ctx, i, 0, record, &tr, i);
    sim_cancel(ctx, 3); /* ids are 1..10 */
    assert_int_equal(sim_run(ctx, SIM_TIME_MAX), 9);
    assert_int_equal(calls, 9);
    sim_free(ctx);
#else
    skip();
#endif
}

/* ---- always-on checks: run the failing call in a child and expect SIGABRT ---- */

typedef void (*child_fn)(void);

/* Runs fn in a child with stderr captured; returns 1 when it died of SIGABRT and its stderr
 * contains want. */
static int aborts_with(child_fn fn, const char *want)
{
    int fd[2];
    if (pipe(fd) != 0)
        return 0;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return 0;
    if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], 2);
        fn();
        _exit(0); /* not reached when the check fires */
    }
    close(fd[1]);
    char buf[4096];
    size_t len = 0;
    ssize_t k;
    while ((k = read(fd[0], buf + len, sizeof buf - 1 - len)) > 0)
        len += (size_t)k;
    buf[len] = 0;
    close(fd[0]);
    int status;
    if (waitpid(pid, &status, 0) != pid)
        return 0;
    if (len > 0)
        print_message("child stderr: %s", buf);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT && strstr(buf, want) != NULL;
}

static void schedule_in_past(void)
{
    sim_ctx *ctx = sim_new(1);
    trace tr = {.stop_at = -1};
    sim_schedule(ctx, 100, 0, record, &tr, 1);
    sim_run(ctx, SIM_TIME_MAX);
    sim_schedule(ctx, 99, 0, record, &tr, 2);
}

static void schedule_prio_out_of_range(void)
{
    sim_ctx *ctx = sim_new(1);
    sim_schedule(ctx, 0, SIM_PRIO_MAX + 1, nop, NULL, 0);
}

static void schedule_at_now_is_fine(void)
{
    sim_ctx *ctx = sim_new(1);
    trace tr = {.stop_at = -1};
    sim_schedule(ctx, 100, 0, record, &tr, 1);
    sim_run(ctx, SIM_TIME_MAX);
    sim_schedule(ctx, 100, SIM_PRIO_MIN, record, &tr, 2);
    sim_free(ctx);
}

static void test_check_refuses_past_time(void **state)
{
    assert_true(aborts_with(schedule_in_past, "t >= ctx->now (t=100 ns, event 1)"));
    assert_true(aborts_with(schedule_prio_out_of_range, "prio <= SIM_PRIO_MAX"));
    assert_false(aborts_with(schedule_at_now_is_fine, ""));
}

/* sim_advance_before moves the clock to t only while no pending event comes at or before t (a
 * cancelled one does not count), and leaves it otherwise. */
static void test_advance_before(void **state)
{
    sim_ctx *ctx = sim_new(1);
    sim_event_id a = sim_schedule(ctx, 10, 0, nop, NULL, 0);
    assert_int_equal(sim_advance_before(ctx, 5), 1);
    assert_int_equal(sim_now(ctx), 5);
    assert_int_equal(sim_advance_before(ctx, 10), 0); /* the event at 10 comes first */
    assert_int_equal(sim_now(ctx), 5);
    assert_int_equal(sim_advance_before(ctx, 12), 0);
    sim_cancel(ctx, a);
    assert_int_equal(sim_advance_before(ctx, 12), 1);
    assert_int_equal(sim_now(ctx), 12);
    assert_int_equal(sim_advance_before(ctx, SIM_TIME_MAX - 1), 1); /* nothing pending */
    sim_free(ctx);
}

LLMSIM_TEST_MAIN(NULL, NULL, test_order_ties_by_hand, test_ids_and_key,
                 test_order_reference_sort_100k, test_order_interleaved_reference_sort,
                 test_interleaved_push_pop_cancel_bruteforce, test_cancel_semantics,
                 test_long_pending_events, test_cancel_from_handler, test_cancel_many_then_run,
                 test_run_until, test_stop, test_schedule_now_from_handler, test_check_hook,
                 test_check_refuses_past_time, test_advance_before,
                 test_interleaved_side_bruteforce, test_side_event_order)
