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
#include <stdlib.h>

#include "cal_int.h"

static const char *const extra_names[] = {"embed",       "sample",      "allreduce",  "send_recv",
                                          "moe_router",  "moe_experts", "moe_shared", "all2all",
                                          "dsa_indexer", "linear_attn"};
_Static_assert(sizeof extra_names / sizeof extra_names[0] == CAL_OP_TOTAL - KERN_OP_COUNT,
               "a name for every cal_op");

const char *cal_op_name(int op)
{
    if (op >= 0 && op < KERN_OP_COUNT)
        return kern_op_name((kern_op)op);
    if (op >= KERN_OP_COUNT && op < CAL_OP_TOTAL)
        return extra_names[op - KERN_OP_COUNT];
    return "?";
}

/* Does the part of a pass other than decode attention (which alone changes from one decode step
 * to the next) match the cache's? */
static int same_rest(const eng_shape *a, const eng_shape *b)
{
    return a->tokens == b->tokens && a->num_seqs == b->num_seqs &&
           a->prefill_seqs == b->prefill_seqs && a->prefill_tokens == b->prefill_tokens &&
           a->prefill_pairs == b->prefill_pairs && a->prefill_kv == b->prefill_kv &&
           a->prefill_q2 == b->prefill_q2 && a->decode_seqs == b->decode_seqs &&
           a->emit_seqs == b->emit_seqs && a->cap == b->cap && a->cap_chunked == b->cap_chunked &&
           (a->cap == 0 || (a->prefill_pairs_capped == b->prefill_pairs_capped &&
                            a->prefill_kv_capped == b->prefill_kv_capped));
}

cal_plan cal_plan_dense(int layers, int tp)
{
    cal_plan p = {{layers, 0, 0}, layers, 0, tp, 1, 1, 0};
    return p;
}

static const int attn_seq[] = {KERN_OP_RMSNORM,      KERN_OP_QKV_PROJ, KERN_OP_ROPE,
                               KERN_OP_ATTN_PREFILL, KERN_OP_O_PROJ,   CAL_OP_ALLREDUCE,
                               KERN_OP_ADD};
static const int linear_seq[] = {KERN_OP_RMSNORM, KERN_OP_QKV_PROJ, CAL_OP_LINEAR_ATTN,
                                 KERN_OP_O_PROJ,  CAL_OP_ALLREDUCE, KERN_OP_ADD};
static const int mlp_seq[] = {KERN_OP_RMSNORM,  KERN_OP_MLP_UP_GATE, KERN_OP_MLP_ACT,
                              KERN_OP_MLP_DOWN, CAL_OP_ALLREDUCE,    KERN_OP_ADD};
/* MODEL: an MoE layer as vLLM's FusedMoE runs it: router, (dispatch), the experts' grouped
 * GEMMs, (combine), the shared experts, then the reduction over the TP group. */
static const int moe_seq[] = {KERN_OP_RMSNORM, CAL_OP_ROUTER, CAL_OP_ALL2ALL,   CAL_OP_EXPERTS,
                              CAL_OP_ALL2ALL,  CAL_OP_SHARED, CAL_OP_ALLREDUCE, KERN_OP_ADD};
#define NSEQ(a) (sizeof(a) / sizeof((a)[0]))

/* The sums a capped-kind operator reads: the capped ones when the shape has a cap. */
static void attn_sums(const eng_shape *s, int kind, double *pairs, double *kv, double *dctx)
{
    int capped = kind == CAL_KIND_CAPPED && s->cap > 0;
    *pairs = capped ? s->prefill_pairs_capped : s->prefill_pairs;
    *kv = capped ? s->prefill_kv_capped : s->prefill_kv;
    *dctx = (double)(capped ? s->decode_ctx_capped : s->decode_ctx);
}

/* A per-layer operator's work over the pass's tokens: the fields every layer operator sets
 * (kind: the layer's attention kind, 0 for the MLP's operators). */
static cal_work layer_op(const eng_shape *s, int op, int kind)
{
    return (cal_work){.op = op,
                      .tokens = (double)s->tokens,
                      .per_layer = 1,
                      .kind = kind,
                      .eager = s->prefill_tokens > 0};
}

/* One layer's prefill attention of kind `kind` (the pass has prefill chunks). */
static double prefill_attn(const eng_shape *s, int kind,
                           double (*fn)(const void *st, const cal_work *w), const void *st)
{
    double pairs, kv, dctx;
    attn_sums(s, kind, &pairs, &kv, &dctx);
    cal_work w = layer_op(s, KERN_OP_ATTN_PREFILL, kind);
    w.seqs = s->prefill_seqs;
    w.q_tokens = (double)s->prefill_tokens;
    w.pairs = pairs;
    w.kv = kv;
    w.causal = (s->prefill_q2 + (double)s->prefill_tokens) / 2;
    return fn(st, &w);
}

static int has_prefill(const eng_shape *s)
{
    return s->prefill_seqs > 0 && s->prefill_tokens > 0;
}

/* One layer of attention kind `kind`, all but the operators that read decode contexts, and
 * without its prefill attention unless with_prefill. */
static double attn_rest(const eng_shape *s, const cal_plan *p, int kind, int with_prefill,
                        double (*fn)(const void *st, const cal_work *w), const void *st)
{
    const int *seq = kind == CAL_KIND_LINEAR ? linear_seq : attn_seq;
    size_t n = kind == CAL_KIND_LINEAR ? NSEQ(linear_seq) : NSEQ(attn_seq);
    double rest = 0;
    for (size_t i = 0; i < n; i++) {
        cal_work w = layer_op(s, seq[i], kind);
        if (seq[i] == KERN_OP_ATTN_PREFILL) {
            if (with_prefill && has_prefill(s))
                rest += prefill_attn(s, kind, fn, st);
            continue;
        } else if (seq[i] == CAL_OP_ALLREDUCE && p->tp <= 1) {
            continue;
        } else if (seq[i] == CAL_OP_LINEAR_ATTN) {
            w.seqs = s->num_seqs;
            w.prefill_seqs = s->prefill_seqs;
            w.prefill_tokens = (double)s->prefill_tokens;
        }
        rest += fn(st, &w);
    }
    return rest;
}

/* One layer of attention kind `kind`: the operators that read decode contexts. */
static double attn_decode(const eng_shape *s, const cal_plan *p, int kind,
                          double (*fn)(const void *st, const cal_work *w), const void *st)
{
    double t = 0, pairs, kv, dctx;
    if (kind == CAL_KIND_LINEAR)
        return 0;
    attn_sums(s, kind, &pairs, &kv, &dctx);
    if (s->decode_seqs > 0) {
        cal_work w = layer_op(s, KERN_OP_ATTN_DECODE, kind);
        w.seqs = s->decode_seqs;
        w.pairs = dctx + s->decode_seqs;
        t += fn(st, &w);
    }
    if (p->indexer && kind == CAL_KIND_CAPPED) {
        /* the indexer scores every earlier key of every query, capped or not */
        double dk = (double)s->decode_ctx + s->decode_seqs;
        cal_work w = layer_op(s, CAL_OP_INDEXER, kind);
        w.seqs = s->num_seqs;
        w.q_tokens = (double)s->prefill_tokens;
        w.pairs = s->prefill_pairs + dk;
        w.kv = s->prefill_kv + dk;
        t += fn(st, &w);
    }
    return t;
}

static double ffn_rest(const eng_shape *s, const cal_plan *p, int moe,
                       double (*fn)(const void *st, const cal_work *w), const void *st)
{
    const int *seq = moe ? moe_seq : mlp_seq;
    size_t n = moe ? NSEQ(moe_seq) : NSEQ(mlp_seq);
    double rest = 0;
    int phase = 0;
    for (size_t i = 0; i < n; i++) {
        cal_work w = layer_op(s, seq[i], 0);
        if (seq[i] == CAL_OP_ALLREDUCE && p->tp <= 1)
            continue;
        if (seq[i] == CAL_OP_ALL2ALL) {
            if (p->dp <= 1)
                continue;
            w.phase = phase++;
        }
        rest += fn(st, &w);
    }
    return rest;
}

/* The embedding and the final norm: once per pass, by token count. */
static double once_tok(const eng_shape *s, double (*fn)(const void *st, const cal_work *w),
                       const void *st, int eager)
{
    cal_work embed = {.op = CAL_OP_EMBED, .tokens = (double)s->tokens, .eager = eager};
    cal_work norm = {.op = KERN_OP_RMSNORM, .tokens = (double)s->tokens, .eager = eager};
    return fn(st, &embed) + fn(st, &norm);
}

/* The LM head and sampling of the sequences that emit a token. */
static double once_emit(const eng_shape *s, double (*fn)(const void *st, const cal_work *w),
                        const void *st, int eager)
{
    if (s->emit_seqs <= 0)
        return 0;
    cal_work head = {.op = KERN_OP_LM_HEAD, .tokens = s->emit_seqs, .eager = eager};
    cal_work sample = {.op = CAL_OP_SAMPLE, .tokens = s->emit_seqs, .eager = eager};
    return fn(st, &head) + fn(st, &sample);
}

/* The cache's table for [eager][0..CAL_WALK_TAB), allocated on first use (zeros). */
static double *table(double **t)
{
    if (!*t)
        *t = sim_xcalloc(2 * CAL_WALK_TAB, sizeof **t);
    return *t;
}

/* A dense layer without its prefill attention. */
static inline double dense_tok(const eng_shape *s, const cal_plan *p,
                               double (*fn)(const void *st, const cal_work *w), const void *st,
                               cal_walk_cache *c, int eager)
{
    if (!c || s->tokens >= CAL_WALK_TAB)
        return attn_rest(s, p, CAL_KIND_FULL, 0, fn, st) + ffn_rest(s, p, 0, fn, st);
    double *v = &table(&c->tok)[eager * CAL_WALK_TAB + s->tokens];
    if (*v == 0)
        *v = attn_rest(s, p, CAL_KIND_FULL, 0, fn, st) + ffn_rest(s, p, 0, fn, st);
    return *v;
}

/* A dense model's once-per-pass operators. */
static inline double dense_once(const eng_shape *s, double (*fn)(const void *st, const cal_work *w),
                                const void *st, cal_walk_cache *c, int eager)
{
    if (!c || s->tokens >= CAL_WALK_TAB || s->emit_seqs >= CAL_WALK_TAB)
        return once_tok(s, fn, st, eager) + once_emit(s, fn, st, eager);
    double *t = &table(&c->once_tok)[eager * CAL_WALK_TAB + s->tokens];
    if (*t == 0)
        *t = once_tok(s, fn, st, eager);
    double e = 0;
    if (s->emit_seqs > 0) {
        double *v = &table(&c->emit)[eager * CAL_WALK_TAB + s->emit_seqs];
        if (*v == 0)
            *v = once_emit(s, fn, st, eager);
        e = *v;
    }
    return *t + e;
}

/* A dense layer's prefill attention (the pass has prefill chunks): from the cache's table when
 * the pass is one chunk alone, every input of the work (tokens, sequences, chunk tokens, pairs,
 * keys, squares) then matching the entry's. */
static double dense_prefill(const eng_shape *s, double (*fn)(const void *st, const cal_work *w),
                            const void *st, cal_walk_cache *c)
{
    int64_t q = s->prefill_tokens;
    if (!c || s->prefill_seqs != 1 || s->num_seqs != 1 || s->tokens != q || q >= CAL_WALK_TAB)
        return prefill_attn(s, CAL_KIND_FULL, fn, st);
    if (!c->prefill)
        c->prefill = sim_xcalloc(CAL_WALK_TAB, sizeof *c->prefill);
    struct cal_walk_prefill *v = &c->prefill[q];
    if (v->ns != 0 && v->pairs == s->prefill_pairs && v->kv == s->prefill_kv &&
        v->q2 == s->prefill_q2) {
        SIM_ASSERT(NULL, v->ns == prefill_attn(s, CAL_KIND_FULL, fn, st));
        return v->ns;
    }
    double ns = prefill_attn(s, CAL_KIND_FULL, fn, st);
    *v = (struct cal_walk_prefill){s->prefill_pairs, s->prefill_kv, s->prefill_q2, ns};
    return ns;
}

void cal_walk_cache_free(cal_walk_cache *c)
{
    if (c)
        SIM_FREE_ALL(c->tok, c->once_tok, c->emit, c->prefill, c);
}

/* A dense plan's decode attention of one layer: attn_decode's, through the cache's owner's
 * decode function when it has one (debug builds check that it agrees to the bit). */
static inline double dense_decode(const eng_shape *s, const cal_plan *p,
                                  double (*fn)(const void *st, const cal_work *w), const void *st,
                                  const cal_walk_cache *c)
{
    if (!c || !c->decode)
        return attn_decode(s, p, CAL_KIND_FULL, fn, st);
    double t = 0;
    if (s->decode_seqs > 0)
        t += c->decode(st, s->decode_seqs, (double)s->decode_ctx + s->decode_seqs,
                       s->prefill_tokens > 0);
    SIM_ASSERT(NULL, t == attn_decode(s, p, CAL_KIND_FULL, fn, st));
    return t;
}

/* Is plan p dense: one full-attention kind, dense MLPs in every layer (one per-layer sum)? */
static inline int plan_dense(const cal_plan *p)
{
    return p->attn[CAL_KIND_FULL] == p->dense && p->moe == 0 && p->attn[CAL_KIND_CAPPED] == 0 &&
           p->attn[CAL_KIND_LINEAR] == 0;
}

/* The part of cal_plan_walk's sum that does not read decode contexts (*rest, *once; *dense: the
 * plan keeps one per-layer sum), taken into the cache when there is one. */
static void walk_rest(const eng_shape *s, const cal_plan *p,
                      double (*fn)(const void *st, const cal_work *w), const void *st,
                      cal_walk_cache *cache, double *rest_out, double *once_out, int *dense_out)
{
    double rest = 0, once = 0;
    int dense;
    /* a dense model (one attention kind, dense MLPs in every layer) keeps one per-layer sum */
    dense = plan_dense(p);
    int eager = s->prefill_tokens > 0;
    if (dense) {
        /* the operators that depend on the token count and eagerness alone come from the
         * cache's tables when it has them: steps of equal token counts share them */
        rest = dense_tok(s, p, fn, st, cache, eager);
        if (has_prefill(s))
            rest += dense_prefill(s, fn, st, cache);
        once = dense_once(s, fn, st, cache, eager);
    } else {
        for (int k = 0; k < CAL_KIND_COUNT; k++)
            if (p->attn[k] > 0)
                rest += p->attn[k] * attn_rest(s, p, k, 1, fn, st);
        if (p->dense > 0)
            rest += p->dense * ffn_rest(s, p, 0, fn, st);
        if (p->moe > 0)
            rest += p->moe * ffn_rest(s, p, 1, fn, st);
        once = once_tok(s, fn, st, eager) + once_emit(s, fn, st, eager);
    }
    if (cache) {
        cache->valid = 1;
        cache->key = *s;
        cache->rest = rest;
        cache->once = once;
        cache->dense = dense;
    }
    *rest_out = rest;
    *once_out = once;
    *dense_out = dense;
}

double cal_plan_walk(const eng_shape *s, const cal_plan *p,
                     double (*fn)(const void *st, const cal_work *w), const void *st,
                     cal_walk_cache *cache)
{
    double rest = 0, once = 0, dep = 0;
    int dense;
    if (s->tokens <= 0)
        return 0;
    if (cache && cache->valid && same_rest(&cache->key, s)) {
        rest = cache->rest;
        once = cache->once;
        dense = cache->dense;
    } else {
        walk_rest(s, p, fn, st, cache, &rest, &once, &dense);
    }
    if (dense)
        return (rest + dense_decode(s, p, fn, st, cache)) * p->dense + once;
    for (int k = 0; k < CAL_KIND_COUNT; k++)
        if (p->attn[k] > 0)
            dep += p->attn[k] * attn_decode(s, p, k, fn, st);
    return rest + dep + once;
}

int cal_plan_decode_base(const eng_shape *s, const cal_plan *p,
                         double (*fn)(const void *st, const cal_work *w), const void *st,
                         cal_walk_cache *cache, eng_decode_base *b)
{
    if (!cache || !cache->decode || s->tokens <= 0 || s->decode_seqs <= 0 || !plan_dense(p))
        return 0;
    if (!cache->valid || !same_rest(&cache->key, s)) {
        double rest, once;
        int dense;
        walk_rest(s, p, fn, st, cache, &rest, &once, &dense); /* the cache's sums are s's now */
    }
    SIM_ASSERT(NULL, cache->valid && cache->dense && same_rest(&cache->key, s));
    *b = (eng_decode_base){.rest = cache->rest,
                           .once = cache->once,
                           .layers = p->dense,
                           .seqs = s->decode_seqs,
                           .eager = s->prefill_tokens > 0};
    return 1;
}

int64_t cal_plan_walk_passes(const eng_shape *s, const cal_plan *p,
                             double (*fn)(const void *st, const cal_work *w), const void *st,
                             cal_walk_cache *cache, int32_t passes, int64_t dctx, int64_t dcapped)
{
    eng_shape q = *s;
    int64_t ns = 0;
    if (s->tokens <= 0 || !plan_dense(p)) {
        for (int32_t j = 0; j < passes; j++) {
            q.decode_ctx = s->decode_ctx + j * dctx;
            q.decode_ctx_capped = s->decode_ctx_capped + j * dcapped;
            ns += cal_ns_round(cal_plan_walk(&q, p, fn, st, cache));
        }
        return ns;
    }
    /* the passes share every operator but decode attention: cal_plan_walk's dense sum, the
     * rest priced once (a pass without prefill depends on its token and emitting counts alone) */
    double rest, once;
    int plain = s->prefill_seqs == 0 && s->prefill_tokens == 0 && cache;
    if (plain && cache->pass_tokens == s->tokens && cache->pass_emit == s->emit_seqs) {
        rest = cache->pass_rest;
        once = cache->pass_once;
    } else {
        int eager = s->prefill_tokens > 0;
        rest = dense_tok(s, p, fn, st, cache, eager);
        if (has_prefill(s))
            rest += dense_prefill(s, fn, st, cache);
        once = dense_once(s, fn, st, cache, eager);
        if (plain) {
            cache->pass_tokens = s->tokens;
            cache->pass_emit = s->emit_seqs;
            cache->pass_rest = rest;
            cache->pass_once = once;
        }
    }
    for (int32_t j = 0; j < passes; j++) {
        q.decode_ctx = s->decode_ctx + j * dctx;
        q.decode_ctx_capped = s->decode_ctx_capped + j * dcapped;
        int64_t t = cal_ns_round((rest + dense_decode(&q, p, fn, st, cache)) * p->dense + once);
        SIM_ASSERT(NULL, t == cal_ns_round(cal_plan_walk(&q, p, fn, st, NULL)));
        ns += t;
    }
    return ns;
}

double cal_layer_walk(const eng_shape *s, int layers, int tp,
                      double (*fn)(const void *st, const cal_work *w), const void *st,
                      cal_walk_cache *cache)
{
    cal_plan p = cal_plan_dense(layers, tp);
    return cal_plan_walk(s, &p, fn, st, cache);
}
