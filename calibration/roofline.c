/*
 * roofline.c: the datasheet roofline predictor.
 *
 * Work per operator is counted on one GPU's shard. Under tensor parallelism T the query heads,
 * KV heads (replicated when fewer than T), MLP width and vocabulary are split T ways (Megatron
 * column/row parallel layers, as vLLM shards them) while norms, residual adds and the embedding
 * act on full-width activations. Under attention data parallelism D each of the D attention
 * ranks runs its own share of the batch (taken as 1/D of every sum: the engine gives one shape
 * per replica, so the ranks are assumed balanced); routed experts see the tokens of every rank.
 * Activations are 16-bit in every dtype. Each linear layer reads its weights in the bytes its
 * part is stored in (eng_model_part_bytes) and runs on the tensor cores eng_precision picks for
 * it; KV bytes follow the KV dtype.
 *
 * Layers come in kinds (cal_plan): attention over the whole context (GQA or MLA), capped
 * attention (sliding windows, chunked local attention, DeepSeek sparse attention: the shape's
 * capped sums), linear attention (gated DeltaNet), and dense or MoE MLPs. Each operator's
 * formula cites its source below.
 * The state is immutable after cal_roofline_new (the walk cache and the scratch floor of the
 * pass being priced aside), so one predictor may serve many replicas of one engine, one call
 * at a time.
 */
#include <math.h>
#if defined(__SSE2__) && defined(__x86_64__) /* _mm_cvtsi128_si64 is x86-64's */
#define RL_SSE2 1
#include <emmintrin.h>
#if defined(__GNUC__) /* four lanes where the CPU has AVX (asked at run time: rl_verify_ns) */
#define RL_AVX 1
#include <immintrin.h>
#endif
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_int.h"
#include "catalog.h"
#include "placement.h"
#include "roofline.h"

/*
 * Every kernel's time is a smooth maximum of its floor, its compute time and its memory time,
 *     t = (F^p + (flops / (peak x e_c))^p + (bytes / (bw x e_m))^p)^(1/p),  p = 1.5,
 * with the floor F, the fractions e_c of the datasheet peak and e_m of the bandwidth set per
 * kernel class. MODEL: max() (p -> infinity) prices GEMMs of 128-256 tokens 24-32% too fast
 * near the ridge (issue 13); p and each class's constants are fitted on the development data,
 * Vidur's A100 per-operator tables (tests/fidelity/fit_vidur_ops.py: mean |log error| per
 * class by coordinate search; p = 1.5 beats 1.25, 1.75, 2, 2.5 and 3 on the median |error|
 * over all 107,511 points). Unmeasured kernels take the class nearest in kind (noted).
 */
typedef struct kclass {
    double floor_ns; /* a kernel that does no useful work: launch, ramp and tail */
    double ceff;     /* fraction of the datasheet peak FLOP/s */
    double meff;     /* fraction of the datasheet HBM bandwidth */
    int id;          /* its row of roofline.floor15 */
} kclass;

/* The kernel classes, and prefill attention's floor, as rows of roofline.floor15. */
enum {
    KC_GEMM,
    KC_NORM,
    KC_ROPE,
    KC_ACT,
    KC_ADD,
    KC_EMBED,
    KC_DECODE,
    KC_MLA,
    KC_PREFILL,
    KC_COUNT
};

/* The GEMM and elementwise classes of one memory kind. */
typedef struct kset {
    kclass gemm, norm, rope, act, add, embed;
} kset;

/* HBM GPUs, fitted on the A100 tables. GEMMs (qkv, o, up/gate, down in every model and TP
 * degree of the tables): 36,188 points. Elementwise classes; their FLOPs are negligible (e_c
 * unused). RMSNorm 17,835 points, RoPE, SiLU-and-mul, residual add and the embedding gather
 * 9,047 each: floors of 2-4 us where the old roofline had one 2 us figure, and the fraction of
 * the bandwidth each kernel reaches. */
static const kset K_HBM = {
    .gemm = {9930, 0.728, 0.770, KC_GEMM},
    .norm = {3940, 1, 0.352, KC_NORM},
    .rope = {3120, 1, 0.428, KC_ROPE},
    .act = {3070, 1, 0.485, KC_ACT},
    .add = {1890, 1, 0.896, KC_ADD},
    .embed = {4000, 1, 0.150, KC_EMBED},
};
/* MODEL: GDDR GPUs, fitted the same way on Vidur's A40 tables (GDDR6, 696 GB/s, 149.7 TFLOPS
 * bf16 dense: 21,756 GEMM and 32,375 elementwise points; fit_vidur_ops.py --gpu a40, median
 * |error| 4.0%). The same kernels reach a larger fraction of a GDDR part's bandwidth, whose SMs
 * keep more of it in flight: the norm 59% against 35%, SiLU-and-mul and RoPE 77% against
 * 43-49%, the embedding gather 50% against 15%; the GEMMs 79% of the tensor peak. Ada, the
 * Blackwell workstation parts and the A10G are priced with these (their datasheets state GDDR6,
 * GDDR6X or GDDR7); the attention classes stay the A100's. */
static const kset K_GDDR = {
    .gemm = {7740, 0.792, 0.795, KC_GEMM},
    .norm = {3840, 1, 0.592, KC_NORM},
    .rope = {1830, 1, 0.770, KC_ROPE},
    .act = {1980, 1, 0.770, KC_ACT},
    .add = {980, 1, 0.832, KC_ADD},
    .embed = {2960, 1, 0.498, KC_EMBED},
};
/* Decode attention (10,112 points of the attention table: Llama-2-70B at TP2, 32 query and 4
 * KV heads per GPU, FlashAttention backend): a ~20 us floor, K and V read at 80% of the
 * bandwidth, and the query heads' work (4 x query heads x head_dim FLOPs per key, not the KV
 * heads') at 13.6% of the tensor peak: decode kernels multiply a handful of query rows per
 * tile, close to the CUDA-core rate (A100: 19.5 of 312 TFLOP/s). The query-head term is what
 * prices a GQA model above its KV bytes. */
static const kclass K_DECODE = {20540, 0.136, 0.800, KC_DECODE};
/* Prefill attention's floor (4,206 points of Vidur's A100 table, one sequence each, fitted with
 * the FlashAttention-2 class's e_c and row overhead below). MODEL: its memory term counts the
 * bytes the kernel moves through HBM (Q in, O out, each cached key and value once, the chunk's
 * new keys and values) at the GEMM class's e_m (see prefill_ns): FlashAttention streams K and V
 * tiles once per query tile from L2 and is compute-bound at every chunk the tables hold. (Until
 * this model the term was fitted at 7.8% of the bandwidth on the one GQA shape of the table, where
 * it stood in for the per-query-row overhead below; on MHA models, whose KV bytes per key are 8x
 * that shape's, and on Hopper, whose FlashAttention-3 compute term is a third of Ampere's, it
 * dominated: Llama-2-7B's attention over a 2,016-token prompt on H100 cost 396 us a layer,
 * 6.2x the 64 us of FlashAttention-3's published rate.) */
#define PREFILL_FLOOR_NS 22510.0
/* MODEL: FlashMLA, the MLA decode kernel of vLLM and SGLang on Hopper, reaches 3,000 GB/s
 * memory-bound and 660 TFLOPS compute-bound on H800 (README of deepseek-ai/FlashMLA): 90% of
 * the 3.35 TB/s and 67% of the 989 TFLOPS; decode's floor as above. */
static const kclass K_MLA = {20540, 0.667, 0.896, KC_MLA};

/* MODEL: prefill attention compute per engine and attention backend: the causal square of a
 * chunk costs `causal_weight` times its pairs (2: masked tiles are computed, 1: skipped), and
 * each query row costs `row_keys` keys more (a query tile's fixed work: loading Q, the last
 * rescale and writing O, the pipeline's fill and drain, which a short sequence cannot hide),
 * all at e_c of the 16-bit peak.
 * - FlashAttention-2 class kernels as vLLM and SGLang run them before Hopper: fitted on Vidur's
 *   A100 table, which vLLM's FlashAttention backend produced, by tests/fidelity/fit_vidur_ops.py:
 *   e_c 0.467 and 812 keys per query row at weight 2, the physical reading (weights 1 and 1.5
 *   fit worse: median |error| 10% and 7% against 4.3%).
 * - TensorRT-LLM's context FMHA before Hopper skips masked tiles and reaches near 50% of the
 *   peak in measured profiles (issue 13); its row overhead is a FlashAttention-2 class
 *   kernel's: 198 keys, the fit of FlashAttention-2's causal head_dim-128 bars in the
 *   FlashAttention-3 paper (Shah et al. 2024, figure 5: 191, 260, 298, 319, 333, 335 TFLOPS at
 *   512 to 16k tokens; 349 TFLOPS asymptote, within 3.2%).
 * - FlashAttention-3 class kernels on Hopper and data-center Blackwell (vLLM V1 and SGLang use
 *   FA3 there, TensorRT-LLM its Hopper FMHA): the same figure's FlashAttention-3 bars, 292,
 *   423, 521, 579, 602, 616 TFLOPS at 512 to 16k tokens (causal, head_dim 128, H100 SXM5), are
 *   643 TFLOPS (e_c 0.650) with 278 keys per query row, within 5.6% at every length. */
typedef struct attn_eff {
    double causal_weight, ceff, row_keys;
} attn_eff;

/* MODEL: all-reduce. NCCL's ring, fitted on Vidur's DGX A100 network table (2,982 rows within
 * one node, 2 to 8 GPUs): a 60.3 us floor and 50.3% of the per-direction NVLink bandwidth on
 * the ring's 2 (T - 1) / T bytes. Serving engines reduce small activations with a custom
 * all-reduce over NVLink (vLLM's CustomAllreduce up to 8 MiB, which SGLang and TensorRT-LLM
 * match): SGLang PR 2904 measures vLLM's on H100 at 8.7-11.8 us up to 32 KB and 26.6/40.2/45.0
 * us at 1 MB for TP 2/4/8, i.e. a ~9 us floor and ~12% of the 450 GB/s link on the ring's
 * bytes; the engine takes whichever is faster. Without NVLink NCCL goes over PCIe: 28 GB/s of
 * bus bandwidth on 8 x RTX 5090 at PCIe Gen5 (NCCL issue 1639), 44% of 64 GB/s, with a 42 us
 * floor for an 8-byte all-reduce over 8 GPUs on PCIe (NCCL issue 1530). */
#define NCCL_FLOOR_NS 60300.0
#define NCCL_LINK_EFF 0.503
/* MODEL: NCCL's all-reduce on Hopper's NVLink 4 with NVSwitch runs well past the A100 fit above:
 * vLLM's device-communicator benchmark on 8 x H100 (vllm-project/vllm PR #42324, "SM 9.0",
 * world size 8, pynccl column, benchmarks/kernels/benchmark_device_communicators.py) takes
 * 0.024 ms at 512 KiB, 0.050 at 4 MiB, 0.121 at 16 MiB, 0.195 at 32 MiB and 0.561 at 128 MiB,
 * where the A100 constants give 0.061, 0.075, 0.156, 0.279 and 1.047 ms. The same formula
 * fitted to those twelve points (least squares on log time) gives a 29.5 us floor and 72% of
 * the per-direction link bandwidth on the ring's bytes, within -21% to +30% of every point
 * (-16% and -3% at 16 and 32 MiB, a 1,024- and a 2,048-token pass of an 8,192-wide model). Hopper
 * parts (H100, H200) take these; other architectures keep the A100 fit. */
#define NCCL_HOPPER_FLOOR_NS 29500.0
#define NCCL_HOPPER_LINK_EFF 0.72
#define CAR_FLOOR_NS 9000.0
#define CAR_LINK_EFF 0.12
#define CAR_MAX_BYTES (8.0 * 1024 * 1024)
#define PCIE_AR_FLOOR_NS 42000.0
#define PCIE_AR_EFF 0.44
/* MODEL: DeepEP's intranode normal kernels move 153 GB/s (dispatch) and 158 GB/s (combine) per
 * GPU over H800 NVLink, whose datasheet gives 200 GB/s per direction: 77% (DeepEP README,
 * "Normal kernels with NVLink and RDMA forwarding"). */
#define CAL_RL_A2A_EFF 0.77
/* MODEL: a dispatch or combine kernel pays a fixed cost for its counts exchange and barrier
 * before any token moves; DeepEP's low-latency kernels take 77 us (dispatch) and 114 us
 * (combine) for 128 tokens x top-8 over EP8 (README), of which the bandwidth term at the
 * reported 98/127 GB/s is ~75/~115 us, leaving a fixed part of the order of 10 us; we take
 * 10 us per direction. */
#define CAL_RL_A2A_LAT_NS 10000.0
/* MODEL: pinned host <-> device copies reach 25 of the 32 GB/s of PCIe Gen4 x16 as measured
 * peak (BaM, issue 54: "it is measured peak"), 78%. The 10 us of setup per transfer is an
 * assumption (not measured here): under 0.1% of a swap of a GiB. */
#define CAL_RL_PCIE_EFF 0.78
#define CAL_RL_PCIE_LAT_NS 10000.0
/* Activations and logits: 16-bit activations in every dtype; fp32 logits. */
#define ACT_BYTES 2.0
#define LOGIT_BYTES 4.0
/* Kernels in the sampling step (temperature/softmax, top-k/top-p filter, draw). */
#define SAMPLE_KERNELS 3.0
/* MODEL: the chunk size of the chunked gated delta rule in flash-linear-attention's kernels
 * (fla chunk_gated_delta_rule, BT = 64), which vLLM's Qwen3-Next model runs for prefill. */
#define LINEAR_CHUNK 64.0

/* A linear layer's storage and compute: weight bytes per element and the FLOP/s it runs at. */
typedef struct lin {
    double wb;
    double peak;
} lin;

/* MODEL: kernel floors are latency: they scale with the SM clock. The datasheets' dense 16-bit
 * peaks give the clocks: A100 312 TFLOPS / (108 SMs x 2,048 FLOP/clock) = 1.41 GHz, H100 SXM
 * 989.4 TFLOPS / (132 SMs x 4,096 FLOP/clock) = 1.83 GHz (A100 and H100 whitepapers); the
 * floors fitted on the A100 are scaled by 1.41 / 1.83 = 0.77 on Hopper (Vidur's H100 tables
 * bear it out: their smallest kernels take 0.75-0.9 of the A100's). Data-center Blackwell runs
 * its tensor cores at the same clocks: HGX B200's 2.25 PFLOPS dense / (148 SMs x 8,192
 * FLOP/clock, twice Hopper's per SM) = 1.86 GHz, so 1.41 / 1.86 = 0.76 (until this model it kept
 * the A100's floors, which priced a batch-1 decode step at TP8, made of kernels at their floors,
 * a third too slow). Other architectures keep the A100's floors, or the A40's for GDDR parts
 * (not measured; a stated approximation). */
static double floor_scale(cal_arch arch)
{
    return arch == CAL_ARCH_HOPPER ? 1.41 / 1.83 : arch == CAL_ARCH_BLACKWELL ? 1.41 / 1.86 : 1.0;
}

/* MODEL: SGLang fuses the tensor-parallel all-reduce with the residual add and the RMSNorm that
 * follow it (FlashInfer's trtllm_allreduce_fusion, one kernel) on data-center Blackwell for the
 * MoE architectures its server enables it for: DeepseekV3 (and Kimi-K2, which runs as it),
 * GptOss, Glm4Moe, Qwen3Moe, with tensor parallelism, no attention data parallelism and no
 * expert all-to-all (python/sglang/srt/server_args.py, _handle_model_specific_adjustments),
 * for passes of up to max_token_num = 2,048 tokens (layers/flashinfer_comm_fusion.py); longer
 * ones take the unfused path. On 8 x B200 the fused kernel takes 8.7 us where the all-reduce and
 * a separate add-and-norm took 13.5 us (SGLang PR 7621, DeepSeek-R1 at TP8), which the unfused
 * pricing here reproduces (the custom all-reduce's 9 us, then the norm and add at their
 * Blackwell floors). Hopper is left unfused: no fused latency is measured there, and vLLM PR
 * 22086 measures none faster than the unfused pair at TP2 on H100. */
#define FUSED_AR_FLOOR_NS 8700.0
#define FUSED_AR_MAX_TOKENS 2048.0
static const char *const fused_ar_arch[] = {"deepseek_v3", "kimi_k2", "gpt_oss", "glm4_moe",
                                            "qwen3_moe"};

/* MODEL: a pass with prefill tokens runs its kernels eagerly (vLLM and SGLang replay CUDA
 * graphs for decode batches only; TensorRT-LLM for generation-only batches), so a kernel
 * shorter than its host-side launch costs the launch: the fixed first-token cost of 1.6-7 ms
 * per request issue 13 measures over 450-1,100 kernels per pass (Llama-3-8B to 70B) is 3.6-6.2
 * us per kernel; we take 4.5 us (TensorRT-LLM PR #13149 measures 4.72 us for a plain PyTorch op's
 * call with a minimal kernel). An engine whose preset states its own host time per kernel
 * (cal_serving.eager_launch_ns: TensorRT-LLM's PyTorch backend, engine/presets.c) uses that. */
#define EAGER_LAUNCH_NS 4500.0

/* Whose kernels run the pass: prefill attention before Hopper (FlashAttention-2 class) and on
 * Hopper and data-center Blackwell (FlashAttention-3 class); see attn_eff above. */
typedef struct engine_eff {
    const char *name;
    attn_eff fa2, fa3;
    int moe_permute; /* 1: the routed experts' tokens are gathered by a kernel of their own */
} engine_eff;

/* MODEL: moe_permute. TensorRT-LLM's fused MoE (cpp/tensorrt_llm/kernels/cutlass_kernels/
 * moe_gemm/moe_kernels.cu, CutlassMoeFCRunner::runMoe) copies each token's row to its experts'
 * places in expert order (expandInputRowsKernel) before the first grouped GEMM; the Triton
 * fused_moe of vLLM and SGLang (fused_moe.py, invoke_fused_moe_kernel) reads the rows in place
 * through the sorted token ids and has no such kernel. */
static const engine_eff engines[] = {
    {"vllm", {2.0, 0.467, 812}, {1.0, 0.650, 278}, 0},
    {"sglang", {2.0, 0.467, 812}, {1.0, 0.650, 278}, 0},
    {"trtllm", {1.0, 0.50, 198}, {1.0, 0.650, 278}, 1},
};
#define NENGINES ((int)(sizeof engines / sizeof engines[0]))

typedef struct roofline {
    eng_model m;
    eng_gpu g;
    eng_dtype dt, kv;
    int tp, dp, ep, gpus;
    double nh, nkv, d, h, inter, vocab; /* per-GPU shard sizes (h is the full hidden size) */
    double kvb;                         /* KV bytes per element */
    lin attn, mlp, head, experts, shared, router, linear, indexer;
    double attn_peak;            /* FLOP/s of attention and elementwise work */
    double index_peak;           /* FLOP/s of the indexer's scoring (fp8 where the GPU has it) */
    attn_eff prefill;            /* prefill attention of the engine on this GPU */
    int nvlink;                  /* 1: GPUs joined by a link faster than PCIe */
    int xnode;                   /* 1: the TP group spans NVLink domains joined by NICs */
    double nccl_floor, nccl_eff; /* NCCL's ring over NVLink on this architecture (ns, share) */
    int ar_fused;                /* 1: all-reduce, residual add and norm are one kernel */
    double floor_scale;          /* kernel floors relative to the A100 they were fitted on */
    double eager_launch;         /* host time per kernel launched eagerly (ns) */
    const kset *k;               /* the GEMM and elementwise classes of this GPU's memory */
    int *eager;                  /* owned scratch: 1 when the pass being priced launches its kernels
                                    eagerly (a kernel then costs at least eager_launch), set per
                                    operator from cal_work.eager */
    double floor15[KC_COUNT][2]; /* each class's floor^1.5 (ns^1.5) in a pass launched from a
                                    graph [0] and eagerly [1] (floors_setup) */
    int mla;                     /* multi-head latent attention */
    uint32_t aq;                 /* fp8 GEMM inputs quantized by a kernel of their own (ENG_AQ_*) */
    cal_plan plan;
    /* MoE, on the busiest GPU */
    double e_inter;        /* inner size of one routed expert on this GPU */
    double e_local;        /* experts on this GPU */
    double e_pairs;        /* token-expert pairs per routed token on the busiest GPU */
    double e_q0;           /* per-token selection probability of one slot: k / (E + R) */
    double e_f;            /* placement's imbalance factor (1: balanced) */
    int e_sort;            /* the routing sort is a kernel of its own (experts_glue_ns) */
    int e_permute;         /* the engine gathers the experts' rows by a kernel (moe_permute) */
    int e_block_quant;     /* the experts' fp8 inputs are quantized per group by kernels of their
                              own (block-scaled fp8 experts on fp8 tensor cores) */
    double disp_bytes;     /* bytes per element dispatched (fp8 when the experts compute fp8) */
    double hot_recv;       /* probability that a token has an expert on the busiest GPU */
    int only;              /* cal_roofline_op_ns: the one op to count, or -1 */
    cal_walk_cache *cache; /* owned; the walk's reuse between decode steps */
    /* GQA decode attention's constant products (gqa_decode_ns), formed once in the order its
     * formula multiplies them */
    struct {
        double flops; /* FLOPs per key read: 4 x nh x d */
        double kv;    /* KV bytes per key read or written: kvb x 2 x nkv x d */
        double peak;  /* attn_peak x K_DECODE.ceff */
        double bw;    /* mem_bw x K_DECODE.meff */
    } dec;
    int avx; /* the CPU has AVX (rl_verify_ns prices four passes' decode attention at once) */
} roofline;

/* x^1.5 and the smooth maximum of three times (ns) with p = 1.5: (a^p + b^p + c^p)^(1/p). */
static double p15(double x)
{
    return x * sqrt(x);
}

/* The cube root of x >= 0 (0 for x <= 0): a guess from the exponent bits (the exponent
 * divided by three, within 4%), then two Halley steps, each cubing the relative error: within
 * 1.3e-14 of libm's cbrt over 1e-12..1e30 (measured), far below the 1 ns the pass is rounded to.
 * Plain arithmetic, so the result is the same on every machine, and a quarter faster than
 * libm's cbrt, which the smooth maximum needs for every kernel of every pass. */
static inline double cube_root(double x)
{
    if (!(x > 0))
        return 0;
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    bits = bits / 3 + UINT64_C(0x2A9F7893782DA1CE);
    double y;
    memcpy(&y, &bits, sizeof y);
    for (int i = 0; i < 2; i++) {
        double y3 = y * y * y;
        y = y * (y3 + 2 * x) / (2 * y3 + x);
    }
    return y;
}

/* The smooth maximum given a^1.5 (a constant floor's, formed once by its caller). */
static inline double smooth15(double a15, double b, double c)
{
    double r = cube_root(a15 + p15(b) + p15(c));
    return r * r;
}

static double smooth(double a, double b, double c)
{
    return smooth15(p15(a), b, c);
}

/* One kernel of class k doing `flops` at `peak` and moving `bytes` over the HBM. */
static double kern(const roofline *r, const kclass *k, double flops, double peak, double bytes)
{
    double tc = flops > 0 ? flops / (peak * k->ceff) * 1e9 : 0;
    return smooth15(r->floor15[k->id][*r->eager], tc, bytes / (r->g.mem_bw * k->meff) * 1e9);
}

/* MODEL: the GPUs one NVLink domain joins: 8 on the HGX/DGX baseboards (NVIDIA DGX A100, H100,
 * H200 and B200 datasheets: 8 GPUs on NVSwitch), the whole rack on GB200/GB300 NVL72 (NVIDIA
 * GB200 NVL72 datasheet: 72 GPUs in one NVLink domain). */
static int nvlink_domain(const eng_gpu *g)
{
    return strcmp(g->name, "gb200") == 0 || strcmp(g->name, "gb300") == 0 ? 72 : 8;
}

/* MODEL: a tensor-parallel group wider than one NVLink domain reduces with NCCL alone: vLLM's
 * and SGLang's custom all-reduce refuse a group that spans nodes ("Custom allreduce is disabled
 * because this process group spans across nodes", vllm/distributed/device_communicators/
 * custom_all_reduce.py; SGLang logs the same on TP16 over two nodes). NCCL's ring then crosses
 * the nodes on every GPU's NIC, one channel per NIC (the reference systems give one NIC per GPU,
 * the catalog's nic): besides the ring over NVLink inside a node, each GPU sends its 1/g shard's
 * 2 (N - 1) / N over its NIC for N nodes of g GPUs, at the ring efficiency measured on NVLink
 * (NCCL_LINK_EFF, the A100 fit: the Hopper figures below are of one node). The floor stays NCCL's.
 */
static double xnode_ring_ns(const roofline *r, double bytes)
{
    double g = nvlink_domain(&r->g), nodes = ceil(r->tp / g);
    double in_node = 2.0 * (g - 1) / g * bytes, across = 2.0 * (nodes - 1) / nodes * bytes / g;
    return smooth(NCCL_FLOOR_NS, in_node / (r->g.link_bw * NCCL_LINK_EFF) * 1e9,
                  across / (r->g.nic_bw * NCCL_LINK_EFF) * 1e9);
}

/* Ring all-reduce of `bytes` over tp GPUs (see the MODEL note on all-reduce above): NCCL, or
 * on NVLink for messages up to CAR_MAX_BYTES the faster of NCCL and the custom all-reduce; a
 * group across nodes with NCCL over the NICs (xnode_ring_ns). */
static double allreduce_ns(const roofline *r, double bytes, int nccl)
{
    double t = r->tp, ring = 2.0 * (t - 1) / t * bytes;
    if (!r->nvlink)
        return smooth(PCIE_AR_FLOOR_NS, 0, ring / (r->g.link_bw * PCIE_AR_EFF) * 1e9);
    if (r->xnode)
        return xnode_ring_ns(r, bytes);
    double nc = smooth(r->nccl_floor, 0, ring / (r->g.link_bw * r->nccl_eff) * 1e9);
    if (nccl || bytes > CAR_MAX_BYTES)
        return nc;
    double car = smooth(CAR_FLOOR_NS, 0, ring / (r->g.link_bw * CAR_LINK_EFF) * 1e9);
    return car < nc ? car : nc;
}

/* The all-reduce of `bytes` fused with the residual add and RMSNorm after it (see
 * FUSED_AR_FLOOR_NS): its measured floor and the custom all-reduce's bandwidth term. */
static double fused_ar_ns(const roofline *r, double bytes)
{
    double t = r->tp, ring = 2.0 * (t - 1) / t * bytes;
    return smooth(FUSED_AR_FLOOR_NS, 0, ring / (r->g.link_bw * CAR_LINK_EFF) * 1e9);
}

/* 1 when the engine fuses the all-reduce with the add and norm after it (FUSED_AR_FLOOR_NS). */
static int fuses_allreduce(const roofline *r, const cal_serving *s, cal_arch arch)
{
    if (strcmp(s->engine, "sglang") != 0 || arch != CAL_ARCH_BLACKWELL || r->tp < 2 || r->dp > 1 ||
        r->ep > 1 || !r->nvlink || r->xnode)
        return 0;
    for (size_t i = 0; i < sizeof fused_ar_arch / sizeof fused_ar_arch[0]; i++)
        if (strcmp(r->m.arch, fused_ar_arch[i]) == 0)
            return 1;
    return 0;
}

/* A linear layer of n rows, k inputs, o outputs (this GPU's shard), stored and run as l. */
static double gemm_ns(const roofline *r, const lin *l, double n, double k, double o)
{
    return kern(r, &r->k->gemm, 2.0 * n * k * o, l->peak, l->wb * k * o + ACT_BYTES * n * (k + o));
}

/* An elementwise operator of class k reading and writing `bytes` in total. */
static double elem_ns(const roofline *r, const kclass *k, double bytes)
{
    return kern(r, k, 0, r->attn_peak, bytes);
}

/* MODEL: the fp8 quantize of an fp8 GEMM's input of n rows of k elements, where the engine runs
 * it as a kernel of its own (roofline.aq; which inputs, per engine, version and scheme:
 * engine/presets.c): one memory-bound pass that reads the 16-bit activation and writes it in
 * fp8, plus an fp32 scale per group of act_group elements when block-scaled (TensorRT-LLM's
 * static_quantize_e4m3_per_tensor and fp8_quantize_1x128, SGLang's scaled_fp8_quant and
 * per_token_group_quant_fp8, an Inductor-generated Triton kernel in vLLM). Such a kernel streams
 * at close to the bandwidth: vLLM's static_scaled_fp8_quant takes 0.018 ms for 4,096 tokens of
 * 4,096 elements on H100 (vLLM PR #33918, do_bench_cudagraph), 50.3 MB at 2.8 TB/s, 84% of the
 * 3.35 TB/s; pytorch/ao issue #4054 measures its 1x128 blockwise quantize kernels above 80% on
 * H100 SXM. So it takes the class of the other streaming elementwise kernel, the residual add
 * (89.6% of the bandwidth fitted, 16.8 us for that case, -7%), at its floor or, in an eager
 * pass, the launch. */
static double quant_pass_ns(const roofline *r, double n, double k)
{
    double bytes = (ACT_BYTES + 1.0) * n * k;
    if (r->m.act_group > 0)
        bytes += 4.0 * n * k / r->m.act_group;
    return elem_ns(r, &r->k->add, bytes);
}

/* quant_pass_ns where the engine quantizes the input of `bit` (ENG_AQ_*) by a kernel of its own. */
static double act_quant_ns(const roofline *r, uint32_t bit, double n, double k)
{
    return r->aq & bit ? quant_pass_ns(r, n, k) : 0;
}

/* ---------------- attention ---------------- */

/* Prefill attention's compute (ns) for `causal` pairs of chunks' own squares, `ctx` pairs over
 * cached context and q query rows, `per_pair` FLOPs each, as the engine's kernels run it. */
static double prefill_compute_ns(const roofline *r, double per_pair, double causal, double ctx,
                                 double q)
{
    double flops = per_pair * (ctx + r->prefill.causal_weight * causal + r->prefill.row_keys * q);
    return flops / (r->attn_peak * r->prefill.ceff) * 1e9;
}

/* A prefill attention kernel of compute time tc (ns) moving `bytes` through HBM. MODEL: the
 * traffic overlaps the compute (FlashAttention-2's double-buffered asynchronous copies,
 * FlashAttention-3's TMA producer warps), so the kernel takes the larger of the two, not their
 * smooth sum: FlashAttention-3 at 512 tokens (Shah et al. 2024, figure 5: 16 heads of 128, 16k
 * tokens, 292 TFLOPS) runs 118 us while it reads and writes 268 MB, 80 us of the H100's HBM at
 * its datasheet rate. The floor combines with the compute as every kernel's does. */
static double prefill_ns(const roofline *r, double tc, double bytes)
{
    double t = smooth15(r->floor15[KC_PREFILL][*r->eager], tc, 0);
    double tm = bytes / (r->g.mem_bw * r->k->gemm.meff) * 1e9;
    return t > tm ? t : tm;
}

/* GQA prefill attention of one rank (sums already divided among the attention ranks): q chunk
 * tokens, `causal` of the pairs the chunks' own squares. */
static double gqa_prefill_ns(const roofline *r, double q, double pairs, double kv, double causal)
{
    double nh = r->nh, nkv = r->nkv, d = r->d;
    double bytes = ACT_BYTES * 2 * q * nh * d  /* Q in, O out */
                   + r->kvb * 2 * nkv * d * kv /* K and V read */
                   + r->kvb * 2 * nkv * d * q; /* new K and V cached */
    double tc = prefill_compute_ns(r, 4.0 * nh * d, causal, pairs - causal, q);
    return prefill_ns(r, tc, bytes);
}

/* GQA decode attention of one rank: `seqs` sequences reading `pairs` keys (sums already divided
 * among the attention ranks) in a pass that launches eagerly (eager 1) or from a graph. It is
 * the one per-step operator of a decode run, so its constant products come from r->dec (see
 * dec_setup), formed once in the order the formula multiplies them: the same result to the bit
 * as kern(r, &K_DECODE, flops, attn_peak, bytes). */
static inline void gqa_decode_seq_terms(const roofline *r, double seqs, double t[2])
{
    t[0] = ACT_BYTES * 2 * seqs * r->nh * r->d; /* Q in, O out */
    t[1] = r->dec.kv * seqs;                    /* new K and V */
}

/* gqa_decode_ns given its terms of the sequences alone (gqa_decode_seq_terms), summed in the
 * formula's order. */
static inline double gqa_decode_at(const roofline *r, const double t[2], double pairs, int eager)
{
    double flops = r->dec.flops * pairs;            /* QK^T and PV: 2 FLOPs per MAC */
    double bytes = t[0] + r->dec.kv * pairs + t[1]; /* K and V read */
    double tc = flops > 0 ? flops / r->dec.peak * 1e9 : 0;
    return smooth15(r->floor15[KC_DECODE][eager], tc, bytes / r->dec.bw * 1e9);
}

static inline double gqa_decode_ns(const roofline *r, double seqs, double pairs, int eager)
{
    double t[2];
    gqa_decode_seq_terms(r, seqs, t);
    return gqa_decode_at(r, t, pairs, eager);
}

/* The constants of gqa_decode_ns. */
static void dec_setup(roofline *r)
{
    r->dec.flops = 4.0 * r->nh * r->d;
    r->dec.kv = r->kvb * 2 * r->nkv * r->d;
    r->dec.peak = r->attn_peak * K_DECODE.ceff;
    r->dec.bw = r->g.mem_bw * K_DECODE.meff;
}

/* roofline.floor15. MODEL: in an eager pass a kernel costs at least its launch (see
 * EAGER_LAUNCH_NS; roofline.eager_launch); prefill attention's floor is PREFILL_FLOOR_NS. */
static void floors_setup(roofline *r)
{
    const kclass *const classes[] = {&r->k->gemm, &r->k->norm,  &r->k->rope, &r->k->act,
                                     &r->k->add,  &r->k->embed, &K_DECODE,   &K_MLA};
    for (int e = 0; e < 2; e++) {
        double eager_floor = e ? r->eager_launch : 0;
        for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) {
            double f = classes[i]->floor_ns * r->floor_scale;
            r->floor15[classes[i]->id][e] = p15(f < eager_floor ? eager_floor : f);
        }
        r->floor15[KC_PREFILL][e] = p15(fmax(PREFILL_FLOOR_NS * r->floor_scale, eager_floor));
    }
}

/* The walk's decode attention (cal_walk_cache.decode): a dense GQA model's, as op_ns prices a
 * KERN_OP_ATTN_DECODE work of these seqs, pairs and eager. */
static double rl_decode_ns(const void *st, double seqs, double pairs, int eager)
{
    const roofline *r = st;
    double D = r->dp;
    return gqa_decode_ns(r, seqs / D, pairs / D, eager);
}

/* MLA latent bytes per cached token per layer (kv_lora_rank + rope values in the KV dtype). */
static double latent_bytes(const roofline *r)
{
    return ((double)r->m.kv_lora_rank + r->m.qk_rope_dim) * r->kvb;
}

/* MODEL: MLA in its absorbed (MQA) form over the latent cache, as FlashMLA and vLLM's MLA
 * decode path run it (DeepSeek-V2 paper section 2.1.3; vLLM MLACommonImpl._forward_decode):
 * the nope part of each query head is multiplied into the latent space by W_UK (a batched GEMM
 * of rows x heads x qk_nope x kv_lora), scores are taken against the cached latent plus the
 * shared rotary key (kv_lora + rope per head and key) and the weighted latents summed (kv_lora
 * per head and key), and W_UV maps each head's kv_lora back to v_head_dim. The latent of a key
 * is read once for all heads. vLLM keeps W_UK and W_UV in 16 bits (dequantized when loaded). */
static double mla_absorbed_ns(const roofline *r, double rows, double pairs, double keys)
{
    double nh = r->nh, lora = r->m.kv_lora_rank, rope = r->m.qk_rope_dim;
    double nope = r->m.qk_nope_dim, v = r->m.v_head_dim;
    double peak = r->g.flops_bf16, uk = 0, uv = 0;
    if (rows > 0) {
        uk = kern(r, &r->k->gemm, 2.0 * rows * nh * nope * lora, peak,
                  ACT_BYTES * nh * nope * lora + ACT_BYTES * rows * nh * (nope + lora));
        uv = kern(r, &r->k->gemm, 2.0 * rows * nh * lora * v, peak,
                  ACT_BYTES * nh * lora * v + ACT_BYTES * rows * nh * (lora + v));
    }
    double flops = 2.0 * nh * pairs * (lora + rope) + 2.0 * nh * pairs * lora;
    double bytes = keys * latent_bytes(r) + ACT_BYTES * rows * nh * (lora + rope + lora);
    return uk + uv + kern(r, &K_MLA, flops, r->attn_peak, bytes);
}

/* MODEL: MLA prefill in its expanded (MHA) form, as vLLM's MLACommonImpl._forward_prefill and
 * SGLang's MHA path run it: the cached latents of the context and the chunk's own are
 * up-projected by kv_b_proj to per-head keys (qk_nope) and values (v_head_dim), then a
 * FlashAttention of head size qk_nope + qk_rope for QK^T and v_head_dim for PV. */
static double mla_prefill_ns(const roofline *r, double q, double pairs, double kv, double causal)
{
    double nh = r->nh, lora = r->m.kv_lora_rank, rope = r->m.qk_rope_dim;
    double nope = r->m.qk_nope_dim, v = r->m.v_head_dim;
    double up = gemm_ns(r, &r->attn, kv, lora, nh * (nope + v));
    double per_pair = 2.0 * nh * (nope + rope) + 2.0 * nh * v;
    double bytes = ACT_BYTES * q * nh * (nope + rope + v) + ACT_BYTES * kv * nh * (nope + v) +
                   kv * latent_bytes(r);
    double tc = prefill_compute_ns(r, per_pair, causal, pairs - causal, q);
    return up + prefill_ns(r, tc, bytes);
}

/* Attention of one layer of kind w->kind on one rank. */
static double attn_ns(const roofline *r, const cal_work *w)
{
    double D = r->dp, seqs = w->seqs / D, pairs = w->pairs / D;
    if (w->op == KERN_OP_ATTN_PREFILL) {
        double q = w->q_tokens / D, kv = w->kv / D;
        double causal = w->causal / D < pairs ? w->causal / D : pairs;
        if (!r->mla)
            return gqa_prefill_ns(r, q, pairs, kv, causal);
        /* MODEL: vLLM's FlashMLA sparse backend (DeepSeek-V3.2) runs prefill in the absorbed
         * form too, over the indexer's top-k keys (flashmla_sparse.py) */
        if (r->plan.indexer)
            return mla_absorbed_ns(r, q, pairs, kv);
        return mla_prefill_ns(r, q, pairs, kv, causal);
    }
    if (!r->mla)
        return gqa_decode_ns(r, seqs, pairs, w->eager != 0);
    return mla_absorbed_ns(r, seqs, pairs, pairs);
}

/* MODEL: DeepSeek-V3.2's lightning indexer (DeepSeek-V3.2-Exp report, section 2.1; vLLM's
 * Indexer in deepseek_v2.py with DeepGEMM's fp8_mqa_logits and fp8_paged_mqa_logits): per
 * token, wq_b (q_lora -> index_heads x index_dim), wk (hidden -> index_dim) and weights_proj
 * (hidden -> index_heads), replicated on every rank; then for every query and every earlier key
 * index_heads dot products of index_dim in fp8 (2 x heads x dim FLOPs), reading each key's fp8
 * index key (index_dim + a 4-byte scale per 128) once per pass, and fp32 logits written and
 * read again by the top-k selection. */
static double indexer_ns(const roofline *r, const cal_work *w)
{
    double D = r->dp, n = w->tokens / D, pairs = w->pairs / D, keys = w->kv / D;
    double ih = r->m.index_heads, id = r->m.index_dim, h = r->h;
    double ql = r->m.q_lora_rank ? r->m.q_lora_rank : h;
    double proj = gemm_ns(r, &r->indexer, n, ql, ih * id) + gemm_ns(r, &r->indexer, n, h, id) +
                  gemm_ns(r, &r->indexer, n, h, ih);
    double kb = id + id / 128 * 4;
    /* the fp8 MQA logits run on tensor cores like a GEMM (DeepGEMM) */
    double score = kern(r, &r->k->gemm, 2.0 * ih * id * pairs, r->index_peak,
                        keys * kb + 2 * LOGIT_BYTES * pairs);
    return proj + score;
}

/* MODEL: a gated DeltaNet layer's token mixing (Yang et al., "Gated Delta Networks", 2024;
 * vLLM's Qwen3-Next/Qwen3.5 GatedDeltaNet with fla's kernels): a causal depthwise convolution
 * of lin_conv taps over q, k and v; per token and value head the delta rule touches the
 * head_k x head_v state three times (S k, S q, and the rank-one update: 6 x dk x dv FLOPs);
 * prefill runs it chunked, adding the intra-chunk attention of LINEAR_CHUNK tokens (2 x C x
 * (dk + dv) FLOPs per token and head); each sequence's state (convolution and recurrent) is
 * read and written once per pass. */
static double linear_attn_ns(const roofline *r, const cal_work *w)
{
    const eng_model *m = &r->m;
    double D = r->dp, t = r->tp, n = w->tokens / D, seqs = w->seqs / D;
    double pt = w->prefill_tokens / D;
    double vh = m->lin_v_heads / t, dk = m->lin_k_dim, dv = m->lin_v_dim;
    double conv_dim = (2.0 * m->lin_k_heads * dk + m->lin_v_heads * dv) / t;
    double flops = 2.0 * m->lin_conv * conv_dim * n + 6.0 * vh * dk * dv * n +
                   2.0 * LINEAR_CHUNK * (dk + dv) * vh * pt;
    double state = conv_dim * (m->lin_conv - 1) * eng_dtype_bytes(m->act_dtype) +
                   vh * dk * dv * eng_dtype_bytes(m->state_dtype);
    double bytes = 2 * seqs * state + ACT_BYTES * n * (conv_dim + vh * dv);
    /* unmeasured: fla's Triton kernels are taken at the GEMM class's efficiencies */
    return kern(r, &r->k->gemm, flops, r->attn_peak, bytes);
}

/* The query/key/value projections of one layer of kind w->kind on one rank. */
static double qkv_ns(const roofline *r, const cal_work *w)
{
    const eng_model *m = &r->m;
    double n = w->tokens / r->dp, h = r->h, nh = r->nh;
    if (w->kind == CAL_KIND_LINEAR) {
        /* MODEL: in_proj_qkvz and in_proj_ba of vLLM's GatedDeltaNet, column-parallel */
        double kk = (double)m->lin_k_heads * m->lin_k_dim,
               vv = (double)m->lin_v_heads * m->lin_v_dim;
        return gemm_ns(r, &r->linear, n, h, (2 * kk + 2 * vv) / r->tp) +
               gemm_ns(r, &r->linear, n, h, 2.0 * m->lin_v_heads / r->tp);
    }
    if (r->mla) {
        /* MODEL: vLLM's DeepseekV2MLAAttention: fused_qkv_a_proj (hidden -> q_lora_rank +
         * kv_lora_rank + rope, replicated) then q_b_proj (q_lora_rank -> heads x (nope +
         * rope), column-parallel); without q_lora_rank, q_proj and kv_a_proj_with_mqa */
        double qk = (double)m->qk_nope_dim + m->qk_rope_dim,
               lat = (double)m->kv_lora_rank + m->qk_rope_dim;
        if (m->q_lora_rank)
            return gemm_ns(r, &r->attn, n, h, m->q_lora_rank + lat) +
                   gemm_ns(r, &r->attn, n, m->q_lora_rank, nh * qk);
        return gemm_ns(r, &r->attn, n, h, nh * qk) + gemm_ns(r, &r->attn, n, h, lat);
    }
    /* MODEL: Qwen3.5's gated attention doubles q_proj (a sigmoid gate per query head element) */
    double qw = nh * (m->attn_output_gate ? 2 : 1);
    return gemm_ns(r, &r->attn, n, h, (qw + 2 * r->nkv) * r->d);
}

static double o_ns(const roofline *r, const cal_work *w)
{
    const eng_model *m = &r->m;
    double n = w->tokens / r->dp, h = r->h, nh = r->nh;
    if (w->kind == CAL_KIND_LINEAR) {
        /* MODEL: vLLM's GatedDeltaNet: a gated RMSNorm of the output, then out_proj */
        double vv = (double)m->lin_v_heads * m->lin_v_dim / r->tp;
        return elem_ns(r, &r->k->norm, ACT_BYTES * 3 * n * vv) + gemm_ns(r, &r->linear, n, vv, h);
    }
    if (r->mla)
        return gemm_ns(r, &r->attn, n, nh * m->v_head_dim, h);
    double t = gemm_ns(r, &r->attn, n, nh * r->d, h);
    if (m->attn_output_gate) /* sigmoid(gate) * output, before o_proj */
        t += elem_ns(r, &r->k->act, ACT_BYTES * 3 * n * nh * r->d);
    return t;
}

static double rope_ns(const roofline *r, const cal_work *w)
{
    const eng_model *m = &r->m;
    double n = w->tokens / r->dp, nh = r->nh, nkv = r->nkv, d = r->d, t;
    if (r->mla) {
        /* rotary part of each query head and of the shared key, plus the RMSNorms of the
         * query and KV latents */
        double rd = m->qk_rope_dim, lat = (double)m->q_lora_rank + m->kv_lora_rank;
        t = elem_ns(r, &r->k->rope, ACT_BYTES * 2 * n * (nh + 1) * rd);
        return t + 2 * elem_ns(r, &r->k->norm, ACT_BYTES * n * lat);
    }
    t = elem_ns(r, &r->k->rope, ACT_BYTES * 2 * n * (nh + nkv) * d);
    if (m->qk_norm) /* MODEL: Qwen3/Gemma-3 normalise q and k per head before rotation */
        t += elem_ns(r, &r->k->norm, ACT_BYTES * 2 * n * (nh + nkv) * d);
    return t;
}

/* ---------------- MLPs and experts ---------------- */

/* A gated (or plain) MLP of inner size `in` on n rows, stored as l: up(+gate), act, down. */
static double mlp3_ns(const roofline *r, const lin *l, double n, double in)
{
    double g = r->m.gated_mlp ? 2.0 : 1.0, h = r->h;
    return gemm_ns(r, l, n, h, g * in) + elem_ns(r, &r->k->act, ACT_BYTES * n * (g * in + in)) +
           gemm_ns(r, l, n, in, h);
}

/* Expected number of this GPU's experts that at least one of T routed tokens selects: per
 * expert 1 - (1 - q)^T with q its per-token selection probability. */
static double touched(const roofline *r, double T)
{
    return r->e_local * (r->e_q0 >= 1 ? 1 : -expm1(T * r->e_f * log1p(-r->e_q0)));
}

/* MODEL: the kernels a grouped-GEMM MoE layer launches besides its two GEMMs and activation, on
 * T routed tokens with `pairs` token-expert pairs on the busiest GPU; each is a kernel of its
 * own, so in an eager pass each pays the launch (issue 21: TensorRT-LLM's prefill passes are not
 * graph-captured):
 * - the routing sort: the token-expert pairs ordered by expert and each expert's first row
 *   (TensorRT-LLM fusedBuildExpertMapsSortFirstToken, moe_kernels.cu; vLLM's and SGLang's
 *   moe_align_block_size): the k expert ids of each token read, two int32 maps per pair written;
 * - the gather of each pair's row in expert order, where the engine runs one (moe_permute):
 *   a 16-bit row read and written per pair;
 * - the finalize: the k outputs of each token scaled by its routing weights and summed
 *   (TensorRT-LLM finalizeMoeRoutingKernel, vLLM's and SGLang's moe_sum): a 16-bit row read per
 *   pair, one written per token;
 * - with block-scaled fp8 experts, the 1x128 quantize of each GEMM's input: TensorRT-LLM's
 *   fp8_grouped_gemm_run (cutlass_kernels/fp8_blockscale_gemm/fp8_blockscale_gemm_kernel.cuh)
 *   quantizes A by a kernel of its own (internal_quantize_a) before its grouped GEMM, for FC1
 *   and FC2 alike, FC1's on the rows it has gathered (one per pair); vLLM's and SGLang's
 *   fused_experts run per_token_group_quant_fp8 before each of the two
 *   (moe_kernel_quantize_input), the first on the hidden states before any expansion (one row
 *   per token), the second on the pairs' intermediate rows.
 * On data-center Blackwell the engines run 4-bit experts through trtllm-gen's fused MoE
 * (FlashInfer csrc/trtllm_fused_moe_runner.cu: Routing, PermuteGemm1, Gemm2, Finalize; SGLang's
 * flashinfer_mxfp4 backend, TensorRT-LLM's TRTLLMGenFusedMoE), whose routing kernel sorts the
 * pairs with the top-k (the router's top-k kernel above stands for it) and whose first GEMM
 * gathers the rows: there only the finalize is added.
 * The sort is priced as an activation-class kernel, the others as the streaming class (as the
 * quantize of quant_pass_ns). Per-tensor fp8 experts quantize inside the permute and activation
 * kernels in TensorRT-LLM; that case is left unpriced here, as before. */
static double experts_glue_ns(const roofline *r, double T, double pairs)
{
    double h = r->h, k = r->m.experts_per_tok;
    double t = r->e_sort ? elem_ns(r, &r->k->act, 4.0 * T * k + 8.0 * pairs) : 0;
    if (r->e_permute)
        t += elem_ns(r, &r->k->add, 2.0 * ACT_BYTES * pairs * h);
    t += elem_ns(r, &r->k->add, ACT_BYTES * (pairs + T) * h);
    if (r->e_block_quant)
        t += quant_pass_ns(r, r->e_permute ? pairs : T, h) + quant_pass_ns(r, pairs, r->e_inter);
    return t;
}

/* MODEL: the routed experts of one MoE layer on the busiest GPU, as a grouped GEMM (vLLM's
 * fused_moe: w13 then w2 over the tokens sorted by expert, with the activation between):
 * FLOPs of its token-expert pairs, and the weights of the experts the step touches (at small
 * batch only a fraction fire: the expected count for T tokens and top-k over E experts is
 * 1 - (1 - k/E)^T per expert); AIConfigurator's MoE speed-of-light (operations/moe.py
 * get_sol) counts the same FLOPs and min(experts, tokens x topk) experts' weights. */
static double experts_ns(const roofline *r, double T)
{
    double g = r->m.gated_mlp ? 2.0 : 1.0, h = r->h, in = r->e_inter;
    double pairs = T * r->e_pairs, used = touched(r, T);
    double wb = r->experts.wb, peak = r->experts.peak;
    double up = kern(r, &r->k->gemm, 2.0 * pairs * h * g * in, peak,
                     wb * used * h * g * in + ACT_BYTES * pairs * (h + g * in));
    double down = kern(r, &r->k->gemm, 2.0 * pairs * in * h, peak,
                       wb * used * in * h + ACT_BYTES * pairs * (in + h));
    return up + elem_ns(r, &r->k->act, ACT_BYTES * pairs * (g * in + in)) + down +
           experts_glue_ns(r, T, pairs);
}

/* MODEL: the expert-parallel exchange of one MoE layer with attention data parallelism.
 * With experts spread over the GPUs (ep > 1), dispatch sends each token once to every other
 * GPU holding one of its experts and combine sends the results back (DeepEP's normal and
 * low-latency kernels: tokens deduplicated per rank; dispatch in fp8 when the experts compute
 * in fp8, combine in bf16); the busiest GPU receives every token with an expert there. Without
 * expert parallelism the tokens of every rank are all-gathered and the outputs reduce-scattered
 * (vLLM's naive DP dispatch). Each direction costs bytes / (link x CAL_RL_A2A_EFF) plus
 * CAL_RL_A2A_LAT_NS; every GPU of the replica is taken to share one scale-up domain. */
static double all2all_ns(const roofline *r, const cal_work *w)
{
    double G = r->gpus, n = w->tokens, h = r->h, bytes;
    if (r->ep > 1) {
        double b = w->phase == 0 ? r->disp_bytes : ACT_BYTES;
        bytes = n * h * b * r->hot_recv * (G - 1) / G;
    } else {
        bytes = n * h * ACT_BYTES * (G - 1) / G;
    }
    return smooth(CAL_RL_A2A_LAT_NS, 0, bytes / (r->g.link_bw * CAL_RL_A2A_EFF) * 1e9);
}

/* ---------------- the dispatcher ---------------- */

static double op_ns(const void *st, const cal_work *w)
{
    const roofline *r = st;
    double D = r->dp, n = w->tokens / D, h = r->h, t;
    if (r->only >= 0 && w->op != r->only)
        return 0;
    *r->eager = w->eager ? 1 : 0;
    switch (w->op) {
    case KERN_OP_QKV_PROJ:
        t = w->kind == CAL_KIND_LINEAR ? 0 : act_quant_ns(r, ENG_AQ_QKV, n, h);
        return qkv_ns(r, w) + t;
    case KERN_OP_O_PROJ:
        t = w->kind == CAL_KIND_LINEAR
                ? 0
                : act_quant_ns(r, ENG_AQ_O, n, r->nh * (r->mla ? r->m.v_head_dim : r->d));
        return o_ns(r, w) + t;
    case KERN_OP_MLP_UP_GATE:
        return gemm_ns(r, &r->mlp, n, h, (r->m.gated_mlp ? 2.0 : 1.0) * r->inter) +
               act_quant_ns(r, ENG_AQ_UP, n, h);
    case KERN_OP_MLP_DOWN:
        return gemm_ns(r, &r->mlp, n, r->inter, h) + act_quant_ns(r, ENG_AQ_DOWN, n, r->inter);
    case KERN_OP_ATTN_PREFILL:
    case KERN_OP_ATTN_DECODE:
        return attn_ns(r, w);
    case KERN_OP_MLP_ACT:
        return elem_ns(r, &r->k->act,
                       ACT_BYTES * n * ((r->m.gated_mlp ? 2.0 : 1.0) * r->inter + r->inter));
    case KERN_OP_RMSNORM:
        if (w->per_layer && r->ar_fused && n <= FUSED_AR_MAX_TOKENS)
            return 0; /* inside the fused all-reduce (FUSED_AR_FLOOR_NS) */
        t = elem_ns(r, &r->k->norm, ACT_BYTES * (2 * n * h + h));
        /* MODEL: Gemma-2/3 add post-attention and post-MLP norms: two norms per visit */
        return w->per_layer && r->m.norms_per_layer > 2 ? t * r->m.norms_per_layer / 2 : t;
    case KERN_OP_ROPE:
        return rope_ns(r, w);
    case KERN_OP_ADD:
        if (r->ar_fused && n <= FUSED_AR_MAX_TOKENS)
            return 0; /* inside the fused all-reduce */
        return elem_ns(r, &r->k->add, ACT_BYTES * 3 * n * h);
    case CAL_OP_EMBED:
        return elem_ns(r, &r->k->embed, ACT_BYTES * 2 * n * h);
    case CAL_OP_ALLREDUCE:
        if (r->ar_fused && n <= FUSED_AR_MAX_TOKENS)
            return fused_ar_ns(r, n * h * ACT_BYTES);
        return allreduce_ns(r, n * h * ACT_BYTES, 0);
    case KERN_OP_LM_HEAD:
        /* the LM head GEMM writes fp32 logits */
        t = kern(r, &r->k->gemm, 2.0 * n * h * r->vocab, r->head.peak,
                 r->head.wb * h * r->vocab + ACT_BYTES * n * h + LOGIT_BYTES * n * r->vocab);
        if (r->tp > 1) { /* MODEL: vLLM gathers the vocabulary shards of the logits (NCCL) */
            double bytes = (r->tp - 1.0) / r->tp * LOGIT_BYTES * n * r->vocab * r->tp;
            double eff = r->nvlink ? r->nccl_eff : PCIE_AR_EFF;
            t += smooth(r->nvlink ? r->nccl_floor : PCIE_AR_FLOOR_NS, 0,
                        bytes / (r->g.link_bw * eff) * 1e9);
        }
        return t;
    case CAL_OP_SAMPLE:
        /* softmax reads and writes the logits, the filter and the draw read them again:
         * unmeasured, taken as the activation class */
        return elem_ns(r, &r->k->act, 2 * LOGIT_BYTES * n * r->vocab * r->tp) +
               (SAMPLE_KERNELS - 1) * elem_ns(r, &r->k->act, LOGIT_BYTES * n * r->vocab * r->tp);
    case CAL_OP_ROUTER:
        /* MODEL: the router is a replicated hidden -> experts GEMM in 16 bits (vLLM's MoE
         * models build it with quant_config=None), then a top-k softmax over the logits */
        return gemm_ns(r, &r->router, n, h, r->m.experts) +
               elem_ns(r, &r->k->act, LOGIT_BYTES * 2 * n * r->m.experts);
    case CAL_OP_EXPERTS:
        return experts_ns(r, w->tokens);
    case CAL_OP_SHARED:
        return r->m.shared_inter > 0 ? mlp3_ns(r, &r->shared, n, r->m.shared_inter / r->tp) : 0;
    case CAL_OP_ALL2ALL:
        return all2all_ns(r, w);
    case CAL_OP_INDEXER:
        return indexer_ns(r, w);
    case CAL_OP_LINEAR_ATTN:
        return linear_attn_ns(r, w);
    default: /* CAL_OP_SEND_RECV is in imported tables only: a pass never holds it */
        SIM_CHECK(NULL, !"an operator the roofline does not price");
        return 0;
    }
}

static int64_t rl_iteration_ns(const void *st, const eng_shape *s)
{
    const roofline *r = st;
    return cal_ns_round(cal_plan_walk(s, &r->plan, op_ns, r, r->cache));
}

static int64_t rl_passes_ns(const void *st, const eng_shape *s, int32_t passes, int64_t dctx,
                            int64_t dcapped)
{
    const roofline *r = st;
    return cal_plan_walk_passes(s, &r->plan, op_ns, r, r->cache, passes, dctx, dcapped);
}

#ifdef RL_SSE2
/* cube_root of both lanes, each lane by cube_root's operations (IEEE operations give the same
 * result in either lane as alone). */
static inline __m128d cube_root2(__m128d x)
{
    __m128d pos = _mm_cmpgt_pd(x, _mm_setzero_pd()); /* !(x > 0): 0 */
    uint64_t b0 = (uint64_t)_mm_cvtsi128_si64(_mm_castpd_si128(x));
    uint64_t b1 = (uint64_t)_mm_cvtsi128_si64(_mm_castpd_si128(_mm_unpackhi_pd(x, x)));
    b0 = b0 / 3 + UINT64_C(0x2A9F7893782DA1CE);
    b1 = b1 / 3 + UINT64_C(0x2A9F7893782DA1CE);
    __m128d y = _mm_castsi128_pd(_mm_set_epi64x((long long)b1, (long long)b0));
    for (int i = 0; i < 2; i++) {
        __m128d y3 = _mm_mul_pd(_mm_mul_pd(y, y), y);
        y = _mm_div_pd(_mm_mul_pd(y, _mm_add_pd(y3, _mm_add_pd(x, x))),
                       _mm_add_pd(_mm_add_pd(y3, y3), x));
    }
    return _mm_and_pd(y, pos);
}

/* gqa_decode_at of base b's sequences at pairs pa (the low lane) and pb (the high), each lane by
 * gqa_decode_at's operations in its order. */
static inline __m128d gqa_decode_at2(const roofline *r, const eng_decode_base *b, __m128d pairs)
{
    __m128d flops = _mm_mul_pd(_mm_set1_pd(r->dec.flops), pairs);
    __m128d bytes =
        _mm_add_pd(_mm_add_pd(_mm_set1_pd(b->own[0]), _mm_mul_pd(_mm_set1_pd(r->dec.kv), pairs)),
                   _mm_set1_pd(b->own[1]));
    __m128d e9 = _mm_set1_pd(1e9);
    __m128d tc = _mm_and_pd(_mm_mul_pd(_mm_div_pd(flops, _mm_set1_pd(r->dec.peak)), e9),
                            _mm_cmpgt_pd(flops, _mm_setzero_pd()));
    __m128d tm = _mm_mul_pd(_mm_div_pd(bytes, _mm_set1_pd(r->dec.bw)), e9);
    __m128d s = _mm_add_pd(
        _mm_add_pd(_mm_set1_pd(r->floor15[KC_DECODE][b->eager]), _mm_mul_pd(tc, _mm_sqrt_pd(tc))),
        _mm_mul_pd(tm, _mm_sqrt_pd(tm)));
    __m128d c = cube_root2(s);
    return _mm_mul_pd(c, c);
}
#endif

/* The base of a decode run's steps, with the terms of their decode attention that read the
 * sequences alone (b->own: gqa_decode_seq_terms of rl_decode_ns's sequences per rank). */
static int rl_decode_base(const void *st, const eng_shape *s, eng_decode_base *b)
{
    const roofline *r = st;
    if (!cal_plan_decode_base(s, &r->plan, op_ns, r, r->cache, b))
        return 0;
    gqa_decode_seq_terms(r, b->seqs / (double)r->dp, b->own);
    return 1;
}

/* A pass of base b given its decode attention t (ns per layer): cal_plan_walk's dense sum. */
static inline int64_t decode_pass_ns(const eng_decode_base *b, double t)
{
    double d = 0; /* as dense_decode sums it */
    d += t;
    return cal_ns_round((b->rest + d) * b->layers + b->once);
}

/* A decode run's step: cal_plan_walk's dense sum with its decode attention alone priced
 * (rl_decode_ns's, its terms of the sequences from the base). */
static int64_t rl_decode_step_ns(const void *st, const eng_decode_base *b, int64_t decode_ctx)
{
    const roofline *r = st;
    double t = gqa_decode_at(r, b->own, ((double)decode_ctx + b->seqs) / (double)r->dp, b->eager);
    SIM_ASSERT(NULL, t == rl_decode_ns(st, b->seqs, (double)decode_ctx + b->seqs, b->eager));
    return decode_pass_ns(b, t);
}

#ifdef RL_SSE2
/* rl_decode_step_ns of base b at contexts c0 (ns[0]) and c1 (ns[1]): their decode attention at
 * once, each lane by rl_decode_step_ns's operations in its order. */
static inline __attribute__((always_inline)) void
decode_pair(const roofline *r, const eng_decode_base *b, int64_t c0, int64_t c1, int64_t ns[2])
{
    double D = r->dp, t[2];
    __m128d pairs = _mm_set_pd(((double)c1 + b->seqs) / D, ((double)c0 + b->seqs) / D);
    _mm_storeu_pd(t, gqa_decode_at2(r, b, pairs));
    ns[0] = decode_pass_ns(b, t[0]);
    ns[1] = decode_pass_ns(b, t[1]);
    SIM_ASSERT(NULL, ns[0] == rl_decode_step_ns(r, b, c0) && ns[1] == rl_decode_step_ns(r, b, c1));
}

/* rl_decode_step_ns of base b at contexts c0 and c1, summed (decode_pair). */
static __attribute__((noinline)) int64_t decode_pair_ns(const roofline *r, const eng_decode_base *b,
                                                        int64_t c0, int64_t c1)
{
    int64_t ns[2];
    decode_pair(r, b, c0, c1, ns);
    return ns[0] + ns[1];
}

#endif

/* ns plus rl_decode_step_ns of next at ctx + k * dctx for k from j to passes - 1; with SSE2
 * two passes at once. */
static inline __attribute__((always_inline)) int64_t decode_passes_from(int64_t ns, const void *st,
                                                                        const eng_decode_base *next,
                                                                        int32_t j, int32_t passes,
                                                                        int64_t ctx, int64_t dctx)
{
#ifdef RL_SSE2
    for (; j + 1 < passes; j += 2)
        ns += decode_pair_ns(st, next, ctx + j * dctx, ctx + (j + 1) * dctx);
#endif
    for (; j < passes; j++)
        ns += rl_decode_step_ns(st, next, ctx + j * dctx);
    return ns;
}

/* rl_decode_step_ns of first at ctx and of next at ctx + j * dctx, 0 < j < passes, summed; with
 * SSE2 two of next's passes at once. */
static int64_t rl_decode_passes_ns(const void *st, const eng_decode_base *first,
                                   const eng_decode_base *next, int32_t passes, int64_t ctx,
                                   int64_t dctx)
{
    return decode_passes_from(rl_decode_step_ns(st, first, ctx), st, next, 1, passes, ctx, dctx);
}

#ifdef RL_AVX
/* cube_root of four lanes, each lane by cube_root's operations. */
__attribute__((target("avx"))) static inline __m256d cube_root4(__m256d x)
{
    __m256d pos = _mm256_cmp_pd(x, _mm256_setzero_pd(), _CMP_GT_OQ); /* !(x > 0): 0 */
    uint64_t b[4];
    _mm256_storeu_pd((double *)(void *)b, x);
    b[0] = b[0] / 3 + UINT64_C(0x2A9F7893782DA1CE);
    b[1] = b[1] / 3 + UINT64_C(0x2A9F7893782DA1CE);
    b[2] = b[2] / 3 + UINT64_C(0x2A9F7893782DA1CE);
    b[3] = b[3] / 3 + UINT64_C(0x2A9F7893782DA1CE);
    __m256d y = _mm256_loadu_pd((const double *)(const void *)b);
    for (int i = 0; i < 2; i++) {
        __m256d y3 = _mm256_mul_pd(_mm256_mul_pd(y, y), y);
        y = _mm256_div_pd(_mm256_mul_pd(y, _mm256_add_pd(y3, _mm256_add_pd(x, x))),
                          _mm256_add_pd(_mm256_add_pd(y3, y3), x));
    }
    return _mm256_and_pd(y, pos);
}

/* eng_verify_pack's layout: four lanes (the target's pass, the drafter's first, its next two)
 * of each of these, in this order. */
enum {
    VP_SEQS,
    VP_DP,
    VP_FLOPS,
    VP_KV,
    VP_OWN0,
    VP_OWN1,
    VP_PEAK,
    VP_BW,
    VP_FLOOR,
    VP_REST,
    VP_LAYERS,
    VP_ONCE,
    VP_N
};

/* The four lanes' passes at contexts ctx, each lane by rl_decode_step_ns's operations in its
 * order, rounded as cal_ns_round rounds (ns[i]): the lanes' bases' and predictors' sums given
 * lane by lane (eng_verify_pack's layout, VP_*). */
__attribute__((target("avx"))) static inline __attribute__((always_inline)) void
lanes4(__m256d ctx, __m256d seqs, __m256d dp, __m256d flops_c, __m256d kv, __m256d own0,
       __m256d own1, __m256d peak, __m256d bw, __m256d floor, __m256d rest, __m256d layers,
       __m256d once, int64_t ns[4])
{
    __m256d pairs = _mm256_div_pd(_mm256_add_pd(ctx, seqs), dp);
    __m256d flops = _mm256_mul_pd(flops_c, pairs);
    __m256d bytes = _mm256_add_pd(_mm256_add_pd(own0, _mm256_mul_pd(kv, pairs)), own1);
    __m256d e9 = _mm256_set1_pd(1e9), zero = _mm256_setzero_pd();
    __m256d tc = _mm256_and_pd(_mm256_mul_pd(_mm256_div_pd(flops, peak), e9),
                               _mm256_cmp_pd(flops, zero, _CMP_GT_OQ));
    __m256d tm = _mm256_mul_pd(_mm256_div_pd(bytes, bw), e9);
    __m256d s = _mm256_add_pd(_mm256_add_pd(floor, _mm256_mul_pd(tc, _mm256_sqrt_pd(tc))),
                              _mm256_mul_pd(tm, _mm256_sqrt_pd(tm)));
    __m256d cr = cube_root4(s);
    __m256d t = _mm256_add_pd(zero, _mm256_mul_pd(cr, cr)); /* decode_pass_ns's d */
    __m256d x = _mm256_add_pd(_mm256_mul_pd(_mm256_add_pd(rest, t), layers), once);
    /* cal_ns_round: below 1 (or NaN) 1, above 9e18 9e18, else the integer part, one more from a
     * fraction of one half (the part and the fraction exact: x < 2^63) */
    __m256d one = _mm256_set1_pd(1.0), top = _mm256_set1_pd(9.0e18);
    __m256d i = _mm256_round_pd(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    __m256d up = _mm256_cmp_pd(_mm256_sub_pd(x, i), _mm256_set1_pd(0.5), _CMP_GE_OQ);
    __m256d r = _mm256_add_pd(i, _mm256_and_pd(up, one));
    __m256d hi = _mm256_cmp_pd(x, top, _CMP_GT_OQ), lo = _mm256_cmp_pd(x, one, _CMP_GE_OQ);
    r = _mm256_or_pd(_mm256_andnot_pd(hi, r), _mm256_and_pd(hi, top));
    r = _mm256_or_pd(_mm256_and_pd(lo, r), _mm256_andnot_pd(lo, one));
    double d[4];
    _mm256_storeu_pd(d, r);
    ns[0] = (int64_t)d[0];
    ns[1] = (int64_t)d[1];
    ns[2] = (int64_t)d[2];
    ns[3] = (int64_t)d[3];
}

/* The four lanes' passes of pack p at contexts c (lane i: c[i]), each lane by
 * rl_decode_step_ns's operations in its order (lanes4). */
__attribute__((target("avx"))) static inline void verify4(const double *p, const int64_t c[4],
                                                          int64_t ns[4])
{
#define VP(f) _mm256_loadu_pd(p + 4 * (f))
    __m256d ctx = _mm256_set_pd((double)c[3], (double)c[2], (double)c[1], (double)c[0]);
    lanes4(ctx, VP(VP_SEQS), VP(VP_DP), VP(VP_FLOPS), VP(VP_KV), VP(VP_OWN0), VP(VP_OWN1),
           VP(VP_PEAK), VP(VP_BW), VP(VP_FLOOR), VP(VP_REST), VP(VP_LAYERS), VP(VP_ONCE), ns);
#undef VP
}

/* rl_decode_step_ns of base b at contexts ctx + i * dctx (ns[i], i < 4), four at once (lanes4,
 * every lane of b and r). */
__attribute__((target("avx"))) static void decode4(const roofline *r, const eng_decode_base *b,
                                                   int64_t ctx, int64_t dctx, int64_t ns[4])
{
    __m256d c = _mm256_set_pd((double)(ctx + 3 * dctx), (double)(ctx + 2 * dctx),
                              (double)(ctx + dctx), (double)ctx);
    lanes4(c, _mm256_set1_pd(b->seqs), _mm256_set1_pd((double)r->dp), _mm256_set1_pd(r->dec.flops),
           _mm256_set1_pd(r->dec.kv), _mm256_set1_pd(b->own[0]), _mm256_set1_pd(b->own[1]),
           _mm256_set1_pd(r->dec.peak), _mm256_set1_pd(r->dec.bw),
           _mm256_set1_pd(r->floor15[KC_DECODE][b->eager]), _mm256_set1_pd(b->rest),
           _mm256_set1_pd(b->layers), _mm256_set1_pd(b->once), ns);
    SIM_ASSERT(NULL, ns[0] == rl_decode_step_ns(r, b, ctx) &&
                         ns[1] == rl_decode_step_ns(r, b, ctx + dctx) &&
                         ns[2] == rl_decode_step_ns(r, b, ctx + 2 * dctx) &&
                         ns[3] == rl_decode_step_ns(r, b, ctx + 3 * dctx));
}
#endif

/* eng_predictor_ops.verify_pack: the lanes of verify4 (lanes past the drafter's passes repeat
 * its first, computed and not counted). 0 without AVX. */
static int rl_verify_pack(const void *st, const eng_decode_base *target, const void *dst,
                          const eng_decode_base *first, const eng_decode_base *next, int32_t passes,
                          eng_verify_pack *p)
{
    const roofline *r = st, *d = dst;
#ifdef RL_AVX
    _Static_assert(4 * VP_N <= sizeof((eng_verify_pack *)0)->v / sizeof(double), "pack size");
    if (!r->avx || passes < 1)
        return 0;
    const roofline *const rl[4] = {r, d, d, d};
    const eng_decode_base *const bl[4] = {target, first, passes > 1 ? next : first,
                                          passes > 2 ? next : first};
    for (int i = 0; i < 4; i++) {
        double *v = p->v + i;
        v[4 * VP_SEQS] = bl[i]->seqs;
        v[4 * VP_DP] = (double)rl[i]->dp;
        v[4 * VP_FLOPS] = rl[i]->dec.flops;
        v[4 * VP_KV] = rl[i]->dec.kv;
        v[4 * VP_OWN0] = bl[i]->own[0];
        v[4 * VP_OWN1] = bl[i]->own[1];
        v[4 * VP_PEAK] = rl[i]->dec.peak;
        v[4 * VP_BW] = rl[i]->dec.bw;
        v[4 * VP_FLOOR] = rl[i]->floor15[KC_DECODE][bl[i]->eager];
        v[4 * VP_REST] = bl[i]->rest;
        v[4 * VP_LAYERS] = bl[i]->layers;
        v[4 * VP_ONCE] = bl[i]->once;
    }
    return 1;
#else
    (void)r, (void)d, (void)target, (void)first, (void)next, (void)passes;
    return 0;
#endif
}

/* eng_predictor_ops.verify_ns from pack p (rl_verify_pack's): the target's pass, the drafter's
 * first and its next two at once, each still rounded on its own; its passes past those as
 * rl_decode_passes_ns prices them. Asked only after a pack (so of a CPU with AVX). */
#ifdef RL_AVX
__attribute__((target("avx")))
#endif
static int64_t
rl_verify_ns(const void *st, const eng_decode_base *target, const void *dst,
             const eng_decode_base *first, const eng_decode_base *next, const eng_verify_pack *p,
             int32_t passes, int64_t ctx, int64_t dctx, int64_t *draft)
{
    const roofline *d = dst;
    (void)st, (void)target, (void)first;
#ifdef RL_AVX
    const int64_t c[4] = {ctx, ctx, ctx + dctx, ctx + 2 * dctx};
    int64_t t[4];
    verify4(p->v, c, t);
    int64_t ns = t[1] + (passes > 1 ? t[2] : 0) + (passes > 2 ? t[3] : 0);
    ns = decode_passes_from(ns, d, next, 3, passes, ctx, dctx); /* the passes past the lanes */
    *draft = ns;
    SIM_ASSERT(NULL, t[0] == rl_decode_step_ns(st, target, ctx) &&
                         ns == rl_decode_passes_ns(d, first, next, passes, ctx, dctx));
    return t[0];
#else
    (void)p;
    *draft = rl_decode_passes_ns(d, first, next, passes, ctx, dctx);
    return rl_decode_step_ns(st, target, ctx);
#endif
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
    cal_walk_cache_free(r->cache);
    free(r->eager);
    free(r);
}

#ifdef RL_SSE2
/* eng_predictor_ops.decode_steps_ns: four steps at once where the CPU has AVX and k > 2
 * (decode4), else two where k > 1 (decode_pair), else one; each lane rl_decode_step_ns's
 * operations in its order. Only where the build has SSE2: elsewhere the engine prices step by
 * step. */
static int32_t rl_decode_steps_ns(const void *st, const eng_decode_base *b, int64_t ctx,
                                  int64_t dctx, int32_t k, int64_t ns[ENG_DECODE_STEPS])
{
    const roofline *r = st;
    _Static_assert(ENG_DECODE_STEPS == 4, "decode4's lanes");
#ifdef RL_AVX
    if (r->avx && k > 2) {
        decode4(r, b, ctx, dctx, ns);
        return k < 4 ? k : 4;
    }
#endif
    if (k < 2) {
        ns[0] = rl_decode_step_ns(r, b, ctx);
        return 1;
    }
    decode_pair(r, b, ctx, ctx + dctx, ns);
    return 2;
}
#endif

static const eng_predictor_ops roofline_ops = {
    .name = "roofline",
    .iteration_ns = rl_iteration_ns,
    .transfer_ns = rl_transfer_ns,
    .fini = rl_fini,
    .passes_ns = rl_passes_ns,
    .decode_base = rl_decode_base,
    .decode_ns = rl_decode_step_ns,
#ifdef RL_SSE2
    .decode_steps_ns = rl_decode_steps_ns,
#endif
    .decode_passes_ns = rl_decode_passes_ns,
    .verify_pack = rl_verify_pack,
    .verify_ns = rl_verify_ns,
};

cal_serving cal_serving_tp(eng_dtype dt, int tp)
{
    cal_serving s = {dt, ENG_DTYPE_AUTO, {tp, 1, 1, {0, 0, 0}}, 0, 0, "", 0, {0, 0}};
    return s;
}

static const engine_eff *find_engine(const char *name)
{
    if (!name || !*name)
        return &engines[0];
    for (int i = 0; i < NENGINES; i++)
        if (strcmp(engines[i].name, name) == 0)
            return &engines[i];
    return NULL;
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
    char what[400];
    int32_t max_len = s->max_len > 0 ? s->max_len : m->max_context;
    int32_t chunked, cap = eng_shape_cap(m, &chunked);
    if (!find_engine(s->engine)) {
        if (len)
            snprintf(why, len, "engine '%s': the cost model knows vllm, sglang and trtllm",
                     s->engine);
        return -1;
    }
    if (!(s->layout.moe.skew >= 0) || s->layout.moe.skew > 10) {
        if (len)
            snprintf(why, len, "moe skew %g: expected a Zipf exponent from 0 to 10",
                     s->layout.moe.skew);
        return -1;
    }
    if (cap > 0 && max_len > cap + 1 && !s->capped_sums) {
        if (m->index_topk > 0)
            snprintf(what, sizeof what,
                     "DeepSeek sparse attention whose top-%d keys are fewer than the %d tokens "
                     "sequences reach (the engine does not yet supply the per-sequence capped "
                     "decode sum it needs; set memory.max_model_len to at most %d to run it)",
                     m->index_topk, max_len, m->index_topk);
        else
            snprintf(what, sizeof what,
                     "%s attention (%d layers keep %d tokens; sequences reach %d: the engine "
                     "does not yet supply the per-sequence capped decode sum it needs; set "
                     "memory.max_model_len to at most %d to run it)",
                     m->window_chunked ? "chunked local" : "sliding-window", m->window_layers,
                     m->window, max_len, m->window);
        return unpriced(why, len, m, what);
    }
    return 0;
}

static int check_inputs(const eng_model *m, const eng_gpu *g, const cal_serving *s, sim_err *err)
{
    char why[600];
    eng_layout l = s->layout;
    if (l.tp < 1)
        return sim_errf(err, "tensor parallelism %d: must be at least 1", l.tp);
    if (eng_layout_check(m, &l, why, sizeof why) != 0)
        return sim_errf(err, "%s", why);
    if (cal_roofline_priced(m, s, why, sizeof why) != 0)
        return sim_errf(err, "%s", why);
    int dense_ok = m->layers > m->moe_layers ? m->intermediate > 0 : 1;
    int attn_ok = m->attn == ENG_ATTN_MLA ? m->kv_lora_rank > 0 && m->v_head_dim > 0
                                          : m->kv_heads > 0 && m->head_dim > 0;
    if (m->layers <= 0 || m->hidden <= 0 || m->heads <= 0 || !attn_ok || !dense_ok ||
        m->vocab <= 0 ||
        (m->moe_layers > 0 && (m->experts <= 0 || m->experts_per_tok <= 0 || m->expert_inter <= 0)))
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

/* The fp8 GEMM inputs the engine quantizes by a kernel of their own (cal_serving.act_quant, the
 * mask of the checkpoint's scheme), of the parts that run on the fp8 tensor cores. */
static uint32_t act_quant_of(const roofline *r, const cal_serving *s, eng_compute c)
{
    if (c != ENG_COMPUTE_FP8 || !(r->g.flops_fp8 > 0))
        return 0;
    uint32_t aq = s->act_quant[r->m.act_group > 0 ? ENG_AQ_BLOCK : ENG_AQ_TENSOR];
    if (r->attn.peak != r->g.flops_fp8)
        aq &= ~(uint32_t)(ENG_AQ_QKV | ENG_AQ_O);
    if (r->mlp.peak != r->g.flops_fp8)
        aq &= ~(uint32_t)(ENG_AQ_UP | ENG_AQ_DOWN);
    return aq;
}

/* The layers by kind. */
static cal_plan plan_of(const eng_model *m, const eng_layout *l)
{
    cal_plan p = {{0, 0, 0}, 0, 0, l->tp, l->dp, l->ep, m->index_topk > 0};
    int attn = m->layers - m->linear_layers;
    p.attn[CAL_KIND_LINEAR] = m->linear_layers;
    p.attn[CAL_KIND_CAPPED] = m->index_topk > 0 ? attn : m->window_layers;
    p.attn[CAL_KIND_FULL] = attn - p.attn[CAL_KIND_CAPPED];
    p.moe = m->moe_layers;
    p.dense = m->layers - m->moe_layers;
    return p;
}

/* MODEL: the routed experts on the busiest expert-parallel GPU. Balanced routing keeps closed
 * forms over the GPU's (E + R) / ep slots, each picked by a token with probability k / (E + R);
 * under skewed routing the busiest GPU is taken as a balanced one that receives f times the
 * routed tokens, f the placement's imbalance factor (placement.c: the busiest GPU's expected
 * token-expert pairs over the mean, computed once here): f times the pairs, the slots touched
 * by f x T tokens, a token reaching it with f times the odds of missing it in the exponent. */
static void moe_setup(roofline *r, const eng_model *m, const eng_layout *l)
{
    double E = m->experts + l->moe.redundant, k = m->experts_per_tok;
    /* each expert split over the gpus / ep GPUs of its group (moe_tp x moe_ep, model.c) */
    r->e_inter = (double)m->expert_inter / (r->gpus / r->ep);
    r->e_local = E / r->ep;
    r->e_q0 = k / E;
    r->e_pairs = k * r->e_local / E;
    /* P(a token has at least one of its k experts on a given GPU), experts drawn without
     * replacement: 1 - C(E - local, k) / C(E, k) */
    double miss = 1;
    for (int j = 0; j < (int)k; j++)
        miss *= (E - r->e_local - j) / (E - j);
    miss = miss > 0 ? miss : 0;
    r->e_f = cal_moe_imbalance(m->experts, m->experts_per_tok, r->ep, &l->moe);
    if (r->e_f != 1) {
        r->e_pairs *= r->e_f;
        miss = pow(miss, r->e_f);
    }
    r->hot_recv = 1 - miss;
}

static void label_of(const roofline *r, const cal_serving *s, char *out, size_t len)
{
    char lay[64] = "", kvs[24] = "", extra[64] = "";
    if (r->tp > 1)
        snprintf(lay, sizeof lay, " tp%d", r->tp);
    if (r->dp > 1)
        snprintf(lay + strlen(lay), sizeof lay - strlen(lay), " dp%d", r->dp);
    if (r->ep > 1)
        snprintf(lay + strlen(lay), sizeof lay - strlen(lay), " ep%d", r->ep);
    if (s->kv_dtype != ENG_DTYPE_AUTO && r->kv != r->m.kv_dtype)
        snprintf(kvs, sizeof kvs, " kv %s", eng_dtype_name(r->kv));
    const eng_moe *x = &s->layout.moe;
    if (x->skew > 0 && r->m.moe_layers > 0)
        snprintf(extra, sizeof extra, " skew %g", x->skew);
    if (x->placement == ENG_MOE_EPLB && r->m.moe_layers > 0)
        snprintf(extra + strlen(extra), sizeof extra - strlen(extra), " eplb+%d", x->redundant);
    if (s->engine[0] && strcmp(s->engine, engines[0].name) != 0)
        snprintf(extra + strlen(extra), sizeof extra - strlen(extra), " %s", s->engine);
    snprintf(out, len, "roofline %s%s %s%s%s (not measured%s)", r->g.name, lay,
             eng_dtype_name(r->dt), kvs, extra,
             cal_gpu_extrapolated(r->g.name) ? "; extrapolated from NVIDIA kernels" : "");
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
    const eng_layout *l = &s->layout;
    int tp = l->tp;
    roofline *r = sim_xcalloc(1, sizeof *r);
    r->cache = sim_xcalloc(1, sizeof *r->cache);
    r->eager = sim_xcalloc(1, sizeof *r->eager);
    r->m = *m;
    r->g = *g;
    r->dt = dt;
    r->kv = kv;
    r->tp = tp;
    r->dp = l->dp;
    r->ep = l->ep;
    r->gpus = l->tp * l->dp;
    r->only = -1;
    r->h = m->hidden;
    r->d = m->head_dim;
    r->nh = (double)m->heads / tp;
    r->mla = m->attn == ENG_ATTN_MLA;
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
    r->experts = part_lin(m, g, dt, c, ENG_PART_EXPERTS);
    r->shared = part_lin(m, g, dt, c, ENG_PART_SHARED);
    r->router = part_lin(m, g, dt, c, ENG_PART_ROUTER);
    r->linear = part_lin(m, g, dt, c, ENG_PART_LINEAR);
    r->indexer = part_lin(m, g, dt, c, ENG_PART_INDEXER);
    r->attn_peak = g->flops_bf16;
    r->aq = act_quant_of(r, s, c);
    r->index_peak = g->flops_fp8 > 0 ? g->flops_fp8 : g->flops_bf16;
    /* MODEL: FlashAttention-3 class prefill kernels run on Hopper and data-center Blackwell */
    cal_arch arch = cal_gpu_arch(g->name);
    const engine_eff *ee = find_engine(s->engine);
    r->prefill = arch == CAL_ARCH_HOPPER || arch == CAL_ARCH_BLACKWELL ? ee->fa3 : ee->fa2;
    r->nvlink = g->link_bw > g->pcie_bw;
    r->xnode = r->nvlink && g->nic_bw > 0 && tp > nvlink_domain(g);
    r->nccl_floor = arch == CAL_ARCH_HOPPER ? NCCL_HOPPER_FLOOR_NS : NCCL_FLOOR_NS;
    r->nccl_eff = arch == CAL_ARCH_HOPPER ? NCCL_HOPPER_LINK_EFF : NCCL_LINK_EFF;
    r->ar_fused = fuses_allreduce(r, s, arch);
    r->floor_scale = floor_scale(arch);
    r->eager_launch = s->eager_launch_ns > 0 ? s->eager_launch_ns : EAGER_LAUNCH_NS;
    r->k = cal_gpu_memory(g->name) == CAL_MEM_GDDR ? &K_GDDR : &K_HBM;
    r->plan = plan_of(m, l);
    floors_setup(r);
    dec_setup(r);
#ifdef RL_AVX
    r->avx = __builtin_cpu_supports("avx");
#endif
    if (!r->mla)
        r->cache->decode = rl_decode_ns;
    /* MODEL: DeepEP dispatches fp8 when the experts run W8A8 (DeepSeek-V3 paper, section
     * 3.3.2: "we quantize the activation before MoE up-projections into FP8 and then apply
     * dispatch components"); otherwise the 16-bit activations */
    r->disp_bytes = r->experts.peak == g->flops_fp8 && g->flops_fp8 > 0 ? 1.0 : ACT_BYTES;
    if (m->moe_layers > 0) {
        moe_setup(r, m, l);
        int gen = arch == CAL_ARCH_BLACKWELL && r->experts.wb < 1.0; /* trtllm-gen's MoE */
        r->e_sort = !gen;
        r->e_permute = ee->moe_permute && !gen;
        r->e_block_quant = r->experts.peak == g->flops_fp8 && g->flops_fp8 > 0 && m->act_group > 0;
    }
    out->ops = &roofline_ops;
    out->st = r;
    label_of(r, s, out->label, sizeof out->label);
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
    return cal_plan_walk(s, &r.plan, op_ns, &r, NULL);
}

double cal_roofline_work_ns(const eng_predictor *rl, const cal_work *w)
{
    return op_ns(rl->st, w);
}

double cal_roofline_point_ns(const eng_predictor *p, int op, double x, double y)
{
    if (!p || p->ops != &roofline_ops || op < 0 || op >= CAL_PROFILE_OPS)
        return -1;
    const roofline *r = p->st;
    if (op == CAL_OP_ALLREDUCE) /* x = bytes, as network tables measure NCCL */
        return allreduce_ns(r, x, 1);
    if (op == CAL_OP_SEND_RECV || op == CAL_OP_SAMPLE)
        return -1;
    cal_work w = {.op = op, .tokens = x * r->dp, .per_layer = op != CAL_OP_EMBED};
    if (op == KERN_OP_ATTN_PREFILL) {
        w.seqs = r->dp;
        w.q_tokens = x * r->dp;
        w.pairs = (x * y + x * (x + 1) / 2) * r->dp;
        w.kv = (x + y) * r->dp;
        w.causal = x * (x + 1) / 2 * r->dp;
    } else if (op == KERN_OP_ATTN_DECODE) {
        w.seqs = x * r->dp;
        w.pairs = x * y * r->dp;
    }
    return op_ns(r, &w);
}

double cal_roofline_allreduce_ns(const eng_predictor *p, double bytes, int nccl)
{
    if (!p || p->ops != &roofline_ops)
        return -1;
    return allreduce_ns(p->st, bytes, nccl);
}
