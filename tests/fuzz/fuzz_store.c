/*
 * fuzz_store.c: libFuzzer harness for the store given a database file someone sent: opening
 * it read-only and reading everything the plots, reports and sweeps read (runs, metrics,
 * requests, iterations, spans, latencies, sweeps and their description, curves, validations),
 * merging it into another database, and opening it for writing (identity checks and the
 * schema upgrade).
 *
 * Input: one byte of options, then the rest. Bit 0 clear: the rest is the database file
 * itself. Bit 0 set: the rest is SQL run (through store_exec) on a fresh llmsim database
 * holding two runs, a sweep, a capacity search and a validation, before the same reads; bit 1
 * then sets that database's schema_version to 1 + (options >> 2) % 3 first, so the reopening
 * upgrades from an older version over whatever the SQL left. The file is in memory (/dev/shm
 * when it is a tmpfs) and rewritten for every input; the merges go into one database in memory
 * (made afresh every 256 inputs).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_db.h"
#include "store.h"
#include "store_merge.h"
#include "store_query.h"
#include "store_run.h"
#include "store_validation.h"
#include "study_sweep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char db[192];
static uint8_t *tmpl; /* the template database's bytes */
static size_t ntmpl;

/* ---- reads ---- */

static int on_sweep(void *arg, const store_sweep_row *row)
{
    (void)arg;
    return study_sweep_points_of(row->varied) < 0;
}

static int on_param(void *arg, int64_t point, const char *key, const char *value)
{
    *(size_t *)arg += strlen(key) + strlen(value) + (size_t)(point & 1);
    return 0;
}

static int on_curve(void *arg, const store_curve_row *r)
{
    *(size_t *)arg += r->series ? strlen(r->series) : 0;
    return 0;
}

static int on_point(void *arg, const char *metric, const char *grp, const char *row_id,
                    double measured, double predicted)
{
    *(size_t *)arg += strlen(metric) + strlen(grp) + strlen(row_id);
    return 0;
}

static void read_run(store *s, int64_t run)
{
    sim_err err = {{0}};
    store_run_meta m;
    if (store_run_get(s, run, &m, &err) != 0)
        return;
    char *text = NULL;
    if (store_run_scenario(s, run, &text, &err) == 0)
        free(text);
    eng_metric mt[ENG_MAX_METRICS];
    store_run_metrics(s, run, mt, ENG_MAX_METRICS, &err);
    store_rq_cursor *rc = store_requests_open(s, run, &err);
    eng_request rq;
    for (int i = 0; rc && i < 64 && store_requests_next(rc, &rq, &err) == 1; i++)
        ;
    store_requests_close(rc);
    store_iter_cursor *ic = store_iterations_open(s, run, &err);
    eng_iter_rec it;
    for (int i = 0; ic && i < 64 && store_iterations_next(ic, &it, &err) == 1; i++)
        ;
    store_iterations_close(ic);
    store_span_cursor *sc = store_spans_open(s, run, 0, INT64_MAX, &err);
    eng_span_rec sp;
    for (int i = 0; sc && i < 64 && store_spans_next(sc, &sp, &err) == 1; i++)
        ;
    store_spans_close(sc);
    double *v = NULL;
    if (store_request_latencies(s, run, STORE_LAT_TPOT, &v, &err) >= 0)
        free(v);
}

static void read_sweep(store *s)
{
    static const char *const metrics[] = {"output_throughput", "p99_ttft_ms"};
    sim_err err = {{0}};
    size_t n = 0;
    store_sweep_list(s, on_sweep, NULL, &err);
    store_sweep_params(s, 1, on_param, &n, &err);
    store_curve_query q = {.sweep = 1, .y_metric = "p99_ttft_ms", .x_metric = "offered_rate"};
    store_sweep_curve(s, &q, on_curve, &n, &err);
    q.by = "scheduler.name";
    q.x_param = "workload.arrival.rate";
    store_sweep_curve(s, &q, on_curve, &n, &err);
    static study_sweep sw; /* large: its value tables */
    if (study_sweep_from_store(s, 1, &sw, &err) == 0) {
        study_sweep_table t;
        memset(&t, 0, sizeof t);
        if (study_sweep_table_load(&sw, s, metrics, 2, &t, &err) == 0) {
            int k = study_sweep_paired_key(&sw);
            for (int p = 0; k >= 0 && p < sw.npoints && p < 64; p++)
                study_sweep_paired_reps(&t, p, study_sweep_base_point(&sw, p, k));
        }
        study_sweep_table_free(&t);
        study_sweep_free(&sw);
    }
}

static void read_all(const char *path)
{
    sim_err err = {{0}};
    store *s = store_open_readonly(path, &err);
    if (!s)
        return;
    for (int64_t run = 1; run <= 3; run++)
        read_run(s, run);
    read_sweep(s);
    store_validation_meta vm;
    size_t n = 0;
    if (store_validation_get(s, 1, &vm, &err) == 0)
        store_validation_points(s, 1, on_point, &n, &err);
    int64_t x;
    store_query_int(s, "SELECT count(*) FROM capacity_probes", &x, &err);
    store_close(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (!db[0]) {
        char path[192];
        fuzz_dir("store");
        fuzz_file(db, sizeof db, "in.db");
        fuzz_db_template(fuzz_file(path, sizeof path, "tmpl.db"));
        tmpl = fuzz_slurp(path, &ntmpl);
    }
    unsigned o = data[0];
    sim_err err = {{0}};
    if (!(o & 1)) {
        fuzz_put(db, data + 1, size - 1);
    } else {
        fuzz_put(db, tmpl, ntmpl);
        char *sql = malloc(size);
        memcpy(sql, data + 1, size - 1);
        sql[size - 1] = '\0';
        store *s = store_open(db, &err);
        if (s) {
            char v[96];
            snprintf(v, sizeof v, "UPDATE schema_version SET version = %u", 1 + (o >> 2) % 3);
            if (o & 2)
                store_exec(s, v, &err);
            store_exec(s, sql, &err);
        }
        store_close(s);
        free(sql);
    }
    read_all(db);
    /* merged into one database in memory, made afresh every 256 inputs: its schema costs more
     * to build than a merge, and inputs merged into what earlier ones left take the "already
     * there" paths */
    static store *out;
    static unsigned merged;
    if (out && ++merged % 256 == 0) {
        store_close(out);
        out = NULL;
    }
    if (!out)
        fuzz_must((out = store_open(":memory:", &err)) != NULL);
    store_merge_stats st;
    store_merge(out, db, &st, &err);
    store *w = store_open(db, &err); /* identity, then the schema upgrade */
    store_close(w);
    read_all(db);
    return 0;
}
