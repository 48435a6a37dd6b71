/*
 * test_scenarios.c: scenario loading, validation and overrides; the synthetic workload source's
 * determinism. Uses a resolver that knows two fake models and two fake GPUs (the catalogs live
 * in calibration/, which scenarios/ may not use).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "scenario.h"
#include "expect_text.h"
#include "test_main.h"

/* support/scenarios_resolver.c: fake models llama-3-8b (8192 context), tiny-1b (2048) and
 * qwen2.5-7b (131072), fake GPUs h100-sxm and toy-gpu. */
extern const scn_resolver test_resolver;

static const char *const DEMO = "name: demo\n"
                                "seed: 7\n"
                                "model: llama-3-8b\n"
                                "gpu: h100-sxm\n"
                                "dtype: fp16\n"
                                "profile: measured-h100\n"
                                "memory: {gpu_utilization: 0.8, block_size: 32,\n"
                                "         activation_reserve_gb: 2.0, max_model_len: 4096}\n"
                                "scheduler: {name: orca, max_num_seqs: 64}\n"
                                "cpu_overhead: {per_iteration_us: 50, per_seq_us: 2, async: "
                                "true}\n"
                                "replicas: 2\n"
                                "router: least_tokens\n"
                                "tensor_parallel: 2\n"
                                "slo: {ttft_ms: 1000, tpot_ms: 50}\n"
                                "workload:\n"
                                "  num_requests: 1000\n"
                                "  arrival: {process: poisson, rate: 4.0}\n"
                                "  prompt_tokens: {dist: uniform, min: 1500, max: 2000}\n"
                                "  output_tokens: {dist: fixed, value: 500}\n";

static void good_scenario(void **state)
{
    scn_scenario s;
    sim_err e;
    int rc = scn_load_text("demo.yaml", DEMO, NULL, 0, &test_resolver, &s, &e);
    assert_int_equal(rc, 0);
    assert_string_equal(s.name, "demo");
    assert_int_equal(s.seed, 7);
    assert_string_equal(s.model_name, "llama-3-8b");
    assert_string_equal(s.engine.model.name, "llama-3-8b");
    assert_int_equal(s.engine.model.max_context, 8192);
    assert_string_equal(s.engine.gpu.name, "h100-sxm");
    assert_int_equal(s.engine.dtype, ENG_FP16);
    assert_string_equal(s.profile, "measured-h100");
    assert_true(s.engine.gpu_utilization == 0.8);
    assert_int_equal(s.engine.block_size, 32);
    assert_int_equal(s.engine.activation_reserve, INT64_C(2) << 30);
    assert_int_equal(s.engine.max_model_len, 4096);
    assert_string_equal(s.engine.sched.name, "orca");
    assert_string_equal(eng_cfg_get(&s.engine.sched, "max_num_seqs"), "64");
    assert_true(s.engine.cpu.per_iteration_us == 50 && s.engine.cpu.per_seq_us == 2);
    assert_int_equal(s.engine.cpu.async, 1);
    assert_int_equal(s.engine.replicas, 2);
    assert_string_equal(s.engine.router, "least_tokens");
    assert_int_equal(s.engine.tensor_parallel, 2);
    assert_true(s.slo.ttft_ms == 1000 && s.slo.tpot_ms == 50 && s.slo.e2e_ms == 0);
    assert_int_equal(s.workload.num_requests, 1000);
    assert_int_equal(s.workload.arrival.kind, SCN_ARR_POISSON);
    assert_true(s.workload.arrival.rate == 4.0);
    assert_int_equal(s.workload.prompt.kind, SCN_DIST_UNIFORM);
    assert_true(s.workload.prompt.min == 1500 && s.workload.prompt.max == 2000);
    assert_int_equal(s.workload.output.kind, SCN_DIST_FIXED);
    assert_true(s.workload.output.value == 500);
    assert_false(s.workload.trace.present);
    assert_non_null(s.text);
    assert_non_null(strstr(s.text, "max_num_seqs"));
    scn_free(&s);
}

static void defaults(void **state)
{
    scn_scenario s;
    sim_err e;
    const char *txt = "model: tiny-1b\ngpu: toy-gpu\n"
                      "workload: {num_requests: 5, arrival: burst, prompt_tokens: 10,\n"
                      "           output_tokens: 3}\n";
    assert_int_equal(scn_load_text("dir/x.yaml", txt, NULL, 0, &test_resolver, &s, &e), 0);
    assert_string_equal(s.name, "x");
    assert_int_equal(s.seed, 1);
    assert_string_equal(s.profile, "");
    assert_int_equal(s.engine.dtype, ENG_BF16);
    assert_int_equal(s.engine.block_size, 16);
    assert_int_equal(s.engine.replicas, 1);
    assert_string_equal(s.engine.router, "round_robin");
    assert_string_equal(s.engine.sched.name, "orca");
    assert_int_equal(s.workload.arrival.kind, SCN_ARR_BURST);
    assert_int_equal(s.workload.prompt.kind, SCN_DIST_FIXED);
    assert_true(s.workload.prompt.value == 10);
    scn_free(&s);
}

/* Loads DEMO with one line replaced (or with overrides) and checks that it fails with every
 * expected fragment in the message. */
static void expect_error(const char *from, const char *to, const char *const *ovr, int novr,
                         const char *const *frags)
{
    char text[4096];
    const char *src = DEMO;
    if (from) {
        const char *at = strstr(DEMO, from);
        assert_non_null(at);
        snprintf(text, sizeof text, "%.*s%s%s", (int)(at - DEMO), DEMO, to, at + strlen(from));
        src = text;
    }
    scn_scenario s;
    sim_err e;
    e.msg[0] = '\0';
    int rc = scn_load_text("demo.yaml", src, ovr, novr, &test_resolver, &s, &e);
    if (rc == 0)
        fail_msg("expected an error for '%s'", to ? to : ovr[0]);
    expect_all(e.msg, frags);
    scn_free(&s);
}

/* DEMO with line `from` replaced by `to` (none when from is NULL) and the override `set` (when
 * not NULL), refused with every fragment in the message */
typedef struct refusal {
    const char *from, *to, *set;
    const char *frags[5];
} refusal;

static void expect_refusal(const refusal *r)
{
    expect_error(r->from, r->to, &r->set, r->set != NULL, r->frags);
}

static const refusal bad_lines[] = {
    {"seed: 7\n", "seed: 7\nfoo: 1\n",
     .frags = {"demo.yaml:3: foo: unknown key", "workload", "scheduler"}},
    {"max_num_seqs: 64", "max_num_seqs: abc",
     .frags = {"demo.yaml:9: scheduler.max_num_seqs: expected an integer", "'abc'"}},
    {"rate: 4.0", "rate: -4",
     .frags = {"demo.yaml:17: workload.arrival.rate: expected a number > 0, got '-4'"}},
    {"rate: 4.0", "rate: [1]",
     .frags = {"demo.yaml:17: workload.arrival.rate: expected a value, got a list"}},
    {"num_requests: 1000", "num_requests: 0",
     .frags = {"demo.yaml:16: workload.num_requests: expected an integer >= 1, got '0'"}},
    {"min: 1500, max: 2000", "min: 2500, max: 2000",
     .frags = {"demo.yaml:18: workload.prompt_tokens.min: min 2500 > max 2000"}},
    {"model: llama-3-8b", "model: gpt-9",
     .frags = {"demo.yaml:3: model:", "unknown model 'gpt-9'", "llama-3-8b", "tiny-1b"}},
    {"gpu: h100-sxm", "gpu: tpu",
     .frags = {"demo.yaml:4: gpu:", "unknown GPU 'tpu'", "h100-sxm", "toy-gpu"}},
    {"name: orca", "name: fifo",
     .frags = {"demo.yaml:9: scheduler.name: unknown scheduler 'fifo' (valid: ", "orca"}},
    {"dtype: fp16", "dtype: int8",
     .frags = {"demo.yaml:5: dtype: unknown dtype 'int8' (valid: bf16, fp16, fp8, nvfp4, "
               "mxfp4, int4, mxfp4-fp8, fp4)"}},
    {"router: least_tokens", "router: random",
     .frags = {"demo.yaml:12: router: unknown router 'random'", "power_of_two"}},
    {"process: poisson", "process: weibull",
     .frags = {"demo.yaml:17: workload.arrival.process: unknown process 'weibull'", "gamma",
               "closed"}},
    {"dist: fixed", "dist: pareto",
     .frags = {"demo.yaml:19: workload.output_tokens.dist: unknown dist 'pareto'", "lognormal"}},
    {"gpu_utilization: 0.8", "gpu_utilization: 1.5",
     .frags = {"demo.yaml:7: memory.gpu_utilization: expected a number in (0, 1]"}},
    {"block_size: 32", "block_size: 24",
     .frags = {"demo.yaml:7: memory.block_size: expected a power of two in [1, 256]"}},
    {"block_size: 32", "block_size: 512", .frags = {"memory.block_size: expected a power of two"}},
    {"max_model_len: 4096", "max_model_len: 10000",
     .frags = {"demo.yaml:8: memory.max_model_len: 10000 is beyond"}},
    {"async: true", "async: maybe",
     .frags = {"demo.yaml:10: cpu_overhead.async: expected true or false"}},
    {"replicas: 2", "replicas: 0",
     .frags = {"demo.yaml:11: replicas: expected an integer in [1, "}},
    {"scheduler: {name: orca, max_num_seqs: 64}",
     "scheduler: {name: orca, max_num_seqs: 64, frobnicate: 3}",
     .frags = {"demo.yaml:9: scheduler.frobnicate: unknown scheduler key"}},
    {"  num_requests: 1000\n", "  num_requests: 1000\n  rte: 3\n",
     .frags = {"demo.yaml:17: workload.rte: unknown key (valid: num_requests"}},
    {"  arrival: {process: poisson, rate: 4.0}\n", "", .frags = {"workload.arrival: missing"}},
    {"{process: poisson, rate: 4.0}", "{process: gamma, rate: 4.0}",
     .frags = {"workload.arrival.cv: missing"}},
    {"{process: poisson, rate: 4.0}", "{process: poisson, rate: 4.0, cv: 2}",
     .frags = {"demo.yaml:17: workload.arrival.cv: unknown key (valid: process, rate)"}},
    {"seed: 7", "seed: [", .frags = {"demo.yaml:"}},
    {"seed: 7\n", "seed: 7\nseed: 8\n", .frags = {"demo.yaml:3: duplicate key 'seed'"}},
    {"memory: {gpu_utilization: 0.8, block_size: 32,\n"
     "         activation_reserve_gb: 2.0, max_model_len: 4096}",
     "memory: 5", .frags = {"demo.yaml:7: memory: expected a map"}},
};

static void bad_inputs(void **state)
{
    for (size_t i = 0; i < sizeof bad_lines / sizeof bad_lines[0]; i++)
        expect_refusal(&bad_lines[i]);
}

/* dtype (default: the checkpoint's), kv_dtype and the layout keys, checked against the model
 * and the GPU, with notes where the run differs from what the dtype suggests. */
static void precision_and_layout(void **state)
{
    scn_scenario s;
    sim_err e;
    const char *int4[] = {"dtype=int4", "kv_dtype=fp8"};
    assert_int_equal(scn_load_text("demo.yaml", DEMO, int4, 2, &test_resolver, &s, &e), 0);
    assert_int_equal(s.engine.dtype, ENG_INT4);
    assert_int_equal(s.engine.kv_dtype, ENG_FP8);
    assert_non_null(strstr(s.notes, "demo.yaml: note: dtype int4: weight-only"));
    scn_free(&s);
    const char *fp4[] = {"dtype=fp4"};
    assert_int_equal(scn_load_text("demo.yaml", DEMO, fp4, 1, &test_resolver, &s, &e), 0);
    assert_int_equal(s.engine.dtype, ENG_NVFP4);
    assert_non_null(strstr(s.notes, "dtype fp4 is read as nvfp4"));
    assert_non_null(strstr(s.notes, "no NVFP4 tensor cores")); /* the fake h100 has no FP4 */
    scn_free(&s);
    /* no dtype: the checkpoint's; kv_dtype auto: the checkpoint's KV dtype */
    char text[4096];
    const char *at = strstr(DEMO, "dtype: fp16\n");
    snprintf(text, sizeof text, "%.*skv_dtype: auto\n%s", (int)(at - DEMO), DEMO,
             at + strlen("dtype: fp16\n"));
    assert_int_equal(scn_load_text("demo.yaml", text, NULL, 0, &test_resolver, &s, &e), 0);
    assert_int_equal(s.engine.dtype, s.engine.model.weight_dtype);
    assert_int_equal(s.engine.kv_dtype, s.engine.model.kv_dtype);
    assert_int_equal(s.engine.expert_parallel, 1);
    assert_int_equal(s.engine.data_parallel_attention, 1);
    scn_free(&s);
    static const refusal layouts[] = {
        {"gpu: h100-sxm",
         "gpu: toy-gpu",
         "dtype=fp8",
         {"demo.yaml: --set dtype=fp8: dtype: dtype fp8: gpu toy-gpu has no fp8 tensor cores"}},
        {"dtype: fp16", "kv_dtype: int4",
         .frags =
             {"demo.yaml:5: kv_dtype: unknown kv_dtype 'int4' (valid: auto, bf16, fp16, fp8)"}},
        {"tensor_parallel: 2", "tensor_parallel: 3",
         .frags =
             {"demo.yaml:13: tensor_parallel: tensor_parallel 3 does not divide model llama-3-8b's "
              "32 query heads"}},
        {"tensor_parallel: 2", "tensor_parallel: 2\nexpert_parallel: 2",
         .frags =
             {"demo.yaml:14: expert_parallel: expert_parallel 2: model llama-3-8b has no routed "
              "experts"}},
        {"tensor_parallel: 2", "tensor_parallel: 2\ndata_parallel_attention: 4",
         .frags = {"demo.yaml:14: data_parallel_attention: data_parallel_attention 4 needs an MoE "
                   "model"}},
    };
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
        expect_refusal(&layouts[i]);
}

/* cost_model: {moe_skew, engine}: what the cost model takes from a scenario */
static void cost_model_keys(void **state)
{
    scn_scenario s;
    sim_err e;
    assert_int_equal(scn_load_text("demo.yaml", DEMO, NULL, 0, &test_resolver, &s, &e), 0);
    assert_true(s.cost.moe_skew == 0);
    assert_string_equal(s.cost.engine, "");
    scn_free(&s);
    const char *set[] = {"cost_model={moe_skew: 1.2, engine: trtllm}"};
    assert_int_equal(scn_load_text("demo.yaml", DEMO, set, 1, &test_resolver, &s, &e), 0);
    assert_true(s.cost.moe_skew == 1.2);
    assert_string_equal(s.cost.engine, "trtllm");
    /* a skew on a dense model does nothing, and says so */
    assert_non_null(strstr(s.notes, "cost_model.moe_skew: model llama-3-8b has no routed experts"));
    assert_non_null(strstr(s.text, "cost_model"));
    scn_free(&s);
    /* the kernels default to the engine preset's; an explicit cost_model.engine wins; TGI's
     * are priced as vLLM's */
    const char *sg[] = {"engine=sglang", "scheduler.name=sglang"},
               *sgt[] = {"engine=sglang", "scheduler.name=sglang", "cost_model.engine=trtllm"},
               *tgi[] = {"engine=tgi", "scheduler.name=tgi"};
    assert_int_equal(scn_load_text("demo.yaml", DEMO, sg, 2, &test_resolver, &s, &e), 0);
    assert_string_equal(s.cost.engine, "sglang");
    scn_free(&s);
    assert_int_equal(scn_load_text("demo.yaml", DEMO, sgt, 3, &test_resolver, &s, &e), 0);
    assert_string_equal(s.cost.engine, "trtllm");
    scn_free(&s);
    assert_int_equal(scn_load_text("demo.yaml", DEMO, tgi, 2, &test_resolver, &s, &e), 0);
    assert_string_equal(s.cost.engine, "");
    scn_free(&s);
    expect_error("seed: 7\n", "seed: 7\ncost_model: {moe_skew: -1}\n", NULL, 0,
                 FRAGS("demo.yaml:3: cost_model.moe_skew"));
    expect_error("seed: 7\n", "seed: 7\ncost_model: {engine: tgi}\n", NULL, 0,
                 FRAGS("demo.yaml:3: cost_model.engine: unknown engine 'tgi' (valid: vllm, "
                       "sglang, trtllm)"));
    expect_error("seed: 7\n", "seed: 7\ncost_model: {skew: 1}\n", NULL, 0,
                 FRAGS("demo.yaml:3", "skew"));
}

/* TensorRT-LLM's presets size the KV cache as its KvCacheCreator does: the whole GPU, the cache
 * 0.9 of what the weights and activations leave; memory.free_gpu_memory_fraction overrides it,
 * and the other engines give the cache all of it */
static void free_memory_fraction(void **state)
{
    (void)state;
    static const char *const text = "name: f\nmodel: llama-3-8b\ngpu: h100-sxm\n"
                                    "workload: {num_requests: 10, arrival: {process: poisson, "
                                    "rate: 1}, prompt_tokens: 100, output_tokens: 10}\n";
    scn_scenario s;
    sim_err e;
    const char *trt[] = {"engine=trtllm"},
               *trt8[] = {"engine=trtllm", "memory.free_gpu_memory_fraction=0.8"},
               *vl[] = {"engine=vllm"}, *bad[] = {"memory.free_gpu_memory_fraction=0"};
    assert_int_equal(scn_load_text("f.yaml", text, trt, 1, &test_resolver, &s, &e), 0);
    assert_true(s.engine.gpu_utilization == 1.0);
    assert_true(s.engine.free_memory_fraction == 0.9);
    scn_free(&s);
    assert_int_equal(scn_load_text("f.yaml", text, trt8, 2, &test_resolver, &s, &e), 0);
    assert_true(s.engine.free_memory_fraction == 0.8);
    scn_free(&s);
    assert_int_equal(scn_load_text("f.yaml", text, vl, 1, &test_resolver, &s, &e), 0);
    assert_true(s.engine.gpu_utilization == 0.9);
    assert_true(s.engine.free_memory_fraction == 1.0);
    scn_free(&s);
    assert_int_equal(scn_load_text("f.yaml", text, bad, 1, &test_resolver, &s, &e), -1);
    assert_non_null(strstr(e.msg, "memory.free_gpu_memory_fraction"));
}

/* The host time per eagerly launched kernel comes from the `engine:` preset: TensorRT-LLM's
 * PyTorch backend (1.0 on) states its own, its TensorRT backend (0.19) and vLLM leave the cost
 * model's (0). So do the fp8 GEMM inputs quantized by a kernel of their own (engine/presets.c):
 * per tensor, TensorRT-LLM 1.0 before QKV, gate/up and down (the attention writes fp8 for O),
 * 1.3 no longer before down (SwiGLU writes fp8), vLLM V1 before O alone (Inductor fuses the
 * rest), 0.19 none priced; per 1x128 group, TensorRT-LLM before all four. */
static void eager_launch_from_preset(void **state)
{
    (void)state;
    static const char *const text = "name: f\nmodel: llama-3-8b\ngpu: h100-sxm\n"
                                    "workload: {num_requests: 10, arrival: {process: poisson, "
                                    "rate: 1}, prompt_tokens: 100, output_tokens: 10}\n";
    const uint32_t all = ENG_AQ_QKV | ENG_AQ_O | ENG_AQ_UP | ENG_AQ_DOWN;
    const struct {
        const char *set[2];
        double ns;
        uint32_t tensor, block;
    } cases[] = {{{"engine.name=trtllm", "engine.version=1.3"}, 11670, ENG_AQ_QKV | ENG_AQ_UP, all},
                 {{"engine.name=trtllm", "engine.version=1.0"},
                  11670,
                  ENG_AQ_QKV | ENG_AQ_UP | ENG_AQ_DOWN,
                  all},
                 {{"engine.name=trtllm", "engine.version=0.19"}, 0, 0, 0},
                 {{"engine.name=vllm", "engine.version=0.18"}, 0, ENG_AQ_O, ENG_AQ_O}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        scn_scenario s;
        sim_err e;
        assert_int_equal(scn_load_text("f.yaml", text, cases[i].set, 2, &test_resolver, &s, &e), 0);
        assert_true(s.cost.eager_launch_ns == cases[i].ns);
        assert_int_equal(s.cost.act_quant[ENG_AQ_TENSOR], cases[i].tensor);
        assert_int_equal(s.cost.act_quant[ENG_AQ_BLOCK], cases[i].block);
        scn_free(&s);
    }
}

/* one --set refused, and what the refusal must say */
static const refusal bad_sets[] = {
    {NULL,
     NULL,
     "workload.num_requests",
     {"override 'workload.num_requests': expected KEY.PATH=VALUE"}},
    {.set = "seed.x=3", .frags = {"override 'seed.x=3': 'seed' is a value, not a map"}},
    {.set = "workload..rate=3", .frags = {"override 'workload..rate=3': empty key"}},
    {NULL,
     NULL,
     "workload.arrival.rate=-1",
     {"demo.yaml: --set workload.arrival.rate=-1: workload.arrival.rate: expected a "
      "number > 0"}},
    {NULL,
     NULL,
     "workload.arrival={process: poisson",
     {"override 'workload.arrival={process: poisson'"}},
    {NULL,
     NULL,
     "workload.bogus=1",
     {"demo.yaml: --set workload.bogus=1: workload.bogus: unknown key"}},
    {.set = "=3", .frags = {"override '=3'"}},
    /* profile: a name, or {name, borrow_from} */
    {NULL,
     NULL,
     "profile={borrow_from: a100-80gb}",
     {"profile.name: missing (the stored profile's name)"}},
    {NULL,
     NULL,
     "profile={name: p, lent_by: a100-80gb}",
     {"profile.lent_by: unknown key (valid: name, borrow_from)"}},
    {.set = "profile=[p]", .frags = {"profile: expected a profile name or {name: NAME"}},
};

static void bad_overrides(void **state)
{
    for (size_t i = 0; i < sizeof bad_sets / sizeof bad_sets[0]; i++)
        expect_refusal(&bad_sets[i]);
}

/* profile: {name, borrow_from} reads both; profile: NAME borrows nothing. */
static void profile_borrow(void **state)
{
    const char *ovr[] = {"profile={name: vidur-a100, borrow_from: a100-80gb}"};
    scn_scenario s;
    sim_err e;
    assert_int_equal(scn_load_text("demo.yaml", DEMO, ovr, 1, &test_resolver, &s, &e), 0);
    assert_string_equal(s.profile, "vidur-a100");
    assert_string_equal(s.profile_borrow, "a100-80gb");
    scn_free(&s);
    const char *plain[] = {"profile=mine"};
    assert_int_equal(scn_load_text("demo.yaml", DEMO, plain, 1, &test_resolver, &s, &e), 0);
    assert_string_equal(s.profile, "mine");
    assert_string_equal(s.profile_borrow, "");
    scn_free(&s);
}

static void overrides(void **state)
{
    scn_scenario s;
    sim_err e;
    const char *ovr[] = {"workload.arrival.rate=9.5",
                         "scheduler.max_num_seqs=8",
                         "slo.e2e_ms=20000",
                         "cpu_overhead={per_iteration_us: 7}",
                         "workload.output_tokens={dist: lognormal, mean: 300, sigma: 0.5}",
                         "name=renamed"};
    int rc = scn_load_text("demo.yaml", DEMO, ovr, 6, &test_resolver, &s, &e);
    if (rc)
        fail_msg("%s", e.msg);
    assert_true(s.workload.arrival.rate == 9.5);
    assert_string_equal(eng_cfg_get(&s.engine.sched, "max_num_seqs"), "8");
    assert_true(s.slo.e2e_ms == 20000 && s.slo.ttft_ms == 1000);
    assert_true(s.engine.cpu.per_iteration_us == 7 && s.engine.cpu.per_seq_us == 0);
    assert_int_equal(s.workload.output.kind, SCN_DIST_LOGNORMAL);
    assert_true(s.workload.output.mean == 300 && s.workload.output.sigma == 0.5);
    assert_string_equal(s.name, "renamed");
    /* the text records the overrides and reloads to the same scenario */
    assert_non_null(strstr(s.text, "# --set workload.arrival.rate=9.5"));
    scn_scenario t;
    rc = scn_load_text("demo.yaml", s.text, NULL, 0, &test_resolver, &t, &e);
    if (rc)
        fail_msg("reloading the recorded text: %s\n%s", e.msg, s.text);
    assert_true(t.workload.arrival.rate == 9.5);
    assert_int_equal(t.workload.output.kind, SCN_DIST_LOGNORMAL);
    assert_true(t.slo.e2e_ms == 20000);
    assert_string_equal(t.name, "renamed");
    assert_string_equal(eng_cfg_get(&t.engine.sched, "max_num_seqs"), "8");
    scn_free(&t);
    scn_free(&s);
    /* creating a whole missing section, and indexing a list */
    const char *sched =
        "model: tiny-1b\ngpu: toy-gpu\nworkload:\n  num_requests: 10\n  prompt_tokens: 5\n"
        "  output_tokens: 5\n  arrival:\n    process: schedule\n    steps:\n"
        "      - {start_s: 0, rate: 2}\n      - {start_s: 60, rate: 10}\n";
    const char *ovr2[] = {"workload.arrival.steps.1.rate=20", "memory.block_size=64"};
    rc = scn_load_text("s.yaml", sched, ovr2, 2, &test_resolver, &s, &e);
    if (rc)
        fail_msg("%s", e.msg);
    assert_int_equal(s.workload.arrival.nsteps, 2);
    assert_true(s.workload.arrival.step_rate[1] == 20);
    assert_int_equal(s.engine.block_size, 64);
    scn_free(&s);
    const char *ovr3[] = {"workload.arrival.steps.2.rate=20"};
    rc = scn_load_text("s.yaml", sched, ovr3, 1, &test_resolver, &s, &e);
    assert_int_equal(rc, -1);
    assert_non_null(strstr(e.msg, "is not an index"));
    scn_free(&s);
}

/* A key that some registered policy declares but orca does not is accepted with a note. */
static void scheduler_key_of_another_policy(void **state)
{
    size_t n;
    const eng_sched_ops *const *all = eng_sched_all(&n);
    const eng_sched_ops *orca = eng_sched_find("orca");
    const char *key = NULL;
    for (size_t i = 0; i < n && !key; i++)
        for (const eng_param *p = all[i]->params; p && p->name && !key; p++)
            if (!eng_sched_param(orca, p->name))
                key = p->name;
    if (!key)
        skip(); /* only orca is registered: no such key yet */
    char ov[128];
    snprintf(ov, sizeof ov, "scheduler.%s=1", key);
    const char *ovr[] = {ov};
    scn_scenario s;
    sim_err e;
    assert_int_equal(scn_load_text("demo.yaml", DEMO, ovr, 1, &test_resolver, &s, &e), 0);
    assert_null(eng_cfg_get(&s.engine.sched, key));
    assert_non_null(strstr(s.notes, "note: scheduler key"));
    assert_non_null(strstr(s.notes, key));
    scn_free(&s);
}

static void same_seed_same_workload(void **state)
{
    scn_scenario s;
    sim_err e;
    assert_int_equal(scn_load_text("demo.yaml", DEMO, NULL, 0, &test_resolver, &s, &e), 0);
    enum { N = 500 };
    eng_arrival a[N], b[N];
    for (int k = 0; k < 2; k++) {
        scn_source *src = scn_source_new(&s, 42, &e);
        assert_non_null(src);
        for (int i = 0; i < N; i++) {
            eng_arrival *x = k ? &b[i] : &a[i];
            assert_int_equal(scn_source_ops()->next(src, i ? (x - 1)->t : 0, x, &e), ENG_SRC_OK);
            assert_true(x->prompt >= 1500 && x->prompt <= 2000);
            assert_int_equal(x->output, 500);
            if (i)
                assert_true(x->t >= (x - 1)->t);
        }
        scn_source_free(src);
    }
    assert_memory_equal(a, b, sizeof a);
    assert_int_equal(a[0].t, 0);
    /* another seed gives other draws */
    scn_source *src = scn_source_new(&s, 43, &e);
    eng_arrival c;
    int differ = 0;
    for (int i = 0; i < N; i++) {
        assert_int_equal(scn_source_ops()->next(src, 0, &c, &e), ENG_SRC_OK);
        differ |= c.prompt != a[i].prompt;
    }
    assert_true(differ);
    scn_source_free(src);
    scn_free(&s);
}

/* The arrival stream does not depend on the scheduler, its settings, or the lengths. */
static void arrivals_independent_of_scheduler(void **state)
{
    const char *ovr_a[] = {"scheduler.max_num_seqs=3"};
    const char *ovr_b[] = {"scheduler.max_num_seqs=200",
                           "workload.prompt_tokens={dist: lognormal, mean: 900, sigma: 1}",
                           "replicas=4"};
    scn_scenario sa, sb;
    sim_err e;
    assert_int_equal(scn_load_text("demo.yaml", DEMO, ovr_a, 1, &test_resolver, &sa, &e), 0);
    assert_int_equal(scn_load_text("demo.yaml", DEMO, ovr_b, 3, &test_resolver, &sb, &e), 0);
    scn_source *a = scn_source_new(&sa, 5, &e), *b = scn_source_new(&sb, 5, &e);
    assert_non_null(a);
    assert_non_null(b);
    eng_arrival x, y;
    for (int i = 0; i < 1000; i++) {
        assert_int_equal(scn_source_ops()->next(a, 0, &x, &e), ENG_SRC_OK);
        assert_int_equal(scn_source_ops()->next(b, 0, &y, &e), ENG_SRC_OK);
        assert_int_equal(x.t, y.t);
    }
    assert_int_equal(scn_source_ops()->next(a, 0, &x, &e), ENG_SRC_END);
    assert_int_equal(scn_source_emitted(a), 1000);
    scn_source_free(a);
    scn_source_free(b);
    scn_free(&sa);
    scn_free(&sb);
}

static void context_clipping(void **state)
{
    /* tiny-1b has a 2048-token context */
    const char *txt = "model: tiny-1b\ngpu: toy-gpu\nworkload:\n  num_requests: 200\n"
                      "  arrival: {process: constant, rate: 10}\n"
                      "  prompt_tokens: {dist: uniform, min: 1000, max: 3000}\n"
                      "  output_tokens: {dist: fixed, value: 500, max: 400}\n";
    scn_scenario s;
    sim_err e;
    assert_int_equal(scn_load_text("c.yaml", txt, NULL, 0, &test_resolver, &s, &e), 0);
    scn_source *src = scn_source_new(&s, 1, &e);
    eng_arrival a;
    for (int i = 0; i < 200; i++) {
        assert_int_equal(scn_source_ops()->next(src, 0, &a, &e), ENG_SRC_OK);
        assert_true(a.prompt >= 1 && a.prompt <= 2047);
        assert_true(a.output >= 1 && a.output <= 400);
        assert_true(a.prompt + a.output <= 2048);
        assert_int_equal(a.t, (int64_t)i * 100000000);
    }
    assert_int_equal(scn_source_clipped(src), 200); /* every output hits max: 400 */
    scn_source_free(src);
    scn_free(&s);
}

static void file_loading(void **state)
{
    scn_scenario s;
    sim_err e;
    assert_int_equal(scn_load("/nonexistent/x.yaml", NULL, 0, &test_resolver, &s, &e), -1);
    assert_non_null(strstr(e.msg, "/nonexistent/x.yaml: cannot open"));
    scn_free(&s);
}

/* Mangled scenarios (bytes replaced, deleted or duplicated) load or fail cleanly, never
 * crash; a failure always names the file. */
static void mangled_inputs(void **state)
{
    static const char junk[] = ":{}[],-#&*!|>'\"%@` \n\t0x9.e";
    size_t len = strlen(DEMO);
    char *buf = malloc(2 * len + 1);
    unsigned seed = 12345;
    for (int iter = 0; iter < 3000; iter++) {
        memcpy(buf, DEMO, len + 1);
        size_t n = len;
        for (int k = 0; k < 1 + iter % 4; k++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % n;
            int op = (int)((seed >> 4) % 3);
            if (op == 0) {
                buf[at] = junk[(seed >> 16) % (sizeof junk - 1)];
            } else if (op == 1) {
                memmove(buf + at, buf + at + 1, n - at);
                n--;
            } else if (n < 2 * len) {
                memmove(buf + at + 1, buf + at, n - at + 1);
                n++;
            }
        }
        scn_scenario s;
        sim_err e;
        e.msg[0] = '\0';
        if (scn_load_text("m.yaml", buf, NULL, 0, &test_resolver, &s, &e))
            assert_non_null(strstr(e.msg, "m.yaml"));
        scn_free(&s);
    }
    free(buf);
}

/* Every example shipped under scenarios/ loads, and its source produces requests. Those that
 * read the shared traces are skipped when the data is absent. */
static void shipped_examples(void **state)
{
    static const char *const files[] = {"demo",       "capacity",      "gamma_bursty",
                                        "azure_conv", "mooncake_conv", "closed_loop",
                                        "spike",      "sessions",      "mooncake_offload"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[1024], *text;
        snprintf(path, sizeof path, "%s/scenarios/%s.yaml", LLMSIM_SOURCE_DIR, files[i]);
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        text = calloc(1, 1 << 16);
        assert_true(fread(text, 1, (1 << 16) - 1, f) > 0);
        fclose(f);
        int shared = strstr(text, "shared/data/") != NULL;
        free(text);
        if (shared && access(LLMSIM_SHARED_DIR "/data/traces", R_OK) != 0) {
            printf("  %s: skipped (no shared data)\n", files[i]);
            continue;
        }
        scn_scenario s;
        sim_err e;
        if (scn_load(path, NULL, 0, &test_resolver, &s, &e))
            fail_msg("%s", e.msg);
        assert_string_equal(s.name, files[i]);
        scn_source *src = scn_source_new(&s, s.seed, &e);
        if (!src)
            fail_msg("%s", e.msg);
        eng_arrival a = {0};
        int64_t now = 0;
        for (int k = 0; k < 10; k++) {
            int rc; /* a source may say when to ask again (sessions ramping up) */
            while ((rc = scn_source_ops()->next(src, now, &a, &e)) == ENG_SRC_LATER && a.t > now)
                now = a.t;
            assert_int_equal(rc, ENG_SRC_OK);
            now = a.t;
        }
        scn_source_free(src);
        scn_free(&s);
    }
}

LLMSIM_TEST_MAIN(NULL, NULL, good_scenario, defaults, bad_inputs, bad_overrides,
                 precision_and_layout, cost_model_keys, profile_borrow, overrides,
                 scheduler_key_of_another_policy, same_seed_same_workload,
                 arrivals_independent_of_scheduler, context_clipping, file_loading,
                 shipped_examples, mangled_inputs, free_memory_fraction, eager_launch_from_preset)
