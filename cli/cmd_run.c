/*
 * cmd_run.c: `llmsim run FILE`: one simulation, stored as one run in one transaction, and its
 * summary.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const cli_command run_cmd = {
    .name = "run",
    .args = "FILE",
    .summary =
        "Simulates the scenario in FILE, stores the run in one transaction and prints its summary.",
    .details = "A failed run stores nothing. The same scenario and seed give byte-identical --json "
               "output.",
    .min_pos = 1,
    .max_pos = 1,
    .common = CLI_DB | CLI_SET | CLI_SEED | CLI_STORE | CLI_JSON | CLI_QUIET,
    .def_level = "requests"};

static void report_notes(const cli_common *c, const study_result *r)
{
    cli_note(c, "%s", r->note);
    if (r->clipped > 0)
        cli_note(c,
                 "llmsim: %lld request lengths were clipped to their bounds or the model's "
                 "context\n",
                 (long long)r->clipped);
    if (r->skipped > 0)
        cli_note(c, "llmsim: %lld bad trace rows skipped\n", (long long)r->skipped);
    for (int k = 1; k < ENG_REJECT_REASON_COUNT; k++)
        if (r->tot.rejected_by[k])
            cli_note(c, "llmsim: %lld requests rejected: %s\n", (long long)r->tot.rejected_by[k],
                     eng_reject_reason_name((eng_reject_reason)k));
    if (r->saturated)
        cli_note(c, "llmsim: saturated: the queue was still growing when arrivals ended "
                    "(latency percentiles depend on the run's length)\n");
}

static void print(const cli_common *c, const scn_scenario *scn, uint64_t seed,
                  const study_result *r)
{
    if (c->json) {
        cli_json j;
        cli_json_begin(&j, stdout);
        cli_json_open(&j, NULL, '{');
        cli_print_metrics_json(&j, NULL, r);
        cli_json_close(&j, '}');
    } else {
        printf("llmsim run: %s | %s on %s (%s) | scheduler %s | seed %llu\n", scn->name,
               scn->engine.model.name, scn->engine.gpu.name, r->label, scn->engine.sched.name,
               (unsigned long long)seed);
        cli_print_summary(stdout, r);
    }
    fflush(stdout);
}

int cmd_run(int argc, char **argv)
{
    int no_db = 0;
    const cli_option opts[] = {{"--no-db", NULL, CLI_FLAG, &no_db,
                                "simulate without storing anything", NULL, 0, 0, NULL, NULL},
                               CLI_END};
    cli_common c;
    const char *file;
    int npos, st = cli_parse(&run_cmd, opts, &c, argc, argv, &file, &npos);
    if (st != CLI_GO)
        return st;
    sim_err err = {{0}};
    scn_scenario scn;
    store *s = NULL;
    study_result *res = sim_xcalloc(1, sizeof *res);
    int rc = 1;
    if (study_load(file, c.sets, c.nsets, &scn, &err) != 0)
        goto fail;
    cli_note(&c, "%s", scn.notes);
    uint64_t seed = c.seed_given ? c.seed : scn.seed;
    if (!no_db && !(s = store_open(c.db, &err)))
        goto fail;
    study_sink sink = {.s = s, .level = c.level};
    if (study_run(&scn, seed, s, s ? &sink : NULL, NULL, res, &err) != 0)
        goto fail;
    report_notes(&c, res);
    print(&c, &scn, seed, res);
    if (res->run_id)
        cli_note(&c, "llmsim: run %lld stored in %s (simulated in %.3f s)\n",
                 (long long)res->run_id, c.db, res->wall_s);
    else
        cli_note(&c, "llmsim: simulated in %.3f s (not stored)\n", res->wall_s);
    rc = 0;
    goto out;
fail:
    cli_fail(NULL, &err);
out:
    store_close(s);
    scn_free(&scn);
    free(res);
    return rc;
}
