/* test_placement.c: expert placement (moe: {placement, redundant_experts, skew}). The imbalance
 * factor's properties over a grid of expert counts, top-k and expert parallelism (1 at skew 0,
 * growing with the skew under static placement, EPLB at or below static, redundant experts
 * helping); the step time a roofline gives, never falling as the skew grows without EPLB and
 * mostly recovered with it; redundant slots' weights; and the refusals. Each fails without the
 * placement model (the old skew made decode faster than balanced and prefill not monotone). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "catalog.h"
#include "models_util.h"
#include "placement.h"
#include "roofline.h"
#include "scenario.h"
#include "study.h"
#include "test_main.h"

static const struct {
    int experts, topk;
} shapes[] = {{8, 2},  {16, 1},  {16, 4},  {32, 4},  {60, 4},  {64, 6},
              {64, 8}, {128, 8}, {160, 6}, {256, 8}, {384, 8}, {512, 10}};
#define NSHAPES (sizeof shapes / sizeof shapes[0])

static double factor(int E, int k, int ep, int placement, int R, double skew)
{
    eng_moe m = {placement, R, skew};
    return cal_moe_imbalance(E, k, ep, &m);
}

static void test_static_grows_with_skew(void **state)
{
    (void)state;
    for (size_t i = 0; i < NSHAPES; i++)
        for (int ep = 2; ep <= 64 && ep <= shapes[i].experts; ep *= 2) {
            int E = shapes[i].experts, k = shapes[i].topk;
            if (E % ep)
                continue;
            assert_true(factor(E, k, ep, ENG_MOE_STATIC, 0, 0) == 1.0);
            double prev = 1;
            for (int s = 1; s <= 60; s++) {
                double f = factor(E, k, ep, ENG_MOE_STATIC, 0, s * 0.05);
                assert_true(f >= prev);
                assert_true(f <= ep + 1e-9); /* one GPU takes at most every pair */
                prev = f;
            }
            assert_true(prev > 1.05); /* skew 3 unbalances every such layout */
        }
    /* without expert parallelism there is nothing to unbalance */
    assert_true(factor(256, 8, 1, ENG_MOE_STATIC, 0, 2) == 1.0);
}

static void test_eplb_at_or_below_static(void **state)
{
    (void)state;
    static const double skews[] = {0, 0.3, 0.6, 1.0, 1.2, 2, 3};
    for (size_t i = 0; i < NSHAPES; i++)
        for (int ep = 2; ep <= 64 && ep <= shapes[i].experts; ep *= 2) {
            int E = shapes[i].experts, k = shapes[i].topk;
            if (E % ep)
                continue;
            for (size_t s = 0; s < sizeof skews / sizeof skews[0]; s++) {
                double st = factor(E, k, ep, ENG_MOE_STATIC, 0, skews[s]);
                double first = factor(E, k, ep, ENG_MOE_EPLB, 0, skews[s]);
                double best = first;
                /* R = ep x 0, 1, 2, 3, 4, 6, 8, 12, 16, ... */
                for (int j = 0, R = 0; R <= E; j = j < 4 ? j + 1 : j + j / 2, R = ep * j) {
                    double f = factor(E, k, ep, ENG_MOE_EPLB, R, skews[s]);
                    assert_true(f >= 1 - 1e-12);
                    assert_true(f <= st + 1e-12);
                    /* more redundant experts never worse, up to the greedy packing's rounding:
                     * DeepSeek's replicate-then-pack is not monotone in R (60 experts, top-4,
                     * ep 4, skew 3: 1.004 with none, 1.043 with 12), never by 5% on this grid */
                    assert_true(f <= best * 1.05);
                    best = f < best ? f : best;
                }
            }
        }
}

/* DeepSeek-V3's 256 experts, top-8: one redundant slot per GPU takes most of static placement's
 * excess away (the DeepSeek-V3 report deploys 32 redundant experts on 32 GPUs for prefill). */
static void test_eplb_recovers(void **state)
{
    (void)state;
    for (int ep = 8; ep <= 64; ep *= 2)
        for (double s = 0.5; s <= 2.0; s += 0.5) {
            double st = factor(256, 8, ep, ENG_MOE_STATIC, 0, s);
            double eb = factor(256, 8, ep, ENG_MOE_EPLB, ep, s);
            print_message("256 experts top-8 ep%d skew %.1f: static %.3f, eplb+%d %.3f\n", ep, s,
                          st, ep, eb);
            assert_true(st > 1.1);
            assert_true(eb - 1 <= 0.1 * (st - 1));
        }
}

static eng_predictor predictor(const eng_model *m, int placement, int R, double skew)
{
    cal_serving s = cal_serving_tp(ENG_FP8, 1);
    s.layout.dp = 8;
    s.layout.ep = 8;
    s.layout.moe = (eng_moe){placement, R, skew};
    return roofline_of(m, "h200", &s);
}

static double step(const eng_predictor *p, const eng_shape *s)
{
    return (double)p->ops->iteration_ns(p->st, s);
}

/* Steps of decodes alone (memory-bound experts at small batch) and a long prefill. */
static void shapes_of(const eng_model *m, eng_shape out[4])
{
    static const int64_t n[3] = {8, 64, 512};
    (void)m; /* deepseek-v3: full attention, no cap */
    for (int i = 0; i < 3; i++) {
        out[i] = (eng_shape){0};
        eng_shape_add_decodes(&out[i], n[i], n[i] * 2000);
        out[i].emit_seqs = (int32_t)n[i];
    }
    out[3] = (eng_shape){0};
    eng_shape_add_prefill(&out[3], 16384, 0);
    out[3].emit_seqs = 1;
}

static void test_step_never_falls_with_skew(void **state)
{
    (void)state;
    eng_model m = catalog_model("deepseek-v3");
    eng_shape sh[4];
    shapes_of(&m, sh);
    double prev[4] = {0, 0, 0, 0};
    for (int i = 0; i <= 30; i++) {
        eng_predictor p = predictor(&m, ENG_MOE_STATIC, 0, i * 0.1);
        for (int j = 0; j < 4; j++) {
            double t = step(&p, &sh[j]);
            assert_true(t >= prev[j]);
            prev[j] = t;
        }
        cal_predictor_free(&p);
    }
    /* EPLB with a redundant slot per GPU recovers most of what skew 1.2 costs the prefill */
    eng_predictor bal = predictor(&m, ENG_MOE_STATIC, 0, 0),
                  st = predictor(&m, ENG_MOE_STATIC, 0, 1.2),
                  eb = predictor(&m, ENG_MOE_EPLB, 32, 1.2);
    double tb = step(&bal, &sh[3]), ts = step(&st, &sh[3]), te = step(&eb, &sh[3]);
    print_message("deepseek-v3 dp8 ep8 h200, 16k prefill: balanced %.2f, static skew 1.2 %.2f, "
                  "eplb+32 %.2f ms\n",
                  tb / 1e6, ts / 1e6, te / 1e6);
    assert_true(ts > 1.1 * tb);
    assert_true(te - tb < 0.25 * (ts - tb));
    assert_non_null(strstr(eb.label, "skew 1.2 eplb+32"));
    cal_predictor_free(&bal);
    cal_predictor_free(&st);
    cal_predictor_free(&eb);
}

/* Redundant slots hold whole copies of experts: more weights on every GPU. */
static void test_redundant_weights(void **state)
{
    (void)state;
    eng_model m = catalog_model("deepseek-v3");
    eng_layout a = {1, 8, 8, {ENG_MOE_EPLB, 0, 0}}, b = a;
    b.moe.redundant = 32;
    eng_gpu_share sa, sb;
    eng_model_gpu_share(&m, ENG_FP8, ENG_DTYPE_AUTO, &a, &sa);
    eng_model_gpu_share(&m, ENG_FP8, ENG_DTYPE_AUTO, &b, &sb);
    /* 36 slots per GPU instead of 32: 4 more of the model's 256 experts' weights (each layer) */
    double whole = (double)eng_model_part_params(&m, ENG_PART_EXPERTS) *
                   eng_model_part_bytes(&m, ENG_FP8, ENG_PART_EXPERTS);
    double more = (double)(sb.weight_bytes - sa.weight_bytes);
    assert_true(fabs(more - whole * 4 / 256) < 0.01 * more);
}

static void expect_refused(const char *model, eng_layout l, const char *frag)
{
    eng_model m = catalog_model(model);
    char why[600] = "";
    assert_int_equal(eng_layout_check(&m, &l, why, sizeof why), -1);
    if (!strstr(why, frag))
        fail_msg("%s: '%s' lacks '%s'", model, why, frag);
}

static void test_refusals(void **state)
{
    (void)state;
    expect_refused("llama-3-8b", (eng_layout){1, 1, 1, {ENG_MOE_EPLB, 0, 0}}, "no routed experts");
    expect_refused("llama-3-8b", (eng_layout){1, 1, 1, {ENG_MOE_STATIC, 0, 1}},
                   "no routed experts");
    expect_refused("deepseek-v3", (eng_layout){8, 1, 1, {ENG_MOE_EPLB, 0, 0}},
                   "needs expert_parallel > 1");
    expect_refused("deepseek-v3", (eng_layout){8, 1, 1, {ENG_MOE_STATIC, 0, 1.2}},
                   "moe.skew: needs expert_parallel > 1");
    expect_refused("deepseek-v3", (eng_layout){8, 8, 1, {ENG_MOE_STATIC, 8, 0}},
                   "set moe.placement: eplb");
    expect_refused("deepseek-v3", (eng_layout){8, 8, 1, {ENG_MOE_EPLB, 4, 0}},
                   "must split evenly over expert_parallel 8");
    eng_model m = catalog_model("deepseek-v3");
    eng_layout ok = {8, 8, 1, {ENG_MOE_EPLB, 32, 1.2}};
    assert_int_equal(eng_layout_check(&m, &ok, NULL, 0), 0);
}

static const char *const MOE = "model: qwen3-30b-a3b\n"
                               "gpu: h100-sxm\n"
                               "tensor_parallel: 2\n"
                               "expert_parallel: 2\n"
                               "scheduler: {name: vllm}\n"
                               "workload:\n"
                               "  num_requests: 10\n"
                               "  arrival: {process: burst}\n"
                               "  prompt_tokens: 100\n"
                               "  output_tokens: 10\n";

static int load(const char *text, const char *set, scn_scenario *s, sim_err *e)
{
    const char *sets[] = {set};
    return scn_load_text("moe.yaml", text, sets, set ? 1 : 0, study_resolver(), s, e);
}

static void expect_load_error(const char *text, const char *set, const char *frag)
{
    scn_scenario s;
    sim_err e;
    assert_int_equal(load(text, set, &s, &e), -1);
    scn_free(&s);
    if (!strstr(e.msg, frag))
        fail_msg("'%s' lacks '%s'", e.msg, frag);
}

/* The scenario's moe: section reaches the layout; cost_model.moe_skew is read as moe.skew. */
static void test_scenario_keys(void **state)
{
    (void)state;
    scn_scenario s;
    sim_err e;
    if (load(MOE, "moe={placement: eplb, redundant_experts: 2, skew: 1.2}", &s, &e) != 0)
        fail_msg("%s", e.msg);
    eng_layout l;
    eng_config_layout(&s.engine, &l);
    assert_int_equal(l.moe.placement, ENG_MOE_EPLB);
    assert_int_equal(l.moe.redundant, 2);
    assert_true(l.moe.skew == 1.2);
    scn_free(&s);
    if (load(MOE, "cost_model={moe_skew: 0.8}", &s, &e) != 0)
        fail_msg("%s", e.msg);
    assert_true(s.engine.moe.skew == 0.8);
    assert_int_equal(s.engine.moe.placement, ENG_MOE_STATIC);
    assert_non_null(strstr(s.notes, "cost_model.moe_skew: an old name; read as moe.skew"));
    scn_free(&s);
    char text[1024];
    snprintf(text, sizeof text, "%smoe: {placement: eplb, redundant_experts: 3}\n", MOE);
    expect_load_error(text, NULL, "moe.yaml:11: moe: moe.redundant_experts 3");
    expect_load_error(MOE, "moe={redundant_experts: 2}", "redundant copies are EPLB's");
    snprintf(text, sizeof text, "%smoe: {skew: 1}\n", MOE);
    expect_load_error(text, "expert_parallel=1", "moe.skew: needs expert_parallel > 1");
    expect_load_error(MOE, "moe={placement: random}", "static, eplb");
    expect_load_error("model: llama-3.1-8b\ngpu: h100-sxm\nmoe: {skew: 1}\n"
                      "workload: {num_requests: 1, arrival: {process: burst}, prompt_tokens: 9, "
                      "output_tokens: 9}\n",
                      NULL, "moe.yaml:3: moe: moe: model llama-3.1-8b has no routed experts");
}

LLMSIM_TEST_MAIN(NULL, NULL, test_static_grows_with_skew, test_eplb_at_or_below_static,
                 test_eplb_recovers, test_step_never_falls_with_skew, test_redundant_weights,
                 test_refusals, test_scenario_keys)
