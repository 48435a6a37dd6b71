/*
 * scenarios_resolver.c: a model/GPU resolver for the scenario tests. It knows three fake
 * models and two fake GPUs with plausible numbers; the real catalogs live in calibration/.
 */
#include <stdio.h>
#include <string.h>

#include "scenario.h"

static const eng_model models[] = {
    {"llama-3-8b", 32, 4096, 32, 8, 128, 14336, 128256, 8192, 1, 0, 0},
    {"tiny-1b", 16, 2048, 16, 4, 128, 5632, 32000, 2048, 1, 0, 0},
    {"qwen2.5-7b", 28, 3584, 28, 4, 128, 18944, 152064, 131072, 1, 0, 1},
};

static const eng_gpu gpus[] = {
    {"h100-sxm", INT64_C(80) << 30, 3.35e12, 989e12, 1979e12, 450e9, 64e9},
    {"toy-gpu", INT64_C(24) << 30, 1.0e12, 150e12, 0, 32e9, 32e9},
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

const scn_resolver test_resolver = {model, gpu, NULL};
