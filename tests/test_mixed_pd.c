/*
 * test_mixed_pd.c: prefill and decode pools of mixed groups (`decode: {replicas: [{gpu, count,
 * ...}, ...]}`) end to end through study/:
 *  - a mixed decode pool serves more than its all-slow variant and less than its all-fast one,
 *    under the same overload;
 *  - each KV transfer moves at its own pair's link (the slower end), so a pool of A100s (25 GB/s
 *    NICs) and H200s (50 GB/s) averages the two;
 *  - the fleet's cost prices every group at its own GPU;
 *  - a list of one group is the scalar pool, to the bit, on either side;
 *  - what is not modelled is refused, naming the pool and the group.
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

#define m(r, name) su_metric(r, name)

#define HEAD "name: mixedpd\nseed: 1\nmodel: llama-3.1-8b\ngpu: h200\nengine: vllm\n"
#define OVERLOAD                                                                                   \
    "workload:\n  num_requests: 1500\n  arrival: {process: poisson, rate: 60}\n"                   \
    "  prompt_tokens: {dist: lognormal, mean: 600, sigma: 0.5, max: 4000}\n"                       \
    "  output_tokens: {dist: lognormal, mean: 600, sigma: 0.5, max: 3000}\n"
#define PREFILL "prefill: {replicas: 2}\n"

static const char slow[] = HEAD PREFILL "decode:\n  router: least_tokens\n  replicas:\n"
                                        "    - {gpu: a100-80gb, count: 3}\n" OVERLOAD;
static const char mixed[] = HEAD PREFILL "decode:\n  router: least_tokens\n  replicas:\n"
                                         "    - {gpu: a100-80gb, count: 2}\n"
                                         "    - {gpu: h200, count: 1}\n" OVERLOAD;
static const char fast[] = HEAD PREFILL "decode:\n  router: least_tokens\n  replicas:\n"
                                        "    - {gpu: h200, count: 3}\n" OVERLOAD;

static void test_decode_throughput_between_its_parts(void **state)
{
    study_result *s = su_must_run_text(slow, NULL), *x = su_must_run_text(mixed, NULL),
                 *f = su_must_run_text(fast, NULL);
    print_message("decode 3 x A100 %.2f req/s, 2 x A100 + 1 x H200 %.2f req/s, 3 x H200 %.2f "
                  "req/s (output %.0f / %.0f / %.0f tok/s)\n",
                  m(s, "request_throughput"), m(x, "request_throughput"),
                  m(f, "request_throughput"), m(s, "output_throughput"), m(x, "output_throughput"),
                  m(f, "output_throughput"));
    assert_true(m(s, "output_throughput") < m(x, "output_throughput"));
    assert_true(m(x, "output_throughput") < m(f, "output_throughput"));
    assert_true(m(s, "request_throughput") < m(x, "request_throughput"));
    assert_true(m(x, "request_throughput") < m(f, "request_throughput"));
    assert_int_equal((int)m(x, "decode_gpus"), 3);
    assert_int_equal((int)m(x, "prefill_gpus"), 2);
    free(s);
    free(x);
    free(f);
}

/* One request every 2 s, each done long before the next: every transfer is alone on its link. */
#define LONE                                                                                       \
    "kv_transfer: {link: rdma, latency_us: 10}\n"                                                  \
    "workload:\n  num_requests: 30\n  arrival: {process: constant, rate: 0.5}\n"                   \
    "  prompt_tokens: 2000\n  output_tokens: 40\n"
#define LONE_HEAD                                                                                  \
    "name: lone\nseed: 3\nmodel: llama-3-8b\ngpu: h200\nengine: vllm\nprefill: {replicas: 1}\n"

static const char lone_slow[] = LONE_HEAD "decode: {replicas: 2, gpu: a100-80gb}\n" LONE;
static const char lone_fast[] = LONE_HEAD "decode: {replicas: 2, gpu: h200}\n" LONE;
static const char lone_mixed[] = LONE_HEAD "decode:\n  router: round_robin\n  replicas:\n"
                                           "    - {gpu: a100-80gb, count: 1}\n"
                                           "    - {gpu: h200, count: 1}\n" LONE;

static void test_each_pair_its_own_link(void **state)
{
    /* Llama-3-8B's KV in bf16: 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 bytes per token */
    double bytes = 2000 * 131072.0;
    /* the H200 prefill's NIC is 50 GB/s; an A100-80GB's 25 GB/s: the slower end sets the pace */
    double t25 = (ceil(bytes / 25) + 10000) / 1e6, t50 = (ceil(bytes / 50) + 10000) / 1e6;
    study_result *s = su_must_run_text(lone_slow, NULL), *f = su_must_run_text(lone_fast, NULL),
                 *x = su_must_run_text(lone_mixed, NULL);
    print_message("KV transfer: A100 decode %.4f ms, H200 decode %.4f ms, round robin over both "
                  "%.4f ms (p99 %.4f ms)\n",
                  m(s, "mean_kv_transfer_ms"), m(f, "mean_kv_transfer_ms"),
                  m(x, "mean_kv_transfer_ms"), m(x, "p99_kv_transfer_ms"));
    assert_int_equal((int)m(x, "completed"), 30);
    assert_true(fabs(m(s, "mean_kv_transfer_ms") - t25) < 1e-9);
    assert_true(fabs(m(f, "mean_kv_transfer_ms") - t50) < 1e-9);
    /* round robin alternates: half the transfers at each pair's pace */
    assert_true(fabs(m(x, "mean_kv_transfer_ms") - (t25 + t50) / 2) < 1e-9);
    assert_true(fabs(m(x, "kv_transfer_bytes_per_request") - bytes) < 1e-3);
    /* catalog list prices: A100-80GB 2.45, H200 6.35 USD per GPU-hour */
    double hours = m(x, "duration") / 3600, want = (2.45 + 2 * 6.35) * hours;
    assert_true(fabs(m(x, "gpu_hours") - 3 * hours) < 1e-9 * hours);
    assert_true(fabs(m(x, "cost_usd") - want) < 1e-9 * want);
    free(s);
    free(f);
    free(x);
}

static void same(const study_result *a, const study_result *b)
{
    static const char *const names[] = {"p99_ttft_ms",        "mean_tpot_ms", "duration",
                                        "cost_usd",           "energy_kwh",   "mean_kv_transfer_ms",
                                        "decode_gpus",        "prefill_gpus", "decode_utilization",
                                        "prefill_utilization"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!(m(a, names[i]) == m(b, names[i])))
            fail_msg("%s: %.17g against %.17g", names[i], m(a, names[i]), m(b, names[i]));
}

static void test_one_group_is_the_scalar_pool(void **state)
{
    static const char one_d[] = HEAD PREFILL "decode:\n  router: least_tokens\n  replicas:\n"
                                             "    - {gpu: a100-80gb, count: 3}\n" OVERLOAD;
    static const char plain_d[] =
        HEAD PREFILL "decode: {replicas: 3, gpu: a100-80gb, router: least_tokens}\n" OVERLOAD;
    static const char one_p[] = HEAD "prefill:\n  replicas: [{gpu: h200, count: 2}]\n"
                                     "decode: {replicas: 3, gpu: a100-80gb}\n" OVERLOAD;
    static const char plain_p[] =
        HEAD "prefill: {replicas: 2}\ndecode: {replicas: 3, gpu: a100-80gb}\n" OVERLOAD;
    study_result *a = su_must_run_text(one_d, NULL), *b = su_must_run_text(plain_d, NULL);
    same(a, b);
    free(a);
    free(b);
    a = su_must_run_text(one_p, NULL);
    b = su_must_run_text(plain_p, NULL);
    same(a, b);
    free(a);
    free(b);
}

#define TWO_D(g1) "decode:\n  replicas:\n    - {gpu: h200, count: 1}\n    - " g1 "\n"

static const su_refusal refusals[] = {
    {HEAD PREFILL TWO_D("{gpu: h900, count: 1}") LONE, "decode.replicas[1].gpu"},
    {HEAD PREFILL TWO_D("{gpu: h200, count: 1, router: round_robin}") LONE,
     "decode.replicas[1].router: one router routes the whole pool"},
    {HEAD PREFILL TWO_D("{gpu: h200, replicas: 2}") LONE,
     "decode.replicas[1].replicas: a group's size is its count"},
    {HEAD PREFILL TWO_D("{gpu: a100-80gb, count: 1, weight: 2}") LONE,
     "decode.replicas: weight given for 1 of 2 groups"},
    {HEAD PREFILL TWO_D("{gpu: l40s, count: 1}") LONE, "decode.replicas[1].gpu"},
    {HEAD PREFILL TWO_D("{gpu: l40s, count: 1}") LONE, "no rdma bandwidth"},
    {HEAD PREFILL TWO_D("{gpu: h200, count: 1, scheduler: {name: static}}") LONE,
     "decode.replicas[1].scheduler"},
    {HEAD PREFILL TWO_D("{gpu: h200, count: 1, pipeline_parallel: 2}") LONE,
     "pipeline_parallel with prefill and decode pools is not modelled"},
    {HEAD "prefill:\n  replicas: [{count: 1}, {count: 1}, {count: 1}, {count: 1}, {count: 1}]\n"
          "decode:\n  replicas: [{count: 1}, {count: 1}, {count: 1}, {count: 1}]\n" LONE,
     "at most 8 groups over the prefill and decode pools"},
    {HEAD "prefill:\n  replicas: [{count: 1}, {count: 1}, {count: 1}, {count: 1}, {count: 1}, "
          "{count: 1}, {count: 1}, {count: 1}]\ndecode: {replicas: 1}\n" LONE,
     "at most 8 pools in all"},
};

static void test_refusals(void **state)
{
    su_refused_all(refusals, sizeof refusals / sizeof refusals[0]);
}

LLMSIM_TEST_MAIN(NULL, NULL, test_decode_throughput_between_its_parts, test_each_pair_its_own_link,
                 test_one_group_is_the_scalar_pool, test_refusals)
