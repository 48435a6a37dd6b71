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
#include <string.h>

#include "plt_int.h"

static void put_time(FILE *f, sqlite3_stmt *st, int col)
{
    if (sqlite3_column_type(st, col) == SQLITE_NULL)
        fputs(" NaN", f);
    else
        fprintf(f, " %.9f", (double)sqlite3_column_int64(st, col) / 1e9);
}

static int write_requests(plt_db *d, int64_t run, FILE *dat, sim_err *err)
{
    sqlite3_stmt *st = plt_db_prepare(
        d,
        "SELECT q.req_id, q.replica, q.arrival_ns, q.first_scheduled_ns, q.first_token_ns,"
        " q.finish_ns, min(i.iter), max(i.iter), count(i.iter) FROM requests q"
        " LEFT JOIN iterations i ON i.run_id = q.run_id AND i.replica = q.replica"
        " AND i.start_ns >= q.first_scheduled_ns AND i.start_ns < q.finish_ns"
        " WHERE q.run_id = ? GROUP BY q.req_id ORDER BY q.req_id",
        err);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, run);
    fputs("# requests\n# req replica arrival_s scheduled_s first_token_s finish_s first_iter "
          "last_iter n_iters\n",
          dat);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t n = sqlite3_column_int64(st, 8);
        fprintf(dat, "%lld %lld", (long long)sqlite3_column_int64(st, 0),
                (long long)sqlite3_column_int64(st, 1));
        for (int c = 2; c <= 5; c++)
            put_time(dat, st, c);
        fprintf(dat, " %lld %lld %lld\n", n ? (long long)sqlite3_column_int64(st, 6) : -1LL,
                n ? (long long)sqlite3_column_int64(st, 7) : -1LL, (long long)n);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : plt_db_fail(d, "reading requests", err);
}

static int write_iterations(plt_db *d, int64_t run, FILE *dat, double *tmax, sim_err *err)
{
    sqlite3_stmt *st = plt_db_prepare(d,
                                      "SELECT start_ns, start_ns + duration_ns, replica, iter,"
                                      " num_seqs FROM iterations WHERE run_id = ?"
                                      " ORDER BY replica, iter",
                                      err);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, run);
    fputs("\n\n# iterations\n# start_s end_s replica iter num_seqs\n", dat);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        double end = (double)sqlite3_column_int64(st, 1) / 1e9;
        fprintf(dat, "%.9f %.9f %lld %lld %lld\n", (double)sqlite3_column_int64(st, 0) / 1e9, end,
                (long long)sqlite3_column_int64(st, 2), (long long)sqlite3_column_int64(st, 3),
                (long long)sqlite3_column_int64(st, 4));
        *tmax = end > *tmax ? end : *tmax;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : plt_db_fail(d, "reading iterations", err);
}

int plt_gantt_write(plt_db *d, const plt_opts *o, FILE *dat, FILE *gp, plt_result *res,
                    sim_err *err)
{
    int64_t run = o->runs[0];
    char sched[64];
    if (plt_db_run(d, run, sched, sizeof sched, NULL, err) != 0)
        return -1;
    int64_t nrq = plt_db_count(d, "SELECT count(*) FROM requests WHERE run_id = ?", run, err);
    if (nrq < 0)
        return -1;
    if (nrq == 0)
        return sim_errf(err,
                        "%s: run %lld has no request rows (stored with --store summary or "
                        "iterations); run it again with --store requests",
                        d->path, (long long)run);
    if (nrq > PLT_GANTT_MAX_REQ)
        return sim_errf(err,
                        "%s: run %lld has %lld requests; gantt draws at most %d (one bar per "
                        "request). Try a smaller run, e.g. --set workload.num_requests=%d, or "
                        "the timeline plot",
                        d->path, (long long)run, (long long)nrq, PLT_GANTT_MAX_REQ,
                        PLT_GANTT_MAX_REQ / 4);
    double tmax = 0;
    fprintf(dat, "# llmsim gantt of run %lld (%s)\n", (long long)run, sched);
    if (write_requests(d, run, dat, err) != 0 || write_iterations(d, run, dat, &tmax, err) != 0)
        return -1;
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
