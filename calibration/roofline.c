/*
 * roofline.c: the datasheet roofline predictor.
 *
 * Work per operator is counted on one GPU's shard: under tensor parallelism T the query heads,
 * KV heads (replicated when fewer than T), MLP width and vocabulary are split T ways (Megatron
 * column/row parallel layers, as vLLM shards them) while norms, residual adds and the embedding
 * act on full-width activations. Activations are 16-bit in every dtype. Each linear layer
 * reads its weights in the bytes its part is stored in (eng_model_part_bytes: fp8, a 4-bit
 * format, or 16-bit for parts the scheme leaves out) and runs on the tensor cores eng_precision
 * picks for it (fp8 or fp4 peaks for quantized parts, the bf16 peak otherwise); KV bytes follow
 * the KV dtype. It prices dense decoders only: cal_roofline_priced names what it refuses.
 * The state is immutable after cal_roofline_new, so one predictor may serve many replicas.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_int.h"
#include "roofline.h"

/* MODEL: cuBLAS/cuBLASLt bf16 GEMMs of LLM sizes reach about 70% of the dense datasheet peak on
 * H100 SXM (roughly 650-750 of 989 TFLOP/s for 4k-8k sized matrices in NVIDIA's and the
 * community's GEMM benchmarks) and 70-80% on A100; we take 70%. */
#define CAL_RL_GEMM_EFF 0.70
/* MODEL: FlashAttention-2's forward pass reaches 50-73% of peak on A100 (Dao, "FlashAttention-2",
 * 2023) and 35-50% on H100, where FlashAttention-3 reaches 75%; we take 50%. */
#define CAL_RL_ATTN_EFF 0.50
/* MODEL: memory-bound kernels (GEMV-like decode GEMMs, norms, elementwise) reach 80-90% of the
 * datasheet HBM bandwidth on A100/H100 (STREAM-style copies: ~1.7-1.8 of 2.0 TB/s on A100 80GB,
 * ~2.9-3.0 of 3.35 TB/s on H100 SXM); we take 80%. */
#define CAL_RL_MEM_EFF 0.80
/* MODEL: paged decode attention gathers K/V by block table and reaches a lower fraction of the
 * bandwidth than a contiguous stream (vLLM PagedAttention and FlashInfer report 60-80% at long
 * contexts); we take 70%. */
#define CAL_RL_DECODE_ATTN_MEM_EFF 0.70
/* MODEL: each kernel costs a fixed ~2 us on top of its roofline time: the launch gap between
 * kernels replayed from a CUDA graph (vLLM captures decode in graphs; Nsight traces show 1-3 us
 * gaps) and the ramp of a small grid. It is also the floor of a tiny kernel. */
#define CAL_RL_LAUNCH_NS 2000.0
/* MODEL: NCCL ring all-reduce reaches about 80% of the per-direction link bandwidth as bus
 * bandwidth in nccl-tests on NVLink systems; the same fraction is taken for PCIe. */
#define CAL_RL_LINK_EFF 0.80
/* MODEL: a small all-reduce costs ~5-10 us of latency (vLLM's custom all-reduce ~5 us, NCCL
 * ~10 us on NVLink for messages under 1 MB); we take 8 us. */
#define CAL_RL_ALLREDUCE_LAT_NS 8000.0
/* MODEL: pinned host <-> device copies reach ~80% of the PCIe per-direction bandwidth
 * (cudaMemcpy bandwidthTest), after ~10 us of setup. */
#define CAL_RL_PCIE_EFF 0.80
#define CAL_RL_PCIE_LAT_NS 10000.0
/* Activations and logits: 16-bit activations in every dtype; fp32 logits. */
#define ACT_BYTES 2.0
#define LOGIT_BYTES 4.0
/* Kernels in the sampling step (temperature/softmax, top-k/top-p filter, draw). */
#define SAMPLE_KERNELS 3.0

/* A linear layer's storage and compute: weight bytes per element and the FLOP/s it runs at. */
typedef struct lin {
    double wb;
    double peak;
} lin;

typedef struct roofline {
    eng_model m;
    eng_gpu g;
    eng_dtype dt, kv;
    int tp;
    double nh, nkv, d, h, inter, vocab; /* per-GPU shard sizes (h is the full hidden size) */
    double kvb;                         /* KV bytes per element */
    lin attn, mlp, head;                /* QKV/O projections, MLP, LM head */
    double attn_peak;                   /* FLOP/s of attention and elementwise work */
    int only;                           /* cal_roofline_op_ns: the one op to count, or -1 */
    cal_walk_cache *cache;              /* owned; the walk's reuse between decode steps */
} roofline;

/* max(compute, memory) + launch, with the given efficiencies. */
static double roof(double flops, double peak, double ceff, double bytes, double bw, double meff)
{
    double tc = flops / (peak * ceff), tm = bytes / (bw * meff);
    return (tc > tm ? tc : tm) * 1e9 + CAL_RL_LAUNCH_NS;
}

/* Ring all-reduce of `bytes` over tp GPUs: 2(T-1)/T x bytes / link + latency. */
static double allreduce_ns(const roofline *r, double bytes)
{
    double t = r->tp;
    return 2.0 * (t - 1) / t * bytes / (r->g.link_bw * CAL_RL_LINK_EFF) * 1e9 +
           CAL_RL_ALLREDUCE_LAT_NS;
}

/* A linear layer of n rows, k inputs, o outputs (this GPU's shard), stored and run as l. */
static double gemm_ns(const roofline *r, const lin *l, double n, double k, double o)
{
    double flops = 2.0 * n * k * o;
    double bytes = l->wb * k * o + ACT_BYTES * n * (k + o);
    return roof(flops, l->peak, CAL_RL_GEMM_EFF, bytes, r->g.mem_bw, CAL_RL_MEM_EFF);
}

/* An elementwise operator reading and writing `bytes` in total. */
static double elem_ns(const roofline *r, double flops, double bytes)
{
    return roof(flops, r->attn_peak, 1.0, bytes, r->g.mem_bw, CAL_RL_MEM_EFF);
}

static double attn_ns(const roofline *r, const cal_work *w)
{
    double nh = r->nh, nkv = r->nkv, d = r->d;
    double flops = 4.0 * nh * d * w->pairs; /* QK^T and PV: 2 FLOPs per multiply-add each */
    if (w->op == KERN_OP_ATTN_PREFILL) {
        double bytes = ACT_BYTES * 2 * w->q_tokens * nh * d  /* Q in, O out */
                       + r->kvb * 2 * nkv * d * w->kv        /* K and V read */
                       + r->kvb * 2 * nkv * d * w->q_tokens; /* new K and V cached */
        return roof(flops, r->attn_peak, CAL_RL_ATTN_EFF, bytes, r->g.mem_bw, CAL_RL_MEM_EFF);
    }
    double bytes = ACT_BYTES * 2 * w->seqs * nh * d + r->kvb * 2 * nkv * d * w->pairs +
                   r->kvb * 2 * nkv * d * w->seqs;
    return roof(flops, r->attn_peak, CAL_RL_ATTN_EFF, bytes, r->g.mem_bw,
                CAL_RL_DECODE_ATTN_MEM_EFF);
}

static double op_ns(const void *st, const cal_work *w)
{
    const roofline *r = st;
    double n = w->tokens, h = r->h, nh = r->nh, nkv = r->nkv, d = r->d, in = r->inter;
    double g = r->m.gated_mlp ? 2.0 : 1.0, t;
    if (r->only >= 0 && w->op != r->only)
        return 0;
    switch (w->op) {
    case KERN_OP_QKV_PROJ:
        return gemm_ns(r, &r->attn, n, h, (nh + 2 * nkv) * d);
    case KERN_OP_O_PROJ:
        return gemm_ns(r, &r->attn, n, nh * d, h);
    case KERN_OP_MLP_UP_GATE:
        return gemm_ns(r, &r->mlp, n, h, g * in);
    case KERN_OP_MLP_DOWN:
        return gemm_ns(r, &r->mlp, n, in, h);
    case KERN_OP_ATTN_PREFILL:
    case KERN_OP_ATTN_DECODE:
        return attn_ns(r, w);
    case KERN_OP_MLP_ACT:
        return elem_ns(r, 5.0 * n * in, ACT_BYTES * n * (g * in + in));
    case KERN_OP_RMSNORM:
        return elem_ns(r, 4.0 * n * h, ACT_BYTES * (2 * n * h + h));
    case KERN_OP_ROPE:
        return elem_ns(r, 6.0 * n * (nh + nkv) * d, ACT_BYTES * 2 * n * (nh + nkv) * d);
    case KERN_OP_ADD:
        return elem_ns(r, n * h, ACT_BYTES * 3 * n * h);
    case CAL_OP_EMBED:
        return elem_ns(r, 0, ACT_BYTES * 2 * n * h);
    case CAL_OP_ALLREDUCE:
        return allreduce_ns(r, n * h * ACT_BYTES);
    case KERN_OP_LM_HEAD:
        t = gemm_ns(r, &r->head, n, h, r->vocab); /* plus the fp32 logits written: */
        t += LOGIT_BYTES * n * r->vocab / (r->g.mem_bw * CAL_RL_MEM_EFF) * 1e9;
        if (r->tp > 1) /* MODEL: vLLM gathers the vocabulary shards of the logits */
            t += (r->tp - 1.0) / r->tp * LOGIT_BYTES * n * r->vocab * r->tp /
                     (r->g.link_bw * CAL_RL_LINK_EFF) * 1e9 +
                 CAL_RL_ALLREDUCE_LAT_NS;
        return t;
    case CAL_OP_SAMPLE:
        /* softmax reads and writes the logits, the draw reads them again */
        return elem_ns(r, 5.0 * n * r->vocab * r->tp, 3 * LOGIT_BYTES * n * r->vocab * r->tp) +
               (SAMPLE_KERNELS - 1) * CAL_RL_LAUNCH_NS;
    default:
        return 0;
    }
}

static int64_t rl_iteration_ns(const void *st, const eng_shape *s)
{
    const roofline *r = st;
    return cal_ns_round(cal_layer_walk(s, r->m.layers, r->tp, op_ns, r, r->cache));
}

static int64_t rl_transfer_ns(const void *st, int64_t bytes)
{
    const roofline *r = st;
    if (bytes <= 0)
        return 0;
    return cal_ns_round((double)bytes / (r->g.pcie_bw * CAL_RL_PCIE_EFF) * 1e9 +
                        CAL_RL_PCIE_LAT_NS);
}

static void rl_fini(void *st)
{
    roofline *r = st;
    free(r->cache);
    free(r);
}

static const eng_predictor_ops roofline_ops = {
    .name = "roofline",
    .iteration_ns = rl_iteration_ns,
    .transfer_ns = rl_transfer_ns,
    .fini = rl_fini,
};

cal_serving cal_serving_tp(eng_dtype dt, int tp)
{
    cal_serving s = {dt, ENG_DTYPE_AUTO, {tp, 1, 1}, 0};
    return s;
}

static eng_layout layout_of(const cal_serving *s)
{
    return s->layout;
}

static int unpriced(char *why, size_t len, const eng_model *m, const char *what)
{
    if (len)
        snprintf(why, len,
                 "model %s: the roofline does not price %s yet; llmsim refuses it rather than "
                 "price it as a dense model",
                 m->name, what);
    return -1;
}

int cal_roofline_priced(const eng_model *m, const cal_serving *s, char *why, size_t len)
{
    char what[200];
    eng_layout l = layout_of(s);
    int32_t max_len = s->max_len > 0 ? s->max_len : m->max_context;
    if (m->attn == ENG_ATTN_MLA)
        return unpriced(why, len, m, "multi-head latent attention (MLA)");
    if (m->index_topk > 0)
        return unpriced(why, len, m, "DeepSeek sparse attention (index_topk)");
    if (m->linear_layers > 0) {
        snprintf(what, sizeof what, "linear attention (%d of %d layers)", m->linear_layers,
                 m->layers);
        return unpriced(why, len, m, what);
    }
    if (m->window_layers > 0 && m->window < max_len) {
        snprintf(what, sizeof what,
                 "%s attention (%d layers keep %d tokens; sequences reach %d: set "
                 "memory.max_model_len to at most %d to run it)",
                 m->window_chunked ? "chunked local" : "sliding-window", m->window_layers,
                 m->window, max_len, m->window);
        return unpriced(why, len, m, what);
    }
    if (m->attn_output_gate)
        return unpriced(why, len, m, "gated attention output (attn_output_gate)");
    if (m->moe_layers > 0) {
        snprintf(what, sizeof what, "MoE layers (%d of %d layers, %d experts, top-%d)",
                 m->moe_layers, m->layers, m->experts, m->experts_per_tok);
        return unpriced(why, len, m, what);
    }
    if (l.ep > 1 || l.dp > 1)
        return unpriced(why, len, m, "expert- or data-parallel layouts");
    return 0;
}

static int check_inputs(const eng_model *m, const eng_gpu *g, const cal_serving *s, sim_err *err)
{
    char why[512];
    eng_layout l = layout_of(s);
    if (l.tp < 1)
        return sim_errf(err, "tensor parallelism %d: must be at least 1", l.tp);
    if (eng_layout_check(m, &l, why, sizeof why) != 0)
        return sim_errf(err, "%s", why);
    if (cal_roofline_priced(m, s, why, sizeof why) != 0)
        return sim_errf(err, "%s", why);
    if (m->layers <= 0 || m->hidden <= 0 || m->heads <= 0 || m->kv_heads <= 0 || m->head_dim <= 0 ||
        m->intermediate <= 0 || m->vocab <= 0)
        return sim_errf(err, "model %s: every size must be positive", m->name);
    if (g->mem_bw <= 0 || g->flops_bf16 <= 0 || g->link_bw <= 0 || g->pcie_bw <= 0)
        return sim_errf(err, "gpu %s: bandwidths and bf16 FLOP/s must be positive", g->name);
    return 0;
}

/* The storage and peak of one part. */
static lin part_lin(const eng_model *m, const eng_gpu *g, eng_dtype dt, eng_compute c,
                    uint32_t part)
{
    lin l = {eng_model_part_bytes(m, dt, part), g->flops_bf16};
    if (eng_model_quant_parts(m, dt) & part)
        l.peak = c == ENG_COMPUTE_FP8 ? g->flops_fp8 : c == ENG_COMPUTE_FP4 ? g->flops_fp4 : l.peak;
    return l;
}

int cal_roofline_new(const eng_model *m, const eng_gpu *g, const cal_serving *s, eng_predictor *out,
                     sim_err *err)
{
    if (check_inputs(m, g, s, err))
        return -1;
    eng_dtype dt = s->dtype == ENG_DTYPE_AUTO ? m->weight_dtype : s->dtype;
    eng_dtype kv = s->kv_dtype == ENG_DTYPE_AUTO ? m->kv_dtype : s->kv_dtype;
    if ((int)dt < 0 || dt >= ENG_DTYPE_COUNT)
        return sim_errf(err, "unknown dtype %d", (int)dt);
    eng_compute c;
    char why[512];
    if (eng_precision(g, dt, kv, &c, NULL, 0, why, sizeof why) != 0)
        return sim_errf(err, "%s", why);
    int tp = layout_of(s).tp;
    roofline *r = sim_xcalloc(1, sizeof *r);
    r->cache = sim_xcalloc(1, sizeof *r->cache);
    r->m = *m;
    r->g = *g;
    r->dt = dt;
    r->kv = kv;
    r->tp = tp;
    r->only = -1;
    r->h = m->hidden;
    r->d = m->head_dim;
    r->nh = (double)m->heads / tp;
    /* MODEL: vLLM replicates KV heads when there are fewer than GPUs */
    r->nkv = m->kv_heads >= tp ? ceil((double)m->kv_heads / tp) : 1.0;
    r->inter = ceil((double)m->intermediate / tp);
    r->vocab = ceil((double)m->vocab / tp);
    r->kvb = eng_dtype_bytes(kv);
    /* MODEL: a quantized linear layer runs on the tensor cores eng_precision picks (W8A8 on
     * fp8, W4A4 on fp4, weight-only on the bf16 ones); attention stays 16-bit */
    r->attn = part_lin(m, g, dt, c, ENG_PART_ATTN);
    r->mlp = part_lin(m, g, dt, c, ENG_PART_MLP);
    r->head = part_lin(m, g, dt, c, m->tied_embeddings ? ENG_PART_EMBED : ENG_PART_LM_HEAD);
    r->attn_peak = g->flops_bf16;
    out->ops = &roofline_ops;
    out->st = r;
    char kvs[24] = "";
    if (s->kv_dtype != ENG_DTYPE_AUTO && kv != (m->kv_dtype))
        snprintf(kvs, sizeof kvs, " kv %s", eng_dtype_name(kv));
    if (tp > 1)
        snprintf(out->label, sizeof out->label, "roofline %s tp%d %s%s (not measured)", g->name, tp,
                 eng_dtype_name(dt), kvs);
    else
        snprintf(out->label, sizeof out->label, "roofline %s %s%s (not measured)", g->name,
                 eng_dtype_name(dt), kvs);
    return 0;
}

void cal_predictor_free(eng_predictor *p)
{
    if (!p)
        return;
    if (p->ops && p->ops->fini)
        p->ops->fini(p->st);
    memset(p, 0, sizeof *p);
}

double cal_roofline_op_ns(const eng_predictor *p, const eng_shape *s, const char *op)
{
    if (!p || p->ops != &roofline_ops || !op)
        return -1;
    int which = -1;
    for (int i = 0; i < CAL_OP_TOTAL; i++)
        if (strcmp(cal_op_name(i), op) == 0)
            which = i;
    if (which < 0)
        return -1;
    roofline r = *(const roofline *)p->st;
    r.only = which;
    return cal_layer_walk(s, r.m.layers, r.tp, op_ns, &r, NULL);
}

double cal_roofline_work_ns(const eng_predictor *rl, const cal_work *w)
{
    return op_ns(rl->st, w);
}
