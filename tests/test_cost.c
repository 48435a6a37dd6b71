/* test_cost.c: the roofline on today's models: the capped sums of a shape against brute force,
 * MoE (experts touched, expert parallelism, routing skew, the all-to-all of data-parallel
 * attention), MLA's absorbed decode on the latent cache, DeepSeek sparse attention (attention
 * capped at the top-k, the indexer reading every key), gated DeltaNet (a decode step that does
 * not grow with the context), windows priced through the capped sums, and the per-operator
 * entry point `validate --ops` uses. Properties, not numbers: each would fail if the feature
 * were priced as a dense model. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "catalog.h"
#include "kernels.h"
#include "profile.h"
#include "models_util.h"
#include "roofline.h"
#include "test_main.h"

static eng_predictor make(const eng_model *m, const char *gpu, cal_serving s)
{
    return roofline_of(m, gpu, &s);
}

static cal_serving layout(eng_dtype dt, int tp, int dp, int ep)
{
    cal_serving s = cal_serving_tp(dt, tp);
    s.layout.dp = dp;
    s.layout.ep = ep;
    return s;
}

/* n decodes of context ctx each (capped at the model's cap when it has one), all emitting. */
static eng_shape decodes(const eng_model *m, int64_t n, int64_t ctx)
{
    eng_shape s = {0};
    int32_t ch, cap = eng_shape_cap(m, &ch);
    eng_shape_set_cap(&s, cap, ch);
    int64_t c = cap > 0 ? (ch ? ctx % (cap + 1) : (ctx < cap ? ctx : cap)) : ctx;
    eng_shape_add_decodes_capped(&s, n, n * ctx, n * c);
    s.emit_seqs = (int32_t)n;
    return s;
}

static double step(const eng_predictor *p, const eng_shape *s)
{
    return (double)p->ops->iteration_ns(p->st, s);
}

/* ---------------- the shape's capped sums ---------------- */

/* Brute force: a chunk of q after c, each query at position p seeing min(p + 1, w) keys of a
 * sliding window, or (p mod w) + 1 keys of aligned chunks; keys read = distinct keys touched. */
static void brute(int64_t q, int64_t c, int64_t w, int chunked, double *pairs, double *keys)
{
    int64_t lo = INT64_MAX;
    *pairs = 0;
    for (int64_t p = c; p < c + q; p++) {
        int64_t first = chunked ? p / w * w : (p - w + 1 > 0 ? p - w + 1 : 0);
        *pairs += (double)(p - first + 1);
        if (first < lo)
            lo = first;
    }
    *keys = (double)(c + q - lo);
}

static void test_capped_sums(void **state)
{
    const int64_t ws[] = {1, 7, 128, 4096};
    const int64_t qs[] = {1, 5, 127, 128, 129, 1000, 5000};
    const int64_t cs[] = {0, 1, 100, 127, 128, 4095, 4096, 10000};
    for (int chunked = 0; chunked < 2; chunked++)
        for (size_t i = 0; i < 4; i++)
            for (size_t j = 0; j < 7; j++)
                for (size_t k = 0; k < 8; k++) {
                    eng_shape s = {0};
                    eng_shape_set_cap(&s, (int32_t)(ws[i] - 1), chunked);
                    eng_shape_add_prefill_capped(&s, qs[j], cs[k]);
                    double pairs, keys;
                    brute(qs[j], cs[k], ws[i], chunked, &pairs, &keys);
                    if (ws[i] == 1) /* cap 0: no cap, the plain sums stand */
                        continue;
                    if (s.prefill_pairs_capped != pairs || s.prefill_kv_capped != keys)
                        fail_msg("w %lld q %lld c %lld chunked %d: %g/%g, want %g/%g",
                                 (long long)ws[i], (long long)qs[j], (long long)cs[k], chunked,
                                 s.prefill_pairs_capped, s.prefill_kv_capped, pairs, keys);
                    /* never more than the uncapped sums */
                    assert_true(s.prefill_pairs_capped <= s.prefill_pairs);
                    assert_true(s.prefill_kv_capped <= s.prefill_kv);
                }
    /* the caps of the model families */
    int32_t ch;
    eng_model g2 = catalog_model("gemma-2-9b"), l4 = catalog_model("llama-4-scout"),
              ds = config_model(dsv32);
    assert_int_equal(eng_shape_cap(&g2, &ch), 4095);
    assert_int_equal(ch, 0);
    assert_int_equal(eng_shape_cap(&l4, &ch), 8191);
    assert_int_equal(ch, 1);
    assert_int_equal(eng_shape_cap(&ds, &ch), 2047);
    eng_model l = catalog_model("llama-3-8b");
    assert_int_equal(eng_shape_cap(&l, &ch), 0);
}

/* ---------------- MoE ---------------- */

static void test_moe_experts_touched(void **state)
{
    /* Qwen3-30B-A3B: 128 experts, top-8. One token touches 8 experts' weights; 1024 tokens
     * touch all of them: the experts' time at batch 1024 is far below 1024 x batch 1 (weights
     * are read once) and above the batch-1 time by less than E / k = 16 */
    eng_model m = catalog_model("qwen3-30b-a3b");
    eng_predictor p = make(&m, "h100-sxm", cal_serving_tp(ENG_BF16, 1));
    eng_shape one = decodes(&m, 1, 100), many = decodes(&m, 64, 100);
    double e1 = cal_roofline_op_ns(&p, &one, "moe_experts");
    double e64 = cal_roofline_op_ns(&p, &many, "moe_experts");
    print_message("qwen3-30b-a3b h100: experts at 1 token %.3f ms, 64 tokens %.3f ms\n", e1 / 1e6,
                  e64 / 1e6);
    assert_true(e1 > 0);
    /* 64 tokens touch 1 - (1 - 1/16)^64 = 98.4% of the experts: close to 16x the weights */
    assert_true(e64 > 10 * e1 && e64 < 17 * e1);
    /* the dense layers are priced too: a dense MLP never runs in an all-MoE model */
    assert_true(cal_roofline_op_ns(&p, &many, "mlp_up_gate") == 0);
    assert_true(cal_roofline_op_ns(&p, &many, "moe_router") > 0);
    /* no shared experts in Qwen3 MoE, and no all-to-all without attention data parallelism */
    assert_true(cal_roofline_op_ns(&p, &many, "moe_shared") == 0);
    assert_true(cal_roofline_op_ns(&p, &many, "all2all") == 0);
    cal_predictor_free(&p);
}

/* The MoE step time falls as expert parallelism spreads the experts over more GPUs. */
static void test_moe_expert_parallel(void **state)
{
    const char *names[] = {"qwen3-30b-a3b", "mixtral-8x7b", "deepseek-v3"};
    const char *gpus[] = {"h100-sxm", "h200", "b200"};
    for (int k = 0; k < 3; k++) {
        eng_model m = catalog_model(names[k]);
        double prev_e = 0, prev_step = 0;
        eng_dtype dt = k == 2 ? ENG_FP8 : ENG_BF16;
        for (int ep = k == 2 ? 4 : 1; ep <= 8; ep *= 2) {
            if (m.experts % ep)
                continue;
            eng_predictor p = make(&m, gpus[k], layout(dt, 1, ep, ep));
            eng_shape s = decodes(&m, 256, 2000);
            double e = cal_roofline_op_ns(&p, &s, "moe_experts"), t = step(&p, &s);
            print_message("%s on %d x %s (dp%d ep%d): experts %.3f ms, step %.3f ms\n", names[k],
                          ep, gpus[k], ep, ep, e / 1e6, t / 1e6);
            if (prev_e > 0) {
                assert_true(e < prev_e);
                assert_true(t < prev_step);
            }
            prev_e = e;
            prev_step = t;
            cal_predictor_free(&p);
        }
    }
}

/* A prefill of q tokens (compute-bound experts) plus n decodes of context ctx. */
static eng_shape mixed(const eng_model *m, int64_t q, int64_t n, int64_t ctx)
{
    eng_shape s = decodes(m, n, ctx);
    eng_shape_add_prefill(&s, q, 0);
    s.emit_seqs++;
    return s;
}

static void test_moe_skew_and_all2all(void **state)
{
    eng_model m = catalog_model("deepseek-v3");
    cal_serving bal = layout(ENG_FP8, 1, 8, 8), sk = bal, sk2 = bal;
    sk.layout.moe.skew = 0.5;
    sk2.layout.moe.skew = 1.2;
    eng_predictor pb = make(&m, "h200", bal), ps = make(&m, "h200", sk),
                  ps2 = make(&m, "h200", sk2);
    assert_non_null(strstr(ps.label, "skew 0.5"));
    /* 16k prefill tokens: the experts are compute-bound, the busiest GPU's share sets the time */
    eng_shape s = mixed(&m, 16384, 64, 1000);
    double eb = cal_roofline_op_ns(&pb, &s, "moe_experts");
    double es = cal_roofline_op_ns(&ps, &s, "moe_experts");
    double es2 = cal_roofline_op_ns(&ps2, &s, "moe_experts");
    print_message("deepseek-v3 dp8 ep8 h200, 16k prefill tokens: experts balanced %.3f, skew "
                  "0.5 %.3f, skew 1.2 %.3f ms\n",
                  eb / 1e6, es / 1e6, es2 / 1e6);
    assert_true(es > 1.1 * eb && es2 > 1.1 * es);
    /* dispatch and combine over NVLink: present with data-parallel attention, larger when
     * the busiest GPU receives more */
    double ab = cal_roofline_op_ns(&pb, &s, "all2all"),
           as = cal_roofline_op_ns(&ps2, &s, "all2all");
    assert_true(ab > 0 && as >= ab);
    /* without attention data parallelism TP8 + EP8 reduces over the TP group instead */
    eng_predictor pt = make(&m, "h200", layout(ENG_FP8, 8, 1, 8));
    assert_true(cal_roofline_op_ns(&pt, &s, "all2all") == 0);
    assert_true(cal_roofline_op_ns(&pt, &s, "allreduce") > 0);
    /* skew 0 is the balanced predictor exactly */
    cal_serving zero = bal;
    zero.layout.moe.skew = 0;
    eng_predictor pz = make(&m, "h200", zero);
    assert_true(step(&pz, &s) == step(&pb, &s));
    cal_predictor_free(&pb);
    cal_predictor_free(&ps);
    cal_predictor_free(&ps2);
    cal_predictor_free(&pt);
    cal_predictor_free(&pz);
}

static void test_data_parallel_attention(void **state)
{
    /* DP8 splits the batch over 8 attention ranks: 256 decodes cost each rank's attention what
     * 32 cost one GPU holding the whole model (the roofline does not check that it fits) */
    eng_model m = catalog_model("deepseek-v3");
    eng_predictor d8 = make(&m, "h200", layout(ENG_FP8, 1, 8, 8));
    eng_predictor d1 = make(&m, "h200", layout(ENG_FP8, 1, 1, 1));
    eng_shape s8 = decodes(&m, 256, 8000), s1 = decodes(&m, 32, 8000);
    double a8 = cal_roofline_op_ns(&d8, &s8, "attn_decode");
    double a1 = cal_roofline_op_ns(&d1, &s1, "attn_decode");
    assert_true(a8 > 0 && a8 > a1 - 1 && a8 < a1 + 1);
    double q8 = cal_roofline_op_ns(&d8, &s8, "qkv_proj"),
           q1 = cal_roofline_op_ns(&d1, &s1, "qkv_proj");
    assert_true(q8 > q1 - 1 && q8 < q1 + 1);
    /* the experts see every rank's tokens: more than the single GPU's 32 */
    assert_true(cal_roofline_op_ns(&d8, &s8, "moe_experts") <
                8 * cal_roofline_op_ns(&d1, &s1, "moe_experts"));
    cal_predictor_free(&d8);
    cal_predictor_free(&d1);
}

/* ---------------- MLA and DeepSeek sparse attention ---------------- */

static void test_mla_decode_reads_latent(void **state)
{
    /* DeepSeek-V3 TP8 on H200, one sequence at 100k tokens: decode attention reads the latent
     * (576 values x 2 bytes per token and layer) once for all heads: at least that at the
     * bandwidth, and far less than full MHA K and V for 16 heads of 192 + 128 would read */
    eng_model m = catalog_model("deepseek-v3");
    eng_predictor p = make(&m, "h200", cal_serving_tp(ENG_FP8, 8));
    eng_gpu g;
    cal_gpu_find("h200", &g);
    eng_shape s = decodes(&m, 1, 100000);
    double a = cal_roofline_op_ns(&p, &s, "attn_decode");
    double latent = 61.0 * 100001 * 576 * 2 / g.mem_bw * 1e9;
    double mha = 61.0 * 100001 * 16 * (192 + 128) * 2 / g.mem_bw * 1e9;
    print_message("deepseek-v3 tp8 h200, 1 x 100k decode: attention %.3f ms (latent read at "
                  "full bandwidth %.3f ms, expanded MHA %.3f ms)\n",
                  a / 1e6, latent / 1e6, mha / 1e6);
    assert_true(a > latent && a < 0.5 * mha);
    /* prefill expands the latents (kv_b_proj) and runs head size 192: a 4k prefill costs more
     * attention FLOPs per pair than decode's absorbed form per pair would at 16 heads */
    eng_shape pf = {0};
    eng_shape_add_prefill(&pf, 4096, 0);
    pf.emit_seqs = 1;
    assert_true(cal_roofline_op_ns(&p, &pf, "attn_prefill") > 0);
    cal_predictor_free(&p);
}

/* An operator's time for n decodes (decodes()) at a short and at a long context, in ns. */
typedef struct growth {
    double at_short, at_long;
} growth;

static growth op_growth(const eng_predictor *p, const eng_model *m, int64_t n, int64_t short_ctx,
                        int64_t long_ctx, const char *op)
{
    eng_shape a = decodes(m, n, short_ctx), b = decodes(m, n, long_ctx);
    return (growth){cal_roofline_op_ns(p, &a, op), cal_roofline_op_ns(p, &b, op)};
}

static void test_dsa(void **state)
{
    eng_model m = config_model(dsv32);
    cal_serving s = cal_serving_tp(ENG_BF16, 8);
    s.capped_sums = 1;
    eng_predictor p = make(&m, "h200", s);
    /* beyond the top-2048 keys, attention stops growing while the indexer keeps reading every
     * key: from 16k to 128k of context the indexer grows several fold (its projections do
     * not), attention stays flat */
    growth at = op_growth(&p, &m, 32, 16000, 128000, "attn_decode"),
           ix = op_growth(&p, &m, 32, 16000, 128000, "dsa_indexer");
    print_message("deepseek-v3.2 tp8 h200, 32 decodes: attention %.3f -> %.3f ms, indexer "
                  "%.3f -> %.3f ms (16k -> 128k)\n",
                  at.at_short / 1e6, at.at_long / 1e6, ix.at_short / 1e6, ix.at_long / 1e6);
    assert_true(at.at_long == at.at_short);
    assert_true(ix.at_long > 3 * ix.at_short);
    /* the same shapes without a cap (a cost model that ignored it) would grow attention */
    eng_shape c = {0};
    eng_shape_add_decodes(&c, 32, 32 * 128000);
    c.emit_seqs = 32;
    assert_true(cal_roofline_op_ns(&p, &c, "attn_decode") > 3 * at.at_long);
    cal_predictor_free(&p);
}

/* ---------------- linear attention and windows ---------------- */

static void test_linear_attention(void **state)
{
    /* Qwen3.5: 45 gated DeltaNet layers of 60. Their cost does not depend on the context; the
     * 15 full-attention layers' does. */
    eng_model m = config_model(qwen35);
    eng_predictor p = make(&m, "h200", cal_serving_tp(ENG_BF16, 8));
    growth lin = op_growth(&p, &m, 64, 1000, 100000, "linear_attn"),
           full = op_growth(&p, &m, 64, 1000, 100000, "attn_decode");
    print_message("qwen3.5 tp8 h200, 64 decodes: linear attention %.3f ms at 1k and 100k; full "
                  "attention %.3f -> %.3f ms\n",
                  lin.at_short / 1e6, full.at_short / 1e6, full.at_long / 1e6);
    assert_true(lin.at_short > 0 && lin.at_short == lin.at_long);
    assert_true(full.at_long > 10 * full.at_short);
    cal_predictor_free(&p);
}

static void test_windows(void **state)
{
    /* Gemma-2-9B: 21 of 42 layers keep a 4,096-token window. With the engine's capped sums,
     * decode at 64k costs less than the same shape priced without the cap, and more than at
     * 4k (the full layers still grow). */
    eng_model m = catalog_model("gemma-2-9b");
    cal_serving s = cal_serving_tp(ENG_BF16, 1);
    s.capped_sums = 1;
    eng_predictor p = make(&m, "h200", s);
    eng_shape capped = decodes(&m, 16, 65536), small = decodes(&m, 16, 4096);
    eng_shape plain = {0};
    eng_shape_add_decodes(&plain, 16, 16 * 65536);
    plain.emit_seqs = 16;
    double tc = cal_roofline_op_ns(&p, &capped, "attn_decode");
    double tp = cal_roofline_op_ns(&p, &plain, "attn_decode");
    double ts = cal_roofline_op_ns(&p, &small, "attn_decode");
    assert_true(tc < 0.6 * tp && tc > ts);
    /* prefill: a 32k chunk's capped layers see at most 4,096 keys per query */
    eng_shape a = {0}, b = {0};
    int32_t ch, cap = eng_shape_cap(&m, &ch);
    eng_shape_set_cap(&a, cap, ch);
    eng_shape_add_prefill_capped(&a, 32768, 0);
    eng_shape_add_prefill(&b, 32768, 0);
    a.emit_seqs = b.emit_seqs = 1;
    assert_true(cal_roofline_op_ns(&p, &a, "attn_prefill") <
                0.7 * cal_roofline_op_ns(&p, &b, "attn_prefill"));
    cal_predictor_free(&p);
}

/* ---------------- precision of the parts ---------------- */

static void test_fp8_lm_head_16bit(void **state)
{
    /* fp8 weights (online, as vLLM's --quantization fp8 and FP8 checkpoints ship them) leave
     * the LM head in 16 bits: its time at decode is the bf16 model's, while the projections
     * read half the bytes */
    eng_model m = catalog_model("llama-3-8b");
    eng_predictor b = make(&m, "h100-sxm", cal_serving_tp(ENG_BF16, 1));
    eng_predictor f = make(&m, "h100-sxm", cal_serving_tp(ENG_FP8, 1));
    eng_shape s = decodes(&m, 8, 1000);
    assert_true(cal_roofline_op_ns(&f, &s, "lm_head") == cal_roofline_op_ns(&b, &s, "lm_head"));
    assert_true(cal_roofline_op_ns(&f, &s, "mlp_up_gate") <
                0.7 * cal_roofline_op_ns(&b, &s, "mlp_up_gate"));
    /* DeepSeek-V3's fp8 checkpoint: its LM head is not among the quantized parts either */
    eng_model d = catalog_model("deepseek-v3");
    assert_true(eng_model_part_bytes(&d, ENG_FP8, ENG_PART_LM_HEAD) == 2);
    assert_true(eng_model_part_bytes(&d, ENG_FP8, ENG_PART_EXPERTS) == 1);
    cal_predictor_free(&b);
    cal_predictor_free(&f);
}

/* ---------------- per-operator entry ---------------- */

static void test_point_ns(void **state)
{
    eng_model m = catalog_model("llama-3-8b");
    eng_predictor p = make(&m, "a100-80gb", cal_serving_tp(ENG_BF16, 1));
    /* one layer's operator at a profile coordinate equals the whole-pass breakdown divided by
     * the layers, for a linear operator and for decode attention */
    eng_shape s = {0};
    eng_shape_add_decodes(&s, 64, 64 * 1000);
    double pt = cal_roofline_point_ns(&p, KERN_OP_MLP_DOWN, 64, 0);
    double walk = cal_roofline_op_ns(&p, &s, "mlp_down") / m.layers;
    assert_true(pt > 0 && pt > walk - 1 && pt < walk + 1);
    double at = cal_roofline_point_ns(&p, KERN_OP_ATTN_DECODE, 64, 1001);
    double aw = cal_roofline_op_ns(&p, &s, "attn_decode") / m.layers;
    assert_true(at > aw - 1 && at < aw + 1);
    assert_true(cal_roofline_point_ns(&p, 99, 1, 0) < 0);
    assert_true(cal_roofline_allreduce_ns(&p, 1 << 20, 0) > 0);
    cal_predictor_free(&p);
}

/* A tensor-parallel group wider than an 8-GPU H100 node reduces with NCCL alone (the custom
 * all-reduce refuses groups across nodes), its ring crossing the nodes on each GPU's NIC; on a
 * GB200 NVL72 the same 16 GPUs share one NVLink domain. */
static void test_allreduce_across_nodes(void **state)
{
    eng_model m = catalog_model("llama-3-70b");
    eng_predictor p8 = make(&m, "h100-sxm", cal_serving_tp(ENG_BF16, 8));
    eng_predictor p16 = make(&m, "h100-sxm", cal_serving_tp(ENG_BF16, 16));
    eng_predictor nvl = make(&m, "gb200", cal_serving_tp(ENG_BF16, 16));
    double small = 64 * 1024, big = 256.0 * 1024 * 1024;
    assert_true(cal_roofline_allreduce_ns(&p8, small, 0) < 20e3);   /* custom all-reduce */
    assert_true(cal_roofline_allreduce_ns(&p16, small, 0) >= 60e3); /* NCCL's floor */
    assert_true(cal_roofline_allreduce_ns(&nvl, small, 0) < 20e3);
    /* 256 MiB: each GPU sends its eighth's half over a 50 GB/s NIC at the ring's efficiency */
    double nic = big / 8 / (50e9 * 0.503) * 1e9;
    assert_true(cal_roofline_allreduce_ns(&p16, big, 0) >= nic);
    assert_true(cal_roofline_allreduce_ns(&p16, big, 0) > cal_roofline_allreduce_ns(&p8, big, 0));
    cal_predictor_free(&p8);
    cal_predictor_free(&p16);
    cal_predictor_free(&nvl);
}

/* NCCL's all-reduce on 8 x H100 as vLLM's device-communicator benchmark measures it (PR #42324,
 * SM 9.0, world size 8, pynccl: 0.121 ms at 16 MiB, 0.195 ms at 32 MiB): the Hopper figures
 * price it within 20% (the A100 fit they replace gave 0.156 and 0.279 ms), while an A100 keeps
 * the slower A100 fit. */
static void test_allreduce_hopper_nccl(void **state)
{
    eng_model m = catalog_model("llama-3-70b");
    eng_predictor h = make(&m, "h100-sxm", cal_serving_tp(ENG_BF16, 8));
    eng_predictor a = make(&m, "a100-80gb", cal_serving_tp(ENG_BF16, 8));
    const double mib = 1024.0 * 1024, size[] = {16 * mib, 32 * mib}, ms[] = {0.121, 0.195};
    for (int i = 0; i < 2; i++) {
        double t = cal_roofline_allreduce_ns(&h, size[i], 1);
        print_message("H100 TP8 NCCL %.0f MiB: %.3f ms (measured %.3f)\n", size[i] / mib, t / 1e6,
                      ms[i]);
        assert_true(fabs(t / (ms[i] * 1e6) - 1) < 0.20);
        assert_true(cal_roofline_allreduce_ns(&a, size[i], 1) > 1.3 * t);
    }
    cal_predictor_free(&h);
    cal_predictor_free(&a);
}

/* An engine whose preset states a host time per eagerly launched kernel (TensorRT-LLM's PyTorch
 * backend: 11.67 us, engine/presets.c) pays it in a pass with prefill tokens, where short
 * kernels wait on the host: in a 32-token prefill of Llama-3-8B on one H100 the weight reads
 * still dominate, but its norms, adds and activations are launch-bound, so the pass costs over
 * 15% more than at the default 4.5 us (measured 21%); a long prefill's kernels outlast either
 * launch, so it moves under 1%; a decode step replays a graph and does not move at all. */
static void test_eager_launch_per_engine(void **state)
{
    (void)state;
    eng_model m = catalog_model("llama-3-8b");
    cal_serving trt = cal_serving_tp(ENG_BF16, 1);
    trt.eager_launch_ns = 11670;
    eng_predictor d = make(&m, "h100-sxm", cal_serving_tp(ENG_BF16, 1));
    eng_predictor t = make(&m, "h100-sxm", trt);
    eng_shape sh[3];
    memset(sh, 0, sizeof sh);
    eng_shape_add_prefill(&sh[0], 32, 0);
    sh[0].emit_seqs = 1;
    eng_shape_add_prefill(&sh[1], 8192, 0);
    sh[1].emit_seqs = 1;
    eng_shape_add_decodes(&sh[2], 32, 32 * 900);
    sh[2].emit_seqs = 32;
    double r[3];
    for (int i = 0; i < 3; i++) {
        int64_t a = d.ops->iteration_ns(d.st, &sh[i]), b = t.ops->iteration_ns(t.st, &sh[i]);
        r[i] = (double)b / (double)a;
        print_message("pass %d: %.3f ms at 4.5 us a launch, %.3f ms at 11.67 us\n", i, a / 1e6,
                      b / 1e6);
    }
    assert_true(r[0] > 1.15);
    assert_true(r[1] > 1.0 && r[1] < 1.01);
    assert_true(r[2] == 1.0);
    cal_predictor_free(&d);
    cal_predictor_free(&t);
}

/* The pass's price with the fp8 GEMM inputs of mask aq (per tensor and per group alike)
 * quantized by a kernel of their own, less its price without. */
static double act_quant_delta(const eng_model *m, eng_dtype dt, uint32_t aq, const eng_shape *sh)
{
    cal_serving with = cal_serving_tp(dt, 1), without = with;
    with.eager_launch_ns = without.eager_launch_ns = 11670;
    with.act_quant[ENG_AQ_TENSOR] = with.act_quant[ENG_AQ_BLOCK] = aq;
    eng_predictor a = make(m, "h100-sxm", with), b = make(m, "h100-sxm", without);
    double d = (double)(a.ops->iteration_ns(a.st, sh) - b.ops->iteration_ns(b.st, sh));
    cal_predictor_free(&a);
    cal_predictor_free(&b);
    return d;
}

/* The bounds of `layers` quantize passes over n rows of each width in w (0-terminated), bytes
 * per element 3 (16 bits read, fp8 written) plus 4 per group of g: at least the larger of the
 * 11.67 us launch and the bytes at the full HBM bandwidth, at most the launch plus the bytes at
 * 80% of it (a quantize kernel streams at 84%: vLLM PR #33918 on H100). */
static void quant_bounds(double n, const double *w, double g, int layers, double *lo, double *hi)
{
    double bw = catalog_gpu("h100-sxm").mem_bw;
    *lo = *hi = 0;
    for (; *w > 0; w++) {
        double bytes = n * *w * (3.0 + (g > 0 ? 4.0 / g : 0)), t = bytes / bw * 1e9;
        *lo += layers * fmax(11670, t);
        *hi += layers * (11670 + t / 0.8);
    }
}

/* The fp8 activation quantize before an fp8 GEMM, where the engine runs it as a kernel of its
 * own (engine/presets.c), costs a memory-bound pass over the 16-bit input per layer and GEMM:
 * Qwen3-32B fp8 on one H100, a 2,048-token prefill at TensorRT-LLM's 11.67 us launch. Per tensor
 * before QKV, gate/up and down (TensorRT-LLM 1.0: 192 passes) it adds 5.8 ms; before O alone
 * (vLLM V1) 1.5 ms; per 1x128 group before all four, with the scales, 7.4 ms. A 16-bit model
 * runs no quantize: not a nanosecond more. A decode step replays a graph: its 192 passes cost
 * their floors (0.3 ms), under 5 us each, not the launch. */
static void test_fp8_act_quant(void **state)
{
    (void)state;
    eng_model m = catalog_model("qwen3-32b");
    const double n = 2048, h = m.hidden, o = (double)m.heads * m.head_dim, in = m.intermediate;
    eng_shape sh[2];
    memset(sh, 0, sizeof sh);
    eng_shape_add_prefill(&sh[0], (int32_t)n, 0);
    sh[0].emit_seqs = 1;
    eng_shape_add_decodes(&sh[1], 32, 32 * 2000);
    sh[1].emit_seqs = 32;
    const uint32_t trt = ENG_AQ_QKV | ENG_AQ_UP | ENG_AQ_DOWN, all = trt | ENG_AQ_O;
    struct {
        uint32_t aq;
        int32_t group;
        double w[5];
    } cases[] = {{trt, 0, {h, h, in, 0}}, {ENG_AQ_O, 0, {o, 0}}, {all, 128, {h, o, h, in, 0}}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        m.act_group = cases[i].group;
        double d = act_quant_delta(&m, ENG_FP8, cases[i].aq, &sh[0]), lo, hi;
        quant_bounds(n, cases[i].w, cases[i].group, m.layers, &lo, &hi);
        print_message("mask %#x group %d: +%.2f ms (bounds %.2f-%.2f)\n", (unsigned)cases[i].aq,
                      cases[i].group, d / 1e6, lo / 1e6, hi / 1e6);
        assert_true(d >= lo && d <= hi);
    }
    m.act_group = 0;
    assert_true(act_quant_delta(&m, ENG_BF16, all, &sh[0]) == 0);
    double dec = act_quant_delta(&m, ENG_FP8, trt, &sh[1]);
    print_message("decode step of 32: +%.3f ms\n", dec / 1e6);
    assert_true(dec > 0 && dec < 3 * m.layers * 5000);
}

/* The routed experts' time per MoE layer of Qwen3-30B-A3B in fp8 (1x128 activation groups) on
 * 4 x H100 with expert parallelism 4, in a pass with prefill tokens (no CUDA graph: each kernel
 * costs at least the engine's 11.67 us launch), under engine `eng`, with `group` activation
 * groups, over `n` prefill tokens. */
static double moe_layer_ns(const char *eng, int32_t group, int32_t n, eng_dtype dt)
{
    eng_model m = catalog_model("qwen3-30b-a3b");
    m.act_group = group;
    cal_serving s = layout(dt, 4, 1, 4);
    strcpy(s.engine, eng);
    s.eager_launch_ns = 11670;
    eng_predictor p = make(&m, "h100-sxm", s);
    eng_shape sh = {0};
    eng_shape_add_prefill(&sh, n, 0);
    sh.emit_seqs = 1;
    double t = cal_roofline_op_ns(&p, &sh, "moe_experts") / m.moe_layers;
    cal_predictor_free(&p);
    return t;
}

/* A grouped-GEMM MoE layer launches more than its two GEMMs and activation: the routing sort,
 * the finalize (the k outputs of a token weighted and summed), in TensorRT-LLM the gather of the
 * rows in expert order (expandInputRowsKernel), and with block-scaled fp8 experts a 1x128
 * quantize before each grouped GEMM (fp8_grouped_gemm_run's internal_quantize_a). In an eager
 * pass of one token each kernel is launch-bound: TensorRT-LLM fp8 block-scaled 8 kernels, vLLM 7
 * (no gather), TensorRT-LLM bf16 6 (no quantize); the three counted before were 35 us. At 16,384
 * tokens the gather and the quantizes move bytes: TensorRT-LLM's layer exceeds vLLM's by at
 * least the gather's traffic at the full bandwidth (a 16-bit row read and written per
 * token-expert pair: 16,384 x 8 / 4 pairs on the busiest GPU), and the block-scaled layer exceeds
 * a per-tensor one by at least the quantizes' (3 bytes per element and a 4-byte scale per 128).
 * On B200, 4-bit experts run trtllm-gen's fused MoE: only the finalize is added. */
static void test_moe_glue_kernels(void **state)
{
    (void)state;
    const double launch = 11670;
    struct {
        const char *eng;
        int32_t group;
        eng_dtype dt;
        int kernels;
    } cases[] = {
        {"trtllm", 128, ENG_FP8, 8}, {"vllm", 128, ENG_FP8, 7}, {"trtllm", 0, ENG_BF16, 6}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double t = moe_layer_ns(cases[i].eng, cases[i].group, 1, cases[i].dt);
        print_message("%s group %d, 1 token: %.1f us a layer (%d launches: %.1f us)\n",
                      cases[i].eng, cases[i].group, t / 1e3, cases[i].kernels,
                      cases[i].kernels * launch / 1e3);
        assert_true(t >= cases[i].kernels * launch && t < (cases[i].kernels + 0.5) * launch);
    }
    /* gpt-oss-120b's MXFP4 experts on B200 run trtllm-gen's fused MoE, whose routing kernel
     * sorts and whose first GEMM gathers: the finalize alone is added, 4 kernels; on H200 the
     * Triton path's sort too, 5 (a 1 ms launch makes every kernel launch-bound) */
    eng_model g = catalog_model("gpt-oss-120b");
    cal_serving gs = layout(ENG_DTYPE_AUTO, 8, 1, 8);
    strcpy(gs.engine, "sglang");
    gs.capped_sums = 1;
    gs.eager_launch_ns = 1e6;
    const char *gpus[] = {"b200", "h200"};
    for (int i = 0; i < 2; i++) {
        eng_predictor gp = make(&g, gpus[i], gs);
        eng_shape one = {0};
        eng_shape_add_prefill(&one, 1, 0);
        one.emit_seqs = 1;
        double gt = cal_roofline_op_ns(&gp, &one, "moe_experts") / g.moe_layers / 1e6;
        print_message("gpt-oss-120b %s sglang, 1 token: %.3f launches a layer\n", gpus[i], gt);
        assert_true(gt >= 4 + i && gt < 4.1 + i);
        cal_predictor_free(&gp);
    }
    eng_model m = catalog_model("qwen3-30b-a3b");
    double bw = catalog_gpu("h100-sxm").mem_bw, n = 16384, h = m.hidden;
    double pairs = n * m.experts_per_tok / 4, in = m.expert_inter;
    double trt = moe_layer_ns("trtllm", 128, (int32_t)n, ENG_FP8);
    double vll = moe_layer_ns("vllm", 128, (int32_t)n, ENG_FP8);
    double tensor = moe_layer_ns("trtllm", 0, (int32_t)n, ENG_FP8);
    double gather = 2.0 * 2 * pairs * h / bw * 1e9;
    double quant = pairs * (h + in) * (3.0 + 4.0 / 128) / bw * 1e9;
    print_message("16,384 tokens: trtllm %.3f ms, vllm %.3f ms (gather >= %.3f ms); per tensor "
                  "%.3f ms (quantizes >= %.3f ms)\n",
                  trt / 1e6, vll / 1e6, gather / 1e6, tensor / 1e6, quant / 1e6);
    assert_true(trt - tensor >= quant);
    /* and vLLM quantizes the hidden states before expanding them: its first quantize reads a
     * row per token (at most n here), TensorRT-LLM's a row per gathered pair */
    double first = (pairs - n) * h * (3.0 + 4.0 / 128) / bw * 1e9;
    print_message("  trtllm - vllm %.3f ms >= gather + first quantize's extra rows %.3f ms\n",
                  (trt - vll) / 1e6, (gather + first) / 1e6);
    assert_true(trt - vll >= gather + first);
}

/* ---------------- the walk's caches ---------------- */

/* A predictor that has priced other passes (its caches and token tables filled) prices a pass
 * exactly as a fresh one does: steps that share a token count but differ in prefill attention,
 * eagerness or emitting sequences do not take each other's cached parts. */
static void test_walk_cache_exact(void **state)
{
    eng_model m = catalog_model("llama-3-8b");
    eng_predictor warm = make(&m, "h100-sxm", cal_serving_tp(ENG_BF16, 2));
    eng_shape sh[6];
    memset(sh, 0, sizeof sh);
    eng_shape_add_prefill(&sh[0], 512, 0); /* 512 tokens, eager */
    sh[0].emit_seqs = 1;
    eng_shape_add_prefill(&sh[1], 448, 3000); /* 512 tokens with decodes, other attention */
    eng_shape_add_decodes(&sh[1], 64, 64 * 900);
    sh[1].emit_seqs = 65;
    eng_shape_add_decodes(&sh[2], 512, 512 * 900); /* 512 tokens, graph-launched */
    sh[2].emit_seqs = 512;
    eng_shape_add_decodes(&sh[3], 512, 512 * 901);
    sh[3].emit_seqs = 512;
    eng_shape_add_prefill(&sh[4], 512, 0); /* as sh[0] but emitting nothing */
    sh[5] = sh[1];
    for (int i = 0; i < 6; i++) {
        eng_predictor cold = make(&m, "h100-sxm", cal_serving_tp(ENG_BF16, 2));
        int64_t a = warm.ops->iteration_ns(warm.st, &sh[i]);
        int64_t b = cold.ops->iteration_ns(cold.st, &sh[i]);
        assert_int_equal(a, b);
        cal_predictor_free(&cold);
    }
    cal_predictor_free(&warm);
}

/* A decode run priced step after step (the walk's cached rest and its shortcut for decode
 * attention, cal_walk_cache.decode) costs each step what a fresh predictor gives, over dense GQA
 * models, KV heads split and replicated, GPUs with and without Hopper's floors, fp8 KV, and
 * steps with a prefill chunk (eager) among the decodes. In debug builds the walk also checks
 * every shortcut against the generic walk, to the bit. */
static void test_walk_decode_run_exact(void **state)
{
    static const struct {
        const char *model, *gpu;
        eng_dtype kv;
        int tp;
    } cfg[] = {
        {"llama-3-8b", "h100-sxm", ENG_DTYPE_AUTO, 1},
        {"llama-3-8b", "a100-80gb", ENG_DTYPE_AUTO, 2},
        {"llama-3-8b", "h100-sxm", ENG_FP8, 2},
        {"llama-3-70b", "h200", ENG_DTYPE_AUTO, 16},
        {"qwen3-8b", "l40s", ENG_DTYPE_AUTO, 4},
    };
    for (size_t i = 0; i < sizeof cfg / sizeof cfg[0]; i++) {
        eng_model m = catalog_model(cfg[i].model);
        cal_serving sv = cal_serving_tp(ENG_BF16, cfg[i].tp);
        sv.kv_dtype = cfg[i].kv;
        eng_predictor warm = make(&m, cfg[i].gpu, sv);
        for (int64_t j = 0; j < 40; j++) {
            int64_t n = j < 20 ? 64 : 7;
            eng_shape s = {0};
            if (j % 13 == 5) { /* a chunk among the decodes: eager, its own rest */
                eng_shape_add_prefill(&s, 300, 100 * j);
                s.emit_seqs = 1;
            }
            eng_shape_add_decodes(&s, n, n * (500 + j));
            s.emit_seqs += (int32_t)n;
            eng_predictor cold = make(&m, cfg[i].gpu, sv);
            assert_int_equal(warm.ops->iteration_ns(warm.st, &s),
                             cold.ops->iteration_ns(cold.st, &s));
            cal_predictor_free(&cold);
        }
        cal_predictor_free(&warm);
    }
}

/* A pass that is one prefill chunk alone is priced from the walk's table by the chunk's tokens
 * when its sums match the entry's: chunks of the same length over no context, over cached
 * contexts of several lengths (other sums: priced afresh, never taken from the entry), and
 * chunks of one length again after others, each what a fresh predictor gives. */
static void test_walk_prefill_alone_exact(void **state)
{
    static const int64_t q[] = {512, 512, 17, 512, 512, 4000, 17, 512, 512};
    static const int64_t ctx[] = {0, 0, 0, 1024, 0, 0, 300, 1024, 5};
    eng_model m = catalog_model("llama-3-8b");
    eng_predictor warm = make(&m, "h100-sxm", cal_serving_tp(ENG_BF16, 1));
    for (size_t j = 0; j < sizeof q / sizeof q[0]; j++) {
        eng_shape s = {0};
        eng_shape_add_prefill(&s, q[j], ctx[j]);
        s.emit_seqs = 1;
        eng_predictor cold = make(&m, "h100-sxm", cal_serving_tp(ENG_BF16, 1));
        assert_int_equal(warm.ops->iteration_ns(warm.st, &s), cold.ops->iteration_ns(cold.st, &s));
        cal_predictor_free(&cold);
    }
    cal_predictor_free(&warm);
}

/* eng_predictor_passes_ns of decode passes whose contexts grow alike (a drafter's passes) is the
 * sum of the passes priced one by one by a fresh predictor: dense models (priced once but for
 * decode attention, the rest kept between calls of the same token and emitting counts), an MoE,
 * an MLA and a windowed model (walked pass by pass), after passes of the same token count but
 * other emitting sequences or a prefill chunk, which must not lend their parts. */
static void test_walk_passes_exact(void **state)
{
    static const char *const models[] = {"llama-3-8b", "qwen3-30b-a3b", "deepseek-v3",
                                         "gemma-2-9b"};
    static const struct {
        int64_t n, chunk;
        int32_t emit, passes;
    } run[] = {{64, 0, 64, 2}, {64, 0, 64, 3}, {64, 0, 65, 2}, {48, 16, 49, 2},
               {64, 0, 64, 1}, {7, 0, 7, 4},   {64, 0, 64, 2}};
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        eng_model m = catalog_model(models[i]);
        cal_serving sv = cal_serving_tp(m.weight_dtype, strcmp(models[i], "deepseek-v3") ? 1 : 8);
        sv.capped_sums = 1;
        const char *gpu = strcmp(models[i], "deepseek-v3") ? "h100-sxm" : "h200";
        eng_predictor warm = make(&m, gpu, sv);
        for (size_t j = 0; j < sizeof run / sizeof run[0]; j++) {
            int32_t ch, cap = eng_shape_cap(&m, &ch);
            int64_t n = run[j].n, grow = cap > 0 ? n / 2 : 0;
            eng_shape s = {0};
            eng_shape_set_cap(&s, cap, ch);
            if (run[j].chunk)
                eng_shape_add_prefill_capped(&s, run[j].chunk, 0);
            eng_shape_add_decodes_capped(&s, n, n * (700 + 10 * (int64_t)j), cap > 0 ? n * 3 : 0);
            s.emit_seqs = run[j].emit;
            int64_t want = 0;
            eng_shape q = s;
            for (int32_t k = 0; k < run[j].passes; k++) {
                q.decode_ctx = s.decode_ctx + k * n;
                q.decode_ctx_capped = s.decode_ctx_capped + k * grow;
                eng_predictor cold = make(&m, gpu, sv);
                want += cold.ops->iteration_ns(cold.st, &q);
                cal_predictor_free(&cold);
            }
            assert_int_equal(eng_predictor_passes_ns(&warm, &s, run[j].passes, n, grow), want);
        }
        cal_predictor_free(&warm);
    }
}

/* A decode run's base (eng_predictor_ops.decode_base) and its steps (decode_ns): each step what
 * a fresh predictor gives for the shape with that summed context, whatever the predictor priced
 * before; a dense model always has a base, a pass with a chunk among its decodes too (eager);
 * MoE, MLA and windowed models have none (their steps are walked). */
static void test_decode_base_exact(void **state)
{
    static const char *const models[] = {"llama-3-8b", "qwen3-30b-a3b", "deepseek-v3",
                                         "gemma-2-9b"};
    static const int64_t ctx[] = {0, 1, 5000, 123457, 9000000};
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        eng_model m = catalog_model(models[i]);
        int dsv3 = strcmp(models[i], "deepseek-v3") == 0;
        cal_serving sv = cal_serving_tp(m.weight_dtype, dsv3 ? 8 : 1);
        sv.capped_sums = 1;
        const char *gpu = dsv3 ? "h200" : "h100-sxm";
        eng_predictor warm = make(&m, gpu, sv);
        for (int64_t n = 1; n <= 300; n += 37) {
            eng_shape s = {0};
            if (n % 3 == 2) { /* a chunk among the decodes */
                eng_shape_add_prefill(&s, 200, 50);
                s.emit_seqs = 1;
            }
            eng_shape_add_decodes(&s, n, n * 400);
            s.emit_seqs += (int32_t)n;
            eng_decode_base b;
            int has = warm.ops->decode_base(warm.st, &s, &b);
            assert_int_equal(has, i == 0);
            for (size_t j = 0; has && j < sizeof ctx / sizeof ctx[0]; j++) {
                eng_shape other = s; /* the predictor prices something else in between */
                other.decode_ctx += 7;
                other.emit_seqs += 1;
                warm.ops->iteration_ns(warm.st, &other);
                eng_shape q = s;
                q.decode_ctx = ctx[j];
                eng_predictor cold = make(&m, gpu, sv);
                assert_int_equal(warm.ops->decode_ns(warm.st, &b, ctx[j]),
                                 cold.ops->iteration_ns(cold.st, &q));
                cal_predictor_free(&cold);
            }
        }
        cal_predictor_free(&warm);
    }
}

/* A drafter's passes from two bases (eng_predictor_ops.decode_passes_ns: its first pass over
 * the target's tokens, then one-token passes over contexts dctx longer each): the sum of what a
 * fresh predictor gives for each pass's shape, for odd and even counts of passes. */
static void test_decode_passes_exact(void **state)
{
    static const int64_t ctx[] = {0, 1, 5000, 123457, 9000000};
    eng_model m = catalog_model("llama-3-8b");
    cal_serving sv = cal_serving_tp(m.weight_dtype, 1);
    eng_predictor warm = make(&m, "h100-sxm", sv);
    assert_non_null(warm.ops->decode_passes_ns);
    for (int64_t n = 1; n <= 300; n += 37) {
        eng_shape first = {0}, next = {0};
        eng_shape_add_verify(&first, n, 0, 0, 3);
        first.emit_seqs = (int32_t)n;
        eng_shape_add_decodes(&next, n, 0);
        next.emit_seqs = (int32_t)n;
        eng_decode_base bf, bn;
        assert_int_equal(warm.ops->decode_base(warm.st, &first, &bf), 1);
        assert_int_equal(warm.ops->decode_base(warm.st, &next, &bn), 1);
        for (int32_t passes = 1; passes <= 5; passes++) {
            for (size_t j = 0; j < sizeof ctx / sizeof ctx[0]; j++) {
                eng_predictor cold = make(&m, "h100-sxm", sv);
                int64_t want = 0;
                for (int32_t p = 0; p < passes; p++) {
                    eng_shape q = p == 0 ? first : next;
                    q.decode_ctx = ctx[j] + p * n;
                    want += cold.ops->iteration_ns(cold.st, &q);
                }
                assert_int_equal(warm.ops->decode_passes_ns(warm.st, &bf, &bn, passes, ctx[j], n),
                                 want);
                cal_predictor_free(&cold);
            }
        }
    }
    cal_predictor_free(&warm);
}

/* A speculative step's shapes for n sequences and `passes` drafts: the target's verify, the
 * drafter's first pass and its one-token passes. */
static void verify_shapes(int64_t n, int32_t passes, eng_shape *ts, eng_shape *first,
                          eng_shape *next)
{
    *ts = (eng_shape){0};
    *first = (eng_shape){0};
    *next = (eng_shape){0};
    eng_shape_add_verify(ts, n, 0, 0, passes);
    ts->emit_seqs = (int32_t)(n * (passes + 1));
    eng_shape_add_verify(first, n, 0, 0, passes);
    first->emit_seqs = (int32_t)n;
    eng_shape_add_decodes(next, n, 0);
    next->emit_seqs = (int32_t)n;
}

/* A speculative step's target pass and its drafter's passes at once (verify_pack, verify_ns;
 * the target and the drafter of different models and layouts): decode_ns of the target's base
 * and decode_passes_ns of the drafter's, to the bit, for 1 to 5 passes (the lanes past the
 * passes not counted, the passes past the lanes priced as before). Where the CPU lacks the
 * lanes (verify_pack 0) the engine prices the passes apart. */
static void test_verify_exact(void **state)
{
    (void)state;
    static const int64_t ctx[] = {0, 1, 5000, 123457, 9000000};
    eng_model tm = catalog_model("llama-3-70b"), dm = catalog_model("llama-3-8b");
    eng_predictor tg = make(&tm, "h100-sxm", cal_serving_tp(tm.weight_dtype, 2));
    eng_predictor dr = make(&dm, "h100-sxm", cal_serving_tp(dm.weight_dtype, 1));
    assert_non_null(tg.ops->verify_pack);
    assert_non_null(tg.ops->verify_ns);
    for (int64_t n = 1; n <= 300; n += 37) {
        for (int32_t passes = 1; passes <= 5; passes++) {
            eng_shape ts, first, next;
            verify_shapes(n, passes, &ts, &first, &next);
            eng_decode_base bt, bf, bn;
            assert_int_equal(tg.ops->decode_base(tg.st, &ts, &bt), 1);
            assert_int_equal(dr.ops->decode_base(dr.st, &first, &bf), 1);
            assert_int_equal(dr.ops->decode_base(dr.st, &next, &bn), 1);
            eng_verify_pack vp;
            if (!tg.ops->verify_pack(tg.st, &bt, dr.st, &bf, &bn, passes, &vp))
                continue; /* no lanes on this CPU */
            for (size_t j = 0; j < sizeof ctx / sizeof ctx[0]; j++) {
                int64_t draft = -1;
                int64_t gpu =
                    tg.ops->verify_ns(tg.st, &bt, dr.st, &bf, &bn, &vp, passes, ctx[j], n, &draft);
                assert_int_equal(gpu, tg.ops->decode_ns(tg.st, &bt, ctx[j]));
                assert_int_equal(draft,
                                 dr.ops->decode_passes_ns(dr.st, &bf, &bn, passes, ctx[j], n));
            }
        }
    }
    cal_predictor_free(&tg);
    cal_predictor_free(&dr);
}

/* verify_ns against decode_ns and decode_passes_ns over more layouts (tensor parallel 4 and 8,
 * other GPUs, a drafter of the target's own model) and random contexts and passes up to 9 (the
 * lanes and the pairs after them), base by base as the engine packs them (next the first's where
 * one pass). Every case is checked where the CPU has the lanes. */
static void test_verify_exact_layouts(void **state)
{
    (void)state;
    static const struct {
        const char *tm, *dm, *gpu;
        int tp, dp, dtp;
    } cases[] = {{"llama-3-8b", "llama-3-8b", "a100-80gb", 1, 1, 1},
                 {"llama-3-70b", "llama-3-8b", "h200", 4, 1, 1},
                 {"llama-3-70b", "llama-3-8b", "gb200", 2, 1, 2},
                 {"llama-3-70b", "llama-3-70b", "h100-sxm", 8, 1, 8}};
    uint64_t st = 12345;
    int checked = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        eng_model tm = catalog_model(cases[c].tm), dm = catalog_model(cases[c].dm);
        eng_predictor tg =
            make(&tm, cases[c].gpu, layout(tm.weight_dtype, cases[c].tp, cases[c].dp, cases[c].dp));
        eng_predictor dr = make(&dm, cases[c].gpu, cal_serving_tp(dm.weight_dtype, cases[c].dtp));
        for (int it = 0; it < 400; it++) {
            st = st * 6364136223846793005ULL + 1442695040888963407ULL;
            int64_t n = 1 + (int64_t)((st >> 33) % 512);
            int32_t passes = 1 + (int32_t)((st >> 20) % 9);
            st = st * 6364136223846793005ULL + 1442695040888963407ULL;
            int64_t ctx = it % 7 == 0 ? 0 : (int64_t)((st >> 11) % 4000000000ULL);
            eng_shape ts, first, next;
            verify_shapes(n, passes, &ts, &first, &next);
            eng_decode_base bt, bf, bn;
            if (!tg.ops->decode_base(tg.st, &ts, &bt) || !dr.ops->decode_base(dr.st, &first, &bf) ||
                !dr.ops->decode_base(dr.st, &next, &bn))
                continue;
            if (passes == 1)
                bn = bf;
            eng_verify_pack vp;
            if (!tg.ops->verify_pack(tg.st, &bt, dr.st, &bf, &bn, passes, &vp))
                continue; /* no lanes on this CPU */
            int64_t draft = -1;
            int64_t gpu =
                tg.ops->verify_ns(tg.st, &bt, dr.st, &bf, &bn, &vp, passes, ctx, n, &draft);
            assert_int_equal(gpu, tg.ops->decode_ns(tg.st, &bt, ctx));
            assert_int_equal(draft, dr.ops->decode_passes_ns(dr.st, &bf, &bn, passes, ctx, n));
            checked++;
        }
        cal_predictor_free(&tg);
        cal_predictor_free(&dr);
    }
    assert_true(checked == 0 || checked == 4 * 400);
}

/* verify_ns where the passes' times leave the rounding's range: below 1 ns, above 9e18 ns, NaN
 * and infinite (bases edited past any model's), each lane as decode_ns and decode_passes_ns
 * round them. */
static void test_verify_rounding_edges(void **state)
{
    (void)state;
    eng_model tm = catalog_model("llama-3-70b"), dm = catalog_model("llama-3-8b");
    eng_predictor tg = make(&tm, "h100-sxm", cal_serving_tp(tm.weight_dtype, 2));
    eng_predictor dr = make(&dm, "h100-sxm", cal_serving_tp(dm.weight_dtype, 1));
    static const double rest[] = {-1e6, 0, 0.25, 0.5, 4.4e18, 1e30, NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++) {
        for (int32_t passes = 1; passes <= 4; passes++) {
            eng_shape ts = {0}, first = {0}, next = {0};
            eng_shape_add_verify(&ts, 8, 0, 0, passes);
            ts.emit_seqs = 8 * (passes + 1);
            eng_shape_add_verify(&first, 8, 0, 0, passes);
            first.emit_seqs = 8;
            eng_shape_add_decodes(&next, 8, 0);
            next.emit_seqs = 8;
            eng_decode_base bt, bf, bn;
            assert_int_equal(tg.ops->decode_base(tg.st, &ts, &bt), 1);
            assert_int_equal(dr.ops->decode_base(dr.st, &first, &bf), 1);
            assert_int_equal(dr.ops->decode_base(dr.st, &next, &bn), 1);
            /* the target's sum below 1 or past the top (rest per layer, once 0 or less), the
             * drafter's passes alike but past the top (their sum would overflow) */
            bt.rest = rest[i];
            bt.once = rest[i] < 1 ? -1e9 : 0;
            if (!(rest[i] >
                  1e12)) { /* (the drafter's passes past the top would overflow the sum) */
                bf.rest = bn.rest = rest[i];
                bf.once = bn.once = bt.once;
            }
            eng_verify_pack vp;
            if (!tg.ops->verify_pack(tg.st, &bt, dr.st, &bf, &bn, passes, &vp))
                continue; /* no lanes on this CPU */
            int64_t draft = -1;
            int64_t gpu =
                tg.ops->verify_ns(tg.st, &bt, dr.st, &bf, &bn, &vp, passes, 1000, 8, &draft);
            assert_int_equal(gpu, tg.ops->decode_ns(tg.st, &bt, 1000));
            assert_int_equal(draft, dr.ops->decode_passes_ns(dr.st, &bf, &bn, passes, 1000, 8));
        }
    }
    cal_predictor_free(&tg);
    cal_predictor_free(&dr);
}

/* Steps of a decode run priced at once (eng_predictor_ops.decode_steps_ns, k = 1 to 5): each lane
 * decode_ns of the base at its own context, to the bit, from 1 to k lanes and at most
 * ENG_DECODE_STEPS, over layouts (tensor parallel, other GPUs, eager), random sequences
 * and contexts, and bases edited so the sums leave the rounding's range (below 1 ns, past 9e18
 * ns, NaN, infinite). Where the build lacks the lanes (decode_steps_ns NULL) the engine prices
 * step by step and nothing is checked. */
static void test_decode_steps_exact(void **state)
{
    (void)state;
    static const struct {
        const char *m, *gpu;
        int tp;
    } cases[] = {{"llama-3-8b", "h100-sxm", 1},
                 {"llama-3-8b", "a100-80gb", 1},
                 {"llama-3-70b", "h200", 4},
                 {"llama-3-70b", "gb200", 2},
                 {"llama-3-70b", "h100-sxm", 8}};
    static const double rest[] = {-1e6, 0.25, 0.5, 4.4e17, 1e30, NAN, INFINITY, -INFINITY};
    uint64_t st = 4242;
    int checked = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        eng_model m = catalog_model(cases[c].m);
        eng_predictor p = make(&m, cases[c].gpu, cal_serving_tp(m.weight_dtype, cases[c].tp));
        if (!p.ops->decode_steps_ns) {
            cal_predictor_free(&p);
            continue; /* no lanes in this build */
        }
        for (int it = 0; it < 400; it++) {
            st = st * 6364136223846793005ULL + 1442695040888963407ULL;
            int64_t n = 1 + (int64_t)((st >> 33) % 1024);
            st = st * 6364136223846793005ULL + 1442695040888963407ULL;
            int64_t ctx = it % 7 == 0 ? 0 : (int64_t)((st >> 11) % 4000000000ULL);
            eng_shape s = {0};
            if (it % 5 == 4) { /* a chunk among the decodes */
                eng_shape_add_prefill(&s, 200, 50);
                s.emit_seqs = 1;
            }
            eng_shape_add_decodes(&s, n, 0);
            s.emit_seqs += (int32_t)n;
            eng_decode_base b;
            assert_int_equal(p.ops->decode_base(p.st, &s, &b), 1);
            if (it % 9 == 8) { /* the sums past the rounding's range */
                double x = rest[(it / 9) % (sizeof rest / sizeof rest[0])];
                b.rest = x;
                b.once = x < 1 ? -1e9 : 0;
            }
            int32_t k = 1 + it % 5;
            int64_t ns[ENG_DECODE_STEPS] = {-1, -1, -1, -1};
            int32_t got = p.ops->decode_steps_ns(p.st, &b, ctx, n, k, ns);
            assert_true(got >= 1 && got <= k && got <= ENG_DECODE_STEPS);
            for (int32_t i = 0; i < got; i++)
                assert_int_equal(ns[i], p.ops->decode_ns(p.st, &b, ctx + i * n));
            checked++;
        }
        cal_predictor_free(&p);
    }
    assert_true(checked == 0 || checked == 5 * 400);
}

LLMSIM_TEST_MAIN(NULL, NULL, test_capped_sums, test_moe_experts_touched, test_moe_expert_parallel,
                 test_moe_skew_and_all2all, test_data_parallel_attention,
                 test_mla_decode_reads_latent, test_dsa, test_linear_attention, test_windows,
                 test_fp8_lm_head_16bit, test_point_ns, test_allreduce_across_nodes,
                 test_allreduce_hopper_nccl, test_eager_launch_per_engine, test_fp8_act_quant,
                 test_moe_glue_kernels, test_walk_cache_exact, test_walk_decode_run_exact,
                 test_walk_prefill_alone_exact, test_walk_passes_exact, test_decode_base_exact,
                 test_decode_passes_exact, test_verify_exact, test_verify_exact_layouts,
                 test_verify_rounding_edges, test_decode_steps_exact)
