/*
 * dist.c: length distributions (integers >= 1) and joint (prompt, output) pairs from traces.
 *
 * Draws are continuous values rounded to the nearest integer, then clipped to [min, max]
 * (min defaults to 1); a clip that changes the value is reported to the caller, who counts it.
 *   fixed {value}          uniform {min, max}: integers, inclusive
 *   normal {mean, std}     truncated to [min, max] (default [1, inf)): drawn by inversion of
 *                          the normal CDF restricted to the window, so never clipped
 *   lognormal {mean, sigma} mean in tokens: mu = ln(mean) - sigma^2 / 2
 *   zipf {min, max, s}     P(min + k - 1) proportional to k^-s for k = 1 .. max - min + 1,
 *                          drawn by binary search in a CDF table
 *   empirical {path, format, column}  a column of a trace, sampled uniformly with replacement
 * A sampler owns its tables, or borrows them from a scn_cache; the random generator belongs to
 * the caller.
 *
 * The cache: columns read whole (empirical samplers, joint pairs) are kept per (path, format,
 * columns) with the file's identity (device, inode, size, modification time), so that a
 * process running many workloads (a sweep worker) reads each table once and again only when
 * its file changed. The cache owns its tables; samplers and pairs made with it borrow them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>

#include "rng.h"
#include "scn_int.h"

/* One or two length columns of a trace, read whole. */
typedef struct table {
    int32_t *prompt, *output; /* NULL when that column was not read */
    int64_t n;
    char *key;      /* the cache's key: format, columns and path */
    struct stat id; /* the file when it was read */
    struct table *next;
} table;

struct scn_cache {
    table *tables;
};

struct scn_sampler {
    scn_dist d;
    double lo, hi;       /* clip bounds (lo >= 1) */
    double plo, phi;     /* normal: CDF of the truncation window */
    double mu;           /* lognormal: mean of the underlying normal */
    double *cdf;         /* zipf: cumulative weights, n entries */
    const int32_t *vals; /* empirical: the column (in tab) */
    table *tab;          /* empirical: owned when `owned` */
    int owned;
    int64_t n;
};

static void table_free(table *t)
{
    if (t)
        SIM_FREE_ALL(t->prompt, t->output, t->key, t);
}

scn_cache *scn_cache_new(void)
{
    return sim_xcalloc(1, sizeof(scn_cache));
}

void scn_cache_free(scn_cache *c)
{
    if (!c)
        return;
    for (table *t = c->tables, *next; t; t = next) {
        next = t->next;
        table_free(t);
    }
    free(c);
}

/* Room for cap rows in each column t reads. */
static void table_reserve(table *t, int64_t cap)
{
    if (t->prompt)
        t->prompt = sim_xrealloc(t->prompt, sizeof *t->prompt * (size_t)cap);
    if (t->output)
        t->output = sim_xrealloc(t->output, sizeof *t->output * (size_t)cap);
}

/* A length as the table keeps it: at most INT32_MAX. */
static int32_t clamp_len(int64_t v)
{
    return (int32_t)(v > INT32_MAX ? INT32_MAX : v);
}

/* Reads r's rows into t's columns: 0 at the end, -1 with err. */
static int read_rows(scn_trace_reader *r, table *t, sim_err *err)
{
    int64_t cap = 1024;
    scn_trace_row row;
    int rc;
    table_reserve(t, cap);
    while ((rc = scn_trace_next(r, &row, err)) == 1) {
        if (t->n == cap)
            table_reserve(t, cap *= 2);
        if (t->prompt)
            t->prompt[t->n] = clamp_len(row.prompt);
        if (t->output)
            t->output[t->n] = clamp_len(row.output);
        t->n++;
    }
    return rc;
}

/* Reads every row of a trace (lengths only) into a new table. NULL with err. */
static table *read_all(const scn_trace_spec *sp, sim_err *err)
{
    scn_trace_reader *r = scn_trace_open(sp, err);
    if (!r)
        return NULL;
    table *t = sim_xcalloc(1, sizeof *t);
    t->prompt = sp->want_prompt ? sim_xmalloc(sizeof *t->prompt) : NULL;
    t->output = sp->want_output ? sim_xmalloc(sizeof *t->output) : NULL;
    int rc = read_rows(r, t, err);
    scn_trace_close(r);
    if (rc == 0 && t->n == 0)
        rc = sim_errf(err, "%s: no rows", sp->path);
    if (rc < 0) {
        table_free(t);
        return NULL;
    }
    return t;
}

static int same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* The cache's key of sp's table: format, columns and path (the caller frees it). */
static char *cache_key(const scn_trace_spec *sp)
{
    size_t len = strlen(sp->path) + 200;
    char *key = sim_xmalloc(len);
    snprintf(key, len, "%s|%s|%s|%d%d|%s", sp->format, sp->col_prompt ? sp->col_prompt : "-",
             sp->col_output ? sp->col_output : "-", sp->want_prompt, sp->want_output, sp->path);
    return key;
}

/* The table c keeps under key, read from the file now identified by id; NULL when it has
 * none (a table of the file as it was before is dropped). */
static table *cached(scn_cache *c, const char *key, const struct stat *id)
{
    for (table **pp = &c->tables; *pp; pp = &(*pp)->next) {
        if (strcmp((*pp)->key, key) != 0)
            continue;
        if (same_file(&(*pp)->id, id))
            return *pp;
        table *stale = *pp; /* the file changed: read it again */
        *pp = stale->next;
        table_free(stale);
        return NULL;
    }
    return NULL;
}

/* The table of sp: from the cache when it holds one read from the file as it is now, else read
 * (and kept by the cache when there is one: *owned = 0). NULL with err. */
static table *get_table(scn_cache *c, const scn_trace_spec *sp, int *owned, sim_err *err)
{
    struct stat id;
    char *key = NULL;
    table *t;
    *owned = c == NULL;
    if (c && stat(sp->path, &id) == 0) {
        key = cache_key(sp);
        if ((t = cached(c, key, &id))) {
            free(key);
            return t;
        }
    }
    t = read_all(sp, err);
    if (t && key) {
        t->key = key;
        t->id = id;
        t->next = c->tables;
        c->tables = t;
        return t;
    }
    free(key);
    *owned = 1;
    return t;
}

/* The CDF of a normal's truncation window [lo - 1/2, hi + 1/2] (the half token keeps rounded
 * draws inside [lo, hi]). */
static void normal_window(const scn_dist *d, double lo, double hi, double *plo, double *phi)
{
    *plo = gsl_cdf_gaussian_P(lo - 0.5 - d->mean, d->std);
    *phi = isinf(hi) ? 1.0 : gsl_cdf_gaussian_P(hi + 0.5 - d->mean, d->std);
}

/* Whether a normal distribution has mass in its window [min, max] (min at least 1); else why. */
static int normal_mass_ok(const scn_dist *d, char *why, size_t len)
{
    double lo = d->min >= 1 ? d->min : 1, hi = d->max >= 1 ? d->max : INFINITY, plo, phi;
    normal_window(d, lo, hi, &plo, &phi);
    if (phi - plo > 1e-12)
        return 0;
    snprintf(why, len,
             "normal {mean: %g, std: %g} has no mass in [%g, %g] (draws there are rarer than "
             "1e-12)",
             d->mean, d->std, lo, hi);
    return -1;
}

int scn_dist_check(const scn_dist *d, char *why, size_t len)
{
    switch (d->kind) {
    case SCN_DIST_NORMAL:
        if (!isfinite(d->mean) || !(d->std > 0) || !isfinite(d->std))
            break;
        return normal_mass_ok(d, why, len);
    case SCN_DIST_LOGNORMAL:
        /* mu = ln(mean) - sigma^2 / 2 must be a number for exp(mu + sigma z) to be one */
        if (isfinite(log(d->mean) - d->sigma * d->sigma / 2) && d->sigma > 0)
            return 0;
        snprintf(why, len,
                 "lognormal {mean: %g, sigma: %g}: ln(mean) - sigma^2/2 is not a "
                 "finite number (sigma must be below 1e150)",
                 d->mean, d->sigma);
        return -1;
    case SCN_DIST_ZIPF:
        if (isfinite(d->s) && d->s > 0)
            return 0;
        break;
    case SCN_DIST_FIXED:
    case SCN_DIST_UNIFORM:
    case SCN_DIST_EMPIRICAL:
        return 0;
    default:
        SIM_CHECK(NULL, !"a distribution the check does not know");
        return -1;
    }
    snprintf(why, len, "%s: a parameter is not a finite positive number",
             d->kind == SCN_DIST_NORMAL ? "normal" : "zipf");
    return -1;
}

/* Whether a renewal process at `rate` has representable gaps 1/rate; else why. */
static int rate_ok(double rate, const char *what, char *why, size_t len)
{
    if (isfinite(rate) && rate > 0 && isnormal(1.0 / rate))
        return 0;
    snprintf(why, len, "%s %g requests/s: its mean gap 1/rate is not a representable number", what,
             rate);
    return -1;
}

/* Whether gamma arrivals have representable gaps; else why. */
static int gamma_ok(const scn_arrival *a, char *why, size_t len)
{
    /* MODEL: gaps Gamma(k = 1/cv^2, theta = cv^2/rate), as source.c and session.c draw them;
     * both must be normal numbers (cv 1e300: k = 0, and every arrival NaN) */
    double k = 1.0 / (a->cv * a->cv), theta = 1.0 / (a->rate * k);
    if (rate_ok(a->rate, "rate", why, len) != 0)
        return -1;
    if (isnormal(k) && isnormal(theta) && isfinite(a->cv) && a->cv > 0)
        return 0;
    snprintf(why, len,
             "gamma {rate: %g, cv: %g}: shape 1/cv^2 = %g and scale cv^2/rate = %g must be "
             "finite positive numbers (cv must be below about 1e150)",
             a->rate, a->cv, k, theta);
    return -1;
}

int scn_arrival_check(const scn_arrival *a, char *why, size_t len)
{
    switch (a->kind) {
    case SCN_ARR_GAMMA:
        return gamma_ok(a, why, len);
    case SCN_ARR_POISSON:
    case SCN_ARR_CONSTANT:
        return rate_ok(a->rate, "rate", why, len);
    case SCN_ARR_SCHEDULE:
        for (int i = 0; i < a->nsteps; i++)
            if (a->step_rate[i] > 0 && rate_ok(a->step_rate[i], "a step's rate", why, len) != 0)
                return -1;
        return 0;
    case SCN_ARR_BURST:
    case SCN_ARR_CLOSED:
        return 0;
    default:
        SIM_CHECK(NULL, !"an arrival process the check does not know");
        return -1;
    }
}

scn_trace_spec scn_empirical_spec(const scn_dist *d, int is_out)
{
    const char *col = *d->column ? d->column : NULL;
    scn_trace_spec sp = {.path = d->path,
                         .format = d->format,
                         .lengths_only = 1,
                         .col_prompt = is_out ? NULL : col,
                         .col_output = is_out ? col : NULL,
                         .want_prompt = !is_out,
                         .want_output = is_out};
    return sp;
}

/* Zipf's cumulative weights k^-s, k = 1 .. max - min + 1. */
static void build_zipf(scn_sampler *s)
{
    const scn_dist *d = &s->d;
    double acc = 0;
    s->n = (int64_t)(d->max - d->min) + 1;
    s->cdf = sim_xmalloc(sizeof *s->cdf * (size_t)s->n);
    for (int64_t k = 0; k < s->n; k++)
        s->cdf[k] = acc += pow((double)(k + 1), -d->s);
}

/* An empirical distribution's column (the output's when is_out), from the cache or read. */
static int build_empirical(scn_sampler *s, const char *what, int is_out, scn_cache *cache,
                           sim_err *err)
{
    scn_trace_spec sp = scn_empirical_spec(&s->d, is_out);
    if (!(s->tab = get_table(cache, &sp, &s->owned, err)))
        return sim_err_prefix(err, "%s", what);
    s->vals = is_out ? s->tab->output : s->tab->prompt;
    s->n = s->tab->n;
    return 0;
}

static int build(scn_sampler *s, const char *what, int is_out, scn_cache *cache, sim_err *err)
{
    const scn_dist *d = &s->d;
    char why[256];
    switch (d->kind) {
    case SCN_DIST_NORMAL:
        if (scn_dist_check(d, why, sizeof why) != 0)
            return sim_errf(err, "%s: %s", what, why);
        normal_window(d, s->lo, s->hi, &s->plo, &s->phi);
        return 0;
    case SCN_DIST_LOGNORMAL:
        s->mu = log(d->mean) - d->sigma * d->sigma / 2;
        return 0;
    case SCN_DIST_ZIPF:
        build_zipf(s);
        return 0;
    case SCN_DIST_EMPIRICAL:
        return build_empirical(s, what, is_out, cache, err);
    case SCN_DIST_FIXED:
    case SCN_DIST_UNIFORM:
        return 0; /* nothing to prepare */
    default:
        SIM_CHECK(NULL, !"a distribution the sampler does not know");
        return 0;
    }
}

scn_sampler *scn_sampler_new(const scn_dist *d, const char *what, int output_column,
                             scn_cache *cache, sim_err *err)
{
    scn_sampler *s = sim_xcalloc(1, sizeof *s);
    s->d = *d;
    s->lo = d->min >= 1 ? d->min : 1;
    s->hi = d->max >= 1 ? d->max : INFINITY;
    if (build(s, what, output_column, cache, err)) {
        scn_sampler_free(s);
        return NULL;
    }
    return s;
}

void scn_sampler_free(scn_sampler *s)
{
    if (!s)
        return;
    free(s->cdf);
    if (s->owned)
        table_free(s->tab);
    free(s);
}

/* A truncated normal's draw, by inversion of its CDF within the window. */
static double draw_normal(const scn_sampler *s, gsl_rng *rng)
{
    double u = s->plo + (s->phi - s->plo) * gsl_rng_uniform_pos(rng);
    double x = s->d.mean + gsl_cdf_gaussian_Pinv(u, s->d.std);
    /* MODEL: the window is widened by half a token on each side so that rounding keeps
     * every draw inside [lo, hi]; clamp against the last ulp */
    return fmin(fmax(round(x), s->lo), s->hi);
}

/* A zipf draw: the first value whose cumulative weight passes a uniform one (binary search). */
static double draw_zipf(const scn_sampler *s, gsl_rng *rng)
{
    double u = gsl_rng_uniform(rng) * s->cdf[s->n - 1];
    int64_t lo = 0, hi = s->n - 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (s->cdf[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return s->d.min + (double)lo;
}

static double draw_raw(scn_sampler *s, gsl_rng *rng)
{
    const scn_dist *d = &s->d;
    switch (d->kind) {
    case SCN_DIST_FIXED:
        return d->value;
    case SCN_DIST_UNIFORM:
        return d->min + (double)gsl_rng_uniform_int(rng, (unsigned long)(d->max - d->min) + 1);
    case SCN_DIST_NORMAL:
        return draw_normal(s, rng);
    case SCN_DIST_LOGNORMAL:
        return gsl_ran_lognormal(rng, s->mu, d->sigma);
    case SCN_DIST_ZIPF:
        return draw_zipf(s, rng);
    case SCN_DIST_EMPIRICAL:
        return (double)s->vals[gsl_rng_uniform_int(rng, (unsigned long)s->n)];
    default:
        SIM_CHECK(NULL, !"a distribution the sampler does not know");
        return 1;
    }
}

int64_t scn_sampler_draw(scn_sampler *s, gsl_rng *rng, int *clipped)
{
    double x = round(draw_raw(s, rng));
    if (x < s->lo) {
        x = s->lo;
        *clipped = 1;
    } else if (x > s->hi) {
        x = s->hi;
        *clipped = 1;
    }
    if (x > INT32_MAX) {
        x = INT32_MAX;
        *clipped = 1;
    }
    return (int64_t)x;
}

/* ---- joint pairs ---- */

struct scn_pairs {
    table *tab;
    int owned;
};

scn_trace_spec scn_lengths_spec_of(const scn_lengths *l)
{
    scn_trace_spec sp = {.path = l->path,
                         .format = l->format,
                         .col_prompt = *l->col_prompt ? l->col_prompt : NULL,
                         .col_output = *l->col_output ? l->col_output : NULL,
                         .lengths_only = 1,
                         .want_prompt = 1,
                         .want_output = 1};
    return sp;
}

scn_pairs *scn_pairs_new(const scn_lengths *l, scn_cache *cache, sim_err *err)
{
    scn_pairs *p = sim_xcalloc(1, sizeof *p);
    scn_trace_spec sp = scn_lengths_spec_of(l);
    if (!(p->tab = get_table(cache, &sp, &p->owned, err))) {
        sim_err_prefix(err, "workload.lengths");
        scn_pairs_free(p);
        return NULL;
    }
    return p;
}

void scn_pairs_draw(const scn_pairs *p, gsl_rng *rng, int64_t *prompt, int64_t *output)
{
    unsigned long i = gsl_rng_uniform_int(rng, (unsigned long)p->tab->n);
    *prompt = p->tab->prompt[i];
    *output = p->tab->output[i];
}

void scn_pairs_draw_mt(const scn_pairs *p, sim_mt *g, int64_t *prompt, int64_t *output)
{
    /* gsl_rng_uniform_int(rng, n) of MT19937 (min 0, max 2^32 - 1): a word over the range / n,
     * drawn again while it is n or more */
    SIM_CHECK(NULL, p->tab->n > 0 && p->tab->n <= UINT32_MAX);
    uint32_t n = (uint32_t)p->tab->n, scale = UINT32_C(0xffffffff) / n, i;
    do
        i = sim_mt_u32(g) / scale;
    while (i >= n);
    *prompt = p->tab->prompt[i];
    *output = p->tab->output[i];
}

int64_t scn_pairs_count(const scn_pairs *p)
{
    return p->tab->n;
}

void scn_pairs_free(scn_pairs *p)
{
    if (!p)
        return;
    if (p->owned)
        table_free(p->tab);
    free(p);
}
