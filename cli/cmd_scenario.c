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
               "running it, and "
               "prints the model, GPU, scheduler and the KV cache one replica gets.",
    .min_pos = 1,
    .max_pos = 1,
    .common = CLI_SET | CLI_JSON | CLI_QUIET};

static void print_json(const char *file, const scn_scenario *scn, const eng_kv_plan *plan)
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
    } else if (c.json) {
        print_json(file, &scn, &plan);
    } else {
        cli_note(&c, "%s", scn.notes);
        printf("%s: ok (%s on %s %s, scheduler %s, KV cache %lld blocks = %lld tokens)\n", file,
               scn.engine.model.name, scn.engine.gpu.name, eng_dtype_name(scn.engine.dtype),
               scn.engine.sched.name, (long long)plan.blocks, (long long)plan.tokens);
    }
    scn_free(&scn);
    return rc;
}

int cmd_scenario(int argc, char **argv)
{
    static const cli_sub subs[] = {{"check", check, "validate a scenario file without running it"}};
    return cli_dispatch("scenario", subs, 1, argc, argv);
}
