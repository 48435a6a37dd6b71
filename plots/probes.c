/*
 * probes.c: a capacity search's probes: the latency percentile of each probe of the rate search
 * (one replica) against the rate it offered, one line per choice compared, filled where the
 * probe met every SLO and hollow where it did not, with the SLO on that percentile as a line
 * when the search has one. It shows how the search closed in on each choice's answer.
 *
 * Data file: one block per choice ("# series: CHOICE" first, two blank lines between), rows
 * "rate y ok saturated seq" sorted by rate, y in ms (NaN where the probe's run has no such
 * metric).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plt_int.h"
#include "metrics.h"
#include "store_query.h"

typedef struct probe {
    char choice[128];
    double rate, y;
    int ok, saturated;
    long long seq;
} probe;

typedef struct probes {
    probe *v;
    int n, cap;
    char slo[512];
} probes;

static int add_probe(void *arg, int ncols, const char *const *names, const char *const *vals)
{
    probes *ps = arg;
    if (ps->n == ps->cap)
        ps->v = sim_xrealloc(ps->v, (size_t)(ps->cap = ps->cap ? 2 * ps->cap : 64) * sizeof *ps->v);
    probe *p = &ps->v[ps->n++];
    snprintf(p->choice, sizeof p->choice, "%s", vals[0] && *vals[0] ? vals[0] : "(scenario)");
    p->rate = atof(vals[1]);
    p->y = vals[2] ? atof(vals[2]) : NAN;
    p->ok = atoi(vals[3]);
    p->saturated = atoi(vals[4]);
    p->seq = atoll(vals[5]);
    return 0;
}

static int read_slo(void *arg, int ncols, const char *const *names, const char *const *vals)
{
    snprintf(((probes *)arg)->slo, sizeof((probes *)arg)->slo, "%s", vals[0] ? vals[0] : "");
    return 0;
}

static int by_choice_rate(const void *a, const void *b)
{
    const probe *p = a, *q = b;
    int c = strcmp(p->choice, q->choice);
    if (c)
        return c;
    return p->rate < q->rate ? -1 : p->rate > q->rate ? 1 : (p->seq > q->seq) - (p->seq < q->seq);
}

/* The SLO on metric_pct ("ttft_p99") in ms from the search's SLO text
 * ("ttft_p99=1000ms,tpot_p99=50ms"), or NaN. */
static double slo_ms(const char *slo, const char *key)
{
    const char *p = strstr(slo, key);
    if (!p || p[strlen(key)] != '=')
        return NAN;
    char *end;
    double v = strtod(p + strlen(key) + 1, &end);
    if (end[0] == 's')
        return v * 1e3;
    return v;
}

/* Reads capacity search o->sweep's SLO text and its search probes (metric row mname) into ps,
 * sorted by choice and rate. 0, or -1 with err (no such search, no probe); the caller frees
 * ps->v. */
static int read_probes(store *s, const plt_opts *o, const char *mname, probes *ps, sim_err *err)
{
    char sql[1024];
    snprintf(sql, sizeof sql, "SELECT slo FROM capacity_searches WHERE id = %lld",
             (long long)o->sweep);
    if (store_query(s, sql, read_slo, ps, err) != 0)
        return -1;
    if (!ps->slo[0])
        return sim_errf(err, "%s: no capacity search %lld in this database", store_path(s),
                        (long long)o->sweep);
    snprintf(sql, sizeof sql,
             "SELECT p.choice, p.rate, (SELECT value FROM metrics m WHERE m.run_id = p.run_id AND"
             " m.name = '%s'), p.ok, p.saturated, p.seq FROM capacity_probes p WHERE"
             " p.search_id = %lld AND p.phase = 'search' ORDER BY p.seq",
             mname, (long long)o->sweep);
    if (store_query(s, sql, add_probe, ps, err) != 0)
        return -1;
    if (ps->n == 0)
        return sim_errf(err, "%s: capacity search %lld has no probe", store_path(s),
                        (long long)o->sweep);
    qsort(ps->v, (size_t)ps->n, sizeof *ps->v, by_choice_rate);
    return 0;
}

/* Writes one block per choice (at most 64) into dat, its name into titles. Returns the blocks. */
static int write_series(FILE *dat, const probes *ps, const char **titles)
{
    int nseries = 0;
    for (int i = 0; i < ps->n; i++) {
        if (i == 0 || strcmp(ps->v[i].choice, ps->v[i - 1].choice) != 0) {
            if (nseries == 64)
                break;
            titles[nseries++] = ps->v[i].choice;
            fputs(i ? "\n\n# series: " : "# series: ", dat);
            plt_put_clean(dat, ps->v[i].choice);
            fputs("\n# rate y ok saturated seq\n", dat);
        }
        fprintf(dat, "%.10g %.10g %d %d %lld\n", ps->v[i].rate, ps->v[i].y, ps->v[i].ok,
                ps->v[i].saturated, ps->v[i].seq);
    }
    return nseries;
}

/* The search's SLO on metric at pct in ms, under its name as written or its older name, or NaN. */
static double metric_slo(const char *slo, const char *metric, const char *pct)
{
    const eng_latency *l = eng_latency_find(metric, ENG_LAT_SLO);
    char key[64];
    snprintf(key, sizeof key, "%s_%s", l->name, pct);
    double v = slo_ms(slo, key);
    if (isnan(v) && l->alias) {
        snprintf(key, sizeof key, "%s_%s", l->alias, pct);
        v = slo_ms(slo, key);
    }
    return v;
}

int plt_probes_write(store *s, const plt_opts *o, FILE *dat, FILE *gp, plt_result *res,
                     sim_err *err)
{
    const char *metric = o->metric ? o->metric : "ttft";
    const char *pct = o->pct ? o->pct : "p99";
    const char *pre = strcmp(pct, "p50") == 0 ? "median" : pct;
    char mname[64];
    snprintf(mname, sizeof mname, "%s_%s", pre, plt_metric_column(metric));
    probes ps = {0};
    if (read_probes(s, o, mname, &ps, err) != 0) {
        free(ps.v);
        return -1;
    }
    fprintf(dat, "# llmsim probes of capacity search %lld: %s (ms) against rate (req/s)\n",
            (long long)o->sweep, mname);
    const char *titles[64];
    int nseries = write_series(dat, &ps, titles);
    double slo = metric_slo(ps.slo, metric, pct);
    char title[256], ylabel[96];
    snprintf(ylabel, sizeof ylabel, "%s %s (ms)", pre, plt_metric_label(metric));
    snprintf(title, sizeof title, "capacity search %lld: %s of each probe (SLOs %.100s)",
             (long long)o->sweep, ylabel, ps.slo);
    plt_gp_str(gp, "plot_title", title);
    plt_gp_str(gp, "ylabel", ylabel);
    fprintf(gp, "nseries = %d\nslo = %.10g\n", nseries, isnan(slo) ? -1.0 : slo);
    plt_gp_array(gp, "titles", titles, nseries);
    res->series = nseries;
    plt_default_size(res, 1000, 600);
    free(ps.v);
    return 0;
}
