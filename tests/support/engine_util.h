/*
 * engine_util.h: what engine-level tests share: a workload source over a fixed list of
 * arrivals, a linear cost model (1 ms per iteration + 1 us per token; swap at 25 GB/s), and a
 * tiny model on a fake GPU sized to hold an exact number of KV tokens, and seeded random
 * arrivals (of GSL's generator or of an LCG).
 */
#ifndef LLMSIM_TESTS_ENGINE_UTIL_H
#define LLMSIM_TESTS_ENGINE_UTIL_H

#include <stdio.h>

#include "engine.h"
#include "rng.h"
#include "tiny_model.h"

typedef struct list_src {
    const eng_arrival *a;
    int n, next;
} list_src;

static inline int list_next(void *st, int64_t now, eng_arrival *out, sim_err *err)
{
    list_src *s = st;
    if (s->next == s->n)
        return ENG_SRC_END;
    *out = s->a[s->next++];
    return ENG_SRC_OK;
}

static const eng_source_ops list_ops = {list_next, NULL};

static inline int64_t linear_ns(const void *st, const eng_shape *s)
{
    return 1000000 + 1000 * s->tokens;
}

static inline int64_t linear_xfer_ns(const void *st, int64_t bytes)
{
    return bytes / 25;
}

/* A small Llama-like model (2 layers, 8 KV heads of 128: 8 KiB per token) on a fake GPU
 * (PCIe 25 GB/s) whose memory holds the weights and exactly kv_tokens tokens of KV. */
static inline void tiny_config(eng_config *c, int64_t kv_tokens)
{
    eng_config_defaults(c);
    c->model = (eng_model)TEST_DENSE_MODEL("tiny", 2, 1024, 8, 8, 128, 2048, 1000, 4096);
    eng_model *m = &c->model;
    snprintf(c->gpu.name, sizeof c->gpu.name, "fake");
    c->gpu.pcie_bw = 25e9;
    c->gpu_utilization = 1.0;
    c->activation_reserve = 0;
    c->gpu.mem_bytes =
        eng_model_params(m) * 2 + kv_tokens * eng_model_kv_bytes_per_token(m, ENG_BF16);
}

/* Fills a[0..n) with arrivals of stream 0 of seed: gaps uniform in [0, gap_ns), prompts of 20
 * + uniform [0, prompt_span) tokens, outputs of 1 + uniform [0, output_span). */
static inline void random_arrivals(eng_arrival *a, int n, uint64_t seed, double gap_ns,
                                   int prompt_span, int output_span)
{
    gsl_rng *g = sim_rng_new_stream(seed, 0);
    int64_t t = 0;
    for (int i = 0; i < n; i++) {
        t += (int64_t)(gsl_rng_uniform(g) * gap_ns);
        a[i] = (eng_arrival){t,
                             20 + (int32_t)gsl_rng_uniform_int(g, prompt_span),
                             1 + (int32_t)gsl_rng_uniform_int(g, output_span),
                             NULL,
                             0,
                             0,
                             0,
                             0,
                             0};
    }
    gsl_rng_free(g);
}
/* Fills a[0..n) with arrivals drawn by a 64-bit LCG from seed x: gaps of (state >> gap_shift)
 * ns, prompts of 1 + [0, prompt_span) tokens, outputs of 1 + [0, output_span). */
static inline void lcg_arrivals(eng_arrival *a, int n, uint64_t x, int gap_shift, int prompt_span,
                                int output_span)
{
    int64_t t = 0;
    for (int i = 0; i < n; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        t += (int64_t)(x >> gap_shift);
        a[i] = (eng_arrival){.t = t,
                             .prompt = 1 + (int32_t)((x >> 20) % prompt_span),
                             .output = 1 + (int32_t)((x >> 8) % output_span)};
    }
}

#endif
