/*
 * sweep.c: the points of a sweep, their scenarios and seeds, running them in worker processes,
 * and the per-point table with intervals and paired differences.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_query.h"
#include "store_sweep.h"
#include "study_pool.h"
#include "study_sweep.h"

static int parse_range(const char *vals, study_vary *v, sim_err *err)
{
    double a, b, step;
    char tail;
    if (sscanf(vals, "%lf:%lf:%lf%c", &a, &b, &step, &tail) != 3)
        return 1; /* not a range */
    if (!(step > 0) || b < a)
        return sim_errf(err, "--vary %s: need START <= STOP and STEP > 0", v->key);
    for (int i = 0;; i++) {
        double x = a + i * step;
        if (x > b + step * 1e-9)
            break;
        if (v->n == STUDY_MAX_VALUES)
            return sim_errf(err, "--vary %s: more than %d values", v->key, STUDY_MAX_VALUES);
        char buf[64];
        snprintf(buf, sizeof buf, "%.10g", x);
        v->val[v->n++] = sim_xstrdup(buf);
    }
    return 0;
}

int study_vary_parse(const char *arg, study_vary *v, sim_err *err)
{
    memset(v, 0, sizeof *v);
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof v->key || !eq[1])
        return sim_errf(err, "--vary expects KEY=V1,V2,... or KEY=START:STOP:STEP, got '%s'", arg);
    memcpy(v->key, arg, (size_t)(eq - arg));
    v->key[eq - arg] = '\0';
    int rc = parse_range(eq + 1, v, err);
    if (rc <= 0)
        return rc;
    char *copy = sim_xstrdup(eq + 1), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (v->n == STUDY_MAX_VALUES)
            break;
        v->val[v->n++] = sim_xstrdup(t);
    }
    free(copy);
    return v->n ? 0 : sim_errf(err, "--vary %s: no values", v->key);
}

int study_sweep_add_vary(study_sweep *sw, const char *arg, sim_err *err)
{
    if (sw->nv == STUDY_MAX_KEYS)
        return sim_errf(err, "at most %d --vary keys", STUDY_MAX_KEYS);
    if (study_vary_parse(arg, &sw->v[sw->nv], err) != 0) {
        for (int i = 0; i < sw->v[sw->nv].n; i++)
            free(sw->v[sw->nv].val[i]);
        return -1;
    }
    sw->nv++;
    return 0;
}

void study_sweep_free(study_sweep *sw)
{
    for (int k = 0; k < sw->nv; k++)
        for (int i = 0; i < sw->v[k].n; i++)
            free(sw->v[k].val[i]);
    sw->nv = 0;
}

int study_sweep_digit(const study_sweep *sw, int p, int k)
{
    for (int j = sw->nv - 1; j > k; j--)
        p /= sw->v[j].n;
    return p % sw->v[k].n;
}

void study_sweep_params(const study_sweep *sw, int p, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int k = 0; k < sw->nv && off < len; k++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s=%s", k ? "," : "", sw->v[k].key,
                                sw->v[k].val[study_sweep_digit(sw, p, k)]);
}

int study_sweep_load_point(const study_sweep *sw, int p, scn_scenario *scn, sim_err *err)
{
    const char *sets[STUDY_MAX_SETS + STUDY_MAX_KEYS];
    char bufs[STUDY_MAX_KEYS][256];
    int n = 0;
    for (int i = 0; i < sw->nsets && n < STUDY_MAX_SETS; i++)
        sets[n++] = sw->sets[i];
    for (int k = 0; k < sw->nv; k++) {
        snprintf(bufs[k], sizeof bufs[k], "%s=%s", sw->v[k].key,
                 sw->v[k].val[study_sweep_digit(sw, p, k)]);
        sets[n++] = bufs[k];
    }
    return study_load(sw->file, sets, n, scn, err);
}

/* The grid's size and its description as stored; -1 with err when it does not fit. */
static int describe(study_sweep *sw, sim_err *err)
{
    sw->npoints = 1;
    size_t off = 0, cap = sizeof sw->spec;
    for (int k = 0; k < sw->nv; k++) {
        sw->npoints *= sw->v[k].n;
        off += (size_t)snprintf(sw->spec + off, off < cap ? cap - off : 0, "%s%s=", k ? ";" : "",
                                sw->v[k].key);
        for (int i = 0; i < sw->v[k].n; i++)
            off += (size_t)snprintf(sw->spec + off, off < cap ? cap - off : 0, "%s%s", i ? "," : "",
                                    sw->v[k].val[i]);
    }
    return off < cap ? 0 : sim_errf(err, "the varied values are too long");
}

/* The sweep's identity: a digest of everything that determines its points. */
static void sweep_key(const study_sweep *sw, const char *text, uint64_t seed, char *buf, size_t len)
{
    uint64_t h = 1469598103934665603ULL;
    const char *parts[3] = {text, sw->spec, sw->file};
    for (int i = 0; i < 3; i++)
        for (const char *c = parts[i]; *c; c++)
            h = (h ^ (unsigned char)*c) * 1099511628211ULL;
    snprintf(buf, len, "%016llx-r%d-s%llu-%s", (unsigned long long)h, sw->reps,
             (unsigned long long)seed, store_level_name(sw->level));
}

/* Records point p's parameters and adds its repetitions that are not stored to pending. */
static int register_point(study_sweep *sw, store *s, int p, int32_t *pending, int *n, int *stored,
                          sim_err *err)
{
    const char *keys[STUDY_MAX_KEYS], *vals[STUDY_MAX_KEYS];
    for (int k = 0; k < sw->nv; k++) {
        keys[k] = sw->v[k].key;
        vals[k] = sw->v[k].val[study_sweep_digit(sw, p, k)];
    }
    if (store_sweep_set_params(s, sw->id, p, sw->nv, keys, vals, err) != 0)
        return -1;
    for (int r = 0; r < sw->reps; r++) {
        int has = store_sweep_has(s, sw->id, p, r, err);
        if (has < 0)
            return -1;
        if (has)
            (*stored)++;
        else
            pending[(*n)++] = p * sw->reps + r;
    }
    return 0;
}

int study_sweep_check(study_sweep *sw, scn_scenario *base, sim_err *err)
{
    memset(base, 0, sizeof *base);
    if (describe(sw, err) != 0 || study_load(sw->file, sw->sets, sw->nsets, base, err) != 0)
        return -1;
    for (int p = 0; p < sw->npoints; p++) {
        scn_scenario one;
        int bad = study_sweep_load_point(sw, p, &one, err);
        scn_free(&one);
        if (bad)
            return -1;
    }
    return 0;
}

int study_sweep_prepare(study_sweep *sw, store *s, const scn_scenario *base, int32_t **pending,
                        int *npending, int *stored, sim_err *err)
{
    *pending = NULL;
    *npending = *stored = 0;
    uint64_t seed = sw->seed_given ? sw->seed : base->seed;
    char key[128];
    sweep_key(sw, base->text, seed, key, sizeof key);
    if (store_sweep_open(s, key, sw->file, base->text, sw->spec, sw->reps, seed, &sw->id, err) != 0)
        return -1;
    *pending = sim_xmalloc((size_t)sw->npoints * (size_t)sw->reps * sizeof **pending);
    for (int p = 0; p < sw->npoints; p++)
        if (register_point(sw, s, p, *pending, npending, stored, err) != 0)
            return -1;
    return 0;
}

typedef struct hook_arg {
    const study_sweep *sw;
    int point, rep;
    uint64_t seed;
    const char *params;
    const study_result *res; /* filled by study_simulate before its commit hook runs */
} hook_arg;

static int add_point(void *arg, store *s, int64_t run_id, sim_err *err)
{
    hook_arg *h = arg;
    return store_sweep_add(s, h->sw->id, h->point, h->rep, h->seed, run_id, h->params,
                           h->res->saturated, err);
}

int study_sweep_run_task(const study_sweep *sw, store *s, int32_t t, sim_err *err)
{
    int p = t / sw->reps, rep = t % sw->reps;
    scn_scenario scn;
    study_result *res = sim_xcalloc(1, sizeof *res);
    char params[1024];
    int rc = -1;
    if (study_sweep_load_point(sw, p, &scn, err) == 0) {
        study_sweep_params(sw, p, params, sizeof params);
        /* a point's own seed: a sweep may vary `seed` itself */
        uint64_t seed = (sw->seed_given ? sw->seed : scn.seed) + (uint64_t)rep;
        hook_arg h = {sw, p, rep, seed, params, res};
        study_sink sink = {
            .s = s, .level = sw->level, .buffered = 1, .hook = add_point, .hook_arg = &h};
        rc = study_run(&scn, seed, s, &sink, NULL, res, err);
    }
    scn_free(&scn);
    free(res);
    return rc;
}

/* ---- the worker pool ---- */

typedef struct pool_arg {
    const study_sweep *sw;
    const char *db;
    void (*done)(void *arg, int32_t task, int ok, const char *msg, int finished, int total);
    void *done_arg;
} pool_arg;

static void *open_worker(void *arg, sim_err *err)
{
    return store_open(((pool_arg *)arg)->db, err);
}

static int run_worker(void *arg, void *worker, int32_t task, sim_err *err)
{
    return study_sweep_run_task(((pool_arg *)arg)->sw, worker, task, err);
}

static void close_worker(void *worker)
{
    store_close(worker);
}

static void task_done(void *arg, int32_t task, int ok, const char *msg, int finished, int total)
{
    pool_arg *a = arg;
    if (a->done)
        a->done(a->done_arg, task, ok, msg, finished, total);
}

int study_sweep_run(const study_sweep *sw, const char *db, int jobs, const int32_t *pending, int n,
                    void (*done)(void *arg, int32_t task, int ok, const char *msg, int finished,
                                 int total),
                    void *arg)
{
    static const study_pool_ops ops = {open_worker, run_worker, close_worker, task_done};
    pool_arg a = {sw, db, done, arg};
    return study_pool_run(&ops, &a, jobs, pending, n);
}

int study_sweep_from_store(store *s, int64_t id, study_sweep *sw, sim_err *err)
{
    memset(sw, 0, sizeof *sw);
    store_sweep_meta m;
    if (store_sweep_get(s, id, &m, err) != 0)
        return -1;
    /* the description as describe() stored it: "k1=v1,v2;k2=v3,..." */
    char *copy = sim_xstrdup(m.varied), *save = NULL;
    for (char *kv = strtok_r(copy, ";", &save); kv; kv = strtok_r(NULL, ";", &save))
        if (study_sweep_add_vary(sw, kv, err) != 0) {
            free(copy);
            study_sweep_free(sw);
            return sim_err_prefix(err, "%s: sweep %lld", store_path(s), (long long)id);
        }
    free(copy);
    sw->npoints = 1;
    for (int k = 0; k < sw->nv; k++)
        sw->npoints *= sw->v[k].n;
    sw->reps = m.reps > 0 ? m.reps : 1;
    sw->seed = m.base_seed;
    sw->seed_given = 1;
    sw->id = id;
    snprintf(sw->spec, sizeof sw->spec, "%s", m.varied);
    char sql[128];
    int64_t maxp;
    snprintf(sql, sizeof sql,
             "SELECT coalesce(max(point), -1) FROM sweep_points WHERE sweep_id = %lld",
             (long long)id);
    if (store_query_int(s, sql, &maxp, err) != 0) {
        study_sweep_free(sw);
        return -1;
    }
    if (maxp >= sw->npoints) {
        study_sweep_free(sw);
        return sim_errf(err, "%s: sweep %lld stores point %lld but describes %d points (%s)",
                        store_path(s), (long long)id, (long long)maxp, sw->npoints, m.varied);
    }
    return 0;
}

/* ---- the table ---- */

typedef struct loading {
    study_sweep_table *t;
    int m;
} loading;

static void collect(void *arg, int point, int rep, double value, int saturated)
{
    loading *l = arg;
    if (point < 0 || point >= l->t->npoints || rep < 0 || rep >= l->t->reps)
        return;
    study_cell *c = study_sweep_cell(l->t, l->m, point);
    c->n++;
    c->saturated += saturated != 0;
    c->rep[rep] = value;
}

/* The interval over the repetitions that have a value (in repetition order). */
static sim_interval over_reps(const study_cell *c, const study_cell *base, int reps)
{
    double sum = 0, sum2 = 0;
    int n = 0;
    for (int r = 0; r < reps; r++) {
        double x = base ? c->rep[r] - base->rep[r] : c->rep[r];
        if (isnan(x))
            continue;
        sum += x;
        sum2 += x * x;
        n++;
    }
    return sim_t_interval(sum, sum2, n, 0.95);
}

int study_sweep_table_load(const study_sweep *sw, store *s, const char *const *metrics,
                           int nmetrics, study_sweep_table *t, sim_err *err)
{
    t->nmetrics = nmetrics;
    t->npoints = sw->npoints;
    t->reps = sw->reps;
    t->metrics = metrics;
    t->c = sim_xcalloc((size_t)nmetrics * (size_t)sw->npoints, sizeof *t->c);
    for (int i = 0; i < nmetrics * sw->npoints; i++) {
        t->c[i].rep = sim_xmalloc((size_t)sw->reps * sizeof(double));
        for (int r = 0; r < sw->reps; r++)
            t->c[i].rep[r] = NAN;
    }
    for (int m = 0; m < nmetrics; m++) {
        loading l = {t, m};
        if (store_sweep_values(s, sw->id, metrics[m], collect, &l, err) != 0)
            return -1;
        for (int p = 0; p < sw->npoints; p++) {
            study_cell *c = study_sweep_cell(t, m, p);
            c->v = over_reps(c, NULL, sw->reps);
        }
    }
    return 0;
}

void study_sweep_table_free(study_sweep_table *t)
{
    for (int i = 0; t->c && i < t->nmetrics * t->npoints; i++)
        free(t->c[i].rep);
    free(t->c);
    t->c = NULL;
}

int study_sweep_paired_key(const study_sweep *sw)
{
    for (int k = 0; k < sw->nv; k++)
        if (strcmp(sw->v[k].key, "scheduler.name") == 0)
            return sw->v[k].n >= 2 ? k : -1;
    return -1;
}

int study_sweep_base_point(const study_sweep *sw, int p, int k)
{
    int stride = 1;
    for (int j = sw->nv - 1; j > k; j--)
        stride *= sw->v[j].n;
    return p - study_sweep_digit(sw, p, k) * stride;
}

sim_interval study_sweep_paired(const study_sweep_table *t, int m, int p, int base)
{
    return over_reps(study_sweep_cell(t, m, p), study_sweep_cell(t, m, base), t->reps);
}
