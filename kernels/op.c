/* op.c: the operator table (names, shape rules, nominal FLOPs and bytes) that the benchmark
 * driver and the calibration layer share. Pure functions; nothing is allocated. */
#include <assert.h>
#include <limits.h>
#include <string.h>

#include "kernels_int.h"

static const char *const op_names[KERN_OP_COUNT] = {
    [KERN_OP_QKV_PROJ] = "qkv_proj",
    [KERN_OP_ATTN_PREFILL] = "attn_prefill",
    [KERN_OP_ATTN_DECODE] = "attn_decode",
    [KERN_OP_O_PROJ] = "o_proj",
    [KERN_OP_MLP_UP_GATE] = "mlp_up_gate",
    [KERN_OP_MLP_ACT] = "mlp_act",
    [KERN_OP_MLP_DOWN] = "mlp_down",
    [KERN_OP_RMSNORM] = "rmsnorm",
    [KERN_OP_ROPE] = "rope",
    [KERN_OP_LM_HEAD] = "lm_head",
    [KERN_OP_ADD] = "add",
};

const char *kern_op_name(kern_op op)
{
    if ((int)op < 0 || op >= KERN_OP_COUNT)
        return "?";
    return op_names[op];
}

int kern_op_parse(const char *name)
{
    for (int i = 0; name && i < KERN_OP_COUNT; i++)
        if (strcmp(name, op_names[i]) == 0)
            return i;
    return -1;
}

int kern_shape_block_size(const kern_shape *s)
{
    return s->block_size > 0 ? s->block_size : 16;
}

int kern_shape_gemm(const kern_shape *s, int *m, int *k, int *n)
{
    const kern_dims *d = &s->dims;
    int qkv = (d->heads + 2 * d->kv_heads) * d->head_dim, attn = d->heads * d->head_dim;
    *m = s->tokens;
    switch (s->op) {
    case KERN_OP_QKV_PROJ:
        *k = d->hidden, *n = qkv;
        return 1;
    case KERN_OP_O_PROJ:
        *k = attn, *n = d->hidden;
        return 1;
    case KERN_OP_MLP_UP_GATE:
        *k = d->hidden, *n = 2 * d->intermediate;
        return 1;
    case KERN_OP_MLP_DOWN:
        *k = d->intermediate, *n = d->hidden;
        return 1;
    case KERN_OP_LM_HEAD:
        *k = d->hidden, *n = d->vocab;
        return 1;
    default:
        return 0;
    }
}

/* The largest buffer an operator touches, in elements, so sizes stay within int indexing. */
static double largest_buffer(const kern_shape *s)
{
    const kern_dims *d = &s->dims;
    double t = s->tokens, kv = (double)d->kv_heads * d->head_dim;
    int m, k, n;
    if (kern_shape_gemm(s, &m, &k, &n)) {
        double a = (double)m * k, b = (double)n * k, c = (double)m * n;
        return a > b ? (a > c ? a : c) : (b > c ? b : c);
    }
    switch (s->op) {
    case KERN_OP_ATTN_PREFILL:
        return (t + s->context) * kv + t * d->heads * d->head_dim;
    case KERN_OP_ATTN_DECODE:
        return (double)s->batch * (s->context + kern_shape_block_size(s)) * kv;
    case KERN_OP_MLP_ACT:
        return t * 2 * d->intermediate;
    case KERN_OP_ROPE:
        return t * (d->heads + d->kv_heads) * d->head_dim;
    case KERN_OP_RMSNORM:
    case KERN_OP_ADD:
        return t * d->hidden;
    default: /* the GEMMs are sized above */
        assert(!"an operator without a buffer size");
        return 0;
    }
}

int kern_shape_check(const kern_shape *s, char *err, size_t errlen)
{
    const kern_dims *d = &s->dims;
    if ((int)s->op < 0 || s->op >= KERN_OP_COUNT)
        return kern_seterr(err, errlen, "unknown operator %d", (int)s->op);
    const char *name = kern_op_name(s->op);
    if (d->hidden <= 0 || d->heads <= 0 || d->kv_heads <= 0 || d->head_dim <= 0 ||
        d->intermediate <= 0 || d->vocab <= 0)
        return kern_seterr(
            err, errlen, "%s: dimensions must be positive (H=%d nh=%d nkv=%d d=%d I=%d V=%d)", name,
            d->hidden, d->heads, d->kv_heads, d->head_dim, d->intermediate, d->vocab);
    if (d->heads % d->kv_heads != 0)
        return kern_seterr(err, errlen, "%s: heads %d not a multiple of kv_heads %d", name,
                           d->heads, d->kv_heads);
    if (d->head_dim % 2 != 0 || d->head_dim > 256)
        return kern_seterr(err, errlen, "%s: head_dim %d must be even and at most 256", name,
                           d->head_dim);
    if (s->dtype != KERN_F32 && s->dtype != KERN_F16 && s->dtype != KERN_BF16)
        return kern_seterr(err, errlen, "%s: unknown dtype %d", name, (int)s->dtype);
    if (s->op == KERN_OP_ATTN_DECODE) {
        if (s->batch <= 0 || s->context <= 0 || s->block_size < 0)
            return kern_seterr(err, errlen,
                               "%s: need batch >= 1, context >= 1, block_size >= 0 "
                               "(got %d, %d, %d)",
                               name, s->batch, s->context, s->block_size);
    } else if (s->tokens <= 0) {
        return kern_seterr(err, errlen, "%s: tokens must be >= 1 (got %d)", name, s->tokens);
    }
    if (s->op == KERN_OP_ATTN_PREFILL && s->context < 0)
        return kern_seterr(err, errlen, "%s: context must be >= 0 (got %d)", name, s->context);
    if (largest_buffer(s) > (double)INT_MAX)
        return kern_seterr(err, errlen, "%s: a buffer of %.0f elements is too large", name,
                           largest_buffer(s));
    return 0;
}

double kern_shape_flops(const kern_shape *s)
{
    const kern_dims *d = &s->dims;
    double t = s->tokens, hd = (double)d->heads * d->head_dim;
    int m, k, n;
    if (kern_shape_gemm(s, &m, &k, &n))
        return 2.0 * m * k * n;
    switch (s->op) {
    case KERN_OP_ATTN_PREFILL: /* QK^T and PV over the causal triangle after the context */
        return 4.0 * hd * (t * s->context + t * (t + 1) / 2);
    case KERN_OP_ATTN_DECODE:
        return 4.0 * hd * s->batch * s->context;
    case KERN_OP_MLP_ACT:
        return 5.0 * t * d->intermediate;
    case KERN_OP_RMSNORM:
        return 4.0 * t * d->hidden;
    case KERN_OP_ROPE:
        return 3.0 * t * (d->heads + d->kv_heads) * d->head_dim;
    case KERN_OP_ADD:
        return t * d->hidden;
    default: /* the GEMMs are counted above */
        assert(!"an operator without a flop count");
        return 0.0;
    }
}

double kern_shape_bytes(const kern_shape *s, int elem_bytes)
{
    const kern_dims *d = &s->dims;
    double e = elem_bytes, t = s->tokens, hd = (double)d->heads * d->head_dim;
    double kv = (double)d->kv_heads * d->head_dim;
    int m, k, n;
    if (kern_shape_gemm(s, &m, &k, &n))
        return e * ((double)m * k + (double)n * k + (double)m * n);
    switch (s->op) {
    case KERN_OP_ATTN_PREFILL:
        return e * (2.0 * t * hd + 2.0 * (t + s->context) * kv);
    case KERN_OP_ATTN_DECODE: {
        double blocks = (s->context + kern_shape_block_size(s) - 1) / kern_shape_block_size(s);
        return e * s->batch * (2.0 * hd + 2.0 * s->context * kv) + 4.0 * s->batch * (blocks + 1);
    }
    case KERN_OP_MLP_ACT:
        return e * 3.0 * t * d->intermediate;
    case KERN_OP_RMSNORM:
        return e * (2.0 * t * d->hidden + d->hidden);
    case KERN_OP_ROPE:
        return e * 2.0 * t * (d->heads + d->kv_heads) * d->head_dim + 4.0 * t;
    case KERN_OP_ADD:
        return e * 3.0 * t * d->hidden;
    default: /* the GEMMs are counted above */
        assert(!"an operator without a byte count");
        return 0.0;
    }
}
