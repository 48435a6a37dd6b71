/*
 * roofline.c: the datasheet roofline predictor.
 *
 * Work per operator is counted on one GPU's shard: under tensor parallelism T the query heads,
 * KV heads (replicated when fewer than T), MLP width and vocabulary are split T ways (Megatron
 * column/row parallel layers, as vLLM shards them) while norms, residual adds and the embedding
 * act on full-width activations. Activations are 16-bit in every dtype; fp8 halves weight and
 * KV bytes and uses the fp8 peak for the linear layers only.
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

typedef struct roofline {
    eng_model m;
    eng_gpu g;
    eng_dtype dt;
    int tp;
    double nh, nkv, d, h, inter, vocab; /* per-GPU shard sizes (h is the full hidden size) */
    double wb, kvb;                     /* weight and KV bytes per element */
    double gemm_peak, attn_peak;        /* FLOP/s */
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

/* A linear layer of n rows, k inputs, o outputs (this GPU's shard). */
static double gemm_ns(const roofline *r, double n, double k, double o)
{
    double flops = 2.0 * n * k * o;
    double bytes = r->wb * k * o + ACT_BYTES * n * (k + o);
    return roof(flops, r->gemm_peak, CAL_RL_GEMM_EFF, bytes, r->g.mem_bw, CAL_RL_MEM_EFF);
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
        return gemm_ns(r, n, h, (nh + 2 * nkv) * d);
    case KERN_OP_O_PROJ:
        return gemm_ns(r, n, nh * d, h);
    case KERN_OP_MLP_UP_GATE:
        return gemm_ns(r, n, h, g * in);
    case KERN_OP_MLP_DOWN:
        return gemm_ns(r, n, in, h);
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
        t = gemm_ns(r, n, h, r->vocab); /* plus the fp32 logits written: */
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

static int check_inputs(const eng_model *m, const eng_gpu *g, eng_dtype dt, int tp, sim_err *err)
{
    if (m->layers <= 0 || m->hidden <= 0 || m->heads <= 0 || m->kv_heads <= 0 || m->head_dim <= 0 ||
        m->intermediate <= 0 || m->vocab <= 0)
        return sim_errf(err, "model %s: every size must be positive", m->name);
    if (g->mem_bw <= 0 || g->flops_bf16 <= 0 || g->link_bw <= 0 || g->pcie_bw <= 0)
        return sim_errf(err, "gpu %s: bandwidths and bf16 FLOP/s must be positive", g->name);
    if ((int)dt < 0 || dt >= ENG_DTYPE_COUNT)
        return sim_errf(err, "unknown dtype %d", (int)dt);
    if (dt == ENG_FP8 && !(g->flops_fp8 > 0))
        return sim_errf(err,
                        "dtype fp8: gpu %s has no fp8 tensor cores (its datasheet gives no "
                        "fp8 FLOP/s); use bf16 or fp16",
                        g->name);
    if (tp < 1)
        return sim_errf(err, "tensor parallelism %d: must be at least 1", tp);
    if (m->heads % tp != 0)
        return sim_errf(err, "tensor parallelism %d does not divide model %s's %d query heads", tp,
                        m->name, m->heads);
    return 0;
}

int cal_roofline_new(const eng_model *m, const eng_gpu *g, eng_dtype dt, int tp, eng_predictor *out,
                     sim_err *err)
{
    if (check_inputs(m, g, dt, tp, err))
        return -1;
    roofline *r = sim_xcalloc(1, sizeof *r);
    r->cache = sim_xcalloc(1, sizeof *r->cache);
    r->m = *m;
    r->g = *g;
    r->dt = dt;
    r->tp = tp;
    r->only = -1;
    r->h = m->hidden;
    r->d = m->head_dim;
    r->nh = (double)m->heads / tp;
    /* MODEL: vLLM replicates KV heads when there are fewer than GPUs */
    r->nkv = m->kv_heads >= tp ? ceil((double)m->kv_heads / tp) : 1.0;
    r->inter = ceil((double)m->intermediate / tp);
    r->vocab = ceil((double)m->vocab / tp);
    r->wb = eng_dtype_bytes(dt);
    r->kvb = eng_dtype_bytes(dt);
    /* MODEL: fp8 (W8A8) runs the linear layers on fp8 tensor cores; attention stays 16-bit */
    r->gemm_peak = dt == ENG_FP8 ? g->flops_fp8 : g->flops_bf16;
    r->attn_peak = g->flops_bf16;
    out->ops = &roofline_ops;
    out->st = r;
    if (tp > 1)
        snprintf(out->label, sizeof out->label, "roofline %s tp%d %s (not measured)", g->name, tp,
                 eng_dtype_name(dt));
    else
        snprintf(out->label, sizeof out->label, "roofline %s %s (not measured)", g->name,
                 eng_dtype_name(dt));
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
