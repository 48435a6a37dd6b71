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
 * A sampler owns its tables; the random generator belongs to the caller.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>

#include "scn_int.h"

struct scn_sampler {
    scn_dist d;
    double lo, hi;   /* clip bounds (lo >= 1) */
    double plo, phi; /* normal: CDF of the truncation window */
    double mu;       /* lognormal: mean of the underlying normal */
    double *cdf;     /* zipf: cumulative weights, n entries */
    int32_t *vals;   /* empirical: the column */
    int64_t n;
};

/* Reads every row of a trace (lengths only) into growing arrays. */
static int read_all(const scn_trace_spec *sp, int32_t **prompt, int32_t **output, int64_t *n,
                    sim_err *err)
{
    scn_trace_reader *r = scn_trace_open(sp, err);
    if (!r)
        return -1;
    int64_t cap = 1024;
    scn_trace_row row;
    int rc;
    *n = 0;
    if (prompt)
        *prompt = sim_xmalloc(sizeof **prompt * (size_t)cap);
    if (output)
        *output = sim_xmalloc(sizeof **output * (size_t)cap);
    while ((rc = scn_trace_next(r, &row, err)) == 1) {
        if (*n == cap) {
            cap *= 2;
            if (prompt)
                *prompt = sim_xrealloc(*prompt, sizeof **prompt * (size_t)cap);
            if (output)
                *output = sim_xrealloc(*output, sizeof **output * (size_t)cap);
        }
        if (prompt)
            (*prompt)[*n] = (int32_t)(row.prompt > INT32_MAX ? INT32_MAX : row.prompt);
        if (output)
            (*output)[*n] = (int32_t)(row.output > INT32_MAX ? INT32_MAX : row.output);
        (*n)++;
    }
    scn_trace_close(r);
    if (rc == 0 && *n == 0)
        rc = sim_errf(err, "%s: no rows", sp->path);
    return rc < 0 ? -1 : 0;
}

static int build(scn_sampler *s, const char *what, int is_out, sim_err *err)
{
    const scn_dist *d = &s->d;
    switch (d->kind) {
    case SCN_DIST_NORMAL:
        s->plo = gsl_cdf_gaussian_P(s->lo - 0.5 - d->mean, d->std);
        s->phi = isinf(s->hi) ? 1.0 : gsl_cdf_gaussian_P(s->hi + 0.5 - d->mean, d->std);
        if (!(s->phi - s->plo > 1e-12))
            return sim_errf(err, "%s: normal {mean: %g, std: %g} has no mass in [%g, %g]", what,
                            d->mean, d->std, s->lo, s->hi);
        return 0;
    case SCN_DIST_LOGNORMAL:
        s->mu = log(d->mean) - d->sigma * d->sigma / 2;
        return 0;
    case SCN_DIST_ZIPF:
        s->n = (int64_t)(d->max - d->min) + 1;
        s->cdf = sim_xmalloc(sizeof *s->cdf * (size_t)s->n);
        double acc = 0;
        for (int64_t k = 0; k < s->n; k++)
            s->cdf[k] = acc += pow((double)(k + 1), -d->s);
        return 0;
    case SCN_DIST_EMPIRICAL: {
        scn_trace_spec sp = {.path = d->path, .format = d->format, .lengths_only = 1};
        const char *col = *d->column ? d->column : NULL;
        if (is_out) {
            sp.col_output = col;
            sp.want_output = 1;
        } else {
            sp.col_prompt = col;
            sp.want_prompt = 1;
        }
        if (read_all(&sp, is_out ? NULL : &s->vals, is_out ? &s->vals : NULL, &s->n, err))
            return sim_err_prefix(err, "%s", what);
        return 0;
    }
    default:
        return 0;
    }
}

scn_sampler *scn_sampler_new(const scn_dist *d, const char *what, int output_column, sim_err *err)
{
    scn_sampler *s = sim_xcalloc(1, sizeof *s);
    s->d = *d;
    s->lo = d->min >= 1 ? d->min : 1;
    s->hi = d->max >= 1 ? d->max : INFINITY;
    if (build(s, what, output_column, err)) {
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
    free(s->vals);
    free(s);
}

static double draw_raw(scn_sampler *s, gsl_rng *rng)
{
    const scn_dist *d = &s->d;
    switch (d->kind) {
    case SCN_DIST_FIXED:
        return d->value;
    case SCN_DIST_UNIFORM:
        return d->min + (double)gsl_rng_uniform_int(rng, (unsigned long)(d->max - d->min) + 1);
    case SCN_DIST_NORMAL: {
        double u = s->plo + (s->phi - s->plo) * gsl_rng_uniform_pos(rng);
        double x = d->mean + gsl_cdf_gaussian_Pinv(u, d->std);
        /* MODEL: the window is widened by half a token on each side so that rounding keeps
         * every draw inside [lo, hi]; clamp against the last ulp */
        return fmin(fmax(round(x), s->lo), s->hi);
    }
    case SCN_DIST_LOGNORMAL:
        return gsl_ran_lognormal(rng, s->mu, d->sigma);
    case SCN_DIST_ZIPF: {
        double u = gsl_rng_uniform(rng) * s->cdf[s->n - 1];
        int64_t lo = 0, hi = s->n - 1;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (s->cdf[mid] > u)
                hi = mid;
            else
                lo = mid + 1;
        }
        return d->min + (double)lo;
    }
    case SCN_DIST_EMPIRICAL:
        return (double)s->vals[gsl_rng_uniform_int(rng, (unsigned long)s->n)];
    default:
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
    int32_t *prompt, *output;
    int64_t n;
};

scn_pairs *scn_pairs_new(const scn_lengths *l, sim_err *err)
{
    scn_pairs *p = sim_xcalloc(1, sizeof *p);
    scn_trace_spec sp = {.path = l->path,
                         .format = l->format,
                         .col_prompt = *l->col_prompt ? l->col_prompt : NULL,
                         .col_output = *l->col_output ? l->col_output : NULL,
                         .lengths_only = 1,
                         .want_prompt = 1,
                         .want_output = 1};
    if (read_all(&sp, &p->prompt, &p->output, &p->n, err)) {
        sim_err_prefix(err, "workload.lengths");
        scn_pairs_free(p);
        return NULL;
    }
    return p;
}

void scn_pairs_draw(const scn_pairs *p, gsl_rng *rng, int64_t *prompt, int64_t *output)
{
    unsigned long i = gsl_rng_uniform_int(rng, (unsigned long)p->n);
    *prompt = p->prompt[i];
    *output = p->output[i];
}

int64_t scn_pairs_count(const scn_pairs *p)
{
    return p->n;
}

void scn_pairs_free(scn_pairs *p)
{
    if (!p)
        return;
    free(p->prompt);
    free(p->output);
    free(p);
}
