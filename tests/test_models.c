/* test_models.c: the model description and its sizing: dtype byte costs and the rules for
 * running them on a GPU, parameter counts of the catalog against published figures, KV bytes
 * (GQA, MLA, sparse-attention index keys, windows, linear-attention state), quantized
 * checkpoints' parts, layouts (divisibility, KV-head replication, expert and attention-data
 * parallelism) and what fits; the config.json reader's families, refusals and JSON handling
 * (depth limit, lines, duplicates, a 1.4 MB file in linear time); the roofline's refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "scratch.h"

#include "catalog.h"
#include "engine.h"
#include "models_util.h"
#include "roofline.h"
#include "test_main.h"

static char tmpdir[256];

/* Writes text to tmpdir/<sub>/<file> and returns its path (static buffer). */
static const char *write_file(const char *sub, const char *file, const char *text)
{
    static char path[400];
    char dir[300];
    snprintf(dir, sizeof dir, "%s/%s", tmpdir, sub);
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        fail_msg("mkdir %s failed", dir);
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* Expects the reader to refuse text with a message containing each fragment. */
static void refused(const char *text, const char *frag1, const char *frag2)
{
    eng_model m;
    char why[600] = "";
    if (cal_model_from_config_text("test/config.json", text, &m, why, sizeof why) == 0)
        fail_msg("accepted: %.200s", text);
    if (!strstr(why, frag1) || (frag2 && !strstr(why, frag2)))
        fail_msg("message '%s' lacks '%s' / '%s'", why, frag1, frag2 ? frag2 : "");
}

static int within(double got, double want, double rel)
{
    return got >= want * (1 - rel) && got <= want * (1 + rel);
}

/* ---------------- dtypes and precision ---------------- */

static void test_dtype_bytes(void **state)
{
    assert_true(eng_dtype_bytes(ENG_BF16) == 2 && eng_dtype_bytes(ENG_FP16) == 2);
    assert_true(eng_dtype_bytes(ENG_FP8) == 1);
    assert_true(eng_dtype_bytes(ENG_NVFP4) == 0.5625);    /* 16 E2M1 + one E4M3 scale */
    assert_true(eng_dtype_bytes(ENG_MXFP4) == 0.53125);   /* 32 E2M1 + one E8M0 scale */
    assert_true(eng_dtype_bytes(ENG_INT4) == 0.51953125); /* group 128, fp16 scale, 4-bit zero */
    assert_true(eng_dtype_bytes(ENG_FP32) == 4);
    eng_dtype d;
    assert_int_equal(eng_dtype_parse("fp4", &d), 1); /* the alias, said so */
    assert_int_equal(d, ENG_NVFP4);
    const char *names[] = {"bf16", "fp16", "fp8", "nvfp4", "mxfp4", "int4"};
    for (int i = 0; i < 6; i++) {
        assert_int_equal(eng_dtype_parse(names[i], &d), 0);
        assert_int_equal(d, (eng_dtype)i);
        assert_string_equal(eng_dtype_name(d), names[i]);
    }
    assert_int_equal(eng_dtype_parse("mxfp4-fp8", &d), 0);
    assert_int_equal(d, ENG_MXFP4_FP8);
    assert_true(eng_dtype_bytes(ENG_MXFP4_FP8) == 0.53125); /* stored as mxfp4 */
    assert_int_equal(eng_dtype_storage(ENG_MXFP4_FP8), ENG_MXFP4);
    assert_int_equal(eng_dtype_parse("fp32", &d), -1); /* a state dtype, never weights */
    assert_int_equal(eng_dtype_parse("int8", &d), -1);
    assert_string_equal(eng_dtype_name(ENG_DTYPE_AUTO), "auto");
    assert_true(eng_dtype_is_4bit(ENG_INT4) && !eng_dtype_is_4bit(ENG_FP8));
}

/* What a GPU computes weights of dtype d with a kv cache of kv in: want, with a note holding
 * frag (no note when frag is NULL); or, when refused is set, a refusal holding frag. */
typedef struct precision_case {
    const char *gpu;
    eng_dtype d, kv;
    eng_compute want;
    const char *frag;
    int refused;
} precision_case;

static const precision_case precision_cases[] = {
    {"h100-sxm", ENG_BF16, ENG_BF16, ENG_COMPUTE_16, NULL, 0},
    {"h100-sxm", ENG_FP8, ENG_BF16, ENG_COMPUTE_FP8, NULL, 0},
    /* 4-bit weights on a GPU without FP4 tensor cores run weight-only, with a note */
    {"h100-sxm", ENG_NVFP4, ENG_BF16, ENG_COMPUTE_16, "weight-only", 0},
    {"b200", ENG_NVFP4, ENG_BF16, ENG_COMPUTE_FP4, NULL, 0},
    {"mi355x", ENG_NVFP4, ENG_BF16, ENG_COMPUTE_16, "no NVFP4 tensor cores", 0},
    {"h100-sxm", ENG_MXFP4, ENG_BF16, ENG_COMPUTE_16, "weight-only", 0},
    {"b200", ENG_MXFP4, ENG_BF16, ENG_COMPUTE_16, "FP4 tensor cores", 0},
    /* W4A8: MXFP4 weights on the fp8 tensor cores, refused where there are none */
    {"h100-sxm", ENG_MXFP4_FP8, ENG_BF16, ENG_COMPUTE_FP8, NULL, 0},
    {"a100-80gb", ENG_MXFP4_FP8, ENG_BF16, ENG_COMPUTE_16, "no fp8 tensor cores", 1},
    /* int4 is always weight-only */
    {"b200", ENG_INT4, ENG_BF16, ENG_COMPUTE_16, "weight-only", 0},
    {"a100-80gb", ENG_INT4, ENG_BF16, ENG_COMPUTE_16, "weight-only", 0},
    /* an fp8 KV cache is storage on Ampere */
    {"a100-80gb", ENG_BF16, ENG_FP8, ENG_COMPUTE_16, "stored in fp8", 0},
    {"h200", ENG_BF16, ENG_FP8, ENG_COMPUTE_16, NULL, 0},
    /* fp8 compute without fp8 tensor cores is an error naming the GPU */
    {"a100-40gb", ENG_FP8, ENG_BF16, ENG_COMPUTE_16, "dtype fp8: gpu a100-40gb", 1},
    {"a100-40gb", ENG_BF16, ENG_INT4, ENG_COMPUTE_16, "kv_dtype", 1},
};

static void expect_compute(const precision_case *k)
{
    eng_gpu gp = catalog_gpu(k->gpu);
    eng_compute c;
    char note[400] = "", why[400] = "";
    int rc = eng_precision(&gp, k->d, k->kv, &c, note, sizeof note, why, sizeof why);
    if (k->refused) {
        if (rc != -1 || !strstr(why, k->frag))
            fail_msg("%s %s: not refused with '%s' (%s)", k->gpu, eng_dtype_name(k->d), k->frag,
                     why);
        return;
    }
    if (rc != 0)
        fail_msg("%s %s refused: %s", k->gpu, eng_dtype_name(k->d), why);
    assert_int_equal(c, k->want);
    if (k->frag && !strstr(note, k->frag))
        fail_msg("%s %s: note '%s' lacks '%s'", k->gpu, eng_dtype_name(k->d), note, k->frag);
    if (!k->frag)
        assert_string_equal(note, "");
}

static void test_precision_rules(void **state)
{
    for (size_t i = 0; i < sizeof precision_cases / sizeof precision_cases[0]; i++)
        expect_compute(&precision_cases[i]);
}

/* ---------------- parameters ---------------- */

/* Catalog entries against published totals and actives (SOURCE.md of the shared configs; for
 * gpt-oss, OpenAI's model card table: 116.83B / 5.13B and 20.91B / 3.61B). Totals within 3%,
 * actives within 10% (publishers differ on counting embeddings as active). */
static void test_catalog_params(void **state)
{
    static const struct {
        const char *name;
        double total, active; /* billions */
    } pub[] = {
        {"llama-3.1-8b", 8, 8},         {"llama-3.1-70b", 70, 70},  {"llama-3.1-405b", 405, 405},
        {"llama-4-scout", 109, 17},     {"qwen3-8b", 8.2, 8.2},     {"qwen3-30b-a3b", 30.5, 3.3},
        {"qwen3-235b-a22b", 235, 22},   {"mixtral-8x7b", 47, 13},   {"deepseek-v3", 671, 37},
        {"deepseek-r1", 671, 37},       {"kimi-k2", 1000, 32},      {"gpt-oss-20b", 20.91, 3.61},
        {"gpt-oss-120b", 116.83, 5.13}, {"qwen2.5-7b", 7.61, 7.61},
    };
    for (size_t i = 0; i < sizeof pub / sizeof pub[0]; i++) {
        eng_model m = catalog_model(pub[i].name);
        double t = eng_model_params(&m) / 1e9, a = eng_model_params_active(&m) / 1e9;
        print_message("%-16s total %8.2f B (published %g), active %6.2f B (published %g)\n",
                      pub[i].name, t, pub[i].total, a, pub[i].active);
        if (!within(t, pub[i].total, 0.03) || !within(a, pub[i].active, 0.10))
            fail_msg("%s: %.2f / %.2f B against %g / %g", pub[i].name, t, a, pub[i].total,
                     pub[i].active);
    }
    /* exact: gpt-oss-120b's card gives 116.83 B total, 5.13 B active */
    eng_model g = catalog_model("gpt-oss-120b");
    assert_true(within(eng_model_params(&g) / 1e9, 116.83, 0.001));
    assert_true(within(eng_model_params_active(&g) / 1e9, 5.13, 0.002));
    /* the parts add up to the total */
    eng_model d = catalog_model("deepseek-v3");
    int64_t sum = 0;
    for (int i = 0; i < ENG_PART_COUNT; i++)
        sum += eng_model_part_params(&d, 1u << i);
    assert_int_equal(sum, eng_model_params(&d));
    /* a dense model's active count leaves out only the input embedding table */
    eng_model l = catalog_model("llama-3-8b");
    assert_int_equal(eng_model_params(&l) - eng_model_params_active(&l), INT64_C(128256) * 4096);
}

/* ---------------- KV cache, windows, state ---------------- */

static void test_kv_bytes(void **state)
{
    eng_model d = catalog_model("deepseek-v3");
    /* MLA: one latent of 512 + 64 per layer: 61 x 576 x 2 */
    assert_int_equal(eng_model_kv_bytes_per_token(&d, ENG_BF16), 70272);
    assert_int_equal(eng_model_kv_bytes_per_token(&d, ENG_FP8), 61 * 576);
    /* DeepSeek sparse attention adds the indexer's fp8 key (128 + 4 bytes) per layer; its fp8
     * latent is FlashMLA's 656-byte layout */
    eng_model s = config_model(dsv32);
    assert_int_equal(eng_model_kv_bytes_per_token(&s, ENG_BF16), 61 * (1152 + 132));
    assert_int_equal(eng_model_kv_bytes_per_token(&s, ENG_FP8), 61 * (656 + 132));
    /* GQA */
    eng_model l = catalog_model("llama-3-8b");
    assert_int_equal(eng_model_kv_bytes_per_token(&l, ENG_BF16), 131072);
    assert_int_equal(eng_model_kv_bytes_per_token(&l, ENG_FP8), 65536);
    /* Gemma-3-27B: 10 global layers, 52 windowed (1,024 tokens) */
    eng_model g = catalog_model("gemma-3-27b");
    assert_int_equal(g.window_layers, 52);
    assert_int_equal(g.window, 1024);
    assert_int_equal(eng_model_kv_bytes_per_token(&g, ENG_BF16), 10 * 2 * 16 * 128 * 2);
    assert_int_equal(eng_model_window_bytes_per_token(&g, ENG_BF16), 52 * 2 * 16 * 128 * 2);
    /* Qwen3.5: 15 full layers of 2 KV heads x 256, 45 gated DeltaNet layers with a conv state
     * (2 x 16 x 128 + 64 x 128 channels x 3 taps, bf16) and a 64 x 128 x 128 fp32 state */
    eng_model q = config_model(qwen35);
    assert_int_equal(q.linear_layers, 45);
    assert_int_equal(eng_model_kv_bytes_per_token(&q, ENG_BF16), 15 * 2 * 2 * 256 * 2);
    assert_int_equal(eng_model_state_bytes(&q), INT64_C(45) * (12288 * 3 * 2 + 64 * 128 * 128 * 4));
    eng_gpu_share sh;
    eng_layout t2 = {2, 1, 1, {0, 0, 0}};
    eng_model_gpu_share(&q, ENG_BF16, ENG_BF16, &t2, &sh);
    assert_int_equal(sh.state_per_seq, eng_model_state_bytes(&q) / 2);
    /* KV bytes follow the KV dtype, not the weights' */
    eng_layout one = {1, 1, 1, {0, 0, 0}};
    eng_model_gpu_share(&l, ENG_FP8, ENG_DTYPE_AUTO, &one, &sh);
    assert_int_equal(sh.kv_per_token, 131072);
}

/* ---------------- quantized checkpoints ---------------- */

static const char kimi25[] =
    "{\"model_type\": \"kimi_k25\", \"text_config\": {\"model_type\": \"kimi_k2\", "
    "\"num_hidden_layers\": 61, \"hidden_size\": 7168, \"num_attention_heads\": 64, "
    "\"num_key_value_heads\": 64, \"intermediate_size\": 18432, \"q_lora_rank\": 1536, "
    "\"kv_lora_rank\": 512, \"qk_nope_head_dim\": 128, \"qk_rope_head_dim\": 64, "
    "\"v_head_dim\": 128, \"n_routed_experts\": 384, \"num_experts_per_tok\": 8, "
    "\"moe_intermediate_size\": 2048, \"n_shared_experts\": 1, \"first_k_dense_replace\": 1, "
    "\"vocab_size\": 163840, \"max_position_embeddings\": 262144, \"dtype\": \"bfloat16\", "
    "\"quantization_config\": {\"quant_method\": \"compressed-tensors\", \"config_groups\": "
    "{\"group_0\": {\"targets\": [\"Linear\"], \"input_activations\": null, \"weights\": "
    "{\"num_bits\": 4, \"type\": \"int\", \"group_size\": 32, \"strategy\": \"group\", "
    "\"symmetric\": true}}}, \"ignore\": [\"lm_head\", \"re:.*self_attn.*\", "
    "\"re:.*shared_experts.*\", \"re:.*mlp\\\\.(gate|up|gate_up|down)_proj.*\"], "
    "\"kv_cache_scheme\": null}}, \"vision_config\": {\"vt_num_hidden_layers\": 27}}";

static void test_checkpoint_quantization(void **state)
{
    eng_model d = catalog_model("deepseek-v3");
    assert_int_equal(d.weight_dtype, ENG_FP8);
    /* every linear layer but the embeddings, the LM head and the router */
    assert_int_equal(d.quant_parts,
                     ENG_PART_ATTN | ENG_PART_MLP | ENG_PART_EXPERTS | ENG_PART_SHARED);
    assert_int_equal(d.act_dtype, ENG_BF16);
    assert_int_equal(d.kv_dtype, ENG_BF16); /* fp8 weights do not make an fp8 KV cache */
    eng_model g = catalog_model("gpt-oss-120b");
    assert_int_equal(g.weight_dtype, ENG_MXFP4);
    assert_int_equal(g.quant_parts, ENG_PART_EXPERTS);
    /* the checkpoint's bytes: experts in MXFP4, everything else bf16 */
    eng_gpu_share sh;
    eng_model_gpu_share(&g, ENG_DTYPE_AUTO, ENG_DTYPE_AUTO, NULL, &sh);
    double want = 0;
    for (int i = 0; i < ENG_PART_COUNT; i++)
        want += eng_model_part_params(&g, 1u << i) * (i == 4 ? 0.53125 : 2.0);
    assert_true(within((double)sh.weight_bytes, want, 1e-9));
    print_message("gpt-oss-120b as shipped: %.1f GB (bf16 %.1f GB)\n", sh.weight_bytes / 1e9,
                  2.0 * eng_model_params(&g) / 1e9);
    /* W4A8 keeps the checkpoint's parts and bytes: only the compute differs */
    eng_gpu_share w4a8;
    eng_model_gpu_share(&g, ENG_MXFP4_FP8, ENG_DTYPE_AUTO, NULL, &w4a8);
    assert_int_equal(w4a8.weight_bytes, sh.weight_bytes);
    assert_int_equal(eng_model_quant_parts(&g, ENG_MXFP4_FP8), ENG_PART_EXPERTS);
    /* Kimi-K2.5: int4 routed experts (group 32, bf16 scales), the rest bf16 */
    eng_model k = config_model(kimi25);
    assert_int_equal(k.weight_dtype, ENG_INT4);
    assert_int_equal(k.quant_parts, ENG_PART_EXPERTS);
    assert_true(k.quant_bytes == 0.5 + 2.0 / 32);
    assert_non_null(strstr(k.notes, "vision tower"));
    assert_true(eng_model_part_bytes(&k, ENG_INT4, ENG_PART_EXPERTS) == 0.5625);
    assert_true(eng_model_part_bytes(&k, ENG_INT4, ENG_PART_ATTN) == 2);
    /* asked for another dtype, the engine quantizes the linear layers but not the embeddings,
     * LM head or router */
    eng_model l = catalog_model("llama-3-8b");
    eng_model_gpu_share(&l, ENG_FP8, ENG_DTYPE_AUTO, NULL, &sh);
    int64_t emb = INT64_C(128256) * 4096, norms = eng_model_part_params(&l, ENG_PART_NORM);
    assert_int_equal(sh.weight_bytes,
                     (eng_model_params(&l) - 2 * emb - norms) + 2 * (2 * emb + norms));
    assert_true(eng_model_part_bytes(&k, ENG_FP8, ENG_PART_ATTN) == 1); /* requested fp8 */
    assert_true(eng_model_part_bytes(&k, ENG_BF16, ENG_PART_EXPERTS) == 2);
}

/* ---------------- layouts and what fits ---------------- */

static eng_config config(const char *m, const char *g, int tp, int ep, int dp)
{
    eng_config c;
    eng_config_defaults(&c);
    c.model = catalog_model(m);
    c.gpu = catalog_gpu(g);
    c.tensor_parallel = tp;
    c.expert_parallel = ep;
    c.data_parallel_attention = dp;
    return c;
}

static void expect_plan(const eng_config *c, int ok, const char *frag)
{
    eng_kv_plan p;
    sim_err err = {{0}};
    int rc = eng_kv_plan_compute(c, &p, &err);
    if (ok && rc != 0)
        fail_msg("%s on %d x %s: %s", c->model.name, c->tensor_parallel, c->gpu.name, err.msg);
    if (!ok && rc == 0)
        fail_msg("%s on %s tp %d ep %d dp %d fits (%.1f GB weights per GPU)", c->model.name,
                 c->gpu.name, c->tensor_parallel, c->expert_parallel, c->data_parallel_attention,
                 p.weight_bytes / 1e9);
    if (!ok && frag && !strstr(err.msg, frag))
        fail_msg("message '%s' lacks '%s'", err.msg, frag);
}

static void test_fits_and_refusals(void **state)
{
    /* weights that do not fit are refused with the sizes */
    eng_config c = config("mixtral-8x7b", "a100-40gb", 1, 1, 1);
    expect_plan(&c, 0, "does not fit");
    c = config("mixtral-8x7b", "a100-40gb", 1, 1, 1);
    eng_kv_plan p;
    sim_err err;
    assert_int_equal(eng_kv_plan_compute(&c, &p, &err), -1);
    assert_non_null(strstr(err.msg, "mixtral-8x7b"));
    assert_non_null(strstr(err.msg, "GB of weights per GPU"));
    c = config("deepseek-v3", "h100-sxm", 1, 1, 1);
    expect_plan(&c, 0, "does not fit");
    /* DeepSeek-V3 in its fp8 on 8 x H200: TP8, and DP-attention 8 + EP 8 */
    eng_kv_plan tp8, dp8;
    c = config("deepseek-v3", "h200", 8, 1, 1);
    assert_int_equal(eng_kv_plan_compute(&c, &tp8, &err), 0);
    c = config("deepseek-v3", "h200", 1, 8, 8);
    assert_int_equal(eng_kv_plan_compute(&c, &dp8, &err), 0);
    print_message("deepseek-v3 fp8 on 8 x h200: TP8 %.1f GB weights/GPU, %lld KV tokens; "
                  "DP8+EP8 %.1f GB, %lld tokens\n",
                  tp8.weight_bytes / 1e9, (long long)tp8.tokens, dp8.weight_bytes / 1e9,
                  (long long)dp8.tokens);
    assert_int_equal(tp8.gpus, 8);
    assert_int_equal(dp8.gpus, 8);
    /* the latent is on every TP rank, so TP8 holds 1/8 of the tokens DP8 ranks hold together
     * less what the replicated attention weights take */
    assert_int_equal(tp8.bytes_per_token, 70272);
    assert_int_equal(dp8.bytes_per_token, 70272);
    assert_true(dp8.weight_bytes > tp8.weight_bytes);
    assert_true(dp8.tokens > 4 * tp8.tokens);
    /* bf16 DeepSeek-V3 does not fit on 8 x H200 */
    c = config("deepseek-v3", "h200", 8, 1, 1);
    c.dtype = ENG_BF16;
    expect_plan(&c, 0, "does not fit");
}

/* A layout refused, and what the refusal says. */
typedef struct bad_layout {
    const char *model, *gpu;
    int tp, ep, dp;
    const char *says;
} bad_layout;

static const bad_layout bad_layouts[] = {
    {"llama-3-8b", "h100-sxm", 3, 1, 1, "does not divide model llama-3-8b's 32 query heads"},
    {"qwen2.5-7b", "h100-sxm", 7, 1, 1, "4 KV heads: one must divide the other"},
    {"llama-3-8b", "h100-sxm", 2, 2, 1, "has no routed experts"},
    {"llama-3-8b", "h100-sxm", 1, 1, 2, "needs an MoE model"},
    {"deepseek-v3", "h200", 8, 3, 1, "must divide tensor_parallel x data_parallel_attention = 8"},
    {"mixtral-8x7b", "h100-sxm", 16, 16, 1,
     "does not divide model mixtral-8x7b's 8 routed experts"},
    {"mixtral-8x22b", "h200", 1, 1, 3, "expert width 16384"},
};

static void test_layout_checks(void **state)
{
    for (size_t i = 0; i < sizeof bad_layouts / sizeof bad_layouts[0]; i++) {
        const bad_layout *b = &bad_layouts[i];
        eng_config c = config(b->model, b->gpu, b->tp, b->ep, b->dp);
        expect_plan(&c, 0, b->says);
    }
    eng_config c = config("mixtral-8x7b", "h100-sxm", 2, 2, 1);
    expect_plan(&c, 1, NULL);
    /* experts over EP: each GPU holds experts / EP whole experts */
    eng_model m = catalog_model("mixtral-8x7b");
    eng_layout tp2 = {2, 1, 1, {0, 0, 0}}, ep2 = {2, 2, 1, {0, 0, 0}};
    eng_gpu_share a, b;
    eng_model_gpu_share(&m, ENG_BF16, ENG_BF16, &tp2, &a);
    eng_model_gpu_share(&m, ENG_BF16, ENG_BF16, &ep2, &b);
    assert_int_equal(a.weight_bytes, b.weight_bytes); /* the same bytes, split differently */
}

/* Experts split both ways (TensorRT-LLM's moe_tp_size x moe_ep_size): on 4 GPUs, expert_parallel
 * 2 places half the experts on each pair and splits each over the pair's 2 GPUs: the same bytes
 * per GPU as placing them whole (ep 4) or splitting each over all 4 (ep 1). */
static void test_experts_split_both_ways(void **state)
{
    eng_config c = config("qwen3-30b-a3b", "h100-sxm", 4, 2, 1);
    expect_plan(&c, 1, NULL);
    eng_model m = catalog_model("qwen3-30b-a3b");
    eng_layout l1 = {4, 1, 1, {0, 0, 0}}, l2 = {4, 2, 1, {0, 0, 0}}, l4 = {4, 4, 1, {0, 0, 0}};
    assert_int_equal(eng_layout_moe_tp(&l1), 4);
    assert_int_equal(eng_layout_moe_tp(&l2), 2);
    assert_int_equal(eng_layout_moe_tp(&l4), 1);
    eng_gpu_share a, b, d;
    eng_model_gpu_share(&m, ENG_BF16, ENG_BF16, &l1, &a);
    eng_model_gpu_share(&m, ENG_BF16, ENG_BF16, &l2, &b);
    eng_model_gpu_share(&m, ENG_BF16, ENG_BF16, &l4, &d);
    assert_int_equal(a.weight_bytes, b.weight_bytes);
    assert_int_equal(b.weight_bytes, d.weight_bytes);
}

/* GQA KV heads are replicated when TP exceeds their number: capacity counts each GPU's copy. */
static void test_gqa_replication(void **state)
{
    eng_kv_plan p8, p16;
    sim_err err;
    eng_config c = config("llama-3-70b", "h200", 8, 1, 1);
    assert_int_equal(eng_kv_plan_compute(&c, &p8, &err), 0);
    c.tensor_parallel = 16;
    assert_int_equal(eng_kv_plan_compute(&c, &p16, &err), 0);
    /* 8 KV heads: one per GPU at TP8 and, replicated, still one per GPU at TP16 */
    assert_int_equal(p8.kv_heads, 1);
    assert_int_equal(p16.kv_heads, 1);
    assert_int_equal(p16.bytes_per_token, 80 * 2 * 1 * 128 * 2);
    assert_int_equal(p16.bytes_per_token, p8.bytes_per_token);
    /* were the heads split 16 ways, each GPU would hold half as many bytes per token */
    int64_t naive = eng_model_kv_bytes_per_token(&c.model, ENG_BF16) / 16;
    assert_int_equal(naive * 2, p16.bytes_per_token);
    assert_int_equal(p16.blocks, p16.kv_bytes / (p16.bytes_per_token * 16));
    assert_true(p16.blocks < p16.kv_bytes / (naive * 16));
    print_message("llama-3-70b on h200: TP8 %lld tokens, TP16 %lld tokens (split heads would "
                  "claim %lld)\n",
                  (long long)p8.tokens, (long long)p16.tokens,
                  (long long)(p16.kv_bytes / (naive * 16) * 16));
    /* and below the KV-head count they split: TP2 holds 4 heads per GPU */
    c.tensor_parallel = 2;
    assert_int_equal(eng_kv_plan_compute(&c, &p8, &err), 0);
    assert_int_equal(p8.kv_heads, 4);
    assert_int_equal(p8.bytes_per_token, 80 * 2 * 4 * 128 * 2);
}

/* ---------------- the reader ---------------- */

static void test_reader_families(void **state)
{
    /* Gemma-3 wrapper: text_config with the class defaults for what it leaves out, 5 local : 1
     * global, tied embeddings, q/k norms, vision tower noted */
    eng_model g = config_model(
        "{\"model_type\": \"gemma3\", \"text_config\": {\"model_type\": \"gemma3_text\", "
        "\"hidden_size\": 5376, \"intermediate_size\": 21504, \"num_attention_heads\": 32, "
        "\"num_hidden_layers\": 62, \"num_key_value_heads\": 16, \"head_dim\": 128, "
        "\"sliding_window\": 1024}, \"vision_config\": {\"hidden_size\": 1152}, "
        "\"torch_dtype\": \"bfloat16\"}");
    assert_int_equal(g.vocab, 262208);
    assert_int_equal(g.max_context, 131072);
    assert_true(g.window_layers == 52 && g.window == 1024 && g.tied_embeddings && g.qk_norm);
    assert_int_equal(g.norms_per_layer, 4);
    assert_non_null(strstr(g.notes, "vision tower"));
    eng_model catalog = catalog_model("gemma-3-27b");
    assert_int_equal(eng_model_params(&g), eng_model_params(&catalog));
    /* Gemma-2 alternates */
    eng_model g2 = catalog_model("gemma-2-9b");
    assert_int_equal(g2.window_layers, 21);
    /* Llama-4: chunked attention on 3 of 4 layers, MoE every interleave step */
    eng_model s = catalog_model("llama-4-scout"), v = catalog_model("llama-4-maverick");
    assert_true(s.window_layers == 36 && s.window_chunked && s.window == 8192);
    assert_int_equal(s.moe_layers, 48);
    assert_int_equal(v.moe_layers, 24);
    assert_true(s.shared_inter == 8192 && v.intermediate == 16384);
    /* Qwen3-MoE: decoder_sparse_step and mlp_only_layers */
    eng_model q = config_model(
        "{\"model_type\": \"qwen3_moe\", \"num_hidden_layers\": 8, \"hidden_size\": 256, "
        "\"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"head_dim\": 64, "
        "\"intermediate_size\": 512, \"moe_intermediate_size\": 64, \"num_experts\": 8, "
        "\"num_experts_per_tok\": 2, \"decoder_sparse_step\": 2, \"mlp_only_layers\": [1], "
        "\"vocab_size\": 1000, \"max_position_embeddings\": 4096, \"torch_dtype\": "
        "\"bfloat16\"}");
    assert_int_equal(q.moe_layers, 3); /* layers 3, 5, 7 */
    /* DeepSeek: first_k_dense_replace dense layers, a shared expert, noaux_tc bias */
    eng_model d = catalog_model("deepseek-v3");
    assert_true(d.moe_layers == 58 && d.shared_inter == 2048 && d.router_bias);
    assert_true(d.attn == ENG_ATTN_MLA && d.kv_lora_rank == 512 && d.qk_rope_dim == 64);
    /* gpt-oss: sinks, biases, alternating 128-token windows */
    eng_model o = catalog_model("gpt-oss-20b");
    assert_true(o.sinks && o.qkv_bias && o.o_bias && o.expert_bias && o.router_bias);
    assert_true(o.window_layers == 12 && o.window == 128);
    /* tied embeddings by each class's default */
    assert_true(catalog_model("opt-13b").tied_embeddings &&
                !catalog_model("llama-3-8b").tied_embeddings);
    /* no model_type: architectures */
    eng_model a =
        config_model("{\"architectures\": [\"LlamaForCausalLM\"], \"num_hidden_layers\": 2, "
                     "\"hidden_size\": 64, \"num_attention_heads\": 4, \"intermediate_size\": 128, "
                     "\"vocab_size\": 100, \"max_position_embeddings\": 512, \"torch_dtype\": "
                     "\"bfloat16\"}");
    assert_string_equal(a.arch, "llama");
    /* DeepSeek sparse attention and hybrid linear attention are read */
    eng_model ds = config_model(dsv32);
    assert_true(ds.index_topk == 2048 && ds.index_heads == 64 && ds.index_dim == 128);
    eng_model q35 = config_model(qwen35);
    assert_true(q35.attn_output_gate && q35.state_dtype == ENG_FP32 && q35.shared_gate);
}

static void test_reader_refusals(void **state)
{
    /* dimensions past any model's (found by fuzzing: the parameter count overflowed) */
    refused("{\"model_type\": \"qwen3\", \"num_hidden_layers\": 322500, \"hidden_size\": "
            "4014336, \"num_attention_heads\": 32, \"num_key_value_heads\": 8, "
            "\"intermediate_size\": 28672, \"vocab_size\": 128256, \"max_position_embeddings\": "
            "81}",
            "num_hidden_layers 322500 is over 1024", "overflow");
    refused("{\"model_type\": \"mamba\", \"hidden_size\": 4}", "'mamba' is not a model family",
            "deepseek_v3");
    refused("{\"model_type\": \"qwen2\", \"num_hidden_layers\": 2, \"hidden_size\": 64, "
            "\"num_attention_heads\": 4, \"intermediate_size\": 128, \"vocab_size\": 100, "
            "\"max_position_embeddings\": 512,\n\"use_sliding_window\": true}",
            ":2: key \"use_sliding_window\"", "not modelled");
    refused("{\"model_type\": \"gpt_oss\", \"num_hidden_layers\": 2, \"hidden_size\": 64, "
            "\"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"head_dim\": 16, "
            "\"intermediate_size\": 128, \"num_local_experts\": 4, \"num_experts_per_tok\": 2, "
            "\"vocab_size\": 100, \"max_position_embeddings\": 512, \"sliding_window\": 8, "
            "\"layer_types\": [\"sliding_attention\", \"mamba_mixer\"]}",
            "layer_types", "entry 1 ('mamba_mixer')");
    static const char llama[] =
        "{\"model_type\": \"llama\", \"num_hidden_layers\": 2, \"hidden_size\": 64, "
        "\"num_attention_heads\": 4, \"intermediate_size\": 128, \"vocab_size\": 100, "
        "\"max_position_embeddings\": 512, \"torch_dtype\": \"bfloat16\", ";
    char text[1024];
    snprintf(text, sizeof text, "%s\"quantization_config\": {\"quant_method\": \"bitsandbytes\"}}",
             llama);
    refused(text, "quant_method", "'bitsandbytes' is not modelled");
    snprintf(text, sizeof text,
             "%s\"quantization_config\": {\"quant_method\": \"fp8\", \"modules_to_not_convert\": "
             "[\"model.layers.1.self_attn\"]}}",
             llama);
    refused(text, "per-layer exclusions are not modelled", "model.layers.1.self_attn");
    snprintf(text, sizeof text,
             "%s\"quantization_config\": {\"quant_method\": \"fp8\", \"modules_to_not_convert\": "
             "[\"frobnicator\"]}}",
             llama);
    refused(text, "entry 0 ('frobnicator') names no part", NULL);
    snprintf(text, sizeof text, "%s\"torch_dtype\": \"float8_e4m3fn\"}", llama);
    refused(text, "torch_dtype", "float8_e4m3fn");
    /* accepted: per-layer exclusions of parts never quantized, exclusions of whole parts */
    snprintf(
        text, sizeof text,
        "%s\"quantization_config\": {\"quant_method\": \"fp8\", \"modules_to_not_convert\": "
        "[\"lm_head\", \"model.layers.0.input_layernorm\", \"model.layers.*.mlp.down_proj\"]}}",
        llama);
    eng_model m = config_model(text);
    assert_int_equal(m.weight_dtype, ENG_FP8);
    assert_int_equal(m.quant_parts, ENG_PART_ATTN);
    assert_int_equal(m.act_group, 0); /* no weight_block_size: one scale per tensor */
    /* block-scaled fp8: activations scaled per group of block_k input elements */
    snprintf(text, sizeof text,
             "%s\"quantization_config\": {\"quant_method\": \"fp8\", \"weight_block_size\": "
             "[128, 64]}}",
             llama);
    assert_int_equal(config_model(text).act_group, 64);
    snprintf(text, sizeof text,
             "%s\"quantization_config\": {\"quant_method\": \"fp8\", \"weight_block_size\": "
             "[128]}}",
             llama);
    refused(text, "weight_block_size", "two positive integers");
    snprintf(text, sizeof text,
             "%s\"quantization_config\": {\"quant_method\": \"fp8\", \"weight_block_size\": "
             "[0, 128]}}",
             llama);
    refused(text, "weight_block_size", "two positive integers");
    /* OPT's project_in/out, MiniMax-M1's lightning attention */
    refused("{\"model_type\": \"opt\", \"num_hidden_layers\": 2, \"hidden_size\": 64, "
            "\"num_attention_heads\": 4, \"ffn_dim\": 128, \"vocab_size\": 100, "
            "\"max_position_embeddings\": 512, \"word_embed_proj_dim\": 32}",
            "word_embed_proj_dim", "not modelled");
    refused("{\"model_type\": \"minimax_m2\", \"num_hidden_layers\": 2, \"hidden_size\": 64, "
            "\"num_attention_heads\": 4, \"head_dim\": 16, \"intermediate_size\": 32, "
            "\"num_local_experts\": 4, \"num_experts_per_tok\": 2, \"vocab_size\": 100, "
            "\"max_position_embeddings\": 512, \"attn_type_list\": [0, 1]}",
            "attn_type_list", "lightning");
    /* awq and compressed-tensors */
    snprintf(text, sizeof text,
             "%s\"quantization_config\": {\"quant_method\": \"awq\", \"bits\": 4, "
             "\"group_size\": 128, \"zero_point\": true}}",
             llama);
    m = config_model(text);
    assert_int_equal(m.weight_dtype, ENG_INT4);
    assert_true(m.quant_bytes == 0.5 + 2.5 / 128);
    snprintf(text, sizeof text,
             "%s\"quantization_config\": {\"quant_method\": \"gptq\", \"bits\": 8}}", llama);
    refused(text, "only 4-bit weights", NULL);
    snprintf(text, sizeof text,
             "%s\"quantization_config\": {\"quant_method\": \"compressed-tensors\", "
             "\"config_groups\": {\"g\": {\"targets\": [\"Linear\"], \"weights\": "
             "{\"num_bits\": 8, \"type\": \"float\"}, \"input_activations\": {\"num_bits\": "
             "8, \"type\": \"float\"}}}, \"kv_cache_scheme\": {\"num_bits\": 8, \"type\": "
             "\"float\"}}}",
             llama);
    m = config_model(text);
    assert_int_equal(m.weight_dtype, ENG_FP8);
    assert_int_equal(m.kv_dtype, ENG_FP8);
    assert_int_equal(m.act_group, 0); /* activations scaled per tensor */
    /* the fp8 block scheme: activations quantized per token group of 128 */
    snprintf(text, sizeof text,
             "%s\"quantization_config\": {\"quant_method\": \"compressed-tensors\", "
             "\"config_groups\": {\"g\": {\"targets\": [\"Linear\"], \"weights\": "
             "{\"num_bits\": 8, \"type\": \"float\", \"strategy\": \"block\"}, "
             "\"input_activations\": {\"num_bits\": 8, \"type\": \"float\", \"strategy\": "
             "\"group\", \"group_size\": 128}}}}}",
             llama);
    assert_int_equal(config_model(text).act_group, 128);
    snprintf(text, sizeof text,
             "%s\"quantization_config\": {\"quant_method\": \"modelopt\", \"quant_algo\": "
             "\"NVFP4\", \"kv_cache_quant_algo\": \"FP8\", \"exclude_modules\": "
             "[\"lm_head\"]}}",
             llama);
    m = config_model(text);
    assert_true(m.weight_dtype == ENG_NVFP4 && m.kv_dtype == ENG_FP8);
    /* Phi-3-mini-4k: every layer windowed to 2,047 tokens */
    m = config_model("{\"model_type\": \"phi3\", \"num_hidden_layers\": 32, \"hidden_size\": "
                     "3072, \"num_attention_heads\": 32, \"intermediate_size\": 8192, "
                     "\"vocab_size\": 32064, \"max_position_embeddings\": 4096, "
                     "\"sliding_window\": 2047, \"torch_dtype\": \"bfloat16\"}");
    assert_true(m.window_layers == 32 && m.window == 2047 && !m.tied_embeddings);
    /* a missing torch_dtype is assumed bf16 and said */
    m = config_model("{\"model_type\": \"llama\", \"num_hidden_layers\": 2, \"hidden_size\": 64, "
                     "\"num_attention_heads\": 4, \"intermediate_size\": 128, \"vocab_size\": 100, "
                     "\"max_position_embeddings\": 512}");
    assert_non_null(strstr(m.notes, "bfloat16 assumed"));
}

/* A ModelOpt checkpoint keeps its scheme in hf_quant_config.json beside config.json. */
static void test_hf_quant_config(void **state)
{
    static const char cfg[] =
        "{\"model_type\": \"llama\", \"num_hidden_layers\": 2, \"hidden_size\": 64, "
        "\"num_attention_heads\": 4, \"intermediate_size\": 128, \"vocab_size\": 100, "
        "\"max_position_embeddings\": 512, \"torch_dtype\": \"bfloat16\"}";
    const char *path = write_file("Tiny-NVFP4", "config.json", cfg);
    char cpath[400], why[600];
    snprintf(cpath, sizeof cpath, "%s", path);
    eng_model m;
    /* without the file: bf16, and a note that the name says otherwise */
    assert_int_equal(cal_model_from_config_json(cpath, &m, why, sizeof why), 0);
    assert_int_equal(m.weight_dtype, ENG_BF16);
    assert_non_null(strstr(m.notes, "the name says 'fp4'"));
    write_file("Tiny-NVFP4", "hf_quant_config.json",
               "{\"producer\": {\"name\": \"modelopt\"}, \"quantization\": {\"quant_algo\": "
               "\"NVFP4\", \"kv_cache_quant_algo\": \"FP8\", \"group_size\": 16, "
               "\"exclude_modules\": [\"lm_head\", \"model.layers.*.self_attn*\"]}}");
    assert_int_equal(cal_model_from_config_json(cpath, &m, why, sizeof why), 0);
    assert_int_equal(m.weight_dtype, ENG_NVFP4);
    assert_int_equal(m.kv_dtype, ENG_FP8);
    assert_int_equal(m.quant_parts, ENG_PART_MLP);
    assert_string_equal(m.notes, "");
    write_file("Tiny-NVFP4", "hf_quant_config.json",
               "{\"quantization\": {\"quant_algo\": \"W4A8_AWQ\"}}");
    assert_int_equal(cal_model_from_config_json(cpath, &m, why, sizeof why), -1);
    assert_non_null(strstr(why, "hf_quant_config.json"));
    assert_non_null(strstr(why, "W4A8_AWQ"));
}

static void test_json_handling(void **state)
{
    /* nesting beyond the limit is refused with a clear message */
    char deep[400];
    int n = snprintf(deep, sizeof deep, "{\"model_type\": \"llama\", \"x\": ");
    for (int i = 0; i < 70; i++)
        deep[n++] = '[';
    deep[n] = '\0';
    refused(deep, "nesting deeper than 64 levels", NULL);
    /* positions: line and column of the fault */
    refused("{\n\"model_type\": \"llama\",\n  \"a\": 01\n}", ":3:8: bad number", NULL);
    refused("{\"model_type\": \"llama\", \"a\": \"tab\there\"}", "control character", NULL);
    /* a repeated key: the later value wins, as in Python's json */
    eng_model m =
        config_model("{\"model_type\": \"llama\", \"num_hidden_layers\": 2, \"hidden_size\": 64, "
                     "\"num_attention_heads\": 4, \"intermediate_size\": 128, \"vocab_size\": 100, "
                     "\"max_position_embeddings\": 512, \"torch_dtype\": \"bfloat16\", "
                     "\"num_hidden_layers\": 4, \"note\": \"\\u00e9\\ud83d\\ude00\"}");
    assert_int_equal(m.layers, 4);
    /* a 1.4 MB config (a long per-layer exclusion list) reads in linear time: the old reader
     * rescanned the text for every member's line and took about two minutes */
    size_t cap = 1600000, used = 0;
    char *big = malloc(cap);
    assert_non_null(big);
    used += (size_t)snprintf(
        big, cap,
        "{\"model_type\": \"qwen3_moe\", \"num_hidden_layers\": 94, \"hidden_size\": 4096, "
        "\"num_attention_heads\": 64, \"num_key_value_heads\": 4, \"head_dim\": 128, "
        "\"intermediate_size\": 12288, \"moe_intermediate_size\": 1536, \"num_experts\": 128, "
        "\"num_experts_per_tok\": 8, \"vocab_size\": 151936, \"max_position_embeddings\": "
        "40960, \"torch_dtype\": \"bfloat16\", \"quantization_config\": {\"quant_method\": "
        "\"fp8\", \"modules_to_not_convert\": [\"lm_head\"");
    int entries = 0;
    while (used + 200 < cap - 100000) {
        used += (size_t)snprintf(big + used, cap - used,
                                 ",\n \"model.layers.%d.mlp.gate\", \"model.layers.%d."
                                 "post_attention_layernorm\"",
                                 entries % 94, entries % 94);
        entries += 2;
    }
    snprintf(big + used, cap - used, "]}}");
    double t0 = sim_wall_seconds();
    m = config_model(big);
    double dt = sim_wall_seconds() - t0;
    print_message("a %.2f MB config with %d exclusion entries read in %.3f s\n", strlen(big) / 1e6,
                  entries, dt);
    assert_true(strlen(big) > 1400000);
    assert_int_equal(m.weight_dtype, ENG_FP8);
    assert_true(dt < 5.0);
    free(big);
}

/* ---------------- the roofline's refusals ---------------- */

static void expect_unpriced(const eng_model *m, cal_serving s, const char *frag)
{
    char why[600];
    eng_gpu g = catalog_gpu("h200");
    eng_predictor p;
    sim_err err = {{0}};
    assert_int_equal(cal_roofline_priced(m, &s, why, sizeof why), -1);
    if (!strstr(why, frag) || !strstr(why, "rather than price it as a dense model"))
        fail_msg("%s: '%s' lacks '%s'", m->name, why, frag);
    assert_int_equal(cal_roofline_new(m, &g, &s, &p, &err), -1);
    assert_non_null(strstr(err.msg, frag));
}

static void expect_priced(const eng_model *m, cal_serving s)
{
    char why[600];
    eng_gpu g = catalog_gpu("b200");
    eng_predictor p;
    sim_err err = {{0}};
    if (cal_roofline_priced(m, &s, why, sizeof why) != 0)
        fail_msg("%s refused: %s", m->name, why);
    if (cal_roofline_new(m, &g, &s, &p, &err) != 0)
        fail_msg("%s: %s", m->name, err.msg);
    cal_predictor_free(&p);
}

/* The time of one iteration of shape sh of model m on GPU g served as a, over its time served
 * as b (roofline predictors). */
static double time_ratio(const eng_model *m, const eng_gpu *g, const cal_serving *a,
                         const cal_serving *b, const eng_shape *sh)
{
    eng_predictor pa, pb;
    sim_err err;
    assert_int_equal(cal_roofline_new(m, g, a, &pa, &err), 0);
    assert_int_equal(cal_roofline_new(m, g, b, &pb, &err), 0);
    double r = (double)pa.ops->iteration_ns(pa.st, sh) / (double)pb.ops->iteration_ns(pb.st, sh);
    cal_predictor_free(&pa);
    cal_predictor_free(&pb);
    return r;
}

static void test_roofline_refusals(void **state)
{
    eng_model mx = catalog_model("mixtral-8x7b"), ds = config_model(dsv32),
              q = config_model(qwen35);
    eng_model g2 = catalog_model("gemma-2-9b"), l4 = catalog_model("llama-4-scout"),
              dv3 = catalog_model("deepseek-v3");
    eng_model mla = config_model(
        "{\"model_type\": \"deepseek_v2\", \"num_hidden_layers\": 2, \"hidden_size\": 256, "
        "\"num_attention_heads\": 4, \"intermediate_size\": 512, \"kv_lora_rank\": 64, "
        "\"qk_nope_head_dim\": 32, \"qk_rope_head_dim\": 16, \"v_head_dim\": 32, "
        "\"vocab_size\": 100, \"max_position_embeddings\": 512, \"torch_dtype\": "
        "\"bfloat16\"}");
    /* MoE, MLA, linear attention, gated attention output and the MoE layouts are priced */
    expect_priced(&mx, cal_serving_tp(ENG_BF16, 1));
    expect_priced(&mla, cal_serving_tp(ENG_BF16, 1));
    expect_priced(&q, cal_serving_tp(ENG_BF16, 4));
    cal_serving dpep = cal_serving_tp(ENG_FP8, 1);
    dpep.layout.dp = dpep.layout.ep = 8;
    expect_priced(&dv3, dpep);
    /* windows and DeepSeek sparse attention whose cap binds wait for the engine's capped sums */
    expect_unpriced(&ds, cal_serving_tp(ENG_BF16, 1), "DeepSeek sparse attention whose top-2048");
    expect_unpriced(&g2, cal_serving_tp(ENG_BF16, 1), "sliding-window attention");
    expect_unpriced(&l4, cal_serving_tp(ENG_BF16, 1), "chunked local attention");
    cal_serving capped = cal_serving_tp(ENG_BF16, 1);
    capped.capped_sums = 1;
    expect_priced(&ds, capped);
    expect_priced(&l4, capped);
    /* windows that never bind are priced: Gemma-2 served up to its 4,096-token window */
    cal_serving s = cal_serving_tp(ENG_BF16, 1);
    s.max_len = 4096;
    char why[400];
    assert_int_equal(cal_roofline_priced(&g2, &s, why, sizeof why), 0);
    eng_gpu g = catalog_gpu("h200");
    eng_predictor p;
    sim_err err;
    assert_int_equal(cal_roofline_new(&g2, &g, &s, &p, &err), 0);
    cal_predictor_free(&p);
    /* a skew out of range and an unknown engine are refused by name */
    s.layout.moe.skew = -1;
    assert_int_equal(cal_roofline_priced(&g2, &s, why, sizeof why), -1);
    assert_non_null(strstr(why, "moe skew -1"));
    s.layout.moe.skew = 0;
    snprintf(s.engine, sizeof s.engine, "tgi");
    assert_int_equal(cal_roofline_priced(&g2, &s, why, sizeof why), -1);
    assert_non_null(strstr(why, "engine 'tgi'"));
    /* dense models with TP keep working; 4-bit weights read fewer bytes */
    eng_model l = catalog_model("llama-3-8b");
    cal_serving b16 = cal_serving_tp(ENG_BF16, 2), w4 = cal_serving_tp(ENG_INT4, 2);
    eng_shape sh = {0};
    eng_shape_add_decodes(&sh, 8, 8 * 1000);
    sh.emit_seqs = 8;
    double r4 = time_ratio(&l, &g, &w4, &b16, &sh);
    print_message("llama-3-8b tp2 h200, 8 decodes: int4 / bf16 step time %.2f\n", r4);
    assert_true(r4 < 0.75);
    /* nvfp4 on a B200 runs at the fp4 peak: a large prefill's GEMMs run 4x faster than
     * weight-only int4's; attention and the elementwise kernels are the same, so the pass
     * takes well under two thirds of the time */
    eng_gpu b = catalog_gpu("b200");
    cal_serving nv = cal_serving_tp(ENG_NVFP4, 1), i4 = cal_serving_tp(ENG_INT4, 1);
    eng_shape pf = {0};
    eng_shape_add_prefill(&pf, 8192, 0);
    pf.emit_seqs = 1;
    assert_true(time_ratio(&l, &b, &nv, &i4, &pf) < 0.6);
    eng_predictor pn;
    assert_int_equal(cal_roofline_new(&l, &b, &nv, &pn, &err), 0);
    assert_string_equal(pn.label, "roofline b200 nvfp4 (not measured)");
    cal_predictor_free(&pn);
}

LLMSIM_TESTS(tests, test_dtype_bytes, test_precision_rules, test_catalog_params, test_kv_bytes,
             test_checkpoint_quantization, test_fits_and_refusals, test_layout_checks,
             test_experts_split_both_ways, test_gqa_replication, test_reader_families,
             test_reader_refusals, test_hf_quant_config, test_json_handling,
             test_roofline_refusals);

int main(void)
{
    return scratch_run_group(tests, tmpdir, "/tmp/llmsim-models-XXXXXX");
}
