/*
 * run.c: one simulation from a loaded scenario: the cost model, the workload source, the engine,
 * and the run written to the store. Every workflow that simulates goes through study_simulate.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roofline.h"
#include "store_profile.h"
#include "study.h"

/* How the scenario serves its model, as the cost models take it. */
static cal_serving serving_of(const scn_scenario *scn)
{
    const eng_config *c = &scn->engine;
    cal_serving sv = {.dtype = eng_config_dtype(c),
                      .kv_dtype = eng_config_kv_dtype(c),
                      .max_len = c->max_model_len,
                      .moe_skew = scn->cost.moe_skew,
                      /* the engine's decode cohort does not fill eng_shape's capped decode sum
                       * yet: cal_roofline_priced refuses windows and sparse attention whose cap
                       * can bind until this says 1 */
                      .capped_sums = 0};
    snprintf(sv.engine, sizeof sv.engine, "%s", scn->cost.engine);
    eng_config_layout(c, &sv.layout);
    return sv;
}

/* A profile measured on another GPU than the scenario's prices it only when the scenario says
 * it borrows it, naming the GPU the profile was measured on. 0, or -1 with err. */
static int check_borrow(const scn_scenario *scn, const cal_profile *p, sim_err *err)
{
    const char *gpu = scn->engine.gpu.name, *from = scn->profile_borrow;
    if (from[0] && strcmp(from, p->gpu) != 0)
        return sim_errf(err,
                        "%s: profile '%s' was measured on %s, not %s (profile: {name: %s, "
                        "borrow_from: %s} names the GPU it comes from)",
                        scn->path, p->name, p->gpu, from, p->name, p->gpu);
    if (strcmp(p->gpu, gpu) != 0 && !from[0])
        return sim_errf(err,
                        "%s: profile '%s' was measured on %s, but the scenario runs on %s; "
                        "refusing to price %s with it silently. To use it anyway, say so: "
                        "profile: {name: %s, borrow_from: %s}",
                        scn->path, p->name, p->gpu, gpu, gpu, p->name, p->gpu);
    return 0;
}

int study_cost_new(const scn_scenario *scn, store *s, study_cost *out, sim_err *err)
{
    memset(out, 0, sizeof *out);
    const eng_config *c = &scn->engine;
    cal_serving sv = serving_of(scn);
    char why[512];
    if (cal_roofline_priced(&c->model, &sv, why, sizeof why) != 0)
        return sim_errf(err, "%s: %s", scn->path, why);
    if (scn->profile[0] == '\0')
        return cal_roofline_new(&c->model, &c->gpu, &sv, &out->pred, err);
    if (!s)
        return sim_errf(err, "%s: profile '%s' needs a database (drop --no-db)", scn->path,
                        scn->profile);
    out->profile = store_profile_load(s, scn->profile, err);
    if (!out->profile)
        return sim_err_prefix(err, "%s: profile", scn->path);
    if (check_borrow(scn, out->profile, err) != 0) {
        study_cost_free(out);
        return -1;
    }
    const cal_profile *p = out->profile;
    if (cal_profile_predictor_new(out->profile, &c->model, sv.dtype, c->tensor_parallel, &c->gpu,
                                  &out->pred, err) != 0) {
        study_cost_free(out);
        return sim_err_prefix(err, "%s: profile '%s'", scn->path, scn->profile);
    }
    if (strcmp(p->gpu, c->gpu.name) != 0) {
        /* the label is stored with every run: a borrowed profile says so there */
        size_t n = strlen(out->pred.label);
        snprintf(out->pred.label + n, sizeof out->pred.label - n, ", borrowed for %s", c->gpu.name);
        snprintf(out->note, sizeof out->note,
                 "llmsim: priced with profile '%s', measured on %s and borrowed for %s "
                 "(profile: {borrow_from: %s})\n",
                 p->name, p->gpu, c->gpu.name, p->gpu);
    }
    return 0;
}

int study_cost_check(const scn_scenario *scn, sim_err *err)
{
    if (scn->profile[0] != '\0') {
        char why[512];
        cal_serving sv = serving_of(scn);
        if (cal_roofline_priced(&scn->engine.model, &sv, why, sizeof why) != 0)
            return sim_errf(err, "%s: %s", scn->path, why);
        return 0;
    }
    study_cost c;
    int rc = study_cost_new(scn, NULL, &c, err);
    study_cost_free(&c);
    return rc;
}

void study_cost_free(study_cost *c)
{
    cal_predictor_free(&c->pred);
    if (c->profile)
        cal_profile_free(c->profile);
    c->profile = NULL;
}

double study_metric(const study_result *r, const char *name)
{
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->m[i].name, name) == 0)
            return r->m[i].value;
    return NAN;
}

double study_offered_rate(const scn_scenario *scn)
{
    const scn_workload *w = &scn->workload;
    if (w->trace.present && !w->trace.lengths_only)
        return w->trace.rate;
    if (w->sessions.present)
        return 0; /* the rate starts sessions, not requests */
    switch (w->arrival.kind) {
    case SCN_ARR_POISSON:
    case SCN_ARR_GAMMA:
    case SCN_ARR_CONSTANT:
        return w->arrival.rate;
    default:
        return 0;
    }
}

/* The store's recorder and a caller's, both fed. */
typedef struct tee {
    const eng_recorder_ops *a, *b;
    void *ast, *bst;
} tee;

static void tee_request(void *st, const eng_request *rq)
{
    tee *t = st;
    if (t->a->on_request)
        t->a->on_request(t->ast, rq);
    if (t->b->on_request)
        t->b->on_request(t->bst, rq);
}

static void tee_iteration(void *st, const eng_iter_rec *it)
{
    tee *t = st;
    if (t->a->on_iteration)
        t->a->on_iteration(t->ast, it);
    if (t->b->on_iteration)
        t->b->on_iteration(t->bst, it);
}

static void tee_itl(void *st, int64_t gap_ns, int64_t count)
{
    tee *t = st;
    if (t->a->on_itl)
        t->a->on_itl(t->ast, gap_ns, count);
    if (t->b->on_itl)
        t->b->on_itl(t->bst, gap_ns, count);
}

static void tee_span(void *st, const eng_span_rec *sp)
{
    tee *t = st;
    if (t->a->on_span)
        t->a->on_span(t->ast, sp);
    if (t->b->on_span)
        t->b->on_span(t->bst, sp);
}

static const eng_recorder_ops tee_ops = {tee_request, tee_iteration, tee_itl, tee_span};

/* Starts the run's row in the store (NULL writer when not stored). */
static int begin_store(const scn_scenario *scn, uint64_t seed, const study_cost *cost,
                       const study_sink *sink, store_run **w, sim_err *err)
{
    *w = NULL;
    if (!sink || !sink->s)
        return 0;
    char hw[256];
    eng_kv_plan plan;
    if (eng_kv_plan_compute(&scn->engine, &plan, err) != 0)
        return -1;
    store_run_info info = {.name = scn->name,
                           .scenario_text = scn->text,
                           .scheduler = scn->engine.sched.name,
                           .version = study_version(),
                           .profile = cost->pred.label,
                           .model = scn->engine.model.name,
                           .gpu = scn->engine.gpu.name,
                           .dtype = eng_dtype_name(scn->engine.dtype),
                           .hardware = study_hardware(hw, sizeof hw),
                           .seed = seed,
                           .replicas = scn->engine.replicas,
                           .tensor_parallel = scn->engine.tensor_parallel,
                           .level = sink->level,
                           .offered_rate = study_offered_rate(scn),
                           .num_requests = scn->workload.num_requests,
                           .kv_blocks = plan.blocks};
    *w = store_run_begin(sink->s, &info, sink->buffered, err);
    return *w ? 0 : -1;
}

/* Copies what the finished engine and source say into out. */
static void collect(eng_engine *e, const scn_source *src, sim_ctx *ctx, study_result *out)
{
    out->n = eng_summary(e, out->m);
    out->tot = *eng_get_totals(e);
    out->kv = *eng_get_kv_plan(e);
    out->saturated = eng_totals_saturated(&out->tot);
    snprintf(out->m[out->n].name, sizeof out->m[out->n].name, "saturated");
    out->m[out->n++].value = out->saturated;
    out->events = sim_events_run(ctx);
    out->clipped = src ? scn_source_clipped(src) : 0;
    out->skipped = src ? scn_source_skipped(src) : 0;
}

int study_simulate(const scn_scenario *scn, uint64_t seed, const study_cost *cost,
                   const study_sink *sink, const study_hooks *hooks, study_result *out,
                   sim_err *err)
{
    static const study_hooks none = {0};
    if (!hooks)
        hooks = &none;
    memset(out, 0, sizeof *out);
    snprintf(out->label, sizeof out->label, "%s", cost->pred.label);
    snprintf(out->note, sizeof out->note, "%s", cost->note);
    double t0 = sim_wall_seconds();
    store_run *w;
    if (begin_store(scn, seed, cost, sink, &w, err) != 0)
        return -1;
    int rc = -1;
    sim_ctx *ctx = sim_new(seed);
    scn_source *src = NULL;
    eng_engine *e = NULL;
    if (!hooks->src && !(src = scn_source_new(scn, seed, err)))
        goto out;
    const eng_recorder_ops *rec = w ? store_run_recorder() : hooks->rec;
    void *rec_st = w ? (void *)w : hooks->rec_st;
    tee t = {store_run_recorder(), hooks->rec, w, hooks->rec_st};
    if (w && hooks->rec) {
        rec = &tee_ops;
        rec_st = &t;
    }
    eng_costs costs = {&cost->pred, NULL};
    e = src ? eng_new(ctx, &scn->engine, &costs, scn_source_ops(), src, rec, rec_st, err)
            : eng_new(ctx, &scn->engine, &costs, hooks->src, hooks->src_st, rec, rec_st, err);
    if (!e)
        goto out;
    sim_set_check_every(ctx, hooks->check_every);
    eng_set_slo(e, scn->slo.ttft_ms, scn->slo.tpot_ms, scn->slo.e2e_ms);
    if (eng_run(e, err) != 0)
        goto out;
    collect(e, src, ctx, out);
    if (w) {
        store_run *done = w;
        w = NULL;
        if (store_run_finish(done, out->m, out->n, sink->hook, sink->hook_arg, &out->run_id, err) !=
            0)
            goto out;
    }
    rc = 0;
out:
    if (w)
        store_run_abort(w);
    eng_free(e);
    scn_source_free(src);
    sim_free(ctx);
    out->wall_s = sim_wall_seconds() - t0;
    return rc;
}

int study_run(const scn_scenario *scn, uint64_t seed, store *db, const study_sink *sink,
              const study_hooks *hooks, study_result *out, sim_err *err)
{
    study_cost cost;
    int rc = study_cost_new(scn, db, &cost, err);
    if (rc == 0)
        rc = study_simulate(scn, seed, &cost, sink, hooks, out, err);
    study_cost_free(&cost);
    return rc;
}
