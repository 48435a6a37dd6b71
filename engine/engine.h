/*
 * engine.h: the simulated serving engine: configuration, replicas, the run, and the primitives
 * a scheduling policy uses.
 *
 * A run: eng_new (validates the configuration, sizes the KV cache, creates one replica per
 * `replicas` with its own policy state, and the router's state) -> eng_run (pulls arrivals from
 * the workload source, routes each through the router's ops (router.h), runs iterations until
 * every request is finished or rejected) -> eng_free.
 *
 * Decode cohort: every policy modelled here runs all of a replica's decoding sequences together
 * in a decode step (or pauses them all). The engine therefore keeps the decoding sequences as a
 * cohort with aggregate sums (count, sum of contexts) and heaps keyed by the step at which each
 * finishes or needs its next KV block, so a decode step costs O(1) plus the work for the
 * sequences that change (finish, need a block, join, leave), not O(batch).
 *
 * Same-time event order: iteration ends (priority 0) run before KV transfers' events
 * (priority 5), which run before arrivals (priority 10), which run before wake-ups (priority
 * 20); equal (time, priority) run in scheduling order.
 *
 * Disaggregated prefill/decode (cfg.pd.enabled): two pools of replicas, each with its own GPU,
 * layout, memory, policy, router and cost model. A request is routed to a prefill replica and
 * prefills there (asking for one token, as the disaggregation proxies do); its KV cache then
 * crosses a modelled link (link.c) to a decode replica chosen by the decode pool's router, whose
 * policy takes it into its decode cohort with the KV already present (pd.c).
 */
#ifndef ENG_ENGINE_H
#define ENG_ENGINE_H

#include <stdint.h>

#include "sim.h"
#include "model.h"
#include "predictor.h"
#include "request.h"
#include "scheduler.h"
#include "router.h"
#include "metrics.h"
#include "keys.h"
#include "fleet.h"

enum { ENG_PRIO_ITER_END = 0, ENG_PRIO_XFER = 5, ENG_PRIO_ARRIVAL = 10, ENG_PRIO_WAKE = 20 };

typedef struct eng_cpu_overhead {
    double per_iteration_us; /* scheduling + input preparation + sampling, per iteration */
    double per_seq_us;       /* the same, per sequence in the batch */
    int async;               /* 1: CPU work of iteration n+1 overlaps GPU work of iteration n */
    int own_step;            /* with async, 1: a step's tokens reach the client when that step
                                ends (its results are read right after the next step is
                                launched), 0: when the next step ends (vLLM 0.6's async output
                                processor) */
    int form_ahead;          /* with async, 1: step n+1 is formed when step n starts, so a
                                request arriving during step n is first scheduled in step n+2
                                (the overlap loops of TensorRT-LLM, SGLang, vLLM V1) */
} eng_cpu_overhead;

/* Speculative decoding: how a replica's decode steps draft and verify tokens. */
typedef enum eng_spec_method {
    ENG_SPEC_NONE = 0,
    ENG_SPEC_DRAFT,  /* a draft model of its own */
    ENG_SPEC_EAGLE,  /* an EAGLE head: one decoder layer fed the target's hidden state */
    ENG_SPEC_EAGLE3, /* an EAGLE-3 head: the same, fed three of the target's hidden states, with
                        a draft vocabulary of its own */
    ENG_SPEC_MTP,    /* the checkpoint's multi-token-prediction layers */
    ENG_SPEC_NGRAM,  /* prompt lookup: no forward pass */
    ENG_SPEC_METHOD_COUNT
} eng_spec_method;

const char *eng_spec_method_name(eng_spec_method m);

/* How a mean acceptance length becomes the tokens accepted in one step. */
typedef enum eng_spec_dist {
    /* MODEL: the minimum-variance schedule: floor(AL) tokens, and one more with probability
     * frac(AL) -- vLLM's synthetic rejection sampler (SpeculativeConfig.
     * _acceptance_length_to_rates: per-position rates 1, ..., 1, frac, 0, ...), SGLang's
     * SGLANG_SIMULATE_ACC_METHOD=match-expected; TensorRT-LLM's forced acceptance is its
     * integral case */
    ENG_SPEC_MIN_VARIANCE = 0,
    /* i.i.d. per-position acceptance at rate r: draft j is accepted if draft j - 1 was and a
     * draw falls below r (the standard speculative-sampling model, Leviathan et al. 2023) */
    ENG_SPEC_IID
} eng_spec_dist;

#define ENG_SPEC_MAX_K 32
#define ENG_SPEC_MAX_CLASSES 64

typedef struct eng_spec {
    eng_spec_method method; /* ENG_SPEC_NONE: no speculative decoding */
    int32_t k;              /* draft tokens per step (num_speculative_tokens), 1..ENG_SPEC_MAX_K */
    double al;              /* mean acceptance length: 1 + accepted drafts per step, 1..k + 1 */
    eng_spec_dist dist;
    double rate;           /* ENG_SPEC_IID: per-position acceptance rate (its AL is al) */
    int32_t classes;       /* acceptance classes: requests draw one at arrival, and members of
                              a class accept the same number of tokens in a step (1: one draw
                              per step for the batch, as SGLang's simulation does) */
    int32_t disable_batch; /* steps whose decode batch has at least this many sequences do not
                              speculate (0: never off) */
    int has_draft;         /* the drafter runs forward passes described by `draft` */
    eng_model draft;       /* the drafter (draft model, EAGLE head, MTP layers) */
    uint32_t draft_shared; /* ENG_PART_* the drafter shares with the target (its weights are
                              not counted twice) */
} eng_spec;

/* Fills sp->draft (and draft_shared, has_draft) with the drafter sp->method runs for target:
 * an EAGLE or EAGLE-3 head of the target's width (unless sp->has_draft already holds a head's
 * own description), mtp_layers of the target's kind, or the draft model already in sp->draft
 * (checked against the target); nothing for n-gram. 0, or -1 with a message in why. */
int eng_spec_drafter(eng_spec *sp, const eng_model *target, int32_t mtp_layers, char *why,
                     size_t len);
/* Mean acceptance length of k drafts accepted i.i.d. at per-position rate r:
 * 1 + r + r^2 + ... + r^k; and the rate that gives a length (bisection). */
double eng_spec_length_of_rate(double r, int32_t k);
double eng_spec_rate_of_length(double al, int32_t k);

/* ---- disaggregated prefill/decode: pools and the link between them ---- */
/* Pools: an aggregated deployment's one (or its groups of different GPUs, eng_groups_config),
 * or a disaggregated one's prefill and decode pools. */
#define ENG_MAX_GROUPS 8
enum { ENG_POOL_PREFILL = 0, ENG_POOL_DECODE = 1, ENG_POOLS_MAX = ENG_MAX_GROUPS };

/* What a pool's replicas do: everything (an aggregated deployment), or one phase. */
typedef enum eng_role { ENG_ROLE_MIXED = 0, ENG_ROLE_PREFILL, ENG_ROLE_DECODE } eng_role;

/* The link a KV cache crosses from a prefill to a decode replica. */
typedef enum eng_link_kind {
    ENG_LINK_RDMA = 0, /* InfiniBand / RoCE: each GPU's NIC (eng_gpu.nic_bw) */
    ENG_LINK_NVLINK,   /* both pools in one NVLink domain (eng_gpu.link_bw) */
    ENG_LINK_PCIE,     /* staged through the hosts' PCIe (eng_gpu.pcie_bw) */
    ENG_LINK_COUNT
} eng_link_kind;

/* When the KV cache moves. */
typedef enum eng_xfer_mode {
    ENG_XFER_AFTER_PREFILL = 0, /* once the whole prefill is done (vLLM NixlConnector, Dynamo,
                                   TensorRT-LLM) */
    ENG_XFER_LAYERWISE,         /* layer by layer while the prefill computes (Mooncake's
                                   layer-wise prefill, vLLM P2pNcclConnector) */
    ENG_XFER_PER_CHUNK          /* each prefill chunk's KV once that chunk is computed, into KV
                                   the decode side reserved at arrival (SGLang) */
} eng_xfer_mode;

/* The settings a pool of replicas has of its own: the whole deployment's when it is aggregated,
 * each pool's when prefill and decode are disaggregated (the model, its dtypes and
 * max_model_len are always the deployment's). Declared once, here: eng_pool_config is these
 * fields, and eng_config holds the same fields as anonymous members (c->gpu, c->replicas, ...)
 * overlaid by c->pool, so a pool's settings go in and out of a configuration whole. */
#define ENG_POOL_FIELDS                                                                            \
    eng_gpu gpu;                                                                                   \
    double gpu_utilization;           /* fraction of GPU memory the engine may use */              \
    double free_memory_fraction;      /* the KV cache's share of what weights and activations      \
                                         leave of that memory (1: all of it) */                    \
    int32_t block_size;               /* tokens per KV block */                                    \
    int64_t activation_reserve;       /* bytes kept for activations */                             \
    int32_t replicas;                 /* >= 1 */                                                   \
    int32_t tensor_parallel;          /* GPUs splitting each attention and dense layer, >= 1 */    \
    int32_t expert_parallel;          /* GPUs the routed experts are spread over: 1 or TP x DP */  \
    int32_t data_parallel_attention;  /* attention ranks per replica (MoE models), >= 1; GPUs per  \
                                         replica = tensor_parallel x this x pipeline_parallel */   \
    int32_t pipeline_parallel;        /* stages the layers are split over, >= 1 */                 \
    int32_t pipeline_batches;         /* batches in flight through the stages (1..stages; 0: as    \
                                         many as stages) */                                        \
    eng_moe moe;                      /* expert placement and routing skew */                      \
    char router[ENG_ROUTER_NAME_MAX]; /* a name in router.c's registry */                          \
    eng_router_params router_params;                                                               \
    eng_sched_cfg sched;                                                                           \
    eng_cpu_overhead cpu;

typedef struct eng_pool_config {
    ENG_POOL_FIELDS
} eng_pool_config;

typedef struct eng_pd_config {
    int enabled;             /* 0: aggregated; the pool fields below are then unused */
    eng_pool_config pool[2]; /* ENG_POOL_PREFILL, ENG_POOL_DECODE */
    eng_link_kind link;
    double link_bw;    /* bytes/s per GPU per direction; 0 = each side's catalog figure */
    double latency_ns; /* added to every transfer */
    eng_xfer_mode mode;
    int32_t ngroups[2]; /* groups in the prefill and the decode pool (0: one kind of replica,
                           pool[k]); a pool's groups lie in eng_config.groups.group, the
                           prefill pool's first (groups.n stays 0) */
} eng_pd_config;

/* A mixed pool (`replicas: [{gpu, count, tensor_parallel, ...}, ...]`): groups of replicas that
 * differ in GPU or layout behind one router, each group with its own cost model and KV plan
 * (groups.c). */
typedef struct eng_groups_config {
    int32_t n;                             /* 0: one kind of replica (the scalar `replicas`) */
    eng_pool_config group[ENG_MAX_GROUPS]; /* each starts from the deployment's settings */
    double weight[ENG_MAX_GROUPS];         /* a replica's capacity as routers weigh it (0: priced by
                                              the group's cost model, eng_pool_weight) */
} eng_groups_config;

/* A group's keys (relative to eng_config, whose pool fields a group's loading fills). */
extern const eng_key eng_group_keys[];

/* ---- KV offload tiers (offload.c): host memory, local SSD, a remote store behind the GPU cache
 * ---- */
typedef enum eng_tier_kind {
    ENG_TIER_CPU = 0, /* the host's DRAM, over the GPUs' host link (PCIe, NVLink-C2C) */
    ENG_TIER_SSD,     /* local NVMe */
    ENG_TIER_REMOTE,  /* a store shared by the deployment's replicas (Mooncake store, LMCache
                         remote): one copy serves every replica */
    ENG_TIER_KINDS
} eng_tier_kind;

#define ENG_MAX_TIERS 3

typedef struct eng_tier_config {
    eng_tier_kind kind;
    double capacity_gb;    /* GB the tier holds (a replica's; remote: the deployment's); 0:
                              unbounded */
    double bandwidth_gb_s; /* GB/s per GPU, each way, between the tier and the GPUs (0: cpu's
                              default, the catalog's host link) */
    double latency_us;     /* added to every load from it */
} eng_tier_config;

/* When a GPU block is written down to the first tier. */
typedef enum eng_offload_policy {
    ENG_OFFLOAD_WRITE_BACK = 0, /* when the GPU cache evicts it (SGLang HiCache write_back) */
    ENG_OFFLOAD_WRITE_THROUGH   /* as soon as it is computed (vLLM OffloadingConnector, LMCache,
                                   SGLang HiCache write_through) */
} eng_offload_policy;

typedef struct eng_offload_config {
    int32_t ntiers; /* 0: no offload */
    eng_tier_config tier[ENG_MAX_TIERS];
    eng_offload_policy policy;
    int32_t min_load_tokens; /* hits shorter than this are recomputed, not loaded */
} eng_offload_config;

const char *eng_tier_kind_name(eng_tier_kind k);
/* kv_offload's keys (relative to eng_offload_config) and a tier's (relative to
 * eng_tier_config). */
extern const eng_key eng_offload_keys[];
extern const eng_key eng_tier_keys[];

/* memory.mamba_cache_mode: how a model with linear-attention layers caches prefixes. */
enum { ENG_MAMBA_NONE = 0, ENG_MAMBA_ALIGN = 1 };

typedef struct eng_config {
    eng_model model;
    eng_dtype dtype;          /* weights as served; ENG_DTYPE_AUTO = the checkpoint's */
    eng_dtype kv_dtype;       /* KV cache; ENG_DTYPE_AUTO = the checkpoint's (model.kv_dtype) */
    int32_t max_model_len;    /* tokens; 0 = the model's context */
    int32_t mamba_cache_mode; /* ENG_MAMBA_*: prefix caching of a hybrid model (kv_hybrid.c) */
    union {
        struct {
            ENG_POOL_FIELDS
        };
        eng_pool_config pool; /* the same fields, whole */
    };
    int32_t max_run_steps; /* most decode steps run as one event (0: no limit; 1: one
                              event per step, for checking that runs change nothing) */
    int prefix_table_all;  /* 1: a request's own computed blocks go through the prefix cache's
                              table as shared ones do (for checking that keeping them apart
                              changes nothing) */
    eng_spec spec;         /* speculative decoding (method ENG_SPEC_NONE: off) */
    /* disaggregated prefill/decode (pd.enabled): the pools' own settings replace the pool
     * fields above, which are then unused */
    eng_pd_config pd;
    eng_groups_config groups;   /* a mixed pool (groups.n > 0): the groups replace the pool
                                   fields above, which are then unused */
    eng_offload_config offload; /* KV offload tiers behind each replica's GPU cache */
    eng_fleet_cfg fleet;        /* price and power overrides (fleet.h) */
    eng_classes classes;        /* request classes (workload.classes; metrics.h); n 0: none */
} eng_config;

/* Sets the defaults every scenario starts from: the defaults of the settings tables below
 * (0.9 utilisation, 16-token blocks, ...), the checkpoint's dtypes, the orca scheduler. */
void eng_config_defaults(eng_config *c);

/* Settings tables (keys.h) of a deployment, relative to eng_config: replicas and the parallel
 * layout, engine, memory, scheduler, router and cpu_overhead (a prefill or decode pool has the
 * same keys and gpu: eng_pool_keys); and speculative decoding's, relative to eng_spec. */
extern const eng_key eng_deploy_keys[];
extern const eng_key eng_router_keys[]; /* router.c */
extern const eng_key eng_memory_keys[];
extern const eng_key eng_pool_keys[];
extern const eng_key eng_spec_keys[];
extern const eng_key eng_acceptance_keys[];
/* kv_transfer: the link between the pools, relative to eng_pd_config. */
extern const eng_key eng_kv_transfer_keys[];

/* Pools of a configuration: 1 (aggregated), its groups (a mixed pool: every group a pool of
 * its own, one router over them all) or a disaggregated one's prefill pools then decode pools
 * (2, or more where a prefill or decode pool is a list of groups, each a pool of its own behind
 * that pool's one router). */
int eng_config_pools(const eng_config *c);
/* The first decode pool of a disaggregated configuration (pools before it prefill): 1, or the
 * prefill pool's groups. */
int eng_config_decode_pool(const eng_config *c);
/* Where pool p's settings lie in c->groups (a mixed pool's group, or a prefill or decode pool's
 * group), or -1 for a pool of one kind of replica. */
int eng_config_group(const eng_config *c, int p);
/* The configuration pool p's replicas run with: c itself for an aggregated one; for a
 * disaggregated one (or a mixed pool's group p) c with pool p's settings in place of the
 * deployment's. */
void eng_config_pool(const eng_config *c, int p, eng_config *out);
const char *eng_link_kind_name(eng_link_kind k);
/* The latency a transfer over link kind k adds when kv_transfer.latency_us is not given, in us. */
double eng_link_default_latency_us(eng_link_kind k);
const char *eng_xfer_mode_name(eng_xfer_mode m);
/* Per-GPU bandwidth (bytes/s, one direction) of link kind k on GPU g by the catalog: NVLink's
 * link_bw, the NIC's nic_bw (0 when the catalog states none), PCIe's pcie_bw. */
double eng_link_gpu_bw(const eng_gpu *g, eng_link_kind k);

/* The layout and dtypes of a configuration, ENG_DTYPE_AUTO resolved against its model. */
void eng_config_layout(const eng_config *c, eng_layout *out);
eng_dtype eng_config_dtype(const eng_config *c);
eng_dtype eng_config_kv_dtype(const eng_config *c);

/* KV cache sizing of one replica. Per-GPU figures are those of one GPU of the layout (every
 * GPU holds the same share); the block pool is the replica's, summed over its attention ranks.
 *
 * A block is block_size tokens of the layers whose KV grows with the context (full attention,
 * MLA, DeepSeek sparse attention with its index keys, and a drafter's layers), or of the
 * windowed layers when every layer is windowed. As vLLM's hybrid KV cache manager keeps them
 * (see kv.c), a sequence whose context is c holds
 *     full_mul x ceil(c / B) + window_mul x (ceil(c / B) - floor(skipped(c) / B)) + state_blocks
 * blocks (B = block_size): windowed layers free the blocks wholly before their window (sliding)
 * or their current chunk (chunked local attention), and linear-attention layers hold one fixed
 * state per sequence, taken once. */
typedef struct eng_kv_plan {
    int32_t gpus; /* per replica: tensor_parallel x data_parallel_attention x pipeline_parallel */
    int32_t stage_layers;           /* layers of the largest pipeline stage (all: no pipeline) */
    int32_t ranks;                  /* attention ranks (data_parallel_attention) */
    int64_t usable_bytes;           /* per GPU: memory x utilisation */
    int64_t weight_bytes;           /* per GPU */
    int64_t activation_bytes;       /* per GPU */
    int64_t kv_bytes;               /* per GPU: the cache's share of what is left */
    int64_t bytes_per_token;        /* per GPU: full-attention KV (+ index keys) of one token */
    int64_t window_bytes_per_token; /* per GPU: windowed layers' KV of one token */
    int32_t window;                 /* tokens the windowed layers keep (0 = none) */
    int64_t state_bytes;            /* per GPU: linear-attention state of one sequence */
    int32_t kv_heads;               /* KV heads each GPU caches (replicated when TP > them) */
    int64_t model_bytes_per_token;  /* one token's KV on one unsharded copy: what a swap moves */
    int64_t blocks;                 /* per replica: ranks x per-GPU cache / block_bytes */
    int64_t tokens;                 /* per replica: blocks x block_size */
    /* ---- the hybrid layout (see above) ---- */
    int64_t block_bytes;    /* per GPU: one block */
    int32_t full_mul;       /* blocks per block_size tokens of the growing layers: 1, or 0 */
    int32_t window_mul;     /* blocks per block_size tokens the windowed layers hold (0: none) */
    int32_t window_chunked; /* 1: the windowed layers keep aligned chunks of `window` tokens */
    int32_t state_blocks;   /* blocks one sequence's linear-attention state takes */
    int64_t draft_weight_bytes;    /* per GPU: the drafter's weights (in weight_bytes) */
    int64_t draft_bytes_per_token; /* per GPU: the drafter's KV (in bytes_per_token) */
    int64_t model_block_bytes;     /* one block on one unsharded copy: what a swap moves */
} eng_kv_plan;

/* Fills *p; returns -1 with a message when the layout does not divide the model or the weights
 * and reserve do not fit (the message gives the sizes). */
int eng_kv_plan_compute(const eng_config *c, eng_kv_plan *p, sim_err *err);

/* memory.mamba_cache_mode: align (kv_hybrid.c), vLLM's opt-in prefix caching for models with
 * linear-attention layers. The attention block size vLLM raises to hold one layer's state in
 * one page, for c's model and layout: the smallest multiple of 16 tokens whose full-attention KV
 * of one layer holds one linear-attention layer's state on a GPU (0: the model has no such
 * layers, or no full-attention layer). */
int32_t eng_kv_hybrid_block_size(const eng_config *c);
/* Applies mamba_cache_mode to c (and its prefill and decode pools): align raises block_size
 * to eng_kv_hybrid_block_size. Returns 0, or -1 with a message when align is asked of a model
 * without linear-attention layers or of an engine other than vLLM V1. */
int eng_kv_hybrid_apply(eng_config *c, sim_err *err);

/* ---- the workload source: the engine pulls arrivals one at a time ---- */
typedef struct eng_arrival {
    int64_t t;      /* ns, non-decreasing */
    int32_t prompt; /* tokens, >= 1 */
    int32_t output; /* tokens, >= 1 */
    /* content, where identity matters (prefix caching): the prompt as segments whose lengths
     * sum to prompt (copied by the engine; NULL: content shared with no one), and the content
     * id of the output (0: unique) */
    const eng_segment *seg;
    int32_t nseg;
    uint64_t out_id;
    uint64_t tag;     /* handed back to on_done (sessions) */
    uint64_t session; /* the conversation it belongs to (a session id a router may key on),
                         from 1; 0: none */
    /* tokens at the prompt's end that no other request's content holds (a trace row's ids no
     * other replayed row shares): the engine keeps their blocks as the request's own, unhashed;
     * 0: not known (every block of seg goes through the prefix table) */
    int32_t own_tail;
} eng_arrival;

enum { ENG_SRC_OK = 1, ENG_SRC_LATER = 0, ENG_SRC_END = -1, ENG_SRC_ERROR = -2 };

typedef struct eng_source_ops {
    /* Next arrival at or after now: ENG_SRC_OK with *out filled; ENG_SRC_LATER when none is due
     * until a request finishes (closed loop), or, with out->t > now, until out->t or a finish,
     * whichever comes first (sessions: a finish may bring a turn forward); ENG_SRC_END when
     * exhausted; ENG_SRC_ERROR with err set (a bad trace row). */
    int (*next)(void *st, int64_t now, eng_arrival *out, sim_err *err);
    /* Request rq left the system (finished or rejected) at now; optional. */
    void (*on_done)(void *st, int64_t now, const eng_request *rq);
} eng_source_ops;

/* ---- what the engine reports ---- */
typedef struct eng_iter_rec {
    int32_t replica;
    int64_t iter; /* per replica, from 0 */
    int64_t start_ns;
    int64_t cpu_ns;      /* CPU-side time charged to the iteration */
    int64_t gpu_ns;      /* forward pass (and swap traffic) */
    int64_t duration_ns; /* start to the iteration's tokens */
    int32_t num_seqs;
    int32_t prefill_tokens; /* chunk tokens, padding included */
    int32_t decode_tokens;
    int64_t kv_blocks_used;
    int32_t preempted;     /* requests preempted while forming it */
    eng_shape shape;       /* what the predictor was given */
    int64_t output_tokens; /* tokens it emits (a verifying step: 1 to k + 1 per sequence) */
    int64_t draft_ns;      /* the drafter's forward passes (in gpu_ns) */
} eng_iter_rec;

/* How a scheduled span of a request ended. */
typedef enum eng_span_end {
    ENG_SPAN_FINISHED = 0, /* the request finished */
    ENG_SPAN_PREEMPTED,    /* preempted by recompute: its blocks freed, back to waiting */
    ENG_SPAN_SWAPPED,      /* preempted by swap: its blocks moved to the host */
    ENG_SPAN_END_COUNT
} eng_span_end;

const char *eng_span_end_name(eng_span_end e);

/* One scheduled span of a request: from its admission (or swap-in) to its preemption, swap-out
 * or finish. A request never preempted has one span; each preemption ends one and the resume
 * starts the next. */
typedef struct eng_span_rec {
    int64_t req; /* request id */
    int32_t replica;
    int32_t span;      /* 0, 1, ... in the request's order */
    int64_t start_ns;  /* admission or swap-in */
    int64_t decode_ns; /* its prefill (or recompute) done, decoding from here; a swap-in
                          decodes from its start; -1: preempted before its prefill ended */
    int64_t end_ns;    /* preemption, swap-out or finish (as the client sees it) */
    eng_span_end end;
} eng_span_rec;

typedef struct eng_recorder_ops {
    void (*on_request)(void *st, const eng_request *rq);    /* finished or rejected */
    void (*on_iteration)(void *st, const eng_iter_rec *it); /* optional */
    /* Time between two consecutive tokens of one request, count times; optional. */
    void (*on_itl)(void *st, int64_t gap_ns, int64_t count);
    /* A scheduled span ended (a preemption, a swap-out or the finish); called only then, never
     * per token or per step. Optional. */
    void (*on_span)(void *st, const eng_span_rec *s);
} eng_recorder_ops;

typedef struct eng_engine eng_engine;

/* The cost models of a pool's replicas: the target model's, and the drafter's when the pool
 * decodes speculatively (NULL otherwise). An aggregated deployment is one pool. */
typedef struct eng_costs {
    const eng_predictor *target;
    const eng_predictor *draft;
} eng_costs;

/* Creates the engine on ctx. costs (one per pool: one for an aggregated deployment), src and
 * rec are borrowed and must outlive it. Returns NULL with err set on a bad configuration
 * (unknown scheduler or router, the message then lists the valid names; weights that do not
 * fit). */
eng_engine *eng_new(sim_ctx *ctx, const eng_config *cfg, const eng_costs *costs,
                    const eng_source_ops *src, void *src_st, const eng_recorder_ops *rec,
                    void *rec_st, sim_err *err);
/* Runs to completion. Returns 0, or -1 with err set when the source fails. */
int eng_run(eng_engine *e, sim_err *err);
void eng_free(eng_engine *e);

typedef struct eng_totals {
    int64_t arrived, finished, rejected;
    int64_t rejected_by[ENG_REJECT_REASON_COUNT];
    int64_t prompt_tokens, output_tokens; /* of finished requests */
    int64_t iterations, preemptions;
    int64_t first_arrival_ns, last_finish_ns;
    int64_t max_waiting;                /* most requests waiting at once, any replica */
    int64_t waiting_at_end_of_arrivals; /* queue length when the last arrival came */
    int64_t waiting_at_pow2[63];        /* queue length when arrival number 2^k came */
    /* disaggregated prefill/decode (zero otherwise) */
    int64_t transfers;                   /* KV transfers completed */
    double transfer_bytes;               /* their bytes */
    int64_t transfers_held;              /* transfers that waited for decode-side KV or a seat */
    int64_t pool_busy_ns[ENG_POOLS_MAX]; /* per pool: iteration time summed over its replicas */
    int64_t pool_gpu_ns[ENG_POOLS_MAX];  /* per pool: GPU time (forward passes, swaps) likewise */
} eng_totals;
/* Whether the queue was still growing when arrivals ended: the waiting count at the last
 * arrival against the count at the largest power-of-two arrival at or below half of them. A
 * run flagged so has latency percentiles that depend on its length. */
int eng_totals_saturated(const eng_totals *t);
const eng_totals *eng_get_totals(const eng_engine *e);
/* The summary metrics (see metrics.h) into out[ENG_MAX_METRICS]; returns how many. */
int eng_summary(eng_engine *e, eng_metric *out);
/* What one GPU g costs per hour in a deployment with fleet settings f: the scenario's price:
 * override, else the catalog's list price; 0 when neither states one. */
double eng_fleet_gpu_price(const eng_fleet_cfg *f, const eng_gpu *g);
/* The fleet timeline of a finished autoscaled run (fleet.h: eng_fleet_window), in time order,
 * into *out (malloc'd; the caller frees it; NULL when none), and its pools (one, or prefill and
 * decode) with the GPUs of a replica of each into *pools. Returns the windows: 0 when the run
 * has no autoscaler or completed nothing. */
int64_t eng_fleet_timeline(const eng_engine *e, eng_fleet_window **out, eng_fleet_pools *pools);
/* SLOs for goodput (0 = none); set before eng_run. */
void eng_set_slo(eng_engine *e, double ttft_ms, double tpot_ms, double e2e_ms);
const eng_kv_plan *eng_get_kv_plan(const eng_engine *e);
/* Validates every structure (KV conservation, cohort sums, heaps, policy queues); 0 when sound.
 * Called after every event in debug builds. */
int eng_check(const eng_engine *e, char *buf, size_t len);
/* Replica i (0 <= i < replicas), or NULL out of range; owned by the engine. In a
 * disaggregated deployment the prefill pool's replicas come first, then the decode pool's. */
const eng_replica *eng_get_replica(const eng_engine *e, int32_t i);
/* Pools: 1 (aggregated) or 2 (ENG_POOL_PREFILL, ENG_POOL_DECODE). */
int eng_pool_count(const eng_engine *e);
/* The KV cache of one replica of pool p (NULL out of range). */
const eng_kv_plan *eng_get_pool_plan(const eng_engine *e, int p);
/* What replica r's pool does. */
eng_role eng_replica_role(const eng_replica *r);

/* ================= primitives for scheduling policies ================= */

struct eng_chunk {
    eng_request *rq;
    int32_t tokens;  /* prefill tokens this iteration computes */
    int32_t charged; /* tokens charged to the cost (>= tokens: static batching pads) */
};

struct eng_batch {
    int decode; /* 1: every sequence of the cohort decodes one token */
    int32_t nchunks, cap;
    struct eng_chunk *chunks; /* engine-owned, reused across iterations */
    int32_t steps;            /* decode-only batches: the policy would choose this same batch for
                                 this many steps whatever arrives meanwhile (1 by default); the
                                 engine runs them as one event, up to the cohort's next finish */
    int32_t pad_seqs;         /* static batching: finished slots still computed */
    int64_t pad_ctx;          /* their contexts, summed */
    int32_t fixed_steps;      /* decode-only batches: run exactly this many steps without asking
                                 the policy (multi-step scheduling); members that finish on the
                                 way are still computed until the last step (0 or 1: one step) */
    int32_t speculate;        /* decode steps with speculative decoding configured: the draft
                                 tokens each sequence verifies this step (0: none); -1 (the
                                 default) leaves it to the engine's rule: spec.k, or 0 when the
                                 cohort has at least spec.disable_batch sequences */
};

const eng_config *eng_replica_config(const eng_replica *r);
int32_t eng_replica_id(const eng_replica *r);
/* r's slot among the replicas its router routes over, in [0, the nslots its init got): fixed for
 * the run, whatever the replicas ready around it (router.h). */
int32_t eng_replica_slot(const eng_replica *r);
int32_t eng_replica_max_len(const eng_replica *r); /* max_model_len, or the model's context */

/* Load, as routers see it. */
int64_t eng_replica_outstanding(const eng_replica *r);        /* requests here, not yet done */
int64_t eng_replica_outstanding_tokens(const eng_replica *r); /* their prompt + output tokens */
int64_t eng_replica_waiting(const eng_replica *r);            /* requests here, not running */
/* Replica r's capacity as routers weigh it: 1 in a pool of one kind of replica; in a mixed pool
 * its group's weight (given, or priced by its cost model: eng_pool_weight), relative to the
 * first group's. */
double eng_replica_capacity(const eng_replica *r);
/* Whether the replicas routers choose among differ in capacity (a mixed pool). */
int eng_replica_weighed(const eng_replica *r);
double
eng_replica_kv_usage(const eng_replica *r); /* blocks in use / total (cached free excluded) */
/* Tokens of rq's prompt cached on r right now (0 without a prefix cache or content); O(blocks
 * matched). rq's block hashes are computed once, on first use. */
int32_t eng_replica_prefix_match(const eng_replica *r, const eng_request *rq);
/* rq's prompt's full-block hashes (at most max): their count, *out pointing at them (engine-
 * owned, valid while rq is); 0 for a request without content. */
int32_t eng_request_block_hashes(const eng_replica *r, const eng_request *rq, int32_t max,
                                 const uint64_t **out);
/* As eng_request_block_hashes over the whole prompt, but hashing only the blocks another request
 * may hold and the first one after them (a prompt's own tail, eng_arrival.own_tail, is no one
 * else's): returns the prompt's full blocks, *nh the hashes at *out (nh <= the count; 0 and
 * NULL for a request without content). */
int32_t eng_request_shared_hashes(const eng_replica *r, const eng_request *rq, int32_t *nh,
                                  const uint64_t **out);

/* KV blocks. */
int64_t eng_kv_total(const eng_replica *r);
int64_t eng_kv_free(const eng_replica *r);
int32_t eng_kv_block_size(const eng_replica *r);
/* The prefill chunk of n tokens rq starts at `start` with, cut to end at a block boundary as
 * vLLM's memory.mamba_cache_mode align does (kv_hybrid.c; may return 0: rq waits a step); n
 * itself otherwise. */
int64_t eng_kv_align_chunk(const eng_replica *r, const eng_request *rq, int64_t start, int64_t n);
/* The most blocks a sequence of `tokens` tokens holds on its way, its windows, state and
 * speculative lookahead included (ceil(tokens / block size) for a plain model). */
int64_t eng_kv_blocks_for(const eng_replica *r, int64_t tokens);
/* The most tokens whose eng_kv_blocks_for is at most `blocks` (-1: none), when that count grows
 * with the tokens (a layout with no sliding window); -2 when it is not known that it does. */
int64_t eng_kv_tokens_within(const eng_replica *r, int64_t blocks);
/* The blocks a request prefilled elsewhere takes when it joins `running` sequences under
 * max_seqs with its prompt's blocks above `watermark` free blocks (vLLM V0's can_allocate for a
 * disaggregated decode instance), or -1 when it cannot join now. */
int64_t eng_kv_seat_blocks(const eng_replica *r, const eng_request *rq, int64_t running,
                           int64_t max_seqs, int64_t watermark);
/* Reserves blocks for prompt + output up front (reserving policies). 0, or -1 if short. */
int eng_kv_reserve(eng_replica *r, eng_request *rq, int64_t tokens);

/* Prefix caching (kv.c). A policy turns it on in its init; requests then keep their computed
 * full blocks cached (identified by a chained hash of their content), and a waiting request's
 * prefill may start after the longest cached prefix of its prompt. Cached blocks no request
 * holds count as free (eng_kv_free) and are evicted, oldest freed first, when blocks run out.
 * The modes say when a computed block becomes visible to other requests. */
enum {
    ENG_PC_OFF = 0,
    ENG_PC_AT_SCHEDULE,  /* when its chunk is scheduled (vLLM allocate_slots -> cache_blocks) */
    ENG_PC_AT_COMPLETION /* when its chunk has run (SGLang cache_unfinished_req, TRT-LLM) */
};
/* Turns the prefix cache on (or off) for replica r; only before any block is used. */
void eng_prefix_cache_enable(eng_replica *r, int mode);
int eng_prefix_cache_mode(const eng_replica *r);
/* Tokens of a waiting request's next prefill found cached here: whole blocks, at most
 * prefill_target - 1 (the last token is computed again for its logits); *evictable (optional)
 * gets how many of those blocks no request holds. O(blocks matched); the prompt's hashes are
 * computed once per request. 0 without the prefix cache or for a request holding blocks. */
int32_t eng_prefix_match(eng_replica *r, eng_request *rq, int64_t *evictable);
/* Blocks admitting rq with `hit` cached tokens and a first chunk of `tokens` would take from
 * the free ones: the chunk's new blocks plus the hit's blocks no request holds. */
int64_t eng_prefill_hit_blocks_needed(const eng_replica *r, const eng_request *rq, int32_t hit,
                                      int32_t tokens);
/* Whether waiting request rq's KV is being loaded from the offload tiers (kv_offload): the first
 * call for a request the tiers hold more of than the GPU cache starts the load when its blocks
 * fit; a policy that can skips rq until the load is done (the engine wakes the replica then).
 * 0 without offload tiers. */
int eng_kv_loading(eng_replica *r, eng_request *rq);
/* Policies whose engine loads offloaded KV within the step that admits a request (SGLang, TRT-
 * LLM): brings the blocks of rq's prompt the tiers hold past the GPU cache's hit into the GPU
 * cache now (pinned for rq; the step that admits rq waits for them), when they fit. Returns the
 * blocks onboarded (0: none, no tiers, an asynchronous policy, or done before). Call before
 * eng_prefix_match when about to admit rq. */
int32_t eng_kv_onboard(eng_replica *r, eng_request *rq);
/* Admits waiting request rq with its first `hit` tokens taken from the cache (hit <= what
 * eng_prefix_match returns; 0 for none) and a chunk of `tokens` after them. Returns 0, or -1
 * when the blocks are short (nothing changes then). */
int eng_batch_add_prefill_hit(eng_replica *r, eng_batch *b, eng_request *rq, int32_t hit,
                              int32_t tokens);
/* Attaches rq's first hit cached tokens (internal to eng_batch_add_prefill_hit; exposed for
 * policies that reserve before their first chunk). */
void eng_prefix_attach(eng_replica *r, eng_request *rq, int32_t hit);
int64_t eng_prefix_evictions(const eng_replica *r);     /* cached blocks evicted so far */
int64_t eng_prefix_cached_blocks(const eng_replica *r); /* blocks in the cache's table */
/* Of those, the ones keyed by their hash (the rest are requests' own blocks, kept unhashed). */
int64_t eng_prefix_tabled_blocks(const eng_replica *r);

/* Blocks a policy keeps in use on no request's account (static batching keeps a finished
 * sequence's slot, and its memory, until the batch ends). Hold asserts they are free. */
void eng_kv_hold(eng_replica *r, int64_t blocks);
void eng_kv_release(eng_replica *r, int64_t blocks);

/* Admission and batches. */
/* Adds a prefill chunk of `tokens` (charged as `charged`) for rq, allocating the KV blocks it
 * needs unless rq reserved up front. Returns 0, or -1 when blocks are short (nothing changes).
 * Marks rq admitted (RUNNING, timestamps) on its first chunk after waiting. */
int eng_batch_add_prefill(eng_replica *r, eng_batch *b, eng_request *rq, int32_t tokens,
                          int32_t charged);
/* Blocks the chunk would allocate (0 for reserving requests). */
int64_t eng_prefill_blocks_needed(const eng_replica *r, const eng_request *rq, int32_t tokens);
/* The longest chunk of rq's prefill (at most `most` tokens) whose blocks fit in `blocks`
 * (ceil-division by the block size for a plain model; windows and state counted). */
int32_t eng_prefill_tokens_fitting(const eng_replica *r, const eng_request *rq, int32_t most,
                                   int64_t blocks);
/* Includes every cohort sequence as one decode step. The cohort's block needs must be met:
 * eng_decode_blocks_needed() <= eng_kv_free(), else the engine asserts. */
void eng_batch_decode_all(eng_replica *r, eng_batch *b);
/* Ends forming b after its prefill chunks: adds the cohort (when there is one) as
 * eng_batch_decode_all does; returns the sequences b runs, next_batch's answer. */
int eng_batch_finish(eng_replica *r, eng_batch *b);
/* Blocks the next decode step must allocate (sequences crossing a block boundary). */
int64_t eng_decode_blocks_needed(const eng_replica *r);
/* Blocks the next k decode steps must allocate, if no member finished on the way. O(k). */
int64_t eng_decode_blocks_needed_steps(const eng_replica *r, int32_t k);

/* The decode cohort. */
int32_t eng_cohort_size(const eng_replica *r);
int64_t eng_cohort_ctx(const eng_replica *r);    /* sum of contexts */
int64_t eng_replica_steps(const eng_replica *r); /* decode steps run so far */
int32_t eng_rq_generated(const eng_replica *r, const eng_request *rq);
int32_t eng_rq_context(const eng_replica *r, const eng_request *rq); /* tokens in its KV */

/* Preempts a running request (prefilling or decoding): recompute frees its blocks and it must
 * prefill prompt + generated again; swap moves its blocks to the host (cost charged to the next
 * iteration). The policy re-queues it. */
void eng_preempt(eng_replica *r, eng_request *rq, int swap);
/* Brings a swapped request back: allocates its blocks (0, or -1 when short) and returns it to
 * the cohort; the copy is charged to the next iteration. */
int eng_swap_in(eng_replica *r, eng_request *rq);
/* Rejects a waiting request that can never run here, with a reason. */
void eng_reject(eng_replica *r, eng_request *rq, eng_reject_reason why);
/* Asks for a next_batch call at time t if the replica is idle then. */
void eng_replica_wake_at(eng_replica *r, int64_t t);

#endif
