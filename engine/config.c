/*
 * config.c: a deployment's configuration: the settings tables (keys.h) of its keys (replicas
 * and the parallel layout, the engine preset, memory, scheduler, cpu_overhead, speculative
 * decoding), and the defaults every scenario starts from, which are those tables' defaults.
 * The router's rows are in router.c, the pools' and kv_transfer's in pd.c.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "engine_int.h"

/* MODEL: vLLM sizes the KV cache after a profiling forward pass whose peak activation memory is
 * typically 1-2 GiB for 7B-13B models at its default 2048 batched tokens; we reserve a stated
 * 1 GiB unless memory.activation_reserve_gb says otherwise. */
static void set_reserve(void *obj, double gib)
{
    ((eng_config *)obj)->activation_reserve = (int64_t)llround(gib * (double)(INT64_C(1) << 30));
}

const eng_key eng_memory_keys[] = {
    {"gpu_utilization", ENG_KEY_NUM, ENG_KEY_LO_OPEN, 0, 1, "", "0.9", NULL,
     "fraction of each GPU's memory the engine may use", ENG_KEY_AT(eng_config, gpu_utilization)},
    /* MODEL: TensorRT-LLM sizes its KV cache as kv_cache_config.free_gpu_memory_fraction of the
     * memory a profiling forward pass leaves free (tensorrt_llm/_torch/pyexecutor/_util.py,
     * KvCacheCreator._cal_max_memory: (total - peak of weights, activations and non-torch
     * buffers) x fraction); vLLM and SGLang give the cache all of what is left (1) */
    {"free_gpu_memory_fraction", ENG_KEY_NUM, ENG_KEY_LO_OPEN, 0, 1, "", "1", NULL,
     "the KV cache's share of the memory the weights and the activation reserve leave of "
     "gpu_utilization's (TensorRT-LLM's kv_cache_config.free_gpu_memory_fraction)",
     ENG_KEY_AT(eng_config, free_memory_fraction)},
    {"block_size", ENG_KEY_INT, ENG_KEY_POW2, 1, 256, "tokens", "16", NULL,
     "tokens per KV cache block", ENG_KEY_AT(eng_config, block_size)},
    {"activation_reserve_gb", ENG_KEY_NUM, 0, 0, 1e9, "GiB", "1", NULL,
     "memory each GPU keeps for activations", .set = set_reserve},
    {"max_model_len", ENG_KEY_INT, ENG_KEY_TOP, 0, INT32_MAX, "tokens", "0", NULL,
     "longest a request's sequence may grow (0: the model's context)",
     ENG_KEY_AT(eng_config, max_model_len)},
    /* MODEL: vLLM CacheConfig.mamba_cache_mode (vllm/config/cache.py): none, or align, which
     * caches a hybrid model's linear-attention state at block boundaries (kv_hybrid.c) */
    {"mamba_cache_mode", ENG_KEY_ENUM, ENG_KEY_TOP, 0, 0, "", "none", "none|align",
     "prefix caching of a model with linear-attention layers: none (off), align (vLLM's "
     "opt-in: blocks raised to hold a layer's state, one state kept per cached block)",
     ENG_KEY_AT(eng_config, mamba_cache_mode)},
    ENG_KEY_END};

static const eng_key cpu_keys[] = {
    {"per_iteration_us", ENG_KEY_NUM, 0, 0, 1e9, "us", "0", NULL,
     "CPU time per iteration: scheduling, input preparation, sampling",
     ENG_KEY_AT(eng_cpu_overhead, per_iteration_us)},
    {"per_seq_us", ENG_KEY_NUM, 0, 0, 1e9, "us", "0", NULL,
     "CPU time per iteration per sequence in the batch", ENG_KEY_AT(eng_cpu_overhead, per_seq_us)},
    {"async", ENG_KEY_BOOL, 0, 0, 0, "", "false", NULL,
     "the CPU work of iteration n+1 overlaps the GPU work of iteration n",
     ENG_KEY_AT(eng_cpu_overhead, async)},
    {"own_step", ENG_KEY_BOOL, 0, 0, 0, "", "false", NULL,
     "with async: a step's tokens reach the client when that step ends (true: the engine reads "
     "them right after launching the next step, TensorRT-LLM's overlap loop) rather than when "
     "the next step ends (false: vLLM 0.6's async output processor)",
     ENG_KEY_AT(eng_cpu_overhead, own_step)},
    {"form_ahead", ENG_KEY_BOOL, 0, 0, 0, "", "false", NULL,
     "with async: step n+1 is formed when step n starts (the engine schedules the next step "
     "before reading the last one's results), so a request arriving during step n is first "
     "scheduled in step n+2 (true: the overlap loops of TensorRT-LLM, SGLang and vLLM V1's "
     "async scheduling) rather than in step n+1",
     ENG_KEY_AT(eng_cpu_overhead, form_ahead)},
    ENG_KEY_END};

static const eng_key engine_keys[] = {
    {"name", ENG_KEY_STR, ENG_KEY_CODE | ENG_KEY_REQUIRED, 0, 0, "", NULL, NULL,
     "vllm, sglang, trtllm or tgi, as `llmsim list engines` prints them", .size = 32},
    {"version", ENG_KEY_STR, ENG_KEY_CODE, 0, 0, "", "(the engine's default version)", NULL,
     "the version whose policy, defaults and CPU overheads the preset follows", .size = 32},
    ENG_KEY_END};

static const eng_key sched_keys[] = {
    {"name", ENG_KEY_STR, ENG_KEY_CODE, 0, 0, "", "orca", NULL,
     "the policy, as `llmsim list schedulers` prints them; its parameters are keys of this map too",
     ENG_KEY_AT(eng_config, sched.name)},
    ENG_KEY_END};

/* MODEL: expert placement as vLLM and SGLang run it: experts by index over the EP ranks
 * unless EPLB is on (--enable-eplb, num_redundant_experts), which places them by measured load
 * with redundant copies of the heaviest (github.com/deepseek-ai/EPLB, eplb.py). The factor it
 * gives the busiest GPU: calibration/placement.c. */
static const eng_key moe_keys[] = {
    {"placement", ENG_KEY_ENUM, 0, 0, 0, "", "static", "static|eplb",
     "static: experts by index over the expert-parallel GPUs; eplb: by load, with redundant "
     "copies",
     ENG_KEY_AT(eng_moe, placement)},
    {"redundant_experts", ENG_KEY_INT, 0, 0, 4096, "experts", "0", NULL,
     "redundant expert slots per MoE layer over the expert-parallel GPUs (eplb)",
     ENG_KEY_AT(eng_moe, redundant)},
    {"skew", ENG_KEY_NUM, 0, 0, 10, "", "0", NULL,
     "Zipf exponent of expert popularity (0: balanced routing)", ENG_KEY_AT(eng_moe, skew)},
    ENG_KEY_END};

const eng_key eng_deploy_keys[] = {
    {"replicas", ENG_KEY_INT, ENG_KEY_CODE, 1, 1 << 20, "", "1", NULL,
     "replicas serving the deployment (in a pool: the pool's); or a list of groups that differ "
     "in GPU or layout, [{gpu, count, tensor_parallel, ...}, ...] (a mixed pool; a prefill or "
     "decode pool's groups start from that pool's settings)",
     ENG_KEY_AT(eng_config, replicas)},
    {"tensor_parallel", ENG_KEY_INT, 0, 1, 1024, "GPUs", "1", NULL,
     "GPUs splitting each attention and dense layer", ENG_KEY_AT(eng_config, tensor_parallel)},
    {"expert_parallel", ENG_KEY_INT, 0, 1, 1024, "GPUs", "1", NULL,
     "GPUs the routed experts are spread over: 1 or tensor_parallel x data_parallel_attention",
     ENG_KEY_AT(eng_config, expert_parallel)},
    {"data_parallel_attention", ENG_KEY_INT, 0, 1, 1024, "ranks", "1", NULL,
     "attention ranks per replica (MoE models); GPUs per replica = tensor_parallel x this",
     ENG_KEY_AT(eng_config, data_parallel_attention)},
    {"pipeline_parallel", ENG_KEY_INT, 0, 1, 64, "stages", "1", NULL,
     "stages the layers are split over, each on tensor_parallel x data_parallel_attention GPUs",
     ENG_KEY_AT(eng_config, pipeline_parallel)},
    {"pipeline_batches", ENG_KEY_INT, 0, 0, 64, "batches", "0", NULL,
     "batches in flight through the stages, 1 to pipeline_parallel (0: pipeline_parallel)",
     ENG_KEY_AT(eng_config, pipeline_batches)},
    {"moe", ENG_KEY_MAP, 0, 0, 0, "", NULL, NULL,
     "routed experts: {placement: static|eplb, redundant_experts, skew}",
     ENG_KEY_AT(eng_config, moe), .sub = moe_keys},
    {"engine", ENG_KEY_MAP, ENG_KEY_SCALAR | ENG_KEY_CODE, 0, 0, "", "(none)", NULL,
     "an engine preset: NAME or {name, version}; its policy, defaults and CPU overheads, under "
     "the scenario's own keys",
     ENG_KEY_NOWHERE, .sub = engine_keys},
    {"memory", ENG_KEY_MAP, 0, 0, 0, "", NULL, NULL, "the KV cache's memory", ENG_KEY_NOWHERE,
     .sub = eng_memory_keys},
    {"scheduler", ENG_KEY_MAP, ENG_KEY_CODE, 0, 0, "", NULL, NULL,
     "the scheduling policy and its parameters", ENG_KEY_NOWHERE, .sub = sched_keys},
    {"router", ENG_KEY_MAP, ENG_KEY_SCALAR | ENG_KEY_CODE, 0, 0, "", NULL, NULL,
     "how requests are spread over the replicas: NAME or {name, ...}", ENG_KEY_NOWHERE,
     .sub = eng_router_keys},
    {"cpu_overhead", ENG_KEY_MAP, 0, 0, 0, "", NULL, NULL,
     "CPU time per iteration (an engine preset sets it)", ENG_KEY_AT(eng_config, cpu),
     .sub = cpu_keys},
    ENG_KEY_END};

void eng_config_defaults(eng_config *c)
{
    memset(c, 0, sizeof *c);
    c->dtype = ENG_DTYPE_AUTO;
    c->kv_dtype = ENG_DTYPE_AUTO;
    eng_keys_defaults(eng_deploy_keys, c);
    eng_keys_defaults(eng_router_keys, c);
    eng_keys_defaults(sched_keys, c);
    eng_fleet_defaults(&c->fleet);
}

/* ---------------- speculative decoding ---------------- */

static void set_method(void *obj, double index)
{
    ((eng_spec *)obj)->method = (eng_spec_method)((int)index + 1);
}

const eng_key eng_acceptance_keys[] = {
    {"curve", ENG_KEY_STR, ENG_KEY_CODE, 0, 0, "", NULL, NULL,
     "a measured acceptance curve: a name in the shared curves folder or a path", .size = 256},
    {"thinking", ENG_KEY_ENUM, ENG_KEY_CODE, 0, 0, "", "(the curve's only series)", "on|off",
     "the curve's series with reasoning on or off", ENG_KEY_NOWHERE},
    {"length", ENG_KEY_NUM, ENG_KEY_CODE, 0, INFINITY, "tokens", NULL, NULL,
     "mean acceptance length: 1 (nothing accepted) to num_speculative_tokens + 1", ENG_KEY_NOWHERE},
    {"rate", ENG_KEY_NUM, ENG_KEY_CODE, 0, 1, "", NULL, NULL,
     "per-position acceptance rate (draft j accepted if j - 1 was, at this rate)", ENG_KEY_NOWHERE},
    {"distribution", ENG_KEY_ENUM, ENG_KEY_CODE, 0, 0, "", "(iid for a rate, else min_variance)",
     "min_variance|iid",
     "how a mean length becomes each step's accepted tokens (min_variance: floor or ceil)",
     ENG_KEY_NOWHERE},
    {"classes", ENG_KEY_INT, 0, 1, ENG_SPEC_MAX_CLASSES, "", "8", NULL,
     "acceptance classes: requests of a class accept alike in a step (1: the batch as one)",
     ENG_KEY_AT(eng_spec, classes)},
    ENG_KEY_END};

const eng_key eng_spec_keys[] = {
    {"method", ENG_KEY_ENUM, ENG_KEY_REQUIRED, 0, 0, "", NULL, "draft|eagle|eagle3|mtp|ngram",
     "the drafter", .set = set_method},
    {"num_speculative_tokens", ENG_KEY_INT, ENG_KEY_REQUIRED, 0, ENG_SPEC_MAX_K, "tokens", NULL,
     NULL, "draft tokens per step; 0: off, a sweep's baseline", ENG_KEY_AT(eng_spec, k)},
    {"draft_model", ENG_KEY_STR, ENG_KEY_CODE, 0, 0, "", NULL, NULL,
     "method draft, eagle or eagle3: the drafter's catalog name or config.json", .size = 512},
    {"mtp_layers", ENG_KEY_INT, ENG_KEY_CODE, 1, 16, "", "1", NULL,
     "method mtp: the checkpoint's MTP layers run per draft", ENG_KEY_NOWHERE},
    {"acceptance", ENG_KEY_MAP, ENG_KEY_CODE, 0, 0, "", NULL, NULL,
     "{curve: NAME, thinking: on|off}, {length: AL} or {rate: R} (required unless "
     "num_speculative_tokens is 0)",
     ENG_KEY_NOWHERE, .sub = eng_acceptance_keys},
    {"disable_by_batch_size", ENG_KEY_INT, 0, 0, 1 << 30, "sequences", "0", NULL,
     "steps with at least this many decoding sequences do not speculate (0: never off)",
     ENG_KEY_AT(eng_spec, disable_batch)},
    ENG_KEY_END};
