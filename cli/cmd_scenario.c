/*
 * cmd_scenario.c: `llmsim scenario check FILE`: validate a scenario without running it, and
 * print the KV cache it gets.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const cli_command check_cmd = {
    .name = "scenario check",
    .args = "FILE",
    .summary = "Loads and validates the scenario in FILE (with any --set overrides) without "
               "running it, builds the cost model `run` would build (so it refuses what run "
               "refuses), and prints the model, GPU, scheduler, cost model and the KV cache one "
               "replica gets.",
    .details = "A scenario naming a stored profile (profile:) is checked against the database "
               "given with --db: the profile must be there, measured on the scenario's GPU or "
               "borrowed explicitly. Without --db the profile is not looked up, and the output "
               "says so.",
    .min_pos = 1,
    .max_pos = 1,
    .common = CLI_DB | CLI_SET | CLI_JSON | CLI_QUIET};

static void print_json(const char *file, const scn_scenario *scn, const eng_kv_plan *plan,
                       const char *cost)
{
    cli_json j;
    cli_json_begin(&j, stdout);
    cli_json_open(&j, NULL, '{');
    cli_json_str(&j, "file", file);
    cli_json_bool(&j, "ok", 1);
    cli_json_str(&j, "name", scn->name);
    cli_json_str(&j, "model", scn->engine.model.name);
    cli_json_str(&j, "gpu", scn->engine.gpu.name);
    cli_json_str(&j, "dtype", eng_dtype_name(scn->engine.dtype));
    cli_json_str(&j, "scheduler", scn->engine.sched.name);
    if (cost[0])
        cli_json_str(&j, "cost_model", cost);
    else
        cli_json_str(&j, "cost_model", "not built: the profile was not looked up (no --db)");
    cli_json_int(&j, "replicas", scn->engine.replicas);
    cli_json_int(&j, "tensor_parallel", scn->engine.tensor_parallel);
    cli_json_int(&j, "weight_bytes", plan->weight_bytes);
    cli_json_int(&j, "kv_bytes", plan->kv_bytes);
    cli_json_int(&j, "kv_bytes_per_token", plan->bytes_per_token);
    cli_json_int(&j, "kv_blocks", plan->blocks);
    cli_json_int(&j, "kv_tokens", plan->tokens);
    cli_json_str(&j, "notes", scn->notes);
    cli_json_close(&j, '}');
}

/* Builds the cost model `run` would build (the roofline, or the stored profile from --db) and
 * frees it: what it refuses, check refuses. Its description into desc. 0, or -1 with err. */
static int check_cost(const cli_common *c, const scn_scenario *scn, char *desc, size_t len,
                      sim_err *err)
{
    if (scn->profile[0] && !c->db_given) {
        desc[0] = '\0'; /* not built */
        return 0;
    }
    store *s = NULL;
    if (scn->profile[0] && !(s = store_open_readonly(c->db, err)))
        return -1;
    study_cost cost;
    int rc = study_cost_new(scn, s, &cost, err);
    if (rc == 0) {
        snprintf(desc, len, "%s", cost.pred.label);
        cli_note(c, "%s", cost.note);
    }
    study_cost_free(&cost);
    store_close(s);
    return rc;
}

static int check(int argc, char **argv)
{
    cli_common c;
    const char *file;
    int npos, st = cli_parse(&check_cmd, NULL, &c, argc, argv, &file, &npos);
    if (st != CLI_GO)
        return st;
    scn_scenario scn;
    sim_err err = {{0}};
    int rc = 0;
    eng_kv_plan plan;
    char cost[192];
    if (study_load(file, c.sets, c.nsets, &scn, &err) != 0 ||
        eng_kv_plan_compute(&scn.engine, &plan, &err) != 0 ||
        check_cost(&c, &scn, cost, sizeof cost, &err) != 0) {
        rc = cli_fail(NULL, &err);
    } else if (c.json) {
        print_json(file, &scn, &plan, cost);
    } else {
        cli_note(&c, "%s", scn.notes);
        char what[256];
        if (cost[0])
            snprintf(what, sizeof what, "cost model: %s", cost);
        else
            snprintf(what, sizeof what, "profile '%s' not looked up (give --db to check it)",
                     scn.profile);
        printf("%s: ok (%s on %s %s, scheduler %s, %s, KV cache %lld blocks = %lld tokens)\n", file,
               scn.engine.model.name, scn.engine.gpu.name, eng_dtype_name(scn.engine.dtype),
               scn.engine.sched.name, what, (long long)plan.blocks, (long long)plan.tokens);
    }
    scn_free(&scn);
    return rc;
}

int cmd_scenario(int argc, char **argv)
{
    static const cli_sub subs[] = {{"check", check, "validate a scenario file without running it"}};
    return cli_dispatch("scenario", subs, 1, argc, argv);
}
