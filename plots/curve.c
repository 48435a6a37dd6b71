/*
 * curve.c: latency against throughput or offered rate, from a sweep: one line per scheduler
 * (or per value of the varied key named by --by), one point per sweep point.
 *
 * A point's value is the mean over its repetitions; with more than one repetition its 95%
 * confidence interval (Student t, n - 1 degrees of freedom) is written for both axes and drawn
 * as error bars. A point is marked saturated when any of its repetitions was flagged (queue
 * still growing at the end of the run), because its percentiles then depend on the run length.
 * Offered rate is the sweep's value of workload.arrival.rate when the sweep varies it (the
 * nominal rate: the same x for every scheduler and repetition), else the run's offered_rate
 * metric when one is stored, else the offered rate stored with the run (runs.offered_rate).
 *
 * Data file: one block per line (separated by two blank lines, "# series: NAME" first), rows
 * "x y y_lo y_hi x_lo x_hi saturated reps point" sorted by x; then, when any point is
 * saturated, one last block "x y series" of the saturated points.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plt_int.h"
#include "stats.h"
#include "store_query.h"

#define RATE_KEY "workload.arrival.rate"

typedef struct point {
    int series;
    int64_t point;
    int n;          /* repetitions with a value */
    double sy, syy; /* sums of y and y^2 */
    double sx, sxx; /* sums of x and x^2 */
    int saturated;
    double x, xlo, xhi, y, ylo, yhi; /* filled by finish() */
} point;

typedef struct curve {
    point *pts;
    int npts, cap;
    char **names; /* series names, in order of first appearance */
    int nseries;
    int skipped; /* repetitions with no value of the metric */
} curve;

static int series_index(curve *c, const char *name)
{
    for (int i = 0; i < c->nseries; i++)
        if (strcmp(c->names[i], name) == 0)
            return i;
    c->names = sim_xrealloc(c->names, (size_t)(c->nseries + 1) * sizeof *c->names);
    c->names[c->nseries] = sim_xstrdup(name);
    return c->nseries++;
}

static point *point_for(curve *c, int series, int64_t pt)
{
    if (c->npts > 0 && c->pts[c->npts - 1].point == pt && c->pts[c->npts - 1].series == series)
        return &c->pts[c->npts - 1];
    if (c->npts == c->cap)
        c->pts = sim_xrealloc(c->pts, (size_t)(c->cap = c->cap ? 2 * c->cap : 64) * sizeof *c->pts);
    point *p = &c->pts[c->npts++];
    memset(p, 0, sizeof *p);
    p->series = series;
    p->point = pt;
    return p;
}

/* The mean and 95% interval of n values by their sums; lo = hi = mean for one value. */
static void interval(double s, double ss, int n, double *mean, double *lo, double *hi)
{
    sim_interval v = sim_t_interval(s, ss, n, 0.95);
    double half = isnan(v.half) ? 0 : v.half;
    *mean = v.mean;
    *lo = v.mean - half;
    *hi = v.mean + half;
}

static int by_series_x(const void *a, const void *b)
{
    const point *p = a, *q = b;
    if (p->series != q->series)
        return p->series < q->series ? -1 : 1;
    if (p->x != q->x)
        return p->x < q->x ? -1 : 1;
    return p->point < q->point ? -1 : p->point > q->point;
}

/* The varied keys, comma-separated, and whether --by is one of them. */
typedef struct keys {
    const char *by;
    char list[512];
    size_t n;
    int found;
} keys;

static int add_key(void *arg, const char *k)
{
    keys *ks = arg;
    ks->found |= strcmp(k, ks->by) == 0;
    if (ks->n < sizeof ks->list)
        ks->n += (size_t)snprintf(ks->list + ks->n, sizeof ks->list - ks->n, "%s%s",
                                  ks->n ? ", " : "", k);
    return 0;
}

/* Checks --by names a varied key of the sweep; lists them in err otherwise. */
static int check_by(store *s, const plt_opts *o, sim_err *err)
{
    keys ks = {.by = o->by};
    if (store_sweep_keys(s, o->sweep, add_key, &ks, err) != 0)
        return -1;
    if (!ks.found)
        return sim_errf(err, "%s: sweep %lld does not vary '%s'; its varied keys: %s",
                        store_path(s), (long long)o->sweep, o->by, ks.n ? ks.list : "(none)");
    return 0;
}

static const char *x_metric(plt_x x)
{
    return x == PLT_X_THROUGHPUT ? "output_throughput"
           : x == PLT_X_REQUESTS ? "request_throughput"
                                 : "offered_rate";
}

static const char *x_label(plt_x x)
{
    return x == PLT_X_THROUGHPUT ? "output throughput (tokens/s)"
           : x == PLT_X_REQUESTS ? "request throughput (requests/s)"
                                 : "offered rate (requests/s)";
}

/* The metrics-table name of the y value: "p99_ttft_ms", "median_tpot_ms", "mean_e2el_ms". */
static int y_metric(const plt_opts *o, char *buf, size_t len, sim_err *err)
{
    const char *pct = o->pct ? o->pct : "p99";
    const char *pre = strcmp(pct, "p50") == 0 ? "median" : pct;
    if (strcmp(pre, "median") && strcmp(pre, "p90") && strcmp(pre, "p95") && strcmp(pre, "p99") &&
        strcmp(pre, "mean"))
        return sim_errf(err, "unknown percentile '%s'; valid: p50, p90, p95, p99, mean", pct);
    snprintf(buf, len, "%s_%s", pre, plt_metric_column(o->metric ? o->metric : "ttft"));
    return 0;
}

/* What load() needs while the store walks the sweep's rows. */
typedef struct loader {
    store *s;
    const plt_opts *o;
    curve *c;
    sim_err *err;
} loader;

static int add_row(void *arg, const store_curve_row *r)
{
    loader *l = arg;
    const plt_opts *o = l->o;
    curve *c = l->c;
    if (!r->has_x) {
        if (o->x == PLT_X_RATE)
            return sim_errf(l->err,
                            "%s: run %lld has no offered_rate metric and sweep %lld does "
                            "not vary %s; plot against --x throughput instead",
                            store_path(l->s), (long long)r->run_id, (long long)o->sweep, RATE_KEY);
        return sim_errf(l->err, "%s: run %lld has no %s metric", store_path(l->s),
                        (long long)r->run_id, x_metric(o->x));
    }
    point *p = point_for(c, series_index(c, r->series ? r->series : "?"), r->point);
    p->saturated |= r->saturated;
    if (!r->has_y) {
        c->skipped++;
        return 0;
    }
    p->n++;
    p->sy += r->y;
    p->syy += r->y * r->y;
    p->sx += r->x;
    p->sxx += r->x * r->x;
    return 0;
}

/* Reads every repetition of the sweep into c. */
static int load(store *s, const plt_opts *o, const char *ymetric, curve *c, sim_err *err)
{
    store_curve_query q = {.sweep = o->sweep,
                           .y_metric = ymetric,
                           .x_metric = x_metric(o->x),
                           .x_param = o->x == PLT_X_RATE ? RATE_KEY : NULL,
                           .by = o->by};
    loader l = {s, o, c, err};
    return store_sweep_curve(s, &q, add_row, &l, err) == 0 ? 0 : -1;
}

static void finish(curve *c, int *max_reps, int *nsat, double *ymin, double *ymax)
{
    int k = 0;
    for (int i = 0; i < c->npts; i++) {
        point *p = &c->pts[i];
        if (p->n == 0)
            continue;
        interval(p->sy, p->syy, p->n, &p->y, &p->ylo, &p->yhi);
        interval(p->sx, p->sxx, p->n, &p->x, &p->xlo, &p->xhi);
        *max_reps = p->n > *max_reps ? p->n : *max_reps;
        *nsat += p->saturated;
        *ymin = p->y < *ymin ? p->y : *ymin;
        *ymax = p->y > *ymax ? p->y : *ymax;
        c->pts[k++] = *p;
    }
    c->npts = k;
    qsort(c->pts, (size_t)c->npts, sizeof *c->pts, by_series_x);
}

static void write_data(const curve *c, const char *ymetric, const plt_opts *o, int nsat, FILE *f)
{
    fprintf(f, "# llmsim curve: sweep %lld, y = %s (ms), x = %s; 95%% CI over repetitions\n",
            (long long)o->sweep, ymetric, x_metric(o->x));
    if (c->skipped)
        fprintf(f, "# %d repetitions without a value of %s left out\n", c->skipped, ymetric);
    for (int s = 0; s < c->nseries; s++) {
        fprintf(f, "%s# series: %s\n# x y y_lo y_hi x_lo x_hi saturated reps point\n",
                s ? "\n\n" : "", c->names[s]);
        for (int i = 0; i < c->npts; i++) {
            const point *p = &c->pts[i];
            if (p->series == s)
                fprintf(f, "%.10g %.10g %.10g %.10g %.10g %.10g %d %d %lld\n", p->x, p->y, p->ylo,
                        p->yhi, p->xlo, p->xhi, p->saturated, p->n, (long long)p->point);
        }
    }
    if (nsat == 0)
        return;
    fprintf(f, "\n\n# saturated points\n# x y series\n");
    for (int i = 0; i < c->npts; i++)
        if (c->pts[i].saturated)
            fprintf(f, "%.10g %.10g %d\n", c->pts[i].x, c->pts[i].y, c->pts[i].series + 1);
}

static void free_curve(curve *c)
{
    for (int i = 0; i < c->nseries; i++)
        free(c->names[i]);
    free(c->names);
    free(c->pts);
}

int plt_curve_write(store *s, const plt_opts *o, FILE *dat, FILE *gp, plt_result *res, sim_err *err)
{
    char ymetric[64];
    if (y_metric(o, ymetric, sizeof ymetric, err) != 0)
        return -1;
    store_sweep_meta sw;
    if (store_sweep_get(s, o->sweep, &sw, err) != 0)
        return -1;
    if (o->by && check_by(s, o, err) != 0)
        return -1;
    curve c = {0};
    int rc = -1, max_reps = 0, nsat = 0;
    double ymin = INFINITY, ymax = -INFINITY;
    if (load(s, o, ymetric, &c, err) != 0)
        goto out;
    finish(&c, &max_reps, &nsat, &ymin, &ymax);
    if (c.npts == 0) {
        sim_errf(err, "%s: sweep %lld has no point with a value of %s", store_path(s),
                 (long long)o->sweep, ymetric);
        goto out;
    }
    write_data(&c, ymetric, o, nsat, dat);
    char title[256], ylabel[128];
    snprintf(title, sizeof title, "sweep %lld: %s", (long long)o->sweep, ymetric);
    snprintf(ylabel, sizeof ylabel, "%s %s (ms)", o->pct ? o->pct : "p99",
             plt_metric_label(o->metric ? o->metric : "ttft"));
    plt_gp_str(gp, "plot_title", title);
    plt_gp_str(gp, "xlabel", x_label(o->x));
    plt_gp_str(gp, "ylabel", ylabel);
    plt_gp_str(gp, "keytitle", o->by ? o->by : "scheduler");
    fprintf(gp, "nseries = %d\nhas_ci = %d\nnsat = %d\nlogy = %d\n", c.nseries, max_reps > 1, nsat,
            ymin > 0 && ymax / ymin > 50);
    plt_gp_array(gp, "titles", (const char *const *)c.names, c.nseries);
    res->series = c.nseries;
    if (!res->width)
        res->width = 1000;
    if (!res->height)
        res->height = 600;
    rc = 0;
out:
    free_curve(&c);
    return rc;
}
