/* test_models_data.c: every real config.json in ../shared/data/models loads (none is refused
 * today: each family is read), with parameter counts against the published figures its
 * SOURCE.md gives (totals within 3%, actives within 10%), and the features each file carries
 * (checkpoint dtypes, MLA latent size, sparse attention, windows, linear attention) read as its
 * model code defines them. Exits 77 (skipped) when the shared data is absent. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "catalog.h"
#include "sim.h"
#include "test_main.h"

static char dir[512];

/* Every directory of models/ with its published total and active parameters in billions, as
 * SOURCE.md states them (0: "[U]", no figure was found). `rounded` marks a figure published
 * only as a whole number in words ("7 billion"): it stands for [v - 0.5, v + 0.5), and the 3%
 * applies to that interval. Convention (eng_model_params_active): active parameters are all but
 * the routed experts a token is not sent to and the input embedding table. */
static const struct {
    const char *dir;
    double total, active;
    int rounded;
} models[] = {
    {"deepseek-r1", 671, 37, 0},
    {"deepseek-v2-lite", 15.7, 2.4, 0},
    {"deepseek-v3", 671, 37, 0},
    {"deepseek-v3.2", 0, 0, 0},
    {"glm-5-nvfp4", 0, 0, 0},
    {"gpt-oss-120b", 117, 5.1, 0},
    {"gpt-oss-20b", 21, 3.6, 0},
    {"kimi-k2-instruct", 1000, 32, 0},
    {"kimi-k2.5", 0, 0, 0},
    {"llama-3.1-405b", 405, 405, 0},
    {"llama-3.1-70b", 70, 70, 0},
    {"llama-3.1-8b", 8, 8, 0},
    {"llama-4-maverick-17b-128e-instruct", 0, 0, 0},
    {"llama-4-scout-17b-16e-instruct", 109, 17, 0},
    {"minimax-m2.5", 0, 0, 0},
    {"mistral-7b-v0.1", 7, 7, 1},
    {"mixtral-8x22b-v0.1", 0, 0, 0},
    {"mixtral-8x7b-v0.1", 47, 13, 0},
    {"qwen2.5-7b-instruct", 7.61, 7.61, 0},
    {"qwen3-235b-a22b", 235, 22, 0},
    {"qwen3-235b-a22b-fp8", 235, 22, 0},
    {"qwen3-30b-a3b", 30.5, 3.3, 0},
    {"qwen3-32b", 0, 0, 0},
    {"qwen3-8b", 8.2, 8.2, 0},
    {"qwen3.5-397b-a17b", 397, 17, 0},
};

static int in_range(double got, double pub, int rounded, double rel)
{
    double lo = rounded ? pub - 0.5 : pub, hi = rounded ? pub + 0.5 : pub;
    return got >= lo * (1 - rel) && got <= hi * (1 + rel);
}

static eng_model load(const char *name)
{
    char path[700], why[700];
    eng_model m;
    snprintf(path, sizeof path, "%s/%s/config.json", dir, name);
    if (cal_model_from_config_json(path, &m, why, sizeof why) != 0)
        fail_msg("%s", why);
    return m;
}

static void test_every_config(void **state)
{
    int checked = 0;
    char list[4096] = "";
    size_t used = 0;
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        char path[700];
        snprintf(path, sizeof path, "%s/%s/config.json", dir, models[i].dir);
        if (access(path, R_OK) != 0)
            fail_msg("%s is missing", path);
        eng_model m = load(models[i].dir);
        assert_string_equal(m.name, models[i].dir);
        double t = eng_model_params(&m) / 1e9, a = eng_model_params_active(&m) / 1e9;
        print_message("%-36s %-14s %8.2f B total, %7.2f B active, %-5s weights, KV %6lld B/token"
                      "%s%s\n",
                      m.name, m.arch, t, a, eng_dtype_name(m.weight_dtype),
                      (long long)(eng_model_kv_bytes_per_token(&m, m.kv_dtype) +
                                  eng_model_window_bytes_per_token(&m, m.kv_dtype)),
                      models[i].total > 0 ? "" : "  (no published count)",
                      *m.notes ? "  [notes]" : "");
        if (models[i].total > 0) {
            if (!in_range(t, models[i].total, models[i].rounded, 0.03))
                fail_msg("%s: %.2f B total, published %g B", m.name, t, models[i].total);
            if (!in_range(a, models[i].active, models[i].rounded, 0.10))
                fail_msg("%s: %.2f B active, published %g B", m.name, a, models[i].active);
            checked++;
        }
        used += (size_t)snprintf(list + used, sizeof list - used, "%s ", m.name);
    }
    print_message("%d configs read, %d against published counts\n",
                  (int)(sizeof models / sizeof models[0]), checked);
    assert_true(checked >= 17);
}

static void test_features(void **state)
{
    /* DeepSeek-V3: 61 layers x (512 + 64) x 2 bytes of latent per token; its fp8 checkpoint */
    eng_model d = load("deepseek-v3");
    assert_int_equal(eng_model_kv_bytes_per_token(&d, ENG_BF16), 70272);
    assert_int_equal(d.weight_dtype, ENG_FP8);
    assert_int_equal(d.quant_parts,
                     ENG_PART_ATTN | ENG_PART_MLP | ENG_PART_EXPERTS | ENG_PART_SHARED);
    assert_int_equal(d.kv_dtype, ENG_BF16);
    assert_non_null(strstr(d.notes, "num_nextn_predict_layers 1"));
    /* gpt-oss: MXFP4 experts only; sliding layers of 128 tokens alternate with full ones */
    eng_model g = load("gpt-oss-120b");
    assert_int_equal(g.weight_dtype, ENG_MXFP4);
    assert_int_equal(g.quant_parts, ENG_PART_EXPERTS);
    assert_true(g.window_layers == 18 && g.window == 128 && g.sinks);
    /* Kimi-K2.5 (a multimodal wrapper): int4 routed experts, group 32 */
    eng_model k = load("kimi-k2.5");
    assert_string_equal(k.arch, "kimi_k2");
    assert_int_equal(k.weight_dtype, ENG_INT4);
    assert_int_equal(k.quant_parts, ENG_PART_EXPERTS);
    assert_true(k.quant_bytes == 0.5625);
    assert_non_null(strstr(k.notes, "vision tower"));
    /* Qwen3-235B-A22B-FP8: its per-layer list names only norms and routers */
    eng_model q8 = load("qwen3-235b-a22b-fp8");
    assert_int_equal(q8.weight_dtype, ENG_FP8);
    assert_int_equal(q8.quant_parts, ENG_PART_ATTN | ENG_PART_EXPERTS);
    /* DeepSeek sparse attention: the index keys join the latent */
    eng_model s = load("deepseek-v3.2");
    assert_int_equal(s.index_topk, 2048);
    assert_int_equal(eng_model_kv_bytes_per_token(&s, ENG_BF16), 61 * (1152 + 132));
    /* GLM-5-NVFP4: MLA of 512 + 64 with sparse attention; its config carries no quantization
     * (ModelOpt keeps it in hf_quant_config.json, not in this copy): read as bf16, said */
    eng_model glm = load("glm-5-nvfp4");
    assert_true(glm.attn == ENG_ATTN_MLA && glm.index_topk == 2048 && glm.moe_layers == 75);
    assert_non_null(strstr(glm.notes, "the name says 'fp4'"));
    /* Qwen3.5: 45 gated DeltaNet layers, fp32 recurrent state */
    eng_model q = load("qwen3.5-397b-a17b");
    assert_true(q.linear_layers == 45 && q.state_dtype == ENG_FP32 && q.attn_output_gate);
    assert_int_equal(eng_model_state_bytes(&q), INT64_C(45) * (12288 * 3 * 2 + 64 * 128 * 128 * 4));
    /* Llama-4 Scout: chunked attention on 36 of 48 layers; Maverick MoE every other layer */
    eng_model l4 = load("llama-4-scout-17b-16e-instruct");
    assert_true(l4.window_layers == 36 && l4.window == 8192 && l4.window_chunked);
    assert_int_equal(load("llama-4-maverick-17b-128e-instruct").moe_layers, 24);
    /* Mistral: every layer windowed; Qwen2.5: use_sliding_window false, so none */
    assert_int_equal(load("mistral-7b-v0.1").window_layers, 32);
    assert_int_equal(load("qwen2.5-7b-instruct").window_layers, 0);
    /* the catalog entries describe the same models as their shared configs */
    static const char *const same[][2] = {
        {"deepseek-v3", "deepseek-v3"},
        {"gpt-oss-120b", "gpt-oss-120b"},
        {"llama-3.1-8b", "llama-3.1-8b"},
        {"mixtral-8x7b", "mixtral-8x7b-v0.1"},
        {"qwen3-30b-a3b", "qwen3-30b-a3b"},
        {"kimi-k2", "kimi-k2-instruct"},
        {"llama-4-scout", "llama-4-scout-17b-16e-instruct"},
    };
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        eng_model c, f = load(same[i][1]);
        assert_int_equal(cal_model_find(same[i][0], &c), 0);
        if (eng_model_params(&c) != eng_model_params(&f) ||
            eng_model_kv_bytes_per_token(&c, ENG_BF16) !=
                eng_model_kv_bytes_per_token(&f, ENG_BF16) ||
            c.weight_dtype != f.weight_dtype || c.quant_parts != f.quant_parts)
            fail_msg("catalog %s differs from %s/config.json", same[i][0], same[i][1]);
    }
}

LLMSIM_TESTS(tests, test_every_config, test_features);

int main(void)
{
    const char *base = getenv("LLMSIM_SHARED_DIR");
    snprintf(dir, sizeof dir, "%s/data/models", base ? base : LLMSIM_SHARED_DIR);
    if (access(dir, R_OK) != 0) {
        printf("skipped: no model configs under %s\n", dir);
        return 77;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
