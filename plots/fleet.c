/*
 * fleet.c: an autoscaled fleet over time, from the fleet timeline stored with each autoscaled
 * run (fleet_windows, store_run_fleet_windows): the offered load, the replicas serving and held,
 * and the p99 TTFT and SLO attainment per autoscaler interval, one line per run on three panels
 * that share the time axis (hours past two hours of simulated time).
 *
 * Data file: one block per run ("# series: run N (scheduler)" first, two blank lines between),
 * one row per window "t_mid start end offered_rate serving held p99_ttft_ms slo_attainment
 * prefill_serving prefill_held decode_serving decode_held", times in the axis' unit, replicas
 * time-averaged over the window, NaN where a window has no first token (p99) or no finished or
 * rejected request (attainment), and in the per-pool columns of a run of one pool (aggregated).
 * A run of prefill and decode pools gets its pools' serving replicas drawn too.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "plt_int.h"
#include "store_query.h"

/* A run's windows, refused with what to do when it has none. */
static int64_t read_windows(store *s, int64_t run, eng_fleet_window **win, eng_fleet_pools *pools,
                            sim_err *err)
{
    int64_t n = store_run_fleet_windows(s, run, win, pools, err);
    if (n != 0)
        return n;
    store_run_meta m;
    if (store_run_get(s, run, &m, err) != 0)
        return -1;
    if (!store_has_fleet(s))
        return sim_errf(err,
                        "%s: run %lld has no fleet timeline: the database was written before "
                        "schema version 5, which stores it; run it again with this llmsim",
                        store_path(s), (long long)run);
    return sim_errf(err,
                    "%s: run %lld has no fleet timeline: only an autoscaled run (autoscale: in "
                    "its scenario) stores one; for a fixed fleet give autoscale with "
                    "min_replicas = max_replicas = replicas",
                    store_path(s), (long long)run);
}

static void put_num(FILE *dat, double v)
{
    if (isnan(v))
        fputs(" NaN", dat);
    else
        fprintf(dat, " %.9g", v);
}

static void write_windows(FILE *dat, const eng_fleet_window *win, int64_t n, int32_t pools,
                          double unit)
{
    for (int64_t i = 0; i < n; i++) {
        const eng_fleet_window *x = &win[i];
        double len = (double)(x->end_ns - x->start_ns), done = (double)(x->completed + x->rejected);
        fprintf(dat, "%.9g %.9g %.9g", (double)(x->start_ns + x->end_ns) / 2e9 / unit,
                (double)x->start_ns / 1e9 / unit, (double)x->end_ns / 1e9 / unit);
        put_num(dat, (double)x->arrivals * 1e9 / len);
        put_num(dat, (double)x->serving_ns / len);
        put_num(dat, (double)(x->serving_ns + x->starting_ns + x->draining_ns) / len);
        put_num(dat, x->ttft_count ? x->p99_ttft_ms : NAN);
        put_num(dat, done > 0 ? (double)x->good / done : NAN);
        for (int32_t k = 0; k < ENG_FLEET_POOLS; k++) {
            const int64_t *ns = x->pool_ns[k];
            put_num(dat, pools > 1 ? (double)ns[0] / len : NAN);
            put_num(dat, pools > 1 ? (double)(ns[0] + ns[1] + ns[2]) / len : NAN);
        }
        fputc('\n', dat);
    }
}

int plt_fleet_write(store *s, const plt_opts *o, FILE *dat, FILE *gp, plt_result *res, sim_err *err)
{
    char names[PLT_MAX_RUNS][PLT_LABEL_MAX];
    const char *titles[PLT_MAX_RUNS];
    eng_fleet_window *win[PLT_MAX_RUNS] = {NULL};
    int64_t n[PLT_MAX_RUNS];
    eng_fleet_pools pools[PLT_MAX_RUNS];
    int rc = -1, haspools = 0;
    double tmax = 0;
    if (plt_run_labels(s, o->runs, o->nruns, names, err) != 0)
        return -1;
    for (int i = 0; i < o->nruns; i++) {
        if ((n[i] = read_windows(s, o->runs[i], &win[i], &pools[i], err)) < 0)
            goto out;
        haspools |= pools[i].n > 1;
        double end = (double)win[i][n[i] - 1].end_ns / 1e9;
        tmax = end > tmax ? end : tmax;
        titles[i] = names[i];
    }
    double unit = tmax > 7200 ? 3600 : 1;
    fprintf(dat, "# llmsim fleet: one row per autoscaler interval\n");
    for (int i = 0; i < o->nruns; i++) {
        fprintf(dat, "%s# series: %s\n", i ? "\n\n" : "", names[i]);
        fprintf(dat, "# t_mid start end offered_rate serving held p99_ttft_ms slo_attainment"
                     " prefill_serving prefill_held decode_serving decode_held\n");
        write_windows(dat, win[i], n[i], pools[i].n, unit);
    }
    plt_gp_str(gp, "plot_title", "offered load, replicas and p99 TTFT over time");
    plt_gp_str(gp, "tunit", unit > 1 ? "h" : "s");
    fprintf(gp, "nseries = %d\ntmax = %.9g\nhaspools = %d\n", o->nruns, tmax / unit, haspools);
    plt_gp_array(gp, "titles", titles, o->nruns);
    res->series = o->nruns;
    if (!res->width)
        res->width = 1100;
    if (!res->height)
        res->height = 900;
    rc = 0;
out:
    for (int i = 0; i < o->nruns; i++)
        free(win[i]);
    return rc;
}
