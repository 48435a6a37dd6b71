/*
 * probe.c: one probe of a capacity search: the choice's overrides and a load (one request at a
 * time, or a rate over some replicas), run seed after seed until each SLO's interval is clear
 * of its limit, and judged: saturation, rejections beyond the allowance, then the SLOs.
 *
 * MODEL: the interval of a percentile is the batch-means interval of simulation output
 * analysis (Law & Kelton, "Simulation Modeling and Analysis", 5th ed., section 9.5.3): the
 * requests of a run are cut into BATCHES consecutive groups by arrival, the percentile is taken
 * in each, and the Student-t interval of those estimates (pooled over the seeds run) gives the
 * half-width placed around the runs' own percentile. Batches of consecutive arrivals keep the
 * queue's correlation inside a batch. Approximation: a batch's percentile has a small-sample
 * bias the whole run's has not; the width, not the centre, is taken from the batches.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_capacity.h"
#include "store_query.h"
#include "study_capacity.h"

#define BATCHES 10

/* ---- the batches of one run: a recorder beside the store's ---- */

enum { V_TTFT, V_TPOT, V_E2EL, NV };

typedef struct batcher {
    double *v[NV]; /* per request id (NAN: rejected, or TPOT of a one-token output) */
    size_t n, cap; /* ids seen (the highest + 1), allocated */
    sim_samples itl[BATCHES];
    int64_t finished, expect; /* requests done so far; the run's (0: unknown, no ITL batches) */
} batcher;

/* Room for request id in each value array, the new entries NAN. */
static void batcher_reserve(batcher *b, size_t id)
{
    size_t cap = b->cap ? b->cap : 1024;
    while (cap <= id)
        cap *= 2;
    for (int k = 0; k < NV; k++) {
        b->v[k] = sim_xrealloc(b->v[k], cap * sizeof(double));
        for (size_t i = b->cap; i < cap; i++)
            b->v[k][i] = NAN;
    }
    b->cap = cap;
}

static void batcher_grow(batcher *b, size_t id)
{
    if (id >= b->cap)
        batcher_reserve(b, id);
    if (id >= b->n)
        b->n = id + 1;
}

static void on_request(void *st, const eng_request *rq)
{
    batcher *b = st;
    b->finished++;
    if (rq->id < 0)
        return;
    batcher_grow(b, (size_t)rq->id);
    if (rq->status == ENG_RQ_REJECTED)
        return;
    b->v[V_TTFT][rq->id] = (double)(rq->t_first_token - rq->t_arrival) / 1e6;
    b->v[V_E2EL][rq->id] = (double)(rq->t_finish - rq->t_arrival) / 1e6;
    if (rq->output > 1)
        b->v[V_TPOT][rq->id] = (double)(rq->t_finish - rq->t_first_token) / 1e6 / (rq->output - 1);
}

static void on_itl(void *st, int64_t gap_ns, int64_t count)
{
    batcher *b = st;
    if (b->expect <= 0)
        return;
    int64_t k = b->finished * BATCHES / b->expect;
    sim_samples_add_n(&b->itl[k < BATCHES ? k : BATCHES - 1], (double)gap_ns / 1e6, (size_t)count);
}

static const eng_recorder_ops batcher_ops = {on_request, NULL, on_itl, NULL};

static void batcher_init(batcher *b, int64_t expect)
{
    memset(b, 0, sizeof *b);
    b->expect = expect;
    for (int k = 0; k < BATCHES; k++)
        sim_samples_init(&b->itl[k]);
}

static void batcher_free(batcher *b)
{
    for (int k = 0; k < NV; k++)
        free(b->v[k]);
    for (int k = 0; k < BATCHES; k++)
        sim_samples_free(&b->itl[k]);
}

static double stat_of(sim_samples *s, double pct)
{
    if (sim_samples_count(s) == 0)
        return NAN;
    return pct < 0 ? sim_samples_mean(s) : sim_samples_percentile(s, pct);
}

/* Statistic pct (-1: the mean) of latency `which` over the requests of batch k (by id, one
 * of BATCHES); NAN when none has one. */
static double requests_value(const batcher *b, int which, int k, double pct)
{
    sim_samples s;
    sim_samples_init(&s);
    size_t lo = b->n * (size_t)k / BATCHES, hi = b->n * (size_t)(k + 1) / BATCHES;
    for (size_t i = lo; i < hi; i++)
        if (!isnan(b->v[which][i]))
            sim_samples_add(&s, b->v[which][i]);
    double v = stat_of(&s, pct);
    sim_samples_free(&s);
    return v;
}

/* SLO slo's estimate in batch k of b (NAN when the batch has no value). */
static double batch_value(batcher *b, const study_slo *slo, int k)
{
    if (strcmp(slo->what, "itl") == 0)
        return b->expect > 0 ? stat_of(&b->itl[k], slo->pct) : NAN;
    int which = strcmp(slo->what, "ttft") == 0   ? V_TTFT
                : strcmp(slo->what, "tpot") == 0 ? V_TPOT
                                                 : V_E2EL;
    return requests_value(b, which, k, slo->pct);
}

/* ---- a probe: its overrides, its runs, its judgement ---- */

/* Whether a pool of e mixes groups of replicas (replicas: [...]). */
static int mixed_pool(const eng_config *e)
{
    return e->groups.n > 0 || e->pd.ngroups[0] > 0 || e->pd.ngroups[1] > 0;
}

static int load(const study_capacity *c, const char *const *sets, int n, scn_scenario *scn,
                sim_err *err)
{
    int rc = c->text ? study_load_text(c->file, c->text, sets, n, scn, err)
                     : study_load(c->file, sets, n, scn, err);
    /* a probe's replicas=N would turn the groups into N replicas of the deployment's GPU */
    if (rc == 0 && mixed_pool(&scn->engine)) {
        scn_free(scn);
        memset(scn, 0, sizeof *scn); /* the caller may free it again */
        return sim_errf(err,
                        "%s: a mixed pool (replicas: [...]) is not sized by capacity or "
                        "recommend yet: give a count of one kind of replica",
                        c->file);
    }
    return rc;
}

/* The texts a probe's overrides point to. */
typedef struct probe_sets {
    const char *v[STUDY_MAX_SETS + 2 * STUDY_CHOICE_SETS + 8];
    int n;
    char buf[8][96];
    int nbuf;
} probe_sets;

static void put(probe_sets *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(probe_sets *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->buf[p->nbuf], sizeof p->buf[0], fmt, ap);
    va_end(ap);
    p->v[p->n++] = p->buf[p->nbuf++];
}

/* The user's overrides, the fitting pipeline's (if any), then choice ci's. */
static void base_sets(const study_capacity *c, int ci, probe_sets *p)
{
    p->n = p->nbuf = 0;
    for (int i = 0; i < c->nsets && i < STUDY_MAX_SETS; i++)
        p->v[p->n++] = c->sets[i];
    for (int k = 0; k < c->fit.nsets; k++) /* a pipeline the model fits (study_capacity_fit) */
        p->v[p->n++] = c->fit.set[k];
    for (int k = 0; ci >= 0 && k < c->choice[ci].nsets; k++)
        p->v[p->n++] = c->choice[ci].set[k];
}

int study_capacity_load_choice(const study_capacity *c, int i, scn_scenario *scn, sim_err *err)
{
    probe_sets p;
    base_sets(c, i, &p);
    return load(c, p.v, p.n, scn, err);
}

int study_capacity_load(const study_capacity *c, scn_scenario *scn, sim_err *err)
{
    return study_capacity_load_choice(c, -1, scn, err);
}

/* The load's arrival overrides: one client at a time (unloaded), a timed trace replayed at rate,
 * or the scenario's process (else Poisson) at rate. */
static void put_arrival(probe_sets *p, study_load_kind kind, int timed_trace, scn_arrival_kind ak,
                        double rate)
{
    if (kind == STUDY_LOAD_UNLOADED) {
        /* MODEL: unloaded = no request ever waits for another: one client, no think time */
        if (timed_trace)
            put(p, "workload.trace.lengths_only=true");
        put(p, "workload.arrival={process: closed, concurrency: 1, think_time_ms: 0}");
    } else if (timed_trace) {
        put(p, "workload.trace.rate=%.6g", rate);
    } else if (ak != SCN_ARR_POISSON && ak != SCN_ARR_GAMMA && ak != SCN_ARR_CONSTANT) {
        put(p, "workload.arrival={process: poisson, rate: %.6g}", rate);
    } else {
        put(p, "workload.arrival.rate=%.6g", rate);
    }
}

/* A disaggregated load's pools: pool[0] prefill and pool[1] decode replicas, else `replicas`
 * copies of the scenario's p0 + d0. Returns the scale of the load against the scenario's. */
static double put_pools(probe_sets *p, int replicas, const int *pool, int p0, int d0)
{
    int np = pool ? pool[0] : p0 * replicas, nd = pool ? pool[1] : d0 * replicas;
    put(p, "prefill.replicas=%d", np);
    put(p, "decode.replicas=%d", nd);
    return (double)(np + nd) / (p0 + d0);
}

/* The load's overrides after the base ones; *nreq gets the requests the run will have. */
static int load_sets(const study_capacity *c, int ci, study_load_kind kind, double rate,
                     int replicas, const int *pool, probe_sets *p, int64_t *nreq, sim_err *err)
{
    scn_scenario scn;
    base_sets(c, ci, p);
    if (load(c, p->v, p->n, &scn, err) != 0) {
        scn_free(&scn);
        return -1;
    }
    const scn_workload *w = &scn.workload;
    int timed_trace = w->trace.present && !w->trace.lengths_only, pd = scn.engine.pd.enabled;
    int p0 = scn.engine.pd.pool[ENG_POOL_PREFILL].replicas;
    int d0 = scn.engine.pd.pool[ENG_POOL_DECODE].replicas;
    scn_arrival_kind ak = w->arrival.kind;
    *nreq = w->num_requests;
    scn_free(&scn);
    put_arrival(p, kind, timed_trace, ak, rate);
    if (kind == STUDY_LOAD_UNLOADED) {
        replicas = 1;
        pool = NULL;
    }
    double scale = pd ? put_pools(p, replicas, pool, p0, d0) : replicas;
    if (!pd)
        put(p, "replicas=%d", replicas);
    if (*nreq > 0 && scale > 1) {
        *nreq = (int64_t)ceil((double)*nreq * scale);
        put(p, "workload.num_requests=%lld", (long long)*nreq);
    }
    return 0;
}

/* What the seeds run so far add up to. */
typedef struct tally {
    double sum[STUDY_MAX_SLO], sq[STUDY_MAX_SLO];   /* of the runs' values */
    double bsum[STUDY_MAX_SLO], bsq[STUDY_MAX_SLO]; /* of the batch estimates */
    int nb[STUDY_MAX_SLO];
    double thr, otps, tpot;
} tally;

/* Adds a seed's counts to the trial: saturation, arrivals, completions and rejections. */
static void add_counts(const study_result *res, study_trial *t)
{
    t->saturated |= res->saturated;
    t->arrived += res->tot.arrived;
    t->completed += res->tot.finished;
    t->rejected += res->tot.rejected;
    for (int k = 0; k < ENG_REJECT_REASON_COUNT; k++)
        t->rejected_by[k] += res->tot.rejected_by[k];
    if (t->seeds == 0)
        t->run_id = res->run_id;
}

/* Adds a seed's value of SLO i, and its batches' estimates, to the trial's mean and interval. */
static void add_slo(const study_capacity *c, const study_result *res, batcher *b, tally *ty,
                    study_trial *t, int i)
{
    double x = study_metric(res, c->slo[i].metric);
    ty->sum[i] += x;
    ty->sq[i] += x * x;
    t->value[i] = ty->sum[i] / t->seeds;
    for (int k = 0; k < BATCHES; k++) {
        double v = batch_value(b, &c->slo[i], k);
        if (isnan(v))
            continue;
        ty->bsum[i] += v;
        ty->bsq[i] += v * v;
        ty->nb[i]++;
    }
    /* the wider of the batches' interval and the seeds' (a short run near saturation varies
     * from seed to seed more than its batches say) */
    double hb = sim_t_interval(ty->bsum[i], ty->bsq[i], ty->nb[i], 0.95).half;
    double hs = sim_t_interval(ty->sum[i], ty->sq[i], t->seeds, 0.95).half;
    t->half[i] = isnan(hs) || hb > hs ? hb : hs;
}

static void add_run(const study_capacity *c, const study_result *res, batcher *b, tally *ty,
                    study_trial *t)
{
    add_counts(res, t);
    t->seeds++;
    ty->thr += study_metric(res, "request_throughput");
    ty->otps += study_metric(res, "output_throughput");
    ty->tpot += study_metric(res, "mean_tpot_ms");
    t->throughput = ty->thr / t->seeds;
    t->output_tps = ty->otps / t->seeds;
    t->mean_tpot = ty->tpot / t->seeds;
    for (int i = 0; i < c->nslo; i++)
        add_slo(c, res, b, ty, t, i);
}

/* MODEL: a probe meets an SLO when its interval lies below the limit (met with 95%
 * confidence) and misses it when the interval lies above; while an interval holds the limit
 * the next seed runs, and one still holding it after the last seed is a miss, marked
 * uncertain: a planner's "meets" is one the noise cannot overturn. With no interval at all (a
 * single seed of a run too short for batches) the value alone decides, marked uncertain.
 * 1: decided (t->ok set), 0: another seed would help. */
static int decide(const study_capacity *c, study_trial *t, int last)
{
    int straddle = 0, unknown = 0, unknown_over = 0;
    t->ok = 0;
    t->uncertain = 0;
    if (t->saturated || t->completed == 0 ||
        (double)t->rejected > c->max_rejected * (double)t->arrived)
        return 1;
    for (int i = 0; i < c->nslo; i++) {
        double v = t->value[i], h = t->half[i], lim = c->slo[i].limit_ms;
        if (isnan(v) || (!isnan(h) && v - h > lim))
            return 1;
        unknown |= isnan(h);
        unknown_over |= isnan(h) && v > lim;
        straddle |= !isnan(h) && v + h > lim;
    }
    if (!straddle && !unknown) {
        t->ok = 1;
        return 1;
    }
    if (!last)
        return 0;
    t->uncertain = 1;
    t->ok = !straddle && !unknown_over;
    return 1;
}

/* One seed's run of the probe. */
static int run_seed(study_capacity *c, const probe_sets *p, int64_t nreq, uint64_t seed,
                    study_result *res, batcher *b, sim_err *err)
{
    scn_scenario scn;
    int rc = load(c, p->v, p->n, &scn, err);
    batcher_init(b, nreq);
    study_hooks hooks = {.rec = &batcher_ops, .rec_st = b, .check_every = c->check_every};
    study_sink sink = {.s = c->db, .level = c->level};
    if (rc == 0)
        rc = study_run(&scn, seed, c->db, c->search_id ? &sink : NULL, &hooks, res, err);
    scn_free(&scn);
    c->runs += rc == 0;
    return rc;
}

static int store_probe(study_capacity *c, const char *phase, double rate, int replicas,
                       const char *choice, const study_trial *t, sim_err *err)
{
    store_capacity_probe p = {.seq = c->probes,
                              .choice = choice,
                              .phase = strcmp(phase, "cluster") ? STORE_CAPACITY_SEARCH
                                                                : STORE_CAPACITY_CLUSTER,
                              .rate = rate,
                              .replicas = replicas,
                              .ok = t->ok,
                              .saturated = t->saturated,
                              .run_id = t->run_id};
    return store_capacity_add_probe(c->db, c->search_id, &p, err);
}

/* Stored run `id`'s metrics into res, its totals from them (arrived: completed + rejected,
 * the run having ended with every request done). 0, or -1 with err. */
static int stored_run(study_capacity *c, int64_t id, study_result *res, sim_err *err)
{
    memset(res, 0, sizeof *res);
    int n = store_run_metrics(c->db, id, res->m, ENG_MAX_METRICS, err);
    if (n < 0)
        return -1;
    res->n = n;
    res->run_id = id;
    res->saturated = study_metric(res, "saturated") > 0;
    res->tot.finished = (int64_t)study_metric(res, "completed");
    res->tot.rejected = (int64_t)study_metric(res, "rejected");
    res->tot.arrived = res->tot.finished + res->tot.rejected;
    for (int k = 1; k < ENG_REJECT_REASON_COUNT; k++) {
        double v = study_metric(res, study_reject_metric((eng_reject_reason)k));
        res->tot.rejected_by[k] = isnan(v) ? 0 : (int64_t)v;
    }
    return 0;
}

/* A resumed search's stored probe c->probes into *t, when there is one: its verdict as judged
 * when it ran (ok, saturated) and the means over its seeds' stored runs, which are consecutive
 * (a probe's runs commit together with it, seeds base, base + 1, ...). Approximation: the
 * batch intervals are not stored, so a read-back probe's half-widths are the seeds' interval
 * alone (NAN after one seed). *shown gets the stored rate (the unloaded probe's throughput).
 * 1, 0 when there is none (the probe is simulated), -1 with err when the stored probe is
 * another one (another llmsim made it). */
/* Whether stored probe p (its run name `was`) is the probe this search asks for: 0, or -1 with
 * err when another llmsim made it. */
static int same_probe(const study_capacity *c, const store_capacity_probe *p, const char *was,
                      const char *name, const char *phase, study_load_kind kind, double rate,
                      int replicas, sim_err *err)
{
    int cluster = strcmp(phase, "cluster") == 0;
    if (strcmp(was, name ? name : "") != 0 || (p->phase == STORE_CAPACITY_CLUSTER) != cluster ||
        (kind != STUDY_LOAD_UNLOADED && p->rate != rate) || p->replicas != replicas)
        return sim_errf(err,
                        "capacity search %lld (resumed) stored probe %lld as %s at %.6g req/s on "
                        "%d replicas, where this search asks for %s at %.6g req/s on %d: another "
                        "llmsim made it; use another database",
                        (long long)c->search_id, (long long)c->probes, was, p->rate, p->replicas,
                        name ? name : "", rate, replicas);
    return 0;
}

/* Adds the stored runs of probe p (seeds base, base + 1, ...) to t. 0, or -1 with err. */
static int add_stored_runs(study_capacity *c, const store_capacity_probe *p, uint64_t base,
                           study_trial *t, sim_err *err)
{
    int max = c->max_seeds > 0 ? c->max_seeds : STUDY_CAPACITY_SEEDS, rc = 0;
    tally ty;
    memset(&ty, 0, sizeof ty);
    study_result *res = sim_xcalloc(1, sizeof *res);
    for (int s = 0; s < max && p->run_id > 0 && rc == 0; s++) {
        store_run_meta meta;
        sim_err none = {{0}};
        if (store_run_get(c->db, p->run_id + s, &meta, &none) != 0 ||
            meta.seed != base + (uint64_t)s)
            break; /* the next probe's first run (seed base again), or the last run */
        batcher b;
        batcher_init(&b, 0); /* no requests: no batch estimates */
        rc = stored_run(c, p->run_id + s, res, err);
        if (rc == 0)
            add_run(c, res, &b, &ty, t);
        batcher_free(&b);
    }
    free(res);
    return rc;
}

static int stored_probe(study_capacity *c, const char *name, const char *phase,
                        study_load_kind kind, double rate, int replicas, uint64_t base,
                        study_trial *t, double *shown, sim_err *err)
{
    store_capacity_probe p;
    char was[256];
    if (!c->resumed || !c->search_id)
        return 0;
    int got = store_capacity_probe_get(c->db, c->search_id, c->probes, &p, was, sizeof was, err);
    if (got <= 0)
        return got;
    if (same_probe(c, &p, was, name, phase, kind, rate, replicas, err) != 0 ||
        add_stored_runs(c, &p, base, t, err) != 0)
        return -1;
    t->ok = p.ok;
    t->saturated = p.saturated;
    t->run_id = p.run_id;
    if (kind == STUDY_LOAD_UNLOADED)
        t->throughput = p.rate;
    *shown = p.rate;
    return 1;
}

/* Runs the probe's seeds until decided, and stores it: with a search in the store, its runs
 * and its row in one transaction, so a killed process leaves a probe whole or not at all. */
static int run_probe(study_capacity *c, const probe_sets *p, int64_t nreq, uint64_t base,
                     const char *phase, double shown_rate, int replicas, const char *name,
                     study_load_kind kind, study_trial *t, double *shown, sim_err *err)
{
    int max = c->max_seeds > 0 ? c->max_seeds : STUDY_CAPACITY_SEEDS, rc = 0;
    if (c->search_id && store_begin(c->db, err) != 0)
        return -1;
    tally ty;
    memset(&ty, 0, sizeof ty);
    study_result *res = sim_xcalloc(1, sizeof *res);
    for (int s = 0; s < max && rc == 0; s++) {
        batcher b;
        rc = run_seed(c, p, nreq, base + (uint64_t)s, res, &b, err);
        if (rc == 0)
            add_run(c, res, &b, &ty, t);
        batcher_free(&b);
        if (rc == 0 && decide(c, t, s + 1 == max))
            break;
    }
    free(res);
    *shown = kind == STUDY_LOAD_UNLOADED ? t->throughput : shown_rate;
    if (!c->search_id)
        return rc;
    if (rc == 0)
        rc = store_probe(c, phase, *shown, replicas, name, t, err);
    if (rc == 0)
        return store_commit(c->db, err);
    store_rollback(c->db);
    return -1;
}

int study_capacity_probe(study_capacity *c, int ci, const char *phase, study_load_kind kind,
                         double rate, int replicas, const int *pool, study_trial *t, sim_err *err)
{
    probe_sets p;
    int64_t nreq;
    memset(t, 0, sizeof *t);
    if (load_sets(c, ci, kind, rate, replicas, pool, &p, &nreq, err) != 0)
        return -1;
    scn_scenario scn;
    if (load(c, p.v, p.n, &scn, err) != 0) {
        scn_free(&scn);
        return -1;
    }
    uint64_t base = c->seed_given ? c->seed : scn.seed;
    scn_free(&scn);
    char pd_choice[32];
    const char *name = ci >= 0 ? c->choice[ci].name : NULL;
    if (pool) {
        snprintf(pd_choice, sizeof pd_choice, "%d:%d", pool[0], pool[1]);
        name = pd_choice;
    }
    double shown = rate;
    int got = stored_probe(c, name, phase, kind, rate, replicas, base, t, &shown, err);
    if (got < 0 || (got == 0 && run_probe(c, &p, nreq, base, phase, rate, replicas, name, kind, t,
                                          &shown, err) != 0))
        return -1;
    c->probes++;
    if (c->probe)
        c->probe(c->probe_arg, name, phase, shown, pool ? pool[0] + pool[1] : replicas, t);
    return 0;
}

/* ---- words ---- */

/* v with thousands separators and sensible digits ("1,004", "46.2", "0.046"). */
const char *study_fmt_num(double v, char *buf, size_t len)
{
    if (isnan(v))
        return snprintf(buf, len, "n/a"), buf;
    if (fabs(v) < 100) {
        snprintf(buf, len, "%.3g", v);
        return buf;
    }
    char digits[48];
    snprintf(digits, sizeof digits, "%.0f", fabs(v));
    size_t n = strlen(digits), o = 0;
    if (v < 0 && o + 1 < len)
        buf[o++] = '-';
    for (size_t i = 0; i < n && o + 2 < len; i++) {
        if (i && (n - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
    return buf;
}

const char *study_slo_name(const study_slo *s, char *buf, size_t len)
{
    char what[8], pct[16];
    snprintf(what, sizeof what, "%s", strcmp(s->what, "e2el") == 0 ? "E2E" : s->what);
    for (char *q = what; *q; q++)
        *q = (char)(*q >= 'a' && *q <= 'z' ? *q - 'a' + 'A' : *q);
    if (s->pct < 0)
        snprintf(pct, sizeof pct, "mean");
    else if (s->pct == 50)
        snprintf(pct, sizeof pct, "median");
    else
        snprintf(pct, sizeof pct, "p%g", s->pct);
    snprintf(buf, len, "%s %s", pct, what);
    return buf;
}

/* h to the decimals study_fmt_num gives v ("14" beside "987", "0.09" beside "7.15"). */
static const char *fmt_half(double h, double v, char *buf, size_t len)
{
    int d = 0;
    if (fabs(v) < 100 && fabs(v) > 0)
        d = 2 - (int)floor(log10(fabs(v)));
    if (d < 0 || fabs(h) >= 100)
        return study_fmt_num(h, buf, len);
    snprintf(buf, len, "%.*f", d > 6 ? 6 : d, h);
    return buf;
}

const char *study_trial_value(const study_capacity *c, const study_trial *t, int i, char *buf,
                              size_t len)
{
    char name[24], v[32], h[32];
    study_slo_name(&c->slo[i], name, sizeof name);
    study_fmt_num(t->value[i], v, sizeof v);
    if (isnan(t->half[i]))
        snprintf(buf, len, "%s %s ms", name, v);
    else
        snprintf(buf, len, "%s %s ± %s ms", name, v,
                 fmt_half(t->half[i], t->value[i], h, sizeof h));
    return buf;
}

const char *study_trial_reasons(const study_trial *t, char *buf, size_t len)
{
    char r[32];
    int w = 0;
    if (len)
        buf[0] = '\0';
    for (int k = 1; k < ENG_REJECT_REASON_COUNT && w >= 0 && (size_t)w < len; k++)
        if (t->rejected_by[k])
            w += snprintf(buf + w, len - (size_t)w, "%s%s: %s", w ? ", " : "",
                          eng_reject_reason_name((eng_reject_reason)k),
                          study_fmt_num((double)t->rejected_by[k], r, sizeof r));
    return buf;
}

const char *study_trial_rejections(const study_trial *t, char *buf, size_t len)
{
    char a[32], b[32], r[32];
    if (t->rejected == 0) {
        snprintf(buf, len, "none rejected");
        return buf;
    }
    int w =
        snprintf(buf, len, "%s of %s rejected (", study_fmt_num((double)t->rejected, a, sizeof a),
                 study_fmt_num((double)t->arrived, b, sizeof b));
    for (int k = 1, first = 1; k < ENG_REJECT_REASON_COUNT && w > 0 && (size_t)w < len; k++)
        if (t->rejected_by[k]) {
            w += snprintf(buf + w, len - (size_t)w, "%s%s: %s", first ? "" : ", ",
                          eng_reject_reason_name((eng_reject_reason)k),
                          study_fmt_num((double)t->rejected_by[k], r, sizeof r));
            first = 0;
        }
    if (w > 0 && (size_t)w < len)
        snprintf(buf + w, len - (size_t)w, ")");
    return buf;
}
