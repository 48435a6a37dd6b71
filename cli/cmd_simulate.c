/*
 * cmd_simulate.c: one simulation from a loaded scenario: the cost model, the workload source,
 * the engine, and the run written to the store. Shared by run, sweep, capacity and bench.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cmd_common.h"
#include "roofline.h"
#include "store_profile.h"

int cmd_cost_new(const scn_scenario *scn, store *s, cmd_cost *out, sim_err *err)
{
    memset(out, 0, sizeof *out);
    const eng_config *c = &scn->engine;
    if (scn->profile[0] == '\0')
        return cal_roofline_new(&c->model, &c->gpu, c->dtype, c->tensor_parallel, &out->pred, err);
    if (!s)
        return sim_errf(err, "%s: profile '%s' needs a database (drop --no-db)", scn->path,
                        scn->profile);
    out->profile = store_profile_load(s, scn->profile, err);
    if (!out->profile)
        return sim_err_prefix(err, "%s: profile", scn->path);
    if (cal_profile_predictor_new(out->profile, &c->model, c->dtype, c->tensor_parallel, &c->gpu,
                                  &out->pred, err) != 0) {
        cmd_cost_free(out);
        return sim_err_prefix(err, "%s: profile '%s'", scn->path, scn->profile);
    }
    return 0;
}

void cmd_cost_free(cmd_cost *c)
{
    cal_predictor_free(&c->pred);
    if (c->profile)
        cal_profile_free(c->profile);
    c->profile = NULL;
}

double cmd_metric(const cmd_result *r, const char *name)
{
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->m[i].name, name) == 0)
            return r->m[i].value;
    return NAN;
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

int cmd_simulate(const scn_scenario *scn, uint64_t seed, const cmd_cost *cost,
                 const cmd_store_opts *so, cmd_result *out, sim_err *err)
{
    memset(out, 0, sizeof *out);
    snprintf(out->label, sizeof out->label, "%s", cost->pred.label);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = -1;
    char hw[256];
    store_run *w = NULL;
    if (so && so->s) {
        store_run_info info = {.name = scn->name,
                               .scenario_text = scn->text,
                               .scheduler = scn->engine.sched.name,
                               .version = LLMSIM_VERSION,
                               .profile = cost->pred.label,
                               .model = scn->engine.model.name,
                               .gpu = scn->engine.gpu.name,
                               .dtype = eng_dtype_name(scn->engine.dtype),
                               .hardware = cmd_hardware(hw, sizeof hw),
                               .seed = seed,
                               .replicas = scn->engine.replicas,
                               .tensor_parallel = scn->engine.tensor_parallel,
                               .level = so->level};
        if (!(w = store_run_begin(so->s, &info, so->buffered, err)))
            return -1;
    }
    sim_ctx *ctx = sim_new(seed);
    scn_source *src = scn_source_new(scn, seed, err);
    eng_engine *e = NULL;
    if (!src)
        goto out;
    e = eng_new(ctx, &scn->engine, &cost->pred, scn_source_ops(), src,
                w ? store_run_recorder() : NULL, w, err);
    if (!e)
        goto out;
    eng_set_slo(e, scn->slo.ttft_ms, scn->slo.tpot_ms, scn->slo.e2e_ms);
    if (eng_run(e, err) != 0)
        goto out;
    out->n = eng_summary(e, out->m);
    out->tot = *eng_get_totals(e);
    out->saturated = eng_totals_saturated(&out->tot);
    snprintf(out->m[out->n].name, sizeof out->m[out->n].name, "saturated");
    out->m[out->n++].value = out->saturated;
    out->events = sim_events_run(ctx);
    out->clipped = scn_source_clipped(src);
    out->skipped = scn_source_skipped(src);
    if (w) {
        store_run *done = w;
        w = NULL;
        if (store_run_finish(done, out->m, out->n, so->hook, so->hook_arg, &out->run_id, err) != 0)
            goto out;
    }
    rc = 0;
out:
    if (w)
        store_run_abort(w);
    eng_free(e);
    scn_source_free(src);
    sim_free(ctx);
    out->wall_s = seconds_since(&t0);
    return rc;
}
