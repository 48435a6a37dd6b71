/*
 * test_faults.c: faults injected into replicas: a crash loses no request with retries on and
 * loses the ones it held with them off; retried requests keep their original arrival; requests
 * wait for a replica when none is ready; a slowdown slows; same seed, same results; the
 * refusals.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "study.h"
#include "study_util.h"
#include "test_main.h"

#define SHARED LLMSIM_SOURCE_DIR "/scenarios/shared_prefix.yaml"

/* vLLM with prefix caching (shared_prefix.yaml, 400 requests, here at 20/s); a crash of replica
 * 0 at 10 s. */
#define RATE "workload.arrival.rate=20"
#define CRASH "faults=[{at_s: 10, replica: 0, kind: crash}]"

/* What a run's requests did, summed by a recorder. */
typedef struct tally {
    int64_t finished, lost, retried_ok, late_first; /* late_first: retried, first token after
                                                       the replacement was ready */
    double crash_ns, ready_ns;
    int64_t max_ttft_ns;    /* of the retried requests */
    uint64_t hash;          /* of every request's id, status and times */
    int64_t last_iter[8];   /* per replica: the last iteration recorded, + 1 */
    int32_t last_span[400]; /* per request: its last span recorded, + 1 */
} tally;

/* Iterations and spans are recorded once each, in order: the store's keys stay unique. */
static void on_iteration(void *st, const eng_iter_rec *it)
{
    tally *t = st;
    assert_true(it->replica < 8 && it->iter + 1 > t->last_iter[it->replica]);
    t->last_iter[it->replica] = it->iter + 1;
}

static void on_span(void *st, const eng_span_rec *sp)
{
    tally *t = st;
    assert_true(sp->req < 400 && sp->span + 1 > t->last_span[sp->req]);
    t->last_span[sp->req] = sp->span + 1;
}

static void on_request(void *st, const eng_request *rq)
{
    tally *t = st;
    t->finished += rq->status == ENG_RQ_FINISHED;
    t->lost += rq->status == ENG_RQ_REJECTED && rq->reject == ENG_REJECT_FAULT;
    if (rq->attempts > 1 && rq->status == ENG_RQ_FINISHED) {
        t->retried_ok++;
        assert_true(rq->t_arrival < t->crash_ns); /* its arrival is the original one */
        t->late_first += rq->t_first_token >= t->ready_ns;
        if (rq->t_first_token - rq->t_arrival > t->max_ttft_ns)
            t->max_ttft_ns = rq->t_first_token - rq->t_arrival;
    }
    uint64_t v[] = {(uint64_t)rq->id, (uint64_t)rq->status, (uint64_t)rq->t_first_token,
                    (uint64_t)rq->t_finish, (uint64_t)rq->replica};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        t->hash = (t->hash ^ v[i]) * UINT64_C(0x100000001b3);
}

/* Runs path with the overrides (NULL-terminated), every engine walker after every event in
 * debug builds; the result is the caller's. */
static study_result *run(const char *path, const char *const *sets, tally *t)
{
    scn_scenario s;
    su_load(path, sets, &s);
    study_result *r = test_calloc(1, sizeof *r);
    static const eng_recorder_ops rec = {
        .on_request = on_request, .on_iteration = on_iteration, .on_span = on_span};
    su_run(&s, &(study_hooks){.check_every = 1, .rec = t ? &rec : NULL, .rec_st = t}, r);
    scn_free(&s);
    return r;
}

static void test_crash_retried_loses_nothing(void **state)
{
    (void)state;
    const char *sets[] = {"replicas=2", RATE, CRASH, NULL};
    tally t = {.crash_ns = 10e9};
    study_result *r = run(SHARED, sets, &t);
    print_message("crash with retries: %g retried, %g lost, %g completed\n",
                  study_metric(r, "fault_retried"), study_metric(r, "fault_lost"),
                  study_metric(r, "completed"));
    assert_true(study_metric(r, "fault_crashes") == 1);
    assert_true(study_metric(r, "fault_retried") > 0); /* it held requests */
    assert_true(study_metric(r, "fault_lost") == 0);
    assert_true(study_metric(r, "completed") == 400 && study_metric(r, "rejected") == 0);
    assert_int_equal(t.finished, 400);
    assert_int_equal(t.retried_ok, (int64_t)study_metric(r, "fault_retried"));
    test_free(r);
}

static void test_crash_without_retries_loses(void **state)
{
    (void)state;
    const char *off[] = {"replicas=2", RATE, CRASH, "fault_retries.enabled=false", NULL};
    const char *once[] = {"replicas=2", RATE, CRASH, "fault_retries.max_attempts=1", NULL};
    tally t = {.crash_ns = 10e9}, u = {.crash_ns = 10e9};
    study_result *r = run(SHARED, off, &t), *q = run(SHARED, once, &u);
    double lost = study_metric(r, "fault_lost");
    assert_true(lost > 0 && study_metric(r, "fault_retried") == 0);
    /* a lost request is a rejection, with its reason, wherever rejections are counted */
    assert_true(study_metric(r, "rejected") == lost);
    assert_true(study_metric(r, "rejected_fault") == lost);
    assert_true(r->tot.rejected_by[ENG_REJECT_FAULT] == (int64_t)lost);
    assert_true(study_metric(r, "completed") + lost == 400);
    assert_int_equal(t.lost, (int64_t)lost);
    /* one attempt in all is no retry */
    assert_true(study_metric(q, "fault_lost") == lost && u.hash == t.hash);
    test_free(r);
    test_free(q);
}

/* One replica: what it held and what arrives while it restarts wait for its replacement, which
 * serves after the cold start (Llama-3-8B: 20 + 16.06 / 2 + 10 = 38.03 s) and duration_s. */
static void test_single_replica_waits_for_replacement(void **state)
{
    (void)state;
    const char *sets[] = {RATE, "faults=[{at_s: 10, replica: 0, kind: crash, duration_s: 10}]",
                          NULL};
    tally t = {.crash_ns = 10e9, .ready_ns = (10 + 10 + 38.03) * 1e9};
    study_result *r = run(SHARED, sets, &t);
    assert_true(study_metric(r, "completed") == 400);
    assert_true(study_metric(r, "fault_held") > study_metric(r, "fault_retried"));
    assert_true(t.retried_ok > 0 && t.late_first == t.retried_ok);
    /* the first token of a retried request counts from its original arrival */
    assert_true(t.max_ttft_ns > 48e9);
    print_message("one replica: %g retried, %g waited\n", study_metric(r, "fault_retried"),
                  study_metric(r, "fault_held"));
    test_free(r);
}

static void test_deterministic(void **state)
{
    (void)state;
    const char *sets[] = {"replicas=3", RATE,
                          "faults=[{at_s: 10, replica: 1, kind: crash}, {at_s: 12, replica: 2, "
                          "kind: slow, duration_s: 30, factor: 2.5}, {at_s: 30, replica: 1, kind: "
                          "crash}]",
                          NULL};
    tally a = {.crash_ns = 30e9}, b = {.crash_ns = 30e9};
    study_result *r = run(SHARED, sets, &a), *q = run(SHARED, sets, &b);
    assert_true(a.hash == b.hash);
    assert_int_equal(r->n, q->n);
    for (int i = 0; i < r->n; i++) {
        assert_string_equal(r->m[i].name, q->m[i].name);
        assert_memory_equal(&r->m[i].value, &q->m[i].value, sizeof(double));
    }
    assert_true(study_metric(r, "fault_crashes") == 2 && study_metric(r, "completed") == 400);
    test_free(r);
    test_free(q);
}

/* A slowed replica's steps take longer: the run's latency rises, and a factor over a stretch
 * with no request changes nothing. */
static void test_slow(void **state)
{
    (void)state;
    const char *none[] = {"replicas=2", NULL};
    const char *slow[] = {"replicas=2",
                          "faults=[{at_s: 10, replica: 0, kind: slow, duration_s: 60, factor: 3}]",
                          NULL};
    const char *after[] = {"replicas=2",
                           "faults=[{at_s: 5000, replica: 0, kind: slow, duration_s: 60}]", NULL};
    study_result *a = run(SHARED, none, NULL), *b = run(SHARED, slow, NULL),
                 *c = run(SHARED, after, NULL);
    print_message("mean e2e: %.1f ms, slowed %.1f ms\n", study_metric(a, "mean_e2el_ms"),
                  study_metric(b, "mean_e2el_ms"));
    assert_true(study_metric(b, "mean_e2el_ms") > 1.1 * study_metric(a, "mean_e2el_ms"));
    assert_true(study_metric(c, "mean_e2el_ms") == study_metric(a, "mean_e2el_ms"));
    test_free(a);
    test_free(b);
    test_free(c);
}

/* Crashes under autoscaling: the replacement starts as a scaled-up replica does; nothing is
 * lost with retries. */
static void test_crash_autoscaled(void **state)
{
    (void)state;
    const char *sets[] = {"replicas=2",
                          RATE,
                          "autoscale={metric: concurrency, target: 8, min_replicas: 1, "
                          "max_replicas: 4, interval_s: 5, scale_down_delay_s: 10}",
                          "router=least_outstanding",
                          "faults=[{at_s: 10, replica: 0, kind: crash}, {at_s: 14, replica: 1, "
                          "kind: crash}, {at_s: 16, replica: 3, kind: crash}]",
                          NULL};
    study_result *r = run(SHARED, sets, NULL);
    assert_true(study_metric(r, "completed") == 400 && study_metric(r, "fault_lost") == 0);
    assert_true(study_metric(r, "fault_crashes") == 2); /* replica 3 was off at 16 s */
    assert_true(study_metric(r, "fault_held") > 0);     /* none was ready for a while */
    test_free(r);
}

/* The routers that keep state per replica (router_cache.c), keyed by slot: each runs through a
 * crash of a replica in the middle of the list (the ready replicas after it move up a position)
 * and through autoscaling with crashes, every engine walker after every event, losing nothing,
 * and repeats itself. */
static const char *const stateful[] = {"prefix_affinity", "weighted", "precise_prefix", "kv_router",
                                       "session_affinity"};
#define SESSIONS LLMSIM_SOURCE_DIR "/scenarios/sessions.yaml"
#define AUTOSCALED                                                                                 \
    "autoscale={metric: concurrency, target: 8, min_replicas: 1, max_replicas: 4, interval_s: 5, " \
    "scale_down_delay_s: 10}"

static void test_stateful_routers_crash(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof stateful / sizeof stateful[0]; k++) {
        char router[64];
        snprintf(router, sizeof router, "router=%s", stateful[k]);
        const char *sets[] = {"replicas=3", RATE, router,
                              "faults=[{at_s: 10, replica: 1, kind: crash}]", NULL};
        tally t = {.crash_ns = 10e9}, u = {.crash_ns = 10e9};
        study_result *r = run(SHARED, sets, &t), *q = run(SHARED, sets, &u);
        print_message("%s, crash: %g retried, %g completed\n", stateful[k],
                      study_metric(r, "fault_retried"), study_metric(r, "completed"));
        assert_true(study_metric(r, "fault_crashes") == 1 && study_metric(r, "fault_retried") > 0);
        assert_true(study_metric(r, "completed") == 400 && study_metric(r, "fault_lost") == 0);
        assert_int_equal(t.finished, 400);
        assert_true(t.hash == u.hash); /* same seed, same results */
        test_free(r);
        test_free(q);
    }
}

/* An autoscaled run of 400 requests with crashes completed them all, losing none; it scaled up
 * (and down, when `downs`). Frees r. */
static void assert_followed(study_result *r, const char *router, int downs)
{
    print_message("%s: %g scale-ups, %g scale-downs, %g crashes, %g retried\n", router,
                  study_metric(r, "scale_ups"), study_metric(r, "scale_downs"),
                  study_metric(r, "fault_crashes"), study_metric(r, "fault_retried"));
    assert_true(study_metric(r, "scale_ups") > 0 && study_metric(r, "fault_crashes") >= 1);
    assert_true(!downs || study_metric(r, "scale_downs") > 0);
    assert_true(study_metric(r, "completed") == 400 && study_metric(r, "fault_lost") == 0);
    test_free(r);
}

static void test_stateful_routers_autoscaled(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof stateful / sizeof stateful[0]; k++) {
        char router[64];
        snprintf(router, sizeof router, "router=%s", stateful[k]);
        /* multi-turn sessions (session_affinity's own case): the fleet grows to follow them */
        const char *sets[] = {"replicas=2",
                              "workload.num_requests=400",
                              router,
                              AUTOSCALED,
                              "faults=[{at_s: 20, replica: 0, kind: crash}, {at_s: 40, replica: "
                              "2, kind: crash}]",
                              NULL};
        /* a burst and a lull: the fleet grows, then drains replicas */
        const char *swing[] = {"replicas=1",
                               router,
                               AUTOSCALED,
                               "workload.arrival={process: schedule, steps: [{start_s: 0, rate: "
                               "20}, {start_s: 10, rate: 2}]}",
                               "faults=[{at_s: 12, replica: 1, kind: crash}]",
                               NULL};
        tally t = {.crash_ns = 20e9}, u = {.crash_ns = 20e9}, v = {.crash_ns = 12e9};
        assert_followed(run(SESSIONS, sets, &t), stateful[k], 0);
        assert_followed(run(SESSIONS, sets, &u), stateful[k], 0);
        assert_true(t.hash == u.hash); /* same seed, same results */
        assert_followed(run(SHARED, swing, &v), stateful[k], 1);
    }
}

/* A crash in a mixed pool: the replica leaves the list of the router that routes over every
 * group (the first group's), and its replacement joins it again. */
static void test_crash_mixed_pool(void **state)
{
    (void)state;
    const char *sets[] = {"replicas=[{gpu: h100-sxm, count: 1}, {gpu: a100-80gb, count: 2}]",
                          "router=least_outstanding", RATE,
                          "faults=[{at_s: 10, replica: 2, kind: crash}]", NULL};
    tally t = {.crash_ns = 10e9};
    study_result *r = run(SHARED, sets, &t);
    assert_true(study_metric(r, "fault_crashes") == 1 && study_metric(r, "fault_retried") > 0);
    assert_true(study_metric(r, "completed") == 400 && study_metric(r, "fault_lost") == 0);
    assert_int_equal(t.finished, 400);
    test_free(r);
}

/* Per session (an open-addressed table of 1024): the replicas its requests' last attempts ran
 * on, as a bit set. */
typedef struct sess_map {
    uint64_t id[1024];
    uint32_t reps[1024];
} sess_map;

static void on_session(void *st, const eng_request *rq)
{
    sess_map *m = st;
    uint64_t k = rq->session & 1023;
    while (m->id[k] && m->id[k] != rq->session)
        k = (k + 1) & 1023;
    m->id[k] = rq->session;
    if (rq->status == ENG_RQ_FINISHED)
        m->reps[k] |= 1u << rq->replica;
}

/* session_affinity's ring keyed by slot: a crash of replica 1 moves only its own sessions; every
 * other session stays on its replica throughout (keyed by position, the sessions of replica 2
 * would have moved to another one when replica 1 left the list). */
static void test_session_ring_survives_crash(void **state)
{
    (void)state;
    const char *sets[] = {"replicas=3", "workload.num_requests=400", "router=session_affinity",
                          "faults=[{at_s: 20, replica: 1, kind: crash}]", NULL};
    scn_scenario s;
    su_load(SESSIONS, sets, &s);
    study_result *r = test_calloc(1, sizeof *r);
    sess_map *m = test_calloc(1, sizeof *m);
    static const eng_recorder_ops rec = {.on_request = on_session};
    su_run(&s, &(study_hooks){.rec = &rec, .rec_st = m}, r);
    int on1 = 0, moved = 0, stayed = 0;
    for (int k = 0; k < 1024; k++) {
        if (!m->id[k])
            continue;
        if (m->reps[k] & 2u) {
            on1++;
            moved += m->reps[k] != 2u;
        } else {
            stayed += m->reps[k] == 1u || m->reps[k] == 4u;
            assert_true(m->reps[k] == 1u || m->reps[k] == 4u || m->reps[k] == 0);
        }
    }
    print_message("sessions on the crashed replica: %d (%d moved), elsewhere: %d\n", on1, moved,
                  stayed);
    assert_true(on1 > 0 && moved > 0 && stayed > 0);
    assert_true(study_metric(r, "fault_crashes") == 1 && study_metric(r, "fault_lost") == 0);
    test_free(m);
    test_free(r);
    scn_free(&s);
}

/* Loading path with the overrides succeeds, the run is refused naming `what`. */
static void refused_in(const char *path, const char *const *sets, const char *what)
{
    scn_scenario s;
    su_load(path, sets, &s);
    su_refused(&s, what);
}

static void refused(const char *set, const char *what)
{
    const char *sets[] = {"replicas=2", set, NULL};
    refused_in(SHARED, sets, what);
}

static void test_refusals(void **state)
{
    (void)state;
    refused("faults=[{at_s: 1, replica: 0, kind: link_down, duration_s: 5}]",
            "link_down is not modelled");
    refused("faults=[{at_s: 1, replica: 2, kind: crash}]", "replica 2, but the deployment has 2");
    refused("faults=[{at_s: 1, replica: 0, kind: slow}]", "needs duration_s > 0");
    refused("faults=[{at_s: 1, replica: 0, kind: slow, duration_s: 5}, {at_s: 3, replica: 0, "
            "kind: slow, duration_s: 5}]",
            "overlap");
    const char *pd[] = {"faults=[{at_s: 1, replica: 0, kind: slow, duration_s: 1}]", NULL};
    refused_in(LLMSIM_SOURCE_DIR "/scenarios/pd_llama70b.yaml", pd, "disaggregated");
}

LLMSIM_TEST_MAIN(NULL, NULL, test_crash_retried_loses_nothing, test_crash_without_retries_loses,
                 test_single_replica_waits_for_replacement, test_deterministic, test_slow,
                 test_crash_autoscaled, test_stateful_routers_crash,
                 test_stateful_routers_autoscaled, test_session_ring_survives_crash,
                 test_crash_mixed_pool, test_refusals)
