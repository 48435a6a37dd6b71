/*
 * test_mixed.c: mixed GPU pools (`replicas: [{gpu, count, tensor_parallel, ...}, ...]`) end to
 * end through study/: Llama-3.1-8B on A100-80GB and H200 replicas behind one router.
 *  - a mixed pool serves more than the same number of slow replicas and less than as many fast
 *    ones, under the same overload;
 *  - each group runs on its own KV plan (its GPU's memory, its own tensor_parallel);
 *  - the fleet's cost prices every group at its own GPU;
 *  - routing by work weighed by capacity beats round robin on p99 TTFT, and beats the same
 *    router with the groups weighed alike;
 *  - one group is the deployment with a scalar `replicas`, to the bit;
 *  - what is not modelled is refused, naming the group.
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

#define HEAD                                                                                       \
    "name: mixed\nseed: 1\nmodel: llama-3.1-8b\ngpu: a100-80gb\nengine: vllm\n"                    \
    "router: least_tokens\n"
#define LOAD(rate, n)                                                                              \
    "workload:\n  num_requests: " #n "\n  arrival: {process: poisson, rate: " #rate "}\n"          \
    "  prompt_tokens: {dist: lognormal, mean: 1500, sigma: 0.6, max: 8000}\n"                      \
    "  output_tokens: {dist: lognormal, mean: 250, sigma: 0.6, max: 1500}\n"

/* Six replicas: four A100s and two H200s; six A100s; six H200s. */
#define MIXED "replicas:\n  - {gpu: a100-80gb, count: 4}\n  - {gpu: h200, count: 2}\n"
#define SLOW "replicas:\n  - {gpu: a100-80gb, count: 6}\n"
#define FAST "replicas:\n  - {gpu: h200, count: 6}\n"

static const char over_mixed[] = HEAD MIXED LOAD(80, 2000);
static const char over_slow[] = HEAD SLOW LOAD(80, 2000);
static const char over_fast[] = HEAD FAST LOAD(80, 2000);
static const char mixed[] = HEAD MIXED LOAD(40, 3000);
static const char mixed_equal[] = HEAD "replicas:\n  - {gpu: a100-80gb, count: 4, weight: 1}\n"
                                       "  - {gpu: h200, count: 2, weight: 1}\n" LOAD(40, 3000);

#define m(r, name) su_metric(r, name)

static void test_throughput_between_its_parts(void **state)
{
    study_result *s = su_must_run_text(over_slow, NULL), *x = su_must_run_text(over_mixed, NULL),
                 *f = su_must_run_text(over_fast, NULL);
    print_message("6 x A100 %.2f req/s, 4 x A100 + 2 x H200 %.2f req/s, 6 x H200 %.2f req/s\n",
                  m(s, "request_throughput"), m(x, "request_throughput"),
                  m(f, "request_throughput"));
    assert_true(m(s, "request_throughput") < m(x, "request_throughput"));
    assert_true(m(x, "request_throughput") < m(f, "request_throughput"));
    assert_true(m(s, "output_throughput") < m(x, "output_throughput"));
    assert_true(m(x, "output_throughput") < m(f, "output_throughput"));
    free(s);
    free(x);
    free(f);
}

static void test_each_group_its_own_plan(void **state)
{
    static const char text[] = HEAD "replicas:\n  - {gpu: a100-80gb, count: 2}\n"
                                    "  - {gpu: h200, count: 1, tensor_parallel: 2}\n" LOAD(10, 10);
    scn_scenario s;
    sim_err err;
    su_load_text("test.yaml", text, NULL, &s);
    assert_int_equal(eng_config_pools(&s.engine), 2);
    assert_int_equal(s.engine.replicas, 3);
    eng_config a, b;
    eng_kv_plan pa, pb;
    eng_config_pool(&s.engine, 0, &a);
    eng_config_pool(&s.engine, 1, &b);
    assert_string_equal(a.gpu.name, "a100-80gb");
    assert_string_equal(b.gpu.name, "h200");
    assert_int_equal(a.replicas, 2);
    assert_int_equal(b.replicas, 1);
    assert_int_equal(b.tensor_parallel, 2);
    assert_int_equal(eng_kv_plan_compute(&a, &pa, &err), 0);
    assert_int_equal(eng_kv_plan_compute(&b, &pb, &err), 0);
    print_message("A100 TP1: %lld blocks; H200 TP2: %lld blocks\n", (long long)pa.blocks,
                  (long long)pb.blocks);
    assert_int_equal(pa.gpus, 1);
    assert_int_equal(pb.gpus, 2);
    /* 141 GB x 2 GPUs holds more than 80 GB, less the weights once per GPU */
    assert_true(pb.blocks > 3 * pa.blocks);
    scn_free(&s);
}

static void test_cost_priced_per_group(void **state)
{
    study_result *x = su_must_run_text(mixed, NULL);
    /* catalog list prices: A100-80GB 2.45, H200 6.35 USD per GPU-hour */
    double hours = m(x, "duration") / 3600;
    double want = (4 * 2.45 + 2 * 6.35) * hours;
    print_message("%.1f s: %.4f GPU-hours, %.4f USD (4 x 2.45 + 2 x 6.35 USD/h: %.4f)\n",
                  m(x, "duration"), m(x, "gpu_hours"), m(x, "cost_usd"), want);
    assert_true(fabs(m(x, "gpu_hours") - 6 * hours) < 1e-9 * hours);
    assert_true(fabs(m(x, "cost_usd") - want) < 1e-9 * want);
    free(x);
}

static void test_routing_by_work_beats_round_robin(void **state)
{
    const char *rr[] = {"router=round_robin", NULL};
    study_result *w = su_must_run_text(mixed, NULL), *r = su_must_run_text(mixed, rr),
                 *e = su_must_run_text(mixed_equal, NULL);
    print_message("p99 TTFT: least_tokens by capacity %.1f ms, weighed alike %.1f ms, round robin "
                  "%.1f ms\n",
                  m(w, "p99_ttft_ms"), m(e, "p99_ttft_ms"), m(r, "p99_ttft_ms"));
    assert_true(m(w, "p99_ttft_ms") < m(r, "p99_ttft_ms"));
    assert_true(m(w, "p99_ttft_ms") < m(e, "p99_ttft_ms"));
    free(w);
    free(r);
    free(e);
}

static void test_one_group_is_the_plain_deployment(void **state)
{
    static const char one[] = HEAD "replicas:\n  - {gpu: a100-80gb, count: 3}\n" LOAD(20, 500);
    static const char plain[] = HEAD "replicas: 3\n" LOAD(20, 500);
    study_result *a = su_must_run_text(one, NULL), *b = su_must_run_text(plain, NULL);
    assert_true(m(a, "p99_ttft_ms") == m(b, "p99_ttft_ms"));
    assert_true(m(a, "mean_tpot_ms") == m(b, "mean_tpot_ms"));
    assert_true(m(a, "duration") == m(b, "duration"));
    assert_true(m(a, "cost_usd") == m(b, "cost_usd"));
    free(a);
    free(b);
}

/* Llama-3.1-70B's 141 GB of bf16 weights fit two H200s, not one L4 */
static const char big[] = "name: big\nseed: 1\nmodel: llama-3.1-70b\ngpu: h200\nengine: vllm\n"
                          "replicas:\n  - {gpu: h200, count: 1, tensor_parallel: 2}\n"
                          "  - {gpu: l4, count: 2}\n" LOAD(1, 10);

static const su_refusal refusals[] = {
    {HEAD "replicas:\n  - {gpu: a100-80gb, count: 2}\n  - {gpu: h900, count: 1}\n" LOAD(10, 10),
     "replicas[1].gpu"},
    {big, "replicas[1]"},
    {big, "does not fit"},
    {HEAD "replicas:\n  - {gpu: h200, replicas: 2}\n" LOAD(1, 10),
     "replicas[0].replicas: a group's size is its count"},
    {HEAD "replicas:\n  - {gpu: h200, count: 1, router: round_robin}\n"
          "  - {gpu: l4, count: 1}\n" LOAD(1, 10),
     "set router at the top level"},
    {HEAD "replicas:\n  - {gpu: h200}\n" LOAD(1, 10), "replicas[0].count: missing"},
    {HEAD "replicas:\n  - {gpu: h200, count: 1, weight: 2}\n"
          "  - {gpu: a100-80gb, count: 1}\n" LOAD(1, 10),
     "weight given for 1 of 2 groups"},
    {HEAD MIXED "kv_offload: {tiers: [{kind: cpu, capacity_gb: 10}]}\n" LOAD(1, 10),
     "a mixed pool (a list of groups) with kv_offload is not modelled"},
    {HEAD MIXED "prefill: {replicas: 1}\ndecode: {replicas: 1}\n" LOAD(1, 10),
     "replicas are per pool"},
};

static void test_refusals(void **state)
{
    su_refused_all(refusals, sizeof refusals / sizeof refusals[0]);
}

LLMSIM_TEST_MAIN(NULL, NULL, test_throughput_between_its_parts, test_each_group_its_own_plan,
                 test_cost_priced_per_group, test_routing_by_work_beats_round_robin,
                 test_one_group_is_the_plain_deployment, test_refusals)
