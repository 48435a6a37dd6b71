/*
 * layer.c: the operator sequence of one forward pass, shared by every predictor here.
 *
 * MODEL: a pre-norm Llama-style decoder layer as vLLM runs it: input RMSNorm, fused QKV
 * projection, rotary embedding, attention (prefill chunks and decodes as separate kernels),
 * output projection (+ all-reduce under tensor parallelism), residual add, post-attention
 * RMSNorm, fused gate/up projection, activation, down projection (+ all-reduce), residual add.
 * Once per pass: the token embedding and final norm over every query token, then the LM head and
 * sampling over the sequences that emit a token.
 */
#include <math.h>

#include "cal_int.h"

static const char *const extra_names[] = {"embed", "sample", "allreduce"};

const char *cal_op_name(int op)
{
    if (op >= 0 && op < KERN_OP_COUNT)
        return kern_op_name((kern_op)op);
    if (op >= KERN_OP_COUNT && op < CAL_OP_TOTAL)
        return extra_names[op - KERN_OP_COUNT];
    return "?";
}

int64_t cal_ns_round(double ns)
{
    if (!(ns >= 1.0))
        return 1;
    if (ns > 9.0e18)
        return INT64_C(9000000000000000000);
    return (int64_t)llround(ns);
}

/* Does the part of a pass other than decode attention (which alone changes from one decode step
 * to the next) match the cache's? */
static int same_rest(const eng_shape *a, const eng_shape *b)
{
    return a->tokens == b->tokens && a->num_seqs == b->num_seqs &&
           a->prefill_seqs == b->prefill_seqs && a->prefill_tokens == b->prefill_tokens &&
           a->prefill_pairs == b->prefill_pairs && a->prefill_kv == b->prefill_kv &&
           a->prefill_q2 == b->prefill_q2 && a->decode_seqs == b->decode_seqs &&
           a->emit_seqs == b->emit_seqs;
}

double cal_layer_walk(const eng_shape *s, int layers, int tp,
                      double (*fn)(const void *st, const cal_work *w), const void *st,
                      cal_walk_cache *cache)
{
    static const int seq[] = {
        KERN_OP_RMSNORM,  KERN_OP_QKV_PROJ, KERN_OP_ROPE,    KERN_OP_ATTN_PREFILL, KERN_OP_O_PROJ,
        CAL_OP_ALLREDUCE, KERN_OP_ADD,      KERN_OP_RMSNORM, KERN_OP_MLP_UP_GATE,  KERN_OP_MLP_ACT,
        KERN_OP_MLP_DOWN, CAL_OP_ALLREDUCE, KERN_OP_ADD,
    };
    double n = (double)s->tokens, rest = 0, once = 0;
    if (n <= 0)
        return 0;
    if (cache && cache->valid && same_rest(&cache->key, s)) {
        rest = cache->rest;
        once = cache->once;
    } else {
        for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
            cal_work w = {.op = seq[i], .tokens = n, .per_layer = 1};
            if (seq[i] == KERN_OP_ATTN_PREFILL) {
                if (s->prefill_seqs <= 0 || s->prefill_tokens <= 0)
                    continue;
                w.seqs = s->prefill_seqs;
                w.q_tokens = (double)s->prefill_tokens;
                w.pairs = s->prefill_pairs;
                w.kv = s->prefill_kv;
            } else if (seq[i] == CAL_OP_ALLREDUCE && tp <= 1) {
                continue;
            }
            rest += fn(st, &w);
        }
        cal_work embed = {.op = CAL_OP_EMBED, .tokens = n};
        cal_work norm = {.op = KERN_OP_RMSNORM, .tokens = n};
        once += fn(st, &embed) + fn(st, &norm);
        if (s->emit_seqs > 0) {
            cal_work head = {.op = KERN_OP_LM_HEAD, .tokens = s->emit_seqs};
            cal_work sample = {.op = CAL_OP_SAMPLE, .tokens = s->emit_seqs};
            once += fn(st, &head) + fn(st, &sample);
        }
        if (cache) {
            cache->valid = 1;
            cache->key = *s;
            cache->rest = rest;
            cache->once = once;
        }
    }
    double decode = 0;
    if (s->decode_seqs > 0) {
        cal_work w = {.op = KERN_OP_ATTN_DECODE, .tokens = n, .per_layer = 1};
        w.seqs = s->decode_seqs;
        w.pairs = (double)s->decode_ctx + s->decode_seqs;
        decode = fn(st, &w);
    }
    return (rest + decode) * layers + once;
}
