/*
 * scenarios_resolver.c: a model/GPU resolver for the scenario tests. It knows three fake
 * models and two fake GPUs with plausible numbers; the real catalogs live in calibration/.
 */
#include <stdio.h>
#include <string.h>

#include "scenario.h"

/* name, layers, hidden, heads, kv_heads, head_dim, intermediate, vocab, context, gated MLP,
 * tied embeddings, QKV bias; the rest zero (a dense Llama-shaped model in bf16) */
#define MODEL(n, l, h, a, kv, d, i, v, ctx, g, t, b)                                               \
    {                                                                                              \
        .name = n, .layers = l, .hidden = h, .heads = a, .kv_heads = kv, .head_dim = d,            \
        .intermediate = i, .vocab = v, .max_context = ctx, .gated_mlp = g, .tied_embeddings = t,   \
        .qkv_bias = b                                                                              \
    }
static const eng_model models[] = {
    MODEL("llama-3-8b", 32, 4096, 32, 8, 128, 14336, 128256, 8192, 1, 0, 0),
    MODEL("tiny-1b", 16, 2048, 16, 4, 128, 5632, 32000, 2048, 1, 0, 0),
    MODEL("qwen2.5-7b", 28, 3584, 28, 4, 128, 18944, 152064, 131072, 1, 0, 1),
};

static const eng_gpu gpus[] = {
    {.name = "h100-sxm",
     .mem_bytes = INT64_C(80) << 30,
     .mem_bw = 3.35e12,
     .flops_bf16 = 989e12,
     .flops_fp8 = 1979e12,
     .link_bw = 450e9,
     .pcie_bw = 64e9},
    {.name = "toy-gpu",
     .mem_bytes = INT64_C(24) << 30,
     .mem_bw = 1.0e12,
     .flops_bf16 = 150e12,
     .link_bw = 32e9,
     .pcie_bw = 32e9},
};

static int model(void *st, const char *name, const char *base_dir, eng_model *out, char *why,
                 size_t len)
{
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        if (strcmp(models[i].name, name) == 0) {
            *out = models[i];
            return 0;
        }
    snprintf(why, len,
             "unknown model '%s' (valid: llama-3-8b, tiny-1b, qwen2.5-7b, or a config.json path)",
             name);
    return -1;
}

static int gpu(void *st, const char *name, eng_gpu *out, char *why, size_t len)
{
    for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++)
        if (strcmp(gpus[i].name, name) == 0) {
            *out = gpus[i];
            return 0;
        }
    snprintf(why, len, "unknown GPU '%s' (valid: h100-sxm, toy-gpu)", name);
    return -1;
}

const scn_resolver test_resolver = {model, gpu, NULL, NULL};
