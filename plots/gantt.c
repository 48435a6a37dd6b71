/*
 * gantt.c: which request is in which iteration, for small runs (at most PLT_GANTT_MAX_REQ
 * requests: beyond that one bar per request no longer reads).
 *
 * The store keeps each request's first scheduling and finish times, not its iteration list, so
 * a request's iterations are derived: those on its replica that start at or after its first
 * scheduling and before its finish. A request preempted and resumed is counted in the
 * iterations it sat out, which is also when it held its place in the scheduler's queue.
 *
 * Data file: block 0 has one row per request "req replica arrival_s scheduled_s
 * first_token_s finish_s first_iter last_iter n_iters" (NaN and -1 where a request was never
 * scheduled or did not finish); block 1 has one row per iteration "start_s end_s replica iter
 * num_seqs".
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

/* One request's row: its iterations are those on its replica that start at or after its first
 * scheduling and before its finish. */
static void write_request(FILE *dat, const eng_request *q, const iters *its)
{
    int64_t first = -1, last = -1, n = 0;
    for (int64_t i = 0; q->t_first_sched >= 0 && q->t_finish >= 0 && i < its->n; i++) {
        const eng_iter_rec *it = &its->v[i];
        if (it->replica != q->replica || it->start_ns < q->t_first_sched ||
            it->start_ns >= q->t_finish)
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

static int write_requests(store *s, int64_t run, const iters *its, FILE *dat, sim_err *err)
{
    store_rq_cursor *c = store_requests_open(s, run, err);
    if (!c)
        return -1;
    fputs("# requests\n# req replica arrival_s scheduled_s first_token_s finish_s first_iter "
          "last_iter n_iters\n",
          dat);
    eng_request q;
    int rc;
    while ((rc = store_requests_next(c, &q, err)) == 1)
        write_request(dat, &q, its);
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

int plt_gantt_write(store *s, const plt_opts *o, FILE *dat, FILE *gp, plt_result *res, sim_err *err)
{
    int64_t run = o->runs[0];
    char sched[64];
    if (plt_run_sched(s, run, sched, sizeof sched, NULL, err) != 0)
        return -1;
    int64_t nrq = store_run_count_requests(s, run, err);
    if (nrq < 0)
        return -1;
    if (nrq == 0)
        return sim_errf(err,
                        "%s: run %lld has no request rows (stored with --store summary or "
                        "iterations); run it again with --store requests",
                        store_path(s), (long long)run);
    if (nrq > PLT_GANTT_MAX_REQ)
        return sim_errf(err,
                        "%s: run %lld has %lld requests; gantt draws at most %d (one bar per "
                        "request). Try a smaller run, e.g. --set workload.num_requests=%d, or "
                        "the timeline plot",
                        store_path(s), (long long)run, (long long)nrq, PLT_GANTT_MAX_REQ,
                        PLT_GANTT_MAX_REQ / 4);
    double tmax = 0;
    iters its = {0};
    fprintf(dat, "# llmsim gantt of run %lld (%s)\n", (long long)run, sched);
    if (read_iterations(s, run, &its, err) != 0 || write_requests(s, run, &its, dat, err) != 0) {
        free(its.v);
        return -1;
    }
    write_iterations(&its, dat, &tmax);
    free(its.v);
    char title[160];
    snprintf(title, sizeof title,
             "run %lld (%s): requests queued, in prefill, in decode; iteration starts below",
             (long long)run, sched);
    plt_gp_str(gp, "plot_title", title);
    fprintf(gp, "nreq = %lld\ntmax = %.9g\n", (long long)nrq, tmax);
    res->series = 1;
    if (!res->width)
        res->width = 1000;
    if (!res->height)
        res->height = nrq * 12 + 160 > 400 ? (int)nrq * 12 + 160 : 400;
    return 0;
}
