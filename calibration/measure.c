/*
 * measure.c: calibration grids, their measurement with a progress bar, and pass replay.
 *
 * MODEL: the kernels implement Llama-style layers (gated SiLU MLP). A non-gated model (OPT's
 * ReLU MLP of width I) is measured with an up projection and activation of a gated MLP of width
 * I/2, which have the same output width I and the same FLOPs, and a down projection from I.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cal_int.h"
#include "measure.h"

/* Memory caps for one shape's largest buffers: the CPU machine is assumed to have a few GiB
 * free, a catalog GPU at least 24 GiB. */
#define CPU_SHAPE_CAP (1.0 * (1 << 30))
#define CUDA_SHAPE_CAP (8.0 * (1 << 30))

static const char *const grid_names[] = {"quick", "full", "smoke"};

int cal_grid_parse(const char *s, cal_grid_kind *out)
{
    for (int k = 0; s && k < 3; k++)
        if (strcmp(s, grid_names[k]) == 0) {
            *out = (cal_grid_kind)k;
            return 0;
        }
    return -1;
}

const char *cal_grid_name(cal_grid_kind k)
{
    return (unsigned)k < 3 ? grid_names[k] : "?";
}

kern_dims cal_kern_dims(const eng_model *m)
{
    kern_dims d = {m->hidden, m->heads, m->kv_heads, m->head_dim, m->intermediate, m->vocab};
    return d;
}

/* The dimensions op runs with (non-gated MLPs: half width for up projection and activation). */
static kern_dims op_dims(const eng_model *m, int op)
{
    kern_dims d = cal_kern_dims(m);
    if (!m->gated_mlp && (op == KERN_OP_MLP_UP_GATE || op == KERN_OP_MLP_ACT))
        d.intermediate = (m->intermediate + 1) / 2;
    return d;
}

static const int quick_tokens[] = {1,   2,   4,   8,   16,  32,   64,   96,  128,
                                   192, 256, 384, 512, 768, 1024, 1536, 2048};
static const int quick_head[] = {1, 2, 4, 8, 16, 32, 64, 96, 128, 192, 256};
static const int quick_chunk[] = {16, 64, 128, 256, 512, 1024, 2048};
static const int quick_pctx[] = {0, 512, 1024, 2048};
static const int quick_batch[] = {1, 2, 4, 8, 16, 32, 64};
static const int quick_dctx[] = {16, 256, 512, 1024, 2048, 4096};

static const int smoke_tokens[] = {1, 4, 16, 32, 64, 128, 256};
static const int smoke_head[] = {1, 2, 4, 8, 16, 32};
static const int smoke_chunk[] = {16, 32, 64, 128, 256};
static const int smoke_pctx[] = {0, 128, 256};
static const int smoke_batch[] = {1, 2, 4, 8, 16};
static const int smoke_dctx[] = {16, 64, 128, 256};

static const int full_tokens[] = {1,   2,    3,    4,    6,    8,    12,   16,   24,   32,  48,
                                  64,  96,   128,  160,  192,  256,  320,  384,  512,  640, 768,
                                  896, 1024, 1280, 1536, 2048, 2560, 3072, 4096, 6144, 8192};
static const int full_head[] = {1,  2,  3,  4,  6,   8,   12,  16,  24,
                                32, 48, 64, 96, 128, 192, 256, 384, 512};
static const int full_chunk[] = {1,   16,  32,   64,   128,  256,  384,
                                 512, 768, 1024, 1536, 2048, 3072, 4096};
static const int full_pctx[] = {0, 256, 512, 1024, 2048, 3072, 4096, 6144, 8192};
static const int full_batch[] = {1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256};
static const int full_dctx[] = {16, 128, 256, 512, 1024, 1536, 2048, 3072, 4096, 6144, 8192};

#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

typedef struct grid_def {
    const int *tokens, *head, *chunk, *pctx, *batch, *dctx;
    int ntokens, nhead, nchunk, npctx, nbatch, ndctx;
} grid_def;

static grid_def grid_of(cal_grid_kind k)
{
    if (k == CAL_GRID_SMOKE)
        return (grid_def){smoke_tokens,     smoke_head,      smoke_chunk,       smoke_pctx,
                          smoke_batch,      smoke_dctx,      LEN(smoke_tokens), LEN(smoke_head),
                          LEN(smoke_chunk), LEN(smoke_pctx), LEN(smoke_batch),  LEN(smoke_dctx)};
    if (k == CAL_GRID_FULL)
        return (grid_def){full_tokens,     full_head,      full_chunk,       full_pctx,
                          full_batch,      full_dctx,      LEN(full_tokens), LEN(full_head),
                          LEN(full_chunk), LEN(full_pctx), LEN(full_batch),  LEN(full_dctx)};
    return (grid_def){quick_tokens,     quick_head,      quick_chunk,       quick_pctx,
                      quick_batch,      quick_dctx,      LEN(quick_tokens), LEN(quick_head),
                      LEN(quick_chunk), LEN(quick_pctx), LEN(quick_batch),  LEN(quick_dctx)};
}

/* The largest buffer of a shape in bytes (fp32), to keep grids inside memory. */
static double shape_bytes(const kern_shape *s)
{
    const kern_dims *d = &s->dims;
    double kv = (double)d->kv_heads * d->head_dim * 4;
    if (s->op == KERN_OP_ATTN_DECODE)
        return 2.0 * s->batch * (s->context + 16) * kv;
    if (s->op == KERN_OP_ATTN_PREFILL)
        return 2.0 * (s->tokens + s->context) * kv;
    return kern_shape_bytes(s, 4);
}

/* A grid's shapes as they are listed: each in the grid's dtype, those kern_shape_check refuses
 * or whose largest buffer is over `limit` bytes left out. */
typedef struct shape_list {
    kern_shape *v;
    int n, cap;
    double limit;
    kern_dtype dt;
} shape_list;

static void push(shape_list *l, kern_shape s)
{
    s.dtype = l->dt;
    if (kern_shape_check(&s, NULL, 0) != 0 || shape_bytes(&s) > l->limit)
        return;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 128;
        l->v = sim_xrealloc(l->v, (size_t)l->cap * sizeof *l->v);
    }
    l->v[l->n++] = s;
}

/* The per-token operators at each of the grid's token counts. */
static void token_shapes(shape_list *l, const eng_model *m, const grid_def *g)
{
    static const int token_ops[] = {KERN_OP_RMSNORM, KERN_OP_QKV_PROJ, KERN_OP_ROPE,
                                    KERN_OP_O_PROJ,  KERN_OP_ADD,      KERN_OP_MLP_UP_GATE,
                                    KERN_OP_MLP_ACT, KERN_OP_MLP_DOWN};
    for (int o = 0; o < LEN(token_ops); o++)
        for (int i = 0; i < g->ntokens; i++)
            push(l, (kern_shape){.op = token_ops[o],
                                 .dims = op_dims(m, token_ops[o]),
                                 .tokens = g->tokens[i]});
}

/* Attention: each prefill chunk after each prior context, then each decode batch at each
 * context (16-token KV blocks). */
static void attn_shapes(shape_list *l, const eng_model *m, const grid_def *g)
{
    kern_shape pre = {.op = KERN_OP_ATTN_PREFILL, .dims = op_dims(m, 0)};
    kern_shape dec = {
        .op = KERN_OP_ATTN_DECODE, .dims = op_dims(m, 0), .tokens = 1, .block_size = 16};
    for (int i = 0; i < g->nchunk; i++)
        for (int j = 0; j < g->npctx; j++) {
            pre.tokens = g->chunk[i];
            pre.context = g->pctx[j];
            push(l, pre);
        }
    for (int i = 0; i < g->nbatch; i++)
        for (int j = 0; j < g->ndctx; j++) {
            dec.batch = g->batch[i];
            dec.context = g->dctx[j];
            push(l, dec);
        }
}

int cal_grid_shapes(const eng_model *m, cal_grid_kind k, kern_backend be, kern_shape **out)
{
    grid_def g = grid_of(k);
    int cuda = be == KERN_BACKEND_CUDA;
    shape_list l = {.limit = cuda ? CUDA_SHAPE_CAP : CPU_SHAPE_CAP,
                    .dt = cuda ? KERN_BF16 : KERN_F32};
    token_shapes(&l, m, &g);
    attn_shapes(&l, m, &g);
    for (int i = 0; i < g.nhead; i++)
        push(&l, (kern_shape){.op = KERN_OP_LM_HEAD,
                              .dims = op_dims(m, KERN_OP_LM_HEAD),
                              .tokens = g.head[i]});
    *out = l.v;
    return l.n;
}

void cal_shape_point(const kern_shape *s, cal_point *pt)
{
    memset(pt, 0, sizeof *pt);
    pt->op = s->op;
    if (s->op == KERN_OP_ATTN_PREFILL) {
        pt->x = s->tokens;
        pt->y = s->context;
    } else if (s->op == KERN_OP_ATTN_DECODE) {
        pt->x = s->batch;
        pt->y = s->context;
    } else {
        pt->x = s->tokens;
    }
}

/* ---- progress ---- */

typedef struct progress {
    FILE *f;
    int tty;
    double t0, total_w, done_w;
    int last_op;
} progress;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A shape's expected cost, for the time-left estimate: FLOPs and bytes at rough CPU rates plus
 * the calls' fixed overhead (attention FLOPs run about ten times slower than sgemm's). Only the
 * ratios matter. */
static double weight(const kern_shape *s)
{
    double attn = s->op == KERN_OP_ATTN_PREFILL || s->op == KERN_OP_ATTN_DECODE ? 10 : 1;
    return attn * kern_shape_flops(s) / 2e10 + kern_shape_bytes(s, 4) / 5e9 + 4e-4;
}

static void clock_text(double s, char *buf, size_t len)
{
    int t = s < 0 ? 0 : s > 5999999 ? 5999999 : (int)(s + 0.5);
    snprintf(buf, len, "%d:%02d", t / 60, t % 60);
}

static void shape_text(const kern_shape *s, char *buf, size_t len)
{
    if (s->op == KERN_OP_ATTN_PREFILL)
        snprintf(buf, len, "%s chunk=%d context=%d", kern_op_name(s->op), s->tokens, s->context);
    else if (s->op == KERN_OP_ATTN_DECODE)
        snprintf(buf, len, "%s batch=%d context=%d", kern_op_name(s->op), s->batch, s->context);
    else
        snprintf(buf, len, "%s tokens=%d", kern_op_name(s->op), s->tokens);
}

static void draw(progress *pg, const kern_shape *s, int done, int n)
{
    if (!pg->f)
        return;
    char what[96], el[32], left[32];
    double e = now_s() - pg->t0;
    shape_text(s, what, sizeof what);
    clock_text(e, el, sizeof el);
    if (pg->done_w > 0)
        clock_text(e * (pg->total_w - pg->done_w) / pg->done_w, left, sizeof left);
    else
        snprintf(left, sizeof left, "?");
    if (pg->tty) {
        int width = 30, fill = (int)(width * (pg->done_w / pg->total_w));
        char bar[32];
        for (int i = 0; i < width; i++)
            bar[i] = i < fill ? '#' : '.';
        bar[width] = '\0';
        fprintf(pg->f, "\r[%s] %3d/%d %-40.40s elapsed %s left ~%s ", bar, done, n, what, el, left);
    } else if ((int)s->op != pg->last_op) {
        fprintf(pg->f, "calibrate: %d/%d done, measuring %s..., elapsed %s, left ~%s\n", done, n,
                kern_op_name(s->op), el, left);
    }
    pg->last_op = s->op;
    fflush(pg->f);
}

int cal_measure_grid(kern_bench *b, const eng_model *m, const kern_shape *shapes, int n,
                     const kern_bench_cfg *cfg, cal_profile *p, FILE *progress_f, sim_err *err)
{
    progress pg = {.f = progress_f,
                   .tty = progress_f && isatty(fileno(progress_f)),
                   .t0 = now_s(),
                   .last_op = -1};
    for (int i = 0; i < n; i++)
        pg.total_w += weight(&shapes[i]);
    for (int i = 0; i < n; i++) {
        draw(&pg, &shapes[i], i, n);
        kern_bench_result r;
        char msg[256];
        if (kern_bench_run(b, &shapes[i], cfg, &r, msg, sizeof msg) != 0) {
            char what[96];
            shape_text(&shapes[i], what, sizeof what);
            if (pg.tty)
                fputc('\n', progress_f);
            return sim_errf(err, "measuring %s: %s", what, msg);
        }
        cal_point pt;
        cal_shape_point(&shapes[i], &pt);
        pt.t_ns = (double)r.median_ns > 0 ? (double)r.median_ns : 1;
        pt.p10_ns = (double)r.p10_ns;
        pt.p90_ns = (double)r.p90_ns;
        pt.runs = r.runs;
        cal_profile_add_point(p, &pt);
        pg.done_w += weight(&shapes[i]);
    }
    if (progress_f) {
        char el[32];
        clock_text(now_s() - pg.t0, el, sizeof el);
        fprintf(progress_f, "%scalibrate: %d shapes measured in %s\n", pg.tty ? "\n" : "", n, el);
    }
    (void)m;
    return 0;
}

/* ---- replay of one pass ---- */

typedef struct replay {
    kern_bench *b;
    const eng_model *m;
    const kern_bench_cfg *cfg;
    sim_err *err;
    int failed;
} replay;

static double time_shape(replay *r, kern_shape s)
{
    kern_bench_result res;
    char msg[256];
    if (r->failed)
        return 0;
    if (kern_bench_run(r->b, &s, r->cfg, &res, msg, sizeof msg) != 0) {
        char what[96];
        shape_text(&s, what, sizeof what);
        sim_errf(r->err, "replaying %s: %s", what, msg);
        r->failed = 1;
        return 0;
    }
    return (double)res.median_ns;
}

static double replay_op(const void *st, const cal_work *w)
{
    replay *r = (replay *)st;
    if (w->op >= KERN_OP_COUNT)
        return 0;
    kern_shape s = {.op = w->op, .dims = op_dims(r->m, w->op), .tokens = (int)w->tokens};
    if (w->op == KERN_OP_ATTN_PREFILL) {
        double q = w->q_tokens / w->seqs, c = (w->pairs / w->seqs - q * (q + 1) / 2) / q;
        s.tokens = (int)lround(q) > 0 ? (int)lround(q) : 1;
        s.context = c > 0 ? (int)lround(c) : 0;
        return w->seqs * time_shape(r, s);
    }
    if (w->op == KERN_OP_ATTN_DECODE) {
        s.tokens = 1;
        s.batch = (int)w->seqs;
        s.context = (int)lround(w->pairs / w->seqs);
        s.block_size = 16;
    }
    return time_shape(r, s);
}

int cal_measure_pass(kern_bench *b, const eng_model *m, const eng_shape *s,
                     const kern_bench_cfg *cfg, double *ns, sim_err *err)
{
    replay r = {.b = b, .m = m, .cfg = cfg, .err = err};
    /* one layer's operators, timed once: cal_layer_walk multiplies per-layer work by layers */
    *ns = cal_layer_walk(s, m->layers, 1, replay_op, &r, NULL);
    return r.failed ? -1 : 0;
}
