/*
 * capacity.c: the capacity search (see study_capacity.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_capacity.h"
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
    const char *what = name, *pct = us + 1;
    if (strcmp(what, "e2e") == 0)
        what = "e2el";
    if (strcmp(what, "ttft") && strcmp(what, "tpot") && strcmp(what, "itl") && strcmp(what, "e2el"))
        return -1;
    if (strcmp(pct, "p50") && strcmp(pct, "p90") && strcmp(pct, "p95") && strcmp(pct, "p99"))
        return -1;
    if (strcmp(unit, "ms") == 0)
        out->limit_ms = v;
    else if (strcmp(unit, "s") == 0)
        out->limit_ms = v * 1000;
    else
        return -1;
    snprintf(out->metric, sizeof out->metric, "%s_%s_ms", strcmp(pct, "p50") ? pct : "median",
             what);
    snprintf(out->label, sizeof out->label, "%s_%s", what, pct);
    return 0;
}

int study_slo_parse(const char *list, study_slo *out, int max, int *n, sim_err *err)
{
    char *copy = sim_xstrdup(list), *save = NULL;
    int rc = 0;
    for (char *t = strtok_r(copy, ",", &save); t && rc == 0; t = strtok_r(NULL, ",", &save)) {
        if (*n == max)
            rc = sim_errf(err, "at most %d SLOs", max);
        else if (parse_one(t, &out[*n]) != 0)
            rc = sim_errf(err,
                          "bad SLO '%s': expected METRIC_PCT=VALUE[ms|s] with METRIC ttft, tpot, "
                          "itl or e2el and PCT p50, p90, p95 or p99 (e.g. ttft_p99=1000ms)",
                          t);
        else
            (*n)++;
    }
    free(copy);
    return rc;
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

/* The overrides of a probe: the user's, the choice's, and those given in extra. */
static int probe_sets(const study_capacity *c, const char *choice, const char **sets,
                      char *choice_buf, size_t len)
{
    int n = 0;
    for (int i = 0; i < c->nsets && n < STUDY_MAX_SETS - 4; i++)
        sets[n++] = c->sets[i];
    if (choice) {
        snprintf(choice_buf, len, "%s=%s", c->cmp_key, choice);
        sets[n++] = choice_buf;
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
    return store_capacity_open(c->db, &info, &c->search_id, err);
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

/* Runs the choice at `rate` requests/s over `replicas` replicas, stored with the search when
 * there is a database. 0, or -1 with err. */
static int try_rate(study_capacity *c, const char *choice, const char *phase, double rate,
                    int replicas, study_trial *t, sim_err *err)
{
    const char *sets[STUDY_MAX_SETS];
    char b_choice[256], b_rate[64], b_rep[64], b_n[64];
    int n = probe_sets(c, choice, sets, b_choice, sizeof b_choice);
    scn_scenario scn;
    /* a first load finds the request count to scale with the replicas */
    if (study_load(c->file, sets, n, &scn, err) != 0) {
        scn_free(&scn);
        return -1;
    }
    int64_t nreq = scn.workload.num_requests;
    int has_trace = scn.workload.trace.present;
    scn_free(&scn);
    snprintf(b_rate, sizeof b_rate, "%s=%.6g",
             has_trace ? "workload.trace.rate" : "workload.arrival.rate", rate);
    snprintf(b_rep, sizeof b_rep, "replicas=%d", replicas);
    sets[n++] = b_rate;
    sets[n++] = b_rep;
    if (nreq > 0 && replicas > 1) {
        snprintf(b_n, sizeof b_n, "workload.num_requests=%lld", (long long)nreq * replicas);
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
    if (try_rate(c, choice, phase, rate, replicas, t, err) != 0)
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

int study_capacity_find(study_capacity *c, int i, study_answer *a, sim_err *err)
{
    memset(a, 0, sizeof *a);
    const char *choice = c->ncmp ? c->cmp_val[i] : NULL;
    scn_scenario scn;
    const char *sets[STUDY_MAX_SETS];
    char b_choice[256];
    int n = probe_sets(c, choice, sets, b_choice, sizeof b_choice);
    int rc = study_load(c->file, sets, n, &scn, err);
    if (rc == 0)
        a->tp = scn.engine.tensor_parallel * scn.engine.data_parallel_attention;
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
