/*
 * presets.c: the engine presets (see preset.h) and where each figure comes from.
 *
 * CPU overhead. Vidur's measured CPU-side times of vLLM per iteration (Agrawal et al., MLSys
 * 2024; data/profiling/.../a100/cpu_overheads.csv: Llama-2-7B, TP 1, A100, batches of 8 to 128)
 * fit, by least squares over their medians, to
 *   schedule + prepare_inputs + sampler                           = 725 us + 27.0 us per sequence
 *   the same + process_model_outputs (detokenise, build outputs)  = 790 us + 42.6 us per sequence
 * vLLM V1 moves output processing into its front-end process (vLLM V1 blog, 2025-01-27), and
 * vLLM 0.6 overlaps it with the next step (async output processor, PR #7049), so those use the
 * first line; V0 before 0.6 and TGI (whose Python model server does the same per-step work; no
 * per-step TGI profile was found) the second. TensorRT-LLM's C++ batch manager leaves about
 * 580 us of host work per iteration exposed even with its overlap scheduler (TensorRT-LLM issue
 * #13957: Llama-3.1-8B FP8, B200, 64 concurrent requests). SGLang overlaps its CPU work with the
 * GPU's by default since 0.4 (the overlap scheduler, LMSYS blog 2024-12-04); no per-step SGLang
 * profile was found, so the vLLM V1 figures stand in for the work it overlaps.
 *
 * Overlapped CPU work in the newer versions. vLLM turned async scheduling on by default in
 * 0.14 (release notes of v0.14.0; PR #27614; vllm/config/vllm.py enables it unless an option
 * is incompatible): the engine core schedules step n+1 while step n runs, so the same work
 * overlaps the GPU's. TensorRT-LLM 1.0 serves from its PyTorch backend by default, whose
 * executor loop overlaps the host work of step n+1 with step n (`disable_overlap_scheduler`
 * defaults to False in tensorrt_llm/llmapi/llm_args.py; PyExecutor._executor_loop_overlap);
 * the 580 us of issue #13957 is what that loop left exposed where the GPU step was shorter than
 * the host's, so it stands in for the host work per iteration, overlapped. That loop reads step
 * n's results right after launching step n+1 (_update_requests waits on step n's decoder event,
 * then _handle_responses streams them), so a step's tokens reach the client when the step ends
 * (cpu_overhead.own_step), not a step later as vLLM 0.6's async output processor delivers them.
 * The same loop formed step n+1 before it read step n: it fetches new requests and schedules
 * (_prepare_and_schedule_batch), launches (_forward_step), then waits on the step before, so a
 * request that arrives while step n runs is first scheduled in step n+2
 * (cpu_overhead.form_ahead). SGLang's overlap loop (python/sglang/srt/managers/scheduler.py,
 * event_loop_overlap: recv_requests, get_next_batch_to_run, run_batch, then
 * process_batch_result of the last batch) and vLLM V1's async scheduling (vllm/v1/engine/
 * core.py, step_with_batch_queue: schedule and launch while the batch queue of two has room,
 * then block on the oldest batch and hand its outputs on; new requests are taken between
 * steps) have the same structure, so their presets set both too. (Before form_ahead was
 * modelled these presets delivered a step late, which on TensorRT-LLM stood in for time outside
 * the GPU steps that is still not modelled: docs/fidelity.md.)
 *
 * The versions aiconfigurator's H100 measurements ran (vLLM 0.15-0.18, SGLang 0.5.x,
 * TensorRT-LLM 1.1-1.3) have presets of their own; none of those engines publishes a per-step
 * CPU profile of these versions, so each borrows the figures above and says so. TensorRT-LLM's
 * overlap scheduler holds a finished request's seat through the next step (sched_trtllm.c).
 */
#include <stdio.h>
#include <string.h>

#include "preset.h"

#define V1_CPU "Vidur cpu_overheads.csv (vLLM, A100, Llama-2-7B): schedule+prepare+sample fit"
#define V0_CPU "Vidur cpu_overheads.csv (vLLM, A100, Llama-2-7B): with output processing"

/* MODEL: TensorRT-LLM's KV cache is kv_cache_config.free_gpu_memory_fraction, 0.9 by default
 * (tensorrt_llm/llmapi/llm_args.py, KvCacheConfig: "Default is 90%"), of the memory a profiling
 * pass leaves free: the whole GPU less the peak of weights, activations and buffers outside
 * torch (tensorrt_llm/_torch/pyexecutor/_util.py, KvCacheCreator._cal_max_memory). So its
 * presets take the whole memory (gpu_utilization 1) and give the cache 90% of what the weights
 * and the activation reserve leave. */
#define TRTLLM_KV_FREE 0.9

/* MODEL: TensorRT-LLM's PyTorch backend (1.0 on) replays a CUDA graph only for a batch of
 * generation requests alone (tensorrt_llm/_torch/pyexecutor/model_engine.py,
 * _maybe_get_cuda_graph: None unless batch.is_generation_only; cuda_graph_runner.py's runner is
 * the DecodingCUDAGraphRunner), so every step holding a context chunk runs its forward eagerly
 * from Python, and its model code reaches its kernels through ops registered with
 * @torch.library.custom_op (tensorrt_llm/_torch/custom_ops/). TensorRT-LLM PR #13149 measures
 * such an op's host time per call at 11.67 us against 4.72 us for a plain PyTorch op (B200,
 * PyTorch 2.10, a clone as the kernel); PR #18645 measures the dispatch layer alone at 9.3-27.9
 * us per call by argument count on an AMD EPYC 7313P. The preset takes 11.67 us a kernel for
 * every kernel of an eager pass (some of its kernels are plain PyTorch ops, so this is an upper
 * figure). 0.19's TensorRT backend runs an engine from C++ and keeps the cost model's figure. */
#define COST_EAGER 0, NULL /* the cost model's host time per eager kernel */
#define TRTLLM_EAGER                                                                               \
    11670.0, "TensorRT-LLM PR #13149: a @torch.library.custom_op call, 11.67 us on the host"

/* MODEL: the fp8 activation quantization before an fp8 GEMM (W8A8). A GEMM on the fp8 tensor
 * cores takes its input in fp8: the 16-bit activation is quantized first, either inside the
 * kernel that produced it or by a kernel of its own, which reads the 16-bit activation and
 * writes it in fp8 (and, block-scaled, an fp32 scale per group). Which inputs get a kernel of
 * their own depends on the engine, its version and the scheme, as their sources show:
 * - TensorRT-LLM's PyTorch backend, per-tensor (ModelOpt FP8, FP8QDQLinearMethod.apply in
 *   tensorrt_llm/_torch/modules/linear.py): static_quantize_e4m3_per_tensor runs before
 *   cublas_scaled_mm whenever the input is not fp8 already. The attention writes its output in
 *   fp8 for o_proj (modules/attention.py: out_scale = o_proj.inv_input_scale when o_proj
 *   has_fp8_qdq), so O has none. Qwen3's decoder layer (models/modeling_qwen3.py, 1.0) runs
 *   plain RMSNorms (modules/rms_norm.py: flashinfer rmsnorm, 16-bit out), so QKV and gate/up
 *   take one each. In 1.0 GatedMLP runs swiglu unquantized before down_proj (modules/
 *   gated_mlp.py); PR #6540 (merged August 2025, after 1.0.0rc3) has swiglu write fp8 with
 *   down_proj's input_scale (modules/swiglu.py, silu_and_mul with scale), so 1.1 on has none
 *   before down. Block-scaled (FP8BlockScalesLinearMethod.apply on Hopper):
 *   fp8_quantize_1x128 before fp8_block_scaling_gemm on every linear, O included.
 * - vLLM V1 compiles the model with Inductor by default, and with Inductor every custom op is
 *   off unless asked for (vllm/config/compilation.py, custom_ops: "Inductor generates (fused)
 *   Triton kernels for disabled custom ops"), QuantFP8 and RMSNorm included (model_executor/
 *   layers/quantization/input_quant_fp8.py): the quantize is fused into the norm before QKV
 *   and gate/up and into SiLU-and-mul before down, per tensor or per 1x128 group alike
 *   (fp8_utils.py W8A8BlockFp8LinearOp runs the same QuantFP8). The attention is a splitting
 *   op, opaque to Inductor, so the quantize before O is a kernel of its own.
 * - SGLang runs without torch.compile by default: its fp8 linears quantize their input
 *   themselves, per tensor with scaled_fp8_quant (SGLang PR #38921: "The split path writes the
 *   activation output and then launches a separate quantization kernel before the down
 *   projection") and per group with sglang_per_token_group_quant_fp8 (layers/quantization/
 *   fp8_utils.py apply_w8a8_block_fp8_linear), before each of the four.
 * vLLM V0, TGI and TensorRT-LLM's TensorRT backend (0.19) were not read: none is priced, as
 * before. MoE experts are not in these masks: the roofline prices the routed experts'
 * quantizes with them (calibration/roofline.c, experts_glue_ns); a shared expert's input
 * quantize is not priced. */
#define AQ_ALL (ENG_AQ_QKV | ENG_AQ_O | ENG_AQ_UP | ENG_AQ_DOWN)
#define AQ_NONE {0, 0}, NULL
#define AQ_VLLM_V1                                                                                 \
    {ENG_AQ_O, ENG_AQ_O},                                                                          \
        "vllm/config/compilation.py (custom ops off under Inductor: the quantize fused into the "  \
        "norm and SiLU-and-mul), the attention a splitting op"
#define AQ_SGLANG                                                                                  \
    {AQ_ALL, AQ_ALL}, "sglang fp8_utils.py: scaled_fp8_quant / sglang_per_token_group_quant_fp8 "  \
                      "before each fp8 linear (no torch.compile by default)"
#define AQ_TRTLLM_10                                                                               \
    {ENG_AQ_QKV | ENG_AQ_UP | ENG_AQ_DOWN, AQ_ALL},                                                \
        "tensorrt_llm/_torch/modules/linear.py: static_quantize_e4m3_per_tensor (attention "       \
        "writes fp8 for O) / fp8_quantize_1x128"
#define AQ_TRTLLM_13                                                                               \
    {ENG_AQ_QKV | ENG_AQ_UP, AQ_ALL},                                                              \
        "tensorrt_llm/_torch/modules/linear.py as 1.0, and gated_mlp.py: swiglu writes fp8 "       \
        "for down_proj (PR #6540); fp8_quantize_1x128 on Hopper"

static const eng_preset presets[] = {
    {"vllm",
     "0.11",
     1,
     "vllm",
     "",
     0.9,
     16,
     {725, 27.0, 0, 0, 0},
     V1_CPU,
     "vLLM V1: token budget for running then waiting requests, chunked prefill, prefix "
     "caching on; defaults from arg_utils per GPU and entry point",
     0,
     COST_EAGER,
     AQ_VLLM_V1},
    {"vllm",
     "0.14",
     0,
     "vllm",
     "async_scheduling=true",
     0.9,
     16,
     {725, 27.0, 1, 1, 1},
     V1_CPU ", overlapped (async scheduling on by default since 0.14, PR #27614)",
     "vLLM V1 0.14: as 0.11, with async scheduling on by default (the CPU work of step n+1 "
     "overlaps step n)",
     0,
     COST_EAGER,
     AQ_VLLM_V1},
    {"vllm",
     "0.18",
     0,
     "vllm",
     "async_scheduling=true",
     0.9,
     16,
     {725, 27.0, 1, 1, 1},
     V1_CPU ", overlapped (async scheduling); borrowed: vLLM publishes no per-step profile of "
            "0.15-0.18",
     "vLLM V1 0.15-0.18: as 0.14 (async scheduling on, the V1 scheduler's token budget and "
     "defaults unchanged for these runs)",
     0,
     COST_EAGER,
     AQ_VLLM_V1},
    {"vllm",
     "0.6",
     0,
     "vllm-v0",
     "num_scheduler_steps=8",
     0.9,
     16,
     {725, 27.0, 0, 0, 0},
     V1_CPU " (output processing async, PR #7049)",
     "vLLM V0 0.6: prefill-first, multi-step scheduling (8 steps, as vLLM PR #7000 "
     "benchmarked it)",
     0,
     COST_EAGER,
     AQ_NONE},
    {"vllm",
     "0.5",
     0,
     "vllm-v0",
     "",
     0.9,
     16,
     {790, 42.6, 0, 0, 0},
     V0_CPU,
     "vLLM V0 0.5: prefill-first, synchronous output processing",
     0,
     COST_EAGER,
     AQ_NONE},
    {"sglang",
     "0.4",
     1,
     "sglang",
     "",
     0.88,
     16,
     {725, 27.0, 1, 1, 1},
     V1_CPU ", overlapped (SGLang overlap scheduler)",
     "SGLang 0.4: radix cache, new-token-ratio admission, retraction; mem_fraction_static "
     "0.88 (TP 1); overlap scheduler on",
     0,
     COST_EAGER,
     AQ_SGLANG},
    {"sglang",
     "0.5",
     0,
     "sglang",
     "",
     0.88,
     16,
     {725, 27.0, 1, 1, 1},
     V1_CPU ", overlapped (SGLang's overlap scheduler); borrowed: SGLang publishes no per-step "
            "CPU profile",
     "SGLang 0.5.x: as 0.4 (overlap scheduler on), mixed chunk off unless "
     "scheduler.enable_mixed_chunk (--enable-mixed-chunk)",
     0,
     COST_EAGER,
     AQ_SGLANG},
    {"trtllm",
     "0.19",
     1,
     "trtllm",
     "",
     1.0,
     32,
     {580, 0, 0, 0, 0},
     "TensorRT-LLM issue #13957: host time exposed per iteration",
     "TensorRT-LLM 0.19: GUARANTEED_NO_EVICT, max_num_tokens 8192, 32-token blocks, block "
     "reuse",
     TRTLLM_KV_FREE,
     COST_EAGER,
     AQ_NONE},
    {"trtllm",
     "1.0",
     0,
     "trtllm",
     "overlap_scheduler=true",
     1.0,
     32,
     {580, 0, 1, 1, 1},
     "TensorRT-LLM issue #13957: the host time its overlap loop left exposed, standing in for "
     "the host work per iteration, overlapped (PyTorch backend's overlap scheduler, on by "
     "default)",
     "TensorRT-LLM 1.0: PyTorch backend, overlap scheduler on (a finished request keeps its "
     "seat while the next step forms); GUARANTEED_NO_EVICT, max_num_tokens 8192, 32-token "
     "blocks, block reuse",
     TRTLLM_KV_FREE,
     TRTLLM_EAGER,
     AQ_TRTLLM_10},
    {"trtllm",
     "1.3",
     0,
     "trtllm",
     "overlap_scheduler=true",
     1.0,
     32,
     {580, 0, 1, 1, 1},
     "TensorRT-LLM issue #13957 (its overlap loop's exposed host time), standing in for the "
     "host work per iteration, overlapped; borrowed across 1.1-1.3, which publish no profile "
     "of "
     "their own",
     "TensorRT-LLM 1.1-1.3: PyTorch backend, overlap scheduler (a finished request keeps its "
     "seat while the next step forms); GUARANTEED_NO_EVICT, max_num_tokens 8192, 32-token "
     "blocks, block reuse",
     TRTLLM_KV_FREE,
     TRTLLM_EAGER,
     AQ_TRTLLM_13},
    /* MODEL: TGI 3's launcher (launcher/src/main.rs resolve_attention) turns prefix caching
     * on unless the model is a VLM, seq2seq, needs paged attention or has LoRA adapters, and
     * its v3 backend chunks prefills (backends/v3/src/backend.rs, queue.rs); with no
     * --max-batch-prefill-tokens the launcher computes the budget (sched_tgi.c) */
    {"tgi",
     "3",
     1,
     "tgi",
     "chunked_prefill=true,prefix_caching=true,max_batch_prefill_tokens=0",
     0.9,
     16,
     {790, 42.6, 0, 0, 0},
     V0_CPU " (stand-in: no TGI profile)",
     "text-generation-inference 3: prefix caching, chunked prefill within "
     "max_batch_prefill_tokens (the launcher's: card FLOP/s over the model's FLOPs per token, "
     "else 4096)",
     0,
     COST_EAGER,
     AQ_NONE},
    {"tgi",
     "2",
     0,
     "tgi",
     "",
     0.9,
     16,
     {790, 42.6, 0, 0, 0},
     V0_CPU " (stand-in: no TGI profile)",
     "text-generation-inference 2: waiting_served_ratio 0.3, max_waiting_tokens 20, "
     "max_batch_prefill_tokens 4096, no prefix caching",
     0,
     COST_EAGER,
     AQ_NONE},
};

const eng_preset *eng_preset_all(size_t *n)
{
    *n = sizeof presets / sizeof presets[0];
    return presets;
}

const eng_preset *eng_preset_find(const char *engine, const char *version)
{
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++) {
        const eng_preset *p = &presets[i];
        if (strcmp(p->engine, engine) == 0 &&
            (version ? strcmp(p->version, version) == 0 : p->is_default))
            return p;
    }
    return NULL;
}

const char *eng_preset_names(char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof presets / sizeof presets[0] && off < len; i++)
        if (presets[i].is_default)
            off +=
                (size_t)snprintf(buf + off, len - off, "%s%s", off ? ", " : "", presets[i].engine);
    return buf;
}

const char *eng_preset_versions(const char *engine, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof presets / sizeof presets[0] && off < len; i++)
        if (strcmp(presets[i].engine, engine) == 0)
            off +=
                (size_t)snprintf(buf + off, len - off, "%s%s", off ? ", " : "", presets[i].version);
    return buf;
}
