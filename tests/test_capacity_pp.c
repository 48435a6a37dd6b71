/*
 * test_capacity_pp.c: `capacity` where the scenario's model does not fit its layout.
 *  - Llama-3.1-405B in bf16 does not fit 8 H100s (TP8): the search runs on recommend's first
 *    layout past one node that fits, TP8 x PP2 (two nodes, a stage each), says so, and finds a
 *    rate for 16 GPUs a replica; without that layout the same search fails on the weights;
 *  - a model that fits keeps its scenario's layout (no overrides added);
 *  - a model too big for recommend's largest pipeline (4 nodes) still fails, as before;
 *  - the layouts are recommend's own (study_rec_pipelines).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "study_capacity.h"
#include "study_recommend.h"
#include "study_util.h"
#include "test_main.h"

#define WORKLOAD                                                                                   \
    "workload:\n  num_requests: 200\n  arrival: {process: poisson, rate: 1}\n"                     \
    "  prompt_tokens: {dist: uniform, min: 500, max: 1500}\n"                                      \
    "  output_tokens: {dist: uniform, min: 50, max: 200}\n"

static const char big[] = "name: big\nseed: 1\nmodel: llama-3.1-405b\ngpu: h100-sxm\n"
                          "engine: vllm\ntensor_parallel: 8\n" WORKLOAD;
static const char small[] = "name: small\nseed: 1\nmodel: llama-3-8b\ngpu: h100-sxm\n"
                            "engine: vllm\n" WORKLOAD;
/* 32 L4s hold 24 GB each: 768 GB, short of the 405B's 811 GB of bf16 weights */
static const char huge[] = "name: huge\nseed: 1\nmodel: llama-3.1-405b\ngpu: l4\n"
                           "engine: vllm\ntensor_parallel: 8\n" WORKLOAD;

static void setup(study_capacity *c, const char *text)
{
    su_capacity_setup(c, "test.yaml", text, "ttft_p99=10s,tpot_p99=300ms", 0.2);
    c->max_seeds = 1;
}

/* Fits c's layout to its GPUs (study_capacity_fit); the test fails when fitting does. */
static void fit(study_capacity *c)
{
    sim_err err;
    if (study_capacity_fit(c, &err) != 0)
        fail_msg("%s", err.msg);
}

/* c set up for text and fitted, the fit adding no layout (no pipeline, no tensor parallel). */
static void fit_adds_nothing(study_capacity *c, const char *text)
{
    setup(c, text);
    fit(c);
    assert_int_equal(c->fit.nsets, 0);
}

/* The search of c fails on the weights. */
static void does_not_fit(study_capacity *c)
{
    study_answer a;
    sim_err err;
    assert_int_equal(study_capacity_find(c, 0, &a, &err), -1);
    assert_non_null(strstr(err.msg, "does not fit"));
}

static int has_set(const study_choice *ch, const char *set)
{
    for (int k = 0; k < ch->nsets; k++)
        if (!strcmp(ch->set[k], set))
            return 1;
    return 0;
}

static void recommends_pipelines(void **state)
{
    (void)state;
    study_rec_layout lay[4];
    int n = study_rec_pipelines(126, lay, 4);
    assert_int_equal(n, 2);
    assert_int_equal(lay[0].tp, 8);
    assert_int_equal(lay[0].pp, 2);
    assert_int_equal(lay[1].tp, 8);
    assert_int_equal(lay[1].pp, 4);
    /* no more stages than layers */
    assert_int_equal(study_rec_pipelines(3, lay, 4), 1);
}

static void big_model_searched_on_a_pipeline(void **state)
{
    (void)state;
    study_capacity c;
    setup(&c, big);
    does_not_fit(&c); /* without a pipeline */
    fit(&c);
    print_message("%s\n", c.fit_note);
    assert_true(has_set(&c.fit, "tensor_parallel=8"));
    assert_true(has_set(&c.fit, "pipeline_parallel=2"));
    assert_non_null(strstr(c.fit_note, "pipeline_parallel 2"));
    study_answer a;
    sim_err err;
    if (study_capacity_find(&c, 0, &a, &err) != 0)
        fail_msg("%s", err.msg);
    print_message("TP8 PP2: %.3f req/s a replica of %d GPUs\n", a.rate, a.tp);
    assert_int_equal(a.verdict, STUDY_FOUND);
    assert_true(a.rate > 0);
    assert_int_equal(a.tp, 16);
}

static void fitting_model_keeps_its_layout(void **state)
{
    (void)state;
    study_capacity c;
    fit_adds_nothing(&c, small);
    assert_string_equal(c.fit_note, "");
}

static void too_big_for_any_pipeline(void **state)
{
    (void)state;
    study_capacity c;
    fit_adds_nothing(&c, huge);
    does_not_fit(&c);
}

LLMSIM_TEST_MAIN(NULL, NULL, recommends_pipelines, big_model_searched_on_a_pipeline,
                 fitting_model_keeps_its_layout, too_big_for_any_pipeline)
