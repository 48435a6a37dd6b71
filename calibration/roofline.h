/*
 * roofline.h: the built-in roofline cost predictor, from datasheets, not measurements.
 *
 * Each kernel of a forward pass costs a smooth maximum of its class's floor, FLOPs / (peak x
 * efficiency) and bytes / (bandwidth x efficiency); per-layer operators are summed over the
 * layers of each kind (full, windowed or sparse, linear attention; dense or MoE MLP), then
 * the LM head and sampling for the sequences that emit a token. Tensor parallelism adds
 * all-reduces, expert parallelism with attention data parallelism dispatch and combine. The
 * constants are named in roofline.c, each with its source or its fit on development data.
 */
#ifndef CAL_ROOFLINE_H
#define CAL_ROOFLINE_H

#include <stdint.h>

#include "model.h"
#include "predictor.h"
#include "sim.h"

/* How a model is served: precisions, layout, and what the cost model takes from the scenario. */
typedef struct cal_serving {
    eng_dtype dtype;        /* weights; ENG_DTYPE_AUTO = the checkpoint's */
    eng_dtype kv_dtype;     /* KV cache; ENG_DTYPE_AUTO = the checkpoint's */
    eng_layout layout;      /* tensor, expert and attention-data parallelism, each >= 1; expert
                               placement and routing skew (layout.moe) */
    int32_t max_len;        /* longest sequence served (tokens); 0 = the model's context */
    int32_t capped_sums;    /* 1: the engine fills eng_shape's capped sums (eng_shape_set_cap,
                               eng_shape_add_*_capped), so windows and DeepSeek sparse attention
                               whose cap can bind are priced; 0: they are refused */
    char engine[16];        /* whose kernels run the pass: "vllm", "sglang", "trtllm"; "" = vllm */
    double eager_launch_ns; /* host time to launch a kernel in a pass without a CUDA graph (ns);
                               0 = the roofline's own figure (EAGER_LAUNCH_NS) */
    uint32_t act_quant[ENG_AQ_SCHEMES]; /* the inputs of fp8 GEMMs the engine quantizes by a
                                           kernel of their own (ENG_AQ_* bits, engine/presets.c),
                                           per tensor and per group; 0 = none priced */
} cal_serving;

/* Weights in dt, the checkpoint's KV dtype, tensor parallelism tp, no other parallelism. */
cal_serving cal_serving_tp(eng_dtype dt, int tp);

/*
 * 0 when the roofline prices model m served as s; -1 with a message in why naming what it does
 * not price: windowed layers or DeepSeek sparse attention whose cap is shorter than the longest
 * sequence while the engine does not supply the capped sums (s->capped_sums == 0), an engine
 * name it does not know, a negative skew. llmsim refuses such a model rather than price it as a
 * dense one.
 */
int cal_roofline_priced(const eng_model *m, const cal_serving *s, char *why, size_t len);

/*
 * Builds a roofline predictor for model m on GPU g served as s into *out (ops, state, label
 * "roofline <gpu>[ tp<T>] <dtype>[ kv <kv dtype>] (not measured)"). The model and GPU are
 * copied. Each part's weights are read in the bytes the dtype gives it (eng_model_part_bytes)
 * and multiplied on the tensor cores eng_precision chooses (fp8, fp4, or 16-bit for
 * weight-only dtypes and unquantized parts); KV bytes follow the KV dtype. Returns 0, or -1
 * with err set when: a layout degree is below 1 or does not divide the model, the model or GPU
 * has a non-positive size, the dtype cannot run on the GPU (fp8 without fp8 tensor cores: the
 * message names the GPU), or cal_roofline_priced refuses the model. Free with
 * cal_predictor_free.
 */
int cal_roofline_new(const eng_model *m, const eng_gpu *g, const cal_serving *s, eng_predictor *out,
                     sim_err *err);

/* Releases a predictor's state through its ops' fini and clears *p. NULL and an empty predictor
 * are allowed. */
void cal_predictor_free(eng_predictor *p);

/* The roofline time of one operator class over a pass of shape s, for reports and tests:
 * per-layer operators summed over the layers. op is a name as in `llmsim profile show`
 * ("qkv_proj", "attn_prefill", ..., "lm_head", "sample", "allreduce", "moe_router",
 * "moe_experts", "moe_shared", "all2all", "dsa_indexer", "linear_attn"). Returns ns, or -1
 * when p is not a roofline predictor or op is unknown. */
double cal_roofline_op_ns(const eng_predictor *p, const eng_shape *s, const char *op);

/* The roofline time of one operator of ONE layer at a profile's shape coordinates (see
 * profile.h: x = tokens for linear and elementwise operators and embed; attn_prefill: one
 * sequence, x chunk tokens after y cached; attn_decode: x sequences of y cached tokens each,
 * the new one included; allreduce: x = bytes, NCCL's ring), the way `validate --ops` compares
 * it with measured points. op is a profile operator index (0..CAL_PROFILE_OPS-1). Returns ns,
 * or -1 when p is not a roofline predictor, op is out of range or not priced alone (sample,
 * send_recv). */
double cal_roofline_point_ns(const eng_predictor *p, int op, double x, double y);

/* The all-reduce time of `bytes` over the predictor's tensor-parallel group, in ns (-1 when p
 * is not a roofline predictor): with nccl 0 as the engine runs it (a custom all-reduce for
 * small messages on NVLink), with nccl 1 as NCCL's ring (what network tables measure). */
double cal_roofline_allreduce_ns(const eng_predictor *p, double bytes, int nccl);

#endif
