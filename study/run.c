/*
 * run.c: one simulation from a loaded scenario: the cost model, the workload source, the engine,
 * and the run written to the store. Every workflow that simulates goes through study_simulate.
 *
 * A run bound for a database (not buffered) is staged: while it simulates, its rows stream to
 * an unlinked temporary file (the spool format of store_run_begin_spool), and the finished run
 * is written in one transaction (store_run_replay). The database's write lock is held for that
 * writing only, never for the simulation, so runs and sweeps sharing a database wait for each
 * other's writes, not for each other's simulations.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roofline.h"
#include "store_profile.h"
#include "study.h"
#include "study_pool.h"

/* How the scenario serves its model on the replicas configured as c (the deployment, or one of
 * its pools), as the cost models take it. */
static cal_serving serving_of(const scn_scenario *scn, const eng_config *c)
{
    cal_serving sv = {.dtype = eng_config_dtype(c),
                      .kv_dtype = eng_config_kv_dtype(c),
                      .max_len = c->max_model_len,
                      /* the engine fills eng_shape's capped sums for every pass it prices (its
                       * decode cohort, prefill chunks, pads and the drafter's passes), so windows
                       * and sparse attention whose cap binds are priced */
                      .capped_sums = ENG_SHAPE_CAPPED_SUMS};
    snprintf(sv.engine, sizeof sv.engine, "%s", scn->cost.engine);
    sv.eager_launch_ns = scn->cost.eager_launch_ns;
    memcpy(sv.act_quant, scn->cost.act_quant, sizeof sv.act_quant);
    eng_config_layout(c, &sv.layout);
    return sv;
}

/* A profile measured on another GPU than the scenario's prices it only when the scenario says
 * it borrows it, naming the GPU the profile was measured on. 0, or -1 with err. */
static int check_borrow(const scn_scenario *scn, const char *gpu, const cal_profile *p,
                        sim_err *err)
{
    const char *from = scn->profile_borrow;
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

/* The drafter's cost model, built as the target's is (the roofline, or the same profile) on the
 * drafter's description (eng_spec_drafter: a draft model, an EAGLE head, MTP layers), on the
 * target's GPUs and layout. 0 when there is no drafter; -1 with err. */
static int draft_cost(const scn_scenario *scn, study_cost *out, sim_err *err)
{
    const eng_config *c = &scn->engine;
    const eng_spec *sp = &c->spec;
    if (sp->method == ENG_SPEC_NONE || !sp->has_draft)
        return 0;
    cal_serving sv = serving_of(scn, c);
    char why[512];
    if (cal_roofline_priced(&sp->draft, &sv, why, sizeof why) != 0)
        return sim_errf(err, "%s: speculative drafter: %s", scn->path, why);
    int rc = out->profile ? cal_profile_predictor_new(out->profile, &sp->draft, sv.dtype,
                                                      c->tensor_parallel, &c->gpu, &out->draft, err)
                          : cal_roofline_new(&sp->draft, &c->gpu, &sv, &out->draft, err);
    return rc ? sim_err_prefix(err, "%s: speculative drafter %s", scn->path, sp->draft.name) : 0;
}

/* Says in the predictor's label (stored with every run) and in the notes that profile p,
 * measured on another GPU, prices `gpu`. */
static void note_borrowed(const cal_profile *p, const char *gpu, const char *pool,
                          eng_predictor *pred, study_cost *out)
{
    size_t n = strlen(pred->label);
    snprintf(pred->label + n, sizeof pred->label - n, ", borrowed for %s", gpu);
    n = strlen(out->note);
    snprintf(out->note + n, sizeof out->note - n,
             "llmsim: %spriced with profile '%s', measured on %s and borrowed for %s "
             "(profile: {borrow_from: %s})\n",
             pool, p->name, p->gpu, gpu, p->gpu);
}

/* The built-in roofline of the replicas configured as c into *pred. */
static int roofline_cost(const scn_scenario *scn, const eng_config *c, const char *pool,
                         const cal_serving *sv, eng_predictor *pred, sim_err *err)
{
    if (cal_roofline_new(&c->model, &c->gpu, sv, pred, err) == 0)
        return 0;
    return *pool ? sim_err_prefix(err, "%s: %.*s", scn->path, (int)strlen(pool) - 2, pool) : -1;
}

/* A profile prices c's replicas only without an expert placement's imbalance (which it has
 * not measured) and with a database to load it from. 0, or -1 with err. */
static int check_profiled(const scn_scenario *scn, const eng_config *c, const char *pool,
                          const store *s, sim_err *err)
{
    if (c->moe.skew > 0 || c->moe.placement == ENG_MOE_EPLB)
        return sim_errf(err,
                        "%s: %smoe: profile '%s' prices the experts as measured, without the "
                        "expert placement's imbalance (the built-in roofline prices it); drop "
                        "moe: or the profile",
                        scn->path, pool, scn->profile);
    if (!s)
        return sim_errf(err, "%s: profile '%s' needs a database (drop --no-db)", scn->path,
                        scn->profile);
    return 0;
}

/* The cost model of the replicas configured as c (a pool, or the whole deployment) into
 * *pred; a named profile is loaded into *profile once and shared. "pool: " prefixes messages
 * about one pool. */
static int cost_of(const scn_scenario *scn, const eng_config *c, const char *pool, store *s,
                   study_cost *out, eng_predictor *pred, sim_err *err)
{
    cal_serving sv = serving_of(scn, c);
    char why[512];
    if (cal_roofline_priced(&c->model, &sv, why, sizeof why) != 0)
        return sim_errf(err, "%s: %s%s", scn->path, pool, why);
    if (scn->profile[0] == '\0')
        return roofline_cost(scn, c, pool, &sv, pred, err);
    if (check_profiled(scn, c, pool, s, err) != 0)
        return -1;
    if (!out->profile && !(out->profile = store_profile_load(s, scn->profile, err)))
        return sim_err_prefix(err, "%s: profile", scn->path);
    const cal_profile *p = out->profile;
    if (check_borrow(scn, c->gpu.name, p, err) != 0)
        return -1;
    if (cal_profile_predictor_new(out->profile, &c->model, sv.dtype, c->tensor_parallel, &c->gpu,
                                  pred, err) != 0)
        return sim_err_prefix(err, "%s: %sprofile '%s'", scn->path, pool, scn->profile);
    if (strcmp(p->gpu, c->gpu.name) != 0)
        note_borrowed(p, c->gpu.name, pool, pred, out);
    return 0;
}

/* Pool k's cost model in c: the first pool's is pred, the second's decode_pred. */
static eng_predictor *pool_pred(study_cost *c, int k)
{
    return k == 0 ? &c->pred : k == 1 ? &c->decode_pred : &c->more[k - 2];
}

/* How messages and labels name pool k of c: "replicas[1]: " (a mixed pool's group), "prefill
 * pool: ", "decode.replicas[0]: " (a disaggregated pool or its group). */
static void pool_prefix(const eng_config *c, int k, char *buf, size_t len)
{
    int g = eng_config_group(c, k), d = c->pd.enabled ? eng_config_decode_pool(c) : 0;
    const char *role = !c->pd.enabled ? "" : k >= d ? "decode" : "prefill";
    if (g >= 0)
        snprintf(buf, len, "%s%sreplicas[%d]: ", role, *role ? "." : "",
                 k >= d && *role ? g - c->pd.ngroups[ENG_POOL_PREFILL] : g);
    else
        snprintf(buf, len, "%s pool: ", role);
}

/* Pools (a mixed pool's groups, or a disaggregated deployment's prefill and decode pools and
 * their groups): each pool's cost model, for its own GPU and layout; the label names each,
 * "; "-separated, a disaggregated one's pools as "prefill ...; decode ...". */
static int groups_cost(const scn_scenario *scn, store *s, study_cost *out, sim_err *err)
{
    const eng_config *c = &scn->engine;
    size_t off = 0;
    int d = c->pd.enabled ? eng_config_decode_pool(c) : 0;
    for (int k = 0; k < eng_config_pools(c); k++) {
        eng_config pc;
        char pre[48];
        eng_config_pool(c, k, &pc);
        pool_prefix(c, k, pre, sizeof pre);
        if (cost_of(scn, &pc, pre, s, out, pool_pred(out, k), err) != 0)
            return -1;
        const char *role = !c->pd.enabled ? "" : k == 0 ? "prefill " : k == d ? "decode " : "";
        if (off < sizeof out->label)
            off += (size_t)snprintf(out->label + off, sizeof out->label - off, "%s%s%s",
                                    k ? "; " : "", role, pool_pred(out, k)->label);
    }
    return 0;
}

/* One pool of replicas: its cost model and its drafter's; the label is its model's. */
static int single_cost(const scn_scenario *scn, store *s, study_cost *out, sim_err *err)
{
    if (cost_of(scn, &scn->engine, "", s, out, &out->pred, err) != 0 ||
        draft_cost(scn, out, err) != 0)
        return -1;
    snprintf(out->label, sizeof out->label, "%s", out->pred.label);
    return 0;
}

int study_cost_new(const scn_scenario *scn, store *s, study_cost *out, sim_err *err)
{
    memset(out, 0, sizeof *out);
    const eng_config *c = &scn->engine;
    int rc = c->groups.n > 0 || c->pd.enabled ? groups_cost(scn, s, out, err)
                                              : single_cost(scn, s, out, err);
    if (rc != 0)
        study_cost_free(out);
    return rc;
}

/* Whether the cost model can price every pool's model and the drafter (a profile is checked
 * when it is loaded). 0, or -1 with err. */
static int check_priced(const scn_scenario *scn, sim_err *err)
{
    char why[512];
    for (int k = 0; k < eng_config_pools(&scn->engine); k++) {
        eng_config pc;
        eng_config_pool(&scn->engine, k, &pc);
        cal_serving sv = serving_of(scn, &pc);
        if (cal_roofline_priced(&pc.model, &sv, why, sizeof why) != 0)
            return sim_errf(err, "%s: %s", scn->path, why);
    }
    const eng_spec *sp = &scn->engine.spec;
    cal_serving sv = serving_of(scn, &scn->engine);
    if (sp->method != ENG_SPEC_NONE && sp->has_draft &&
        cal_roofline_priced(&sp->draft, &sv, why, sizeof why) != 0)
        return sim_errf(err, "%s: speculative drafter: %s", scn->path, why);
    return 0;
}

int study_cost_check(const scn_scenario *scn, sim_err *err)
{
    if (scn->profile[0] != '\0')
        return check_priced(scn, err);
    study_cost c;
    int rc = study_cost_new(scn, NULL, &c, err);
    study_cost_free(&c);
    return rc;
}

void study_cost_free(study_cost *c)
{
    cal_predictor_free(&c->pred);
    cal_predictor_free(&c->decode_pred);
    cal_predictor_free(&c->draft);
    for (int k = 0; k < ENG_POOLS_MAX - 2; k++)
        cal_predictor_free(&c->more[k]);
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
    case SCN_ARR_BURST:
    case SCN_ARR_CLOSED:
    case SCN_ARR_SCHEDULE:
        return 0; /* no single nominal rate */
    default:
        SIM_CHECK(NULL, !"an arrival process without a nominal rate rule");
        return 0;
    }
}

/* The store's recorder and a caller's, both fed. */
typedef struct tee {
    const eng_recorder_ops *a, *b;
    void *ast, *bst;
} tee;

/* Calls hook `fn` of each side that has it, with the same arguments (st: the tee). */
#define TEE(fn, ...)                                                                               \
    do {                                                                                           \
        const tee *t = st;                                                                         \
        if (t->a->fn)                                                                              \
            t->a->fn(t->ast, __VA_ARGS__);                                                         \
        if (t->b->fn)                                                                              \
            t->b->fn(t->bst, __VA_ARGS__);                                                         \
    } while (0)

static void tee_request(void *st, const eng_request *rq)
{
    TEE(on_request, rq);
}

static void tee_iteration(void *st, const eng_iter_rec *it)
{
    TEE(on_iteration, it);
}

static void tee_itl(void *st, int64_t gap_ns, int64_t count)
{
    TEE(on_itl, gap_ns, count);
}

static void tee_span(void *st, const eng_span_rec *sp)
{
    TEE(on_span, sp);
}

static const eng_recorder_ops tee_ops = {tee_request, tee_iteration, tee_itl, tee_span};

/* The texts a run's row points to: the caller keeps them until the run is finished (a buffered
 * writer reads them then). */
typedef struct run_texts {
    char hw[256], gpu[80], sched[80];
} run_texts;

/* Whether pc[k]'s GPU is an earlier pool's. */
static int gpu_named(const eng_config *pc, int k)
{
    for (int j = 0; j < k; j++)
        if (!strcmp(pc[j].gpu.name, pc[k].gpu.name))
            return 1;
    return 0;
}

/* The run's writer, as the sink asks: into its spool, a staging file (*stage) or the buffered
 * store. 0, or -1 with err. */
static int begin_writer(const study_sink *sink, const store_run_info *info, store_run **w,
                        FILE **stage, sim_err *err)
{
    if (sink->spool)
        *w = store_run_begin_spool(sink->spool, info);
    else if (!sink->buffered) {
        if (!(*stage = study_pool_tmpfile(err)))
            return sim_err_prefix(err, "staging the run's rows");
        *w = store_run_begin_spool(*stage, info);
    } else
        *w = store_run_begin(sink->s, info, sink->buffered, err);
    return *w ? 0 : -1;
}

/* The pools of c into pc and the KV cache plan the run stores: a disaggregated run's is the
 * (first) decode pool's (the prefill pool's tensor_parallel is stored), a mixed pool's its first
 * group's. 0, or -1 with err. */
static int pools_of(const eng_config *c, eng_config *pc, eng_kv_plan *plan, sim_err *err)
{
    int np = eng_config_pools(c);
    for (int k = 0; k < np; k++)
        eng_config_pool(c, k, &pc[k]);
    int k = c->pd.enabled ? eng_config_decode_pool(c) : 0;
    return eng_kv_plan_compute(&pc[k], plan, err) != 0 ? -1 : 0;
}

/* The GPU and policy names of the run's pools (np of pc): the first pool's, with every other GPU
 * named once ("a+b"), and "a+b" where the two policies of a disaggregated run differ. */
static void pool_names(const eng_config *pc, int np, run_texts *text)
{
    snprintf(text->gpu, sizeof text->gpu, "%s", pc[0].gpu.name);
    snprintf(text->sched, sizeof text->sched, "%s", pc[0].sched.name);
    for (int k = 1; k < np; k++) /* every pool's or group's GPU, each named once */
        if (!gpu_named(pc, k)) {
            size_t n = strlen(text->gpu);
            snprintf(text->gpu + n, sizeof text->gpu - n, "+%s", pc[k].gpu.name);
        }
    int d = pc[0].pd.enabled ? eng_config_decode_pool(&pc[0]) : 0;
    if (d > 0 && strcmp(pc[0].sched.name, pc[d].sched.name) != 0)
        snprintf(text->sched, sizeof text->sched, "%s+%s", pc[0].sched.name, pc[d].sched.name);
}

/* Replicas of the np pools pc. */
static int32_t pool_replicas(const eng_config *pc, int np)
{
    int32_t n = 0;
    for (int k = 0; k < np; k++)
        n += pc[k].replicas;
    return n;
}

/* The run's row: what it ran (scenario, model, pools' GPUs and policies, seed, workload) and where
 * (version, cost model, hardware), stored at level. */
static store_run_info run_info(const scn_scenario *scn, uint64_t seed, const study_cost *cost,
                               store_level level, run_texts *text, const eng_config *pc, int np,
                               int64_t kv_blocks)
{
    const eng_config *c = &scn->engine;
    store_run_info info = {.name = scn->name,
                           .scenario_text = scn->text,
                           .scheduler = text->sched,
                           .version = study_version(),
                           .profile = cost->label,
                           .model = c->model.name,
                           .gpu = text->gpu,
                           .dtype = eng_dtype_name(c->dtype),
                           .hardware = study_hardware(text->hw, sizeof text->hw),
                           .seed = seed,
                           .replicas = c->pd.enabled ? pool_replicas(pc, np) : c->replicas,
                           .tensor_parallel = pc[0].tensor_parallel,
                           .level = level,
                           .offered_rate = study_offered_rate(scn),
                           .num_requests = scn->workload.num_requests,
                           .kv_blocks = kv_blocks};
    return info;
}

/* Starts the run's row in the spool, the staging file (*stage, for a database not buffered)
 * or the buffered store (NULL writer when not stored). */
static int begin_store(const scn_scenario *scn, uint64_t seed, const study_cost *cost,
                       const study_sink *sink, run_texts *text, store_run **w, FILE **stage,
                       sim_err *err)
{
    *w = NULL;
    *stage = NULL;
    if (!sink || (!sink->s && !sink->spool))
        return 0;
    eng_kv_plan plan;
    const eng_config *c = &scn->engine;
    eng_config pc[ENG_POOLS_MAX];
    int np = eng_config_pools(c);
    if (pools_of(c, pc, &plan, err) != 0)
        return -1;
    pool_names(pc, np, text);
    store_run_info info = run_info(scn, seed, cost, sink->level, text, pc, np, plan.blocks);
    return begin_writer(sink, &info, w, stage, err);
}

const char *study_reject_metric(eng_reject_reason why)
{
    static const char *const names[ENG_REJECT_REASON_COUNT] = {
        "", "rejected_context", "rejected_kv", "rejected_batch", "rejected_shed", "rejected_fault"};
    return (unsigned)why < ENG_REJECT_REASON_COUNT && names[why] ? names[why] : "rejected_other";
}

/* The staged rows into the sink's database in one transaction, with its hook; the run's id into
 * out. 0, or -1 with err. */
static int replay_stage(FILE *stage, const study_sink *sink, study_result *out, sim_err *err)
{
    off_t len = ftello(stage);
    if (len < 0 || fseeko(stage, 0, SEEK_SET) != 0)
        return sim_errf(err, "staging the run's rows: cannot read them back");
    store_run_summary *sum = sim_xmalloc(sizeof *sum);
    int rc = store_run_replay(sink->s, stage, (int64_t)len, sink->hook, sink->hook_arg, sum, err);
    out->run_id = sum->run_id;
    free(sum);
    return rc == 0 ? 0 : -1;
}

/* Finishes w: into the spool or buffered store as begun, or (staged) into the staging file and
 * from there into the database in one transaction with the sink's hook. 0, or -1 with err
 * (nothing committed). */
static int finish_store(store_run *w, FILE *stage, const study_sink *sink, study_result *out,
                        sim_err *err)
{
    if (!stage)
        return store_run_finish(w, out->m, out->n, sink->hook, sink->hook_arg, &out->run_id, err) ==
                       0
                   ? 0
                   : -1;
    if (store_run_finish(w, out->m, out->n, NULL, NULL, NULL, err) != 0)
        return sim_err_prefix(err, "staging the run's rows");
    return replay_stage(stage, sink, out, err);
}

/* Why requests were turned away, a metric per reason, for tables and reports read from the
 * store (only the reasons that occurred: a run without rejections has none of these). */
static void add_rejections(study_result *out)
{
    for (int k = 1; k < ENG_REJECT_REASON_COUNT && out->n < ENG_MAX_METRICS; k++)
        if (out->tot.rejected_by[k]) {
            snprintf(out->m[out->n].name, sizeof out->m[out->n].name, "%s",
                     study_reject_metric((eng_reject_reason)k));
            out->m[out->n++].value = (double)out->tot.rejected_by[k];
        }
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
    add_rejections(out);
    out->events = sim_events_run(ctx);
    out->clipped = src ? scn_source_clipped(src) : 0;
    out->skipped = src ? scn_source_skipped(src) : 0;
}

/* The engine of scn priced by cost, fed by src (else the hooks' source), recording to the store's
 * writer t->ast (when stored) and the hooks' recorder (both through t when there are both). NULL
 * with err. */
static eng_engine *new_engine(sim_ctx *ctx, const scn_scenario *scn, const study_cost *cost,
                              scn_source *src, const study_hooks *hooks, tee *t, sim_err *err)
{
    const eng_recorder_ops *rec = t->ast ? t->a : hooks->rec;
    void *rec_st = t->ast ? t->ast : hooks->rec_st;
    if (t->ast && hooks->rec) {
        rec = &tee_ops;
        rec_st = t;
    }
    const eng_predictor *draft = cost->draft.ops ? &cost->draft : NULL;
    eng_costs costs[ENG_POOLS_MAX] = {{&cost->pred, draft}, {&cost->decode_pred, NULL}};
    for (int k = 2; k < ENG_POOLS_MAX; k++)
        costs[k].target = &cost->more[k - 2];
    return src ? eng_new(ctx, &scn->engine, costs, scn_source_ops(), src, rec, rec_st, err)
               : eng_new(ctx, &scn->engine, costs, hooks->src, hooks->src_st, rec, rec_st, err);
}

/* Builds the engine (*e, freed by the caller), runs it to its end and collects what it says into
 * out. 0, or -1 with err. */
static int run_engine(sim_ctx *ctx, const scn_scenario *scn, const study_cost *cost,
                      scn_source *src, const study_hooks *hooks, tee *t, eng_engine **e,
                      study_result *out, sim_err *err)
{
    if (!(*e = new_engine(ctx, scn, cost, src, hooks, t, err)))
        return -1;
    sim_set_check_every(ctx, hooks->check_every);
    eng_set_slo(*e, scn->slo.ttft_ms, scn->slo.tpot_ms, scn->slo.e2e_ms);
    if (eng_run(*e, err) != 0)
        return -1;
    collect(*e, src, ctx, out);
    return 0;
}

/* Stores the fleet's timeline with the run, then finishes its writer w. 0, or -1 with err. */
static int finish_run(store_run *w, eng_engine *e, FILE *stage, const study_sink *sink,
                      study_result *out, sim_err *err)
{
    eng_fleet_window *win;
    eng_fleet_pools pools;
    int64_t nwin = eng_fleet_timeline(e, &win, &pools);
    store_run_fleet(w, win, nwin, &pools);
    free(win);
    return finish_store(w, stage, sink, out, err);
}

int study_simulate(const scn_scenario *scn, uint64_t seed, const study_cost *cost,
                   const study_sink *sink, const study_hooks *hooks, study_result *out,
                   sim_err *err)
{
    static const study_hooks none = {0};
    if (!hooks)
        hooks = &none;
    memset(out, 0, sizeof *out);
    snprintf(out->label, sizeof out->label, "%s", cost->label);
    snprintf(out->note, sizeof out->note, "%s", cost->note);
    double t0 = sim_wall_seconds();
    store_run *w;
    FILE *stage;
    run_texts text;
    if (begin_store(scn, seed, cost, sink, &text, &w, &stage, err) != 0)
        return -1;
    int rc = -1;
    sim_ctx *ctx = sim_new(seed);
    scn_source *src = NULL;
    eng_engine *e = NULL;
    if (!hooks->src && !(src = scn_source_new_cached(scn, seed, hooks->cache, err)))
        goto out;
    tee t = {store_run_recorder(), hooks->rec, w, hooks->rec_st};
    if (run_engine(ctx, scn, cost, src, hooks, &t, &e, out, err) != 0)
        goto out;
    if (w) {
        store_run *done = w;
        w = NULL;
        if (finish_run(done, e, stage, sink, out, err) != 0)
            goto out;
    }
    rc = 0;
out:
    if (w)
        store_run_abort(w);
    if (stage)
        fclose(stage);
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
