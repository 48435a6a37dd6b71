/*
 * capacity.c: the capacity search (see study_capacity.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_capacity.h"
#include "store_query.h"
#include "study_capacity.h"

/* "ttft_p99=1000ms" -> metric p99_ttft_ms, limit 1000. 0, or -1. */
static int parse_one(const char *item, study_slo *out)
{
    char name[64];
    double v;
    char unit[8] = "ms";
    if (sscanf(item, "%63[^=]=%lf%7s", name, &v, unit) < 2 || !(v > 0))
        return -1;
    char *us = strrchr(name, '_');
    if (!us)
        return -1;
    *us = '\0';
    const char *pct = us + 1;
    const eng_latency *l = eng_latency_find(name, ENG_LAT_SLO);
    if (!l)
        return -1;
    if (strcmp(pct, "p50") && strcmp(pct, "p90") && strcmp(pct, "p95") && strcmp(pct, "p99"))
        return -1;
    if (strcmp(unit, "ms") == 0)
        out->limit_ms = v;
    else if (strcmp(unit, "s") == 0)
        out->limit_ms = v * 1000;
    else
        return -1;
    snprintf(out->metric, sizeof out->metric, "%s_%s", strcmp(pct, "p50") ? pct : "median",
             l->stem);
    snprintf(out->label, sizeof out->label, "%s_%s", l->name, pct);
    return 0;
}

int study_slo_parse(const char *list, study_slo *out, int max, int *n, sim_err *err)
{
    char *copy = sim_xstrdup(list), *save = NULL, names[120];
    int rc = 0;
    for (char *t = strtok_r(copy, ",", &save); t && rc == 0; t = strtok_r(NULL, ",", &save)) {
        if (*n == max)
            rc = sim_errf(err, "at most %d SLOs", max);
        else if (parse_one(t, &out[*n]) != 0)
            rc = sim_errf(err,
                          "bad SLO '%s': expected METRIC_PCT=VALUE[ms|s] with METRIC %s and PCT "
                          "p50, p90, p95 or p99 (e.g. ttft_p99=1000ms)",
                          t, eng_latency_names(ENG_LAT_SLO, names, sizeof names));
        else
            (*n)++;
    }
    free(copy);
    return rc;
}

/* "P:D" -> *p, *d (each >= 1). 0, or -1. */
static int parse_ratio(const char *v, int *p, int *d)
{
    char tail;
    return sscanf(v, "%d:%d%c", p, d, &tail) == 2 && *p >= 1 && *d >= 1 && *p <= 4096 && *d <= 4096
               ? 0
               : -1;
}

int study_capacity_compare(study_capacity *c, const char *arg, sim_err *err)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof c->cmp_key || !eq[1])
        return sim_errf(err, "--compare expects KEY=V1,V2,...; got '%s'", arg);
    memcpy(c->cmp_key, arg, (size_t)(eq - arg));
    c->cmp_key[eq - arg] = '\0';
    if (strcmp(c->cmp_key, "scheduler") == 0)
        snprintf(c->cmp_key, sizeof c->cmp_key, "scheduler.name");
    char *copy = sim_xstrdup(eq + 1), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int p, d;
        if (strcmp(c->cmp_key, "pd") == 0 && parse_ratio(t, &p, &d) != 0) {
            sim_errf(err,
                     "--compare pd: '%s' is not a prefill:decode replica ratio such as 1:2 (two "
                     "integers >= 1)",
                     t); /* before t's buffer is freed */
            free(copy);
            return -1;
        }
        if (c->ncmp == STUDY_MAX_CHOICES) {
            free(copy);
            return sim_errf(err, "--compare: at most %d values", STUDY_MAX_CHOICES);
        }
        c->cmp_val[c->ncmp++] = sim_xstrdup(t);
    }
    free(copy);
    return 0;
}

void study_capacity_free(study_capacity *c)
{
    for (int i = 0; i < c->ncmp; i++)
        free(c->cmp_val[i]);
    c->ncmp = 0;
}

/* The overrides of a probe: the user's, then the choice's (`pd=P:D` sets both pools'
 * replicas), into sets; room is left for four more. b holds the choice's texts. */
typedef struct choice_buf {
    char a[256], b[64];
} choice_buf;

static int probe_sets(const study_capacity *c, const char *choice, const char **sets, choice_buf *b)
{
    int n = 0;
    for (int i = 0; i < c->nsets && n < STUDY_MAX_SETS - 6; i++)
        sets[n++] = c->sets[i];
    int p, d;
    if (choice && strcmp(c->cmp_key, "pd") == 0 && parse_ratio(choice, &p, &d) == 0) {
        snprintf(b->a, sizeof b->a, "prefill.replicas=%d", p);
        snprintf(b->b, sizeof b->b, "decode.replicas=%d", d);
        sets[n++] = b->a;
        sets[n++] = b->b;
    } else if (choice) {
        snprintf(b->a, sizeof b->a, "%s=%s", c->cmp_key, choice);
        sets[n++] = b->a;
    }
    return n;
}

int study_capacity_load(const study_capacity *c, scn_scenario *scn, sim_err *err)
{
    return study_load(c->file, c->sets, c->nsets, scn, err);
}

int study_capacity_begin(study_capacity *c, const scn_scenario *scn, const char *slo_text,
                         sim_err *err)
{
    c->search_id = 0;
    c->probes = 0;
    if (!c->db)
        return 0;
    store_capacity_info info = {.file = c->file,
                                .scenario = scn->text,
                                .slo = slo_text,
                                .target_rate = c->target,
                                .compare_key = c->ncmp ? c->cmp_key : NULL,
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

static void judge(const study_capacity *c, const study_result *res, study_trial *t)
{
    t->saturated = res->saturated;
    t->ok = !res->saturated;
    t->run_id = res->run_id;
    for (int i = 0; i < c->nslo; i++) {
        t->value[i] = study_metric(res, c->slo[i].metric);
        if (!(t->value[i] <= c->slo[i].limit_ms))
            t->ok = 0;
    }
}

/* The stored probe c->probes of a resumed search, when it is this one (choice, phase, rate,
 * replicas), into *t (its percentiles from its run's metrics). 1, 0 when there is none (the
 * search goes on by simulating), -1 with err when it is another probe (the search was made by
 * another llmsim). */
static int stored_probe(study_capacity *c, const char *choice, const char *phase, double rate,
                        int replicas, study_trial *t, sim_err *err)
{
    store_capacity_probe p;
    char was[256];
    if (!c->resumed)
        return 0;
    int got = store_capacity_probe_get(c->db, c->search_id, c->probes, &p, was, sizeof was, err);
    if (got <= 0)
        return got;
    int cluster = strcmp(phase, "search") != 0;
    if (strcmp(was, choice ? choice : "") != 0 || (p.phase == STORE_CAPACITY_CLUSTER) != cluster ||
        p.rate != rate || p.replicas != replicas)
        return sim_errf(err,
                        "capacity search %lld (resumed) stored probe %lld as %s at %.6g req/s on "
                        "%d replicas, where this search asks for %s at %.6g req/s on %d: another "
                        "llmsim made it; use another database",
                        (long long)c->search_id, (long long)c->probes, was, p.rate, p.replicas,
                        choice ? choice : "", rate, replicas);
    study_result *res = sim_xcalloc(1, sizeof *res);
    int n = p.run_id > 0 ? store_run_metrics(c->db, p.run_id, res->m, ENG_MAX_METRICS, err) : 0;
    if (n >= 0) {
        res->n = n;
        res->run_id = p.run_id;
        res->saturated = p.saturated;
        judge(c, res, t);
        t->ok = p.ok; /* as judged when it ran */
        c->probes++;
    }
    free(res);
    return n < 0 ? -1 : 1;
}

/* A probe being stored: its row is written inside its run's transaction. */
typedef struct probe_arg {
    study_capacity *c;
    const char *choice;
    const char *phase;
    double rate;
    int replicas;
    const study_result *res; /* filled by study_simulate before its commit hook runs */
} probe_arg;

static int add_probe(void *arg, store *s, int64_t run_id, sim_err *err)
{
    probe_arg *a = arg;
    study_trial t;
    judge(a->c, a->res, &t);
    store_capacity_probe p = {.seq = a->c->probes,
                              .choice = a->choice,
                              .phase = strcmp(a->phase, "search") ? STORE_CAPACITY_CLUSTER
                                                                  : STORE_CAPACITY_SEARCH,
                              .rate = a->rate,
                              .replicas = a->replicas,
                              .ok = t.ok,
                              .saturated = t.saturated,
                              .run_id = run_id};
    return store_capacity_add_probe(s, a->c->search_id, &p, err);
}

/* Runs the choice at `rate` requests/s over `replicas` replicas (a disaggregated scenario:
 * `replicas` copies of its pools, or exactly `pool` prefill and decode replicas when pool is
 * given), stored with the search when there is a database. 0, or -1 with err. */
static int try_rate(study_capacity *c, const char *choice, const char *phase, double rate,
                    int replicas, const int *pool, study_trial *t, sim_err *err)
{
    int stored = stored_probe(c, choice, phase, rate, replicas, t, err);
    if (stored != 0)
        return stored < 0 ? -1 : 0;
    const char *sets[STUDY_MAX_SETS];
    choice_buf cb;
    char b_rate[64], b_rep[64], b_dec[64], b_n[64];
    int n = probe_sets(c, pool ? NULL : choice, sets, &cb); /* pool: the choice names it */
    scn_scenario scn;
    /* a first load finds the request count to scale with the replicas */
    if (study_load(c->file, sets, n, &scn, err) != 0) {
        scn_free(&scn);
        return -1;
    }
    int64_t nreq = scn.workload.num_requests;
    int has_trace = scn.workload.trace.present, pd = scn.engine.pd.enabled;
    int p0 = scn.engine.pd.pool[ENG_POOL_PREFILL].replicas;
    int d0 = scn.engine.pd.pool[ENG_POOL_DECODE].replicas;
    scn_free(&scn);
    snprintf(b_rate, sizeof b_rate, "%s=%.6g",
             has_trace ? "workload.trace.rate" : "workload.arrival.rate", rate);
    sets[n++] = b_rate;
    double scale = replicas;
    if (pd) {
        int p = pool ? pool[0] : p0 * replicas, d = pool ? pool[1] : d0 * replicas;
        snprintf(b_rep, sizeof b_rep, "prefill.replicas=%d", p);
        snprintf(b_dec, sizeof b_dec, "decode.replicas=%d", d);
        sets[n++] = b_rep;
        sets[n++] = b_dec;
        scale = (double)(p + d) / (p0 + d0);
    } else {
        snprintf(b_rep, sizeof b_rep, "replicas=%d", replicas);
        sets[n++] = b_rep;
    }
    if (nreq > 0 && scale > 1) {
        snprintf(b_n, sizeof b_n, "workload.num_requests=%lld",
                 (long long)ceil((double)nreq * scale));
        sets[n++] = b_n;
    }
    study_result *res = sim_xcalloc(1, sizeof *res);
    probe_arg pa = {c, choice, phase, rate, replicas, res};
    study_sink sink = {.s = c->db, .level = c->level, .hook = add_probe, .hook_arg = &pa};
    int rc = study_load(c->file, sets, n, &scn, err);
    if (rc == 0)
        rc = study_run(&scn, c->seed_given ? c->seed : scn.seed, c->db, c->search_id ? &sink : NULL,
                       NULL, res, err);
    if (rc == 0) {
        judge(c, res, t);
        c->probes++;
    }
    scn_free(&scn);
    free(res);
    return rc;
}

static int probe(study_capacity *c, const char *choice, const char *phase, double rate,
                 int replicas, study_trial *t, sim_err *err)
{
    if (try_rate(c, choice, phase, rate, replicas, NULL, t, err) != 0)
        return -1;
    if (c->probe)
        c->probe(c->probe_arg, choice, phase, rate, replicas, t);
    return 0;
}

/* The highest rate per replica within the SLOs: doubling, then bisection. */
static int search(study_capacity *c, const char *choice, study_answer *a, sim_err *err)
{
    double lo = 0, hi = 0.25;
    study_trial t, best = {0};
    for (;;) {
        if (probe(c, choice, "search", hi, 1, &t, err) != 0)
            return -1;
        if (!t.ok)
            break;
        lo = hi;
        best = t;
        if (hi > 1e5)
            break;
        hi *= 2;
    }
    while (hi - lo > c->precision * hi && lo < 1e5) {
        double mid = (lo + hi) / 2;
        if (probe(c, choice, "search", mid, 1, &t, err) != 0)
            return -1;
        if (t.ok) {
            lo = mid;
            best = t;
        } else
            hi = mid;
    }
    a->rate = lo;
    a->at_rate = best;
    return 0;
}

/* The replicas the target rate needs, checked by simulating the cluster. */
static int size_cluster(study_capacity *c, const char *choice, study_answer *a, sim_err *err)
{
    if (a->rate <= 0)
        return 0;
    int n = (int)ceil(c->target / a->rate - 1e-9);
    if (n < 1)
        n = 1;
    for (int tries = 0; tries < 64; tries++, n++) {
        if (probe(c, choice, "cluster", c->target, n, &a->at_target, err) != 0)
            return -1;
        if (a->at_target.ok) {
            a->replicas = n;
            return 0;
        }
    }
    return 0;
}

/* What one replica (a disaggregated scenario: one copy of its pools) of scn is made of. */
static void answer_layout(const scn_scenario *scn, study_answer *a)
{
    const eng_config *e = &scn->engine;
    if (!e->pd.enabled) {
        a->tp = e->tensor_parallel * e->data_parallel_attention *
                (e->pipeline_parallel > 1 ? e->pipeline_parallel : 1); /* GPUs a replica */
        return;
    }
    const eng_pool_config *p = &e->pd.pool[ENG_POOL_PREFILL], *d = &e->pd.pool[ENG_POOL_DECODE];
    a->prefill = p->replicas;
    a->decode = d->replicas;
    a->prefill_gpus = p->tensor_parallel * p->data_parallel_attention;
    a->decode_gpus = d->tensor_parallel * d->data_parallel_attention;
    a->tp = a->prefill * a->prefill_gpus + a->decode * a->decode_gpus;
}

int study_capacity_find(study_capacity *c, int i, study_answer *a, sim_err *err)
{
    memset(a, 0, sizeof *a);
    const char *choice = c->ncmp ? c->cmp_val[i] : NULL;
    scn_scenario scn;
    const char *sets[STUDY_MAX_SETS];
    choice_buf cb;
    int n = probe_sets(c, choice, sets, &cb);
    int rc = study_load(c->file, sets, n, &scn, err);
    if (rc == 0 && !scn.engine.pd.enabled && c->ncmp && strcmp(c->cmp_key, "pd") == 0)
        rc = sim_errf(err, "--compare pd: %s has no prefill and decode pools", c->file);
    if (rc == 0)
        answer_layout(&scn, a);
    scn_free(&scn);
    if (rc != 0 || search(c, choice, a, err) != 0)
        return -1;
    if (c->target > 0 && size_cluster(c, choice, a, err) != 0)
        return -1;
    if (!c->search_id)
        return 0;
    store_capacity_result res = {choice, a->rate, a->replicas, a->replicas * a->tp};
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
    char choice[32];
    int pool[2] = {p, d};
    snprintf(choice, sizeof choice, "%d:%d", p, d);
    if (try_rate(c, choice, "cluster", c->target, p + d, pool, t, err) != 0)
        return -1;
    if (c->probe)
        c->probe(c->probe_arg, choice, "cluster", c->target, p + d, t);
    return 0;
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

int study_capacity_pd_search(study_capacity *c, study_answer *out, int max, int *n, int *best,
                             sim_err *err)
{
    scn_scenario scn;
    *n = 0;
    *best = -1;
    if (c->target <= 0)
        return sim_errf(err, "the prefill:decode search needs --target-rate");
    int rc = study_capacity_load(c, &scn, err);
    if (rc == 0 && !scn.engine.pd.enabled)
        rc = sim_errf(err, "%s has no prefill and decode pools to split", c->file);
    study_answer unit = {0};
    if (rc == 0)
        answer_layout(&scn, &unit);
    scn_free(&scn);
    if (rc != 0)
        return -1;
    int hi = STUDY_PD_MAX;
    for (int p = 1; p <= STUDY_PD_MAX && *n < max; p++) {
        int cost = p * unit.prefill_gpus + unit.decode_gpus;
        if (*best >= 0 && cost >= out[*best].tp)
            break; /* even one decode replica costs more than the best split */
        study_trial t = {0};
        int d = fewest_decode(c, p, hi, &t, err);
        if (d < 0)
            return -1;
        if (d == 0)
            continue; /* too few prefill replicas: the decode pool cannot make up for it */
        study_answer *a = &out[(*n)++];
        *a = unit;
        a->prefill = p;
        a->decode = d;
        a->replicas = 1;
        a->tp = p * unit.prefill_gpus + d * unit.decode_gpus;
        a->at_target = t;
        a->rate = c->target;
        if (*best < 0 || a->tp < out[*best].tp)
            *best = *n - 1;
        if (c->search_id) {
            char choice[32];
            snprintf(choice, sizeof choice, "%d:%d", p, d);
            store_capacity_result res = {choice, 0, p + d, a->tp};
            if (store_capacity_add_result(c->db, c->search_id, &res, err) != 0)
                return -1;
        }
        hi = d;
        if (d == 1)
            break; /* more prefill replicas can only cost more */
    }
    return 0;
}
