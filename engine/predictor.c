/*
 * predictor.c: building iteration shapes, their capped sums included.
 */
#include "predictor.h"

int32_t eng_shape_cap(const eng_model *m, int32_t *chunked)
{
    *chunked = 0;
    if (m->index_topk > 0)
        return m->index_topk - 1;
    if (m->window_layers > 0 && m->window > 0) {
        *chunked = m->window_chunked != 0;
        return m->window - 1;
    }
    return 0;
}

/* Sum of min(x, w) for x = a..b (1 <= a <= b). */
static double sum_min(double a, double b, double w)
{
    if (b <= w)
        return (a + b) * (b - a + 1) / 2;
    if (a > w)
        return w * (b - a + 1);
    return (a + w) * (w - a + 1) / 2 + w * (b - w);
}

/* Sum over positions p = 0..n-1 of (p mod w) + 1: the keys each query of a prefix of n
 * tokens sees under aligned chunks of w. */
static double chunk_prefix(double n, double w)
{
    double full = (double)(int64_t)(n / w), r = n - full * w;
    return full * w * (w + 1) / 2 + r * (r + 1) / 2;
}

void eng_shape_add_prefill_capsums(eng_shape *s, int64_t q, int64_t c)
{
    double w = (double)s->cap + 1, qd = (double)q, cd = (double)c;
    if (s->cap_chunked) {
        double start = (double)(int64_t)(cd / w) * w; /* first key of the chunk c falls in */
        s->prefill_pairs_capped += chunk_prefix(cd + qd, w) - chunk_prefix(cd, w);
        s->prefill_kv_capped += cd + qd - start;
    } else {
        /* the query at position p sees min(p + 1, w) keys; keys read start at c - w + 1 */
        double first = cd - w + 1 > 0 ? cd - w + 1 : 0;
        s->prefill_pairs_capped += sum_min(cd + 1, cd + qd, w);
        s->prefill_kv_capped += cd + qd - first;
    }
}

int64_t eng_predictor_passes_ns(const eng_predictor *p, const eng_shape *s, int32_t passes,
                                int64_t dctx, int64_t dcapped)
{
    if (passes <= 0)
        return 0;
    if (p->ops->passes_ns)
        return p->ops->passes_ns(p->st, s, passes, dctx, dcapped);
    eng_shape q = *s;
    int64_t ns = 0;
    for (int32_t j = 0; j < passes; j++) {
        q.decode_ctx = s->decode_ctx + j * dctx;
        q.decode_ctx_capped = s->decode_ctx_capped + j * dcapped;
        ns += p->ops->iteration_ns(p->st, &q);
    }
    return ns;
}
