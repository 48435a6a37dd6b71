/*
 * test_fleet_plot.c: the fleet timeline an autoscaled run stores (fleet_windows) and `llmsim
 * plot fleet` end to end: the shipped fleet_diurnal scenario (its first 6,000 requests) is
 * drawn; the stored replica time is the run's GPU-hours to the bit and the windows' request
 * counts are the run's; a run without a timeline, and a database from before it, are refused
 * saying why. The shipped fleet_pd_diurnal scenario (prefill replicas of 1 GPU, decode replicas
 * of 2; its first 12,000 requests, the decode pool from one replica) stores each pool's share of
 * every window, whose GPU time still sums to its GPU-hours to the bit, and `plot fleet` draws each
 * pool; a database of schema 5 reads and upgrades.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "test_main.h"

static char out[65536], err[65536], db[300];

/* The shipped day, cut to its first 6,000 requests (about 40 minutes of it), stored at the
 * summary level (run 1), the demo scenario without autoscaling (run 2), and the shipped
 * disaggregated day from one decode replica (run 3). */
static int setup(void **state)
{
    static const struct {
        const char *scenario, *options;
    } runs[] = {
        {"fleet_diurnal", "--set workload.num_requests=6000 --store summary"},
        {"demo", "--set workload.num_requests=50"},
        {"fleet_pd_diurnal", "--set workload.num_requests=12000 --set decode.replicas=1 --set "
                             "decode.autoscale.min_replicas=1 --store summary"},
    };
    if (e2e_mkdir() != 0)
        return -1;
    snprintf(db, sizeof db, "%s/fleet.db", e2e_dir);
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        int st = e2e_sh(out, sizeof out, err, sizeof err,
                        "%s run %s/scenarios/%s.yaml %s --db %s --quiet", LLMSIM_BINARY,
                        LLMSIM_SOURCE_DIR, runs[i].scenario, runs[i].options, db);
        if (st != 0) {
            fprintf(stderr, "run %s: %d: %s\n", runs[i].scenario, st, err);
            return -1;
        }
    }
    return 0;
}

static int teardown(void **state)
{
    return e2e_rmdir();
}

static double run_metric(int run, const char *name)
{
    char sql[200];
    snprintf(sql, sizeof sql, "SELECT value FROM metrics WHERE run_id = %d AND name = '%s'", run,
             name);
    return e2e_query_double(db, sql);
}

static double metric(const char *name)
{
    return run_metric(1, name);
}

/* Run run's fleet windows (*w, the caller frees them) and pools, read from the database at path
 * opened read-only; its schema version into *version when not NULL. */
static int64_t read_windows(const char *path, int run, eng_fleet_window **w, eng_fleet_pools *pools,
                            int *version)
{
    sim_err e = {{0}};
    store *s = store_open_readonly(path, &e);
    assert_non_null(s);
    if (version)
        *version = store_schema_version(s);
    int64_t n = store_run_fleet_windows(s, run, w, pools, &e);
    store_close(s);
    return n;
}

/* The windows: the autoscaler's 15 s intervals over the run's duration, replica time summed
 * times the GPUs of a replica is gpu_hours exactly; arrivals, completions and good requests add
 * up to the run's. */
static void test_timeline_adds_up(void **state)
{
    eng_fleet_window *w;
    eng_fleet_pools pools;
    int64_t n = read_windows(db, 1, &w, &pools, NULL), gpus = pools.gpus[0];
    assert_true(n > 100);
    assert_int_equal(pools.n, 1);
    assert_int_equal(gpus, 1); /* an L4, TP 1 */
    int64_t ns = 0, arrivals = 0, completed = 0, good = 0, starting = 0, draining = 0;
    double ttft_max = 0;
    for (int64_t i = 0; i < n; i++) {
        assert_true(w[i].end_ns > w[i].start_ns);
        if (i) {
            assert_int_equal(w[i].start_ns, w[i - 1].end_ns);
            assert_int_equal(w[i].start_ns % 15000000000LL, 0);
        }
        /* no more replica time than max_replicas the whole window */
        assert_true(w[i].serving_ns + w[i].starting_ns + w[i].draining_ns <=
                    10 * (w[i].end_ns - w[i].start_ns));
        ns += w[i].serving_ns + w[i].starting_ns + w[i].draining_ns;
        starting += w[i].starting_ns;
        draining += w[i].draining_ns;
        arrivals += w[i].arrivals;
        completed += w[i].completed;
        good += w[i].good;
        assert_true(w[i].ttft_count == 0 || w[i].p99_ttft_ms > 0);
        if (w[i].ttft_count && w[i].p99_ttft_ms > ttft_max)
            ttft_max = w[i].p99_ttft_ms;
    }
    double duration_s = metric("duration");
    print_message("%lld windows, %.4f GPU-hours, starting %.1f s, draining %.1f s, "
                  "worst window p99 TTFT %.0f ms\n",
                  (long long)n, (double)gpus * (double)ns / 1e9 / 3600, (double)starting / 1e9,
                  (double)draining / 1e9, ttft_max);
    assert_true((double)gpus * (double)ns / 1e9 / 3600 == metric("gpu_hours"));
    assert_true(starting > 0);                                 /* it scaled up */
    assert_int_equal(arrivals, 6000);                          /* every request counted */
    assert_int_equal(completed, (int64_t)metric("completed")); /* once */
    assert_true(fabs((double)good - metric("request_goodput") * duration_s) <= 1e-6 * good);
    assert_true(w[0].start_ns < 15000000000LL); /* the first arrival's window */
    assert_true(ttft_max > 0);
    free(w);
}

/* The figure: an image (or, without gnuplot, exit 3 with the data and script), a data row per
 * window with the offered load, replicas and p99 TTFT. */
static void test_plot_fleet(void **state)
{
    int have = system("command -v gnuplot >/dev/null 2>&1") == 0;
    int st = e2e_sh(out, sizeof out, err, sizeof err, "%s plot fleet --run 1 --db %s -o %s/f.png",
                    LLMSIM_BINARY, db, e2e_dir);
    if (st != (have ? 0 : 3))
        fail_msg("plot fleet: status %d: %s", st, err);
    char path[400];
    if (have) {
        snprintf(path, sizeof path, "%s/f.png", e2e_dir);
        assert_int_equal(access(path, R_OK), 0);
    }
    snprintf(path, sizeof path, "%s/f.dat", e2e_dir);
    char *dat = e2e_read_all(path);
    int64_t rows = 0;
    double offered = 0, held_max = 0;
    for (char *line = dat; line && *line;) {
        char *nl = strchr(line, '\n');
        double v[8];
        if (line[0] != '#' && sscanf(line, "%lf %lf %lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2],
                                     &v[3], &v[4], &v[5], &v[6], &v[7]) >= 6) {
            rows++;
            offered += v[3] * (v[2] - v[1]);
            held_max = v[5] > held_max ? v[5] : held_max;
            assert_true(v[5] >= v[4]); /* held includes serving */
        }
        line = nl ? nl + 1 : NULL;
    }
    free(dat);
    int64_t windows = e2e_query_int(db, "SELECT count(*) FROM fleet_windows WHERE run_id = 1");
    assert_int_equal(rows, windows);
    assert_true(fabs(offered - 6000) < 1e-3); /* rate x window length: the arrivals */
    assert_true(held_max > 2 && held_max <= 10);
    snprintf(path, sizeof path, "%s/f.gp", e2e_dir);
    char *gp = e2e_read_all(path);
    assert_non_null(strstr(gp, "p99 TTFT"));
    free(gp);
}

/* A copy of the database named name (its path into old) made as an older llmsim left it by
 * sql. */
static void older(char *old, size_t len, const char *name, const char *sql)
{
    snprintf(old, len, "%s/%s", e2e_dir, name);
    assert_int_equal(e2e_sh(NULL, 0, NULL, 0, "cp %s %s", db, old), 0);
    sim_err e = {{0}};
    store *s = store_open(old, &e);
    assert_non_null(s);
    assert_int_equal(store_exec(s, sql, &e), 0);
    store_close(s);
}

/* A run without autoscaling has no timeline: refused, naming the run and what stores one; so is
 * a database written before schema 5. Nothing is left behind. */
static void test_refusals(void **state)
{
    e2e_llmsim_says(err, sizeof err, 1, "run 2 has no fleet timeline",
                    "plot fleet --run 2 --db %s -o %s/g.png", db, e2e_dir);
    assert_non_null(strstr(err, "autoscale"));
    char path[400];
    snprintf(path, sizeof path, "%s/g.dat", e2e_dir);
    assert_int_not_equal(access(path, F_OK), 0);
    e2e_llmsim_says(err, sizeof err, 1, "no run 9", "plot fleet --run 9 --db %s -o %s/g.png", db,
                    e2e_dir);
    char old[400];
    older(old, sizeof old, "v4.db",
          "DROP VIEW fleet_timeline; DROP TABLE fleet_windows; DROP TABLE fleet_pools;"
          " UPDATE schema_version SET version = 4");
    sim_err e = {{0}};
    store *s;
    e2e_llmsim_says(err, sizeof err, 1, "before schema version 5",
                    "plot fleet --run 1 --db %s -o %s/g.png", old, e2e_dir);
    /* opened for writing, it is upgraded: the table is back, empty for the old runs */
    s = store_open(old, &e);
    assert_non_null(s);
    assert_int_equal(store_schema_version(s), STORE_SCHEMA_VERSION);
    store_close(s);
    assert_int_equal(e2e_query_int(old, "SELECT count(*) FROM fleet_windows"), 0);
}

/* Run 3, prefill and decode pools of 1 and 2 GPUs per replica: each window's GPU time is its
 * pools' replica time times their GPUs, the totals are the pools' sums, and the GPU time of
 * every window summed is gpu_hours to the bit; both pools scaled up, the prefill pool down too
 * (draining first). */
static void test_pools_timeline(void **state)
{
    eng_fleet_window *w;
    eng_fleet_pools pools;
    int64_t n = read_windows(db, 3, &w, &pools, NULL);
    assert_true(n > 15);
    assert_int_equal(pools.n, 2);
    assert_int_equal(pools.gpus[0], 1);
    assert_int_equal(pools.gpus[1], 2);
    int64_t gpu_ns = 0, ns[2][3] = {{0}};
    for (int64_t i = 0; i < n; i++) {
        int64_t g = 0, tot[3] = {0};
        for (int k = 0; k < 2; k++)
            for (int c = 0; c < 3; c++) {
                g += pools.gpus[k] * w[i].pool_ns[k][c];
                tot[c] += w[i].pool_ns[k][c];
                ns[k][c] += w[i].pool_ns[k][c];
            }
        assert_int_equal(w[i].gpu_ns, g);
        assert_int_equal(w[i].serving_ns, tot[0]);
        assert_int_equal(w[i].starting_ns, tot[1]);
        assert_int_equal(w[i].draining_ns, tot[2]);
        if (i)
            assert_int_equal(w[i].start_ns % 30000000000LL, 0); /* the planner's 30 s */
        gpu_ns += w[i].gpu_ns;
    }
    print_message("%lld windows, %.4f GPU-hours; prefill starting %.0f s, draining %.0f s; "
                  "decode starting %.0f s\n",
                  (long long)n, (double)gpu_ns / 1e9 / 3600, (double)ns[0][1] / 1e9,
                  (double)ns[0][2] / 1e9, (double)ns[1][1] / 1e9);
    assert_true((double)gpu_ns / 1e9 / 3600 == run_metric(3, "gpu_hours"));
    assert_true(ns[0][1] > 0 && ns[1][1] > 0); /* both pools scaled up */
    assert_true(ns[0][2] > 0);                 /* a prefill replica drained before it left */
    assert_true(run_metric(3, "prefill_scale_downs") > 0);
    assert_true(run_metric(3, "completed") == 12000 && run_metric(3, "rejected") == 0);
    /* the view's GPU-hours are the window's GPU time */
    double view =
        e2e_query_double(db, "SELECT sum(gpu_hours) FROM fleet_timeline WHERE run_id = 3");
    assert_true(fabs(view - run_metric(3, "gpu_hours")) < 1e-9);
    free(w);
}

/* plot fleet draws each pool's serving replicas of run 3 (the data's pool columns filled) next to
 * run 1's (NaN there). */
static void test_plot_pools(void **state)
{
    int have = system("command -v gnuplot >/dev/null 2>&1") == 0;
    int st =
        e2e_sh(out, sizeof out, err, sizeof err,
               "%s plot fleet --run 3 --run 1 --db %s -o %s/p.png", LLMSIM_BINARY, db, e2e_dir);
    if (st != (have ? 0 : 3))
        fail_msg("plot fleet: status %d: %s", st, err);
    char path[400];
    snprintf(path, sizeof path, "%s/p.dat", e2e_dir);
    char *dat = e2e_read_all(path);
    int block = 0, pooled = 0, nan_pools = 0;
    double pmax = 0, dmax = 0;
    for (char *line = dat; line && *line;) {
        char *nl = strchr(line, '\n');
        double v[12];
        char tail[8][16];
        if (strncmp(line, "# series", 8) == 0)
            block++;
        else if (line[0] != '#' &&
                 sscanf(line, "%lf %lf %lf %lf %lf %lf %15s %15s %15s %15s %15s %15s", &v[0], &v[1],
                        &v[2], &v[3], &v[4], &v[5], tail[0], tail[1], tail[2], tail[3], tail[4],
                        tail[5]) == 12) {
            if (block == 1) {
                double ps = atof(tail[2]), ds = atof(tail[4]);
                assert_true(fabs(ps + ds - v[4]) < 1e-6); /* the pools make the serving total */
                pmax = ps > pmax ? ps : pmax;
                dmax = ds > dmax ? ds : dmax;
                pooled++;
            } else {
                nan_pools += strcmp(tail[2], "NaN") == 0 && strcmp(tail[4], "NaN") == 0;
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    free(dat);
    assert_int_equal(block, 2);
    assert_true(pooled > 20 && nan_pools > 100);
    assert_true(pmax > 2 && dmax > 1); /* each pool above its starting replicas somewhere */
    snprintf(path, sizeof path, "%s/p.gp", e2e_dir);
    char *gp = e2e_read_all(path);
    assert_non_null(strstr(gp, "haspools = 1"));
    assert_non_null(strstr(gp, "prefill serving"));
    free(gp);
}

/* A database of schema 5 (no gpu_ns, no fleet_pools) reads: a window's GPU time is its replica
 * time times the stored GPUs per replica, one pool; a writable open upgrades it to 6. */
static void test_schema5(void **state)
{
    char old[400];
    older(old, sizeof old, "v5.db",
          "DROP VIEW fleet_timeline; DROP TABLE fleet_pools;"
          " ALTER TABLE fleet_windows DROP COLUMN gpu_ns; UPDATE schema_version SET version = 5");
    eng_fleet_window *w;
    eng_fleet_pools pools;
    int version;
    int64_t n = read_windows(old, 1, &w, &pools, &version), gpu_ns = 0;
    assert_int_equal(version, 5);
    assert_true(n > 100);
    assert_int_equal(pools.n, 1);
    for (int64_t i = 0; i < n; i++)
        gpu_ns += w[i].gpu_ns;
    free(w);
    assert_true((double)gpu_ns / 1e9 / 3600 == metric("gpu_hours"));
    sim_err e = {{0}};
    store *s = store_open(old, &e);
    assert_non_null(s);
    assert_int_equal(store_schema_version(s), 6);
    store_close(s);
    assert_int_equal(e2e_query_int(old, "SELECT count(*) FROM fleet_windows WHERE gpu_ns IS NULL"),
                     e2e_query_int(old, "SELECT count(*) FROM fleet_windows"));
    assert_int_equal(e2e_query_int(old, "SELECT count(*) FROM fleet_pools"), 0);
}

LLMSIM_TEST_MAIN(setup, teardown, test_timeline_adds_up, test_plot_fleet, test_refusals,
                 test_pools_timeline, test_plot_pools, test_schema5)
