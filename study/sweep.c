/*
 * sweep.c: the points of a sweep, their scenarios and seeds, shards, running them in worker
 * processes with this process as the one writer, and the per-point table with intervals and
 * paired differences.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store_query.h"
#include "store_sweep.h"
#include "study_pool.h"
#include "study_sweep.h"

#define POINT_SET 256 /* bytes of one varied key=value override */

/* Value text appended to v's; -1 with err past STUDY_MAX_VALUES. */
static int add_value(study_vary *v, const char *text, sim_err *err)
{
    if (v->n == STUDY_MAX_VALUES)
        return sim_errf(err, "--vary %s: more than %d values", v->key, STUDY_MAX_VALUES);
    v->val[v->n++] = sim_xstrdup(text);
    return 0;
}

/* START:STOP:STEP into v's values; 1 when vals is not a range, -1 with err. */
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
        char buf[64];
        snprintf(buf, sizeof buf, "%.10g", x);
        if (add_value(v, buf, err) != 0)
            return -1;
    }
    return 0;
}

/* The values V1,V2,... of a --vary list into v. */
static int parse_list(const char *vals, study_vary *v, sim_err *err)
{
    char *copy = sim_xstrdup(vals), *save = NULL;
    int rc = 0;
    for (char *t = strtok_r(copy, ",", &save); t && rc == 0; t = strtok_r(NULL, ",", &save))
        rc = add_value(v, t, err);
    free(copy);
    return rc != 0 || v->n ? rc : sim_errf(err, "--vary %s: no values", v->key);
}

/* The KEY of KEY=VALUES into v->key; returns the values, or NULL with err. */
static const char *vary_key(const char *arg, study_vary *v, sim_err *err)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof v->key || !eq[1]) {
        sim_errf(err, "--vary expects KEY=V1,V2,... or KEY=START:STOP:STEP, got '%s'", arg);
        return NULL;
    }
    memcpy(v->key, arg, (size_t)(eq - arg));
    v->key[eq - arg] = '\0';
    return eq + 1;
}

int study_vary_parse(const char *arg, study_vary *v, sim_err *err)
{
    memset(v, 0, sizeof *v);
    const char *vals = vary_key(arg, v, err);
    if (!vals)
        return -1;
    /* the stored description is "k1=v1,v2;k2=...": a ';' in a key or value would split it */
    if (strchr(arg, ';'))
        return sim_errf(err,
                        "--vary %s: a key or value may not hold ';' (it separates the keys "
                        "in the sweep's stored description)",
                        v->key);
    int rc = parse_range(vals, v, err);
    return rc <= 0 ? rc : parse_list(vals, v, err);
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

int study_sweep_set_shard(study_sweep *sw, const char *arg, sim_err *err)
{
    int i, n;
    char tail;
    if (sscanf(arg, "%d/%d%c", &i, &n, &tail) != 2 || n < 1 || i < 1 || i > n)
        return sim_errf(err, "--shard expects I/N with 1 <= I <= N, got '%s'", arg);
    sw->shard = i;
    sw->nshards = n;
    return 0;
}

int study_sweep_in_shard(const study_sweep *sw, int64_t t)
{
    return sw->nshards <= 1 || t % sw->nshards == sw->shard - 1;
}

void study_sweep_free(study_sweep *sw)
{
    for (int k = 0; k < sw->nv; k++)
        for (int i = 0; i < sw->v[k].n; i++)
            free(sw->v[k].val[i]);
    sw->nv = 0;
    free(sw->text);
    sw->text = NULL;
}

int64_t study_sweep_points_of(const char *varied)
{
    int64_t n = 1; /* at most STUDY_MAX_POINTS: more is no sweep of ours */
    int keys = 0;
    for (const char *k = varied; *k;) {
        const char *end = strchr(k, ';'), *eq = strchr(k, '=');
        if (!end)
            end = k + strlen(k);
        if (!eq || eq > end || eq == k)
            return 0;
        int64_t values = 1;
        for (const char *c = eq + 1; c < end; c++)
            values += *c == ',';
        if (values > STUDY_MAX_POINTS / n)
            return 0;
        n *= values;
        keys++;
        k = *end ? end + 1 : end;
    }
    return keys ? n : 0;
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

/* Point p's overrides into sets (the user's --set, then its values, written in bufs): their
 * count. */
static int point_sets(const study_sweep *sw, int p, const char **sets, char (*bufs)[POINT_SET])
{
    int n = 0;
    for (int i = 0; i < sw->nsets && n < STUDY_MAX_SETS; i++)
        sets[n++] = sw->sets[i];
    for (int k = 0; k < sw->nv; k++) {
        snprintf(bufs[k], sizeof bufs[k], "%s=%s", sw->v[k].key,
                 sw->v[k].val[study_sweep_digit(sw, p, k)]);
        sets[n++] = bufs[k];
    }
    return n;
}

int study_sweep_load_point(const study_sweep *sw, int p, scn_scenario *scn, sim_err *err)
{
    const char *sets[STUDY_MAX_SETS + STUDY_MAX_KEYS];
    char bufs[STUDY_MAX_KEYS][POINT_SET];
    int n = point_sets(sw, p, sets, bufs);
    if (sw->text)
        return study_load_text(sw->file, sw->text, sets, n, scn, err);
    return study_load(sw->file, sets, n, scn, err);
}

/* sw->npoints: the product of the keys' value counts, checked: -1 with err when it exceeds
 * STUDY_MAX_POINTS (an int product overflowed: 4 keys of 250 values; a database's description
 * is held to the same limit, so reading one never allocates a table for billions of points). */
/* "k1 (n1) x k2 (n2) ...": the keys and their value counts. */
static void grid_dims(const study_sweep *sw, char *dims, size_t cap)
{
    size_t off = 0;
    dims[0] = '\0';
    for (int j = 0; j < sw->nv && off < cap; j++)
        off += (size_t)snprintf(dims + off, cap - off, "%s%s (%d)", j ? " x " : "", sw->v[j].key,
                                sw->v[j].n);
}

static int grid_size(study_sweep *sw, sim_err *err)
{
    int64_t n = 1;
    for (int k = 0; k < sw->nv; k++) {
        if (sw->v[k].n > STUDY_MAX_POINTS / n) {
            char dims[256];
            grid_dims(sw, dims, sizeof dims);
            return sim_errf(err,
                            "%s: more points than a sweep may have (%lld); vary fewer keys or "
                            "values, or split the sweep",
                            dims, (long long)STUDY_MAX_POINTS);
        }
        n *= sw->v[k].n;
    }
    sw->npoints = (int)n;
    return 0;
}

/* Appends key k's "KEY=V1,V2" (";" before all but the first) to buf at off; returns the new
 * length, as snprintf would (past cap when it did not fit). */
static size_t describe_key(const study_vary *v, int k, char *buf, size_t off, size_t cap)
{
    off += (size_t)snprintf(buf + off, off < cap ? cap - off : 0, "%s%s=", k ? ";" : "", v->key);
    for (int i = 0; i < v->n; i++)
        off +=
            (size_t)snprintf(buf + off, off < cap ? cap - off : 0, "%s%s", i ? "," : "", v->val[i]);
    return off;
}

/* The grid's size and its description as stored; -1 with err when it does not fit. */
static int describe(study_sweep *sw, sim_err *err)
{
    if (grid_size(sw, err) != 0)
        return -1;
    size_t off = 0, cap = sizeof sw->spec;
    for (int k = 0; k < sw->nv; k++)
        off = describe_key(&sw->v[k], k, sw->spec, off, cap);
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

/* Whether any repetition of point p is in this shard. */
static int point_in_shard(const study_sweep *sw, int p)
{
    for (int r = 0; r < sw->reps; r++)
        if (study_sweep_in_shard(sw, (int64_t)p * sw->reps + r))
            return 1;
    return 0;
}

/* Stores point p's keys and values. 0, or -1 with err. */
static int store_point_params(const study_sweep *sw, store *s, int p, sim_err *err)
{
    const char *keys[STUDY_MAX_KEYS], *vals[STUDY_MAX_KEYS];
    for (int k = 0; k < sw->nv; k++) {
        keys[k] = sw->v[k].key;
        vals[k] = sw->v[k].val[study_sweep_digit(sw, p, k)];
    }
    return store_sweep_set_params(s, sw->id, p, sw->nv, keys, vals, err);
}

/* Repetition r of point p: counted as stored, or added to pending. 0, or -1 with err. */
static int count_rep(const study_sweep *sw, store *s, int p, int r, int32_t *pending, int *n,
                     int *stored, sim_err *err)
{
    int has = store_sweep_has(s, sw->id, p, r, err);
    if (has < 0)
        return -1;
    if (has)
        (*stored)++;
    else
        pending[(*n)++] = p * sw->reps + r;
    return 0;
}

/* Records point p's parameters and adds its repetitions in the shard that are not stored to
 * pending. */
static int register_point(study_sweep *sw, store *s, int p, int32_t *pending, int *n, int *stored,
                          sim_err *err)
{
    if (!point_in_shard(sw, p))
        return 0;
    if (store_point_params(sw, s, p, err) != 0)
        return -1;
    for (int r = 0; r < sw->reps; r++)
        if (study_sweep_in_shard(sw, (int64_t)p * sw->reps + r) &&
            count_rep(sw, s, p, r, pending, n, stored, err) != 0)
            return -1;
    return 0;
}

/* Whether every point's scenario loads (before any run starts). 0, or -1 with err. */
static int load_each_point(const study_sweep *sw, sim_err *err)
{
    for (int p = 0; p < sw->npoints; p++) {
        scn_scenario one;
        int bad = study_sweep_load_point(sw, p, &one, err);
        scn_free(&one);
        if (bad)
            return -1;
    }
    return 0;
}

int study_sweep_check(study_sweep *sw, scn_scenario *base, sim_err *err)
{
    memset(base, 0, sizeof *base);
    if (describe(sw, err) != 0)
        return -1;
    if (!sw->text && !(sw->text = scn_read_text(sw->file, err)))
        return -1;
    if (study_load_text(sw->file, sw->text, sw->sets, sw->nsets, base, err) != 0)
        return -1;
    if ((int64_t)sw->npoints * sw->reps > STUDY_MAX_TASKS)
        return sim_errf(err, "%d points x %d repetitions: more tasks than a sweep may have (%lld)",
                        sw->npoints, sw->reps, (long long)STUDY_MAX_TASKS);
    return load_each_point(sw, err);
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
    /* one transaction for every point's parameters: one commit, not one per point */
    if (store_begin(s, err) != 0)
        return -1;
    for (int p = 0; p < sw->npoints; p++)
        if (register_point(sw, s, p, *pending, npending, stored, err) != 0) {
            store_rollback(s);
            return -1;
        }
    return store_commit(s, err);
}

/* ---- workers: simulate and spool ---- */

/* Everything study_cost_new reads from a scenario: equal keys give the same cost models. */
typedef struct cost_key {
    eng_model model;
    eng_gpu gpu;
    eng_dtype dtype, kv_dtype;
    eng_layout layout;
    int32_t max_len, tp;
    eng_spec_method spec;
    int has_draft;
    eng_model draft; /* zero without a drafter */
    char profile[64], borrow[32];
    int pd; /* disaggregated (-1) or a mixed pool's groups (n): each pool's GPU and layout */
    eng_gpu pool_gpu[ENG_POOLS_MAX]; /* zero when aggregated */
    eng_layout pool_layout[ENG_POOLS_MAX];
    int32_t pool_tp[ENG_POOLS_MAX];
    scn_cost cost; /* cost_model: {engine} (moe_skew is read into the layouts) */
} cost_key;

/* The key of scn, padding included (zeroed first), so that memcmp compares it. */
static void key_of(const scn_scenario *scn, cost_key *k)
{
    const eng_config *c = &scn->engine;
    memset(k, 0, sizeof *k);
    memcpy(&k->model, &c->model, sizeof k->model);
    memcpy(&k->gpu, &c->gpu, sizeof k->gpu);
    k->dtype = eng_config_dtype(c);
    k->kv_dtype = eng_config_kv_dtype(c);
    eng_config_layout(c, &k->layout);
    k->max_len = c->max_model_len;
    k->tp = c->tensor_parallel;
    k->spec = c->spec.method;
    k->has_draft = c->spec.has_draft;
    if (k->spec != ENG_SPEC_NONE && k->has_draft)
        memcpy(&k->draft, &c->spec.draft, sizeof k->draft);
    snprintf(k->profile, sizeof k->profile, "%s", scn->profile);
    snprintf(k->borrow, sizeof k->borrow, "%s", scn->profile_borrow);
    memcpy(k->cost.engine, scn->cost.engine, sizeof k->cost.engine);
    k->cost.eager_launch_ns = scn->cost.eager_launch_ns;
    memcpy(k->cost.act_quant, scn->cost.act_quant, sizeof k->cost.act_quant);
    k->pd = c->pd.enabled ? -1 : c->groups.n; /* a mixed pool's groups likewise */
    for (int p = 0; k->pd && p < eng_config_pools(c); p++) {
        eng_config pc;
        eng_config_pool(c, p, &pc);
        memcpy(&k->pool_gpu[p], &pc.gpu, sizeof pc.gpu);
        eng_config_layout(&pc, &k->pool_layout[p]);
        k->pool_tp[p] = pc.tensor_parallel;
    }
}

typedef struct sweep_worker {
    const study_sweep *sw;
    const char *db;
    store *ro;        /* read-only, for `profile:` points; opened on first need */
    scn_cache *cache; /* whole-file length tables */
    int point;        /* the point scn holds; -1: none */
    scn_scenario scn;
    int have_cost; /* cost is the cost model of `key` */
    study_cost cost;
    cost_key key;
} sweep_worker;

typedef struct pool_arg {
    const study_sweep *sw;
    store *s; /* the writer's connection (parent) */
    const char *db;
    void (*done)(void *arg, int32_t task, int ok, const char *msg, int finished, int total);
    void *done_arg;
    int finished, total;
    study_sweep_stats *st;
} pool_arg;

static void *open_worker(void *arg, sim_err *err)
{
    pool_arg *a = arg;
    sweep_worker *w = sim_xcalloc(1, sizeof *w);
    w->sw = a->sw;
    w->db = a->db;
    w->cache = scn_cache_new();
    w->point = -1;
    return w;
}

static void close_worker(void *worker)
{
    sweep_worker *w = worker;
    if (w->have_cost)
        study_cost_free(&w->cost);
    scn_free(&w->scn);
    scn_cache_free(w->cache);
    store_close(w->ro);
    free(w);
}

/* The scenario of point p, loaded again only when the last task was another point. */
static int point_scenario(sweep_worker *w, int p, sim_err *err)
{
    if (w->point == p)
        return 0;
    scn_free(&w->scn);
    w->point = -1;
    if (study_sweep_load_point(w->sw, p, &w->scn, err) != 0)
        return -1;
    w->point = p;
    return 0;
}

/* The cost model of w->scn: the last one when everything it was built from is the same (the
 * model, GPU, dtypes, layout, context, drafter and profile: a sweep over rates or schedulers
 * builds it once). */
static int point_cost(sweep_worker *w, sim_err *err)
{
    const scn_scenario *scn = &w->scn;
    cost_key k;
    key_of(scn, &k);
    if (w->have_cost && memcmp(&w->key, &k, sizeof k) == 0)
        return 0;
    if (w->have_cost)
        study_cost_free(&w->cost);
    w->have_cost = 0;
    if (scn->profile[0] && !w->ro && !(w->ro = store_open_readonly(w->db, err)))
        return -1;
    if (study_cost_new(scn, w->ro, &w->cost, err) != 0) {
        study_cost_free(&w->cost);
        return -1;
    }
    w->have_cost = 1;
    w->key = k;
    return 0;
}

/* Simulates task t and spools its run to out. */
static int run_worker(void *arg, void *worker, int32_t t, FILE *out, sim_err *err)
{
    sweep_worker *w = worker;
    const study_sweep *sw = w->sw;
    int p = t / sw->reps, rep = t % sw->reps;
    if (point_scenario(w, p, err) != 0 || point_cost(w, err) != 0)
        return -1;
    /* a point's own seed: a sweep may vary `seed` itself */
    uint64_t seed = (sw->seed_given ? sw->seed : w->scn.seed) + (uint64_t)rep;
    study_sink sink = {.spool = out, .level = sw->level};
    study_hooks hooks = {.cache = w->cache};
    study_result *res = sim_xmalloc(sizeof *res);
    int rc = study_simulate(&w->scn, seed, &w->cost, &sink, &hooks, res, err);
    free(res);
    return rc;
}

/* ---- the writer: this process ---- */

typedef struct hook_arg {
    const study_sweep *sw;
    int point, rep;
    const char *params;
    const store_run_summary *sum; /* filled by the replay before the hook runs */
} hook_arg;

static double summary_metric(const store_run_summary *sum, const char *name)
{
    for (int i = 0; i < sum->n; i++)
        if (strcmp(sum->m[i].name, name) == 0)
            return sum->m[i].value;
    return 0;
}

/* Inside the run's transaction: its sweep_points row, unless another process stored the point
 * first (then 1: the run is rolled back quietly). */
static int add_point(void *arg, store *s, int64_t run_id, sim_err *err)
{
    hook_arg *h = arg;
    int has = store_sweep_has(s, h->sw->id, h->point, h->rep, err);
    if (has != 0)
        return has;
    return store_sweep_add(s, h->sw->id, h->point, h->rep, h->sum->seed, run_id, h->params,
                           summary_metric(h->sum, "saturated") != 0, err);
}

/* Before a task is sent: skip it when another process has stored it meanwhile. */
static int skip_task(void *arg, int32_t t)
{
    pool_arg *a = arg;
    sim_err err = {{0}};
    if (store_sweep_has(a->s, a->sw->id, t / a->sw->reps, t % a->sw->reps, &err) != 1)
        return 0;
    a->st->skipped++;
    if (a->done)
        a->done(a->done_arg, t, 1, "stored by another process", ++a->finished, a->total);
    return 1;
}

/* Writes task t's spooled run, trying again (from the spool) while another connection holds
 * the lock. 0 written, 1 stored meanwhile by another process, -1 with err. */
static int write_run(pool_arg *a, int32_t t, FILE *in, int64_t len, sim_err *err)
{
    const study_sweep *sw = a->sw;
    char params[1024];
    study_sweep_params(sw, t / sw->reps, params, sizeof params);
    store_run_summary *sum = sim_xmalloc(sizeof *sum);
    hook_arg h = {sw, t / sw->reps, t % sw->reps, params, sum};
    off_t start = ftello(in);
    int rc = -1;
    for (int attempt = 0; attempt < 5; attempt++) {
        if (attempt > 0 && fseeko(in, start, SEEK_SET) != 0)
            break;
        rc = store_run_replay(a->s, in, len, add_point, &h, sum, err);
        if (rc >= 0 || !store_was_busy(a->s))
            break;
    }
    free(sum);
    return rc;
}

/* Counts a task's outcome: written (0), stored by another process (1) or failed (-1). */
static void count_outcome(study_sweep_stats *st, int rc)
{
    if (rc == 0)
        st->stored++;
    else if (rc == 1)
        st->skipped++;
    else
        st->failed++;
}

static int task_done(void *arg, int32_t t, int ok, const char *msg, FILE *in, int64_t len)
{
    pool_arg *a = arg;
    sim_err err = {{0}};
    int rc = ok ? write_run(a, t, in, len, &err) : -1;
    count_outcome(a->st, rc);
    if (a->done)
        a->done(a->done_arg, t, rc >= 0,
                rc == 1 ? "stored by another process"
                : ok    ? err.msg
                        : msg,
                ++a->finished, a->total);
    return rc < 0 ? -1 : 0;
}

int study_sweep_run(const study_sweep *sw, store *s, const char *db, int jobs,
                    const int32_t *pending, int n,
                    void (*done)(void *arg, int32_t task, int ok, const char *msg, int finished,
                                 int total),
                    void *arg, study_sweep_stats *st, sim_err *err)
{
    static const study_pool_ops ops = {open_worker, run_worker, close_worker,
                                       task_done,   skip_task,  0};
    memset(st, 0, sizeof *st);
    pool_arg a = {sw, s, db, done, arg, 0, n, st};
    /* the only writer waits for other processes' locks (a reader's checkpoint, a second sweep
     * writing the same database) rather than losing a finished run */
    int wait_ms = store_busy_timeout(s);
    store_set_busy_timeout(s, 600000);
    study_pool_stats ps;
    int rc = study_pool_run(&ops, &a, jobs, pending, n, &ps, err);
    store_set_busy_timeout(s, wait_ms);
    if (rc != 0)
        return -1;
    st->failed = ps.failed; /* with the tasks lost with a worker, which never reached task_done */
    return 0;
}

/* ---- merging ---- */

typedef struct listing {
    const study_sweep_merge_ops *ops;
    void *arg;
} listing;

static int list_sweep(void *arg, const store_sweep_row *row)
{
    listing *l = arg;
    int64_t points = study_sweep_points_of(row->varied);
    l->ops->sweep(l->arg, row, points * row->reps);
    return 0;
}

/* Merges each input into the database at path in turn, telling ops->input; stops at the first
 * that fails. */
static int merge_inputs(const char *path, const char *const *in, int n,
                        const study_sweep_merge_ops *ops, void *arg, sim_err *err)
{
    store *s = store_open(path, err);
    if (!s)
        return -1;
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        store_merge_stats st;
        rc = store_merge(s, in[i], &st, err);
        if (rc == 0 && ops->input)
            ops->input(arg, in[i], &st);
    }
    store_close(s);
    return rc;
}

/* Puts the finished database built at tmp at out: hard-linked into place, or, when out appeared
 * meanwhile (another process created it) or the file system has no hard links, merged into out,
 * which keeps whatever that process wrote. 0, or -1 with err. */
static int place_built(const char *tmp, const char *out, sim_err *err)
{
    if (link(tmp, out) == 0)
        return 0;
    if (errno != EEXIST && errno != EPERM && errno != EOPNOTSUPP)
        return sim_errf(err, "%s: cannot create database: %s", out, strerror(errno));
    store *s = store_open(out, err);
    if (!s)
        return -1;
    store_merge_stats st;
    int rc = store_merge(s, tmp, &st, err);
    store_close(s);
    return rc;
}

/* Merges the inputs into a new database for out, built whole under a name of this process's own
 * beside it and put in place only when every input merged (as store_open makes a new database):
 * a failure removes only that private file, never a database at out, which another process may
 * have opened meanwhile. */
static int merge_new(const char *out, const char *const *in, int n,
                     const study_sweep_merge_ops *ops, void *arg, sim_err *err)
{
    char tmp[600];
    store_private_path(tmp, sizeof tmp, out, "merge");
    int rc = merge_inputs(tmp, in, n, ops, arg, err) == 0 ? place_built(tmp, out, err) : -1;
    store_remove_files(tmp);
    return rc;
}

/* Tells ops->sweep every sweep of the database at out. */
static int list_sweeps(const char *out, const study_sweep_merge_ops *ops, void *arg, sim_err *err)
{
    store *s = store_open_readonly(out, err);
    if (!s)
        return -1;
    listing l = {ops, arg};
    int rc = store_sweep_list(s, list_sweep, &l, err);
    store_close(s);
    return rc;
}

/* Every input checked (store_merge_check) before the output is touched: 0, or -1 with err. */
static int check_inputs(const char *out, const char *const *in, int n, sim_err *err)
{
    for (int i = 0; i < n; i++)
        if (store_merge_check(out, in[i], err) != 0)
            return -1;
    return 0;
}

int study_sweep_merge(const char *out, const char *const *in, int n,
                      const study_sweep_merge_ops *ops, void *arg, sim_err *err)
{
    if (check_inputs(out, in, n, err) != 0)
        return -1;
    struct stat sb;
    int rc = stat(out, &sb) == 0 ? merge_inputs(out, in, n, ops, arg, err)
                                 : merge_new(out, in, n, ops, arg, err);
    if (rc == 0 && ops->sweep)
        rc = list_sweeps(out, ops, arg, err);
    return rc;
}

/* The varied keys of a stored description, as describe() wrote it: "k1=v1,v2;k2=v3,...". 0, or
 * -1 with err. */
static int add_described(study_sweep *sw, const char *varied, sim_err *err)
{
    char *copy = sim_xstrdup(varied), *save = NULL;
    int rc = 0;
    for (char *kv = strtok_r(copy, ";", &save); kv && rc == 0; kv = strtok_r(NULL, ";", &save))
        rc = study_sweep_add_vary(sw, kv, err);
    free(copy);
    return rc;
}

/* Whether the points stored of sweep sw->id lie in the grid its description (varied) makes. 0,
 * or -1 with err. */
static int check_points(store *s, const study_sweep *sw, const char *varied, sim_err *err)
{
    char sql[128];
    int64_t maxp;
    snprintf(sql, sizeof sql,
             "SELECT coalesce(max(point), -1) FROM sweep_points WHERE sweep_id = %lld",
             (long long)sw->id);
    if (store_query_int(s, sql, &maxp, err) != 0)
        return -1;
    if (maxp >= sw->npoints)
        return sim_errf(err, "%s: sweep %lld stores point %lld but describes %d points (%s)",
                        store_path(s), (long long)sw->id, (long long)maxp, sw->npoints, varied);
    return 0;
}

int study_sweep_from_store(store *s, int64_t id, study_sweep *sw, sim_err *err)
{
    memset(sw, 0, sizeof *sw);
    store_sweep_meta m;
    if (store_sweep_get(s, id, &m, err) != 0)
        return -1;
    if (add_described(sw, m.varied, err) != 0 || grid_size(sw, err) != 0) {
        study_sweep_free(sw);
        return sim_err_prefix(err, "%s: sweep %lld", store_path(s), (long long)id);
    }
    sw->reps = m.reps > 0 ? m.reps : 1;
    sw->seed = m.base_seed;
    sw->seed_given = 1;
    sw->id = id;
    snprintf(sw->spec, sizeof sw->spec, "%s", m.varied);
    if (check_points(s, sw, m.varied, err) != 0) {
        study_sweep_free(sw);
        return -1;
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

/* A cell per metric and point, each repetition's value NaN (not stored). */
static void table_cells(study_sweep_table *t)
{
    int cells = t->nmetrics * t->npoints;
    t->c = sim_xcalloc((size_t)cells, sizeof *t->c);
    for (int i = 0; i < cells; i++) {
        t->c[i].rep = sim_xmalloc((size_t)t->reps * sizeof(double));
        for (int r = 0; r < t->reps; r++)
            t->c[i].rep[r] = NAN;
    }
}

/* Metric m's stored values into its cells, and each point's interval over its repetitions. */
static int load_metric(const study_sweep *sw, store *s, study_sweep_table *t, int m, sim_err *err)
{
    loading l = {t, m};
    if (store_sweep_values(s, sw->id, t->metrics[m], collect, &l, err) != 0)
        return -1;
    for (int p = 0; p < sw->npoints; p++) {
        study_cell *c = study_sweep_cell(t, m, p);
        c->v = over_reps(c, NULL, sw->reps);
    }
    return 0;
}

int study_sweep_table_load(const study_sweep *sw, store *s, const char *const *metrics,
                           int nmetrics, study_sweep_table *t, sim_err *err)
{
    t->nmetrics = nmetrics;
    t->npoints = sw->npoints;
    t->reps = sw->reps;
    t->metrics = metrics;
    table_cells(t);
    for (int m = 0; m < nmetrics; m++)
        if (load_metric(sw, s, t, m, err) != 0)
            return -1;
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

int study_sweep_paired_reps(const study_sweep_table *t, int p, int base)
{
    const study_cell *c = study_sweep_cell(t, 0, p), *b = study_sweep_cell(t, 0, base);
    int n = 0;
    for (int r = 0; r < t->reps; r++)
        n += !isnan(c->rep[r]) && !isnan(b->rep[r]);
    return n;
}
