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
               "running it, runs the checks `run` makes up to building the cost model, and "
               "prints the model (total and active parameters), the GPU, the precision, the "
               "parallel layout, the weights and KV bytes per GPU, and the KV cache one replica "
               "gets. It builds the cost model `run` would build, so it refuses what run refuses: "
               "it exits 1 when the cost model refuses the model, after printing the sizes.",
    .details = "A scenario naming a stored profile (profile:) is checked against the database "
               "given with --db: the profile must be there, measured on the scenario's GPU or "
               "borrowed explicitly. Without --db the profile is not looked up (only whether the "
               "model can be priced at all), and the output says so.",
    .min_pos = 1,
    .max_pos = 1,
    .common = CLI_DB | CLI_SET | CLI_JSON | CLI_QUIET};

static void print_json(const char *file, const scn_scenario *scn, const eng_kv_plan *plan,
                       const char *cost, const char *error)
{
    const eng_config *e = &scn->engine;
    const eng_model *m = &e->model;
    cli_json j;
    cli_json_begin(&j, stdout);
    cli_json_open(&j, NULL, '{');
    cli_json_str(&j, "file", file);
    cli_json_bool(&j, "ok", error == NULL);
    if (error)
        cli_json_str(&j, "error", error);
    cli_json_str(&j, "name", scn->name);
    cli_json_str(&j, "model", m->name);
    cli_json_str(&j, "arch", m->arch);
    cli_json_int(&j, "params_total", eng_model_params(m));
    cli_json_int(&j, "params_active", eng_model_params_active(m));
    cli_json_str(&j, "gpu", e->gpu.name);
    cli_json_str(&j, "dtype", eng_dtype_name(eng_config_dtype(e)));
    cli_json_str(&j, "kv_dtype", eng_dtype_name(eng_config_kv_dtype(e)));
    cli_json_str(&j, "scheduler", e->sched.name);
    if (cost[0])
        cli_json_str(&j, "cost_model", cost);
    else if (!error)
        cli_json_str(&j, "cost_model", "not built: the profile was not looked up (no --db)");
    cli_json_int(&j, "replicas", e->replicas);
    cli_json_int(&j, "tensor_parallel", e->tensor_parallel);
    cli_json_int(&j, "expert_parallel", e->expert_parallel);
    cli_json_int(&j, "data_parallel_attention", e->data_parallel_attention);
    cli_json_int(&j, "gpus_per_replica", plan->gpus);
    cli_json_int(&j, "weight_bytes", plan->weight_bytes);
    cli_json_int(&j, "kv_bytes", plan->kv_bytes);
    cli_json_int(&j, "kv_bytes_per_token", plan->bytes_per_token);
    cli_json_int(&j, "kv_heads_per_gpu", plan->kv_heads);
    cli_json_int(&j, "window_bytes_per_token", plan->window_bytes_per_token);
    cli_json_int(&j, "window", plan->window);
    cli_json_int(&j, "state_bytes_per_seq", plan->state_bytes);
    cli_json_int(&j, "kv_blocks", plan->blocks);
    cli_json_int(&j, "kv_tokens", plan->tokens);
    cli_json_str(&j, "notes", scn->notes);
    cli_json_close(&j, '}');
}

static void print_text(const char *file, const scn_scenario *scn, const eng_kv_plan *p, int ok)
{
    const eng_config *e = &scn->engine;
    const eng_model *m = &e->model;
    printf("%s: %s (%s on %s %s, scheduler %s, KV cache %lld blocks = %lld tokens)\n", file,
           ok ? "ok" : "sizes", m->name, e->gpu.name, eng_dtype_name(eng_config_dtype(e)),
           e->sched.name, (long long)p->blocks, (long long)p->tokens);
    printf("  model      %s: %.2f B parameters, %.2f B active per token\n",
           *m->arch ? m->arch : "?", (double)eng_model_params(m) / 1e9,
           (double)eng_model_params_active(m) / 1e9);
    printf("  layout     tensor_parallel %d, expert_parallel %d, data_parallel_attention %d: "
           "%d GPU%s per replica, %d replica%s\n",
           e->tensor_parallel, e->expert_parallel, e->data_parallel_attention, p->gpus,
           p->gpus > 1 ? "s" : "", e->replicas, e->replicas > 1 ? "s" : "");
    printf("  per GPU    weights %.2f GB, KV %lld B per token (kv_dtype %s, %d KV head%s), "
           "%.2f GB for the cache\n",
           (double)p->weight_bytes / 1e9, (long long)p->bytes_per_token,
           eng_dtype_name(eng_config_kv_dtype(e)), p->kv_heads, p->kv_heads == 1 ? "" : "s",
           (double)p->kv_bytes / 1e9);
    if (p->window)
        printf("  windowed   %lld B per token per GPU, at most %d tokens per sequence (budgeted "
               "per token here)\n",
               (long long)p->window_bytes_per_token, p->window);
    if (p->state_bytes)
        printf("  state      %lld B per sequence per GPU (linear attention; not reserved)\n",
               (long long)p->state_bytes);
}

/* Builds the cost model `run` would build (the roofline, or the stored profile from --db) and
 * frees it: what it refuses, check refuses. Its description into desc. 0, or -1 with err. */
static int check_cost(const cli_common *c, const scn_scenario *scn, char *desc, size_t len,
                      sim_err *err)
{
    desc[0] = '\0';
    if (scn->profile[0] && !c->db_given)
        return study_cost_check(scn, err); /* the profile is not built: can it be priced? */
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
    if (study_load(file, c.sets, c.nsets, &scn, &err) != 0 ||
        eng_kv_plan_compute(&scn.engine, &plan, &err) != 0) {
        rc = cli_fail(NULL, &err);
        scn_free(&scn);
        return rc;
    }
    char desc[192];
    int cost = check_cost(&c, &scn, desc, sizeof desc, &err);
    if (c.json) {
        print_json(file, &scn, &plan, desc, cost ? err.msg : NULL);
    } else {
        cli_note(&c, "%s", scn.notes);
        print_text(file, &scn, &plan, cost == 0);
        if (cost == 0 && desc[0])
            printf("  cost model %s\n", desc);
        else if (cost == 0)
            printf("  cost model profile '%s' not looked up (give --db to check it)\n",
                   scn.profile);
    }
    if (cost)
        rc = cli_fail(NULL, &err);
    scn_free(&scn);
    return rc;
}

int cmd_scenario(int argc, char **argv)
{
    static const cli_sub subs[] = {{"check", check, "validate a scenario file without running it"}};
    return cli_dispatch("scenario", subs, 1, argc, argv);
}
