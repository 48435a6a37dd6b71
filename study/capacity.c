/*
 * capacity.c: the capacity search (see study_capacity.h): the SLOs, the unloaded check, the
 * rate search, the cluster check and the prefill:decode split search, each ending in an answer
 * or a verdict that says why there is none. Probes are run and judged by probe.c.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_capacity.h"
#include "study_capacity.h"
#include "study_recommend.h"

/* ---- SLOs ---- */

/* "tps_per_user=30": at least 30 output tokens/s per user, i.e. mean TPOT <= 1000 / 30 ms. */
static int parse_tps(const char *item, study_slo *out)
{
    double v;
    char tail;
    if (sscanf(item, "tps_per_user=%lf%c", &v, &tail) != 1 || !(v > 0))
        return -1;
    out->limit_ms = 1000.0 / v;
    out->pct = -1;
    snprintf(out->what, sizeof out->what, "tpot");
    snprintf(out->metric, sizeof out->metric, "mean_tpot_ms");
    snprintf(out->label, sizeof out->label, "tps_per_user");
    return 0;
}

/* Whether pct names a percentile an SLO may bound: p50, p90, p95 or p99. */
static int slo_pct(const char *pct)
{
    return !strcmp(pct, "p50") || !strcmp(pct, "p90") || !strcmp(pct, "p95") || !strcmp(pct, "p99");
}

/* v in unit (ms or s) into *ms. 0, or -1 for another unit. */
static int limit_ms(double v, const char *unit, double *ms)
{
    if (strcmp(unit, "ms") == 0)
        *ms = v;
    else if (strcmp(unit, "s") == 0)
        *ms = v * 1000;
    else
        return -1;
    return 0;
}

/* The SLO's percentile, latency, metric ("p99_ttft_ms", "median_..." for p50) and label. */
static void name_slo(study_slo *out, const eng_latency *l, const char *pct)
{
    out->pct = atof(pct + 1);
    snprintf(out->what, sizeof out->what, "%.7s", l->name);
    snprintf(out->metric, sizeof out->metric, "%s_%s", strcmp(pct, "p50") ? pct : "median",
             l->stem);
    snprintf(out->label, sizeof out->label, "%s_%s", l->name, pct);
}

/* "ttft_p99=1000ms" -> metric p99_ttft_ms, limit 1000. 0, or -1. */
static int parse_one(const char *item, study_slo *out)
{
    char name[64];
    double v;
    char unit[8] = "ms";
    if (strncmp(item, "tps_per_user=", 13) == 0)
        return parse_tps(item, out);
    if (sscanf(item, "%63[^=]=%lf%7s", name, &v, unit) < 2 || !(v > 0))
        return -1;
    char *us = strrchr(name, '_');
    if (!us)
        return -1;
    *us = '\0';
    const eng_latency *l = eng_latency_find(name, ENG_LAT_SLO);
    if (!l || !slo_pct(us + 1) || limit_ms(v, unit, &out->limit_ms) != 0)
        return -1;
    name_slo(out, l, us + 1);
    return 0;
}

/* SLO item t appended to out's *n (at most max). 0, or -1 with err saying what an SLO is. */
static int add_slo(const char *t, study_slo *out, int max, int *n, sim_err *err)
{
    char names[120];
    if (*n == max)
        return sim_errf(err, "at most %d SLOs", max);
    if (parse_one(t, &out[*n]) != 0)
        return sim_errf(err,
                        "bad SLO '%s': expected METRIC_PCT=VALUE[ms|s] with METRIC %s and PCT "
                        "p50, p90, p95 or p99 (e.g. ttft_p99=1000ms), or tps_per_user=N (output "
                        "tokens/s each user sees)",
                        t, eng_latency_names(ENG_LAT_SLO, names, sizeof names));
    (*n)++;
    return 0;
}

int study_slo_parse(const char *list, study_slo *out, int max, int *n, sim_err *err)
{
    char *copy = sim_xstrdup(list), *save = NULL;
    int rc = 0;
    for (char *t = strtok_r(copy, ",", &save); t && rc == 0; t = strtok_r(NULL, ",", &save))
        rc = add_slo(t, out, max, n, err);
    free(copy);
    return rc;
}

/* ---- the search's setting ---- */

int study_capacity_compare(study_capacity *c, const char *arg, sim_err *err)
{
    if (study_choices_add(c->choice, STUDY_MAX_CHOICES, &c->ncmp, arg, err) != 0)
        return -1;
    size_t n = strlen(c->compare);
    snprintf(c->compare + n, sizeof c->compare - n, "%s%s", n ? " x " : "", arg);
    return 0;
}

void study_capacity_free(study_capacity *c)
{
    c->ncmp = 0;
}

const char *study_verdict_name(study_verdict v)
{
    static const char *const names[] = {"found", "unreachable", "unreachable under load",
                                        "over budget", "no cluster"};
    return (unsigned)v < sizeof names / sizeof names[0] ? names[v] : "?";
}

int study_capacity_begin(study_capacity *c, const scn_scenario *scn, const char *slo_text,
                         sim_err *err)
{
    c->search_id = 0;
    c->probes = 0;
    c->runs = 0;
    if (!c->db)
        return 0;
    /* the settings that judge a probe belong to the question: a search resumed under others
     * would read back verdicts they did not give */
    char question[1024];
    snprintf(question, sizeof question, "%s | --max-rejected %.17g --max-gpus %d --seeds %d",
             slo_text ? slo_text : "", c->max_rejected, c->max_gpus,
             c->max_seeds > 0 ? c->max_seeds : STUDY_CAPACITY_SEEDS);
    store_capacity_info info = {.file = c->file,
                                .scenario = scn->text,
                                .slo = question,
                                .target_rate = c->target,
                                .compare_key = c->ncmp ? c->compare : NULL,
                                .precision = c->precision,
                                .base_seed = c->seed_given ? c->seed : scn->seed};
    /* a search asked exactly so that a killed process left unfinished is taken up: its probes
     * are the ones this search makes first (same seeds), so they are read back, not run */
    int found = store_capacity_resume(c->db, &info, c->ncmp ? c->ncmp : 1, &c->search_id, err);
    if (found < 0)
        return -1;
    c->resumed = found;
    return found ? 0 : store_capacity_open(c->db, &info, &c->search_id, err);
}

/* Whether c's scenario (its overrides and c->fit applied) loads and every pool's KV plan
 * computes: 1 when it loads and a plan does not (err says why), 0 when all do, -1 when it does not
 * load (err). The scenario's name, model and GPU into what (len) when it loads. */
static int plan_fails(const study_capacity *c, char *what, size_t len, sim_err *err)
{
    scn_scenario scn;
    int rc = study_capacity_load(c, &scn, err);
    for (int k = 0; rc == 0 && k < eng_config_pools(&scn.engine); k++) {
        eng_config pc;
        eng_kv_plan plan;
        eng_config_pool(&scn.engine, k, &pc);
        if (eng_kv_plan_compute(&pc, &plan, err) != 0)
            rc = 1;
    }
    if (rc >= 0)
        snprintf(what, len, "%s (%s)", scn.engine.model.name, scn.engine.gpu.name);
    scn_free(&scn);
    return rc;
}

/* MODEL: a model whose weights do not fit one node is served over several, a pipeline stage a
 * node and tensor parallel within it (vLLM's docs, "Distributed inference and serving": the
 * tensor parallel size is the GPUs in each node, the pipeline parallel size the number of
 * nodes); the layouts are recommend's (study_rec_pipelines), the fewest nodes that fit first. */
int study_capacity_fit(study_capacity *c, sim_err *err)
{
    char what[128];
    memset(&c->fit, 0, sizeof c->fit);
    c->fit_note[0] = '\0';
    int rc = plan_fails(c, what, sizeof what, err);
    if (rc <= 0 || !strstr(err->msg, "does not fit:"))
        return rc < 0 ? -1 : 0; /* a plan that fails otherwise: the search says so */
    study_rec_layout lay[4];
    int n = study_rec_pipelines(INT32_MAX, lay, 4);
    for (int i = 0; i < n; i++) {
        sim_err e2;
        study_rec_layout_sets(&lay[i], &c->fit);
        if (plan_fails(c, what, sizeof what, &e2) == 0) {
            snprintf(c->fit_note, sizeof c->fit_note,
                     "%s does not fit the scenario's layout: searched as tensor_parallel %d x "
                     "pipeline_parallel %d, %d nodes of %d GPUs with a pipeline stage each, the "
                     "fewest of recommend's layouts past one node that it fits",
                     what, lay[i].tp, lay[i].pp, lay[i].pp, lay[i].tp);
            return 0;
        }
        memset(&c->fit, 0, sizeof c->fit);
    }
    return 0; /* no pipeline fits either: the search says the scenario does not fit */
}

/* ---- verdicts in words ---- */

/* The first SLO t misses, or -1. */
static int first_miss(const study_capacity *c, const study_trial *t)
{
    for (int i = 0; i < c->nslo; i++)
        if (!(t->value[i] <= c->slo[i].limit_ms))
            return i;
    for (int i = 0; i < c->nslo; i++)
        if (t->value[i] + t->half[i] > c->slo[i].limit_ms)
            return i;
    return -1;
}

/* Why t fails, after `where` ("unloaded", "at 0.33 req/s"), into buf. */
static void why_fails(const study_capacity *c, const study_trial *t, const char *where, char *buf,
                      size_t len)
{
    char a[32], b[32], r[160];
    int i = first_miss(c, t);
    if (t->completed == 0)
        snprintf(buf, len, "no request completed %s", where);
    else if ((double)t->rejected > c->max_rejected * (double)t->arrived)
        snprintf(buf, len, "%.1f%% of requests rejected %s (%s of %s; %s) > --max-rejected %g",
                 100.0 * (double)t->rejected / (double)t->arrived, where,
                 study_fmt_num((double)t->rejected, a, sizeof a),
                 study_fmt_num((double)t->arrived, b, sizeof b),
                 study_trial_reasons(t, r, sizeof r), c->max_rejected);
    else if (t->saturated)
        snprintf(buf, len, "saturated %s (the queue kept growing)", where);
    else if (i >= 0) {
        char name[24], h[40] = "";
        if (!isnan(t->half[i]))
            snprintf(h, sizeof h, " ± %s", study_fmt_num(t->half[i], b, sizeof b));
        char seeds[24] = "";
        if (t->uncertain)
            snprintf(seeds, sizeof seeds, " (%d seeds)", t->seeds);
        snprintf(buf, len, "%s %s %s%s ms%s %s %s ms",
                 study_slo_name(&c->slo[i], name, sizeof name), where,
                 study_fmt_num(t->value[i], a, sizeof a), h, seeds,
                 t->value[i] > c->slo[i].limit_ms ? ">" : "not clear of",
                 study_fmt_num(c->slo[i].limit_ms, b, sizeof b));
    } else
        snprintf(buf, len, "%s: within the SLOs only by the mean of %d seeds", where, t->seeds);
}

/* ---- the search ---- */

static const char *choice_name(const study_capacity *c, int ci)
{
    return ci >= 0 && ci < c->ncmp ? c->choice[ci].name : NULL;
}

/* Poisson arrivals at `rate` per replica on one replica (a copy of the pools). */
static int at_rate(study_capacity *c, int ci, double rate, study_trial *t, sim_err *err)
{
    return study_capacity_probe(c, ci, "search", STUDY_LOAD_RATE, rate, 1, NULL, t, err);
}

/* The verdict when one request at a time already misses an SLO (or no request finishes). */
static int unreachable(const study_capacity *c, study_answer *a)
{
    char why[300];
    a->verdict = STUDY_UNREACHABLE;
    why_fails(c, &a->unloaded, "unloaded", why, sizeof why);
    snprintf(a->why, sizeof a->why, "unreachable: %s", why);
    return 0;
}

/* The verdict when Poisson arrivals at the unloaded capacity (lo) miss what one request at a
 * time met: trial t says how. */
static int unreachable_under_load(const study_capacity *c, study_answer *a, double lo,
                                  const study_trial *t)
{
    char where[64], why[200], r[32];
    snprintf(where, sizeof where, "at %s req/s", study_fmt_num(lo, r, sizeof r));
    why_fails(c, t, where, why, sizeof why);
    a->verdict = STUDY_UNREACHABLE_LOAD;
    snprintf(a->why, sizeof a->why,
             "unreachable under load: met one request at a time, but %s (Poisson arrivals "
             "at the unloaded capacity)",
             why);
    return 0;
}

/* Doubles the rate from *lo (met) until a rate fails (*hi) or passes 1e5 req/s; *lo is the
 * last met, its trial in a->at_rate. 0, or -1 with err. */
static int double_rate(study_capacity *c, int ci, study_answer *a, double *lo, double *hi,
                       sim_err *err)
{
    study_trial t;
    for (*hi = 2 * *lo; *hi < 1e5; *hi *= 2) {
        if (at_rate(c, ci, *hi, &t, err) != 0)
            return -1;
        if (!t.ok)
            break;
        *lo = *hi;
        a->at_rate = t;
    }
    return 0;
}

/* Bisects [*lo (met), hi (failed)] to the search's precision; *lo is the highest met, its
 * trial in a->at_rate. 0, or -1 with err. */
static int bisect_rate(study_capacity *c, int ci, study_answer *a, double *lo, double hi,
                       sim_err *err)
{
    study_trial t;
    while (hi - *lo > c->precision * hi && *lo < 1e5) {
        double mid = (*lo + hi) / 2;
        if (at_rate(c, ci, mid, &t, err) != 0)
            return -1;
        if (t.ok) {
            *lo = mid;
            a->at_rate = t;
        } else
            hi = mid;
    }
    return 0;
}

/* MODEL: the unloaded case bounds what any load can do: TTFT, TPOT and E2E with no other
 * request in the system are the least a request can see (batching only adds), and a request
 * rejected alone is rejected under load. So a miss there is a verdict, and the search starts
 * from the rate the unloaded replica sustains (its throughput one request at a time): below
 * it a replica is idle most of the time, and a noisy boundary there says nothing a planner can
 * use. */
static int search(study_capacity *c, int ci, study_answer *a, sim_err *err)
{
    if (study_capacity_probe(c, ci, "unloaded", STUDY_LOAD_UNLOADED, 0, 1, NULL, &a->unloaded,
                             err) != 0)
        return -1;
    a->unloaded_rate = a->unloaded.throughput > 0 ? a->unloaded.throughput : 0;
    if (!a->unloaded.ok || !(a->unloaded_rate > 0))
        return unreachable(c, a);
    double lo = a->unloaded_rate, hi = lo;
    study_trial t;
    if (at_rate(c, ci, lo, &t, err) != 0)
        return -1;
    if (!t.ok)
        return unreachable_under_load(c, a, lo, &t);
    a->at_rate = t;
    if (double_rate(c, ci, a, &lo, &hi, err) != 0 || bisect_rate(c, ci, a, &lo, hi, err) != 0)
        return -1;
    a->rate = lo;
    return 0;
}

/* Requests a cluster of n replicas of choice ci runs (the scenario's, scaled). */
static int64_t cluster_requests(const study_capacity *c, int ci, int n)
{
    scn_scenario scn;
    sim_err ignore;
    int64_t r = 0;
    if (study_capacity_load_choice(c, ci, &scn, &ignore) == 0)
        r = scn.workload.num_requests;
    scn_free(&scn);
    return r * (n > 1 ? n : 1);
}

/* The replicas the target rate needs, checked by simulating the cluster. */
static int size_cluster(study_capacity *c, int ci, study_answer *a, sim_err *err)
{
    int n0 = (int)ceil(c->target / a->rate - 1e-9), n = n0 < 1 ? 1 : n0;
    for (int tries = 0; tries < 64; tries++, n++) {
        int gpus = n * a->tp;
        if (c->max_gpus > 0 && gpus > c->max_gpus) {
            a->verdict = STUDY_OVER_BUDGET;
            snprintf(a->why, sizeof a->why,
                     "over budget: %g req/s needs %s%d replicas (%d GPUs) > --max-gpus %d",
                     c->target, tries ? "more than " : "", tries ? n - 1 : n,
                     tries ? (n - 1) * a->tp : gpus, c->max_gpus);
            return 0;
        }
        if (c->cluster)
            c->cluster(c->probe_arg, choice_name(c, ci), c->target, n, gpus,
                       cluster_requests(c, ci, n));
        if (study_capacity_probe(c, ci, "cluster", STUDY_LOAD_RATE, c->target, n, NULL,
                                 &a->at_target, err) != 0)
            return -1;
        if (a->at_target.ok) {
            a->replicas = n;
            return 0;
        }
    }
    a->verdict = STUDY_NO_CLUSTER;
    snprintf(a->why, sizeof a->why, "no cluster of %d to %d replicas met the SLOs at %g req/s",
             n0 < 1 ? 1 : n0, n - 1, c->target);
    return 0;
}

int study_objective_parse(const char *s, study_objective *out)
{
    if (strcmp(s, "gpus") == 0)
        *out = STUDY_MIN_GPUS;
    else if (strcmp(s, "cost") == 0)
        *out = STUDY_MIN_COST;
    else
        return -1;
    return 0;
}

double study_answer_usd_h(const study_answer *a, int n)
{
    if (!a->prefill)
        return a->price > 0 ? (double)n * a->tp * a->price : NAN;
    if (!(a->price > 0) || !(a->decode_price > 0))
        return NAN;
    return (double)n *
           (a->prefill * a->prefill_gpus * a->price + a->decode * a->decode_gpus * a->decode_price);
}

double study_answer_cost(const study_answer *a, int n, study_objective o)
{
    return o == STUDY_MIN_COST ? study_answer_usd_h(a, n) : (double)n * a->tp;
}

/* What one replica (a disaggregated scenario: one copy of its pools) of scn is made of. */
static void answer_layout(const scn_scenario *scn, study_answer *a)
{
    const eng_config *e = &scn->engine;
    if (!e->pd.enabled) {
        a->tp = e->tensor_parallel * e->data_parallel_attention *
                (e->pipeline_parallel > 1 ? e->pipeline_parallel : 1); /* GPUs a replica */
        a->price = eng_fleet_gpu_price(&e->fleet, &e->gpu);
        return;
    }
    a->price = eng_fleet_gpu_price(&e->fleet, &e->pd.pool[ENG_POOL_PREFILL].gpu);
    a->decode_price = eng_fleet_gpu_price(&e->fleet, &e->pd.pool[ENG_POOL_DECODE].gpu);
    const eng_pool_config *p = &e->pd.pool[ENG_POOL_PREFILL], *d = &e->pd.pool[ENG_POOL_DECODE];
    a->prefill = p->replicas;
    a->decode = d->replicas;
    a->prefill_gpus = p->tensor_parallel * p->data_parallel_attention;
    a->decode_gpus = d->tensor_parallel * d->data_parallel_attention;
    a->tp = a->prefill * a->prefill_gpus + a->decode * a->decode_gpus;
}

int study_capacity_priced(const study_capacity *c, sim_err *err)
{
    if (c->minimise != STUDY_MIN_COST)
        return 0;
    for (int i = 0; i < (c->ncmp ? c->ncmp : 1); i++) {
        scn_scenario scn;
        study_answer a = {0};
        if (study_capacity_load_choice(c, c->ncmp ? i : -1, &scn, err) != 0) {
            scn_free(&scn);
            return -1;
        }
        answer_layout(&scn, &a);
        const eng_config *e = &scn.engine;
        const char *gpu = !(a.price > 0) ? (e->pd.enabled ? e->pd.pool[0].gpu.name : e->gpu.name)
                          : e->pd.enabled && !(a.decode_price > 0) ? e->pd.pool[1].gpu.name
                                                                   : NULL;
        int rc = gpu ? sim_errf(err,
                                "minimising cost: GPU %s%s%s has no list price in the catalog "
                                "(llmsim list gpus); give one with --set "
                                "price.per_gpu_hour_usd=USD or minimise GPUs",
                                gpu, c->ncmp ? " of choice " : "", c->ncmp ? c->choice[i].name : "")
                     : 0;
        scn_free(&scn);
        if (rc)
            return -1;
    }
    return 0;
}

int study_capacity_find(study_capacity *c, int i, study_answer *a, sim_err *err)
{
    memset(a, 0, sizeof *a);
    int ci = c->ncmp ? i : -1;
    scn_scenario scn;
    int rc = study_capacity_load_choice(c, ci, &scn, err);
    if (rc == 0)
        answer_layout(&scn, a);
    scn_free(&scn);
    if (rc != 0 || search(c, ci, a, err) != 0)
        return -1;
    if (a->verdict == STUDY_FOUND && c->target > 0 && size_cluster(c, ci, a, err) != 0)
        return -1;
    if (!c->search_id)
        return 0;
    store_capacity_result res = {choice_name(c, ci), a->rate, a->replicas, a->replicas * a->tp};
    return store_capacity_add_result(c->db, c->search_id, &res, err);
}

/* MODEL: the cheapest split for a target rate is searched the way DistServe places instances
 * (Zhong et al., OSDI'24, section 4): enough prefill instances for the TTFT goal and decode
 * instances for the TPOT goal, each tried at the target rate by simulation. More replicas in
 * either pool never hurt, so the decode replicas a split needs do not grow with its prefill
 * replicas: the search walks prefill counts up and decode counts down (a staircase). At each
 * prefill count the decode count doubles from 1 until the SLOs are met, then bisects, so the
 * trials stay as small as the answer. Approximation: when doubling the decode pool improves
 * none of the missed SLOs by 5% or more, the prefill pool is taken to be what misses them
 * (the decode pool has stopped mattering) and that prefill count gets no answer. */

static int pd_trial(study_capacity *c, int p, int d, study_trial *t, sim_err *err)
{
    int pool[2] = {p, d};
    if (c->cluster) {
        char name[32];
        snprintf(name, sizeof name, "%d:%d", p, d);
        c->cluster(c->probe_arg, name, c->target, p + d, -1, 0);
    }
    return study_capacity_probe(c, -1, "cluster", STUDY_LOAD_RATE, c->target, p + d, pool, t, err);
}

/* Whether `now` (twice the decode replicas of `before`) misses its SLOs by what it missed
 * before, each missed one within 5% of before's value. */
static int decode_stopped_mattering(const study_capacity *c, const study_trial *before,
                                    const study_trial *now)
{
    if (now->saturated && !before->saturated)
        return 0;
    for (int i = 0; i < c->nslo; i++) {
        double b = before->value[i], v = now->value[i];
        if (v <= c->slo[i].limit_ms)
            continue;
        if (!(v > 0.95 * b))
            return 0;
    }
    return 1;
}

/* The fewest decode replicas in [1, hi] that, with p prefill replicas, meet the SLOs at the
 * target rate; 0 when none does. *t gets the trial of the answer. */
static int fewest_decode(study_capacity *c, int p, int hi, study_trial *t, sim_err *err)
{
    study_trial tt, prev = {0};
    int lo = 0, d = 1; /* lo misses (0: none tried) */
    if (hi < 1)
        return 0;
    for (;;) {
        if (pd_trial(c, p, d, &tt, err) != 0)
            return -1;
        if (tt.ok)
            break;
        if (d >= hi || (lo > 0 && decode_stopped_mattering(c, &prev, &tt)))
            return 0;
        prev = tt;
        lo = d;
        d = d * 2 < hi ? d * 2 : hi;
    }
    *t = tt;
    hi = d;
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (pd_trial(c, p, mid, &tt, err) != 0)
            return -1;
        if (tt.ok) {
            hi = mid;
            *t = tt;
        } else {
            lo = mid;
        }
    }
    return hi;
}

/* One copy of the scenario's pools, the unit a split counts (its GPUs per pool); -1 with err
 * when the scenario has no prefill and decode pools. */
static int pd_unit(study_capacity *c, study_answer *unit, sim_err *err)
{
    scn_scenario scn;
    int rc = study_capacity_load(c, &scn, err);
    if (rc == 0 && !scn.engine.pd.enabled)
        rc = sim_errf(err, "%s has no prefill and decode pools to split", c->file);
    memset(unit, 0, sizeof *unit);
    if (rc == 0)
        answer_layout(&scn, unit);
    scn_free(&scn);
    return rc != 0 ? -1 : 0;
}

/* The least split with p prefill replicas: one decode replica. */
static study_answer least_split(const study_answer *unit, int p)
{
    study_answer least = *unit;
    least.prefill = p;
    least.decode = 1;
    least.tp = p * unit->prefill_gpus + unit->decode_gpus;
    return least;
}

/* Whether the least split of some prefill count already costs at least the best split found
 * (best, NULL when none) or passes the GPU cap: more prefill replicas cannot do better. */
static int past_best(const study_capacity *c, const study_answer *least, const study_answer *best)
{
    if (best && study_answer_cost(least, 1, c->minimise) >= study_answer_cost(best, 1, c->minimise))
        return 1;
    return c->max_gpus > 0 && least->tp > c->max_gpus;
}

/* Split a ("P:D") stored as a result of the search (when it is stored). 0, or -1 with err. */
static int store_split(study_capacity *c, const study_answer *a, sim_err *err)
{
    char choice[32];
    if (!c->search_id)
        return 0;
    snprintf(choice, sizeof choice, "%d:%d", a->prefill, a->decode);
    store_capacity_result res = {choice, 0, a->prefill + a->decode, a->tp};
    return store_capacity_add_result(c->db, c->search_id, &res, err) != 0 ? -1 : 0;
}

/* Appends the split of p prefill and d decode replicas of unit (trial t at the target) to
 * out[*n], the new *best when it costs least, and stores it. 0, or -1 with err. */
static int add_split(study_capacity *c, study_answer *out, int *n, int *best,
                     const study_answer *unit, int p, int d, const study_trial *t, sim_err *err)
{
    study_answer *a = &out[(*n)++];
    *a = *unit;
    a->prefill = p;
    a->decode = d;
    a->replicas = 1;
    a->tp = p * unit->prefill_gpus + d * unit->decode_gpus;
    a->at_target = *t;
    a->rate = c->target;
    if (*best < 0 ||
        study_answer_cost(a, 1, c->minimise) < study_answer_cost(&out[*best], 1, c->minimise))
        *best = *n - 1;
    return store_split(c, a, err);
}

int study_capacity_pd_search(study_capacity *c, study_answer *out, int max, int *n, int *best,
                             sim_err *err)
{
    study_answer unit;
    *n = 0;
    *best = -1;
    if (c->target <= 0)
        return sim_errf(err, "the prefill:decode search needs --target-rate");
    if (pd_unit(c, &unit, err) != 0)
        return -1;
    int hi = STUDY_PD_MAX;
    for (int p = 1; p <= STUDY_PD_MAX && *n < max; p++) {
        study_answer least = least_split(&unit, p);
        if (past_best(c, &least, *best >= 0 ? &out[*best] : NULL))
            break; /* even one decode replica costs more than the best split, or passes the cap */
        int cap = c->max_gpus > 0 ? (c->max_gpus - p * unit.prefill_gpus) / unit.decode_gpus : hi;
        study_trial t = {0};
        int d = fewest_decode(c, p, cap < hi ? cap : hi, &t, err);
        if (d < 0)
            return -1;
        if (d == 0)
            continue; /* too few prefill replicas: the decode pool cannot make up for it */
        if (add_split(c, out, n, best, &unit, p, d, &t, err) != 0)
            return -1;
        hi = d;
        if (d == 1)
            break; /* more prefill replicas can only cost more */
    }
    return 0;
}
