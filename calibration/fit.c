/*
 * fit.c: the two forms an operator's time may take: a roofline-shaped linear model fitted with
 * GSL, and piecewise-linear interpolation over the measured grid.
 *
 * Roofline form features, per operator (t in ns):
 *   linear and elementwise ops, x = tokens:  t = c0 + c1 x + c2 max(0, x - knee)
 *       c0: launch cost plus the weights' memory time; c1: per-token memory and compute time;
 *       c2: the extra slope once the operator is compute-bound (knee = 0: no hinge, c2 = 0);
 *   attn_prefill, x = chunk q, y = context c:  t = c0 + c1 q + c2 (q c + q (q+1)/2) + c3 (c + q)
 *       launch, per-query work, query-key pairs (compute), keys read (memory);
 *   attn_decode, x = sequences b, y = keys per sequence c:  t = c0 + c1 b + c2 b c
 *       launch, per-sequence work, keys read.
 * Fits minimise the squared relative error (weights 1/t^2), since times span four decades and
 * the report is in percent. The state here is only what each call is given.
 */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cal_int.h"

static int is_token_op(int op)
{
    return op != KERN_OP_ATTN_PREFILL && op != KERN_OP_ATTN_DECODE;
}

/* The feature row of one shape for f->op (knee used for token operators). */
static int features(int op, double knee, double x, double y, double *row)
{
    if (op == KERN_OP_ATTN_PREFILL) {
        row[0] = 1;
        row[1] = x;
        row[2] = x * y + x * (x + 1) / 2;
        row[3] = y + x;
        return 4;
    }
    if (op == KERN_OP_ATTN_DECODE) {
        row[0] = 1;
        row[1] = x;
        row[2] = x * y;
        return 3;
    }
    row[0] = 1;
    row[1] = x;
    if (knee <= 0)
        return 2;
    row[2] = x > knee ? x - knee : 0;
    return 3;
}

double cal_fit_roofline_at(const cal_fit *f, double x, double y)
{
    double row[CAL_MAX_COEF], t = 0;
    int k = features(f->op, f->knee, x, y, row);
    for (int i = 0; i < k && i < f->ncoef; i++)
        t += f->coef[i] * row[i];
    return t > 0 ? t : 0;
}

/* Weighted least squares for a given knee; returns 0 and the weighted chi^2 in *chisq. */
static int solve(int op, double knee, const cal_point *pts, const int *idx, int n, double *coef,
                 int *ncoef, double *chisq, sim_err *err)
{
    double row[CAL_MAX_COEF];
    int k = features(op, knee, 1, 1, row);
    if (n < k + 1)
        return sim_errf(err, "%s: %d training points, the roofline form needs at least %d",
                        cal_op_name(op), n, k + 1);
    gsl_matrix *X = gsl_matrix_alloc((size_t)n, (size_t)k);
    gsl_vector *y = gsl_vector_alloc((size_t)n), *w = gsl_vector_alloc((size_t)n);
    gsl_vector *c = gsl_vector_alloc((size_t)k);
    gsl_matrix *cov = gsl_matrix_alloc((size_t)k, (size_t)k);
    gsl_multifit_linear_workspace *ws = gsl_multifit_linear_alloc((size_t)n, (size_t)k);
    int rc = -1;
    if (!X || !y || !w || !c || !cov || !ws) {
        sim_errf(err, "%s: GSL could not allocate the fit", cal_op_name(op));
        goto done;
    }
    for (int i = 0; i < n; i++) {
        const cal_point *p = &pts[idx[i]];
        features(op, knee, p->x, p->y, row);
        for (int j = 0; j < k; j++)
            gsl_matrix_set(X, (size_t)i, (size_t)j, row[j]);
        gsl_vector_set(y, (size_t)i, p->t_ns);
        gsl_vector_set(w, (size_t)i, 1.0 / (p->t_ns * p->t_ns));
    }
    int st = gsl_multifit_wlinear(X, w, y, c, cov, chisq, ws);
    if (st != GSL_SUCCESS) {
        sim_errf(err, "%s: least-squares fit failed: %s", cal_op_name(op), gsl_strerror(st));
        goto done;
    }
    for (int j = 0; j < k; j++)
        coef[j] = gsl_vector_get(c, (size_t)j);
    *ncoef = k;
    rc = 0;
done:
    gsl_multifit_linear_free(ws);
    gsl_matrix_free(cov);
    gsl_vector_free(c);
    gsl_vector_free(w);
    gsl_vector_free(y);
    gsl_matrix_free(X);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v[0..n-1] and drops repeats in place; returns how many remain. */
static int unique_sorted(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (m == 0 || v[i] != v[m - 1])
            v[m++] = v[i];
    return m;
}

/* Weighted chi^2 of the hinge form with its knee at k (HUGE_VAL when the solve fails). */
static double hinge_chisq(const cal_fit *f, const cal_point *pts, const int *idx, int n, double k)
{
    double c[CAL_MAX_COEF], chi;
    int nc;
    if (solve(f->op, k, pts, idx, n, c, &nc, &chi, NULL))
        return HUGE_VAL;
    return chi;
}

int cal_fit_roofline(cal_fit *f, const cal_point *pts, const int *idx, int n, sim_err *err)
{
    double coef[CAL_MAX_COEF] = {0}, chisq;
    int ncoef;
    if (solve(f->op, 0, pts, idx, n, coef, &ncoef, &chisq, err))
        return -1;
    f->knee = 0;
    f->ncoef = ncoef;
    memcpy(f->coef, coef, sizeof coef);
    if (!is_token_op(f->op) || n < 4)
        return 0;
    /* hinge search: the best interior x value, then a golden-section refinement between its
     * neighbours, since the true knee rarely sits on a measured point */
    double *xs = sim_xmalloc((size_t)n * sizeof *xs);
    for (int i = 0; i < n; i++)
        xs[i] = pts[idx[i]].x;
    int m = unique_sorted(xs, n), at = -1;
    double best = chisq;
    for (int i = 1; i < m - 1; i++) {
        double chi = hinge_chisq(f, pts, idx, n, xs[i]);
        if (chi < best * 0.999) {
            best = chi;
            at = i;
        }
    }
    if (at >= 0) {
        const double g = 0.6180339887498949;
        double a = xs[at - 1], b = xs[at + 1], c = b - g * (b - a), d = a + g * (b - a);
        double fc = hinge_chisq(f, pts, idx, n, c), fd = hinge_chisq(f, pts, idx, n, d);
        for (int it = 0; it < 40 && b - a > 1e-3 * (1 + a); it++) {
            if (fc < fd) {
                b = d, d = c, fd = fc;
                c = b - g * (b - a);
                fc = hinge_chisq(f, pts, idx, n, c);
            } else {
                a = c, c = d, fc = fd;
                d = a + g * (b - a);
                fd = hinge_chisq(f, pts, idx, n, d);
            }
        }
        double k = fc < fd ? c : d, kc = fc < fd ? fc : fd;
        if (!(kc < best))
            k = xs[at];
        solve(f->op, k, pts, idx, n, f->coef, &f->ncoef, &kc, NULL);
        f->knee = k;
    }
    free(xs);
    return 0;
}

/* Index i with a[i] <= x <= a[i+1] for x within [a[0], a[n-1]], n >= 2. */
static int bracket(const double *a, int n, double x)
{
    int lo = 0, hi = n - 1;
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (a[mid] <= x)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static int axis_index(const double *a, int n, double x)
{
    int i = bracket(a, n, x);
    return a[i] == x ? i : i + 1;
}

/* Fills NaN cells of line v[start + k*step], k < n, at positions pos[k], by linear
 * interpolation between the nearest filled cells on both sides. */
static void fill_line(double *v, int start, int step, int n, const double *pos)
{
    int prev = -1;
    for (int k = 0; k < n; k++) {
        if (isnan(v[start + k * step]))
            continue;
        if (prev >= 0 && k - prev > 1) {
            double a = v[start + prev * step], b = v[start + k * step];
            for (int m = prev + 1; m < k; m++) {
                double u = (pos[m] - pos[prev]) / (pos[k] - pos[prev]);
                v[start + m * step] = a + u * (b - a);
            }
        }
        prev = k;
    }
}

cal_grid2 *cal_fit_grid_new(const cal_fit *f, const cal_point *pts, const int *idx, int n)
{
    cal_grid2 *g = sim_xcalloc(1, sizeof *g);
    g->xs = sim_xmalloc((size_t)n * sizeof *g->xs);
    g->ys = sim_xmalloc((size_t)n * sizeof *g->ys);
    for (int i = 0; i < n; i++) {
        g->xs[i] = pts[idx[i]].x;
        g->ys[i] = pts[idx[i]].y;
    }
    g->nx = unique_sorted(g->xs, n);
    g->ny = unique_sorted(g->ys, n);
    size_t cells = (size_t)g->nx * g->ny;
    g->v = sim_xmalloc(cells * sizeof *g->v);
    int *cnt = sim_xcalloc(cells, sizeof *cnt);
    for (size_t c = 0; c < cells; c++)
        g->v[c] = 0;
    g->ratio = 1;
    for (int i = 0; i < n; i++)
        if (!(cal_fit_roofline_at(f, pts[idx[i]].x, pts[idx[i]].y) > 0))
            g->ratio = 0;
    for (int i = 0; i < n; i++) {
        const cal_point *p = &pts[idx[i]];
        double t = g->ratio ? p->t_ns / cal_fit_roofline_at(f, p->x, p->y) : p->t_ns;
        size_t c =
            (size_t)axis_index(g->xs, g->nx, p->x) * g->ny + (size_t)axis_index(g->ys, g->ny, p->y);
        g->v[c] += t;
        cnt[c]++;
    }
    for (size_t c = 0; c < cells; c++)
        g->v[c] = cnt[c] ? g->v[c] / cnt[c] : NAN;
    free(cnt);
    for (int j = 0; j < g->ny; j++) /* along x, within each row of fixed y */
        fill_line(g->v, j, g->ny, g->nx, g->xs);
    for (int i = 0; i < g->nx; i++) /* along y */
        fill_line(g->v, i * g->ny, 1, g->ny, g->ys);
    for (int i = 0; i < g->nx; i++)
        for (int j = 0; j < g->ny; j++)
            if (isnan(g->v[i * g->ny + j]))
                g->v[i * g->ny + j] = g->ratio ? 1.0 : cal_fit_roofline_at(f, g->xs[i], g->ys[j]);
    return g;
}

void cal_fit_grid_free(cal_grid2 *g)
{
    if (g)
        SIM_FREE_ALL(g->xs, g->ys, g->v, g);
}

static double clamp(double x, double lo, double hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

/* Linear interpolation along one axis: index i and weight u of x in a (n >= 1). */
static void locate(const double *a, int n, double x, int *i, double *u)
{
    if (n == 1) {
        *i = 0;
        *u = 0;
        return;
    }
    *i = bracket(a, n, x);
    if (*i >= n - 1)
        *i = n - 2;
    *u = (x - a[*i]) / (a[*i + 1] - a[*i]);
}

double cal_fit_grid_at(const cal_grid2 *g, const cal_fit *f, double x, double y)
{
    double xc = clamp(x, g->xs[0], g->xs[g->nx - 1]);
    double yc = clamp(y, g->ys[0], g->ys[g->ny - 1]);
    int i, j;
    double u, w;
    locate(g->xs, g->nx, xc, &i, &u);
    locate(g->ys, g->ny, yc, &j, &w);
    int i1 = g->nx > 1 ? i + 1 : i, j1 = g->ny > 1 ? j + 1 : j;
    double v00 = g->v[i * g->ny + j], v01 = g->v[i * g->ny + j1];
    double v10 = g->v[i1 * g->ny + j], v11 = g->v[i1 * g->ny + j1];
    double v = (1 - u) * ((1 - w) * v00 + w * v01) + u * ((1 - w) * v10 + w * v11);
    if (g->ratio) {
        double fx = cal_fit_roofline_at(f, x, y);
        return fx > 0 ? v * fx : v * cal_fit_roofline_at(f, xc, yc);
    }
    if (xc == x && yc == y)
        return v;
    double fe = cal_fit_roofline_at(f, xc, yc), fx = cal_fit_roofline_at(f, x, y);
    return fe > 0 && fx > 0 ? v * fx / fe : v;
}
