/*
 * model.h: what the engine needs to know about a model and a GPU.
 *
 * These are plain descriptions; the catalogs that fill them (and the config.json reader) live in
 * calibration/. Sizes are in elements or bytes as each field says.
 */
#ifndef ENG_MODEL_H
#define ENG_MODEL_H

#include <stdint.h>

typedef enum eng_dtype { ENG_BF16 = 0, ENG_FP16, ENG_FP8, ENG_DTYPE_COUNT } eng_dtype;

const char *eng_dtype_name(eng_dtype d);
int eng_dtype_bytes(eng_dtype d);
/* Returns 0 and sets *out for "bf16", "fp16" or "fp8"; -1 otherwise. */
int eng_dtype_parse(const char *s, eng_dtype *out);

typedef struct eng_model {
    char name[64];
    int32_t layers;
    int32_t hidden;   /* d_model */
    int32_t heads;    /* query heads */
    int32_t kv_heads; /* key/value heads (GQA); == heads for MHA */
    int32_t head_dim;
    int32_t intermediate; /* MLP inner size */
    int32_t vocab;
    int32_t max_context;     /* tokens (max_position_embeddings) */
    int32_t gated_mlp;       /* 1: SwiGLU (gate, up, down); 0: two-matrix MLP with GELU/ReLU */
    int32_t tied_embeddings; /* 1: LM head shares the embedding matrix */
    int32_t qkv_bias;        /* 1: QKV projections carry biases (Qwen2) */
} eng_model;

/* Parameter count (embeddings, layers, LM head), in elements. */
int64_t eng_model_params(const eng_model *m);
/* KV bytes per token: 2 (K and V) x layers x kv_heads x head_dim x dtype bytes. */
int64_t eng_model_kv_bytes_per_token(const eng_model *m, eng_dtype d);

typedef struct eng_gpu {
    char name[32];
    int64_t mem_bytes; /* HBM capacity */
    double mem_bw;     /* bytes/s, datasheet */
    double flops_bf16; /* dense bf16/fp16 FLOP/s, datasheet (no sparsity) */
    double flops_fp8;  /* dense fp8 FLOP/s; 0 when the GPU has no fp8 tensor cores */
    double link_bw;    /* bytes/s per direction between GPUs (NVLink or PCIe) */
    double pcie_bw;    /* bytes/s host <-> device per direction */
} eng_gpu;

#endif
