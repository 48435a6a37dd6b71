/*
 * model.h: what the engine needs to know about a model and a GPU: the description, the dtypes
 * it is stored and served in, and how a parallel layout divides its weights and KV cache.
 *
 * These are plain descriptions; the catalogs that fill them (and the config.json reader) live in
 * calibration/. Sizes are in elements or bytes as each field says. A zero-filled eng_model past
 * the first twelve fields is a dense pre-norm decoder with full attention in every layer (the
 * Llama shape): every field below qkv_bias describes a departure from it, so older positional
 * initialisers keep describing the same models.
 */
#ifndef ENG_MODEL_H
#define ENG_MODEL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Element types. ENG_DTYPE_AUTO stands for "the checkpoint's" in a configuration. */
typedef enum eng_dtype {
    ENG_DTYPE_AUTO = -1,
    ENG_BF16 = 0,
    ENG_FP16,
    ENG_FP8,       /* E4M3, block- or tensor-scaled */
    ENG_NVFP4,     /* E2M1 in 16-element blocks with an E4M3 scale */
    ENG_MXFP4,     /* E2M1 in 32-element blocks with an E8M0 scale (OCP MX) */
    ENG_INT4,      /* AWQ/GPTQ-style 4-bit integers, group 128, fp16 scale and 4-bit zero */
    ENG_FP32,      /* state of linear-attention layers (mamba_ssm_dtype); never a weights dtype */
    ENG_MXFP4_FP8, /* MXFP4 weights computed with fp8 activations (W4A8: TensorRT-LLM's
                      W4A8_MXFP4_FP8 MoE); stored as mxfp4 */
    ENG_DTYPE_COUNT
} eng_dtype;

const char *eng_dtype_name(eng_dtype d);
/* Bytes per element, block scales included (see model.c for each figure's source); 2 for an
 * unknown value. */
double eng_dtype_bytes(eng_dtype d);
/* 1 for the 4-bit weight formats (nvfp4, mxfp4, int4). */
int eng_dtype_is_4bit(eng_dtype d);
/* Parses a weights dtype: "bf16", "fp16", "fp8", "nvfp4", "mxfp4", "int4", or "fp4", which is
 * read as nvfp4 (NVIDIA's serving format on Blackwell). Returns 0, 1 when the name was the
 * "fp4" alias (so the caller can say which format it became), -1 for anything else. */
int eng_dtype_parse(const char *s, eng_dtype *out);

typedef enum eng_attn {
    ENG_ATTN_GQA = 0, /* MHA, GQA and MQA, by kv_heads */
    ENG_ATTN_MLA      /* DeepSeek multi-head latent attention: one latent per token */
} eng_attn;

/* The parts of a model a quantization scheme may or may not cover (a bit set). Norms are never
 * quantized and have no bit. */
enum {
    ENG_PART_EMBED = 1u << 0,   /* token (and learned position) embeddings */
    ENG_PART_LM_HEAD = 1u << 1, /* the output projection (absent when tied) */
    ENG_PART_ATTN = 1u << 2,    /* attention projections (GQA or MLA) */
    ENG_PART_MLP = 1u << 3,     /* dense MLP layers */
    ENG_PART_EXPERTS = 1u << 4, /* routed experts */
    ENG_PART_SHARED = 1u << 5,  /* shared experts (and their gate) */
    ENG_PART_ROUTER = 1u << 6,  /* the router (gate) of MoE layers */
    ENG_PART_LINEAR = 1u << 7,  /* linear-attention projections (gated DeltaNet) */
    ENG_PART_INDEXER = 1u << 8, /* DeepSeek sparse attention's indexer */
    ENG_PART_NORM = 1u << 9,    /* norms: counted, never quantized */
    ENG_PART_COUNT = 10
};
/* The parts an engine quantizes when asked for a weights dtype the checkpoint does not ship:
 * every linear layer but the embeddings, the LM head and the router (see model.c). */
#define ENG_PARTS_LINEAR_LAYERS                                                                    \
    (ENG_PART_ATTN | ENG_PART_MLP | ENG_PART_EXPERTS | ENG_PART_SHARED | ENG_PART_LINEAR |         \
     ENG_PART_INDEXER)

typedef struct eng_model {
    char name[64];
    int32_t layers;
    int32_t hidden;          /* d_model */
    int32_t heads;           /* query heads */
    int32_t kv_heads;        /* key/value heads (GQA); == heads for MHA; MLA: == heads */
    int32_t head_dim;        /* GQA head size (elements) */
    int32_t intermediate;    /* dense MLP inner size (elements) */
    int32_t vocab;           /* tokens */
    int32_t max_context;     /* tokens (max_position_embeddings) */
    int32_t gated_mlp;       /* 1: SwiGLU/GeGLU (gate, up, down); 0: two matrices (ReLU/GELU) */
    int32_t tied_embeddings; /* 1: LM head shares the embedding matrix */
    int32_t qkv_bias;        /* 1: Q, K and V projections carry biases */
    /* ---- everything below: zero means "as Llama" ---- */
    char arch[32];            /* the model_type read ("deepseek_v3"); "" when unknown */
    int32_t o_bias;           /* 1: the output projection carries a bias */
    int32_t mlp_bias;         /* 1: dense MLP (and expert) projections carry biases */
    int32_t norms_per_layer;  /* 0 = 2 (pre-attention, pre-MLP); Gemma-2/3: 4 */
    int32_t norm_bias;        /* 1: LayerNorm with a bias (OPT) */
    int32_t learned_pos;      /* rows of a learned position embedding (OPT: context + 2) */
    int32_t qk_norm;          /* 0 none; 1 per-head RMSNorm (head_dim each, Qwen3, Gemma-3);
                                 2 over all heads (heads + kv_heads) x head_dim (MiniMax-M2) */
    int32_t attn_output_gate; /* 1: q_proj also produces a sigmoid gate per head (Qwen3.5) */
    int32_t sinks;            /* 1: one learned sink logit per head per layer (gpt-oss) */
    eng_attn attn;
    /* MLA (attn == ENG_ATTN_MLA) */
    int32_t q_lora_rank;  /* 0: queries projected directly from the hidden state */
    int32_t kv_lora_rank; /* the latent cached per token */
    int32_t qk_nope_dim;  /* per head, without rotary embedding */
    int32_t qk_rope_dim;  /* per head, rotary part; the cached key's rotary part is shared */
    int32_t v_head_dim;   /* per head */
    /* windowed attention */
    int32_t window_layers;  /* layers that attend to at most `window` recent tokens */
    int32_t window;         /* tokens */
    int32_t window_chunked; /* 1: aligned chunks of `window` tokens (Llama-4 chunked attention) */
    /* linear attention (gated DeltaNet): a fixed state per sequence */
    int32_t linear_layers;
    int32_t lin_k_heads, lin_v_heads; /* key and value heads */
    int32_t lin_k_dim, lin_v_dim;     /* head sizes (elements) */
    int32_t lin_conv;                 /* causal convolution kernel (taps) */
    eng_dtype state_dtype;            /* recurrent state (mamba_ssm_dtype); conv state: act */
    /* DeepSeek sparse attention: an indexer picks the index_topk keys each query attends to */
    int32_t index_topk; /* 0 = none */
    int32_t index_heads;
    int32_t index_dim;
    /* mixture of experts */
    int32_t moe_layers;      /* layers whose MLP is routed experts; the rest are dense */
    int32_t experts;         /* routed experts per MoE layer */
    int32_t experts_per_tok; /* top-k */
    int32_t expert_inter;    /* inner size of one routed expert */
    int32_t shared_inter;    /* inner size of the shared experts together (0 = none) */
    int32_t shared_gate;     /* 1: a sigmoid gate (hidden -> 1) scales the shared expert */
    int32_t expert_bias;     /* 1: routed experts' projections carry biases (gpt-oss) */
    int32_t router_bias;     /* 1: the router has one bias (or score correction) per expert */
    /* precision as the checkpoint ships it */
    eng_dtype weight_dtype; /* from quantization_config, else act_dtype */
    uint32_t quant_parts;   /* ENG_PART_* stored in weight_dtype; the rest are 16-bit */
    double quant_bytes;     /* bytes per element of those parts as shipped (group size and
                               scales of this checkpoint); 0 = eng_dtype_bytes(weight_dtype) */
    int32_t act_group;      /* fp8 activations scaled per group of this many input elements
                               (block-scaled checkpoints: weight_block_size's input side, 128 for
                               DeepSeek-style 1x128 groups); 0 = one scale per tensor */
    eng_dtype act_dtype;    /* torch_dtype */
    eng_dtype kv_dtype;     /* the checkpoint's KV cache quantization, else act_dtype */
    char notes[384];        /* approximations the reader made, one per line, for the user */
} eng_model;

/* Where the routed experts sit on the expert-parallel GPUs (moe.placement). */
typedef enum eng_moe_placement {
    ENG_MOE_STATIC, /* expert e on group e / (experts / ep), whatever its load (no EPLB) */
    ENG_MOE_EPLB,   /* rebalanced by load, with redundant copies (DeepSeek's EPLB) */
} eng_moe_placement;

/* The routed experts' placement and popularity (the scenario's moe: section). */
typedef struct eng_moe {
    int32_t placement; /* eng_moe_placement */
    int32_t redundant; /* redundant expert slots per MoE layer over the ep groups (EPLB) */
    double skew;       /* Zipf exponent of expert popularity; 0 = balanced routing */
} eng_moe;

/* How one replica's GPUs divide a model. GPUs per replica = tp x dp. */
typedef struct eng_layout {
    int32_t tp;  /* tensor parallel: GPUs splitting each attention and dense layer */
    int32_t ep;  /* expert parallel: groups the routed experts are placed over (1 = none); it
                    divides tp x dp, and each expert is split over the tp x dp / ep GPUs of its
                    group (TensorRT-LLM's moe_tp_size x moe_ep_size) */
    int32_t dp;  /* attention data-parallel ranks, each with its own requests and KV (1 = none) */
    eng_moe moe; /* expert placement and routing skew (zero: static, balanced) */
} eng_layout;

/* GPUs each routed expert's inner dimension is split over: tp x dp / ep. */
int32_t eng_layout_moe_tp(const eng_layout *l);

/* Parameters (elements): every weight of the language model (embeddings, layers, LM head;
 * multi-token-prediction layers and vision towers are not part of the description). */
int64_t eng_model_params(const eng_model *m);
/* Parameters one token's forward pass multiplies by: all but the routed experts it is not sent
 * to and the input embedding table (a row lookup; counted when tied to the LM head). The
 * convention of OpenAI's gpt-oss model card; DeepSeek, Qwen and Meta publish within ~5%. */
int64_t eng_model_params_active(const eng_model *m);
/* Parameters of one part (ENG_PART_* bit) of the whole model. */
int64_t eng_model_part_params(const eng_model *m, uint32_t part);

/* The parts stored in dtype d when the model is served in d: the checkpoint's quant_parts when
 * d is its weight_dtype, ENG_PARTS_LINEAR_LAYERS for another non-16-bit dtype, none for a
 * 16-bit one. */
uint32_t eng_model_quant_parts(const eng_model *m, eng_dtype d);
/* Bytes per element of `part` when served in d: the checkpoint's quant_bytes (or the dtype's)
 * for the parts quant_parts covers, 2 for the rest. */
double eng_model_part_bytes(const eng_model *m, eng_dtype d, uint32_t part);

/* KV bytes per token of the layers that attend to the whole context, on one unsharded copy:
 * GQA 2 x kv_heads x head_dim x bytes per layer; MLA one latent (kv_lora_rank + qk_rope_dim)
 * per layer; DeepSeek sparse attention adds the indexer's key (see model.c). kv in bf16, fp16
 * or fp8. */
int64_t eng_model_kv_bytes_per_token(const eng_model *m, eng_dtype kv);
/* The same for the windowed layers (held for at most m->window tokens of a sequence). */
int64_t eng_model_window_bytes_per_token(const eng_model *m, eng_dtype kv);
/* State bytes per sequence of the linear-attention layers (convolution and recurrent state). */
int64_t eng_model_state_bytes(const eng_model *m);

/* Checks that layout l divides model m: tp divides the query heads (and the KV heads divide
 * tp or tp divides them), the dense MLP and linear-attention heads; ep is 1 or tp x dp and
 * divides the experts, which then need an MoE model; dp > 1 needs an MoE model. Returns 0, or
 * -1 with a message in why giving the numbers. */
int eng_layout_check(const eng_model *m, const eng_layout *l, char *why, size_t len);

/* What one GPU of layout l holds (l must pass eng_layout_check). */
typedef struct eng_gpu_share {
    int64_t weight_bytes;     /* weights in dtype d as eng_model_part_bytes says */
    int64_t kv_per_token;     /* full-attention KV (and index keys) of one token */
    int64_t window_per_token; /* windowed layers' KV of one token */
    int64_t state_per_seq;    /* linear-attention state of one sequence */
    int32_t kv_heads;         /* KV heads this GPU caches (replicated when tp > kv_heads) */
} eng_gpu_share;
/* Fills *out for weights in d and the KV cache in kv. */
void eng_model_gpu_share(const eng_model *m, eng_dtype d, eng_dtype kv, const eng_layout *l,
                         eng_gpu_share *out);

/* Appends a line (printf-style) to m->notes, cut short when full. */
void eng_model_note(eng_model *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends a line (fmt with ap, then a newline) to the notes in notes[size], cut short when
 * full: the appender of eng_model_note and of other notes kept in a fixed buffer. */
void eng_notes_vadd(char *notes, size_t size, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/* FP4 formats a GPU's tensor cores compute (eng_gpu.fp4_formats). */
enum { ENG_FP4_NV = 1, ENG_FP4_MX = 2 };

typedef struct eng_gpu {
    char name[32];
    int64_t mem_bytes;    /* HBM capacity */
    double mem_bw;        /* bytes/s, datasheet */
    double flops_bf16;    /* dense bf16/fp16 FLOP/s, datasheet (no sparsity) */
    double flops_fp8;     /* dense fp8 FLOP/s; 0 when the GPU has no fp8 tensor cores */
    double link_bw;       /* bytes/s per direction between GPUs (NVLink, Infinity Fabric, PCIe) */
    double pcie_bw;       /* bytes/s host <-> device per direction */
    double flops_fp4;     /* dense fp4 FLOP/s; 0 when the GPU has no fp4 tensor cores */
    uint32_t fp4_formats; /* ENG_FP4_* the fp4 tensor cores compute */
    double nic_bw;        /* scale-out network bytes/s per GPU per direction; 0 = not stated */
    /* what it costs to run (its catalog row, calibration/catalog.c; a scenario's price: and power:
     * override) */
    double price_per_hour; /* USD per GPU-hour; 0 = no price stated */
    double max_w;          /* board power at full load, W; 0 = not stated */
    double idle_w;         /* power idle with a model loaded, W */
} eng_gpu;

/* How a GPU computes with weights in a given dtype. */
typedef enum eng_compute {
    ENG_COMPUTE_16 = 0, /* 16-bit tensor cores (weights dequantized on the fly when stored
                           narrower: weight-only quantization) */
    ENG_COMPUTE_FP8,    /* fp8 tensor cores (W8A8) */
    ENG_COMPUTE_FP4     /* fp4 tensor cores (W4A4) */
} eng_compute;

/* The inputs of a layer's fp8 GEMMs that an engine quantizes with a kernel of its own (a bit set,
 * engine/presets.c); a bit left out is quantized inside the kernel that produced the input, or
 * not at all. */
enum {
    ENG_AQ_QKV = 1u << 0,  /* the QKV projection's input (the attention norm's output) */
    ENG_AQ_O = 1u << 1,    /* the output projection's (the attention's output) */
    ENG_AQ_UP = 1u << 2,   /* the dense MLP's gate/up projection's (the MLP norm's output) */
    ENG_AQ_DOWN = 1u << 3, /* the down projection's (the activation's output) */
};
/* Which of the two masks applies: one scale per tensor, or per group of input elements. */
enum { ENG_AQ_TENSOR = 0, ENG_AQ_BLOCK = 1, ENG_AQ_SCHEMES = 2 };

/* Decides how GPU g runs weights in d with a KV cache in kv, the way serving engines run them
 * there: fp8 on fp8 tensor cores (an error naming the GPU when it has none); nvfp4 on NVFP4
 * tensor cores, else weight-only; mxfp4 and int4 weight-only; mxfp4-fp8 on fp8 tensor cores
 * (see model.c for the sources).
 * Returns 0 with *out set and, when the run differs from what the dtype suggests, a sentence in
 * note ("" otherwise); or -1 with a message in why. */
/* The dtype weights in d are stored in: d itself, mxfp4 for mxfp4-fp8. */
eng_dtype eng_dtype_storage(eng_dtype d);
int eng_precision(const eng_gpu *g, eng_dtype d, eng_dtype kv, eng_compute *out, char *note,
                  size_t notelen, char *why, size_t len);

#endif
