/*
 * cdf.c: latency CDFs of several runs, from the requests table (store_request_latencies).
 *
 * Per finished request: TTFT = first_token - arrival, E2E = finish - arrival, TPOT = (finish -
 * first_token) / (output_tokens - 1) (requests with one output token have no TPOT). ITL needs
 * the time of every token, which the store does not keep, so it is refused with a pointer to
 * tpot. The legend names each run and what differs between the runs (plt_run_labels). Data
 * file: one block per run ("# series: LABEL" first, two blank lines between), rows "value_ms
 * fraction" sorted by value, fraction = rank / count, so the last row of each block is 1.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plt_int.h"
#include "metrics.h"
#include "store_query.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The request rows' column of a latency with a value per request (not ITL). */
static store_latency latency(const char *metric)
{
    const eng_latency *l = eng_latency_find(metric, ENG_LAT_SLO);
    SIM_CHECK(NULL, l != NULL); /* plot.c checked the name */
    switch (l->id) {
    case ENG_LAT_TTFT:
        return STORE_LAT_TTFT;
    case ENG_LAT_E2EL:
        return STORE_LAT_E2E;
    case ENG_LAT_TPOT:
        return STORE_LAT_TPOT;
    default:
        SIM_CHECK(NULL, !"a latency with a value per request row");
        return STORE_LAT_TPOT;
    }
}

/* The run's values, sorted, into *out (malloc'd); count or -1 with err. */
static int64_t load(store *s, int64_t run, const char *metric, double **out, sim_err *err)
{
    *out = NULL;
    if (plt_request_rows(s, run, err) < 0)
        return -1;
    double *v;
    int64_t n = store_request_latencies(s, run, latency(metric), &v, err);
    if (n < 0)
        return -1;
    if (n > 0)
        qsort(v, (size_t)n, sizeof *v, cmp_double);
    *out = v;
    return n;
}

/* The CDF of n sorted values: every one up to MAX_POINTS, else MAX_POINTS order statistics
 * evenly spaced in rank, the first and the last included, plus every value of the top 0.1%
 * (its tail, where the percentiles people quote live), so a million-request run's plot stays
 * small and its tail exact. */
#define MAX_POINTS 2000

static void write_cdf(FILE *dat, const double *v, int64_t n)
{
    int64_t tail = n - n / 1000, prev = -1;
    for (int64_t j = 0; n > MAX_POINTS && j < MAX_POINTS; j++) {
        int64_t k = (int64_t)((double)j * (double)(n - 1) / (MAX_POINTS - 1) + 0.5);
        if (k >= tail)
            break;
        fprintf(dat, "%.15g %.10g\n", v[k], (double)(k + 1) / (double)n);
        prev = k;
    }
    for (int64_t k = n > MAX_POINTS ? (tail > prev ? tail : prev + 1) : 0; k < n; k++)
        fprintf(dat, "%.15g %.10g\n", v[k], (double)(k + 1) / (double)n);
}

/* Writes the CDF of run's metric (its block, named name, series i) into dat; widens [lo, hi] to
 * its values. 0, or -1 with err (no request rows, no finished request). */
static int write_series(store *s, int64_t run, const char *metric, const char *name, int i,
                        FILE *dat, double *lo, double *hi, sim_err *err)
{
    double *v;
    int64_t n = load(s, run, metric, &v, err);
    if (n < 0)
        return -1;
    if (n == 0) {
        free(v);
        return sim_errf(err, "%s: run %lld has no finished request with a %s", store_path(s),
                        (long long)run, metric);
    }
    fputs(i ? "\n\n# series: " : "# series: ", dat);
    plt_put_clean(dat, name);
    fprintf(dat, "\n# %s_ms fraction\n", metric);
    write_cdf(dat, v, n);
    *lo = v[0] < *lo ? v[0] : *lo;
    *hi = v[n - 1] > *hi ? v[n - 1] : *hi;
    free(v);
    return 0;
}

int plt_cdf_write(store *s, const plt_opts *o, FILE *dat, FILE *gp, plt_result *res, sim_err *err)
{
    const char *metric = o->metric ? o->metric : "ttft";
    if (eng_latency_find(metric, ENG_LAT_SLO)->id == ENG_LAT_ITL)
        return sim_errf(err, "cdf: per-token times are not stored, so there is no per-request "
                             "ITL; use --metric tpot (mean gap per request), ttft or e2e");
    char names[PLT_MAX_RUNS][PLT_LABEL_MAX];
    const char *titles[PLT_MAX_RUNS];
    double lo = INFINITY, hi = 0;
    if (plt_run_labels(s, o->runs, o->nruns, names, err) != 0)
        return -1;
    fprintf(dat, "# llmsim cdf of %s (ms) over finished requests\n", metric);
    for (int i = 0; i < o->nruns; i++) {
        titles[i] = names[i];
        if (write_series(s, o->runs[i], metric, names[i], i, dat, &lo, &hi, err) != 0)
            return -1;
    }
    char title[128], xlabel[64];
    snprintf(title, sizeof title, "CDF of %s over finished requests", plt_metric_label(metric));
    snprintf(xlabel, sizeof xlabel, "%s (ms)", plt_metric_label(metric));
    plt_gp_str(gp, "plot_title", title);
    plt_gp_str(gp, "xlabel", xlabel);
    fprintf(gp, "nseries = %d\nlogx = %d\n", o->nruns, lo > 0 && hi / lo > 100);
    plt_gp_array(gp, "titles", titles, o->nruns);
    res->series = o->nruns;
    plt_default_size(res, 1000, 600);
    return 0;
}
