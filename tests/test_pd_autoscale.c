/*
 * test_pd_autoscale.c: a disaggregated deployment whose prefill and decode pools scale each on
 * its own, as Dynamo's load-based planner scales them (prefill.autoscale, decode.autoscale): each
 * pool follows its own metric, one replica per adjustment at most, a scaled-down prefill replica
 * drains and loses nothing, the GPU budget, determinism, the refusals.
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

/* Llama-3-8B on H100s, one prefill and one decode replica at the start, each pool autoscaled up
 * to 4 with the planner's defaults (30 s adjustments, 1 s samples; cold start 20 s + 16 GB at
 * 2 GB/s + 10 s = 38 s). */
#define POOLS                                                                                      \
    "name: pd\nmodel: llama-3-8b\ngpu: h100\nengine: vllm\n"                                       \
    "prefill: {replicas: 1, autoscale: {max_replicas: 4}}\n"                                       \
    "decode: {replicas: 1, scheduler: {max_num_seqs: 512}, autoscale: {max_replicas: 4}}\n"        \
    "kv_transfer: {link: rdma}\n"
/* The same with a prefill pool of one replica, not autoscaled. */
#define FIXED_PREFILL                                                                              \
    "name: pd\nmodel: llama-3-8b\ngpu: h100\nengine: vllm\nprefill: {replicas: 1}\n"               \
    "decode: {replicas: 1, scheduler: {max_num_seqs: 512}, autoscale: {max_replicas: 4}}\n"        \
    "kv_transfer: {link: rdma}\n"
/* A burst of long prompts with answers of a few tokens: the prefill pool's queue grows, the
 * decode pool's KV stays nearly empty. */
#define PREFILL_BURST                                                                              \
    "workload:\n  num_requests: 1700\n  arrival:\n    process: schedule\n    steps: ["             \
    "{start_s: 0, rate: 2}, {start_s: 60, rate: 16}, {start_s: 150, rate: 1}]\n"                   \
    "  prompt_tokens: {dist: uniform, min: 4000, max: 6000}\n"                                     \
    "  output_tokens: {dist: uniform, min: 2, max: 4}\n"
/* Short prompts with long answers: the decode pool's KV fills, the prefill queue stays empty. */
#define DECODE_BURST                                                                               \
    "workload:\n  num_requests: 3000\n  arrival:\n    process: schedule\n    steps: ["             \
    "{start_s: 0, rate: 3}, {start_s: 100, rate: 12}, {start_s: 300, rate: 2}]\n"                  \
    "  prompt_tokens: {dist: uniform, min: 500, max: 1000}\n"                                      \
    "  output_tokens: {dist: uniform, min: 1000, max: 2000}\n"

typedef struct outcome {
    double m[ENG_MAX_METRICS + 1];
    char names[ENG_MAX_METRICS + 1][48];
    int n;
} outcome;

static double get(const outcome *o, const char *name)
{
    for (int i = 0; i < o->n; i++)
        if (strcmp(o->names[i], name) == 0)
            return o->m[i];
    fail_msg("no metric %s", name);
    return NAN;
}

/* The first time each prefill replica slot (0..3) began a prefill (-1: never). */
static void on_request(void *st, const eng_request *rq)
{
    int64_t *first = st;
    if (rq->pd_src >= 0 && rq->pd_src < 4 && rq->t_first_sched >= 0 &&
        (first[rq->pd_src] < 0 || rq->t_first_sched < first[rq->pd_src]))
        first[rq->pd_src] = rq->t_first_sched;
}

/* A run of deploy and work with sets, the engine's walker every check_every events; first (may
 * be NULL) gets when each prefill slot first prefilled. */
static outcome run_at(const char *deploy, const char *work, const char *const *sets, int64_t *first,
                      int64_t check_every)
{
    char text[4096];
    snprintf(text, sizeof text, "%s%s", deploy, work);
    scn_scenario s;
    su_load_text("pd.yaml", text, sets, &s);
    for (int i = 0; first && i < 4; i++)
        first[i] = -1;
    static const eng_recorder_ops rec = {.on_request = on_request};
    study_hooks hooks = {.check_every = check_every, .rec = first ? &rec : NULL, .rec_st = first};
    study_result *r = test_calloc(1, sizeof *r);
    su_run(&s, &hooks, r);
    outcome o = {.n = r->n};
    for (int i = 0; i < r->n; i++) {
        o.m[i] = r->m[i].value;
        snprintf(o.names[i], sizeof o.names[i], "%s", r->m[i].name);
    }
    test_free(r);
    scn_free(&s);
    return o;
}

static outcome run(const char *deploy, const char *work, const char *const *sets, int64_t *first)
{
    return run_at(deploy, work, sets, first, 512);
}

static outcome run_checked(const char *deploy, const char *work, const char *const *sets,
                           int64_t check_every)
{
    return run_at(deploy, work, sets, NULL, check_every);
}

/* Each pool follows its own metric: long prompts scale the prefill pool alone, long answers the
 * decode pool alone; every request is served either way. */
static void test_each_pool_its_own_metric(void **state)
{
    (void)state;
    outcome p = run(POOLS, PREFILL_BURST, NULL, NULL), d = run(POOLS, DECODE_BURST, NULL, NULL);
    print_message("prefill burst: prefill %g up %g down, decode %g up; decode burst: decode %g up "
                  "%g down, prefill %g up\n",
                  get(&p, "prefill_scale_ups"), get(&p, "prefill_scale_downs"),
                  get(&p, "decode_scale_ups"), get(&d, "decode_scale_ups"),
                  get(&d, "decode_scale_downs"), get(&d, "prefill_scale_ups"));
    assert_true(get(&p, "prefill_scale_ups") >= 2);
    assert_true(get(&p, "prefill_scale_downs") >= 1);
    assert_true(get(&p, "decode_scale_ups") == 0);
    assert_true(get(&p, "decode_replicas_mean") == 1);
    assert_true(get(&d, "decode_scale_ups") >= 2);
    assert_true(get(&d, "decode_scale_downs") >= 1);
    assert_true(get(&d, "prefill_scale_ups") == 0);
    assert_true(get(&p, "completed") == 1700 && get(&p, "rejected") == 0);
    assert_true(get(&d, "completed") == 3000 && get(&d, "rejected") == 0);
    /* a pool without an autoscale map keeps its replicas, the other still scales */
    outcome f = run(FIXED_PREFILL, DECODE_BURST, NULL, NULL);
    assert_true(get(&f, "prefill_replicas_max") == 1 && get(&f, "prefill_scale_ups") == 0);
    assert_true(get(&f, "decode_scale_ups") >= 2);
}

/* At most one replica per pool per adjustment (every 30 s), and a new one serves only after
 * its cold start: the k-th prefill slot beyond the first starts no prefill before 30 k s plus
 * the cold start. A prefill replica scaled down drains: nothing is lost. */
static void test_one_per_adjustment_and_drain(void **state)
{
    (void)state;
    int64_t first[4];
    outcome o = run(POOLS, PREFILL_BURST, NULL, first);
    double cold = get(&o, "prefill_cold_start_s");
    assert_true(fabs(cold - 38.03) < 0.01);
    int used = 0;
    for (int k = 1; k < 4; k++) {
        if (first[k] < 0)
            continue;
        used++;
        print_message("prefill slot %d first prefills at %.1f s\n", k, first[k] / 1e9);
        assert_true(first[k] >= (30.0 * k + cold) * 1e9);
    }
    assert_true(used >= 2);
    assert_true(get(&o, "prefill_scale_downs") >= 1);
    assert_true(get(&o, "completed") == 1700 && get(&o, "rejected") == 0);
}

/* A steady load of long prompts on four prefill replicas whose planner wants fewer (its queue
 * below a scale-down threshold of 5): each replica scaled down is holding requests, drains them
 * and leaves only once their KV has reached the decode side (the engine's walker, run every few
 * events, refuses a replica off that holds a request or sends KV); nothing is lost. */
static void test_prefill_drains_under_load(void **state)
{
    (void)state;
    const char *sets[] = {"prefill.replicas=4", "prefill.autoscale.scale_down_threshold=5",
                          "prefill.autoscale.scale_up_threshold=50", NULL};
    const char *steady =
        "workload:\n  num_requests: 8000\n  arrival: {process: poisson, rate: 20}\n"
        "  prompt_tokens: {dist: uniform, min: 4000, max: 6000}\n"
        "  output_tokens: {dist: uniform, min: 2, max: 4}\n";
    outcome o = run_checked(POOLS, steady, sets, 4);
    print_message("prefill: %g down, mean %.2f replicas\n", get(&o, "prefill_scale_downs"),
                  get(&o, "prefill_replicas_mean"));
    assert_true(get(&o, "prefill_scale_downs") >= 2);
    assert_true(get(&o, "completed") == 8000 && get(&o, "rejected") == 0);
}

/* The GPU budget (max_gpus, both pools) stops the decode pool's scale-ups: 1 prefill GPU and 2
 * decode GPUs fit 3, the run without a budget goes further. Without the grace after a
 * scale-up the decode pool may shrink sooner, never below min_replicas. */
static void test_budget_and_bounds(void **state)
{
    (void)state;
    const char *budget[] = {"decode.autoscale.max_gpus=3", NULL};
    outcome b = run(POOLS, DECODE_BURST, budget, NULL), f = run(POOLS, DECODE_BURST, NULL, NULL);
    assert_true(get(&b, "decode_replicas_max") == 2);
    assert_true(get(&f, "decode_replicas_max") > 2);
    assert_true(get(&b, "completed") == 3000);
    const char *floor[] = {"decode.replicas=2", "decode.autoscale.min_replicas=2",
                           "decode.autoscale.scale_down_grace=0", NULL};
    outcome m = run(POOLS, DECODE_BURST, floor, NULL);
    assert_true(get(&m, "decode_replicas_mean") >= 2);
    assert_true(get(&m, "completed") == 3000);
}

/* Same scenario and seed, the same results, to the bit. */
static void test_deterministic(void **state)
{
    (void)state;
    outcome a = run(POOLS, PREFILL_BURST, NULL, NULL), b = run(POOLS, PREFILL_BURST, NULL, NULL);
    assert_int_equal(a.n, b.n);
    for (int i = 0; i < a.n; i++) {
        assert_string_equal(a.names[i], b.names[i]);
        assert_memory_equal(&a.m[i], &b.m[i], sizeof a.m[i]);
    }
}

/* What the planner does not model, and settings that contradict each other, are refused. */
static void test_refusals(void **state)
{
    (void)state;
    static const struct {
        const char *set, *says;
    } cases[] = {
        {"decode.autoscale.interval_s=60", "must agree"},
        {"decode.autoscale.min_replicas=5", "min_replicas 5 above max_replicas 4"},
        {"prefill.replicas=5", "outside"},
        {"decode.autoscale.scale_down_threshold=0.95", "not below scale_up_threshold"},
        {"decode.autoscale.max_gpus=1", "below the 2 GPUs"},
        {"decode.autoscale.max_gpus=8", "one GPU budget"},
        {"decode.replicas=[{count: 1}]", "groups"},
        {"decode.autoscale.target=3", "unknown key"},
    };
    char text[4096];
    snprintf(text, sizeof text, "%s%s", POOLS, PREFILL_BURST);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *sets[] = {cases[i].set, i == 5 ? "prefill.autoscale.max_gpus=6" : NULL, NULL};
        su_refused_text(text, sets, cases[i].says);
    }
}

LLMSIM_TEST_MAIN(NULL, NULL, test_each_pool_its_own_metric, test_one_per_adjustment_and_drain,
                 test_prefill_drains_under_load, test_budget_and_bounds, test_deterministic,
                 test_refusals)
