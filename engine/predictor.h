/*
 * predictor.h: the cost predictor interface: how long one iteration takes on one replica.
 *
 * The engine describes an iteration by aggregate sums over its sequences (eng_shape), which it
 * maintains incrementally, so predicting costs O(1) however large the batch. A predictor is an
 * ops struct plus state, like a scheduler; calibration/ provides the roofline and fitted ones.
 */
#ifndef ENG_PREDICTOR_H
#define ENG_PREDICTOR_H

#include <stdint.h>
#include "model.h"

/*
 * The shape of one forward pass. A prefill chunk of q tokens over c tokens already in the KV
 * cache attends to c + q keys (causally: query i sees c + i + 1 keys). A decode sequence adds
 * one token over a context of c.
 *
 * Capped sums serve the layers whose queries see a bounded number of earlier keys: a sliding
 * window of W tokens (cap = W - 1 earlier keys: a query at position p sees itself and
 * min(p, cap) before it), chunked local attention (Llama-4: a query sees the keys of its own
 * aligned chunk of cap + 1 tokens) and DeepSeek sparse attention (the indexer's top
 * index_topk keys: cap = index_topk - 1). eng_shape_cap says which cap a model has. The capped
 * sums mean something only when cap > 0; with cap 0 a cost model reads the plain sums for the
 * capped layers too, which is exact for a model whose sequences never exceed its cap: it must
 * refuse a model whose cap can bind unless the engine fills them (cal_serving.capped_sums).
 */
typedef struct eng_shape {
    int64_t tokens;         /* query tokens in the pass: prefill chunk tokens + decode seqs */
    int32_t num_seqs;       /* sequences in the pass */
    int32_t prefill_seqs;   /* sequences with a prefill chunk */
    int64_t prefill_tokens; /* sum of chunk lengths q */
    double prefill_pairs;   /* sum of q*c + q*(q+1)/2: query-key pairs of causal attention */
    double prefill_kv;      /* sum of c + q: keys read by prefill attention */
    double prefill_q2;      /* sum of q*q (for equivalent-chunk profiles) */
    int32_t decode_seqs;    /* sequences decoding one token (decode_verify + 1 with drafts) */
    int64_t decode_ctx;     /* sum of the decode sequences' contexts (keys read) */
    int32_t emit_seqs;      /* positions that go through the LM head and the sampler: one per
                               sequence that samples a token, decode_verify + 1 per decode
                               sequence verifying drafts */
    /* ---- capped sums (see above); read only when cap > 0 ---- */
    int32_t cap;                 /* earlier keys a capped-layer query sees at most; 0 = none */
    int32_t cap_chunked;         /* 1: aligned chunks of cap + 1 tokens instead of a window */
    double prefill_pairs_capped; /* query-key pairs of the prefill chunks in capped layers */
    double prefill_kv_capped;    /* keys read by those chunks in capped layers */
    int64_t decode_ctx_capped;   /* sum over decodes of the earlier keys each attends to in
                                    capped layers: min(c, cap) (window, top-k) or c mod
                                    (cap + 1) (chunked) */
    /* ---- speculative decoding ---- */
    int32_t decode_verify; /* draft tokens each decode sequence verifies: it computes
                              decode_verify + 1 query tokens over its context c (causally: the
                              i-th sees c + i + 1 keys), all counted in `tokens`; 0 = plain */
} eng_shape;

/* A predictor's own sums for decode_ns: the shape's price without its decode attention, and the
 * terms of its decode attention that read the sequences alone (own: the predictor's). */
typedef struct eng_decode_base {
    double rest, once, layers, seqs;
    double own[2];
    int eager;
} eng_decode_base;

/* The most steps eng_predictor_ops.decode_steps_ns prices at once. */
#define ENG_DECODE_STEPS 4

/* A predictor's constants for verify_ns, in its own layout (eng_predictor_ops.verify_pack). */
typedef struct eng_verify_pack {
    double v[48];
} eng_verify_pack;

typedef struct eng_predictor_ops {
    const char *name;
    /* Iteration time in ns for the shape on one replica; >= 1. A function of the shape alone:
     * the engine keeps prices it was given and asks again only for shapes it has not kept
     * (engine.c price_of), as it keeps decode_base's by sequences. */
    int64_t (*iteration_ns)(const void *st, const eng_shape *s);
    /* Host <-> device copy time in ns for `bytes` (swap); optional. */
    int64_t (*transfer_ns)(const void *st, int64_t bytes);
    void (*fini)(void *st); /* optional */
    /* Optional: eng_predictor_passes_ns's sum, the same to the bit (a predictor prices the part
     * of the passes that does not read their contexts once). */
    int64_t (*passes_ns)(const void *st, const eng_shape *s, int32_t passes, int64_t dctx,
                         int64_t dcapped);
    /* Optional, both or neither: the steps of a decode run, which differ only in their decode
     * contexts' sum. decode_base fills *b for shape s (what iteration_ns reads but decode_ctx)
     * and returns 1, or returns 0 when it cannot (then iteration_ns prices every step);
     * decode_ns(st, b, ctx) is then iteration_ns of s with decode_ctx = ctx, to the bit. */
    int (*decode_base)(const void *st, const eng_shape *s, eng_decode_base *b);
    int64_t (*decode_ns)(const void *st, const eng_decode_base *b, int64_t decode_ctx);
    /* Optional, with decode_base: decode_ns(st, first, ctx) plus decode_ns(st, next,
     * ctx + j * dctx) for 0 < j < passes, to the bit (a drafter's first pass and its one-token
     * passes, each priced and rounded on its own). */
    int64_t (*decode_passes_ns)(const void *st, const eng_decode_base *first,
                                const eng_decode_base *next, int32_t passes, int64_t ctx,
                                int64_t dctx);
    /* Optional, both or neither, with decode_passes_ns: a speculative step's target pass and
     * its drafter's passes. verify_pack fills *p with what verify_ns reads of the bases (target
     * of st; first and next of dst, the state of another predictor of these same ops) and
     * returns 1, or returns 0 when it cannot. verify_ns is then decode_ns(st, target, ctx), and
     * in *draft decode_passes_ns(dst, first, next, passes, ctx, dctx), to the bit. */
    int (*verify_pack)(const void *st, const eng_decode_base *target, const void *dst,
                       const eng_decode_base *first, const eng_decode_base *next, int32_t passes,
                       eng_verify_pack *p);
    int64_t (*verify_ns)(const void *st, const eng_decode_base *target, const void *dst,
                         const eng_decode_base *first, const eng_decode_base *next,
                         const eng_verify_pack *p, int32_t passes, int64_t ctx, int64_t dctx,
                         int64_t *draft);
    /* Optional, with decode_base: decode_ns(st, b, ctx + i * dctx) in ns[i] for i below what it
     * returns, from 1 to k (k >= 1) and at most ENG_DECODE_STEPS, each to the bit: steps of a
     * decode run priced at once (the engine drops those it priced and does not run). */
    int32_t (*decode_steps_ns)(const void *st, const eng_decode_base *b, int64_t ctx, int64_t dctx,
                               int32_t k, int64_t ns[ENG_DECODE_STEPS]);
} eng_predictor_ops;

typedef struct eng_predictor {
    const eng_predictor_ops *ops;
    void *st;
    char label[128]; /* what produced it, e.g. "roofline h100-sxm (not measured)" */
} eng_predictor;

/* Adds one prefill chunk of q tokens over context c to s (capped sums untouched). Inline, as
 * the ones below: every step's shape is formed with them. */
static inline void eng_shape_add_prefill(eng_shape *s, int64_t q, int64_t c)
{
    double qd = (double)q, cd = (double)c;
    s->tokens += q;
    s->num_seqs++;
    s->prefill_seqs++;
    s->prefill_tokens += q;
    s->prefill_pairs += qd * cd + qd * (qd + 1) / 2;
    s->prefill_kv += cd + qd;
    s->prefill_q2 += qd * qd;
}
/* Adds n decode sequences whose contexts sum to ctx_sum (capped sums untouched). Inline, as
 * the next three: every step's shape is formed with them. */
static inline void eng_shape_add_decodes(eng_shape *s, int64_t n, int64_t ctx_sum)
{
    s->tokens += n;
    s->num_seqs += (int32_t)n;
    s->decode_seqs += (int32_t)n;
    s->decode_ctx += ctx_sum;
}

/* The cap of model m's capped layers (see eng_shape): window - 1 for sliding windows,
 * chunk - 1 with *chunked = 1 for chunked local attention, index_topk - 1 for DeepSeek sparse
 * attention; 0 when every attention layer sees the whole context. */
int32_t eng_shape_cap(const eng_model *m, int32_t *chunked);
/* Sets the cap the capped sums of s use; call on an empty shape, before adding sequences. */
static inline void eng_shape_set_cap(eng_shape *s, int32_t cap, int32_t chunked)
{
    s->cap = cap > 0 ? cap : 0;
    s->cap_chunked = s->cap > 0 && chunked;
}
/* The capped sums of one prefill chunk of q > 0 tokens over context c added to s, whose cap is
 * above 0 (eng_shape_add_prefill_capped's part out of line). */
void eng_shape_add_prefill_capsums(eng_shape *s, int64_t q, int64_t c);
/* Adds one prefill chunk of q tokens over context c, its capped sums computed exactly for
 * s->cap (a window, or aligned chunks). */
static inline void eng_shape_add_prefill_capped(eng_shape *s, int64_t q, int64_t c)
{
    eng_shape_add_prefill(s, q, c);
    if (s->cap > 0 && q > 0)
        eng_shape_add_prefill_capsums(s, q, c);
}
/* Adds n decode sequences whose contexts sum to ctx_sum and whose capped contexts (see
 * eng_shape.decode_ctx_capped) sum to capped_sum. O(1): the caller keeps the capped sum. */
static inline void eng_shape_add_decodes_capped(eng_shape *s, int64_t n, int64_t ctx_sum,
                                                int64_t capped_sum)
{
    eng_shape_add_decodes(s, n, ctx_sum);
    s->decode_ctx_capped += capped_sum;
}
/* The same for n decode sequences that each verify k draft tokens (k + 1 query tokens; 0: plain
 * decodes); every decode sequence of a pass verifies the same k. emit_seqs is the caller's. */
static inline void eng_shape_add_verify(eng_shape *s, int64_t n, int64_t ctx_sum,
                                        int64_t capped_sum, int32_t k)
{
    eng_shape_add_decodes_capped(s, n, ctx_sum, capped_sum);
    s->tokens += n * k; /* the k draft tokens beyond each sequence's own */
    if (n > 0)
        s->decode_verify = k;
}

/* The sum of iteration_ns over `passes` passes: s, then s with its decode contexts' sum grown by
 * dctx and their capped sum by dcapped each pass (decode passes of one batch whose every
 * sequence drafts a token per pass). Through ops->passes_ns when the predictor has it, else pass
 * by pass. 0 for passes <= 0. */
int64_t eng_predictor_passes_ns(const eng_predictor *p, const eng_shape *s, int32_t passes,
                                int64_t dctx, int64_t dcapped);

/* Whether the engine fills the capped sums (eng_shape_set_cap, eng_shape_add_prefill_capped,
 * eng_shape_add_decodes_capped) for every pass it prices: a cost model may price a model whose
 * cap binds (sequences longer than cap + 1) only when this is 1. */
#define ENG_SHAPE_CAPPED_SUMS 1

#endif
