/*
 * preset.h: engine presets: `engine: vllm | sglang | trtllm | tgi` (optionally with a version)
 * in a scenario picks the policy that engine runs, the defaults it starts from, and a CPU
 * overhead model taken from a published profile of that engine. A scenario's own keys override
 * any of them. `llmsim list engines` prints the table with each figure's source.
 */
#ifndef ENG_PRESET_H
#define ENG_PRESET_H

#include <stddef.h>

#include "engine.h"

typedef struct eng_preset {
    const char *engine;          /* vllm, sglang, trtllm, tgi */
    const char *version;         /* the version whose code and defaults it follows */
    int is_default;              /* the version `engine: NAME` alone picks */
    const char *policy;          /* the scheduler (registry name) */
    const char *params;          /* policy settings, "key=value,key=value" ("" for none) */
    double gpu_utilization;      /* memory fraction the engine takes by default (0: llmsim's) */
    int32_t block_size;          /* tokens per KV block by default (0: llmsim's) */
    eng_cpu_overhead cpu;        /* CPU time per iteration and per sequence, sync or overlapped */
    const char *cpu_source;      /* where those figures come from */
    const char *summary;         /* one line */
    double free_memory_fraction; /* the KV cache's share of the memory left after the weights
                                    and activations (0: llmsim's, all of it) */
    double eager_launch_ns;      /* host time to launch one kernel in a pass that runs without a
                                    CUDA graph (0: the cost model's, calibration/roofline.c) */
    const char *eager_source;    /* where that figure comes from (NULL with 0) */
    uint32_t act_quant[ENG_AQ_SCHEMES]; /* the fp8 GEMM inputs quantized by a kernel of their
                                           own (ENG_AQ_* bits), with one scale per tensor
                                           [ENG_AQ_TENSOR] and per group [ENG_AQ_BLOCK] */
    const char *act_quant_source;       /* what those masks were read from (NULL: both 0, not
                                           read; the quantize is priced as fused) */
} eng_preset;

/* Every preset, in listing order; *n gets the count. The table is static. */
const eng_preset *eng_preset_all(size_t *n);
/* The preset of engine at version (NULL: its default version), or NULL. */
const eng_preset *eng_preset_find(const char *engine, const char *version);
/* The engine names as "a, b, c", or engine's versions, into buf (truncated to len). */
const char *eng_preset_names(char *buf, size_t len);
const char *eng_preset_versions(const char *engine, char *buf, size_t len);

#endif
