/*
 * curve.c: latency against throughput or offered rate, from a sweep: one line per combination
 * of the varied keys other than the load (the key that moves a point along its line,
 * workload.arrival.rate and its like), or per combination of the keys --by names, one point
 * per sweep point.
 *
 * Lines: without --by, each combination of the varied keys other than the load keys is a line,
 * named by those keys' values (a sweep that varies only the load has one line, named by its
 * scheduler). With --by K1[,K2...], the lines are the combinations of those keys, and a sweep
 * that also varies another key (not a load key) is refused with a message naming --by: one line
 * through points that differ in a key nobody named is the zig-zag this plot must not draw.
 *
 * A point's value is the mean over its repetitions; with more than one repetition its 95%
 * confidence interval (Student t, n - 1 degrees of freedom) is written for both axes and drawn
 * as error bars. Saturation (queue still growing at the end of a run, so its percentiles depend
 * on the run's length) is counted per repetition: a point saturated in every repetition is
 * circled, one saturated in k of n is circled dashed and labelled "k of n" (its mean mixes
 * saturated and stable runs), and res->note lists those. A point whose runs rejected requests
 * (failed: not in its latencies, which then look better than the service given) is marked
 * with an x and the mean count, and res->note lists those too. Offered rate is the sweep's value of
 * workload.arrival.rate when the sweep varies it (the nominal rate: the same x for every line
 * and repetition), else the run's offered_rate metric when one is stored, else the offered rate
 * stored with the run (runs.offered_rate).
 *
 * Titles and axes say what is plotted in words, with the setting the sweep does not vary ("p99
 * TTFT (ms) vs output throughput (tok/s) — llama-3-8b, h100-sxm, demo workload"); tick labels
 * are plain numbers (no 1e+06).
 *
 * Data file: one block per line (separated by two blank lines, "# series: NAME" first), rows
 * "x y y_lo y_hi x_lo x_hi saturated reps point" sorted by x (saturated: repetitions flagged;
 * reps: repetitions with a value); then, when any point is saturated, a block "x y series
 * saturated reps" of the saturated points; then, when any point's runs rejected requests, a
 * block "x y series rejected reps" of those (rejected: the mean per repetition).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plt_int.h"
#include "stats.h"
#include "store_query.h"

#define RATE_KEY "workload.arrival.rate"
#define MAX_KEYS 16

/* The keys that move a point along its line: the load offered. */
static const char *const load_keys[] = {RATE_KEY, "workload.arrival.concurrency",
                                        "workload.trace.rate", "workload.trace.time_scale"};

typedef struct point {
    int series;
    int64_t point;
    int n;                           /* repetitions with a value */
    double sy, syy;                  /* sums of y and y^2 */
    double sx, sxx;                  /* sums of x and x^2 */
    int saturated;                   /* repetitions flagged saturated */
    int reps;                        /* repetitions stored */
    double rejected;                 /* requests rejected, summed over the repetitions */
    int rej_reps;                    /* repetitions that rejected some */
    double x, xlo, xhi, y, ylo, yhi; /* filled by finish() */
} point;

typedef struct curve {
    point *pts;
    int npts, cap;
    char **names; /* series names, in order of first appearance */
    int nseries;
    int skipped;  /* repetitions with no value of the metric */
    int64_t run;  /* a run of the sweep (for the title's setting) */
    char **label; /* by point: its line's name; NULL when the lines are the schedulers */
    int64_t nlabel;
} curve;

/* The keys a sweep varies, and those that name its lines. */
typedef struct keyset {
    char *v[MAX_KEYS];
    int n;
} keyset;

static void keys_free(keyset *k)
{
    for (int i = 0; i < k->n; i++)
        free(k->v[i]);
    k->n = 0;
}

static int keys_has(const keyset *k, const char *key)
{
    return sim_name_index(key, (const char *const *)k->v, k->n) >= 0;
}

static void keys_add(keyset *k, const char *key)
{
    if (k->n < MAX_KEYS && !keys_has(k, key))
        k->v[k->n++] = sim_xstrdup(key);
}

static int is_load_key(const char *key)
{
    return sim_name_index(key, load_keys, (int)(sizeof load_keys / sizeof load_keys[0])) >= 0;
}

static void keys_list(const keyset *k, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < k->n && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", k->v[i]);
}

static int add_varied(void *arg, const char *k)
{
    keys_add(arg, k);
    return 0;
}

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

/* --by's keys into lines: each must be one the sweep varies (varied, listed in list), and every
 * varied key but the load keys must be among them. 0, or -1 with err. */
static int by_keys(store *s, const plt_opts *o, const keyset *varied, const char *list,
                   keyset *lines, sim_err *err)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", o->by);
    for (char *save = NULL, *k = strtok_r(buf, ",", &save); k; k = strtok_r(NULL, ",", &save)) {
        if (!keys_has(varied, k))
            return sim_errf(err, "%s: sweep %lld does not vary '%s'; its varied keys: %s",
                            store_path(s), (long long)o->sweep, k, varied->n ? list : "(none)");
        keys_add(lines, k);
    }
    for (int i = 0; i < varied->n; i++)
        if (!keys_has(lines, varied->v[i]) && !is_load_key(varied->v[i]))
            return sim_errf(err,
                            "%s: sweep %lld also varies %s, which --by does not name: a line "
                            "would join points that differ in it. Name it too (--by %s,%s) or "
                            "leave --by out for one line per combination of the varied keys (%s) "
                            "other than the load",
                            store_path(s), (long long)o->sweep, varied->v[i], o->by, varied->v[i],
                            list);
    return 0;
}

/* The keys naming the lines into lines: --by's (each must be varied; no other non-load key may
 * vary), or every varied key but the load keys. */
static int line_keys(store *s, const plt_opts *o, keyset *lines, sim_err *err)
{
    keyset varied = {0};
    int rc = -1;
    char list[1024];
    if (store_sweep_keys(s, o->sweep, add_varied, &varied, err) != 0)
        goto out;
    keys_list(&varied, list, sizeof list);
    if (o->by) {
        if (by_keys(s, o, &varied, list, lines, err) != 0)
            goto out;
    } else {
        for (int i = 0; i < varied.n; i++)
            if (!is_load_key(varied.v[i]))
                keys_add(lines, varied.v[i]);
    }
    rc = 0;
out:
    keys_free(&varied);
    return rc;
}

/* How a key is named in a legend: the last part of its path, or the whole path when another
 * line key ends the same way. */
static const char *short_key(const keyset *lines, const char *key)
{
    const char *dot = strrchr(key, '.'), *tail = dot ? dot + 1 : key;
    for (int i = 0; i < lines->n; i++) {
        const char *o = lines->v[i], *od = strrchr(o, '.');
        if (o != key && strcmp(o, key) != 0 && strcmp(od ? od + 1 : o, tail) == 0)
            return key;
    }
    return tail;
}

typedef struct labeling {
    curve *c;
    const keyset *lines;
} labeling;

/* Appends "value" (the scheduler's name) or "key=value" to the point's line name. */
static int add_label(void *arg, int64_t pt, const char *key, const char *value)
{
    labeling *l = arg;
    curve *c = l->c;
    if (pt < 0 || pt > (int64_t)1 << 24 || !keys_has(l->lines, key))
        return 0;
    if (pt >= c->nlabel) {
        c->label = sim_xrealloc(c->label, (size_t)(pt + 1) * sizeof *c->label);
        memset(c->label + c->nlabel, 0, (size_t)(pt + 1 - c->nlabel) * sizeof *c->label);
        c->nlabel = pt + 1;
    }
    char part[256];
    if (strcmp(key, "scheduler.name") == 0)
        snprintf(part, sizeof part, "%s", value);
    else
        snprintf(part, sizeof part, "%s=%s", short_key(l->lines, key), value);
    const char *old = c->label[pt] ? c->label[pt] : "";
    size_t n = strlen(old) + strlen(part) + 3;
    char *lab = sim_xmalloc(n);
    snprintf(lab, n, "%s%s%s", old, *old ? ", " : "", part);
    free(c->label[pt]);
    c->label[pt] = lab;
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
    return x == PLT_X_THROUGHPUT ? "output throughput (tok/s)"
           : x == PLT_X_REQUESTS ? "request throughput (req/s)"
                                 : "offered rate (req/s)";
}

/* The metrics-table name of the y value: "p99_ttft_ms", "median_tpot_ms", "mean_e2el_ms" (the
 * percentile was checked by plt_plot). */
static int y_metric(const plt_opts *o, char *buf, size_t len, sim_err *err)
{
    const char *pct = o->pct ? o->pct : "p99";
    const char *pre = strcmp(pct, "p50") == 0 ? "median" : pct;
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

/* Refuses row r for having no x value: says which metric is missing, with the way out. */
static int no_x(const loader *l, const store_curve_row *r)
{
    if (l->o->x == PLT_X_RATE)
        return sim_errf(l->err,
                        "%s: run %lld has no offered_rate metric and sweep %lld does not vary %s; "
                        "plot against --x throughput instead",
                        store_path(l->s), (long long)r->run_id, (long long)l->o->sweep, RATE_KEY);
    return sim_errf(l->err, "%s: run %lld has no %s metric", store_path(l->s), (long long)r->run_id,
                    x_metric(l->o->x));
}

/* Adds repetition r to point p: its saturation and rejections, and its x and y when it has a y. */
static void add_rep(point *p, const store_curve_row *r)
{
    p->saturated += r->saturated != 0;
    p->reps++;
    p->rejected += r->rejected;
    p->rej_reps += r->rejected > 0;
    if (!r->has_y)
        return;
    p->n++;
    p->sy += r->y;
    p->syy += r->y * r->y;
    p->sx += r->x;
    p->sxx += r->x * r->x;
}

static int add_row(void *arg, const store_curve_row *r)
{
    loader *l = arg;
    curve *c = l->c;
    if (!r->has_x)
        return no_x(l, r);
    if (!c->run)
        c->run = r->run_id;
    const char *name = r->series ? r->series : "?";
    if (c->label)
        name = r->point < c->nlabel && c->label[r->point] ? c->label[r->point] : "?";
    point *p = point_for(c, series_index(c, name), r->point);
    if (!r->has_y)
        c->skipped++;
    add_rep(p, r);
    return 0;
}

/* Reads every repetition of the sweep into c. */
static int load(store *s, const plt_opts *o, const char *ymetric, curve *c, sim_err *err)
{
    store_curve_query q = {.sweep = o->sweep,
                           .y_metric = ymetric,
                           .x_metric = x_metric(o->x),
                           .x_param = o->x == PLT_X_RATE ? RATE_KEY : NULL,
                           .by = NULL};
    loader l = {s, o, c, err};
    return store_sweep_curve(s, &q, add_row, &l, err) == 0 ? 0 : -1;
}

typedef struct tally {
    int max_reps, nsat, nsat_all, nsat_some, nrej;
    double ymin, ymax;
} tally;

static void finish(curve *c, tally *t)
{
    int k = 0;
    for (int i = 0; i < c->npts; i++) {
        point *p = &c->pts[i];
        if (p->n == 0)
            continue;
        interval(p->sy, p->syy, p->n, &p->y, &p->ylo, &p->yhi);
        interval(p->sx, p->sxx, p->n, &p->x, &p->xlo, &p->xhi);
        t->max_reps = p->n > t->max_reps ? p->n : t->max_reps;
        t->nsat += p->saturated > 0;
        t->nsat_all += p->saturated > 0 && p->saturated >= p->reps;
        t->nsat_some += p->saturated > 0 && p->saturated < p->reps;
        t->nrej += p->rej_reps > 0;
        t->ymin = p->y < t->ymin ? p->y : t->ymin;
        t->ymax = p->y > t->ymax ? p->y : t->ymax;
        c->pts[k++] = *p;
    }
    c->npts = k;
    qsort(c->pts, (size_t)c->npts, sizeof *c->pts, by_series_x);
}

/* The last block, when any point's runs rejected requests: "x y series rejected reps" (the
 * mean rejected per repetition): a failed request is not in the latencies, so such a point's
 * percentiles look better than the service it gave. */
static void write_rejecting(const curve *c, FILE *f)
{
    fprintf(f, "\n\n# points whose runs rejected requests (not in their latencies)\n"
               "# x y series rejected reps\n");
    for (int i = 0; i < c->npts; i++)
        if (c->pts[i].rej_reps)
            fprintf(f, "%.10g %.10g %d %.10g %d\n", c->pts[i].x, c->pts[i].y, c->pts[i].series + 1,
                    c->pts[i].rejected / c->pts[i].reps, c->pts[i].reps);
}

static void write_data(const curve *c, const char *ymetric, const plt_opts *o, const tally *t,
                       FILE *f)
{
    int nsat = t->nsat;
    fprintf(f, "# llmsim curve: sweep %lld, y = %s (ms), x = %s; 95%% CI over repetitions\n",
            (long long)o->sweep, ymetric, x_metric(o->x));
    if (c->skipped)
        fprintf(f, "# %d repetitions without a value of %s left out\n", c->skipped, ymetric);
    for (int s = 0; s < c->nseries; s++) {
        fputs(s ? "\n\n# series: " : "# series: ", f);
        plt_put_clean(f, c->names[s]);
        fputs("\n# x y y_lo y_hi x_lo x_hi saturated reps point\n", f);
        for (int i = 0; i < c->npts; i++) {
            const point *p = &c->pts[i];
            if (p->series == s)
                fprintf(f, "%.10g %.10g %.10g %.10g %.10g %.10g %d %d %lld\n", p->x, p->y, p->ylo,
                        p->yhi, p->xlo, p->xhi, p->saturated, p->n, (long long)p->point);
        }
    }
    if (nsat > 0) {
        fprintf(f, "\n\n# saturated points\n# x y series saturated reps\n");
        for (int i = 0; i < c->npts; i++)
            if (c->pts[i].saturated)
                fprintf(f, "%.10g %.10g %d %d %d\n", c->pts[i].x, c->pts[i].y, c->pts[i].series + 1,
                        c->pts[i].saturated, c->pts[i].reps);
    }
    if (t->nrej > 0)
        write_rejecting(c, f);
}

/* Appends to res->note the points whose runs rejected requests. */
static void note_rejecting(const curve *c, int nrej, plt_result *res)
{
    if (nrej == 0)
        return;
    size_t n = strlen(res->note);
    n += (size_t)snprintf(res->note + n, sizeof res->note - n,
                          "%s%d point%s rejected requests (marked x; their latencies leave the "
                          "rejected out):",
                          n ? " " : "", nrej, nrej > 1 ? "s" : "");
    for (int i = 0, shown = 0; i < c->npts && n < sizeof res->note; i++) {
        const point *p = &c->pts[i];
        if (!p->rej_reps)
            continue;
        if (shown++ == 6) {
            snprintf(res->note + n, sizeof res->note - n, " ...");
            break;
        }
        n += (size_t)snprintf(res->note + n, sizeof res->note - n, " %s at x=%.4g: %.0f;",
                              c->names[p->series], p->x, p->rejected / p->reps);
    }
}

/* res->note: the points saturated in some but not all of their repetitions. */
static void note_partial(const curve *c, int nsome, plt_result *res)
{
    if (nsome == 0)
        return;
    size_t n = (size_t)snprintf(res->note, sizeof res->note,
                                "%d point%s saturated in only some repetitions (the mean mixes "
                                "saturated and stable runs):",
                                nsome, nsome > 1 ? "s are" : " is");
    for (int i = 0, shown = 0; i < c->npts && n < sizeof res->note; i++) {
        const point *p = &c->pts[i];
        if (!p->saturated || p->saturated >= p->reps)
            continue;
        if (shown++ == 6) {
            snprintf(res->note + n, sizeof res->note - n, " ...");
            break;
        }
        n += (size_t)snprintf(res->note + n, sizeof res->note - n, " %s at x=%.4g: %d of %d;",
                              c->names[p->series], p->x, p->saturated, p->reps);
    }
}

/* The setting the sweep does not vary, for the title: "llama-3-8b, h100-sxm, demo workload". */
static void setting(store *s, const curve *c, const keyset *varied_lines, char *buf, size_t len)
{
    store_run_meta m;
    sim_err ignore;
    buf[0] = '\0';
    if (!c->run || store_run_get(s, c->run, &m, &ignore) != 0)
        return;
    size_t n = 0;
    if (!keys_has(varied_lines, "model") && m.model[0])
        n += (size_t)snprintf(buf + n, len - n, "%s", m.model);
    if (!keys_has(varied_lines, "gpu") && m.gpu[0] && n < len)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", m.gpu);
    if (!keys_has(varied_lines, "tensor_parallel") && m.tensor_parallel > 1 && n < len)
        n += (size_t)snprintf(buf + n, len - n, " x%d (TP)", m.tensor_parallel);
    if (m.name[0] && n < len)
        snprintf(buf + n, len - n, "%s%.80s workload", n ? ", " : "", m.name);
}

static void free_curve(curve *c)
{
    for (int i = 0; i < c->nseries; i++)
        free(c->names[i]);
    free(c->names);
    for (int64_t i = 0; i < c->nlabel; i++)
        free(c->label[i]);
    free(c->label);
    free(c->pts);
}

/* The script's variables: titles and axes in words, the lines, saturation. */
static void write_vars(store *s, const plt_opts *o, const curve *c, const keyset *lines,
                       const tally *t, FILE *gp)
{
    const char *pct = o->pct ? o->pct : "p99";
    const char *metric = plt_metric_label(o->metric ? o->metric : "ttft");
    char ylabel[128], title[640], set[256], keytitle[256] = "scheduler";
    snprintf(ylabel, sizeof ylabel, "%s %s (ms)", strcmp(pct, "p50") == 0 ? "median" : pct, metric);
    setting(s, c, lines, set, sizeof set);
    snprintf(title, sizeof title, "%s vs %s%s%s", ylabel, x_label(o->x), set[0] ? " — " : "", set);
    if (lines->n) {
        size_t n = 0;
        for (int i = 0; i < lines->n && n < sizeof keytitle; i++)
            n += (size_t)snprintf(keytitle + n, sizeof keytitle - n, "%s%s", i ? ", " : "",
                                  strcmp(lines->v[i], "scheduler.name") == 0
                                      ? "scheduler"
                                      : short_key(lines, lines->v[i]));
    }
    plt_gp_str(gp, "plot_title", title);
    plt_gp_str(gp, "xlabel", x_label(o->x));
    plt_gp_str(gp, "ylabel", ylabel);
    plt_gp_str(gp, "keytitle", keytitle);
    fprintf(gp, "nseries = %d\nhas_ci = %d\nnsat = %d\nnsat_all = %d\nnsat_some = %d\nlogy = %d\n",
            c->nseries, t->max_reps > 1, t->nsat, t->nsat_all, t->nsat_some,
            t->ymin > 0 && t->ymax / t->ymin > 50);
    fprintf(gp, "nrej = %d\nrej_block = %d\n", t->nrej, c->nseries + (t->nsat > 0));
    plt_gp_array(gp, "titles", (const char *const *)c->names, c->nseries);
}

/* Names each point's line from the values it gives the line keys. 0, or -1 with err. */
static int label_points(store *s, const plt_opts *o, curve *c, const keyset *lines, sim_err *err)
{
    labeling l = {c, lines};
    c->label = sim_xcalloc(1, sizeof *c->label);
    c->nlabel = 1;
    return store_sweep_params(s, o->sweep, add_label, &l, err);
}

int plt_curve_write(store *s, const plt_opts *o, FILE *dat, FILE *gp, plt_result *res, sim_err *err)
{
    char ymetric[64];
    if (y_metric(o, ymetric, sizeof ymetric, err) != 0)
        return -1;
    store_sweep_meta sw;
    if (store_sweep_get(s, o->sweep, &sw, err) != 0)
        return -1;
    keyset lines = {0};
    curve c = {0};
    tally t = {0, 0, 0, 0, 0, INFINITY, -INFINITY};
    int rc = -1;
    if (line_keys(s, o, &lines, err) != 0)
        goto out;
    if (lines.n && label_points(s, o, &c, &lines, err) != 0)
        goto out;
    if (load(s, o, ymetric, &c, err) != 0)
        goto out;
    finish(&c, &t);
    if (c.npts == 0) {
        sim_errf(err, "%s: sweep %lld has no point with a value of %s", store_path(s),
                 (long long)o->sweep, ymetric);
        goto out;
    }
    write_data(&c, ymetric, o, &t, dat);
    write_vars(s, o, &c, &lines, &t, gp);
    note_partial(&c, t.nsat_some, res);
    note_rejecting(&c, t.nrej, res);
    res->series = c.nseries;
    plt_default_size(res, 1000, 600);
    rc = 0;
out:
    keys_free(&lines);
    free_curve(&c);
    return rc;
}
