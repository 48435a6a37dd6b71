/*
 * gantt.c: which request is in which iteration, for small runs (at most PLT_GANTT_MAX_REQ
 * requests: beyond that one bar per request no longer reads).
 *
 * A request's bar is its queueing (arrival to first scheduling), then each of its scheduled
 * spans (request_spans_all: admission or swap-in to preemption, swap-out or finish), split into
 * prefill (or the recompute after a preemption) and decode, with the waits between spans drawn
 * as "preempted" and a mark where each preemption happened. A database older than schema 3 has
 * no spans: each request is then drawn as one span from its first scheduling to its finish, and
 * res->note says that preemptions are not shown. A request's iterations are those on its
 * replica that start inside one of its spans.
 *
 * Data file: block 0 has one row per request "req replica arrival_s scheduled_s
 * first_token_s finish_s first_iter last_iter n_iters" (NaN and -1 where a request was never
 * scheduled or did not finish); block 1 one row per iteration "start_s end_s replica iter
 * num_seqs"; block 2 one row per span "req span start_s decode_s end_s ended" (decode_s NaN when
 * the span never decoded; ended 0 finished, 1 preempted, 2 swapped out); block 3 one row per
 * wait after a preemption "req from_s to_s ended" (a dummy NaN row when there is none).
 */
#include <stdlib.h>
#include <string.h>

#include "plt_int.h"
#include "store_query.h"

/* A time in seconds, or NaN for a time never reached (-1). */
static void put_time(FILE *f, int64_t ns)
{
    if (ns < 0)
        fputs(" NaN", f);
    else
        fprintf(f, " %.9f", (double)ns / 1e9);
}

/* The run's iterations, in (replica, iter) order. */
typedef struct iters {
    eng_iter_rec *v;
    int64_t n, cap;
} iters;

/* The run's spans, in (request, span) order. */
typedef struct spans {
    eng_span_rec *v;
    int64_t n, cap;
} spans;

static int read_iterations(store *s, int64_t run, iters *its, sim_err *err)
{
    store_iter_cursor *c = store_iterations_open(s, run, err);
    if (!c)
        return -1;
    int rc;
    eng_iter_rec it;
    while ((rc = store_iterations_next(c, &it, err)) == 1) {
        if (its->n == its->cap)
            its->v = sim_xrealloc(its->v, (size_t)(its->cap = its->cap ? 2 * its->cap : 1024) *
                                              sizeof *its->v);
        its->v[its->n++] = it;
    }
    store_iterations_close(c);
    return rc < 0 ? -1 : 0;
}

static void add_span(spans *sp, const eng_span_rec *r)
{
    if (sp->n == sp->cap)
        sp->v =
            sim_xrealloc(sp->v, (size_t)(sp->cap = sp->cap ? 2 * sp->cap : 256) * sizeof *sp->v);
    sp->v[sp->n++] = *r;
}

static int read_spans(store *s, int64_t run, spans *sp, sim_err *err)
{
    store_span_cursor *c = store_spans_open(s, run, INT64_MIN, INT64_MAX, err);
    if (!c)
        return -1;
    int rc;
    eng_span_rec r;
    while ((rc = store_spans_next(c, &r, err)) == 1)
        add_span(sp, &r);
    store_spans_close(c);
    return rc < 0 ? -1 : 0;
}

/* The spans of request q (a run of sp, which is in request order), into *first and *n; for a
 * database without spans, one span derived from q's row into *one. */
static const eng_span_rec *spans_of(const spans *sp, int64_t *at, const eng_request *q,
                                    int have_spans, eng_span_rec *one, int64_t *n)
{
    *n = 0;
    if (!have_spans) {
        if (q->t_first_sched < 0 || q->t_finish < 0)
            return one;
        *one = (eng_span_rec){q->id,       q->replica,       0, q->t_first_sched, q->t_first_token,
                              q->t_finish, ENG_SPAN_FINISHED};
        *n = 1;
        return one;
    }
    while (*at < sp->n && sp->v[*at].req < q->id)
        (*at)++;
    const eng_span_rec *first = &sp->v[*at];
    while (*at < sp->n && sp->v[*at].req == q->id) {
        (*at)++;
        (*n)++;
    }
    return first;
}

/* One request's row: its iterations are those on its replica that start inside a span. */
static void write_request(FILE *dat, const eng_request *q, const eng_span_rec *sp, int64_t nsp,
                          const iters *its)
{
    int64_t first = -1, last = -1, n = 0;
    for (int64_t i = 0; i < its->n; i++) {
        const eng_iter_rec *it = &its->v[i];
        int inside = 0;
        for (int64_t k = 0; k < nsp && !inside; k++)
            inside = it->start_ns >= sp[k].start_ns && it->start_ns < sp[k].end_ns;
        if (it->replica != q->replica || !inside)
            continue;
        first = n == 0 || it->iter < first ? it->iter : first;
        last = n == 0 || it->iter > last ? it->iter : last;
        n++;
    }
    fprintf(dat, "%lld %lld", (long long)q->id, (long long)q->replica);
    put_time(dat, q->t_arrival);
    put_time(dat, q->t_first_sched);
    put_time(dat, q->t_first_token);
    put_time(dat, q->t_finish);
    fprintf(dat, " %lld %lld %lld\n", (long long)first, (long long)last, (long long)n);
}

/* Block 0, and the spans of every request (derived when the database has none) into out. */
static int write_requests(store *s, int64_t run, const iters *its, const spans *stored, spans *out,
                          FILE *dat, sim_err *err)
{
    store_rq_cursor *c = store_requests_open(s, run, err);
    if (!c)
        return -1;
    fputs("# requests\n# req replica arrival_s scheduled_s first_token_s finish_s first_iter "
          "last_iter n_iters\n",
          dat);
    eng_request q;
    int rc, have = store_has_spans(s);
    int64_t at = 0;
    while ((rc = store_requests_next(c, &q, err)) == 1) {
        eng_span_rec one;
        int64_t n;
        const eng_span_rec *sp = spans_of(stored, &at, &q, have, &one, &n);
        write_request(dat, &q, sp, n, its);
        for (int64_t k = 0; k < n; k++)
            add_span(out, &sp[k]);
    }
    store_requests_close(c);
    return rc < 0 ? -1 : 0;
}

static void write_iterations(const iters *its, FILE *dat, double *tmax)
{
    fputs("\n\n# iterations\n# start_s end_s replica iter num_seqs\n", dat);
    for (int64_t i = 0; i < its->n; i++) {
        const eng_iter_rec *it = &its->v[i];
        double end = (double)(it->start_ns + it->duration_ns) / 1e9;
        fprintf(dat, "%.9f %.9f %lld %lld %lld\n", (double)it->start_ns / 1e9, end,
                (long long)it->replica, (long long)it->iter, (long long)it->num_seqs);
        *tmax = end > *tmax ? end : *tmax;
    }
}

/* Blocks 2 (spans) and 3 (waits after preemptions); returns the number of waits. */
static int64_t write_spans(const spans *sp, FILE *dat)
{
    fputs("\n\n# spans\n# req span start_s decode_s end_s ended\n", dat);
    for (int64_t i = 0; i < sp->n; i++) {
        const eng_span_rec *r = &sp->v[i];
        fprintf(dat, "%lld %d", (long long)r->req, r->span);
        put_time(dat, r->start_ns);
        put_time(dat, r->decode_ns);
        put_time(dat, r->end_ns);
        fprintf(dat, " %d\n", (int)r->end);
    }
    fputs("\n\n# waits after a preemption\n# req from_s to_s ended\n", dat);
    int64_t n = 0;
    for (int64_t i = 0; i + 1 < sp->n; i++) {
        const eng_span_rec *a = &sp->v[i], *b = &sp->v[i + 1];
        if (a->req != b->req || a->end == ENG_SPAN_FINISHED)
            continue;
        fprintf(dat, "%lld", (long long)a->req);
        put_time(dat, a->end_ns);
        put_time(dat, b->start_ns);
        fprintf(dat, " %d\n", (int)a->end);
        n++;
    }
    if (n == 0)
        fputs("NaN NaN NaN NaN\n", dat);
    return n;
}

/* Refuses runs without request rows or with too many to draw. */
static int64_t count_requests(store *s, int64_t run, sim_err *err)
{
    int64_t nrq = plt_request_rows(s, run, err);
    if (nrq < 0)
        return -1;
    if (nrq > PLT_GANTT_MAX_REQ)
        return sim_errf(err,
                        "%s: run %lld has %lld requests; gantt draws at most %d (one bar per "
                        "request). Try a smaller run, e.g. --set workload.num_requests=%d, or "
                        "the timeline plot",
                        store_path(s), (long long)run, (long long)nrq, PLT_GANTT_MAX_REQ,
                        PLT_GANTT_MAX_REQ / 4);
    return nrq;
}

/* The script's title and sizes of run's chart (nrq requests, nwait waits, until tmax s). */
static void write_vars(FILE *gp, int64_t run, const char *sched, int64_t nrq, double tmax,
                       int64_t nwait)
{
    char title[200];
    snprintf(title, sizeof title,
             "run %lld (%s): each request queued, in prefill, in decode, waiting after a "
             "preemption; iteration starts below",
             (long long)run, sched);
    plt_gp_str(gp, "plot_title", title);
    fprintf(gp, "nreq = %lld\ntmax = %.9g\nnwait = %lld\n", (long long)nrq, tmax, (long long)nwait);
}

/* The note on a database from before schema 3, without scheduled spans. */
static void note_no_spans(store *s, plt_result *res)
{
    snprintf(res->note, sizeof res->note,
             "%s predates schema 3: scheduled spans were not stored, so each request is drawn "
             "from its first scheduling to its finish and preemptions are not shown",
             store_path(s));
}

/* The gantt's header line: the run and its scheduler. */
static void write_title(FILE *dat, int64_t run, const char *sched)
{
    fprintf(dat, "# llmsim gantt of run %lld (", (long long)run);
    plt_put_clean(dat, sched);
    fputs(")\n", dat);
}

int plt_gantt_write(store *s, const plt_opts *o, FILE *dat, FILE *gp, plt_result *res, sim_err *err)
{
    int64_t run = o->runs[0];
    char sched[64];
    if (plt_run_sched(s, run, sched, sizeof sched, NULL, err) != 0)
        return -1;
    int64_t nrq = count_requests(s, run, err);
    if (nrq < 0)
        return -1;
    double tmax = 0;
    iters its = {0};
    spans stored = {0}, all = {0};
    int rc = -1;
    write_title(dat, run, sched);
    if (read_iterations(s, run, &its, err) != 0 || read_spans(s, run, &stored, err) != 0 ||
        write_requests(s, run, &its, &stored, &all, dat, err) != 0)
        goto out;
    write_iterations(&its, dat, &tmax);
    int64_t nwait = write_spans(&all, dat);
    if (!store_has_spans(s))
        note_no_spans(s, res);
    write_vars(gp, run, sched, nrq, tmax, nwait);
    res->series = 1;
    plt_default_size(res, 1000, nrq * 12 + 160 > 400 ? (int)nrq * 12 + 160 : 400);
    rc = 0;
out:
    free(its.v);
    free(stored.v);
    free(all.v);
    return rc;
}
