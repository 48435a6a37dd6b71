/*
 * cmd_run.c: `llmsim run FILE [--db PATH] [--seed N] [--set K=V]... [--json] [--store LEVEL]`:
 * one simulation, stored as one run in one transaction, and its summary.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cmd_common.h"
#include "store_run.h"

static int usage(void)
{
    fprintf(stderr, "usage: llmsim run FILE [--db PATH] [--seed N] [--set KEY=VALUE]... [--json]\n"
                    "                  [--store requests|iterations|summary] [--no-db]\n");
    return 2;
}

typedef struct run_opts {
    const char *file, *db;
    const char *sets[CMD_MAX_SETS];
    int nsets, json, seed_given, no_db;
    uint64_t seed;
    store_level level;
} run_opts;

static int parse(int argc, char **argv, run_opts *o)
{
    memset(o, 0, sizeof *o);
    o->db = "llmsim.db";
    o->level = STORE_REQUESTS;
    for (int i = 1; i < argc; i++) {
        const char *v;
        if ((v = cli_opt(argc, argv, &i, "--db")))
            o->db = v;
        else if ((v = cli_opt(argc, argv, &i, "--seed"))) {
            char *end;
            o->seed = strtoull(v, &end, 10);
            if (*end || !*v) {
                fprintf(stderr, "llmsim run: --seed expects a non-negative integer, got '%s'\n", v);
                return 2;
            }
            o->seed_given = 1;
        } else if ((v = cli_opt(argc, argv, &i, "--set"))) {
            if (o->nsets == CMD_MAX_SETS)
                return usage();
            o->sets[o->nsets++] = v;
        } else if ((v = cli_opt(argc, argv, &i, "--store"))) {
            if (store_level_parse(v, &o->level) != 0) {
                fprintf(stderr, "llmsim run: --store expects requests, iterations or summary\n");
                return 2;
            }
        } else if (strcmp(argv[i], "--json") == 0)
            o->json = 1;
        else if (strcmp(argv[i], "--no-db") == 0)
            o->no_db = 1;
        else if (argv[i][0] == '-')
            return usage();
        else if (!o->file)
            o->file = argv[i];
        else
            return usage();
    }
    return o->file ? 0 : usage();
}

/* Runs the scenario; stores it unless w is NULL. Fills m/n. 0, or -1 with err. */
static int simulate(const scn_scenario *scn, uint64_t seed, const eng_predictor *pred, store_run *w,
                    eng_metric *m, int *n, sim_err *err)
{
    int rc = -1;
    sim_ctx *ctx = sim_new(seed);
    scn_source *src = scn_source_new(scn, seed, err);
    eng_engine *e = NULL;
    if (!src)
        goto out;
    e = eng_new(ctx, &scn->engine, pred, scn_source_ops(), src, w ? store_run_recorder() : NULL, w,
                err);
    if (!e)
        goto out;
    eng_set_slo(e, scn->slo.ttft_ms, scn->slo.tpot_ms, scn->slo.e2e_ms);
    if (eng_run(e, err) != 0)
        goto out;
    *n = eng_summary(e, m);
    if (scn_source_clipped(src) > 0)
        fprintf(stderr,
                "llmsim: %lld request lengths were clipped to their bounds or the "
                "model's context\n",
                (long long)scn_source_clipped(src));
    if (scn_source_skipped(src) > 0)
        fprintf(stderr, "llmsim: %lld bad trace rows skipped\n",
                (long long)scn_source_skipped(src));
    const eng_totals *t = eng_get_totals(e);
    for (int r = 1; r < ENG_REJECT_REASON_COUNT; r++)
        if (t->rejected_by[r])
            fprintf(stderr, "llmsim: %lld requests rejected: %s\n", (long long)t->rejected_by[r],
                    eng_reject_reason_name((eng_reject_reason)r));
    rc = 0;
out:
    eng_free(e);
    scn_source_free(src);
    sim_free(ctx);
    return rc;
}

int cmd_run(int argc, char **argv)
{
    run_opts o;
    int st = parse(argc, argv, &o);
    if (st)
        return st;
    sim_err err = {{0}};
    scn_scenario scn;
    store *s = NULL;
    store_run *w = NULL;
    eng_predictor pred = {0};
    int rc = 1;
    if (scn_load(o.file, o.sets, o.nsets, cmd_resolver(), &scn, &err) != 0)
        goto fail;
    uint64_t seed = o.seed_given ? o.seed : scn.seed;
    if (!o.no_db && !(s = store_open(o.db, &err)))
        goto fail;
    if (cmd_predictor(&scn, s, &pred, &err) != 0)
        goto fail;
    if (s) {
        char hw[256];
        store_run_info info = {.name = scn.name,
                               .scenario_text = scn.text,
                               .scheduler = scn.engine.sched.name,
                               .version = LLMSIM_VERSION,
                               .profile = pred.label,
                               .model = scn.engine.model.name,
                               .gpu = scn.engine.gpu.name,
                               .dtype = eng_dtype_name(scn.engine.dtype),
                               .hardware = cmd_hardware(hw, sizeof hw),
                               .seed = seed,
                               .replicas = scn.engine.replicas,
                               .tensor_parallel = scn.engine.tensor_parallel,
                               .level = o.level};
        if (!(w = store_run_begin(s, &info, &err)))
            goto fail;
    }
    eng_metric m[ENG_MAX_METRICS];
    int n = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (simulate(&scn, seed, &pred, w, m, &n, &err) != 0)
        goto fail;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    int64_t run_id = w ? store_run_id(w) : 0;
    if (w) {
        store_run *done = w;
        w = NULL;
        if (store_run_finish(done, m, n, &err) != 0)
            goto fail;
    }
    double wall = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (o.json)
        cmd_print_json(stdout, m, n);
    else {
        printf("llmsim run: %s | %s on %s (%s) | scheduler %s | seed %llu\n", scn.name,
               scn.engine.model.name, scn.engine.gpu.name, pred.label, scn.engine.sched.name,
               (unsigned long long)seed);
        cmd_print_summary(stdout, m, n);
    }
    fflush(stdout);
    if (run_id)
        fprintf(stderr, "llmsim: run %lld stored in %s (simulated in %.3f s)\n", (long long)run_id,
                o.db, wall);
    else
        fprintf(stderr, "llmsim: simulated in %.3f s (not stored)\n", wall);
    rc = 0;
    goto out;
fail:
    fprintf(stderr, "llmsim: %s\n", err.msg);
    if (w)
        store_run_abort(w);
out:
    cmd_predictor_free(&pred);
    store_close(s);
    scn_free(&scn);
    return rc;
}
