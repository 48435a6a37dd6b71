/*
 * test_sim_queue.c: validation of the DES core against queueing theory.
 *
 * A single-server FIFO queue built on the core (two events: arrival and departure; Poisson
 * arrivals drawn from SIM_STREAM_ARRIVALS, service times from SIM_STREAM_SERVICE) must reproduce
 * the mean wait in queue:
 *   M/M/1: Wq = rho / (mu - lambda)
 *   M/D/1: Wq = rho / (2 mu (1 - rho))          (Pollaczek-Khinchine)
 * within 2% at rho = 0.5 and 3% at rho = 0.8, for any seed.
 *
 * The seed comes from LLMSIM_TEST_SEED when set, otherwise from the clock; it is printed so that
 * a failure can be replayed. With --full (the `heavy` label's run) each case runs the lengths
 * of CASES; by default a quarter of them, which puts the tolerance at about 5 standard errors
 * (a failure probability near 1e-6 per case) and keeps the suite quick on a busy machine.
 *
 * Why the tolerance holds for any seed (the estimator):
 * - Successive waits are strongly autocorrelated near saturation (M/M/1 at rho = 0.8 relaxes
 *   over roughly 1 / (mu (1 - sqrt(rho))^2) ~ 90 service times, and its busy periods are long),
 *   so the naive i.i.d. standard error is far too optimistic. We use the method of batch means:
 *   after a warm-up that is discarded (the queue starts empty, which biases early waits down),
 *   the customers are cut into B = 50 consecutive batches, each thousands of relaxation times
 *   long, so the batch means are close to independent and normal. Their spread gives a 99.9%
 *   confidence half-width (Student t, B - 1 degrees of freedom).
 * - The run lengths below were chosen from measured batch-means variances so that the 99.9%
 *   half-width is about a third of the tolerance or less (see CASES); the tolerance is then more
 *   than ~10 standard errors away, a failure probability far below 1e-12 per case. The test
 *   also asserts that the half-width is inside the tolerance, so a run too short to support the
 *   claim fails loudly rather than passing by luck.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>

#include "rng.h"
#include "sim.h"
#include "test_main.h"

enum { BATCHES = 50 };

/* CASES' run lengths are divided by this: 1 with --full, else 4. */
static uint64_t length_div = 4;

#define MEAN_SERVICE_NS 1e6 /* 1 ms: mu = 1 per ms */

/* MODEL: events at the same instant: departures before arrivals (either order gives the same
 * FIFO waits; fixing it keeps runs reproducible by construction). */
enum { PRIO_DEPARTURE = 0, PRIO_ARRIVAL = 1 };

typedef struct queue {
    gsl_rng *arr, *svc; /* borrowed from the context */
    double mean_gap_ns; /* 1 / lambda */
    int deterministic;  /* M/D/1 when set, else M/M/1 */
    uint64_t total;     /* customers to generate */
    uint64_t warmup;    /* first customers whose waits are discarded */
    uint64_t batch_len; /* customers per batch */
    uint64_t arrived, started;
    int busy;
    int64_t *ring;             /* arrival times (ns) of waiting customers */
    size_t cap, head, len;     /* cap is a power of two */
    double batch_sum[BATCHES]; /* sum of waits (ns) per batch */
} queue;

static int64_t draw_ns(gsl_rng *r, double mean_ns)
{
    return llround(gsl_ran_exponential(r, mean_ns));
}

static void depart(sim_ctx *ctx, void *obj, int64_t arg);

static void start_service(sim_ctx *ctx, queue *q, int64_t t_arrive)
{
    uint64_t k = q->started++;
    if (k >= q->warmup) {
        uint64_t b = (k - q->warmup) / q->batch_len;
        if (b < BATCHES)
            q->batch_sum[b] += (double)(sim_now(ctx) - t_arrive);
    }
    int64_t s = q->deterministic ? (int64_t)MEAN_SERVICE_NS : draw_ns(q->svc, MEAN_SERVICE_NS);
    q->busy = 1;
    sim_schedule(ctx, sim_now(ctx) + s, PRIO_DEPARTURE, depart, q, 0);
}

static void arrive(sim_ctx *ctx, void *obj, int64_t arg)
{
    queue *q = obj;
    if (!q->busy) {
        start_service(ctx, q, sim_now(ctx));
    } else {
        if (q->len == q->cap) {
            size_t cap = q->cap * 2;
            int64_t *ring = malloc(cap * sizeof *ring);
            assert_non_null(ring);
            for (size_t i = 0; i < q->len; i++)
                ring[i] = q->ring[(q->head + i) & (q->cap - 1)];
            free(q->ring);
            q->ring = ring;
            q->cap = cap;
            q->head = 0;
        }
        q->ring[(q->head + q->len++) & (q->cap - 1)] = sim_now(ctx);
    }
    if (++q->arrived < q->total)
        sim_schedule(ctx, sim_now(ctx) + draw_ns(q->arr, q->mean_gap_ns), PRIO_ARRIVAL, arrive, q,
                     0);
}

static void depart(sim_ctx *ctx, void *obj, int64_t arg)
{
    queue *q = obj;
    q->busy = 0;
    if (q->len > 0) {
        int64_t t = q->ring[q->head];
        q->head = (q->head + 1) & (q->cap - 1);
        q->len--;
        start_service(ctx, q, t);
    }
}

typedef struct qcase {
    const char *name;
    int deterministic;
    double rho;
    double tol;         /* relative */
    uint64_t customers; /* measured, after the warm-up */
} qcase;

static double theory_wq_ms(const qcase *c)
{
    double mu = 1.0, lambda = c->rho * mu; /* per ms */
    return c->deterministic ? c->rho / (2 * mu * (1 - c->rho)) : c->rho / (mu - lambda);
}

static uint64_t test_seed;
static double worst_rel_err;

static void run_case(const qcase *c, uint64_t seed)
{
    sim_ctx *ctx = sim_new(seed);
    queue *q = calloc(1, sizeof *q);
    assert_non_null(q);
    q->arr = sim_rng(ctx, SIM_STREAM_ARRIVALS);
    q->svc = sim_rng(ctx, SIM_STREAM_SERVICE);
    q->mean_gap_ns = MEAN_SERVICE_NS / c->rho;
    q->deterministic = c->deterministic;
    uint64_t customers = c->customers / length_div;
    q->batch_len = customers / BATCHES;
    q->warmup = customers / 100;
    q->total = q->warmup + q->batch_len * BATCHES;
    q->cap = 1024;
    q->ring = malloc(q->cap * sizeof *q->ring);
    assert_non_null(q->ring);

    sim_schedule(ctx, draw_ns(q->arr, q->mean_gap_ns), PRIO_ARRIVAL, arrive, q, 0);
    sim_run(ctx, SIM_TIME_MAX);
    uint64_t started = q->started, total = q->total, events = sim_events_run(ctx);
    double sums[BATCHES], batch_len = (double)q->batch_len;
    memcpy(sums, q->batch_sum, sizeof sums);
    free(q->ring);
    free(q);
    sim_free(ctx);
    assert_int_equal(started, total);
    assert_int_equal(events, 2 * total);

    double mean = 0, m2 = 0;
    for (int b = 0; b < BATCHES; b++)
        mean += sums[b] / batch_len / SIM_NS_PER_MS / BATCHES;
    for (int b = 0; b < BATCHES; b++) {
        double d = sums[b] / batch_len / SIM_NS_PER_MS - mean;
        m2 += d * d;
    }
    double se = sqrt(m2 / (BATCHES - 1) / BATCHES);
    double hw = gsl_cdf_tdist_Pinv(0.9995, BATCHES - 1) * se;
    double th = theory_wq_ms(c);
    double err = (mean - th) / th;
    if (fabs(err) > worst_rel_err)
        worst_rel_err = fabs(err);
    print_message("%s rho=%.1f seed=%llu customers=%llu: Wq=%.5f ms theory=%.5f ms "
                  "rel.err=%+.3f%% 99.9%% CI half-width=%.3f%% (tol %.0f%% = %.1f se)\n",
                  c->name, c->rho, (unsigned long long)seed, (unsigned long long)customers, mean,
                  th, 100 * err, 100 * hw / th, 100 * c->tol, c->tol * th / se);
    assert_true(hw / th < c->tol); /* the run is long enough to support the claim */
    assert_true(fabs(err) < c->tol);
}

/* Run lengths: measured relative standard errors of the batch-means estimate at 2M customers
 * were about 0.45% (M/M/1, 0.5), 0.97% (M/M/1, 0.8), 0.26% (M/D/1, 0.5), 0.6% (M/D/1, 0.8).
 * The standard error falls as 1/sqrt(customers), so these lengths put the tolerance at 10 or
 * more standard errors (the 99.9% half-width, 3.5 se, at about a third of it) in every case.
 * The four cases take ~25 s in a Debug (ASan) build. */
static const qcase CASES[] = {
    {"M/M/1", 0, 0.5, 0.02, 10000000},
    {"M/M/1", 0, 0.8, 0.03, 25000000},
    {"M/D/1", 1, 0.5, 0.02, 5000000},
    {"M/D/1", 1, 0.8, 0.03, 10000000},
};

/* Each case gets its own seed (base + index), so one unlucky stream cannot sway them all. */
static void test_mm1_rho05(void **state)
{
    run_case(&CASES[0], test_seed + 0);
}
static void test_mm1_rho08(void **state)
{
    run_case(&CASES[1], test_seed + 1);
}
static void test_md1_rho05(void **state)
{
    run_case(&CASES[2], test_seed + 2);
}
static void test_md1_rho08(void **state)
{
    run_case(&CASES[3], test_seed + 3);
}

LLMSIM_TESTS(tests, test_mm1_rho05, test_mm1_rho08, test_md1_rho05, test_md1_rho08);

int main(int argc, char **argv)
{
    length_div = argc > 1 && strcmp(argv[1], "--full") == 0 ? 1 : 4;
    const char *env = getenv("LLMSIM_TEST_SEED");
    if (env && *env) {
        test_seed = strtoull(env, NULL, 0);
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        test_seed = sim_splitmix64((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
    }
    printf("queueing validation: LLMSIM_TEST_SEED=%llu\n", (unsigned long long)test_seed);
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    printf("worst |relative error| this run: %.3f%% (LLMSIM_TEST_SEED=%llu)\n", 100 * worst_rel_err,
           (unsigned long long)test_seed);
    return rc;
}
