/*
 * test_autoscale.c: replicas that follow the load: a day served by an autoscaled fleet against
 * fixed fleets, cold starts, draining, the refusals.
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

/* A day compressed into an hour (each hour of the day 150 s): the hourly means of ServeGen's
 * DeepSeek-R1 day (scenarios/fleet_diurnal.yaml) divided by 8, 7,200 requests of Llama-3-8B on
 * L4s, whose replicas hold about 0.8 requests/s each under a 2 s TTFT. */
#define DAY                                                                                        \
    "name: day\nmodel: llama-3-8b\ngpu: l4\nscheduler: {name: vllm, max_num_seqs: 256}\n"          \
    "router: least_outstanding\nslo: {ttft_ms: 2000}\n"                                            \
    "workload:\n  num_requests: 7200\n  arrival:\n    process: schedule\n    steps: ["             \
    "{start_s: 0, rate: 2.414}, {start_s: 150, rate: 2.781}, {start_s: 300, rate: 4.072}, "        \
    "{start_s: 450, rate: 3.580}, {start_s: 600, rate: 2.130}, {start_s: 750, rate: 1.817}, "      \
    "{start_s: 900, rate: 1.500}, {start_s: 1050, rate: 1.155}, {start_s: 1200, rate: 1.192}, "    \
    "{start_s: 1350, rate: 1.329}, {start_s: 1500, rate: 1.621}, {start_s: 1650, rate: 1.661}, "   \
    "{start_s: 1800, rate: 0.895}, {start_s: 1950, rate: 1.090}, {start_s: 2100, rate: 1.370}, "   \
    "{start_s: 2250, rate: 1.409}, {start_s: 2400, rate: 1.758}, {start_s: 2550, rate: 1.107}, "   \
    "{start_s: 2700, rate: 1.500}, {start_s: 2850, rate: 1.176}, {start_s: 3000, rate: 2.482}, "   \
    "{start_s: 3150, rate: 3.246}, {start_s: 3300, rate: 4.391}, {start_s: 3450, rate: 2.364}]\n"  \
    "  prompt_tokens: {dist: uniform, min: 200, max: 2000}\n"                                      \
    "  output_tokens: {dist: uniform, min: 50, max: 400}\n"
/* HPA-like: about 16 requests in flight per ready replica, evaluated every 15 s, scale-down
 * stabilised over 60 s; cold start 5 s + 16 GB at 2 GB/s + 5 s = 18 s unless startup_s moves */
#define AUTOSCALE                                                                                  \
    "replicas: 2\nautoscale: {metric: concurrency, target: 16, min_replicas: 1, max_replicas: "    \
    "10, interval_s: 15, scale_down_delay_s: 60, startup_s: 5, graph_capture_s: 5}\n"

typedef struct outcome {
    double gpu_hours, attained, cold_s, replicas_max;
    int64_t completed, rejected;
} outcome;

/* Requests first scheduled on a replica beyond the first `first` ones: the earliest such time. */
typedef struct late_rec {
    int32_t first;
    int64_t earliest;
} late_rec;

static void on_request(void *st, const eng_request *rq)
{
    late_rec *l = st;
    if (rq->replica >= l->first && rq->t_first_sched >= 0 &&
        (l->earliest < 0 || rq->t_first_sched < l->earliest))
        l->earliest = rq->t_first_sched;
}

static outcome run_text(const char *text, const char *const *sets, late_rec *late)
{
    scn_scenario s;
    su_load_text(LLMSIM_SOURCE_DIR "/tests/day.yaml", text, sets, &s);
    study_result *r = test_calloc(1, sizeof *r);
    static const eng_recorder_ops rec = {.on_request = on_request};
    study_hooks hooks = {.check_every = 4096, .rec = late ? &rec : NULL, .rec_st = late};
    su_run(&s, &hooks, r);
    outcome o = {.gpu_hours = study_metric(r, "gpu_hours"),
                 .attained =
                     study_metric(r, "request_goodput") / study_metric(r, "request_throughput"),
                 .cold_s = study_metric(r, "cold_start_s"),
                 .replicas_max = study_metric(r, "replicas_max"),
                 .completed = (int64_t)study_metric(r, "completed"),
                 .rejected = (int64_t)study_metric(r, "rejected")};
    test_free(r);
    scn_free(&s);
    return o;
}

static outcome run_day(const char *deploy, const char *const *sets)
{
    char text[4096];
    snprintf(text, sizeof text, "%s%s", DAY, deploy);
    return run_text(text, sets, NULL);
}

/* The autoscaled fleet holds the SLO through the day on fewer GPU-hours than the smallest fixed
 * fleet that holds it (the one sized for the peak); every request is served. */
static void test_day_fewer_gpu_hours(void **state)
{
    (void)state;
    outcome a = run_day(AUTOSCALE, NULL);
    assert_true(a.attained >= 0.999);
    assert_int_equal(a.completed, 7200);
    assert_int_equal(a.rejected, 0);
    assert_true(a.replicas_max > 2); /* it did scale */
    outcome f3 = run_day("replicas: 3\n", NULL), f4 = run_day("replicas: 4\n", NULL);
    assert_true(f3.attained < 0.99); /* three cannot hold the peak: four is the peak's size */
    assert_true(f4.attained >= 0.999);
    print_message("autoscaled %.3f GPU-h (attained %.4f), fixed 4 %.3f GPU-h\n", a.gpu_hours,
                  a.attained, f4.gpu_hours);
    assert_true(a.gpu_hours < 0.9 * f4.gpu_hours);
}

/* A longer cold start (73 s instead of 18 s) misses the SLO at the same target, and holds it
 * again only with more headroom (a lower target per replica), at more GPU-hours. */
static void test_cold_start_needs_headroom(void **state)
{
    (void)state;
    const char *slow[] = {"autoscale.startup_s=60", NULL};
    const char *slow_room[] = {"autoscale.startup_s=60", "autoscale.target=10", NULL};
    outcome a = run_day(AUTOSCALE, NULL), s = run_day(AUTOSCALE, slow),
            h = run_day(AUTOSCALE, slow_room);
    assert_true(fabs(a.cold_s - 18.03) < 0.01 && fabs(s.cold_s - 73.03) < 0.01);
    print_message("cold 18 s: %.4f at %.3f GPU-h; 73 s: %.4f; 73 s, target 10: %.4f at %.3f\n",
                  a.attained, a.gpu_hours, s.attained, h.attained, h.gpu_hours);
    assert_true(a.attained >= 0.999);
    assert_true(s.attained < 0.99);
    assert_true(h.attained >= 0.999);
    assert_true(h.gpu_hours > a.gpu_hours);
}

/* A replica asked for serves nothing before its cold start is over: the first request any
 * replica beyond the starting two admits comes at least one evaluation plus a cold start in. */
static void test_cold_start_delays_service(void **state)
{
    (void)state;
    late_rec late = {.first = 2, .earliest = -1};
    char text[4096];
    snprintf(text, sizeof text, "%s%s", DAY, AUTOSCALE);
    const char *long_start[] = {"autoscale.startup_s=200", NULL};
    outcome o = run_text(text, long_start, &late);
    assert_true(late.earliest > 0); /* it scaled up */
    assert_true((double)late.earliest / 1e9 >= 15 + o.cold_s);
}

/* Scaling down drains: no request is lost however often replicas go (a short window). */
static void test_drain_loses_nothing(void **state)
{
    (void)state;
    const char *sets[] = {"autoscale.scale_down_delay_s=0", "autoscale.tolerance=0", NULL};
    outcome o = run_day(AUTOSCALE, sets);
    assert_int_equal(o.completed, 7200);
    assert_int_equal(o.rejected, 0);
}

/* The first request each replica admits: when it began to serve. */
static void on_first(void *st, const eng_request *rq)
{
    int64_t *first = st;
    if (rq->replica < 10 && rq->t_first_sched >= 0 &&
        (first[rq->replica] < 0 || rq->t_first_sched < first[rq->replica]))
        first[rq->replica] = rq->t_first_sched;
}

/* When each of the ten replica slots first served (-1: never), the day's first hour from one
 * replica with a cold start of 18.03 s, under the given behavior (NULL: none). */
static void first_service(const char *behavior, int64_t *first)
{
    char text[4096];
    snprintf(text, sizeof text, "%s%s", DAY, AUTOSCALE);
    const char *sets[] = {"replicas=1", "workload.num_requests=1500", behavior, NULL};
    scn_scenario s;
    su_load_text("day.yaml", text, sets, &s);
    for (int i = 0; i < 10; i++)
        first[i] = -1;
    static const eng_recorder_ops rec = {.on_request = on_first};
    study_result *r = test_calloc(1, sizeof *r);
    su_run(&s, &(study_hooks){.check_every = 4096, .rec = &rec, .rec_st = first}, r);
    assert_true(study_metric(r, "completed") == 1500);
    test_free(r);
    scn_free(&s);
}

/* A scale-up policy of one replica a minute (the HPA's behavior.scaleUp.policies) caps the
 * replicas added per period: the k-th added serves no earlier than the first evaluation plus
 * k - 1 minutes plus the cold start; without it the first evaluation asks for several at once. */
static void test_rate_policy_caps_scale_up(void **state)
{
    (void)state;
    int64_t free_[10], capped[10], pct[10];
    first_service(NULL, free_);
    first_service("autoscale.behavior={scale_up: {policies: [{type: pods, value: 1, period_s: "
                  "60}]}}",
                  capped);
    first_service("autoscale.behavior={scale_up: {policies: [{type: percent, value: 100, "
                  "period_s: 60}, {type: pods, value: 1, period_s: 60}], select_policy: min}}",
                  pct);
    double cold = 18.03;
    assert_true(free_[2] >= 0 && free_[2] < (15 + 60 + cold) * 1e9); /* two at the first ask */
    int added = 0;
    for (int k = 1; k < 10; k++) {
        if (capped[k] < 0)
            continue;
        added++;
        print_message("slot %d first serves at %.1f s (no limit: %.1f s)\n", k, capped[k] / 1e9,
                      free_[k] / 1e9);
        assert_true(capped[k] >= (15 + 60 * (k - 1) + cold) * 1e9);
        assert_true(pct[k] < 0 || pct[k] >= (15 + 60 * (k - 1) + cold) * 1e9); /* min: 1 pod */
    }
    assert_true(added >= 2); /* it did scale, one at a time */
}

static void test_refusals(void **state)
{
    (void)state;
    scn_scenario s;
    const char *ttft[] = {"autoscale.metric=ttft_p90", NULL};
    char text[4096];
    snprintf(text, sizeof text, "%s%s", DAY, AUTOSCALE);
    su_load_text("day.yaml", text, ttft, &s);
    su_refused(&s, "ttft_p90 is not modelled");
    const char *bounds[] = {"replicas=12", NULL};
    su_load_text("day.yaml", text, bounds, &s);
    su_refused(&s, "outside");
    const char *pd[] = {"autoscale={metric: queue, target: 4, max_replicas: 4}", NULL};
    su_load(LLMSIM_SOURCE_DIR "/scenarios/pd_llama70b.yaml", pd, &s);
    su_refused(&s, "disaggregated");
}

LLMSIM_TEST_MAIN(NULL, NULL, test_day_fewer_gpu_hours, test_cold_start_needs_headroom,
                 test_cold_start_delays_service, test_drain_loses_nothing,
                 test_rate_policy_caps_scale_up, test_refusals)
