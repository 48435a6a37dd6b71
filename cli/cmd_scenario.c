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

/* A pool's layout, and its KV cache's plan, as JSON members. */
#define LAYOUT(key, kind, member) SIM_JFIELD(key, kind, eng_config, member)
static const sim_jfield layout_fields[] = {
    LAYOUT("gpu", SIM_JF_CHARS, gpu.name),
    LAYOUT("scheduler", SIM_JF_CHARS, sched.name),
    LAYOUT("replicas", SIM_JF_INT, replicas),
    LAYOUT("tensor_parallel", SIM_JF_INT, tensor_parallel),
    LAYOUT("expert_parallel", SIM_JF_INT, expert_parallel),
    LAYOUT("data_parallel_attention", SIM_JF_INT, data_parallel_attention),
};
#define PLAN(key, member) SIM_JFIELD(key, SIM_JF_INT, eng_kv_plan, member)
static const sim_jfield plan_fields[] = {
    PLAN("gpus_per_replica", gpus),
    PLAN("weight_bytes", weight_bytes),
    PLAN("kv_bytes", kv_bytes),
    PLAN("kv_bytes_per_token", bytes_per_token),
    PLAN("kv_heads_per_gpu", kv_heads),
    PLAN("window_bytes_per_token", window_bytes_per_token),
    PLAN("window", window),
    PLAN("state_bytes_per_seq", state_bytes),
    PLAN("kv_blocks", blocks),
    PLAN("kv_tokens", tokens),
};

/* One pool's (or the deployment's) layout and KV cache, as JSON fields. */
static void json_pool(sim_jsonw *j, const eng_config *e, const eng_kv_plan *plan)
{
    SIM_JSONW_TABLE(j, layout_fields, e);
    SIM_JSONW_TABLE(j, plan_fields, plan);
}

/* A disaggregated deployment's KV transfer: link, bandwidth, latency, discipline. */
static void json_kv_transfer(sim_jsonw *j, const eng_config *e)
{
    sim_jsonw_open(j, "kv_transfer", '{');
    sim_jsonw_str(j, "link", eng_link_kind_name(e->pd.link));
    sim_jsonw_num(j, "bandwidth_gb_s", e->pd.link_bw / 1e9);
    sim_jsonw_num(j, "latency_us", e->pd.latency_ns / 1e3);
    sim_jsonw_str(j, "discipline", eng_xfer_mode_name(e->pd.mode));
    sim_jsonw_close(j, '}');
}

/* A disaggregated deployment's two pools and its KV transfer, as JSON objects (a pool of groups
 * as an array of them, each with its GPU). */
static void json_pd(sim_jsonw *j, const eng_config *e, const eng_kv_plan *plan)
{
    static const char *const names[2] = {"prefill", "decode"};
    int d = eng_config_decode_pool(e), np = eng_config_pools(e);
    for (int k = 0; k < 2; k++) {
        int lo = k ? d : 0, hi = k ? np : d, ng = e->pd.ngroups[k];
        if (ng)
            sim_jsonw_open(j, names[k], '[');
        for (int p = lo; p < hi; p++) {
            eng_config pc;
            eng_config_pool(e, p, &pc);
            sim_jsonw_open(j, ng ? NULL : names[k], '{');
            if (ng)
                sim_jsonw_str(j, "gpu", pc.gpu.name);
            json_pool(j, &pc, &plan[p]);
            sim_jsonw_close(j, '}');
        }
        if (ng)
            sim_jsonw_close(j, ']');
    }
    json_kv_transfer(j, e);
}

/* A mixed pool's group k: its GPU, layout and KV cache, as a JSON object. */
static void json_group(sim_jsonw *j, const eng_config *e, int k, const eng_kv_plan *plan)
{
    eng_config pc;
    eng_config_pool(e, k, &pc);
    sim_jsonw_open(j, NULL, '{');
    sim_jsonw_str(j, "gpu", pc.gpu.name);
    json_pool(j, &pc, plan);
    sim_jsonw_close(j, '}');
}

/* A mixed pool's groups, as a JSON array: each group's GPU, layout and KV cache. */
static void json_groups(sim_jsonw *j, const eng_config *e, const eng_kv_plan *plan)
{
    sim_jsonw_open(j, "groups", '[');
    for (int k = 0; k < e->groups.n; k++)
        json_group(j, e, k, &plan[k]);
    sim_jsonw_close(j, ']');
}

/* The model: name, architecture, parameters, weight and KV dtypes, as JSON fields. */
static void json_model(sim_jsonw *j, const eng_config *e)
{
    const eng_model *m = &e->model;
    sim_jsonw_str(j, "model", m->name);
    sim_jsonw_str(j, "arch", m->arch);
    sim_jsonw_int(j, "params_total", eng_model_params(m));
    sim_jsonw_int(j, "params_active", eng_model_params_active(m));
    sim_jsonw_str(j, "dtype", eng_dtype_name(eng_config_dtype(e)));
    sim_jsonw_str(j, "kv_dtype", eng_dtype_name(eng_config_kv_dtype(e)));
}

/* The deployment: a mixed pool's groups, one pool's fields, or the prefill and decode pools. */
static void json_deployment(sim_jsonw *j, const eng_config *e, const eng_kv_plan *plan)
{
    if (e->groups.n > 0)
        json_groups(j, e, plan);
    else if (!e->pd.enabled)
        json_pool(j, e, &plan[0]);
    else
        json_pd(j, e, plan);
}

static void print_json(const char *file, const scn_scenario *scn, const eng_kv_plan *plan,
                       const char *cost, const char *error)
{
    const eng_config *e = &scn->engine;
    sim_jsonw j;
    sim_jsonw_begin(&j, stdout);
    sim_jsonw_open(&j, NULL, '{');
    sim_jsonw_str(&j, "file", file);
    sim_jsonw_bool(&j, "ok", error == NULL);
    if (error)
        sim_jsonw_str(&j, "error", error);
    sim_jsonw_str(&j, "name", scn->name);
    json_model(&j, e);
    if (cost[0])
        sim_jsonw_str(&j, "cost_model", cost);
    else if (!error)
        sim_jsonw_str(&j, "cost_model", "not built: the profile was not looked up (no --db)");
    json_deployment(&j, e, plan);
    sim_jsonw_str(&j, "notes", scn->notes);
    sim_jsonw_close(&j, '}');
}

/* One pool's (or the deployment's) layout and KV cache, indented under its heading. */
static void text_pool(const eng_config *e, const eng_kv_plan *p)
{
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

/* How pool k of a disaggregated e is named: "prefill pool", "decode.replicas[1]". */
static const char *pd_pool_name(const eng_config *e, int k, char *buf, size_t len)
{
    int d = eng_config_decode_pool(e), g = eng_config_group(e, k);
    const char *role = k >= d ? "decode" : "prefill";
    if (g >= 0)
        snprintf(buf, len, "%s.replicas[%d]", role, k >= d ? g - e->pd.ngroups[0] : g);
    else
        snprintf(buf, len, "%s pool", role);
    return buf;
}

/* A disaggregated deployment's pools (or their groups) and its KV transfer link. */
static void text_pd(const eng_config *e, const eng_kv_plan *p)
{
    for (int k = 0; k < eng_config_pools(e); k++) {
        eng_config pc;
        char name[48];
        eng_config_pool(e, k, &pc);
        printf("%s: %d x %s, scheduler %s, router %s, KV cache %lld blocks = %lld tokens "
               "per replica\n",
               pd_pool_name(e, k, name, sizeof name), pc.replicas, pc.gpu.name, pc.sched.name,
               pc.router, (long long)p[k].blocks, (long long)p[k].tokens);
        text_pool(&pc, &p[k]);
    }
    const eng_pd_config *pd = &e->pd;
    char bw[64];
    if (pd->link_bw > 0)
        snprintf(bw, sizeof bw, "%.1f GB/s per GPU", pd->link_bw / 1e9);
    else if (pd->ngroups[0] || pd->ngroups[1])
        snprintf(bw, sizeof bw, "each group's GPU's figure (catalog)");
    else
        snprintf(bw, sizeof bw, "%.1f / %.1f GB/s per GPU (catalog)",
                 eng_link_gpu_bw(&pd->pool[0].gpu, pd->link) / 1e9,
                 eng_link_gpu_bw(&pd->pool[1].gpu, pd->link) / 1e9);
    printf("kv transfer  %s, %s, latency %.1f us, %s\n", eng_link_kind_name(pd->link), bw,
           pd->latency_ns / 1e3, eng_xfer_mode_name(pd->mode));
}

/* A mixed pool's groups: each one's replicas, GPU, policy and KV cache, and its layout. */
static void text_groups(const eng_config *e, const eng_kv_plan *p)
{
    for (int k = 0; k < e->groups.n; k++) {
        eng_config pc;
        eng_config_pool(e, k, &pc);
        printf("replicas[%d]: %d x %s, scheduler %s, KV cache %lld blocks = %lld tokens per "
               "replica\n",
               k, pc.replicas, pc.gpu.name, pc.sched.name, (long long)p[k].blocks,
               (long long)p[k].tokens);
        text_pool(&pc, &p[k]);
    }
}

static void print_text(const char *file, const scn_scenario *scn, const eng_kv_plan *p, int ok)
{
    const eng_config *e = &scn->engine;
    const eng_model *m = &e->model;
    if (e->groups.n > 0)
        printf("%s: %s (%s %s, a mixed pool of %d groups behind router %s)\n", file,
               ok ? "ok" : "sizes", m->name, eng_dtype_name(eng_config_dtype(e)), e->groups.n,
               e->router);
    else if (!e->pd.enabled)
        printf("%s: %s (%s on %s %s, scheduler %s, KV cache %lld blocks = %lld tokens)\n", file,
               ok ? "ok" : "sizes", m->name, e->gpu.name, eng_dtype_name(eng_config_dtype(e)),
               e->sched.name, (long long)p->blocks, (long long)p->tokens);
    else
        printf("%s: %s (%s %s, disaggregated: prefill and decode pools)\n", file,
               ok ? "ok" : "sizes", m->name, eng_dtype_name(eng_config_dtype(e)));
    printf("  model      %s: %.2f B parameters, %.2f B active per token\n",
           *m->arch ? m->arch : "?", (double)eng_model_params(m) / 1e9,
           (double)eng_model_params_active(m) / 1e9);
    if (e->groups.n > 0)
        text_groups(e, p);
    else if (!e->pd.enabled)
        text_pool(e, p);
    else
        text_pd(e, p);
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
        snprintf(desc, len, "%s", cost.label);
        cli_note(c, "%s", cost.note);
    }
    study_cost_free(&cost);
    store_close(s);
    return rc;
}

/* The KV cache plan of each pool of scn into plan. 0, or -1 with err naming the pool. */
static int plan_pools(const char *file, const scn_scenario *scn, eng_kv_plan *plan, sim_err *err)
{
    for (int k = 0; k < eng_config_pools(&scn->engine); k++) {
        eng_config pc;
        eng_config_pool(&scn->engine, k, &pc);
        if (eng_kv_plan_compute(&pc, &plan[k], err) != 0) {
            char name[48];
            if (scn->engine.pd.enabled)
                sim_err_prefix(err, "%s: %s", file,
                               pd_pool_name(&scn->engine, k, name, sizeof name));
            else if (scn->engine.groups.n > 0)
                sim_err_prefix(err, "%s: replicas[%d]", file, k);
            return -1;
        }
    }
    return 0;
}

/* The text report of a check: the notes, the deployment, and the cost model (desc; NULL when it
 * was refused). */
static void print_checked(const cli_common *c, const char *file, const scn_scenario *scn,
                          const eng_kv_plan *plan, const char *desc)
{
    cli_note(c, "%s", scn->notes);
    print_text(file, scn, plan, desc != NULL);
    if (desc && desc[0])
        printf("  cost model %s\n", desc);
    else if (desc)
        printf("  cost model profile '%s' not looked up (give --db to check it)\n", scn->profile);
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
    eng_kv_plan plan[ENG_POOLS_MAX];
    if (study_load(file, c.sets, c.nsets, &scn, &err) != 0) {
        rc = cli_fail(NULL, &err);
        scn_free(&scn);
        return rc;
    }
    if (plan_pools(file, &scn, plan, &err) != 0) {
        rc = cli_fail(NULL, &err);
        scn_free(&scn);
        return rc;
    }
    char desc[300];
    int cost = check_cost(&c, &scn, desc, sizeof desc, &err);
    if (c.json)
        print_json(file, &scn, plan, desc, cost ? err.msg : NULL);
    else
        print_checked(&c, file, &scn, plan, cost == 0 ? desc : NULL);
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
