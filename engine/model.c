/*
 * model.c: dtypes, parameter counts, and how a parallel layout divides a model's weights and
 * KV cache over the GPUs of a replica.
 *
 * Parameters are counted per part (ENG_PART_*) from the description, the way serving engines
 * lay the layers out; a layout's share of each part follows how vLLM shards it (cited where
 * counted). Everything here is a pure function of its arguments.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "model.h"
#include "sim.h"

static const char *const dtype_names[ENG_DTYPE_COUNT] = {"bf16",  "fp16", "fp8",  "nvfp4",
                                                         "mxfp4", "int4", "fp32", "mxfp4-fp8"};

/* MODEL: bytes per element, scales included.
 *  bf16, fp16: 2; fp32: 4.
 *  fp8 (E4M3): 1. DeepSeek-V3's block-wise checkpoints add one fp32 scale per 128 x 128 block
 *    (4 / 16384 B per element, 0.02%), left out.
 *  nvfp4: 4-bit E2M1 values in 16-element blocks, each with an FP8 E4M3 scale (NVIDIA,
 *    "Introducing NVFP4 for efficient and accurate low-precision inference", 2025), plus one
 *    fp32 scale per tensor (negligible): 0.5 + 1/16 = 0.5625.
 *  mxfp4: E2M1 in 32-element blocks sharing an E8M0 scale (OCP Microscaling Formats (MX) v1.0
 *    specification, 2023): 0.5 + 1/32 = 0.53125.
 *  int4: AWQ/GPTQ as AutoAWQ and vLLM store them: 4-bit values packed eight per int32, and per
 *    group of 128 input channels an fp16 scale and a 4-bit zero point packed eight per int32:
 *    0.5 + (2 + 0.5) / 128 = 0.51953. A checkpoint with another group size carries its own
 *    figure in eng_model.quant_bytes. */
static const double dtype_bytes[ENG_DTYPE_COUNT] = {2,       2,          1, 0.5625,
                                                    0.53125, 0.51953125, 4, 0.53125};

const char *eng_dtype_name(eng_dtype d)
{
    if (d == ENG_DTYPE_AUTO)
        return "auto";
    return (unsigned)d < ENG_DTYPE_COUNT ? dtype_names[d] : "?";
}

double eng_dtype_bytes(eng_dtype d)
{
    return (unsigned)d < ENG_DTYPE_COUNT ? dtype_bytes[d] : 2;
}

int eng_dtype_is_4bit(eng_dtype d)
{
    return d == ENG_NVFP4 || d == ENG_MXFP4 || d == ENG_INT4 || d == ENG_MXFP4_FP8;
}

eng_dtype eng_dtype_storage(eng_dtype d)
{
    return d == ENG_MXFP4_FP8 ? ENG_MXFP4 : d;
}

int eng_dtype_parse(const char *s, eng_dtype *out)
{
    if (strcmp(s, "fp4") == 0) {
        *out = ENG_NVFP4;
        return 1;
    }
    for (int i = 0; i < ENG_DTYPE_COUNT; i++)
        if (i != ENG_FP32 && strcmp(s, dtype_names[i]) == 0) {
            *out = (eng_dtype)i;
            return 0;
        }
    return -1;
}

void eng_notes_vadd(char *notes, size_t size, const char *fmt, va_list ap)
{
    size_t used = strlen(notes);
    if (used + 1 >= size)
        return;
    int w = vsnprintf(notes + used, size - used, fmt, ap);
    if (w < 0) {
        notes[used] = '\0';
        return;
    }
    used = strlen(notes);
    if (used + 1 < size) {
        notes[used] = '\n';
        notes[used + 1] = '\0';
    }
}

void eng_model_note(eng_model *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    eng_notes_vadd(m->notes, sizeof m->notes, fmt, ap);
    va_end(ap);
}

/* ---------------- parameters per part ---------------- */

static int64_t div_up(int64_t a, int64_t b)
{
    return b > 1 ? (a + b - 1) / b : a;
}

static int part_index(uint32_t part)
{
    for (int i = 0; i < ENG_PART_COUNT; i++)
        if (part == 1u << i)
            return i;
    return -1;
}

/* KV heads one GPU caches. MODEL: vLLM's QKVParallelLinear splits the KV heads over the TP
 * ranks and replicates them when there are fewer KV heads than ranks (num_kv_head_replicas =
 * tp / num_kv_heads), so every rank holds at least one. */
static int64_t kv_heads_per_gpu(const eng_model *m, int64_t t)
{
    return m->kv_heads >= t ? m->kv_heads / t : 1;
}

/* One attention layer's projections on one of t TP ranks. */
static int64_t attn_params(const eng_model *m, int64_t t)
{
    int64_t h = m->hidden, qh = m->heads / t;
    if (m->attn == ENG_ATTN_MLA) {
        /* MODEL: vLLM's DeepseekV2MLAAttention keeps q_a_proj and kv_a_proj_with_mqa
         * replicated (ReplicatedLinear; fused_qkv_a_proj with disable_tp) and splits q_b_proj /
         * q_proj and kv_b_proj by heads (ColumnParallel) and o_proj by rows. */
        int64_t qk = (int64_t)m->qk_nope_dim + m->qk_rope_dim;
        int64_t q =
            m->q_lora_rank ? h * m->q_lora_rank + (int64_t)m->q_lora_rank * qh * qk : h * qh * qk;
        int64_t kv_a = h * ((int64_t)m->kv_lora_rank + m->qk_rope_dim);
        int64_t kv_b = (int64_t)m->kv_lora_rank * qh * ((int64_t)m->qk_nope_dim + m->v_head_dim);
        int64_t o = qh * m->v_head_dim * h;
        return q + kv_a + kv_b + o + (m->o_bias ? h : 0);
    }
    int64_t d = m->head_dim, kvh = kv_heads_per_gpu(m, t);
    int64_t qdim = qh * d * (m->attn_output_gate ? 2 : 1);
    int64_t p = h * qdim + 2 * h * kvh * d + qh * d * h;
    if (m->qkv_bias)
        p += qdim + 2 * kvh * d;
    if (m->o_bias)
        p += h; /* a row-parallel layer's bias is added once, on every rank */
    if (m->sinks)
        p += qh;
    return p;
}

/* MODEL: DeepSeek-V3.2's indexer (vLLM deepseek_v2.py Indexer): wq_b (q_lora_rank -> heads x
 * dim), wk (hidden -> dim), weights_proj (hidden -> heads), all replicated on every rank. */
static int64_t indexer_params(const eng_model *m)
{
    int64_t q = m->q_lora_rank ? m->q_lora_rank : m->hidden;
    return q * m->index_heads * m->index_dim + (int64_t)m->hidden * m->index_dim +
           (int64_t)m->hidden * m->index_heads;
}

/* MODEL: one gated DeltaNet layer as vLLM's Qwen3-Next / Qwen3.5 model builds it: in_proj_qkvz
 * (hidden -> 2 x key_dim + 2 x value_dim), in_proj_ba (hidden -> 2 x value heads), a causal
 * conv1d over q, k and v (conv_dim x kernel taps), dt_bias and A_log per value head, out_proj
 * (value_dim -> hidden); all split by heads over the TP ranks. */
static int64_t linear_params(const eng_model *m, int64_t t)
{
    int64_t h = m->hidden, kk = (int64_t)m->lin_k_heads * m->lin_k_dim,
            vv = (int64_t)m->lin_v_heads * m->lin_v_dim;
    int64_t conv_dim = 2 * kk + vv;
    return (h * (2 * kk + 2 * vv) + h * 2 * m->lin_v_heads + conv_dim * m->lin_conv +
            2 * (int64_t)m->lin_v_heads + vv * h) /
           t;
}

/* One MLP of inner size `inter` (already this rank's share), with its biases. */
static int64_t mlp_params(const eng_model *m, int64_t inter, int bias)
{
    int64_t h = m->hidden, mats = m->gated_mlp ? 3 : 2;
    int64_t p = mats * h * inter;
    if (bias)
        p += (m->gated_mlp ? 2 : 1) * inter + h;
    return p;
}

static int64_t norm_params(const eng_model *m)
{
    int64_t h = m->hidden, w = m->norm_bias ? 2 : 1;
    int64_t per_layer = (m->norms_per_layer ? m->norms_per_layer : 2) * h * w;
    int64_t attn_layers = m->layers - m->linear_layers;
    int64_t p = m->layers * per_layer + h * w; /* + the final norm */
    if (m->qk_norm == 1)
        p += attn_layers * 2 * (int64_t)m->head_dim;
    else if (m->qk_norm == 2)
        p += attn_layers * ((int64_t)m->heads + m->kv_heads) * m->head_dim;
    if (m->attn == ENG_ATTN_MLA)
        p += m->layers * ((int64_t)m->q_lora_rank + m->kv_lora_rank);
    if (m->index_topk)
        p += m->layers * 2 * (int64_t)m->index_dim; /* the indexer's k_norm (LayerNorm) */
    p += (int64_t)m->linear_layers * m->lin_v_dim;  /* gated RMSNorm of the DeltaNet output */
    return p;
}

/* Parameters per part on one GPU of layout l (the whole model when l is NULL). */
static void count_parts(const eng_model *m, const eng_layout *l, int64_t p[ENG_PART_COUNT])
{
    int64_t t = l ? l->tp : 1, ep = l ? l->ep : 1;
    int64_t h = m->hidden, emb = (int64_t)m->vocab * h;
    int64_t dense = m->layers - m->moe_layers;
    memset(p, 0, sizeof(int64_t) * ENG_PART_COUNT);
    /* MODEL: vLLM's VocabParallelEmbedding and ParallelLMHead split the vocabulary over the
     * TP ranks; OPT's learned position embedding is replicated. */
    p[part_index(ENG_PART_EMBED)] = div_up(emb, t) + (int64_t)m->learned_pos * h;
    p[part_index(ENG_PART_LM_HEAD)] = m->tied_embeddings ? 0 : div_up(emb, t);
    p[part_index(ENG_PART_ATTN)] = (m->layers - m->linear_layers) * attn_params(m, t);
    p[part_index(ENG_PART_INDEXER)] = m->index_topk ? m->layers * indexer_params(m) : 0;
    p[part_index(ENG_PART_LINEAR)] = m->linear_layers ? m->linear_layers * linear_params(m, t) : 0;
    /* MODEL: dense MLPs are Megatron column/row parallel over the TP ranks (replicated across
     * data-parallel attention ranks, as vLLM's DP engines each hold them). */
    p[part_index(ENG_PART_MLP)] = dense * mlp_params(m, m->intermediate / t, m->mlp_bias);
    if (m->moe_layers > 0) {
        /* MODEL: vLLM's FusedMoE: with expert parallelism each of the ep ranks holds
         * experts / ep whole experts; without it every expert's inner dimension is split
         * over all tp x dp GPUs (the MoE group spans the DP ranks). TensorRT-LLM and SGLang
         * also split both ways (moe_tp_size x moe_ep_size = the GPUs): experts / ep experts,
         * each split over moe_tp GPUs. Shared experts are a dense MLP split over the TP ranks;
         * the router is replicated. MODEL: EPLB's redundant experts are extra physical
         * slots, (experts + redundant) / ep per rank, each holding a whole copy (vLLM's
         * num_redundant_experts; DeepSeek-V3 report, section 3.4: 32 redundant experts). */
        int64_t n = (m->experts + (l ? l->moe.redundant : 0)) / ep;
        int64_t inter = m->expert_inter / (l ? eng_layout_moe_tp(l) : 1);
        p[part_index(ENG_PART_EXPERTS)] = m->moe_layers * n * mlp_params(m, inter, m->expert_bias);
        int64_t shared = m->shared_inter ? mlp_params(m, m->shared_inter / t, 0) : 0;
        p[part_index(ENG_PART_SHARED)] = m->moe_layers * (shared + (m->shared_gate ? h : 0));
        p[part_index(ENG_PART_ROUTER)] =
            m->moe_layers * (h * m->experts + (m->router_bias ? m->experts : 0));
    }
    p[part_index(ENG_PART_NORM)] = norm_params(m);
}

int64_t eng_model_part_params(const eng_model *m, uint32_t part)
{
    int64_t p[ENG_PART_COUNT];
    int i = part_index(part);
    if (i < 0)
        return 0;
    count_parts(m, NULL, p);
    return p[i];
}

int64_t eng_model_params(const eng_model *m)
{
    int64_t p[ENG_PART_COUNT], sum = 0;
    count_parts(m, NULL, p);
    for (int i = 0; i < ENG_PART_COUNT; i++)
        sum += p[i];
    return sum;
}

int64_t eng_model_params_active(const eng_model *m)
{
    int64_t total = eng_model_params(m);
    int64_t idle = 0;
    if (m->moe_layers > 0 && m->experts > m->experts_per_tok)
        idle = (int64_t)m->moe_layers * (m->experts - m->experts_per_tok) *
               mlp_params(m, m->expert_inter, m->expert_bias);
    int64_t lookup = m->tied_embeddings ? (int64_t)m->learned_pos * m->hidden
                                        : eng_model_part_params(m, ENG_PART_EMBED);
    return total - idle - lookup;
}

/* ---------------- precision ---------------- */

uint32_t eng_model_quant_parts(const eng_model *m, eng_dtype d)
{
    d = eng_dtype_storage(d);
    if (d == ENG_BF16 || d == ENG_FP16 || d == ENG_FP32 || d == ENG_DTYPE_AUTO)
        return d == ENG_DTYPE_AUTO ? eng_model_quant_parts(m, m->weight_dtype) : 0;
    if (d == m->weight_dtype && m->quant_parts)
        return m->quant_parts;
    /* MODEL: online quantization in vLLM (--quantization fp8 and the like) replaces every
     * LinearBase and FusedMoE layer's method; VocabParallelEmbedding, ParallelLMHead and the
     * MoE router (a ReplicatedLinear built with quant_config=None in vLLM's MoE models) stay
     * in the model dtype. */
    return ENG_PARTS_LINEAR_LAYERS;
}

double eng_model_part_bytes(const eng_model *m, eng_dtype d, uint32_t part)
{
    if (d == ENG_DTYPE_AUTO)
        d = m->weight_dtype;
    d = eng_dtype_storage(d);
    if (!(eng_model_quant_parts(m, d) & part))
        return 2; /* 16-bit */
    if (d == m->weight_dtype && m->quant_bytes > 0)
        return m->quant_bytes;
    return eng_dtype_bytes(d);
}

/* ---------------- KV cache and state ---------------- */

/* MLA latent bytes per token per layer. MODEL: DeepSeek's latent cache holds kv_lora_rank +
 * qk_rope_head_dim values shared by every head (DeepSeek-V2 paper, section 2.1.2; vLLM's MLA
 * backends cache one (kv_lora_rank + rope) vector per token). With an fp8 cache, vLLM's
 * FlashMLA sparse backend for DeepSeek sparse attention stores the "fp8_ds_mla" layout: 512
 * fp8 values, four fp32 scales and 64 bf16 rotary values, 656 bytes (flashmla_sparse.py). */
static int64_t mla_bytes(const eng_model *m, eng_dtype kv)
{
    int64_t n = (int64_t)m->kv_lora_rank + m->qk_rope_dim;
    if (kv == ENG_FP8 && m->index_topk && m->kv_lora_rank == 512 && m->qk_rope_dim == 64)
        return 656;
    return n * (int64_t)eng_dtype_bytes(kv);
}

/* MODEL: vLLM's DeepseekV32IndexerCache stores the indexer's key of every token in fp8 with
 * one fp32 scale per 128 values whatever the KV dtype: index_head_dim + index_head_dim / 128 x
 * 4 bytes (132 for DeepSeek-V3.2) per layer. */
static int64_t index_key_bytes(const eng_model *m)
{
    return m->index_topk ? m->index_dim + m->index_dim / 128 * 4 : 0;
}

void eng_model_gpu_share(const eng_model *m, eng_dtype d, eng_dtype kv, const eng_layout *l,
                         eng_gpu_share *out)
{
    static const eng_layout one = {1, 1, 1, {0, 0, 0}};
    if (!l)
        l = &one;
    if (kv == ENG_DTYPE_AUTO)
        kv = m->kv_dtype;
    int64_t p[ENG_PART_COUNT];
    count_parts(m, l, p);
    double w = 0;
    for (int i = 0; i < ENG_PART_COUNT; i++)
        w += (double)p[i] * eng_model_part_bytes(m, d, 1u << i);
    memset(out, 0, sizeof *out);
    out->weight_bytes = (int64_t)(w + 0.5);
    int64_t t = l->tp, kvb = (int64_t)eng_dtype_bytes(kv);
    if (m->attn == ENG_ATTN_MLA) {
        /* MODEL: the latent is not split by heads: every TP rank caches all of it (vLLM MLA
         * backends, num_kv_heads = 1 on each rank). */
        out->kv_heads = 1;
        out->kv_per_token = m->layers * mla_bytes(m, kv);
    } else {
        int64_t kvh = kv_heads_per_gpu(m, t), per_layer = 2 * kvh * m->head_dim * kvb;
        int64_t full = m->layers - m->linear_layers - m->window_layers;
        out->kv_heads = (int32_t)kvh;
        out->kv_per_token = full * per_layer;
        out->window_per_token = (int64_t)m->window_layers * per_layer;
    }
    out->kv_per_token += m->layers * index_key_bytes(m);
    if (m->linear_layers > 0) {
        /* MODEL: vLLM's MambaStateShapeCalculator.gated_delta_net_state_shape: a conv state of
         * (2 x key_dim + value_dim) / tp channels x (kernel - 1) taps and a recurrent state of
         * value_heads / tp x head_v_dim x head_k_dim; the conv state in the model dtype, the
         * recurrent one in mamba_ssm_dtype when the config names it (SGLang reads it from the
         * config; vLLM's --mamba-ssm-cache-dtype), else the model dtype. */
        int64_t conv_dim =
            2 * (int64_t)m->lin_k_heads * m->lin_k_dim + (int64_t)m->lin_v_heads * m->lin_v_dim;
        double conv = (double)(conv_dim / t) * (m->lin_conv - 1) * eng_dtype_bytes(m->act_dtype);
        double rec = (double)(m->lin_v_heads / t) * m->lin_k_dim * m->lin_v_dim *
                     eng_dtype_bytes(m->state_dtype);
        out->state_per_seq = m->linear_layers * (int64_t)(conv + rec);
    }
}

int64_t eng_model_kv_bytes_per_token(const eng_model *m, eng_dtype kv)
{
    eng_gpu_share s;
    eng_model_gpu_share(m, ENG_BF16, kv, NULL, &s);
    return s.kv_per_token;
}

int64_t eng_model_window_bytes_per_token(const eng_model *m, eng_dtype kv)
{
    eng_gpu_share s;
    eng_model_gpu_share(m, ENG_BF16, kv, NULL, &s);
    return s.window_per_token;
}

int64_t eng_model_state_bytes(const eng_model *m)
{
    eng_gpu_share s;
    eng_model_gpu_share(m, ENG_BF16, ENG_DTYPE_AUTO, NULL, &s);
    return s.state_per_seq;
}

/* ---------------- layouts ---------------- */

static int refuse(char *why, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int refuse(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (len)
        vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return -1;
}

/* The moe: section against the model and layout: placement, redundant slots, skew. */
static int check_placement(const eng_model *m, const eng_layout *l, char *why, size_t len)
{
    const eng_moe *x = &l->moe;
    int set = x->placement != ENG_MOE_STATIC || x->redundant != 0 || x->skew != 0;
    if (m->moe_layers == 0)
        return set ? refuse(why, len,
                            "moe: model %s has no routed experts; expert placement and routing "
                            "skew apply to MoE models",
                            m->name)
                   : 0;
    if (!(x->skew >= 0 && x->skew <= 10) || x->redundant < 0)
        return refuse(why, len,
                      "moe: skew %g, redundant_experts %d: expected a skew from 0 to 10 and "
                      "redundant experts >= 0",
                      x->skew, x->redundant);
    if (x->redundant > 0 && x->placement != ENG_MOE_EPLB)
        return refuse(why, len,
                      "moe.redundant_experts %d: redundant copies are EPLB's; set moe.placement: "
                      "eplb",
                      x->redundant);
    if (l->ep <= 1 && (x->placement == ENG_MOE_EPLB || x->skew > 0))
        return refuse(why, len,
                      "moe.%s: needs expert_parallel > 1; without it every GPU holds a slice of "
                      "every expert, so routing skew does not unbalance the GPUs and there is "
                      "nothing to place (llmsim does not model skew within one GPU)",
                      x->placement == ENG_MOE_EPLB ? "placement eplb" : "skew");
    if ((m->experts + x->redundant) % l->ep != 0)
        return refuse(why, len,
                      "moe.redundant_experts %d: model %s's %d experts plus the redundant ones "
                      "must split evenly over expert_parallel %d (each rank holds as many slots)",
                      x->redundant, m->name, m->experts, l->ep);
    return 0;
}

static int check_moe(const eng_model *m, const eng_layout *l, char *why, size_t len)
{
    int32_t gpus = l->tp * l->dp;
    if (m->moe_layers == 0) {
        if (l->ep > 1)
            return refuse(why, len, "expert_parallel %d: model %s has no routed experts", l->ep,
                          m->name);
        if (l->dp > 1)
            return refuse(why, len,
                          "data_parallel_attention %d needs an MoE model (its attention ranks "
                          "share the experts); model %s is dense: use replicas",
                          l->dp, m->name);
        return check_placement(m, l, why, len);
    }
    if (gpus % l->ep != 0)
        return refuse(why, len,
                      "expert_parallel %d must divide tensor_parallel x data_parallel_attention "
                      "= %d (the experts are placed over expert_parallel groups and each is split "
                      "over the GPUs of its group; %d places them whole, as vLLM's "
                      "--enable-expert-parallel does)",
                      l->ep, gpus, gpus);
    if (m->experts % l->ep != 0)
        return refuse(why, len, "expert_parallel %d does not divide model %s's %d routed experts",
                      l->ep, m->name, m->experts);
    int32_t split = eng_layout_moe_tp(l);
    if (m->expert_inter % split != 0)
        return refuse(why, len,
                      "%d GPUs per expert (tensor_parallel x data_parallel_attention / "
                      "expert_parallel) do not divide model %s's expert width %d; use "
                      "expert_parallel %d",
                      split, m->name, m->expert_inter, gpus);
    if (m->shared_inter % l->tp != 0)
        return refuse(why, len,
                      "tensor_parallel %d does not divide model %s's shared-expert width %d", l->tp,
                      m->name, m->shared_inter);
    return check_placement(m, l, why, len);
}

int32_t eng_layout_moe_tp(const eng_layout *l)
{
    int32_t gpus = l->tp * l->dp;
    return l->ep > 0 && gpus % l->ep == 0 ? gpus / l->ep : 1;
}

int eng_layout_check(const eng_model *m, const eng_layout *l, char *why, size_t len)
{
    if (l->tp < 1 || l->ep < 1 || l->dp < 1)
        return refuse(why, len,
                      "tensor_parallel %d, expert_parallel %d, data_parallel_attention %d: each "
                      "must be at least 1",
                      l->tp, l->ep, l->dp);
    if (m->heads % l->tp != 0)
        return refuse(why, len, "tensor_parallel %d does not divide model %s's %d query heads",
                      l->tp, m->name, m->heads);
    if (m->attn == ENG_ATTN_GQA && m->kv_heads > 0 && m->kv_heads % l->tp != 0 &&
        l->tp % m->kv_heads != 0)
        return refuse(why, len,
                      "tensor_parallel %d and model %s's %d KV heads: one must divide the other "
                      "(vLLM splits KV heads, or replicates them when tensor_parallel is a "
                      "multiple of their number)",
                      l->tp, m->name, m->kv_heads);
    if (m->layers > m->moe_layers && m->intermediate % l->tp != 0)
        return refuse(why, len, "tensor_parallel %d does not divide model %s's MLP width %d", l->tp,
                      m->name, m->intermediate);
    if (m->linear_layers > 0 && (m->lin_k_heads % l->tp != 0 || m->lin_v_heads % l->tp != 0))
        return refuse(why, len,
                      "tensor_parallel %d does not divide model %s's linear-attention heads "
                      "(%d key, %d value)",
                      l->tp, m->name, m->lin_k_heads, m->lin_v_heads);
    return check_moe(m, l, why, len);
}

/* ---------------- precision on a GPU ---------------- */

int eng_precision(const eng_gpu *g, eng_dtype d, eng_dtype kv, eng_compute *out, char *note,
                  size_t notelen, char *why, size_t len)
{
    if (notelen)
        note[0] = '\0';
    *out = ENG_COMPUTE_16;
    if (kv != ENG_BF16 && kv != ENG_FP16 && kv != ENG_FP8)
        return refuse(why, len, "kv_dtype %s: the KV cache is bf16, fp16 or fp8",
                      eng_dtype_name(kv));
    switch (d) {
    case ENG_BF16:
    case ENG_FP16:
        break;
    case ENG_FP8:
        if (!(g->flops_fp8 > 0))
            return refuse(why, len,
                          "dtype fp8: gpu %s has no fp8 tensor cores (its datasheet gives no "
                          "fp8 FLOP/s); use bf16 or fp16",
                          g->name);
        *out = ENG_COMPUTE_FP8;
        break;
    case ENG_NVFP4:
        /* MODEL: NVFP4 checkpoints (ModelOpt W4A4) run on Blackwell's FP4 tensor cores; on
         * older GPUs vLLM serves them weight-only with its Marlin FP4 kernels (4-bit weights
         * read, dequantized, 16-bit compute). */
        if (g->flops_fp4 > 0 && (g->fp4_formats & ENG_FP4_NV)) {
            *out = ENG_COMPUTE_FP4;
        } else if (notelen) {
            snprintf(note, notelen,
                     "dtype nvfp4 on %s: no NVFP4 tensor cores, so the 4-bit weights are "
                     "dequantized to 16-bit for compute (weight-only, as vLLM's Marlin FP4 "
                     "kernels run them)",
                     g->name);
        }
        break;
    case ENG_MXFP4:
        /* MODEL: vLLM serves MXFP4 (gpt-oss) weight-only: Marlin or Triton kernels before
         * Blackwell (as on H100) and FlashInfer's MXFP4 x BF16 MoE by default on SM100
         * (mxfp4.py, get_mxfp4_backend; MXFP8 activations only when asked for). TensorRT-LLM
         * runs an MXFP4 checkpoint as W4A16_MXFP4 below SM100, MXFP4 weights with 16-bit
         * activations (tensorrt_llm/_torch/model_config.py, get_mxfp4_quant_algo). */
        if (notelen)
            snprintf(note, notelen,
                     "dtype mxfp4 on %s: 4-bit weights read, 16-bit compute (weight-only, as "
                     "vLLM's default MXFP4 kernels and TensorRT-LLM's below Blackwell run them%s)",
                     g->name, g->flops_fp4 > 0 ? ", although this GPU has FP4 tensor cores" : "");
        break;
    case ENG_MXFP4_FP8:
        /* MODEL: TensorRT-LLM's W4A8_MXFP4_FP8 MoE (tensorrt_llm/_torch/modules/fused_moe,
         * quant algo W4A8_MXFP4_FP8): MXFP4 weights are read and the activations quantized to
         * fp8, computed on the fp8 tensor cores. TensorRT-LLM picks W4A8 for an MXFP4
         * checkpoint by default only on SM100 and up (W4A8_MXFP4_FP8 with its Triton MoE,
         * W4A8_MXFP4_MXFP8 otherwise) and W4A16 below, unless OVERRIDE_QUANT_ALGO asks
         * (tensorrt_llm/_torch/model_config.py, get_mxfp4_quant_algo): on Hopper this dtype is
         * that override, not the default. */
        if (!(g->flops_fp8 > 0))
            return refuse(why, len, "dtype mxfp4-fp8: gpu %s has no fp8 tensor cores; use mxfp4",
                          g->name);
        *out = ENG_COMPUTE_FP8;
        break;
    case ENG_INT4:
        /* MODEL: AWQ/GPTQ/compressed-tensors W4A16: vLLM's Marlin and Machete kernels read
         * int4 weights and compute in 16-bit on every GPU. */
        if (notelen)
            snprintf(note, notelen, "dtype int4: weight-only (4-bit weights read, 16-bit compute)");
        break;
    case ENG_FP32:
        return refuse(why, len, "dtype %s is not a weights dtype", eng_dtype_name(d));
    default:
        SIM_CHECK(NULL, !"a weights dtype without a compute rule");
        return -1;
    }
    if (kv == ENG_FP8 && !(g->flops_fp8 > 0) && notelen) {
        /* MODEL: vLLM stores an fp8 KV cache on GPUs without fp8 tensor cores and dequantizes
         * it in the attention kernel (kv_cache_dtype fp8; quantized_kvcache.md) */
        size_t used = strlen(note);
        snprintf(note + used, notelen - used,
                 "%skv_dtype fp8 on %s: the cache is stored in fp8 and attention computes in "
                 "16-bit",
                 used ? "; " : "", g->name);
    }
    return 0;
}
