/*
 * engine_run.h: an engine run as the engine-level tests make one: the engine over a fixed list of
 * arrivals (engine_util.h's list source), checked (eng_check) at the end and, when asked, after
 * every iteration; a recorder that keeps every request by id and every iteration in order; the
 * run's totals and summary metrics. Any failure fails the test.
 */
#ifndef LLMSIM_TESTS_ENGINE_RUN_H
#define LLMSIM_TESTS_ENGINE_RUN_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine.h"
#include "engine_util.h"

/* A recorder that checks the engine (eng_check) before each iteration reaches the recorder it
 * wraps (ops, st), and forwards every call: eu_run's check after every iteration. */
typedef struct eu_checking {
    const eng_recorder_ops *ops; /* may be NULL */
    void *st;
    eng_engine *e; /* NULL until the engine exists */
    int failed;
    char why[256]; /* the last failed check's message */
} eu_checking;

static inline void eu_checking_request(void *st, const eng_request *rq)
{
    eu_checking *w = st;
    w->ops->on_request(w->st, rq);
}

static inline void eu_checking_iteration(void *st, const eng_iter_rec *it)
{
    eu_checking *w = st;
    if (w->e && eng_check(w->e, w->why, sizeof w->why) != 0)
        w->failed++;
    if (w->ops && w->ops->on_iteration)
        w->ops->on_iteration(w->st, it);
}

static inline void eu_checking_itl(void *st, int64_t gap_ns, int64_t count)
{
    eu_checking *w = st;
    w->ops->on_itl(w->st, gap_ns, count);
}

static inline void eu_checking_span(void *st, const eng_span_rec *sp)
{
    eu_checking *w = st;
    w->ops->on_span(w->st, sp);
}

/* What eu_run keeps of a run once the engine is gone. */
typedef struct eu_out {
    eng_totals tot;
    eng_metric m[ENG_MAX_METRICS];
    int nm;
} eu_out;

/* The metric name of o; the test fails when the run has none. */
static inline double eu_metric(const eu_out *o, const char *name)
{
    for (int i = 0; i < o->nm; i++)
        if (strcmp(o->m[i].name, name) == 0)
            return o->m[i].value;
    fail_msg("no metric %s", name);
    return 0;
}

/* Runs config c with costs over a[0..n) on a simulation of seed; ops and st (ops may be NULL)
 * record it; with check_each the engine is checked after every iteration, and always at the end.
 * Its totals and summary go to *out (may be NULL). The test fails on any error or failed check. */
static inline void eu_run(const eng_config *c, const eng_costs *costs, const eng_arrival *a, int n,
                          uint64_t seed, const eng_recorder_ops *ops, void *st, int check_each,
                          eu_out *out)
{
    eu_checking w = {ops, st, NULL, 0, ""};
    const eng_recorder_ops checking = {
        ops && ops->on_request ? eu_checking_request : NULL, eu_checking_iteration,
        ops && ops->on_itl ? eu_checking_itl : NULL, ops && ops->on_span ? eu_checking_span : NULL};
    list_src src = {a, n, 0};
    sim_ctx *ctx = sim_new(seed);
    sim_err err;
    eng_engine *e = check_each ? eng_new(ctx, c, costs, &list_ops, &src, &checking, &w, &err)
                               : eng_new(ctx, c, costs, &list_ops, &src, ops, st, &err);
    if (!e)
        fail_msg("eng_new: %s", err.msg);
    w.e = e;
    if (eng_run(e, &err) != 0)
        fail_msg("eng_run: %s", err.msg);
    char why[256];
    if (eng_check(e, why, sizeof why) != 0)
        fail_msg("engine check after the run: %s", why);
    if (w.failed)
        fail_msg("engine check failed %d times: %s", w.failed, w.why);
    if (out) {
        out->tot = *eng_get_totals(e);
        out->nm = eng_summary(e, out->m);
    }
    eng_free(e);
    sim_free(ctx);
}

/* A recorder that keeps every request by id (rq[id], seen[id] set once it is recorded) and every
 * iteration in order, growing as needed. Zero-initialise; free with eu_rec_free. */
typedef struct eu_rec {
    eng_request *rq;
    unsigned char *seen;
    int64_t caprq; /* ids below it have room */
    eng_iter_rec *it;
    int64_t nit, capit;
} eu_rec;

static inline void eu_rec_request(void *st, const eng_request *rq)
{
    eu_rec *r = st;
    assert_true(rq->id >= 0);
    if (rq->id >= r->caprq) {
        int64_t cap = r->caprq ? 2 * r->caprq : 1024;
        while (cap <= rq->id)
            cap *= 2;
        r->rq = realloc(r->rq, (size_t)cap * sizeof *r->rq);
        r->seen = realloc(r->seen, (size_t)cap);
        assert_true(r->rq && r->seen);
        memset(r->seen + r->caprq, 0, (size_t)(cap - r->caprq));
        r->caprq = cap;
    }
    r->rq[rq->id] = *rq;
    r->seen[rq->id] = 1;
}

static inline void eu_rec_iteration(void *st, const eng_iter_rec *it)
{
    eu_rec *r = st;
    if (r->nit == r->capit) {
        r->capit = r->capit ? 2 * r->capit : 1024;
        r->it = realloc(r->it, (size_t)r->capit * sizeof *r->it);
        assert_non_null(r->it);
    }
    r->it[r->nit++] = *it;
}

static const eng_recorder_ops eu_rec_ops = {eu_rec_request, eu_rec_iteration, NULL, NULL};

/* Frees what r holds (not r itself). */
static inline void eu_rec_free(eu_rec *r)
{
    free(r->rq);
    free(r->seen);
    free(r->it);
}

#endif
