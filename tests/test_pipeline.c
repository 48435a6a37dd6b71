/*
 * test_pipeline.c: pipeline parallelism (pipeline_parallel, pipeline_batches) end to end through
 * study/: Llama-3.1-405B in bf16 on two nodes of 8 H100s as TP8 PP2.
 *  - TP8 alone does not fit; TP8 PP2 holds half the layers per GPU (63 of 126) on 16 GPUs;
 *  - one request alone decodes at the same pace whatever the batches in flight, each step at
 *    least one stage's time;
 *  - under a burst, two batches in flight (one per stage) serve more than one batch with its
 *    bubbles, and a step waits for the other batch's stages (never shorter than alone);
 *  - pipeline_parallel 1 is the deployment without a pipeline, to the bit;
 *  - what is not modelled is refused.
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

static const char pp[] = "name: pp\nseed: 1\nmodel: llama-3.1-405b\ngpu: h100-sxm\nengine: vllm\n"
                         "tensor_parallel: 8\npipeline_parallel: 2\n"
                         "workload:\n  num_requests: 200\n  arrival: {process: burst}\n"
                         "  prompt_tokens: {dist: uniform, min: 500, max: 2000}\n"
                         "  output_tokens: {dist: uniform, min: 100, max: 400}\n";

#define m(r, name) su_metric(r, name)

static void test_layers_split_over_stages(void **state)
{
    scn_scenario s;
    sim_err err;
    eng_kv_plan p1, p2;
    const char *one[] = {"pipeline_parallel=1", NULL};
    su_load_text("test.yaml", pp, one, &s);
    assert_int_equal(eng_kv_plan_compute(&s.engine, &p1, &err), -1);
    print_message("TP8: %s\n", err.msg);
    assert_non_null(strstr(err.msg, "does not fit"));
    scn_free(&s);
    su_load_text("test.yaml", pp, NULL, &s);
    assert_int_equal(eng_kv_plan_compute(&s.engine, &p2, &err), 0);
    print_message("TP8 PP2: %d GPUs, %d layers a stage, %.1f GB of weights and %lld KV bytes a "
                  "token per GPU, %lld blocks\n",
                  p2.gpus, p2.stage_layers, p2.weight_bytes / 1e9, (long long)p2.bytes_per_token,
                  (long long)p2.blocks);
    assert_int_equal(p2.gpus, 16);
    assert_int_equal(p2.stage_layers, 63);
    /* 126 layers of 8 KV heads x 128 x 2 x 2 bytes, 63 of them a stage, over TP8 */
    assert_int_equal(p2.bytes_per_token, 63 * 2 * 128 * 2);
    /* 405.85 B parameters in bf16 over 16 GPUs, plus one of the embedding and the LM head */
    assert_true(p2.weight_bytes > 405.85e9 * 2 / 16 && p2.weight_bytes < 405.85e9 * 2 / 16 + 2.2e9);
    scn_free(&s);
}

static void test_one_request_alone(void **state)
{
    const char *two[] = {"workload.num_requests=1", NULL};
    const char *one[] = {"workload.num_requests=1", "pipeline_batches=1", NULL};
    study_result *a = su_must_run_text(pp, two), *b = su_must_run_text(pp, one);
    print_message("one request: TPOT %.2f ms with two batches in flight, %.2f ms with one\n",
                  m(a, "mean_tpot_ms"), m(b, "mean_tpot_ms"));
    assert_true(m(a, "mean_tpot_ms") == m(b, "mean_tpot_ms"));
    assert_true(m(a, "mean_ttft_ms") == m(b, "mean_ttft_ms"));
    free(a);
    free(b);
}

static void test_batches_in_flight(void **state)
{
    const char *alone[] = {"workload.num_requests=1", NULL};
    const char *one[] = {"pipeline_batches=1", NULL};
    study_result *a = su_must_run_text(pp, NULL), *b = su_must_run_text(pp, one),
                 *c = su_must_run_text(pp, alone);
    print_message("burst of 200: %.1f output tokens/s with two batches in flight (TPOT %.1f ms), "
                  "%.1f with one (TPOT %.1f ms); one request alone: TPOT %.2f ms\n",
                  m(a, "output_throughput"), m(a, "mean_tpot_ms"), m(b, "output_throughput"),
                  m(b, "mean_tpot_ms"), m(c, "mean_tpot_ms"));
    assert_true(m(a, "output_throughput") > 1.5 * m(b, "output_throughput"));
    assert_true(m(a, "output_throughput") < 2.0 * m(b, "output_throughput"));
    /* a step takes both stages, and waits for the other batch's turn on them */
    assert_true(m(a, "mean_tpot_ms") >= m(c, "mean_tpot_ms"));
    free(a);
    free(b);
    free(c);
}

static void test_one_stage_is_no_pipeline(void **state)
{
    static const char plain[] = "name: pp\nseed: 1\nmodel: llama-3.1-70b\ngpu: h100-sxm\n"
                                "engine: vllm\ntensor_parallel: 4\n"
                                "workload:\n  num_requests: 200\n  arrival: {process: burst}\n"
                                "  prompt_tokens: {dist: uniform, min: 500, max: 2000}\n"
                                "  output_tokens: {dist: uniform, min: 100, max: 400}\n";
    static const char *const one[] = {"pipeline_parallel=1", "pipeline_batches=4", NULL};
    study_result *x = su_must_run_text(plain, one), *y = su_must_run_text(plain, NULL);
    for (int i = 0; i < y->n; i++)
        if (y->m[i].value != m(x, y->m[i].name))
            fail_msg("%s: %.17g and %.17g", y->m[i].name, y->m[i].value, m(x, y->m[i].name));
    free(x);
    free(y);
}

static void refused(const char *const *sets, const char *want)
{
    su_refused_text(pp, sets, want);
}

static void test_refusals(void **state)
{
    const char *layers[] = {"pipeline_parallel=64", "model=llama-3-8b", "tensor_parallel=1", NULL};
    refused(layers, "has 32 layers");
    const char *spec[] = {"speculative={method: ngram, num_speculative_tokens: 3, acceptance: "
                          "{length: 2}}",
                          NULL};
    refused(spec, "speculative decoding is not modelled");
    const char *scaled[] = {"autoscale={metric: concurrency, target: 16, max_replicas: 4}", NULL};
    refused(scaled, "pipeline_parallel with autoscale is not modelled");
}

LLMSIM_TEST_MAIN(NULL, NULL, test_layers_split_over_stages, test_one_request_alone,
                 test_batches_in_flight, test_one_stage_is_no_pipeline, test_refusals)
