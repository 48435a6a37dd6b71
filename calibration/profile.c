/*
 * profile.c: fitted profiles: the held-out split, the choice of form per operator, the fit
 * report, and the predictor that costs a pass with the same layer walk as the roofline.
 *
 * The fits use the training points only, and so does the predictor's interpolation grid: the
 * reported held-out error describes exactly the model that predicts. A predictor borrows its
 * profile and owns its grids.
 */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_int.h"
#include "catalog.h"
#include "rng.h"
#include "roofline.h"
#include "stats.h"

_Static_assert(CAL_OP_EMBED == CAL_PROFILE_OP_EMBED &&
                   CAL_OP_ALLREDUCE == CAL_PROFILE_OP_ALLREDUCE &&
                   CAL_OP_SEND_RECV == CAL_PROFILE_OP_SEND_RECV &&
                   CAL_PROFILE_OPS == CAL_OP_SEND_RECV + 1,
               "profile op indices");

/* Held-out fraction and the stream base of the split (one stream per operator). */
#define HOLD_FRACTION 0.2
#define HOLD_STREAM_BASE 1000u

cal_profile *cal_profile_new(const char *name)
{
    cal_profile *p = sim_xcalloc(1, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name ? name : "");
    p->tp = 1;
    snprintf(p->dtype, sizeof p->dtype, "fp32");
    return p;
}

void cal_profile_free(cal_profile *p)
{
    if (!p)
        return;
    free(p->pts);
    free(p);
}

void cal_profile_add_point(cal_profile *p, const cal_point *pt)
{
    if (p->npts == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 256;
        p->pts = sim_xrealloc(p->pts, (size_t)p->cap * sizeof *p->pts);
    }
    p->pts[p->npts++] = *pt;
}

const char *cal_profile_op_name(int op)
{
    return op >= 0 && op < CAL_PROFILE_OPS ? cal_op_name(op) : "?";
}

int cal_profile_op_parse(const char *name)
{
    for (int i = 0; name && i < CAL_PROFILE_OPS; i++)
        if (strcmp(cal_op_name(i), name) == 0)
            return i;
    return -1;
}

static const char *const form_names[CAL_FORM_COUNT] = {"roofline", "interp"};

const char *cal_form_name(cal_form f)
{
    return (unsigned)f < CAL_FORM_COUNT ? form_names[f] : "?";
}

int cal_form_parse(const char *name)
{
    for (int i = 0; name && i < CAL_FORM_COUNT; i++)
        if (strcmp(form_names[i], name) == 0)
            return i;
    return -1;
}

/* Indices of op's points, split into training and held-out lists (by the held_out flags). */
static void split(const cal_profile *p, int op, int *train, int *nt, int *held, int *nh)
{
    *nt = *nh = 0;
    for (int i = 0; i < p->npts; i++) {
        if (p->pts[i].op != op)
            continue;
        if (p->pts[i].held_out)
            held[(*nh)++] = i;
        else
            train[(*nt)++] = i;
    }
}

/* Marks a seeded random 20% of op's points held out. */
static void choose_held_out(cal_profile *p, int op, uint64_t seed, int *idx)
{
    int n = 0;
    for (int i = 0; i < p->npts; i++)
        if (p->pts[i].op == op) {
            p->pts[i].held_out = 0;
            idx[n++] = i;
        }
    if (n < 5)
        return;
    int k = (int)lround(HOLD_FRACTION * n);
    gsl_rng *r = sim_rng_new_stream(seed, HOLD_STREAM_BASE + (unsigned)op);
    gsl_ran_shuffle(r, idx, (size_t)n, sizeof *idx);
    gsl_rng_free(r);
    for (int i = 0; i < k; i++)
        p->pts[idx[i]].held_out = 1;
}

static double ape(double pred, double t)
{
    return fabs(pred - t) / t * 100.0;
}

/* Median and 95th percentile of v[0..n-1] (NaN when n == 0). */
static void percentiles(const double *v, int n, double *med, double *p95)
{
    sim_samples s;
    sim_samples_init(&s);
    for (int i = 0; i < n; i++)
        sim_samples_add(&s, v[i]);
    *med = n ? sim_samples_percentile(&s, 50) : NAN;
    *p95 = n ? sim_samples_percentile(&s, 95) : NAN;
    sim_samples_free(&s);
}

/* Fits one operator: both forms on the training points, errors on the held-out ones; the
 * held-out APEs of the chosen form are added to all. */
static int fit_op(cal_profile *p, int op, int *train, int *held, sim_samples *all, sim_err *err)
{
    int nt, nh;
    split(p, op, train, &nt, held, &nh);
    cal_fit *f = &p->fits[op];
    memset(f, 0, sizeof *f);
    f->op = op;
    f->n_train = nt;
    f->n_held = nh;
    if (cal_fit_roofline(f, p->pts, train, nt, err))
        return -1;
    cal_grid2 *g = cal_fit_grid_new(f, p->pts, train, nt);
    double *e[CAL_FORM_COUNT];
    for (int k = 0; k < CAL_FORM_COUNT; k++)
        e[k] = sim_xmalloc((size_t)(nh + 1) * sizeof *e[k]);
    for (int i = 0; i < nh; i++) {
        const cal_point *pt = &p->pts[held[i]];
        e[CAL_FORM_ROOFLINE][i] = ape(cal_fit_roofline_at(f, pt->x, pt->y), pt->t_ns);
        e[CAL_FORM_INTERP][i] = ape(cal_fit_grid_at(g, f, pt->x, pt->y), pt->t_ns);
    }
    for (int k = 0; k < CAL_FORM_COUNT; k++)
        percentiles(e[k], nh, &f->med_ape[k], &f->p95_ape[k]);
    /* choose by held-out median error (p95 breaks ties); with nothing held out, interpolate */
    f->form = CAL_FORM_INTERP;
    if (nh && (f->med_ape[CAL_FORM_ROOFLINE] < f->med_ape[CAL_FORM_INTERP] ||
               (f->med_ape[CAL_FORM_ROOFLINE] == f->med_ape[CAL_FORM_INTERP] &&
                f->p95_ape[CAL_FORM_ROOFLINE] < f->p95_ape[CAL_FORM_INTERP])))
        f->form = CAL_FORM_ROOFLINE;
    for (int i = 0; i < nh; i++)
        sim_samples_add(all, e[f->form][i]);
    for (int k = 0; k < CAL_FORM_COUNT; k++)
        free(e[k]);
    cal_fit_grid_free(g);
    p->has_fit[op] = 1;
    return 0;
}

int cal_profile_fit(cal_profile *p, uint64_t seed, sim_err *err)
{
    int *a = sim_xmalloc((size_t)(p->npts + 1) * sizeof *a);
    int *b = sim_xmalloc((size_t)(p->npts + 1) * sizeof *b);
    sim_samples all;
    sim_samples_init(&all);
    int rc = 0;
    p->seed = seed;
    memset(p->has_fit, 0, sizeof p->has_fit);
    for (int op = 0; op < CAL_PROFILE_OPS && rc == 0; op++) {
        int n = 0;
        for (int i = 0; i < p->npts; i++)
            n += p->pts[i].op == op;
        if (n == 0)
            continue;
        choose_held_out(p, op, seed, a);
        rc = fit_op(p, op, a, b, &all, err);
    }
    p->med_ape = sim_samples_count(&all) > 0 ? sim_samples_percentile(&all, 50) : NAN;
    p->p95_ape = sim_samples_count(&all) > 0 ? sim_samples_percentile(&all, 95) : NAN;
    sim_samples_free(&all);
    free(a);
    free(b);
    return rc;
}

double cal_profile_op_ns(const cal_profile *p, int op, double x, double y)
{
    if (op < 0 || op >= CAL_PROFILE_OPS || !p->has_fit[op])
        return -1;
    const cal_fit *f = &p->fits[op];
    if (f->form == CAL_FORM_ROOFLINE)
        return cal_fit_roofline_at(f, x, y);
    int *a = sim_xmalloc((size_t)(p->npts + 1) * sizeof *a);
    int *b = sim_xmalloc((size_t)(p->npts + 1) * sizeof *b);
    int nt, nh;
    split(p, op, a, &nt, b, &nh);
    cal_grid2 *g = cal_fit_grid_new(f, p->pts, a, nt);
    double t = cal_fit_grid_at(g, f, x, y);
    cal_fit_grid_free(g);
    free(a);
    free(b);
    return t;
}

static void print_pct(FILE *f, double v)
{
    if (isnan(v))
        fprintf(f, "  %7s", "-");
    else
        fprintf(f, "  %6.2f%%", v);
}

void cal_profile_report(const cal_profile *p, FILE *f)
{
    fprintf(f, "fit report: profile %s, held-out %.0f%% (seed %llu), absolute percentage error\n",
            p->name, HOLD_FRACTION * 100, (unsigned long long)p->seed);
    fprintf(f, "%-13s %5s %5s  %-8s  %8s %8s  %8s %8s  %8s %8s\n", "operator", "train", "held",
            "chosen", "med", "p95", "roof.med", "roof.p95", "intp.med", "intp.p95");
    for (int op = 0; op < CAL_PROFILE_OPS; op++) {
        if (!p->has_fit[op])
            continue;
        const cal_fit *x = &p->fits[op];
        fprintf(f, "%-13s %5d %5d  %-8s", cal_op_name(op), x->n_train, x->n_held,
                cal_form_name(x->form));
        print_pct(f, x->med_ape[x->form]);
        print_pct(f, x->p95_ape[x->form]);
        for (int k = 0; k < CAL_FORM_COUNT; k++) {
            print_pct(f, x->med_ape[k]);
            print_pct(f, x->p95_ape[k]);
        }
        fputc('\n', f);
    }
    fprintf(f, "%-13s %5s %5s  %-8s", "overall", "", "", "");
    print_pct(f, p->med_ape);
    print_pct(f, p->p95_ape);
    fputc('\n', f);
}

const char *cal_profile_unmeasured(const cal_profile *p, char *buf, size_t len)
{
    static const int pass_ops[] = {KERN_OP_QKV_PROJ, KERN_OP_ATTN_PREFILL, KERN_OP_ATTN_DECODE,
                                   KERN_OP_O_PROJ,   KERN_OP_MLP_UP_GATE,  KERN_OP_MLP_ACT,
                                   KERN_OP_MLP_DOWN, KERN_OP_RMSNORM,      KERN_OP_ROPE,
                                   KERN_OP_LM_HEAD,  KERN_OP_ADD,          CAL_OP_EMBED,
                                   CAL_OP_SAMPLE};
    size_t used = 0;
    if (len == 0)
        return buf;
    buf[0] = '\0';
    for (size_t i = 0; i <= sizeof pass_ops / sizeof pass_ops[0]; i++) {
        int op = i < sizeof pass_ops / sizeof pass_ops[0] ? pass_ops[i] : CAL_OP_ALLREDUCE;
        if ((op < CAL_PROFILE_OPS && p->has_fit[op]) || (op == CAL_OP_ALLREDUCE && p->tp <= 1))
            continue;
        int w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", cal_op_name(op));
        if (w < 0 || used + (size_t)w >= len)
            break;
        used += (size_t)w;
    }
    return buf;
}

/* ---- the predictor ---- */

typedef struct fitted {
    const cal_profile *p;
    eng_model m;
    int tp;
    cal_grid2 *grid[CAL_PROFILE_OPS]; /* interp-form operators */
    cal_profile *owned;               /* freed with the predictor (cal_profile_predictor_take) */
    eng_predictor rl;                 /* roofline of the profile's GPU, for what is unmeasured */
    int has_rl;
    double pcie_bw;        /* bytes/s for transfers without a roofline; 0 = none */
    cal_walk_cache *cache; /* owned; the walk's reuse between decode steps */
} fitted;

static double fit_at(const fitted *s, int op, double x, double y)
{
    const cal_fit *f = &s->p->fits[op];
    if (f->form == CAL_FORM_INTERP && s->grid[op])
        return cal_fit_grid_at(s->grid[op], f, x, y);
    return cal_fit_roofline_at(f, x, y);
}

static double fitted_op_ns(const void *st, const cal_work *w)
{
    const fitted *s = st;
    int op = w->op;
    if (op >= CAL_PROFILE_OPS || !s->p->has_fit[op])
        return s->has_rl ? cal_roofline_work_ns(&s->rl, w) : 0;
    const cal_fit *f = &s->p->fits[op];
    if (op == KERN_OP_ATTN_PREFILL) {
        if (f->form == CAL_FORM_ROOFLINE) /* additive over sequences: exact on sums */
            return f->coef[0] * w->seqs + f->coef[1] * w->q_tokens + f->coef[2] * w->pairs +
                   f->coef[3] * w->kv;
        double q = w->q_tokens / w->seqs; /* the mean sequence, whose pairs match the mean */
        double c = (w->pairs / w->seqs - q * (q + 1) / 2) / q;
        return w->seqs * fit_at(s, op, q, c > 0 ? c : 0);
    }
    if (op == KERN_OP_ATTN_DECODE)
        return fit_at(s, op, w->seqs, w->pairs / w->seqs);
    if (op == CAL_OP_ALLREDUCE) /* MODEL: the imported NCCL table, by message bytes */
        return fit_at(s, op, w->tokens * s->m.hidden * 2.0, 0);
    return fit_at(s, op, w->tokens, 0);
}

static int64_t fitted_iteration_ns(const void *st, const eng_shape *sh)
{
    const fitted *s = st;
    return cal_ns_round(cal_layer_walk(sh, s->m.layers, s->tp, fitted_op_ns, s, s->cache));
}

static int64_t fitted_passes_ns(const void *st, const eng_shape *sh, int32_t passes, int64_t dctx,
                                int64_t dcapped)
{
    const fitted *s = st;
    cal_plan p = cal_plan_dense(s->m.layers, s->tp);
    return cal_plan_walk_passes(sh, &p, fitted_op_ns, s, s->cache, passes, dctx, dcapped);
}

static int64_t fitted_transfer_ns(const void *st, int64_t bytes)
{
    const fitted *s = st;
    if (s->has_rl)
        return s->rl.ops->transfer_ns(s->rl.st, bytes);
    if (bytes <= 0 || s->pcie_bw <= 0)
        return 0;
    return cal_ns_round((double)bytes / s->pcie_bw * 1e9);
}

static void fitted_fini(void *st)
{
    fitted *s = st;
    for (int i = 0; i < CAL_PROFILE_OPS; i++)
        cal_fit_grid_free(s->grid[i]);
    cal_predictor_free(&s->rl);
    cal_profile_free(s->owned);
    cal_walk_cache_free(s->cache);
    free(s);
}

static const eng_predictor_ops fitted_ops = {
    .name = "profile",
    .iteration_ns = fitted_iteration_ns,
    .transfer_ns = fitted_transfer_ns,
    .fini = fitted_fini,
    .passes_ns = fitted_passes_ns,
};

static int check_dims(const cal_profile *p, const eng_model *m, int tp, sim_err *err)
{
    const eng_model *d = &p->dims;
    if (d->hidden != m->hidden || d->heads != m->heads || d->kv_heads != m->kv_heads ||
        d->head_dim != m->head_dim || d->intermediate != m->intermediate ||
        (p->has_fit[KERN_OP_LM_HEAD] && d->vocab != m->vocab))
        return sim_errf(err,
                        "profile %s was taken for model %s (hidden %d, heads %d/%d, head_dim %d, "
                        "intermediate %d, vocab %d); model %s differs (hidden %d, heads %d/%d, "
                        "head_dim %d, intermediate %d, vocab %d)",
                        p->name, p->model, d->hidden, d->heads, d->kv_heads, d->head_dim,
                        d->intermediate, d->vocab, m->name, m->hidden, m->heads, m->kv_heads,
                        m->head_dim, m->intermediate, m->vocab);
    if (tp != p->tp)
        return sim_errf(err, "profile %s was taken at tensor parallelism %d, not %d", p->name,
                        p->tp, tp);
    return 0;
}

int cal_profile_predictor_new(const cal_profile *p, const eng_model *m, eng_dtype dt, int tp,
                              const eng_gpu *g, eng_predictor *out, sim_err *err)
{
    char why[512];
    cal_serving sv = cal_serving_tp(dt, tp);
    /* a profile measures one dense Llama-style layer: it prices what the roofline prices */
    if (cal_roofline_priced(m, &sv, why, sizeof why) != 0)
        return sim_errf(err, "%s", why);
    if (check_dims(p, m, tp, err))
        return -1;
    fitted *s = sim_xcalloc(1, sizeof *s);
    s->cache = sim_xcalloc(1, sizeof *s->cache);
    s->p = p;
    s->m = *m;
    s->tp = tp;
    eng_gpu pg;
    if (cal_gpu_find(p->gpu, &pg) == 0) {
        if (dt == ENG_FP8 && !(pg.flops_fp8 > 0))
            sv.dtype = ENG_BF16; /* the fallback costs what the table did not measure */
        if (cal_roofline_new(m, &pg, &sv, &s->rl, err)) {
            free(s);
            return -1;
        }
        s->has_rl = 1;
    }
    s->pcie_bw = g ? g->pcie_bw : 0;
    int *a = sim_xmalloc((size_t)(p->npts + 1) * sizeof *a);
    int *b = sim_xmalloc((size_t)(p->npts + 1) * sizeof *b);
    for (int op = 0; op < CAL_PROFILE_OPS; op++) {
        int nt, nh;
        if (!p->has_fit[op] || p->fits[op].form != CAL_FORM_INTERP)
            continue;
        split(p, op, a, &nt, b, &nh);
        if (nt > 0)
            s->grid[op] = cal_fit_grid_new(&p->fits[op], p->pts, a, nt);
    }
    free(a);
    free(b);
    out->ops = &fitted_ops;
    out->st = s;
    snprintf(out->label, sizeof out->label, "profile %.40s (%.8s %.5s %.30s on %.20s)", p->name,
             p->kind, p->backend, p->model, p->gpu);
    return 0;
}

int cal_profile_predictor_take(cal_profile *p, const eng_model *m, eng_dtype dt, int tp,
                               const eng_gpu *g, eng_predictor *out, sim_err *err)
{
    if (cal_profile_predictor_new(p, m, dt, tp, g, out, err)) {
        cal_profile_free(p);
        return -1;
    }
    ((fitted *)out->st)->owned = p;
    return 0;
}
