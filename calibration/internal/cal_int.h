/*
 * cal_int.h: what calibration/'s own files share: the operator list of one forward pass and the
 * walker that turns an iteration's shape into per-operator work.
 *
 * Both the roofline and the fitted profiles cost an iteration the same way: cal_layer_walk
 * visits each operator of one layer once (the caller multiplies by the layer count) and the
 * operators that run once per pass (final norm, LM head, sampling), handing the cost function
 * the operator's aggregate work. Included only by the .c files of calibration/.
 */
#ifndef CAL_INT_H
#define CAL_INT_H

#include "catalog.h"
#include "kernels.h"
#include "predictor.h"
#include "profile.h"

/* One name standing for another: a row of a lookup table (aliases, another tool's names). */
typedef struct cal_name_pair {
    const char *from, *to;
} cal_name_pair;

/* The `to` of the row of table (n rows) whose `from` is name; NULL when none is (or name is
 * NULL). alias.c. */
const char *cal_name_lookup(const cal_name_pair *table, size_t n, const char *name);
#define CAL_NAME_LOOKUP(table, name) cal_name_lookup(table, sizeof table / sizeof table[0], name)

/* The operators of a pass: the first KERN_OP_COUNT are kernels.h's, the rest are costed only
 * by the roofline (a measured profile has no kernel for them). */
typedef enum cal_op {
    CAL_OP_EMBED = KERN_OP_COUNT, /* token embedding gather */
    CAL_OP_SAMPLE,                /* softmax and sampling over the vocabulary */
    CAL_OP_ALLREDUCE,             /* tensor-parallel all-reduce of the activations */
    CAL_OP_SEND_RECV,             /* point-to-point copy between two GPUs (imported tables) */
    CAL_OP_ROUTER,                /* MoE router: logits and top-k */
    CAL_OP_EXPERTS,               /* routed experts' grouped GEMMs and activation */
    CAL_OP_SHARED,                /* shared experts (a dense MLP) */
    CAL_OP_ALL2ALL,               /* expert-parallel dispatch or combine */
    CAL_OP_INDEXER,               /* DeepSeek sparse attention's indexer and top-k */
    CAL_OP_LINEAR_ATTN,           /* gated DeltaNet: convolution and recurrence */
    CAL_OP_TOTAL
} cal_op;

/* Which attention a per-layer operator belongs to. */
typedef enum cal_kind {
    CAL_KIND_FULL = 0, /* attends to the whole context */
    CAL_KIND_CAPPED,   /* windowed, chunked or DeepSeek-sparse: the capped sums */
    CAL_KIND_LINEAR,   /* linear attention: a fixed state per sequence */
    CAL_KIND_COUNT
} cal_kind;

/* The aggregate work of one operator in one pass (one layer for per-layer operators). Sums are
 * over the whole replica (every attention rank of a data-parallel layout). */
typedef struct cal_work {
    int op;          /* kern_op or cal_op */
    double tokens;   /* rows: query tokens of the pass, or emitting sequences for the LM head */
    double seqs;     /* attention: sequences */
    double q_tokens; /* attn_prefill: sum of chunk lengths */
    double pairs;    /* attn_prefill: query-key pairs; attn_decode: keys read (sum of ctx + 1);
                        dsa_indexer: every query-key pair of the pass (prefill and decode) */
    double kv;       /* attn_prefill: sum of (context + chunk): keys read; dsa_indexer: keys
                        read by the whole pass */
    double causal;   /* attn_prefill: the pairs of the chunks' own causal squares, sum of
                        q (q + 1) / 2 (the rest of `pairs` is over cached context) */
    int per_layer;   /* 1: runs in every layer; 0: once per pass */
    int kind;        /* cal_kind of the layer (attention-side operators) */
    int phase;       /* all2all: 0 dispatch, 1 combine */
    int eager;       /* 1: the pass has prefill tokens (its kernels launch without a graph) */
    double prefill_seqs, prefill_tokens; /* the pass's prefill part (linear_attn) */
} cal_work;

/* A pass's layers by kind: how many layers of each attention kind and of each MLP kind. */
typedef struct cal_plan {
    int attn[CAL_KIND_COUNT]; /* layers per attention kind */
    int dense;                /* layers with a dense MLP */
    int moe;                  /* layers with routed experts */
    int tp;                   /* tensor parallelism: all-reduces when > 1 */
    int dp;                   /* attention data parallelism: all2all in MoE layers when > 1 */
    int ep;                   /* expert parallelism */
    int indexer;              /* 1: DeepSeek sparse attention (an indexer in capped layers) */
} cal_plan;

/* The plan of a dense model of `layers` full-attention layers under tensor parallelism tp. */
cal_plan cal_plan_dense(int layers, int tp);

/* What the last walk cost apart from the operators that read decode contexts, for the next
 * call: consecutive decode steps differ only in their contexts, so the rest is reused when the
 * rest of the shape is. */
typedef struct cal_walk_cache {
    int valid;
    eng_shape key;
    double rest; /* every layer, ns */
    double once; /* ns */
    int dense;   /* the walk's plan is dense (one full-attention kind, dense MLPs only) */
    /* Optional, set by the cache's owner (NULL: fn prices it): what fn gives, to the bit, for
     * the decode attention of one layer of a dense plan (a KERN_OP_ATTN_DECODE work of kind
     * CAL_KIND_FULL) from the work's seqs, pairs and eager alone, so that a decode step, whose
     * only new operator it is, is priced without building the work and dispatching on it. */
    double (*decode)(const void *st, double seqs, double pairs, int eager);
    /* A dense model's operators that depend on the pass's token count and eagerness alone
     * (a layer without its prefill attention; the embedding and final norm) and on its emitting
     * sequences alone (LM head and sampling), by [eager][count] for counts below
     * CAL_WALK_TAB; 0 = not priced yet (every priced count costs more than 0). Allocated on
     * first use; free with cal_walk_cache_free. */
    double *tok, *once_tok, *emit;
    /* A dense layer's prefill attention in a pass that is one prefill chunk and nothing else, by
     * the chunk's tokens (below CAL_WALK_TAB), with the sums it was priced at (a chunk over
     * cached context has other sums: priced afresh). Allocated on first use. */
    struct cal_walk_prefill {
        double pairs, kv, q2, ns; /* ns 0: not priced yet */
    } * prefill;
    /* cal_plan_walk_passes's last dense passes without prefill: their token count and emitting
     * sequences (0: none yet), a layer without its decode attention and the once-per-pass sum */
    int64_t pass_tokens;
    int32_t pass_emit;
    double pass_rest, pass_once;
} cal_walk_cache;
#define CAL_WALK_TAB 65536

/* Frees a cache and its tables (NULL allowed). */
void cal_walk_cache_free(cal_walk_cache *c);

/* Calls fn(st, w) for every operator of a pass of shape s laid out as plan p, skipping
 * attention kinds with no sequences and all-reduces when tp == 1; returns the sum of what fn
 * returned, per-layer operators multiplied by their layer counts. fn returns ns and must depend
 * only on its arguments. cache (may be NULL) is reused and updated; the result does not depend
 * on it. One cache serves one plan, fn and st. */
double cal_plan_walk(const eng_shape *s, const cal_plan *p,
                     double (*fn)(const void *st, const cal_work *w), const void *st,
                     cal_walk_cache *cache);
/* The sum over j = 0..passes-1 of cal_ns_round(cal_plan_walk(s_j, p, fn, st, cache)), s_j being
 * s with decode_ctx + j * dctx and decode_ctx_capped + j * dcapped: passes of one batch whose
 * contexts grow alike. The same to the bit (debug builds walk every pass to check); a dense plan
 * prices the operators that do not read contexts once. */
int64_t cal_plan_walk_passes(const eng_shape *s, const cal_plan *p,
                             double (*fn)(const void *st, const cal_work *w), const void *st,
                             cal_walk_cache *cache, int32_t passes, int64_t dctx, int64_t dcapped);
/* A decode run's base for the cache owner's decode function (eng_predictor_ops.decode_base):
 * fills *b with the sums cal_plan_walk prices s with but its decode attention (the cache takes
 * them: s is walked) and returns 1; 0 when the walk has no such split (no cache or decode
 * function, a plan that is not dense, no decode sequences). Then cal_ns_round((b->rest +
 * decode(st, b->seqs, ctx + b->seqs, b->eager)) * b->layers + b->once) is cal_ns_round of the
 * walk of s with decode_ctx = ctx, to the bit. */
int cal_plan_decode_base(const eng_shape *s, const cal_plan *p,
                         double (*fn)(const void *st, const cal_work *w), const void *st,
                         cal_walk_cache *cache, eng_decode_base *b);
/* cal_plan_walk of cal_plan_dense(layers, tp). */
double cal_layer_walk(const eng_shape *s, int layers, int tp,
                      double (*fn)(const void *st, const cal_work *w), const void *st,
                      cal_walk_cache *cache);

/* Name of a kern_op or cal_op ("qkv_proj", ..., "embed", "sample", "allreduce"). */
const char *cal_op_name(int op);

/* The roofline's time for one operator's work (roofline.c); rl must come from cal_roofline_new. */
double cal_roofline_work_ns(const eng_predictor *rl, const cal_work *w);

/* ---- fit.c: the two per-operator forms ---- */

/* Fits the roofline form of f->op to the n points pts[idx[0..n-1]] by weighted least squares
 * on relative error, searching the hinge over the points' x values for linear and elementwise
 * operators. Sets f->ncoef, f->coef, f->knee. Returns 0, or -1 with err (too few points, GSL
 * failure). */
int cal_fit_roofline(cal_fit *f, const cal_point *pts, const int *idx, int n, sim_err *err);
/* The roofline form at one shape (x, y); >= 0. */
double cal_fit_roofline_at(const cal_fit *f, double x, double y);

/* The interpolation grid of one operator, built from the points pts[idx[0..n-1]]. */
typedef struct cal_grid2 {
    int nx, ny;
    double *xs, *ys; /* sorted axes */
    double *v;       /* v[i * ny + j]: at (xs[i], ys[j]), time / f (ratio) or time */
    int ratio;       /* 1: v holds measured / roofline-form ratios */
} cal_grid2;
/* Builds the grid (never NULL for n >= 1). When the roofline form f is positive at every point
 * the grid holds measured / f ratios, so interpolation follows f's curvature between points and
 * f itself (scaled to meet the grid's edge) beyond them; otherwise it holds times. Cells
 * without a point are filled by interpolating along their row, then their column, then with
 * f (ratio 1). Free with
 * cal_fit_grid_free. */
cal_grid2 *cal_fit_grid_new(const cal_fit *f, const cal_point *pts, const int *idx, int n);
void cal_fit_grid_free(cal_grid2 *g);
/* Piecewise-(bi)linear interpolation at (x, y) (of the ratio to f, times f, when g->ratio);
 * beyond the grid, the roofline form scaled to the value at the nearest grid edge. */
double cal_fit_grid_at(const cal_grid2 *g, const cal_fit *f, double x, double y);

/* ---- hfconfig.c ---- */

/* Reads config text for a catalog entry named `name` (messages say "catalog:NAME"); as
 * cal_model_from_config_text otherwise. */
int cal_model_named_from_text(const char *name, const char *text, eng_model *out, char *why,
                              size_t len);

/* ---- price.c ---- */

/* Sets g's price per GPU-hour and power figures from catalog row s (0 where the row states
 * none), the idle power by the power model. */
void cal_gpu_cost_of(const cal_gpu_sheet *s, eng_gpu *g);

/* Converts a predicted time in ns to the iteration_ns contract (>= 1, rounded). Inline: once
 * per pass priced. */
static inline int64_t cal_ns_round(double ns)
{
    if (!(ns >= 1.0))
        return 1;
    if (ns > 9.0e18)
        return INT64_C(9000000000000000000);
    /* llround without the libm call: ns - i is exact, ns being in [1, 9e18], so halves round
     * away from zero exactly as llround does */
    int64_t i = (int64_t)ns;
    return ns - (double)i >= 0.5 ? i + 1 : i;
}

#endif
