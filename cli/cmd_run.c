/*
 * cmd_run.c: `llmsim run FILE [--db PATH] [--seed N] [--set K=V]... [--json] [--store LEVEL]`:
 * one simulation, stored as one run in one transaction, and its summary.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_common.h"

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

static void report_notes(const cmd_result *r)
{
    if (r->clipped > 0)
        fprintf(stderr,
                "llmsim: %lld request lengths were clipped to their bounds or the model's "
                "context\n",
                (long long)r->clipped);
    if (r->skipped > 0)
        fprintf(stderr, "llmsim: %lld bad trace rows skipped\n", (long long)r->skipped);
    for (int k = 1; k < ENG_REJECT_REASON_COUNT; k++)
        if (r->tot.rejected_by[k])
            fprintf(stderr, "llmsim: %lld requests rejected: %s\n",
                    (long long)r->tot.rejected_by[k], eng_reject_reason_name((eng_reject_reason)k));
    if (r->saturated)
        fprintf(stderr, "llmsim: saturated: the queue was still growing when arrivals ended "
                        "(latency percentiles depend on the run's length)\n");
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
    cmd_cost cost = {.profile = NULL};
    cmd_result *res = sim_xcalloc(1, sizeof *res);
    int rc = 1;
    if (scn_load(o.file, o.sets, o.nsets, cmd_resolver(), &scn, &err) != 0)
        goto fail;
    fputs(scn.notes, stderr);
    uint64_t seed = o.seed_given ? o.seed : scn.seed;
    if (!o.no_db && !(s = store_open(o.db, &err)))
        goto fail;
    if (cmd_cost_new(&scn, s, &cost, &err) != 0)
        goto fail;
    cmd_store_opts so = {.s = s, .level = o.level};
    if (cmd_simulate(&scn, seed, &cost, s ? &so : NULL, res, &err) != 0)
        goto fail;
    report_notes(res);
    if (o.json)
        cmd_print_json(stdout, res->m, res->n);
    else {
        printf("llmsim run: %s | %s on %s (%s) | scheduler %s | seed %llu\n", scn.name,
               scn.engine.model.name, scn.engine.gpu.name, res->label, scn.engine.sched.name,
               (unsigned long long)seed);
        cmd_print_summary(stdout, res->m, res->n);
    }
    fflush(stdout);
    if (res->run_id)
        fprintf(stderr, "llmsim: run %lld stored in %s (simulated in %.3f s)\n",
                (long long)res->run_id, o.db, res->wall_s);
    else
        fprintf(stderr, "llmsim: simulated in %.3f s (not stored)\n", res->wall_s);
    rc = 0;
    goto out;
fail:
    fprintf(stderr, "llmsim: %s\n", err.msg);
out:
    cmd_cost_free(&cost);
    store_close(s);
    scn_free(&scn);
    free(res);
    return rc;
}
